#include "techniques/offload_trainer.hpp"

#include <algorithm>

#include "techniques/layer_streamer.hpp"
#include "techniques/recompute.hpp"

namespace attnbench {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

}  // namespace

// Shared by the trainer and the model's layer stack; backward runs on the autograd engine's
// thread, but never at the same time as a forward (one step at a time).
struct offload_trainer::state {
  EncoderClassifierImpl* model = nullptr;  // owns the layer stack that owns this state
  std::unique_ptr<layer_streamer> streamer;
  std::vector<std::vector<torch::Tensor>> host;  // per layer: the master parameters (host memory)
  int64_t prefetch = 0;
  int64_t next_run = 0;     // forward: the layer expected next
  int64_t next_load = 0;    // forward: the next layer to copy in
  int64_t next_grad = -1;   // backward: the layer expected next
  int64_t next_fetch = -1;  // backward: the next layer to copy in (counting down)
  int64_t steps = 0;

  int64_t layers() const { return static_cast<int64_t>(host.size()); }

  // Layer i's forward on its slot, in the current grad mode, with the copies up to i + prefetch
  // issued first.
  torch::Tensor run_forward(int64_t i, const torch::Tensor& x, const attention_mask& mask) {
    if (i == 0) {
      streamer->clear_schedule();
      streamer->forget_resident();
      next_run = next_load = 0;
      ++steps;
    }
    TORCH_CHECK(i == next_run, "offload: layer ", i, "'s forward ran out of order (expected layer ", next_run,
                ")");
    ++next_run;
    for (; next_load <= std::min(i + prefetch, layers() - 1); ++next_load) streamer->load(next_load);
    EncoderLayer layer = streamer->wait_for(i, "run");
    // The slot is refilled with other layers' weights: a cached autocast copy of it would be stale.
    const autocast_cache_off no_cache;
    RECORD_USER_SCOPE("encoder.layer");
    torch::Tensor out = layer->forward(x, mask, model->attention());  // (B, S, H)
    streamer->release(i);
    return out;
  }

  // Layer i's slot for its backward, with the copies down to i − prefetch issued first.
  EncoderLayer fetch_for_backward(int64_t i) {
    if (i == layers() - 1) {
      streamer->forget_resident();
      next_grad = next_fetch = layers() - 1;
    }
    TORCH_CHECK(i == next_grad, "offload: layer ", i, "'s backward ran out of order (expected layer ",
                next_grad, ")");
    --next_grad;
    for (; next_fetch >= std::max<int64_t>(i - prefetch, 0); --next_fetch) streamer->load(next_fetch);
    return streamer->wait_for(i, "grad");
  }
};

namespace {

// One call of one layer: what its backward needs.
struct layer_call : torch::CustomClassHolder {
  std::shared_ptr<offload_trainer::state> owner;
  int64_t layer = 0;
  attention_mask mask;
  recompute_point point;  // autocast and generator states before the forward
};

class offload_layer_function : public torch::autograd::Function<offload_layer_function> {
 public:
  // Grad mode is off here (Function::apply turns it off): nothing inside is kept.
  static torch::Tensor forward(AutogradContext* ctx, c10::intrusive_ptr<layer_call> call,
                               const torch::Tensor& x,
                               at::TensorList /*host params: tracked by apply, read from state*/) {
    call->point = capture_recompute_point(x.device());
    ctx->save_for_backward({x});
    ctx->saved_data["call"] = c10::IValue::make_capsule(call);
    return call->owner->run_forward(call->layer, x, call->mask);
  }

  // One entry per apply argument: the call (none), x, then each host parameter of the layer.
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto call = c10::static_intrusive_pointer_cast<layer_call>(ctx->saved_data["call"].toCapsule());
    offload_trainer::state& st = *call->owner;
    const torch::Tensor saved = ctx->get_saved_variables().at(0);
    const auto& host = st.host[static_cast<size_t>(call->layer)];
    variable_list result(2 + host.size());
    TORCH_CHECK(grad_outputs.at(0).defined(), "offload: layer ", call->layer, " got no output gradient");

    EncoderLayer layer = st.fetch_for_backward(call->layer);
    const torch::Tensor input = saved.detach().requires_grad_(true);
    torch::Tensor out;
    {
      const recompute_scope same_masks_and_precision(call->point);
      const autocast_cache_off no_cache;
      out = layer->forward(input, call->mask, st.model->attention());  // (B, S, H)
    }
    std::vector<torch::Tensor> wrt{input};
    const auto slot_params = layer->parameters();
    wrt.insert(wrt.end(), slot_params.begin(), slot_params.end());
    auto grads = torch::autograd::grad({out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                                       /*create_graph=*/false, /*allow_unused=*/true);
    out = torch::Tensor();
    // The slot's gradients, copied back: autograd accumulates them into the host parameters' .grad.
    const auto host_grads = st.streamer->to_host(std::vector<torch::Tensor>(grads.begin() + 1, grads.end()));
    st.streamer->release(call->layer);
    if (saved.requires_grad()) result[1] = grads[0];
    for (size_t k = 0; k < host_grads.size(); ++k)
      if (host[k].requires_grad()) result[2 + k] = host_grads[k];
    return result;
  }
};

}  // namespace

