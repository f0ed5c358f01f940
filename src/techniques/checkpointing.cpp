#include "techniques/checkpointing.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <fmt/format.h>

#include <cmath>
#include <mutex>
#include <optional>

#include "techniques/precision.hpp"

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

namespace attnbench {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The default generators' states: what dropout draws from.
struct rng_snapshot {
  torch::Tensor cpu;
  std::optional<torch::Tensor> cuda;
  c10::DeviceIndex cuda_index = 0;
};

at::Generator cuda_generator([[maybe_unused]] c10::DeviceIndex index) {
#ifdef ATTNBENCH_WITH_CUDA
  return at::cuda::detail::getDefaultCUDAGenerator(index);
#else
  TORCH_CHECK(false, "this build has no CUDA");
#endif
}

rng_snapshot capture_rng(const torch::Device& device) {
  rng_snapshot s;
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    const std::lock_guard<std::mutex> lock(cpu.mutex());
    s.cpu = cpu.get_state();
  }
  if (device.is_cuda()) {
    s.cuda_index = device.index();
    at::Generator gen = cuda_generator(s.cuda_index);
    const std::lock_guard<std::mutex> lock(gen.mutex());
    s.cuda = gen.get_state();
  }
  return s;
}

void restore_rng(const rng_snapshot& s) {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  {
    const std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(s.cpu);
  }
  if (s.cuda) {
    at::Generator gen = cuda_generator(s.cuda_index);
    const std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(*s.cuda);
  }
}

// Draws from `saved` while it lives, then puts the generators back where they were.
class rng_fork {
 public:
  rng_fork(const rng_snapshot& saved, const torch::Device& device) : current_(capture_rng(device)) {
    restore_rng(saved);
  }
  ~rng_fork() { restore_rng(current_); }
  rng_fork(const rng_fork&) = delete;
  rng_fork& operator=(const rng_fork&) = delete;

 private:
  rng_snapshot current_;
};

// Autocast caches low-precision copies of fp32 weights while nested. A copy made in the no-grad
// forward would carry no graph; if the recompute found it in the cache (backward called inside
// the autocast scope), the weights would silently get no gradient. The forward therefore caches
// nothing. Defensive: with LibTorch 2.11 on the CPU the autocast test (backward inside the
// scope) also passes without this guard, so that version does not seem to cache there; older or
// other builds may.
class autocast_cache_off {
 public:
  autocast_cache_off() : previous_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~autocast_cache_off() { at::autocast::set_autocast_cache_enabled(previous_); }
  autocast_cache_off(const autocast_cache_off&) = delete;
  autocast_cache_off& operator=(const autocast_cache_off&) = delete;

 private:
  bool previous_;
};

// What backward needs to run the segment again. Held by the autograd node (as an IValue capsule),
// so it lives exactly as long as the graph that may call backward.
struct segment_state : torch::CustomClassHolder {
  std::shared_ptr<torch::nn::Module> keep_alive;  // the model, for as long as the graph exists
  EncoderClassifierImpl* model = nullptr;
  attention_mask mask;
  layer_segment layers;
  std::vector<torch::Tensor> params;  // the segment's parameters, in the order passed to apply
  torch::Device device = torch::kCPU;
  autocast_state autocast;
  rng_snapshot rng;
};

class checkpoint_function : public torch::autograd::Function<checkpoint_function> {
 public:
  // Grad mode is off here (Function::apply turns it off): nothing inside is kept.
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<segment_state> state,
                               const torch::Tensor& x,
                               at::TensorList /*params: tracked by apply, read from state*/) {
    state->device = x.device();
    state->autocast = current_autocast_state(x.device().type());
    state->rng = capture_rng(x.device());
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
      const rng_fork same_masks(state->rng, state->device);
      const autocast_state_scope same_precision(state->autocast);
      const torch::AutoGradMode grad_on(true);
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
