// What CPU a run is on, precisely enough to tell two machines of one cloud label apart (a Zen 3
// from a Zen 4 both say "AMD EPYC"), and the vector and matrix features that decide what reduced
// precision costs on it. Read from /proc/cpuinfo; the parser takes the text, so tests inject a
// machine instead of depending on the one they run on. Torch-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

struct cpu_info {
  std::string model_name;  // "AMD EPYC 9B14"
  std::string id;          // "AuthenticAMD family 25 model 17 stepping 1"; "" when unknown
  // Of the features that matter to transformer inference, those present, in a fixed order:
  // avx2 fma f16c avx512f avx512_vnni avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_fp16.
  std::vector<std::string> features;
  int64_t logical_cpus = 0;  // online, from sysfs (0: unknown)
  std::string caches;        // each cache level once, from sysfs: "L1d 32K, L1i 32K, L2 512K, L3 32768K"
  bool has(const std::string& feature) const;
};

// The first processor's entry of /proc/cpuinfo text.
cpu_info parse_cpuinfo(const std::string& text);

// The number of CPUs in a sysfs CPU list such as "0-3,8-11" (8); 0 when it does not parse.
int64_t count_cpu_list(const std::string& list);

// The caches under a sysfs cpuN/cache directory, each level once: "L1d 32K, L1i 32K, L2 1024K,
// L3 32768K"; "" when there is no such directory.
std::string describe_caches(const std::string& cache_dir);

// This machine's, from /proc/cpuinfo and sysfs (empty fields elsewhere).
cpu_info this_cpu();

// Why `dtype` ("bf16", "fp16", "fp32") computes slowly on this CPU, or nullopt: bf16 without
// avx512_bf16 or amx_bf16, fp16 without avx512_fp16 or amx_fp16 (LibTorch then converts in
// software or runs a reference GEMM). The reports show it beside every variant it concerns.
std::optional<std::string> slow_dtype_note(const cpu_info& cpu, const std::string& dtype);

}  // namespace attnbench
