#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "monitor/nvml_probe.hpp"
#include "monitor/process_stats.hpp"

using namespace attnbench;

TEST_CASE("/proc/self/stat's CPU time is read past a command with spaces and parentheses", "[monitor]") {
  // Fields 14 and 15 (utime 250, stime 50 ticks) after a comm of "(a b) c".
  const std::string stat = "1234 ((a b) c) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 5 6 7";
  CHECK(parse_proc_stat_cpu_seconds(stat, 100) == Approx(3.0));
  CHECK_FALSE(parse_proc_stat_cpu_seconds("1234 (x) R 1 2", 100));
  CHECK_FALSE(parse_proc_stat_cpu_seconds("no parenthesis", 100));
  CHECK(parse_proc_statm_resident_bytes("1000 250 30 1 0 200 0\n", 4096) == Approx(250 * 4096.0));
  CHECK_FALSE(parse_proc_statm_resident_bytes("", 4096));
}

TEST_CASE("this process's CPU time and resident memory are read from /proc", "[monitor]") {
  const auto before = read_process_stats();
  REQUIRE(before);
  CHECK(before->resident_bytes > 1e6);  // a test binary with LibTorch loaded holds megabytes
  volatile double x = 0;
  for (int i = 0; i < 20000000; ++i) x = x + 1e-9 * i;  // some CPU time
  const auto after = read_process_stats();
  REQUIRE(after);
  CHECK(after->cpu_seconds >= before->cpu_seconds);
  CHECK(after->cpu_seconds > 0);
}

TEST_CASE("a missing NVML library means no probe, not a failure", "[monitor]") {
  CHECK(nvml_probe::open("libattnbench-no-such-nvml.so.1") == nullptr);
  // Whatever this machine has, opening the real one never throws.
  const auto probe = nvml_probe::open();
  if (probe) {
    for (const gpu_sample& s : probe->sample()) CHECK(s.memory_total_bytes != 0);
  }
}

TEST_CASE("the NVML probe reads every device through the documented entry points", "[monitor]") {
  // tests/monitor/fake_nvml.cpp, built beside attnbench_testhooks.
  const auto fake = std::filesystem::path(ATTNBENCH_TEST_HOOKS_BINARY).parent_path() / "libattnbench_fake_nvml.so";
  const auto probe = nvml_probe::open(fake.string());
  REQUIRE(probe);
  const std::vector<gpu_sample> s = probe->sample();
  REQUIRE(s.size() == 2);
  CHECK(s[0].index == 0);
  CHECK(s[0].utilization_ratio == Approx(0.41));
  CHECK(s[1].utilization_ratio == Approx(0.42));
  CHECK(s[0].memory_busy_ratio == Approx(0.25));
  CHECK(s[0].power_watts == Approx(123.456));
  CHECK(s[0].temperature_celsius == Approx(61));
  CHECK(s[1].temperature_celsius < 0);  // not supported on that board: absent, not an error
  CHECK(s[0].memory_used_bytes == Approx(250));
  CHECK(s[0].memory_total_bytes == Approx(1000));
}
