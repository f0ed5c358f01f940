// Activation checkpointing against the same model without it: the segments of each policy, the
// gradients in fp32 (every policy), under autocast, with dropout, and the forward in inference.
#include <catch2/catch.hpp>

#include "model/encoder.hpp"
#include "techniques/checkpointing.hpp"
#include "techniques/precision.hpp"
#include "test_support.hpp"
#include "tensor_support.hpp"

using namespace attnbench;

namespace {

// Four small layers: enough for every policy to make a difference.
model_config small_model() {
  model_config m = testing::tiny_model();
  m.layers = 4;
  m.hidden = 32;
  m.heads = 2;
  m.ffn = 64;
  m.vocab_size = 100;
  m.max_positions = 32;
  return m;
}

checkpointing_config policy(checkpoint_policy p, int64_t every = 0) { return {p, every}; }

EncoderClassifier make_model(const model_config& m, const checkpointing_config& c, double dropout) {
  EncoderClassifier model(m);
  model->init_weights(m.seed);
  model->set_dropout(dropout);
  if (dropout > 0)
    model->train();
  else
    model->eval();
  apply_checkpointing(model, c);
  return model;
}

struct step_result {
  double loss = 0;
  torch::Tensor grads;   // every parameter's gradient, flattened, float64
  double next_draw = 0;  // the CPU generator's next number after backward
  bool all_grads = true;
};

// One forward + backward on a fixed padded batch (2 samples, 16 and 11 real tokens).
step_result step(EncoderClassifier& model, precision_kind precision, uint64_t seed,
                 bool backward_inside_autocast) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/3);
  const auto ids =
      at::randint(1, model->config().vocab_size, {2, 16}, gen, torch::TensorOptions(torch::kLong));
  auto mask = torch::ones({2, 16}, torch::kBool);
  mask.index_put_({1, torch::indexing::Slice(11)}, false);
  const auto labels = torch::tensor({0, 2}, torch::kLong);
  torch::manual_seed(seed);
  step_result r;
  torch::Tensor loss;
  {
    const autocast_scope amp(autocast_dtype(precision), torch::kCPU);
    loss = torch::nn::functional::cross_entropy(model->forward(ids, mask), labels);
    if (backward_inside_autocast) loss.backward();
  }
  if (!backward_inside_autocast) loss.backward();
  r.loss = loss.item<double>();
  r.next_draw = torch::rand({1}).item<double>();
  std::vector<torch::Tensor> parts;
  for (const auto& p : model->parameters()) {
    if (!p.grad().defined()) {
      r.all_grads = false;
      continue;
    }
    parts.push_back(p.grad().to(torch::kDouble).reshape(-1));
  }
  r.grads = torch::cat(parts);
  return r;
}

using testing::rel_l2;

}  // namespace

TEST_CASE("checkpoint segments follow the policy", "[techniques]") {
  using segs = std::vector<std::pair<int64_t, int64_t>>;
  const auto of = [](const checkpointing_config& c, int64_t layers) {
    segs out;
    for (const auto& s : checkpoint_segments(c, layers)) out.emplace_back(s.begin, s.end);
    return out;
  };
  CHECK(of(policy(checkpoint_policy::none), 4).empty());
  CHECK(of(policy(checkpoint_policy::every, 1), 3) == segs{{0, 1}, {1, 2}, {2, 3}});
  CHECK(of(policy(checkpoint_policy::every, 3), 4) == segs{{0, 3}, {3, 4}});
  CHECK(of(policy(checkpoint_policy::every, 4), 4) == segs{{0, 4}});
  CHECK(of(policy(checkpoint_policy::sqrt), 4) == segs{{0, 2}, {2, 4}});
  CHECK(of(policy(checkpoint_policy::sqrt), 6) == segs{{0, 2}, {2, 4}, {4, 6}});
  CHECK(of(policy(checkpoint_policy::sqrt), 12) == segs{{0, 3}, {3, 6}, {6, 9}, {9, 12}});
  CHECK(of(policy(checkpoint_policy::sqrt), 1) == segs{{0, 1}});
  CHECK(describe_checkpointing(policy(checkpoint_policy::sqrt), 4) == "sqrt: 2 segments of 2 layers");
  CHECK(describe_checkpointing(policy(checkpoint_policy::every, 1), 4) == "every 1 layer: 4 segments");
  CHECK(describe_checkpointing(policy(checkpoint_policy::none), 4) == "none");
}

