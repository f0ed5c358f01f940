// Faults that must end as results, not crashes (issue 19): a variant out of memory (a CPU cap, as
// the CUDA allocator would fail) is OOM and one over the time limit TIMEOUT while the others run;
// a signal at each phase of the loop leaves results marked incomplete, with whole rounds only.
// The loop runs a scenario whose passes allocate real LibTorch tensors and report set times.
#include <catch2/catch.hpp>

#include <signal.h>

#include <map>
#include <string>
#include <vector>

#include <c10/util/Exception.h>
#include <torch/torch.h>

#include "common/interrupt.hpp"
#include "config/config_parser.hpp"
#include "runner/measurement_loop.hpp"
#include "runner/memory_cap.hpp"
#include "techniques/variant_plan.hpp"
#include "test_support.hpp"

using namespace attnbench;

namespace {

nlohmann::ordered_json loop_config() {
  return {{"name", "fault-test"},
          {"model", {{"preset", "bert-tiny"}}},
          {"workload", {{"samples", 4}, {"lengths", {{"kind", "fixed"}, {"length", 8}}}}},
          {"measure", {{"warmup", 1}, {"repetitions", 3}}},
          {"device", "cpu"},
          {"variants", {{{"name", "base"}}, {{"name", "big"}}, {{"name", "slow"}}, {{"name", "last"}}}},
          {"baseline", "base"},
          {"output", {{"dir", "unused"}}}};
}

// Each pass allocates `bytes[name]` in a LibTorch tensor and takes `seconds[name]` (as reported);
// `on_pass` runs before each pass with its phase and count, so a test can send a "signal" there.
class allocating_scenario : public scenario_base {
 public:
  explicit allocating_scenario(const config& cfg) : cfg_(cfg) {}
  std::map<std::string, int64_t> bytes;
  std::map<std::string, double> seconds;
  std::function<void(const std::string& phase, const std::string& variant, int count)> on_pass;

  std::optional<skip_verdict> skip_reason(std::size_t, variant_result&) override { return std::nullopt; }
  void prepare(std::size_t, variant_result&) override {}
  void check_pass(std::size_t i, variant_result&) override { work(i, "check"); }
  pass_timing pass(std::size_t i, pass_phase phase) override {
    work(i, phase == pass_phase::timed ? "timed" : "warmup");
    const double s = seconds.count(name(i)) ? seconds[name(i)] : 0.01;
    return pass_timing{s, {s * 1e3}};
  }
  check_result check(std::size_t, std::size_t, double, variant_result&) override {
    check_result c;
    c.status = status_kind::pass;
    return c;
  }

 private:
  const std::string& name(std::size_t i) const { return cfg_.variants[i].name; }
  void work(std::size_t i, const std::string& phase) {
    if (on_pass) on_pass(phase, name(i), ++count_[phase]);
    const int64_t n = bytes.count(name(i)) ? bytes[name(i)] : 1024;
    const torch::Tensor t = torch::empty({n / 4}, torch::kFloat32);
    (void)t;
  }
  const config& cfg_;
  std::map<std::string, int> count_;
};

const auto no_progress = [](const std::string&, const std::string&, int64_t, int64_t) {};
const auto alone = [](int64_t, bool more) { return more; };

run_result run_loop(const config& cfg, allocating_scenario& s) {
  run_result res;
  res.workload.samples = 4;
  res.workload.real_tokens = 32;
  REQUIRE(measure_variants(cfg, plan_variants(cfg, torch::kCPU), s, res, no_progress, alone));
  return res;
}

const variant_result& named(const run_result& res, const std::string& name) {
  for (const auto& v : res.variants)
    if (v.name == name) return v;
  FAIL("no variant " << name);
  throw std::logic_error("unreachable");
}

// Clears the "signal" however the test ends.
struct interrupt_guard {
  ~interrupt_guard() { clear_interrupt(); }
};

}  // namespace

