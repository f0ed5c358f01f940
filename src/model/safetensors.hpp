// A reader for the safetensors format (Hugging Face): an 8-byte little-endian header length N,
// N bytes of UTF-8 JSON describing each tensor, then the raw little-endian, row-major data.
//
// Everything in the header is validated before any byte of data is trusted: the header length
// is bounded and inside the file; the header is UTF-8 and a JSON object; each tensor has a known
// dtype, a non-negative shape and data_offsets inside the data region whose length is exactly
// product(shape) × the dtype's size; no two tensors overlap. Torch-free (fuzzed by itself).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace attnbench {

// Bound on the JSON header, as in the reference implementation: a header this large is an
// attack or a corrupt file, not a model.
inline constexpr uint64_t safetensors_max_header_bytes = 100u * 1024 * 1024;

struct safetensors_tensor {
  std::string name;
  std::string dtype;             // "F32", "BF16", ... as written
  std::size_t element_size = 0;  // bytes per element
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // data_offsets, relative to the start of the data region
  uint64_t end = 0;
  int64_t numel() const;
};

struct safetensors_header {
  std::vector<safetensors_tensor> tensors;      // sorted by name
  std::map<std::string, std::string> metadata;  // "__metadata__", when present
  uint64_t data_start = 0;                      // 8 + N: where offsets count from
  const safetensors_tensor* find(const std::string& name) const;
};

// Bytes per element of a safetensors dtype, or 0 for an unknown one.
std::size_t safetensors_dtype_size(const std::string& dtype);

// Parses and validates the header of a whole safetensors file held in `bytes` (`size` bytes).
// Throws input_error whose message starts with `source` (the file's name) and names the tensor
// at fault.
safetensors_header parse_safetensors(const unsigned char* bytes, std::size_t size, const std::string& source);

// A safetensors file mapped read-only into memory; the header is validated on opening.
class safetensors_file {
 public:
  explicit safetensors_file(const std::string& path);
  ~safetensors_file();
  safetensors_file(const safetensors_file&) = delete;
  safetensors_file& operator=(const safetensors_file&) = delete;

  const std::string& path() const { return path_; }
  const safetensors_header& header() const { return header_; }
  // The tensor's bytes: element_size × numel() bytes, valid while this object lives.
  const unsigned char* data(const safetensors_tensor& t) const {
    return bytes_ + header_.data_start + t.begin;
  }

 private:
  std::string path_;
  const unsigned char* bytes_ = nullptr;
  std::size_t size_ = 0;
  safetensors_header header_;
};

}  // namespace attnbench
