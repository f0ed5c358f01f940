#include "model/weights_check.hpp"

#include "model/safetensors.hpp"

namespace attnbench {

std::vector<problem> read_weights_head(config& cfg) {
  model_config& mc = cfg.model;
  if (mc.weights.empty() || !mc.torchscript.empty()) return {};
  try {
    const safetensors_file file(mc.weights);
    const safetensors_tensor* head = file.header().find("classifier.weight");
    mc.mean_pool = head == nullptr;
    mc.num_labels = head && head->shape.size() == 2 ? head->shape[0] : 0;
  } catch (const input_error& e) {
    return {{"model.weights", e.what()}};
  }
  return {};
}

}  // namespace attnbench
