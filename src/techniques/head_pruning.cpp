// "pruning": {"heads": K, "by": "weight-norm"}: attention heads removed from a copy of the model,
// K per layer, physically: the removed heads' rows of the fused QKV projection and their columns
// of the output projection are sliced away (SelfAttentionImpl::prune_heads), so Q·Kᵀ, softmax, P·V
// and both projections compute fewer heads (model/head_pruning.hpp). Masking heads out would
// compute as much as before.
//
//   "heads"  an integer K, 0 ≤ K < model.heads (at least one head stays in every layer), or a
//            fraction 0 < f < 1 of the model's heads, rounded to the nearest integer (0.25 of
//            minilm's 12: 3);
//   "by"     which heads go: "weight-norm" (the default), in every layer the K heads whose weights
//            are smallest: the Frobenius norm of a head's rows of W_q, W_k, W_v and its columns of
//            W_o together (ties: the lower index goes first).
//
// Afterwards heads × head_dim < hidden: every attention core runs it (the cores see (B, h, S, d)).
// The FLOP count follows the pruned shape (variant_plan::heads), so GFLOP/s is the work done;
// the share of FLOPs saved is the metric `pruned_flops_saved`. A pruned model computes a different
// function: on random weights its check FAILs against the unpruned baseline, as it should; on a
// real model (configs/pruning-minilm-real.json) the cosine similarity of its embeddings to the
// unpruned ones is the trade-off. Offline and server scenarios, fp32 or autocast, not with offload,
// parallel, pipeline or a TorchScript model.
//
// The whole technique is this file: its config block (config/technique_catalog.hpp), its executor
// (techniques/registry.hpp) and its metrics (report/metric.hpp).
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/technique_catalog.hpp"
#include "model/encoder.hpp"
#include "model/head_pruning.hpp"
#include "techniques/model_copy_executor.hpp"
#include "techniques/registry.hpp"

namespace attnbench {
namespace {

constexpr const char* technique_name = "head-pruning";
constexpr const char* weight_norm = "weight-norm";

// Heads removed per layer: K as given, or the fraction of the model's heads, rounded.
int64_t heads_to_remove(const nlohmann::json& block, int64_t heads) {
  const auto& h = block.at("heads");
  if (h.is_number_integer()) return h.get<int64_t>();
  return static_cast<int64_t>(std::llround(h.get<double>() * static_cast<double>(heads)));
}

std::vector<std::pair<std::string, std::string>> check_block(const nlohmann::ordered_json& block,
                                                             const model_config& model) {
  std::vector<std::pair<std::string, std::string>> problems;
  for (const auto& item : block.items())
    if (item.key() != "heads" && item.key() != "by")
      problems.emplace_back(item.key(), "unknown key; pruning takes \"heads\" and \"by\"");
  if (!block.contains("heads")) {
    problems.emplace_back("heads", "required: how many heads to remove per layer (an integer K, or a fraction "
                                   "0 < f < 1 of the model's heads)");
  } else {
    const auto& h = block["heads"];
    const int64_t heads = model.heads;
    if (h.is_number_integer()) {
      const int64_t k = h.get<int64_t>();
      if (k < 0 || (heads > 0 && k >= heads))
        problems.emplace_back("heads", fmt::format("must be >= 0 and < the model's {} heads (one head must stay in "
                                                   "every layer); got {}",
                                                   heads, h.dump()));
    } else if (h.is_number()) {
      const double f = h.get<double>();
      if (!(f > 0 && f < 1))
        problems.emplace_back("heads", fmt::format("a fraction of the heads must be > 0 and < 1; got {} (an integer "
                                                   "counts heads)",
                                                   h.dump()));
      else if (heads > 0 && heads_to_remove(nlohmann::json{{"heads", f}}, heads) >= heads)
        problems.emplace_back("heads", fmt::format("{} of the model's {} heads rounds to all of them; one head must "
                                                   "stay in every layer",
                                                   h.dump(), heads));
    } else {
      problems.emplace_back("heads", fmt::format("expected an integer (heads per layer) or a fraction of the "
                                                 "heads; got {}",
                                                 h.dump()));
    }
  }
  if (block.contains("by") && block["by"] != weight_norm)
    problems.emplace_back("by", fmt::format("expected \"{}\"; got {}", weight_norm, block["by"].dump()));
  return problems;
}

const nlohmann::json& block_of(const variant_config& v) { return v.techniques.at("pruning"); }

using removed_heads = std::vector<std::vector<int64_t>>;

class pruning_executor : public model_copy_executor {
 public:
  pruning_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                   const variant_plan& p, bool causal)
      : pruning_executor(model, device, v, p, causal, std::make_shared<removed_heads>()) {}

