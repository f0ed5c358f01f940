// A variant's `offload` block: encoder layers' weights kept in host memory and streamed to the
// device one layer (or `prefetch` layers) ahead of their use.
#include <fmt/format.h>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {

std::shared_ptr<const block_schema> offload_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "CPU offloading: the layers' weights live in host memory and are streamed to the device";
  b->keys = {
      boolean_key("enabled", "false turns the block off (the variant runs resident)").by_default(true),
      integer_key("prefetch", "Layers copied ahead of the one computing, <= model.layers")
          .at_least(0)
          .by_default(defaults::offload_prefetch),
      boolean_key("pinned", "Page-locked host memory, so copies overlap compute").by_default(defaults::offload_pinned),
      choice_key("host_dtype", {"fp32", "compute"},
                 "The host copy's dtype: fp32, or the compute dtype (inference only)")
          .by_default("fp32"),
      string_key("target", "The device streamed to: the run's device (default), or \"cpu\" to exercise the "
                           "mechanism on a CPU run")
          .with({{"anyOf", ordered_json::array({{{"enum", {"cpu", "cuda"}}}, {{"pattern", "^cuda:[0-9]+$"}}})}}),
  };
  return b;
}

void config_reader::read_offload(const object_reader& o, variant_config& vc) {
  if (!o.present()) return;
  o.check_keys();
  if (auto enabled = o.boolean("enabled"); enabled && !*enabled) return;
  offload_config oc;
  oc.prefetch = defaults::offload_prefetch;
  oc.pinned = defaults::offload_pinned;
  if (auto prefetch = o.integer("prefetch")) {
    if (cfg_.model.layers > 0 && *prefetch > cfg_.model.layers)
      o.add("prefetch", fmt::format("must be <= the model's {} layers; got {}", cfg_.model.layers, *prefetch));
    else
      oc.prefetch = *prefetch;
  }
  assign(oc.pinned, o.boolean("pinned"));
  if (auto host = o.choice("host_dtype")) {
    oc.host_in_compute_dtype = *host == "compute";
    if (oc.host_in_compute_dtype && cfg_.scenario == "train")
      o.add("host_dtype",
            "\"compute\" is for inference: training keeps the fp32 master weights in host memory "
            "and streams those");
  }
  if (auto target = o.string("target")) {
    const auto index = cuda_index(*target);
    if (*target != "cpu" && !index)
      o.add("target", fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*target)));
    else if (index && *index >= caps_.cuda_devices)
      o.add("target", fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*target),
                                  caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
    else if (index && on_cpu_.value_or(false))
      o.add("target", fmt::format("{} is not the run's device ({}): offloading streams weights to the device "
                                  "the model runs on; use \"cpu\" to exercise the mechanism on the CPU",
                                  quote(*target), quote(cfg_.device)));
    else if (*target == "cpu" && on_cpu_ && !*on_cpu_)
      o.add("target", fmt::format("\"cpu\" exercises the mechanism on a CPU run; this run's device is {}: leave "
                                  "target out to offload to it",
                                  quote(cfg_.device)));
    else if (const auto run_index = cuda_index(cfg_.device); index && run_index && *run_index != *index)
      o.add("target", fmt::format("{} is not the run's device ({})", quote(*target), quote(cfg_.device)));
    oc.target = *target;
  }
  vc.offload = oc;
}

}  // namespace attnbench::config_reading
