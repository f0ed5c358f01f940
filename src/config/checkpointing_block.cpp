// A variant's `checkpointing` block: which encoder layers' activations are recomputed in backward.
#include <fmt/format.h>

#include "config/config_reader.hpp"

namespace attnbench::config_reading {
namespace {

constexpr std::array all_checkpoint_policies{checkpoint_policy::none, checkpoint_policy::every,
                                             checkpoint_policy::sqrt};

}  // namespace

std::shared_ptr<const block_schema> checkpointing_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Activation checkpointing: segments of encoder layers whose activations are recomputed in backward";
  b->keys = {
      choice_key("policy", names_of(all_checkpoint_policies),
                 "none, every (segments of `every` layers) or sqrt (about sqrt(layers) segments)")
          .is_required(),
      integer_key("every", "policy every (required): layers per segment, <= model.layers").at_least(1),
  };
  b->extra["allOf"] = ordered_json::array({required_when("policy", "every", {"every"})});
  return b;
}

// Segments are runs of encoder layers, so "every" must fit the model's layer count.
void config_reader::read_checkpointing(const object_reader& c, checkpointing_config& cc) {
  if (!c.present()) return;
  c.check_keys();
  c.require("policy");
  assign(cc.policy, c.enumeration("policy", all_checkpoint_policies));
  if (cc.policy == checkpoint_policy::every)
    c.require("every", "required for policy \"every\"");
  else if (c.has("every"))
    c.add("every", "only used with policy \"every\"");
  auto every = c.integer("every");
  const int64_t layers = cfg_.model.layers;
  if (every && layers > 0 && *every > layers)
    c.add("every", fmt::format("must be <= model.layers ({}); got {}", layers, *every));
  else
    assign(cc.every, every);
}

}  // namespace attnbench::config_reading
