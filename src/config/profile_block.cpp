// The `profile` block: torch.profiler.schedule's shape (a step is one batch) and what the
// profiler records, for `attnbench profile` and `run --profile`.
#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {

std::shared_ptr<const block_schema> profile_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The profiler's schedule (torch.profiler.schedule's meaning; a step is one batch) and what it records";
  b->keys = {
      integer_key("skip_first", "Steps skipped before the first cycle").at_least(0).by_default(defaults::profile_skip_first),
      integer_key("wait", "Unprofiled steps at the start of each cycle").at_least(0).by_default(defaults::profile_wait),
      integer_key("warmup", "Prepared, unrecorded steps of each cycle").at_least(0).by_default(defaults::profile_warmup),
      integer_key("active", "Recorded steps of each cycle").at_least(1).by_default(defaults::profile_active),
      integer_key("repeat", "Cycles (one trace each)").at_least(1).by_default(defaults::profile_repeat),
      boolean_key("record_shapes", "Record operator input shapes").by_default(defaults::profile_record_shapes),
      boolean_key("profile_memory", "Record allocations (the per-region peak memory)").by_default(defaults::profile_memory),
      boolean_key("with_flops", "Estimate FLOPs of matmuls and convolutions").by_default(defaults::profile_with_flops),
      boolean_key("with_stack", "Record C++ stacks (costly)").by_default(defaults::profile_with_stack),
      integer_key("top", "Operators in the operator table").at_least(1).by_default(defaults::profile_top),
  };
  return b;
}

void read_profile_block(const object_reader& root, profile_config& pc) {
  pc = {defaults::profile_skip_first, defaults::profile_wait,       defaults::profile_warmup,
        defaults::profile_active,     defaults::profile_repeat,     defaults::profile_record_shapes,
        defaults::profile_memory,     defaults::profile_with_flops, defaults::profile_with_stack,
        defaults::profile_top};
  object_reader p = root.object("profile");
  p.check_keys();
  assign(pc.skip_first, p.integer("skip_first"));
  assign(pc.wait, p.integer("wait"));
  assign(pc.warmup, p.integer("warmup"));
  // 0 is let through the reader (below the declared minimum) so that the message can say why it is wrong.
  if (auto active = p.integer("active", 0)) {
    pc.active = *active;
    if (*active == 0) p.add("active", "must be >= 1: a schedule without active steps records nothing");
  }
  if (auto repeat = p.integer("repeat", 0)) {
    pc.repeat = *repeat;
    if (*repeat == 0) p.add("repeat", "must be >= 1: 0 (repeat forever) has no end in a benchmark");
  }
  assign(pc.record_shapes, p.boolean("record_shapes"));
  assign(pc.profile_memory, p.boolean("profile_memory"));
  assign(pc.with_flops, p.boolean("with_flops"));
  assign(pc.with_stack, p.boolean("with_stack"));
  assign(pc.top, p.integer("top"));
}

}  // namespace attnbench::config_reading
