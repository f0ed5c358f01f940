// NumPy .npy encoding (format version 1.0), so reference tensors and outputs can be read
// with numpy.load for inspection and fixture generation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnbench {

// The bytes of an .npy file holding a C-order float32 array of `shape` (empty shape: a
// scalar) whose product(shape) elements start at `data`. Written little-endian ('<f4') on
// any host, byte-identical to numpy.save of the same array. Throws std::invalid_argument on a negative
// dimension.
std::string encode_npy_f32(const float* data, const std::vector<int64_t>& shape);

}  // namespace attnbench