 protected:
  void do_annotate(variant_result& r) override {
    const removed_heads& removed = *removed_;
    const int64_t k = removed.empty() ? 0 : static_cast<int64_t>(removed.front().size());
    set_metric(r.metrics, {"pruned_heads", static_cast<double>(k), metric_unit::count, metric_direction::neither,
                           technique_name, fmt::format("attention heads removed per layer, of {}", heads_), ""});
    set_metric(r.metrics, {"pruned_head_share", static_cast<double>(k) / static_cast<double>(heads_),
                           metric_unit::share, metric_direction::neither, technique_name,
                           "share of the attention heads removed", ""});
    set_metric(r.metrics, {"pruned_parameters", static_cast<double>(parameters_ - pruned_parameters_),
                           metric_unit::count, metric_direction::neither, technique_name,
                           fmt::format("parameters removed (of {})", parameters_), ""});
    set_metric(r.metrics, {"prune_ms", prepare_ms(), metric_unit::ms, metric_direction::lower_is_better,
                           technique_name,
                           "one-off time to copy the model, rank and slice its heads, before any pass (not in the "
                           "timed passes)",
                           ""});
    std::vector<std::string> layers;
    for (size_t l = 0; l < removed.size(); ++l)
      layers.push_back(fmt::format("layer {}: [{}]", l, fmt::join(removed[l], ", ")));
    r.notes.push_back(fmt::format("{}: heads removed by {} (0-based, of {} per layer): {}", r.name, weight_norm,
                                  heads_, fmt::join(layers, "; ")));
  }

 private:
  // The copy is pruned in the base's constructor, before this class's members exist: the removed
  // heads go into a holder made first.
  pruning_executor(const EncoderClassifier& model, torch::Device device, const variant_config& v,
                   const variant_plan& p, bool causal, std::shared_ptr<removed_heads> removed)
      : model_copy_executor(model, device, v, p, causal,
                            [removed, k = heads_to_remove(block_of(v), model->config().heads)](
                                EncoderClassifier& copy) { *removed = prune_heads_by_weight_norm(copy, k); }),
        removed_(std::move(removed)),
        heads_(model->config().heads),
        parameters_(parameter_count(*model.ptr())),
        pruned_parameters_(parameter_count(*copy().ptr())) {}

  std::shared_ptr<removed_heads> removed_;
  int64_t heads_ = 0;
  int64_t parameters_ = 0;
  int64_t pruned_parameters_ = 0;
};

class head_pruning : public technique {
 public:
  std::string name() const override { return technique_name; }
  // The core precision as planned; the FLOP count follows the heads its copy keeps.
  void plan(const config& cfg, const variant_config& v, torch::Device, variant_plan& p) const override {
    const auto& h = block_of(v).at("heads");
    p.description = fmt::format(
        "{} attention head{} per layer removed by {} (Q/K/V rows and output columns sliced "
        "off a copy)",
        h.dump(), h == 1 ? "" : "s", weight_norm);
    p.heads = cfg.model.heads - heads_to_remove(block_of(v), cfg.model.heads);
  }
  std::unique_ptr<executor_base> make_executor(EncoderClassifier model, torch::Device device,
                                               const variant_config& v, const variant_plan& p,
                                               bool causal) const override {
    return std::make_unique<pruning_executor>(model, device, v, p, causal);
  }
};

const bool registered = [] {
  technique_option o;
  o.key = "pruning";
  o.value = "pruning";
  o.technique = technique_name;
  o.summary = "runs a copy of the model with K attention heads per layer removed (Q/K/V rows and output columns "
              "sliced) by weight norm";
  o.scenarios = {"offline", "server"};
  o.excludes = {"offload", "parallel", "pipeline"};
  o.check_block = check_block;
  register_technique_option(o);
  register_technique(std::make_unique<head_pruning>());
  return true;
}();

}  // namespace
}  // namespace attnbench
