// libFuzzer target: the safetensors header parser must refuse every malformed file with an
// input_error and never crash, read out of bounds (ASan) or throw anything else.
#include <cstddef>
#include <cstdint>

#include "common/error.hpp"
#include "model/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto header = attnbench::parse_safetensors(data, size, "fuzz");
    // Whatever was accepted must lie inside the buffer.
    for (const auto& t : header.tensors)
      if (header.data_start + t.end > size) __builtin_trap();
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
