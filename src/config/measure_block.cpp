// The `measure` block: warm-up, and how many timed rounds (adaptive by default, or fixed).
#include <fmt/format.h>

#include <algorithm>

#include "config/byte_size.hpp"
#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {

std::shared_ptr<const block_schema> measure_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "How often each variant is timed: adaptive rounds until every 95% interval is within "
            "±target_rel_half_width (default), or a fixed number of repetitions";
  b->keys = {
      integer_key("warmup", "Untimed passes per variant").at_least(0).by_default(defaults::warmup),
      integer_key("repetitions", "Fixed mode: this many timed rounds (then min_repetitions and "
                                 "target_rel_half_width are refused)")
          .at_least(1),
      integer_key("min_repetitions", "Adaptive: rounds before the target is tested")
          .at_least(2)
          .by_default(defaults::min_repetitions),
      number_key("target_rel_half_width", "Adaptive: the 95% interval's half-width relative to the mean")
          .above(0)
          .by_default(defaults::target_rel_half_width),
      number_key("max_time_s", "Adaptive: the timed rounds' budget in seconds; fixed: the per-pass limit (TIMEOUT)")
          .at_least(0)
          .by_default(defaults::max_time_s),
      number_key("min_time_s", "Time at least this many seconds of rounds").at_least(0).by_default(defaults::min_time_s),
      integer_key("max_repetitions", "Bounds either mode; default max(100, repetitions or min_repetitions)")
          .at_least(1),
      boolean_key("assemble_inputs", "Build each batch's input tensors inside the timed pass"),
      any_key("max_memory_bytes",
              "CPU memory one step of a variant may allocate, else it is OOM: bytes, or a string such as \"2GiB\"")
          .with(byte_size_keywords()),
  };
  return b;
}

void config_reader::read_measure() {
  measure_config& mc = cfg_.measure;
  mc.warmup = defaults::warmup;
  mc.min_repetitions = defaults::min_repetitions;
  mc.target_rel_half_width = defaults::target_rel_half_width;
  mc.max_time_s = defaults::max_time_s;
  mc.min_time_s = defaults::min_time_s;
  object_reader m = root_.object("measure");
  m.check_keys();
  assign(mc.warmup, m.integer("warmup"));
  auto repetitions = m.integer("repetitions");
  assign(mc.repetitions, repetitions);
  mc.adaptive = !m.has("repetitions");
  auto min_repetitions = m.integer("min_repetitions");
  assign(mc.min_repetitions, min_repetitions);
  assign(mc.target_rel_half_width, m.number("target_rel_half_width"));
  assign(mc.max_time_s, m.number("max_time_s"));
  assign(mc.min_time_s, m.number("min_time_s"));
  assign(mc.assemble_inputs, m.boolean("assemble_inputs"));
  // max_time_s in fixed mode is only the per-pass limit (TIMEOUT); max_memory_bytes is read
  // from the document by the loop (config/byte_size.hpp).
  if (const ordered_json* cap = m.find("max_memory_bytes"); cap && !parse_byte_size(*cap))
    m.add("max_memory_bytes", byte_size_problem(*cap));
  if (!mc.adaptive)
    for (const char* key : {"min_repetitions", "target_rel_half_width"})
      if (m.has(key))
        m.add(key, "applies to adaptive repetitions only; remove measure.repetitions (fixed mode) to use it");
  auto max_repetitions = m.integer("max_repetitions");
  const int64_t floor = mc.adaptive ? mc.min_repetitions : mc.repetitions;
  mc.max_repetitions = max_repetitions.value_or(std::max(defaults::max_repetitions, floor));
  if (max_repetitions && repetitions && *max_repetitions < *repetitions)
    m.add("max_repetitions",
          fmt::format("must be >= measure.repetitions ({}); got {}", *repetitions, *max_repetitions));
  if (max_repetitions && min_repetitions && mc.adaptive && *max_repetitions < *min_repetitions)
    m.add("max_repetitions",
          fmt::format("must be >= measure.min_repetitions ({}); got {}", *min_repetitions, *max_repetitions));
}

}  // namespace attnbench::config_reading