TEST_CASE("memory cap: an allocation past measure.max_memory_bytes is an out-of-memory error naming its size",
          "[runner][faults]") {
  {
    const memory_cap_scope cap(1 << 20);  // 1 MiB on top of what is in use now
    const torch::Tensor small = torch::empty({1 << 16}, torch::kFloat32);  // 256 KiB: fits
    CHECK(capped_bytes_in_use() >= (1 << 18));
    try {
      const torch::Tensor big = torch::empty({1 << 20}, torch::kFloat32);  // 4 MiB
      FAIL("the 4 MiB allocation went through a 1 MiB cap");
    } catch (const c10::OutOfMemoryError& e) {
      const std::string what = e.what_without_backtrace();
      CHECK_THAT(what, Catch::Contains("tried to allocate 4194304 bytes"));
      CHECK_THAT(what, Catch::Contains("cap of 1048576"));
    }
  }
  // After the scope: no cap.
  const torch::Tensor big = torch::empty({1 << 20}, torch::kFloat32);
  CHECK(big.numel() == (1 << 20));
}

TEST_CASE("measurement loop: a variant over the memory cap is OOM with the size it tried, the others PASS",
          "[runner][faults]") {
  auto doc = loop_config();
  doc["measure"]["max_memory_bytes"] = "16MiB";
  const config cfg = testing::parse(doc);
  allocating_scenario s(cfg);
  s.bytes["big"] = int64_t{64} << 20;
  const run_result res = run_loop(cfg, s);
  const variant_result& big = named(res, "big");
  CHECK(big.status == status_kind::oom);
  CHECK_THAT(big.reason, Catch::StartsWith("could not run: CPU out of memory under measure.max_memory_bytes"));
  CHECK_THAT(big.reason, Catch::Contains("tried to allocate 67108864 bytes"));
  CHECK(big.throughput.n == 0);
  for (const char* other : {"base", "slow", "last"}) {
    INFO(other);
    CHECK(named(res, other).status == status_kind::pass);
    CHECK(named(res, other).throughput.n == 3);
  }
  CHECK(res.all_passed());  // OOM is not a wrong output...
  CHECK(res.any_limit_hit());  // ...but the run says so (exit status 6)
  CHECK(res.complete);
}

TEST_CASE("measurement loop: a pass longer than measure.max_time_s makes its variant TIMEOUT", "[runner][faults]") {
  auto doc = loop_config();
  doc["measure"]["max_time_s"] = 0.5;  // fixed mode: the per-pass limit only
  const config cfg = testing::parse(doc);
  allocating_scenario s(cfg);
  s.seconds["slow"] = 2.0;
  const run_result res = run_loop(cfg, s);
  const variant_result& slow = named(res, "slow");
  CHECK(slow.status == status_kind::timeout);
  CHECK(slow.reason ==
        "its warm-up pass took 2.0 s, more than measure.max_time_s (0.5 s): it cannot give one round within the budget");
  CHECK(named(res, "last").status == status_kind::pass);
  CHECK(named(res, "last").throughput.n == 3);
  CHECK(res.any_limit_hit());
}

TEST_CASE("measurement loop: a signal at each phase stops the run, marked incomplete, with whole rounds only",
          "[runner][faults]") {
  const interrupt_guard guard;
  const config cfg = testing::parse(loop_config());
  struct phase_case {
    std::string phase;
    std::string variant;
    int count;
    std::string reason_start;
  };
  for (const auto& pc : std::vector<phase_case>{
           {"check", "slow", 3, "interrupted by SIGINT during the check passes, before variant 4 of 4"},
           {"warmup", "big", 2, "interrupted by SIGINT during warm-up (pass 3 of 4)"},
           {"timed", "big", 7, "interrupted by SIGINT during timed round 2"}}) {
    INFO(pc.phase);
    clear_interrupt();
    allocating_scenario s(cfg);
    s.on_pass = [&](const std::string& phase, const std::string& variant, int count) {
      if (phase == pc.phase && variant == pc.variant && count == pc.count) request_interrupt(SIGINT);
    };
    const run_result res = run_loop(cfg, s);
    CHECK_FALSE(res.complete);
    CHECK_THAT(res.incomplete_reason, Catch::StartsWith(pc.reason_start));
    CHECK(res.stop_reason == "interrupted");
    REQUIRE(res.variants.size() == 4);
    if (pc.phase == "check") {
      CHECK(named(res, "last").status == status_kind::skipped);
      CHECK_THAT(named(res, "last").reason, Catch::StartsWith("not run: the run was interrupted"));
      CHECK(named(res, "base").throughput.n == 0);  // checked, never timed
    }
    if (pc.phase == "warmup") {
      for (const auto& v : res.variants) CHECK(v.throughput.n == 0);
    }
    if (pc.phase == "timed") {
      // Round 2 was cut short: its passes are dropped, round 1 is kept by every variant.
      for (const auto& v : res.variants) {
        INFO(v.name);
        CHECK(v.throughput.n == 1);
        CHECK(v.status == status_kind::pass);
        CHECK_THAT(v.notes.back(), Catch::Contains("interrupted after 1 timed round: too few for an interval"));
      }
    }
  }
}

