// A variant's `pipeline` block: the encoder's layers split into stages, one per device, with
// micro-batches flowing through them.
#include <fmt/format.h>

#include <limits>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {

ordered_json device_keywords();  // parallel_block.cpp

std::shared_ptr<const block_schema> pipeline_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Pipeline model parallel: stages of encoder layers, one device each, fed micro-batches";
  key_schema stage = any_key("", "A stage's device: cpu, cuda or cuda:N").with(device_keywords());
  b->keys = {
      array_key("stages", stage, "One device per stage; at most model.layers stages").is_required().with({{"minItems", 1}}),
      integer_key("micro_batch", "Rows per micro-batch").at_least(1).is_required(),
      array_key("layers", integer_key("", "Encoder layers of one stage").at_least(1),
                "Encoder layers per stage, summing to model.layers; default balanced by parameter count"),
      integer_key("threads_per_stage",
                  "Intra-op threads of each stage thread; default the run's threads divided by the stages (at least one)")
          .at_least(1),
  };
  return b;
}

// Stages are devices; each needs at least one encoder layer, and explicit layer counts must
// cover the model's layers exactly.
void config_reader::read_pipeline(const object_reader& p, variant_config& vc) {
  if (!p.present()) return;
  p.check_keys();
  pipeline_config pc;
  pc.threads_per_stage = defaults::pipeline_threads_per_stage;
  p.require("stages");
  p.require("micro_batch", "required: the rows per micro-batch");
  const int64_t model_layers = cfg_.model.layers;
  if (const ordered_json* stages = p.find("stages")) {
    if (!stages->is_array() || stages->empty()) {
      log_.type_error(p.path("stages"), "a non-empty array of devices", *stages);
    } else {
      for (size_t i = 0; i < stages->size(); ++i) {
        const std::string path = fmt::format("{}[{}]", p.path("stages"), i);
        auto device = log_.string((*stages)[i], path);
        if (!device) continue;
        const auto index = cuda_index(*device);
        if (*device != "cpu" && !index)
          log_.add(path, fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*device)));
        else if (index && *index >= caps_.cuda_devices)
          log_.add(path, fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*device),
                                     caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
        // Canonical as the parallel block's devices are: "cuda" is "cuda:0", so a stage on
        // "cuda" is the model's own device and shares its weights (core/device.hpp).
        pc.stages.push_back(index ? fmt::format("cuda:{}", *index) : *device);
      }
      const auto n = static_cast<int64_t>(stages->size());
      if (model_layers > 0 && n > model_layers)
        p.add("stages", fmt::format("{} stages for the model's {} encoder layers: every stage needs at least one "
                                    "layer",
                                    n, model_layers));
    }
  }
  assign(pc.micro_batch, p.integer("micro_batch"));
  assign(pc.threads_per_stage, p.integer("threads_per_stage"));
  if (const ordered_json* layers = p.find("layers")) {
    if (!layers->is_array()) {
      log_.type_error(p.path("layers"), "an array of layer counts, one per stage", *layers);
    } else {
      const auto fewest = static_cast<int64_t>(*p.spec("layers").items->minimum);
      int64_t sum = 0;
      // overflow: the counts' sum is past int64 (tests/fuzz/corpus/config/pipeline-layers-overflow.json).
      bool complete = true, overflow = false;
      for (size_t i = 0; i < layers->size(); ++i) {
        auto k = log_.integer((*layers)[i], fmt::format("{}[{}]", p.path("layers"), i), fewest);
        complete = complete && k.has_value();
        if (!k) continue;
        pc.layers.push_back(*k);
        if (sum > std::numeric_limits<int64_t>::max() - *k)
          overflow = true;
        else
          sum += *k;
      }
      if (!pc.stages.empty() && layers->size() != pc.stages.size())
        p.add("layers", fmt::format("must give one layer count per stage ({} stages); got {}", pc.stages.size(),
                                    layers->size()));
      else if (complete && model_layers > 0 && (overflow || sum != model_layers))
        p.add("layers", fmt::format("must add up to the model's {} encoder layers; they add up to {}", model_layers,
                                    overflow ? "more than that" : std::to_string(sum)));
    }
  }
  vc.pipeline = pc;
}

}  // namespace attnbench::config_reading
