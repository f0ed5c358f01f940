// A small, dependency-free content hash for fingerprints (config hash, weight checksum).
// FNV-1a 64-bit: not cryptographic; it only has to tell two configs or two weight sets apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attnbench {

class fnv1a64 {
 public:
  void update(const void* data, std::size_t size);
  void update(const std::string& s) { update(s.data(), s.size()); }
  std::uint64_t value() const { return state_; }
  std::string hex() const;  // 16 lowercase hex digits

 private:
  static constexpr std::uint64_t offset_basis = 0xcbf29ce484222325ULL;  // FNV-1a's published constants
  static constexpr std::uint64_t prime = 0x100000001b3ULL;
  std::uint64_t state_ = offset_basis;
};

}  // namespace attnbench
