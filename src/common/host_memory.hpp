// The host memory a step may still take: /proc/meminfo's MemAvailable (the kernel's estimate of
// what can be allocated without swapping, page cache included).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attnbench {

// MemAvailable in bytes from /proc/meminfo's text ("MemAvailable:   12345678 kB"); nullopt when
// the line is absent or unreadable (kernels before 3.14, another OS).
std::optional<int64_t> parse_mem_available(const std::string& meminfo);

// This machine's MemAvailable now; nullopt where /proc/meminfo has none.
std::optional<int64_t> host_memory_available();

}  // namespace attnbench