TEST_CASE("measurement loop: a signal between rounds stops after the round, however many processes",
          "[runner][faults]") {
  const interrupt_guard guard;
  const config cfg = testing::parse(loop_config());
  allocating_scenario s(cfg);
  // During round 2's last pass (base: round 2 runs in reverse): the next round is not started.
  s.on_pass = [&](const std::string& phase, const std::string& variant, int count) {
    if (phase == "timed" && variant == "base" && count == 8) request_interrupt(SIGTERM);
  };
  run_result res;
  res.workload.samples = 4;
  res.workload.real_tokens = 32;
  // Not a single process: a signal only counts between rounds (rank 0's decision, through agree).
  REQUIRE(measure_variants(cfg, plan_variants(cfg, torch::kCPU), s, res, no_progress, alone, nullptr,
                           /*single_process=*/false));
  CHECK_FALSE(res.complete);
  CHECK(res.incomplete_reason == "interrupted by SIGTERM after 2 timed rounds");
  for (const auto& v : res.variants) CHECK(v.throughput.n == 2);
}

namespace {

// One run of the loop that saves its rounds when stopped (run.saved, run.io.saved) and, given
// `from` (and `prior`, the stopped run's rows), resumes them.
struct loop_run {
  run_result result;
  rounds_state saved;
  loop_resume io;
};

void run_resumable(const config& cfg, allocating_scenario& s, loop_run& run, const loop_run* stopped = nullptr) {
  run.io.from = stopped ? &stopped->saved : nullptr;
  run.io.prior = stopped ? &stopped->result : nullptr;
  run.io.save = &run.saved;
  run.result.workload.samples = 4;
  run.result.workload.real_tokens = 32;
  REQUIRE(measure_variants(cfg, plan_variants(cfg, torch::kCPU), s, run.result, no_progress, alone, nullptr,
                           true, &run.io));
}

}  // namespace

TEST_CASE("measurement loop: a resumed run keeps the complete rounds and times only the missing ones",
          "[runner][faults][resume]") {
  const interrupt_guard guard;
  auto doc = loop_config();
  doc["measure"]["repetitions"] = 5;
  const config cfg = testing::parse(doc);
  // First run: stopped during round 3 (its passes dropped), two complete rounds kept and saved.
  allocating_scenario first(cfg);
  first.seconds["base"] = 0.02;
  first.on_pass = [](const std::string& phase, const std::string& variant, int count) {
    if (phase == "timed" && variant == "slow" && count == 11) request_interrupt(SIGINT);
  };
  loop_run stopped;
  run_resumable(cfg, first, stopped);
  REQUIRE_FALSE(stopped.result.complete);
  REQUIRE(stopped.io.saved);
  CHECK(stopped.saved.rounds == 2);
  REQUIRE(stopped.saved.variants.size() == 4);
  for (const auto& v : stopped.saved.variants) {
    INFO(v.name);
    CHECK(v.pass_s.size() == 2);
    CHECK(v.unit_ms.size() == 2);
    CHECK_FALSE(v.left_by_error);
  }
  clear_interrupt();

  // Resumed: every variant is checked and warmed up again, then rounds 3 to 5 only.
  allocating_scenario second(cfg);
  second.seconds["base"] = 0.02;
  std::map<std::string, int> timed;
  second.on_pass = [&](const std::string& phase, const std::string& variant, int) {
    if (phase == "timed") ++timed[variant];
  };
  loop_run resumed;
  run_resumable(cfg, second, resumed, &stopped);
  const run_result& res = resumed.result;
  CHECK(res.complete);
  CHECK_FALSE(resumed.io.saved);  // finished: nothing to resume
  CHECK(res.repetitions == 5);
  CHECK(res.stop_reason == "fixed repetitions");
  for (const auto& v : res.variants) {
    INFO(v.name);
    CHECK(timed[v.name] == 3);
    CHECK(v.throughput.n == 5);  // the kept rounds and the new ones, paired with the baseline's
    CHECK(v.status == status_kind::pass);
  }
  // The baseline's kept passes (0.02 s) are among its five: the rates are of every round.
  CHECK(named(res, "base").throughput.geomean == Approx(4 / 0.02));
}

