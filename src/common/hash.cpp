#include "common/hash.hpp"

#include <fmt/format.h>

namespace attnbench {

void fnv1a64::update(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint64_t h = state_;
  for (std::size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= prime;
  }
  state_ = h;
}

std::string fnv1a64::hex() const { return fmt::format("{:016x}", state_); }

}  // namespace attnbench
