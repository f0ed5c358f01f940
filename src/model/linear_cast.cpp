#include "model/linear_cast.hpp"

namespace attnbench {

int64_t cast_linear_layers(torch::nn::Module& module, torch::Dtype dtype) {
  const torch::NoGradGuard no_grad;
  int64_t bytes = 0;
  for (const auto& m : module.modules(/*include_self=*/true)) {
    auto* linear = m->as<torch::nn::Linear>();
    if (!linear) continue;
    linear->to(dtype);
    for (const auto& p : linear->parameters(/*recurse=*/false)) bytes += static_cast<int64_t>(p.nbytes());
  }
  return bytes;
}

}  // namespace attnbench
