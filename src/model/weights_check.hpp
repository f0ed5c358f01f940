// What the config needs from a Hugging Face checkpoint's header, read by the layer that owns the
// safetensors format: whether it has a classifier head (its output is then logits with that many
// labels, else the mean-pooled embedding, model_config::mean_pool). The config reader only checks
// that model.weights is readable; the runner calls this before anything runs
// (runner/config_checks.hpp). The file is mapped, not read.
#pragma once

#include <vector>

#include "common/error.hpp"
#include "config/config.hpp"

namespace attnbench {

// Sets cfg.model.mean_pool and num_labels from model.weights' header (nothing without weights, or
// for a TorchScript model). Returns the header's problems at path "model.weights".
std::vector<problem> read_weights_head(config& cfg);

}  // namespace attnbench