TEST_CASE("checkpointing gives the same gradients in fp32 for every policy", "[techniques]") {
  const model_config m = small_model();
  const auto c = GENERATE(policy(checkpoint_policy::every, 1), policy(checkpoint_policy::every, 2),
                          policy(checkpoint_policy::every, 3), policy(checkpoint_policy::every, 4),
                          policy(checkpoint_policy::sqrt));
  const auto kind = GENERATE(attention_kind::sdpa, attention_kind::naive);
  INFO("policy " << to_string(c.policy) << " " << c.every << ", attention " << to_string(kind));
  auto plain = make_model(m, policy(checkpoint_policy::none), 0);
  auto ckpt = make_model(m, c, 0);
  plain->set_attention({kind, sdpa_backend::auto_select, false, {}});
  ckpt->set_attention({kind, sdpa_backend::auto_select, false, {}});
  const auto ref = step(plain, precision_kind::fp32, 1, false);
  const auto got = step(ckpt, precision_kind::fp32, 1, false);
  REQUIRE(ref.all_grads);
  REQUIRE(got.all_grads);  // every layer parameter got its gradient through the Function
  REQUIRE(got.grads.numel() == ref.grads.numel());
  CHECK(got.loss == Approx(ref.loss).epsilon(1e-6));
  CHECK(rel_l2(got.grads, ref.grads) <= 1e-6);
  CHECK(ref.grads.abs().max().item<double>() > 0);
}

TEST_CASE("checkpointing recomputes under the forward's autocast", "[techniques]") {
  const model_config m = small_model();
  const bool inside = GENERATE(false, true);
  INFO("backward " << (inside ? "inside" : "after") << " the autocast scope");
  auto plain = make_model(m, policy(checkpoint_policy::none), 0);
  auto ckpt = make_model(m, policy(checkpoint_policy::every, 1), 0);
  const auto ref = step(plain, precision_kind::amp_bf16, 1, inside);
  const auto got = step(ckpt, precision_kind::amp_bf16, 1, inside);
  REQUIRE(got.all_grads);
  // A recompute in fp32 instead of bf16 moves these gradients by ~1e-4 (measured).
  CHECK(rel_l2(got.grads, ref.grads) <= 1e-6);
  // ... and bf16 really differs from fp32, so the bound above can tell the two apart.
  auto fp32 = make_model(m, policy(checkpoint_policy::none), 0);
  CHECK(rel_l2(step(fp32, precision_kind::fp32, 1, inside).grads, ref.grads) > 1e-4);
}

TEST_CASE("checkpointing with dropout draws the same masks", "[techniques]") {
  const model_config m = small_model();
  const auto c = GENERATE(policy(checkpoint_policy::every, 1), policy(checkpoint_policy::sqrt));
  auto plain = make_model(m, policy(checkpoint_policy::none), 0.1);
  auto ckpt = make_model(m, c, 0.1);
  const auto ref = step(plain, precision_kind::fp32, 5, false);
  const auto got = step(ckpt, precision_kind::fp32, 5, false);
  REQUIRE(got.all_grads);
  CHECK(got.loss == Approx(ref.loss).epsilon(1e-6));
  CHECK(rel_l2(got.grads, ref.grads) <= 1e-6);
  // The generator continues where it would have without checkpointing.
  CHECK(got.next_draw == ref.next_draw);
  // Dropout is on: another seed gives other gradients.
  auto other = make_model(m, policy(checkpoint_policy::none), 0.1);
  CHECK(rel_l2(step(other, precision_kind::fp32, 6, false).grads, ref.grads) > 1e-3);
}

TEST_CASE("checkpointing changes nothing in inference", "[techniques]") {
  const model_config m = small_model();
  auto plain = make_model(m, policy(checkpoint_policy::none), 0);
  auto ckpt = make_model(m, policy(checkpoint_policy::sqrt), 0);
  const torch::InferenceMode inference;
  auto ids = torch::arange(1, 17, torch::kLong).reshape({2, 8});
  CHECK(torch::equal(ckpt->forward(ids, torch::Tensor()), plain->forward(ids, torch::Tensor())));
}
