// The CPU identity and features read from /proc/cpuinfo text, on injected machines: the two CPUs
// one cloud label came with (a Zen 3 without AVX-512, a Zen 4 with AVX512_BF16), and an
// Intel with AMX.
#include "common/cpu_info.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace attnbench;

namespace {

std::string cpuinfo(const std::string& vendor, int family, int model, const std::string& name,
                    const std::string& flags) {
  std::string one = "processor\t: 0\nvendor_id\t: " + vendor + "\ncpu family\t: " + std::to_string(family) +
                    "\nmodel\t\t: " + std::to_string(model) + "\nmodel name\t: " + name +
                    "\nstepping\t: 1\nflags\t\t: " + flags + "\n\n";
  // A second processor with other flags: only the first one's block is read.
  return one + "processor\t: 1\nvendor_id\t: Other\nflags\t\t: amx_fp16\n\n";
}

}  // namespace

TEST_CASE("cpu_info: identity and the features that matter, from /proc/cpuinfo text", "[common][cpu]") {
  const cpu_info zen3 = parse_cpuinfo(cpuinfo("AuthenticAMD", 25, 1, "AMD EPYC 7B13", "fpu sse2 avx fma avx2 f16c"));
  CHECK(zen3.model_name == "AMD EPYC 7B13");
  CHECK(zen3.id == "AuthenticAMD family 25 model 1 stepping 1");
  CHECK(zen3.features == std::vector<std::string>{"avx2", "fma", "f16c"});
  CHECK(slow_dtype_note(zen3, "bf16").value_or("").rfind("this CPU has no native bf16", 0) == 0);
  CHECK(slow_dtype_note(zen3, "fp16").has_value());
  CHECK_FALSE(slow_dtype_note(zen3, "fp32").has_value());

  const cpu_info zen4 = parse_cpuinfo(
      cpuinfo("AuthenticAMD", 25, 17, "AMD EPYC 9B14", "avx2 fma avx512f avx512_vnni avx512_bf16 avx512vl"));
  CHECK(zen4.id != zen3.id);
  CHECK(zen4.features == std::vector<std::string>{"avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16"});
  CHECK_FALSE(slow_dtype_note(zen4, "bf16").has_value());
  CHECK(slow_dtype_note(zen4, "fp16").has_value());

  const cpu_info spr = parse_cpuinfo(cpuinfo("GenuineIntel", 6, 143, "Intel Xeon", "avx2 amx_tile amx_bf16 amx_fp16"));
  CHECK_FALSE(slow_dtype_note(spr, "bf16").has_value());
  CHECK_FALSE(slow_dtype_note(spr, "fp16").has_value());

  // Nothing known (no /proc/cpuinfo): nothing claimed.
  const cpu_info unknown = parse_cpuinfo("");
  CHECK(unknown.id.empty());
  CHECK_FALSE(slow_dtype_note(unknown, "bf16").has_value());
}

TEST_CASE("cpu_info: this machine's is read", "[common][cpu]") {
  const cpu_info cpu = this_cpu();
  CHECK_FALSE(cpu.id.empty());  // Linux: /proc/cpuinfo
  CHECK_FALSE(cpu.model_name.empty());
}

TEST_CASE("cpu_info: CPU lists and caches from sysfs", "[common][cpu]") {
  CHECK(count_cpu_list("0-1\n") == 2);
  CHECK(count_cpu_list("0-3,8-11") == 8);
  CHECK(count_cpu_list("5") == 1);
  CHECK(count_cpu_list("0,2,4-5") == 4);
  CHECK(count_cpu_list("") == 0);
  CHECK(count_cpu_list("3-1") == 0);
  CHECK(count_cpu_list("a-b") == 0);

  // A cache directory as sysfs lays it out, listed out of order.
  const auto dir = std::filesystem::temp_directory_path() / "attnbench-test-caches";
  std::filesystem::remove_all(dir);
  const auto index = [&](int i, const char* level, const char* type, const char* size) {
    const auto d = dir / ("index" + std::to_string(i));
    std::filesystem::create_directories(d);
    std::ofstream(d / "level") << level << "\n";
    std::ofstream(d / "type") << type << "\n";
    std::ofstream(d / "size") << size << "\n";
  };
  index(3, "3", "Unified", "32768K");
  index(0, "1", "Data", "32K");
  index(2, "2", "Unified", "1024K");
  index(1, "1", "Instruction", "32K");
  std::filesystem::create_directories(dir / "power");  // not a cache: ignored
  CHECK(describe_caches(dir.string()) == "L1d 32K, L1i 32K, L2 1024K, L3 32768K");
  std::filesystem::remove_all(dir);
  CHECK(describe_caches(dir.string()).empty());
}
