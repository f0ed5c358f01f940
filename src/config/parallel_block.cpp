// A variant's `parallel` block: data-parallel workers (threads on listed devices, or processes
// started by `attnbench launch`), each with the whole model.
#include <fmt/format.h>

#include "config/config_reader.hpp"

namespace attnbench::config_reading {

// A device a worker or a pipeline stage runs on: "cpu", "cuda" or "cuda:N".
ordered_json device_keywords() {
  return {{"type", "string"},
          {"anyOf", ordered_json::array({{{"enum", {"cpu", "cuda"}}}, {{"pattern", "^cuda:[0-9]+$"}}})}};
}

std::shared_ptr<const block_schema> parallel_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Data parallel: workers each holding the whole model, the batches shared between them";
  b->keys = {
      choice_key("mode", {"threads", "processes"},
                 "threads (one worker per entry of devices) or processes (ranks started by attnbench launch)")
          .by_default("threads"),
      any_key("devices", "mode threads (required): one worker per entry, e.g. [\"cpu\", \"cpu\"], or \"all\" (every GPU)")
          .with({{"anyOf", ordered_json::array({{{"const", "all"}},
                                                {{"type", "array"}, {"minItems", 1}, {"items", device_keywords()}}})}}),
      integer_key("threads_per_worker", "Intra-op threads of each worker").at_least(1),
  };
  return b;
}

void config_reader::read_parallel(const object_reader& o, variant_config& vc) {
  if (!o.present()) return;
  o.check_keys();
  parallel_config pc;
  if (auto mode = o.choice("mode")) pc.mode = *mode == "processes" ? parallel_mode::processes : parallel_mode::threads;
  assign(pc.threads_per_worker, o.integer("threads_per_worker"));
  const ordered_json* devices = o.find("devices");
  if (pc.mode == parallel_mode::processes) {
    // A rank is one process on one device: the run's device, or cuda:LOCAL_RANK on a GPU run.
    if (devices)
      o.add("devices",
            "not used with \"mode\": \"processes\": each rank runs on the run's device "
            "(cuda:LOCAL_RANK on a GPU run); start the ranks with `attnbench launch --nproc N`");
  } else if (!devices) {
    o.require("devices", "required: one worker per entry, e.g. [\"cpu\", \"cpu\"] or \"all\" (every GPU)");
  } else if (devices->is_string() && devices->get<std::string>() == "all") {
    // Without a GPU the variant is SKIPPED ("needs an accelerator"), as offloading is: one config
    // serves every machine.
    pc.all_gpus = true;
    for (int i = 0; i < caps_.cuda_devices; ++i) pc.devices.push_back(fmt::format("cuda:{}", i));
  } else if (!devices->is_array() || devices->empty()) {
    log_.type_error(o.path("devices"), "\"all\" or a non-empty array of devices", *devices);
  } else {
    for (size_t i = 0; i < devices->size(); ++i) {
      const std::string path = fmt::format("{}[{}]", o.path("devices"), i);
      auto d = log_.string((*devices)[i], path);
      if (!d) continue;
      const auto index = cuda_index(*d);
      if (*d != "cpu" && !index)
        log_.add(path, fmt::format("expected \"cpu\", \"cuda\" or \"cuda:N\"; got {}", quote(*d)));
      else if (index && *index >= caps_.cuda_devices)
        log_.add(path, fmt::format("{} is not available: this machine has {} CUDA device{}", quote(*d),
                                   caps_.cuda_devices, caps_.cuda_devices == 1 ? "" : "s"));
      else
        pc.devices.push_back(index ? fmt::format("cuda:{}", *index) : "cpu");
    }
  }
  if (vc.offload)
    log_.add(o.path(), "parallel and offload in one variant are not supported: each worker holds the whole model");
  if (cfg_.scenario != "offline" && cfg_.scenario != "generate")
    log_.add(o.path(), fmt::format("parallel variants run in the offline and generate scenarios; this config's "
                                   "scenario is {}",
                                   quote(cfg_.scenario)));
  else if (cfg_.scenario == "generate" && pc.mode == parallel_mode::processes)
    log_.add(o.path("mode"), "the generate scenario runs data parallel over worker threads (\"threads\"); "
                             "\"processes\" runs in the offline scenario");
  vc.parallel = pc;
}

}  // namespace attnbench::config_reading
