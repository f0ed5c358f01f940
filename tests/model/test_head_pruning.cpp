// model/head_pruning.hpp: heads sliced off a copy compute exactly what the unpruned model computes
// with those heads' outputs zeroed (every attention core, padded batches), the weight-norm choice,
// and the FLOP count of the pruned shape.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include <ATen/CPUGeneratorImpl.h>

#include "model/encoder.hpp"
#include "model/flops.hpp"
#include "model/head_pruning.hpp"
#include "test_support.hpp"
#include "tensor_support.hpp"

using namespace attnbench;

namespace {

using testing::rel_l2;

// 2 layers, hidden 96, 6 heads of 16: small, and a head_dim no fast path is tuned for.
model_config six_heads() {
  model_config m = testing::tiny_model();
  m.hidden = 96;
  m.heads = 6;
  m.ffn = 192;
  m.vocab_size = 1000;
  m.max_positions = 64;
  return m;
}

EncoderClassifier seeded(const model_config& m) {
  EncoderClassifier model(m);
  model->init_weights(m.seed);
  model->eval();
  return model;
}

struct inputs {
  torch::Tensor ids, mask;
};

// Three samples of 20 tokens, the last right-padded to 9 real ones.
inputs batch_of_three() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  inputs in;
  in.ids = at::randint(1, 1000, {3, 20}, gen, torch::kLong);
  in.mask = torch::ones({3, 20}, torch::kLong);
  in.mask.index_put_({2, torch::indexing::Slice(9, 20)}, 0);
  return in;
}

attention_settings core(attention_kind kind) {
  attention_settings how;
  how.kind = kind;
  return how;
}

}  // namespace

TEST_CASE("pruned heads: equal to the unpruned model with those heads' outputs zeroed, on every core",
          "[model][pruning]") {
  torch::InferenceMode guard;
  const model_config m = six_heads();
  EncoderClassifier base = seeded(m);
  const std::vector<std::vector<int64_t>> removed{{1, 4}, {0, 2, 5}};  // uneven on purpose
  // Pruning must keep as many heads per layer for the FLOP count, but the model itself need not.
  EncoderClassifier pruned = replicate(base, torch::kCPU);
  EncoderClassifier masked = replicate(base, torch::kCPU);
  for (int64_t l = 0; l < 2; ++l) {
    remove_heads(pruned, l, removed[static_cast<size_t>(l)]);
    mask_heads(masked, l, removed[static_cast<size_t>(l)]);
  }
  CHECK(layer_heads(pruned, 0) == 4);
  CHECK(layer_heads(pruned, 1) == 3);
  CHECK(layer_heads(masked, 0) == 6);
  // Fewer parameters: per removed head 3·d·H + 3·d (QKV) and d·H (output columns).
  CHECK(parameter_count(*base) - parameter_count(*pruned) == 5 * (4 * 16 * 96 + 3 * 16));
  const inputs in = batch_of_three();
  for (auto kind : {attention_kind::naive, attention_kind::sdpa, attention_kind::custom}) {
    INFO("attention " << to_string(kind));
    pruned->set_attention(core(kind));
    masked->set_attention(core(kind));
    for (const bool padded : {false, true}) {
      INFO("padded " << padded);
      const auto mask = padded ? in.mask : torch::Tensor();
      const auto ref = masked->forward(in.ids, mask);
      const auto out = pruned->forward(in.ids, mask);
      REQUIRE(out.sizes() == ref.sizes());
      CHECK(rel_l2(out, ref) < 1e-5);  // fp32: only the summation order differs
    }
  }
  // Removing heads changes the function (the reference is not the unpruned model itself).
  CHECK(rel_l2(pruned->forward(in.ids, in.mask), base->forward(in.ids, in.mask)) > 1e-3);
}

TEST_CASE("pruned heads: the attention cores agree with naive at heads × head_dim < hidden",
          "[model][pruning][attention]") {
  torch::InferenceMode guard;
  EncoderClassifier model = seeded(six_heads());
  for (int64_t l = 0; l < 2; ++l) remove_heads(model, l, {0, 3, 5});  // 3 heads of 16: width 48 < hidden 96
  const inputs in = batch_of_three();
  model->set_attention(core(attention_kind::naive));
  const auto ref = model->forward(in.ids, in.mask);
  for (auto kind : {attention_kind::sdpa, attention_kind::custom}) {
    INFO("attention " << to_string(kind));
    model->set_attention(core(kind));
    CHECK(rel_l2(model->forward(in.ids, in.mask), ref) < 1e-5);
  }
}

