// A variant's `batching` block: static batches of a fixed size, or dynamic batches under a token
// budget (optionally bucketed by length); the server scenario's queue delay.
#include <fmt/format.h>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {
namespace {

// Keys shared by every kind, then each kind's own: a key of the other kind is refused.
const names batching_common_keys{"kind", "pool", "cache", "max_queue_delay_ms"};
const names static_batching_keys{"batch_size", "padding"};
const names dynamic_batching_keys{"max_tokens", "max_batch_size", "grouping", "boundaries", "planner"};

constexpr std::array all_paddings{padding_kind::max_length, padding_kind::longest};
constexpr std::array all_planners{planner_kind::greedy, planner_kind::cost};
constexpr std::array all_groupings{grouping_kind::sorted, grouping_kind::bucketed};

}  // namespace

std::shared_ptr<const block_schema> batching_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "static: batches of batch_size; dynamic: batches under a token budget (max_tokens)";
  b->keys = {
      choice_key("kind", {"static", "dynamic"}, "static or dynamic; it decides which other keys apply")
          .by_default(std::string(defaults::batching_kind)),
      boolean_key("pool", "Server scenario: reuse input buffers across batches"),
      boolean_key("cache", "Server scenario: answer a repeated request from a result cache"),
      number_key("max_queue_delay_ms", "Server scenario: how long a request may wait for a batch to fill")
          .at_least(0)
          .by_default(defaults::max_queue_delay_ms),
      integer_key("batch_size", "static: samples per batch (a decoder's default: 1)").at_least(1).by_default(defaults::batch_size),
      choice_key("padding", names_of(all_paddings),
                 "static: pad to workload.max_length or to the batch's longest (a decoder's default: longest, "
                 "left-padded)")
          .by_default(to_string(defaults::padding)),
      integer_key("max_tokens", "dynamic (required): the token budget of a padded batch").at_least(1),
      integer_key("max_batch_size", "dynamic: samples per batch at most").at_least(1).by_default(defaults::max_batch_size),
      choice_key("grouping", names_of(all_groupings),
                 "dynamic: sorted by length, or bucketed by length at the boundaries")
          .by_default("sorted"),
      array_key("boundaries",
                integer_key("", "A bucket's upper length").at_least(static_cast<double>(defaults::min_sample_length)),
                "grouping bucketed (required): ascending bucket bounds, the last >= workload.max_length")
          .with({{"minItems", 1}}),
      choice_key("planner", names_of(all_planners), "dynamic: where batches are cut: modelled cost or greedy filling")
          .by_default(to_string(defaults::planner)),
  };
  b->extra["allOf"] = ordered_json::array(
      {required_when("kind", "dynamic", {"max_tokens"}), required_when("grouping", "bucketed", {"boundaries"})});
  return b;
}

void config_reader::read_batching(const object_reader& b, batching_config& bc) {
  bc.kind = std::string(defaults::batching_kind);
  bc.batch_size = defaults::batch_size;
  bc.padding = defaults::padding;
  bc.max_batch_size = defaults::max_batch_size;
  bc.planner = defaults::planner;
  bc.max_queue_delay_ms = defaults::max_queue_delay_ms;
  assign(bc.kind, b.choice("kind"));
  const bool dynamic = bc.kind == "dynamic";
  names keys = batching_common_keys;
  const names& own = dynamic ? dynamic_batching_keys : static_batching_keys;
  keys.insert(keys.end(), own.begin(), own.end());
  b.check_keys(keys);
  assign(bc.pool, b.boolean("pool"));
  assign(bc.cache, b.boolean("cache"));
  assign(bc.max_queue_delay_ms, b.number("max_queue_delay_ms"));
  if (!dynamic) {
    // A decoder generates one prompt at a time unless told otherwise (llama-bench's tg), and pads a
    // batch's prompts on the left to its longest (Hugging Face's tokenizer with padding=True).
    if (cfg_.model.family != model_family::bert) {
      bc.batch_size = 1;
      bc.padding = padding_kind::longest;
    }
    assign(bc.batch_size, b.integer("batch_size"));
    assign(bc.padding, b.enumeration("padding", all_paddings));
    return;
  }
  b.require("max_tokens", "required for kind \"dynamic\"");
  assign(bc.max_tokens, b.integer("max_tokens"));
  assign(bc.max_batch_size, b.integer("max_batch_size"));
  // A decoder's dynamic batching is continuous batching (runner/generate_engine.hpp): max_tokens
  // bounds the KV-cache positions its running sequences hold together.
  const int64_t longest = cfg_.workload.max_length + cfg_.generate.max_new_tokens;
  if (cfg_.model.family != model_family::bert && bc.max_tokens > 0 && cfg_.workload.max_length > 0 &&
      bc.max_tokens < longest)
    b.add("max_tokens", fmt::format("a decoder's continuous batching holds a KV cache of prompt + max_new_tokens "
                                    "positions per sequence; the longest prompt needs {} (workload.max_length {} + "
                                    "generate.max_new_tokens {}), more than max_tokens ({})",
                                    longest, cfg_.workload.max_length, cfg_.generate.max_new_tokens, bc.max_tokens));
  assign(bc.planner, b.enumeration("planner", all_planners));
  assign(bc.grouping, b.enumeration("grouping", all_groupings));
  const ordered_json* bounds = b.find("boundaries");
  if (bc.grouping == grouping_kind::bucketed && !bounds) b.require("boundaries", "required for grouping \"bucketed\"");
  if (!bounds) return;
  if (bc.grouping != grouping_kind::bucketed) b.add("boundaries", "only used with grouping \"bucketed\"");
  if (!bounds->is_array() || bounds->empty()) {
    log_.type_error(b.path("boundaries"), "a non-empty array of lengths", *bounds);
    return;
  }
  const auto shortest = static_cast<int64_t>(*b.spec("boundaries").items->minimum);
  for (size_t i = 0; i < bounds->size(); ++i) {
    const std::string path = fmt::format("{}[{}]", b.path("boundaries"), i);
    auto x = log_.integer((*bounds)[i], path, shortest);
    if (!x) continue;
    if (!bc.boundaries.empty() && *x <= bc.boundaries.back())
      log_.add(path, fmt::format("boundaries must ascend; {} follows {}", *x, bc.boundaries.back()));
    bc.boundaries.push_back(*x);
  }
  if (!bc.boundaries.empty() && cfg_.workload.max_length > 0 && bc.boundaries.back() < cfg_.workload.max_length)
    b.add("boundaries", fmt::format("the last boundary ({}) must be >= workload.max_length ({}) so every "
                                    "sample has a bucket",
                                    bc.boundaries.back(), cfg_.workload.max_length));
}

}  // namespace attnbench::config_reading
