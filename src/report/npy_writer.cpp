#include "report/npy_writer.hpp"

#include <cstring>
#include <stdexcept>

namespace attnbench {
namespace {

// Format version 1.0: magic, major, minor, u16 header length; the whole header (these 10
// bytes plus the dict text) is padded to a multiple of 64 bytes so the data is aligned.
constexpr char npy_magic[] = "\x93NUMPY";
constexpr size_t npy_magic_size = sizeof(npy_magic) - 1;
constexpr size_t npy_prefix_size = npy_magic_size + 2 + 2;
constexpr size_t npy_alignment = 64;
// numpy.save leaves room after the dict for the first axis to grow to this many digits, so
// arrays can be appended to in place; doing the same makes our files byte-identical to its.
constexpr size_t growth_axis_max_digits = 21;
constexpr size_t max_header_size = 0xFFFF;  // the u16 length field of version 1.0
constexpr int bits_per_byte = 8;
constexpr unsigned byte_mask = 0xFF;
static_assert(sizeof(float) == 4, "'<f4' needs 32-bit floats");

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");  // Python's one-element tuple
}

void append_le(std::string& out, uint32_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out += static_cast<char>((value >> (bits_per_byte * i)) & byte_mask);
}

}  // namespace

std::string encode_npy_f32(const float* data, const std::vector<int64_t>& shape) {
  size_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("encode_npy_f32: negative dimension " + std::to_string(d));
    count *= static_cast<size_t>(d);
  }
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape_text(shape) + ", }";
  if (!shape.empty()) dict.append(growth_axis_max_digits - std::to_string(shape[0]).size(), ' ');
  const size_t unpadded = npy_prefix_size + dict.size() + 1;  // + the closing '\n'
  const size_t padded = (unpadded + npy_alignment - 1) / npy_alignment * npy_alignment;
  dict.append(padded - unpadded, ' ');
  dict += '\n';
  if (dict.size() > max_header_size)
    throw std::invalid_argument("encode_npy_f32: shape too long for .npy 1.0");

  std::string out(npy_magic, npy_magic_size);
  out += '\x01';  // major version
  out += '\x00';  // minor version
  append_le(out, static_cast<uint32_t>(dict.size()), 2);
  out += dict;
  out.reserve(out.size() + count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, data + i, sizeof bits);
    append_le(out, bits, sizeof bits);
  }
  return out;
}

}  // namespace attnbench
