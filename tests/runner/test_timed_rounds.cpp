// The shared rounds loop: warm-up first, then rounds alternating their order, fixed or adaptive.
#include "runner/timed_rounds.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace attnbench;

namespace {

std::vector<round_member> members_logging(std::vector<std::string>& log, const std::vector<std::string>& names) {
  std::vector<round_member> out;
  for (const auto& name : names) {
    round_member m;
    m.name = name;
    m.is_baseline = name == names.front();
    m.pass = [&log, name](pass_phase phase) -> std::optional<double> {
      log.push_back((phase == pass_phase::timed ? "" : "w:") + name);
      return 0.01;  // identical passes: any interval has width 0
    };
    out.push_back(std::move(m));
  }
  return out;
}

const auto no_progress = [](const std::string&, const std::string&, int64_t, int64_t) {};
const auto alone = [](int64_t, bool more) { return more; };

}  // namespace

TEST_CASE("rounds: warm-up first, then every other round reversed", "[runner][repetitions]") {
  measure_config m;
  m.warmup = 1;
  m.adaptive = false;
  m.repetitions = 3;
  m.max_repetitions = 100;
  std::vector<std::string> log;
  auto members = members_logging(log, {"A", "B", "C"});
  const rounds_outcome o = run_rounds(m, members, no_progress, alone);
  CHECK(o.rounds == 3);
  CHECK(o.reason == stop_reason::fixed);
  CHECK(log == std::vector<std::string>{"w:A", "w:B", "w:C", "A", "B", "C", "C", "B", "A", "A", "B", "C"});
  for (const auto& mb : members) CHECK(mb.pass_s.size() == 3);
}

TEST_CASE("rounds: a member whose pass fails leaves the rotation, adaptive stops at the target",
          "[runner][repetitions]") {
  measure_config m;
  m.warmup = 0;
  m.adaptive = true;
  m.min_repetitions = 4;
  m.max_repetitions = 50;
  m.target_rel_half_width = 0.02;
  std::vector<std::string> log;
  auto members = members_logging(log, {"A", "B"});
  int calls = 0;
  members[1].pass = [&calls](pass_phase) -> std::optional<double> {
    if (++calls == 2) return std::nullopt;  // fails in its second round
    return 0.01;
  };
  const rounds_outcome o = run_rounds(m, members, no_progress, alone);
  CHECK(o.rounds == 4);  // constant passes meet any target at the minimum
  CHECK(o.reason == stop_reason::target_met);
  CHECK(!members[1].active);
  CHECK(members[1].pass_s.size() == 1);
  CHECK(members[0].pass_s.size() == 4);
}
