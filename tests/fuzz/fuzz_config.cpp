// libFuzzer target: the config parser (config/config_parser.hpp) on arbitrary bytes, as
// `attnbench validate` runs it on a machine without a GPU: parse, then for a sweep every point's
// config, then the profile block. Each must succeed or throw an input_error; nothing else may
// escape (a std::out_of_range, a nlohmann exception, a crash, undefined behaviour).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "config/byte_size.hpp"
#include "config/config_parser.hpp"
#include "config/profile_config.hpp"
#include "config/sweep.hpp"
#include "config/technique_catalog.hpp"

namespace {
// A sweep point reparses the whole document: enough points to cover the edits, few enough to
// keep the fuzzer fast.
constexpr size_t max_points_checked = 16;

// A precision value registered as a technique registers one (config/technique_catalog.hpp), so the
// checks of registered values run too. "fuzz16" is no real technique's: the real ones register
// from LibTorch code, which this target does not link.
const bool registered = [] {
  attnbench::technique_option o;
  o.key = "precision";
  o.value = "fuzz16";
  o.technique = "fuzz";
  o.summary = "a stand-in for a registered precision";
  o.default_tolerance = 0.1;
  o.scenarios = {"offline", "server"};
  o.excludes = {"offload", "parallel", "pipeline", "checkpointing"};
  attnbench::register_technique_option(o);
  return true;
}();
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const attnbench::device_caps cpu_only{0, true};
  try {
    const attnbench::config cfg = attnbench::parse_config_text(text, "", cpu_only);
    if (cfg.variants.empty() || !attnbench::find_variant(cfg, cfg.baseline)) __builtin_trap();
    attnbench::profile_config_of(cfg);
    if (attnbench::device_memory_limit(cfg) < 0) __builtin_trap();
    if (cfg.sweep) {
      const auto points = attnbench::expand_sweep(*cfg.sweep);
      if (points.size() <= max_points_checked) attnbench::sweep_point_configs(cfg, points, cpu_only);
    }
  } catch (const attnbench::input_error&) {
  }
  return 0;
}
