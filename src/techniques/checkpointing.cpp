#include "techniques/checkpointing.hpp"

#include <fmt/format.h>

#include <cmath>

#include "techniques/recompute.hpp"

namespace attnbench {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What backward needs to run the segment again. Held by the autograd node (as an IValue capsule),
// so it lives exactly as long as the graph that may call backward.
struct segment_state : torch::CustomClassHolder {
  std::shared_ptr<torch::nn::Module> keep_alive;  // the model, for as long as the graph exists
  EncoderClassifierImpl* model = nullptr;
  attention_mask mask;
  layer_segment layers;
  std::vector<torch::Tensor> params;  // the segment's parameters, in the order passed to apply
  recompute_point point;  // autocast and generator states before the forward
};

class checkpoint_function : public torch::autograd::Function<checkpoint_function> {
 public:
  // Grad mode is off here (Function::apply turns it off): nothing inside is kept.
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<segment_state> state,
                               const torch::Tensor& x,
                               at::TensorList /*params: tracked by apply, read from state*/) {
    state->point = capture_recompute_point(x.device());
    ctx->save_for_backward({x});
    ctx->saved_data["segment"] = c10::IValue::make_capsule(state);
    const autocast_cache_off no_cache;
    return state->model->forward_layers(x, state->mask, state->layers.begin, state->layers.end);
  }

  // One entry per apply argument: the state (none), x, then each parameter.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto state = c10::static_intrusive_pointer_cast<segment_state>(ctx->saved_data["segment"].toCapsule());
    const torch::Tensor saved = ctx->get_saved_variables().at(0);
    variable_list result(2 + state->params.size());
    if (!grad_outputs.at(0).defined()) return result;

    const torch::Tensor input = saved.detach().requires_grad_(true);
    torch::Tensor out;
    {
      const recompute_scope same_masks_and_precision(state->point);
      out = state->model->forward_layers(input, state->mask, state->layers.begin, state->layers.end);
    }
    std::vector<torch::Tensor> wrt{input};
    std::vector<std::size_t> slot{1};  // where each gradient goes in result
    for (std::size_t i = 0; i < state->params.size(); ++i) {
      if (!state->params[i].requires_grad()) continue;
      wrt.push_back(state->params[i]);
      slot.push_back(2 + i);
    }
    auto grads = torch::autograd::grad({out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                                       /*create_graph=*/false, /*allow_unused=*/true);
    for (std::size_t i = 0; i < grads.size(); ++i) result[slot[i]] = grads[i];
    if (!saved.requires_grad()) result[1] = torch::Tensor();
    return result;
  }
};

std::vector<torch::Tensor> segment_parameters(EncoderClassifierImpl& model, layer_segment s) {
  std::vector<torch::Tensor> params;
  for (int64_t i = s.begin; i < s.end; ++i) {
    const std::string prefix = fmt::format("layers.{}.", i);
    for (const auto& item : model.named_parameters(/*recurse=*/true))
      if (item.key().rfind(prefix, 0) == 0) params.push_back(item.value());
  }
  return params;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

std::vector<layer_segment> checkpoint_segments(const checkpointing_config& c, int64_t layers) {
  int64_t size = 0;
  switch (c.policy) {
    case checkpoint_policy::none:
      return {};
    case checkpoint_policy::every:
      size = c.every;
      break;
    case checkpoint_policy::sqrt:
      size = ceil_div(layers, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(layers)))));
      break;
  }
  TORCH_CHECK(size >= 1 && size <= layers, "checkpoint segments of ", size, " layers do not fit ", layers,
              " layers");
  std::vector<layer_segment> segments;
  for (int64_t b = 0; b < layers; b += size) segments.push_back({b, std::min(layers, b + size)});
  return segments;
}

std::string describe_checkpointing(const checkpointing_config& c, int64_t layers) {
  const auto segments = checkpoint_segments(c, layers);
  const auto n = segments.size();
  switch (c.policy) {
    case checkpoint_policy::none:
      break;
    case checkpoint_policy::every:
      return fmt::format("every {} layer{}: {} segment{}", c.every, c.every == 1 ? "" : "s", n,
                         n == 1 ? "" : "s");
    case checkpoint_policy::sqrt: {
      const int64_t size = segments.front().end - segments.front().begin;
      return fmt::format("sqrt: {} segment{} of {} layer{}", n, n == 1 ? "" : "s", size,
                         size == 1 ? "" : "s");
    }
  }
  return "none";
}

torch::Tensor checkpointed_layers(EncoderClassifierImpl& model, const torch::Tensor& x,
                                  const attention_mask& mask, int64_t begin, int64_t end) {
  auto state = c10::make_intrusive<segment_state>();
  state->keep_alive = model.shared_from_this();
  state->model = &model;
  state->mask = mask;
  state->layers = {begin, end};
  state->params = segment_parameters(model, state->layers);
  return checkpoint_function::apply(state, x, at::TensorList(state->params));
}

void apply_checkpointing(EncoderClassifier& model, const checkpointing_config& c) {
  auto segments = checkpoint_segments(c, model->config().layers);
  if (segments.empty()) {
    model->set_layer_stack(nullptr);
    return;
  }
  // A raw pointer: the model owns this function, so it outlives every call.
  EncoderClassifierImpl* impl = model.get();
  model->set_layer_stack([impl, segments](const torch::Tensor& x, const attention_mask& mask) {
    if (!torch::GradMode::is_enabled()) return impl->forward_layers(x, mask, 0, impl->config().layers);
    torch::Tensor h = x;  // (B, S, H)
    for (const auto& s : segments) h = checkpointed_layers(*impl, h, mask, s.begin, s.end);
    return h;
  });
}

}  // namespace attnbench