TEST_CASE("measurement loop: a variant that left the interrupted run by an error keeps its row on resume",
          "[runner][faults][resume]") {
  const interrupt_guard guard;
  auto doc = loop_config();
  doc["measure"]["max_memory_bytes"] = "16MiB";
  const config cfg = testing::parse(doc);
  allocating_scenario first(cfg);
  first.bytes["big"] = int64_t{64} << 20;
  first.on_pass = [](const std::string& phase, const std::string& variant, int count) {
    if (phase == "timed" && variant == "last" && count == 3) request_interrupt(SIGTERM);  // end of round 1
  };
  loop_run stopped;
  run_resumable(cfg, first, stopped);
  REQUIRE(stopped.io.saved);
  CHECK(stopped.saved.rounds == 1);
  CHECK(stopped.saved.find("big")->left_by_error);
  CHECK(stopped.saved.find("big")->pass_s.empty());
  clear_interrupt();

  allocating_scenario second(cfg);
  int big_passes = 0;
  second.on_pass = [&](const std::string&, const std::string& variant, int) { big_passes += variant == "big"; };
  loop_run resumed;
  run_resumable(cfg, second, resumed, &stopped);
  const run_result& res = resumed.result;
  CHECK(res.complete);
  CHECK(big_passes == 0);  // not run again
  const variant_result& big = named(res, "big");
  CHECK(big.status == status_kind::oom);
  CHECK_THAT(big.reason, Catch::Contains("tried to allocate 67108864 bytes"));
  CHECK_THAT(big.notes.back(), Catch::Contains("kept from the interrupted run"));
  CHECK(named(res, "last").throughput.n == 3);
  CHECK(res.any_limit_hit());
}

TEST_CASE("measurement loop: resume state that does not pair with the rounds is refused", "[runner][faults][resume]") {
  const config cfg = testing::parse(loop_config());
  rounds_state bad;
  bad.rounds = 2;
  for (const char* name : {"base", "big", "slow"}) bad.variants.push_back({name, {0.01, 0.01}, {10, 10}, false});
  bad.variants.push_back({"last", {0.01}, {10}, false});  // one pass short
  loop_resume resume;
  resume.from = &bad;
  allocating_scenario s(cfg);
  run_result res;
  res.workload.samples = 4;
  CHECK_THROWS_WITH(measure_variants(cfg, plan_variants(cfg, torch::kCPU), s, res, no_progress, alone,
                                     nullptr, true, &resume),
                    Catch::Contains("variant \"last\" has 1 timed passes in resume.json") &&
                        Catch::Contains("its 2 complete rounds"));
}

TEST_CASE("measurement loop: a run interrupted at each phase resumes to the full rounds", "[runner][faults][resume]") {
  const interrupt_guard guard;
  const config cfg = testing::parse(loop_config());  // 3 fixed rounds
  struct phase_case {
    std::string phase, variant;
    int count;
    int64_t kept_rounds;
  };
  for (const auto& pc : std::vector<phase_case>{{"check", "slow", 3, 0}, {"warmup", "big", 2, 0}, {"timed", "big", 7, 1}}) {
    INFO(pc.phase);
    clear_interrupt();
    allocating_scenario first(cfg);
    first.on_pass = [&](const std::string& phase, const std::string& variant, int count) {
      if (phase == pc.phase && variant == pc.variant && count == pc.count) request_interrupt(SIGINT);
    };
    loop_run stopped;
    run_resumable(cfg, first, stopped);
    REQUIRE_FALSE(stopped.result.complete);
    REQUIRE(stopped.io.saved);
    CHECK(stopped.saved.rounds == pc.kept_rounds);
    clear_interrupt();

    allocating_scenario second(cfg);
    int timed = 0;
    second.on_pass = [&](const std::string& phase, const std::string&, int) { timed += phase == "timed"; };
    loop_run resumed;
    run_resumable(cfg, second, resumed, &stopped);
    const run_result& res = resumed.result;
    CHECK(res.complete);
    CHECK(res.repetitions == 3);
    CHECK(timed == 4 * (3 - pc.kept_rounds));  // only the missing rounds, of all four variants
    for (const auto& v : res.variants) {
      INFO(v.name);
      CHECK(v.status == status_kind::pass);
      CHECK(v.throughput.n == 3);
    }
  }
}
