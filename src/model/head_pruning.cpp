#include "model/head_pruning.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace attnbench {
namespace {

struct head_params {
  torch::Tensor qkv_weight;  // (3·h·d, H): rows [Q heads…, K heads…, V heads…], d rows per head
  torch::Tensor qkv_bias;    // (3·h·d)
  torch::Tensor out_weight;  // (H, h·d): d columns per head
  int64_t hidden = 0, heads = 0, head_dim = 0;
};

head_params params_of(const EncoderClassifier& model, int64_t layer) {
  TORCH_CHECK(layer >= 0 && layer < model->num_layers(), "layer ", layer, " out of [0, ", model->num_layers(), ")");
  const auto all = model->named_parameters(/*recurse=*/true);
  const std::string prefix = "layers." + std::to_string(layer) + ".attention.";
  head_params p;
  p.qkv_weight = all[prefix + "qkv.weight"];
  p.qkv_bias = all[prefix + "qkv.bias"];
  p.out_weight = all[prefix + "out_proj.weight"];
  const model_config& cfg = model->config();
  p.hidden = cfg.hidden;
  p.head_dim = cfg.hidden / cfg.heads;
  p.heads = p.qkv_weight.size(0) / (3 * p.head_dim);
  return p;
}

}  // namespace

int64_t layer_heads(const EncoderClassifier& model, int64_t layer) { return params_of(model, layer).heads; }

torch::Tensor head_weight_norms(const EncoderClassifier& model, int64_t layer) {
  const torch::NoGradGuard no_grad;
  const head_params p = params_of(model, layer);
  const auto w = p.qkv_weight.detach().to(torch::kCPU, torch::kDouble).view({3, p.heads, p.head_dim, p.hidden});
  const auto o = p.out_weight.detach().to(torch::kCPU, torch::kDouble).view({p.hidden, p.heads, p.head_dim});
  return (w.pow(2).sum(std::vector<int64_t>{0, 2, 3}) + o.pow(2).sum(std::vector<int64_t>{0, 2})).sqrt();  // (h)
}

std::vector<int64_t> heads_by_weight_norm(const torch::Tensor& norms, int64_t k) {
  const auto n = norms.to(torch::kCPU, torch::kDouble).contiguous();
  TORCH_CHECK(n.dim() == 1 && k >= 0 && k <= n.numel(), "heads_by_weight_norm: ", k, " of ", n.numel(), " heads");
  std::vector<int64_t> order(static_cast<size_t>(n.numel()));
  std::iota(order.begin(), order.end(), 0);
  const double* v = n.data_ptr<double>();
  std::stable_sort(order.begin(), order.end(), [v](int64_t a, int64_t b) { return v[a] < v[b]; });
  std::vector<int64_t> removed(order.begin(), order.begin() + k);
  std::sort(removed.begin(), removed.end());
  return removed;
}

void remove_heads(EncoderClassifier& model, int64_t layer, const std::vector<int64_t>& removed) {
  const head_params p = params_of(model, layer);
  std::vector<int64_t> keep;
  for (int64_t h = 0; h < p.heads; ++h)
    if (std::find(removed.begin(), removed.end(), h) == removed.end()) keep.push_back(h);
  for (int64_t h : removed) TORCH_CHECK(h >= 0 && h < p.heads, "remove_heads: head ", h, " out of [0, ", p.heads, ")");
  TORCH_CHECK(keep.size() + removed.size() == static_cast<size_t>(p.heads), "remove_heads: a head listed twice");
  TORCH_CHECK(!keep.empty(), "remove_heads: at least one head must stay in layer ", layer);
  const torch::NoGradGuard no_grad;
  const int64_t k = static_cast<int64_t>(keep.size()), d = p.head_dim, hidden = p.hidden;
  const auto kept = torch::tensor(keep, torch::TensorOptions().dtype(torch::kLong).device(p.qkv_weight.device()));
  // (3, h, d, H) → (3, k, d, H): Q, K and V rows of the kept heads, in that order.
  const auto w = p.qkv_weight.view({3, p.heads, d, hidden}).index_select(1, kept).reshape({3 * k * d, hidden});
  const auto b = p.qkv_bias.view({3, p.heads, d}).index_select(1, kept).reshape({3 * k * d});
  // (H, h, d) → (H, k, d): the output projection's columns of the kept heads. Its bias stays.
  const auto o = p.out_weight.view({hidden, p.heads, d}).index_select(1, kept).reshape({hidden, k * d});
  // In place: the Linear modules hold these very tensors, and now see the smaller shapes.
  p.qkv_weight.set_(w.contiguous());
  p.qkv_bias.set_(b.contiguous());
  p.out_weight.set_(o.contiguous());
}

void mask_heads(EncoderClassifier& model, int64_t layer, const std::vector<int64_t>& removed) {
  const head_params p = params_of(model, layer);
  const torch::NoGradGuard no_grad;
  const auto columns = p.out_weight.view({p.hidden, p.heads, p.head_dim});
  for (int64_t h : removed) columns.select(1, h).zero_();
}

std::vector<std::vector<int64_t>> prune_heads_by_weight_norm(EncoderClassifier& model, int64_t k) {
  std::vector<std::vector<int64_t>> removed;
  for (int64_t l = 0; l < model->num_layers(); ++l) removed.push_back(heads_by_weight_norm(head_weight_norms(model, l), k));
  for (int64_t l = 0; l < model->num_layers(); ++l) remove_heads(model, l, removed[static_cast<size_t>(l)]);
  return removed;
}

}  // namespace attnbench