offload_trainer::offload_trainer(EncoderClassifier& model, torch::Device device,
                                 const variant_config& variant)
    : state_(std::make_shared<state>()), cfg_(*variant.offload) {
  TORCH_CHECK(cfg_.target == "cpu" || device.is_cuda(), "offload: needs an accelerator (or target \"cpu\")");
  TORCH_CHECK(!cfg_.host_in_compute_dtype, "offload: training keeps fp32 master weights in host memory");
  const int64_t layers = model->num_layers();
  TORCH_CHECK(layers > 0, "offload: the model has no encoder layers");
  const bool pin = cfg_.pinned && device.is_cuda();
  for (const auto& p : model->parameters()) full_bytes_ += static_cast<int64_t>(p.nbytes());
  int64_t layer_param_bytes = 0;
  {
    torch::NoGradGuard no_grad;
    for (int64_t i = 0; i < layers; ++i) {
      std::vector<torch::Tensor> params = model->layer(i)->parameters();
      for (auto& p : params) {
        // The parameter itself moves (set_data keeps its identity): the optimizer built afterwards
        // keeps its state beside it, in host memory, and steps there.
        if (!p.device().is_cpu()) p.set_data(p.detach().to(torch::kCPU));
        if (pin && !p.is_pinned()) p.set_data(p.detach().pin_memory());
      }
      layer_param_bytes += bytes_of(params);
      state_->host.push_back(std::move(params));
    }
  }
  resident_bytes_ = full_bytes_ - layer_param_bytes;
  state_->model = model.get();
  state_->prefetch = cfg_.prefetch;
  state_->streamer =
      std::make_unique<layer_streamer>(model->config(), state_->host, device, cfg_.prefetch, pin);
  state_->streamer->match_mode(*model->layer(0));  // dropout runs in the slots as in the model
  // The stack holds the state, not the model (which owns the stack).
  model->set_layer_stack([st = state_](const torch::Tensor& x, const attention_mask& mask) {
    torch::Tensor h = x;  // (B, S, H)
    if (!torch::GradMode::is_enabled()) {
      for (int64_t i = 0; i < st->layers(); ++i) h = st->run_forward(i, h, mask);
      return h;
    }
    for (int64_t i = 0; i < st->layers(); ++i) {
      auto call = c10::make_intrusive<layer_call>();
      call->owner = st;
      call->layer = i;
      call->mask = mask;
      h = offload_layer_function::apply(call, h, at::TensorList(st->host[static_cast<size_t>(i)]));
    }
    return h;
  });
}

offload_trainer::~offload_trainer() = default;

const std::vector<std::string>& offload_trainer::last_schedule() const {
  return state_->streamer->schedule();
}
int64_t offload_trainer::max_resident_layers() const { return state_->streamer->max_resident_layers(); }
int64_t offload_trainer::resident_bound() const { return state_->streamer->resident_bound(); }
int64_t offload_trainer::layer_bytes() const { return state_->streamer->layer_bytes(); }
int64_t offload_trainer::steps() const { return state_->steps; }

void offload_trainer::annotate(variant_result& r) {
  layer_streamer& s = *state_->streamer;
  offload_info& o = r.offload;
  o.host_dtype = "fp32";  // the master weights the optimizer updates
  o.prefetch = cfg_.prefetch;
  o.full_weight_bytes = full_bytes_;
  o.resident_weight_bytes = resident_bytes_ + s.resident_bound() * s.slot_bytes();
  // Every layer streamed in for the forward and again for the backward; its gradients (fp32, the
  // size of its weights) streamed back.
  const int64_t one_way = s.layers() * s.layer_bytes() * r.batches;
  o.d2h_bytes_per_pass = one_way;
  o.bytes_per_pass = 2 * one_way + o.d2h_bytes_per_pass;
  o.optimizer = offload_optimizer_note;
  s.annotate(o, r.batches, state_->steps);
  if (std::find(r.notes.begin(), r.notes.end(), offload_optimizer_note) == r.notes.end())
    r.notes.push_back(offload_optimizer_note);
}

}  // namespace attnbench
