// Builds safetensors files byte by byte for tests: valid ones and deliberately broken ones.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace attnbench::testing {

// 8-byte little-endian `header_length` (the header's size unless overridden), the header, the data.
inline std::string safetensors_bytes(const std::string& header, const std::string& data,
                                     int64_t header_length = -1) {
  const uint64_t n = header_length < 0 ? header.size() : static_cast<uint64_t>(header_length);
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

inline std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

inline std::filesystem::path write_temp_file(const std::string& name, const std::string& bytes) {
  auto dir = std::filesystem::temp_directory_path() / "attnbench-tests";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace attnbench::testing
