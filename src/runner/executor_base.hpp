// How one variant turns a batch into logits. The plain executor runs the shared model on the
// run's device under the variant's precision and attention settings; offload, parallel and
// pipeline executors plug in behind the same interface (one file each in src/techniques/).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"
#include "workload/batching_base.hpp"

namespace attnbench {

class executor_base {
 public:
  virtual ~executor_base() = default;
  // Logits (B, C) float32 for one batch, in the batch's row order. Runs under inference mode.
  torch::Tensor forward(const batch& b) { return do_forward(b); }
  // Adds what the technique measured over every forward so far to the variant's record (the
  // runner calls it once, after the last pass, with the device synchronised; r.batches is set:
  // per-pass figures are per-batch averages times the batches of a pass).
  void annotate(variant_result& r) { do_annotate(r); }

 protected:
  virtual torch::Tensor do_forward(const batch& b) = 0;
  virtual void do_annotate(variant_result& /*r*/) {}
};

// The baseline execution path: the one model, one device, autocast as the variant says.
class plain_executor : public executor_base {
 public:
  plain_executor(EncoderClassifier model, torch::Device device, const variant_config& variant, bool causal);

 protected:
  torch::Tensor do_forward(const batch& b) override;

 private:
  EncoderClassifier model_;
  torch::Device device_;
  precision_kind precision_;
  attention_settings how_;
};

// Why this variant cannot run here (e.g. offloading without an accelerator), or nullopt. The
// variant is then SKIPPED with the reason in every report: no numbers, not a failure.
std::optional<std::string> executor_skip_reason(const variant_config& variant, torch::Device device);

std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                             const variant_config& variant, bool causal);

}  // namespace attnbench