TEST_CASE("pruned heads: weight-norm ranks heads by their Q, K, V rows and output columns", "[model][pruning]") {
  CHECK(heads_by_weight_norm(torch::tensor({3.0, 1.0, 2.0, 0.5}), 2) == std::vector<int64_t>{1, 3});
  CHECK(heads_by_weight_norm(torch::tensor({1.0, 1.0, 1.0}), 2) == std::vector<int64_t>{0, 1});  // ties: lower index
  CHECK(heads_by_weight_norm(torch::tensor({1.0, 2.0}), 0).empty());
  CHECK_THROWS(heads_by_weight_norm(torch::tensor({1.0, 2.0}), 3));

  torch::InferenceMode guard;
  const model_config m = six_heads();
  EncoderClassifier model = seeded(m);
  const auto params = model->named_parameters(true);
  {
    // Layer 0: head 2's output columns and head 5's value rows shrunk; layer 1: head 3's query rows.
    const torch::NoGradGuard no_grad;
    params["layers.0.attention.out_proj.weight"].view({96, 6, 16}).select(1, 2).mul_(0.1);
    params["layers.0.attention.qkv.weight"].view({3, 6, 16, 96})[2][5].mul_(0.01);
    params["layers.1.attention.qkv.weight"].view({3, 6, 16, 96})[0][3].mul_(0.01);
  }
  const auto norms = head_weight_norms(model, 0);
  REQUIRE(norms.numel() == 6);
  // The norm is the four matrices' slices together: recomputed from the parameters directly.
  const auto w = params["layers.0.attention.qkv.weight"].to(torch::kDouble).view({3, 6, 16, 96});
  const auto o = params["layers.0.attention.out_proj.weight"].to(torch::kDouble).view({96, 6, 16});
  const double head1 = std::sqrt(w.select(1, 1).pow(2).sum().item<double>() + o.select(1, 1).pow(2).sum().item<double>());
  CHECK(norms[1].item<double>() == Approx(head1));
  const auto removed = prune_heads_by_weight_norm(model, 2);
  REQUIRE(removed.size() == 2);
  CHECK(removed[0] == std::vector<int64_t>{2, 5});
  CHECK(removed[1].size() == 2);
  CHECK(std::count(removed[1].begin(), removed[1].end(), 3) == 1);
  CHECK(layer_heads(model, 0) == 4);
  CHECK(layer_heads(model, 1) == 4);
  CHECK_THROWS_WITH(remove_heads(model, 0, {0, 1, 2, 3}), Catch::Contains("at least one head must stay"));
}

TEST_CASE("forward FLOPs count the pruned heads' shape", "[model][pruning]") {
  auto m = testing::tiny_model();  // L=2, H=128, 2 heads of 64, F=512, C=3
  m.heads = 4;                     // 4 heads of 32
  const double s = 16;
  // 1 head of 4 pruned: attention width A = 3 × 32 = 96.
  const double a = 96;
  const double per_layer = 2 * s * 128 * 3 * a + 4 * s * s * a + 2 * s * a * 128 + 4 * s * 128 * 512;
  const double head = 2.0 * 128 * 128 + 2.0 * 128 * 3;
  CHECK(forward_flops(m, 2, 16, 1) == Approx(2 * (2 * per_layer + head)));
  CHECK(forward_flops(m, 2, 16, 0) == Approx(forward_flops(m, 2, 16)));
  CHECK(forward_flops(m, 2, 16, 1) < forward_flops(m, 2, 16));
  // Real keys only: the pruned attention over the second row's 5 keys.
  const double skipped = 2 * 4 * s * (16 - 5) * a;
  CHECK(forward_flops_real_keys(m, {16, 5}, 16, 1) == Approx(forward_flops(m, 2, 16, 1) - skipped));
}
