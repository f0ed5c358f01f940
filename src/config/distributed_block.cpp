// The `distributed` block: how the ranks of a multi-process run (attnbench launch) talk.
#include <fmt/format.h>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {

std::shared_ptr<const block_schema> distributed_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Multi-process runs (attnbench launch): the collectives' backend and timeout";
  b->keys = {
      number_key("timeout_s", "Seconds a collective may wait for a lost rank")
          .above(0)
          .by_default(defaults::distributed_timeout_s),
      choice_key("backend", {"auto", "gloo", "nccl"}, "auto (NCCL on CUDA devices, else Gloo), gloo or nccl (CUDA only)")
          .by_default("auto"),
  };
  return b;
}

void config_reader::read_distributed() {
  distributed_config& dc = cfg_.distributed;
  dc.timeout_s = defaults::distributed_timeout_s;
  object_reader d = root_.object("distributed");
  d.check_keys();
  assign(dc.timeout_s, d.number("timeout_s"));
  assign(dc.backend, d.choice("backend"));
  if (dc.backend == "nccl" && on_cpu_.value_or(false))
    d.add("backend", fmt::format("NCCL needs CUDA devices; this run's device is {}: use \"gloo\" or \"auto\"",
                                 quote(cfg_.device)));
}

}  // namespace attnbench::config_reading
