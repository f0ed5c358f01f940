// Offloaded training: the encoder layers' master weights in host memory, streamed into slots for
// the forward and again for the backward, gradients back into the host parameters. On the CPU
// (target "cpu") it must train exactly as the resident model: same losses, gradients and weights
// after AdamW, with the residency bound held. The CUDA path is [gpu], skipped without a GPU.
#include "techniques/offload_trainer.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <torch/cuda.h>

#include "test_support.hpp"
#include "tensor_support.hpp"

using namespace attnbench;

namespace {

model_config four_layers() {
  auto m = testing::tiny_model();
  m.layers = 4;
  return m;
}

variant_config offload_variant(int64_t prefetch, const std::string& target) {
  variant_config v;
  v.name = "offload";
  offload_config o;
  o.prefetch = prefetch;
  o.target = target;
  v.offload = o;
  return v;
}

struct inputs {
  torch::Tensor ids, mask, labels;
};

inputs random_inputs(torch::Device device) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  inputs in;
  in.ids = at::randint(1000, 30000, {3, 16}, gen, torch::kLong).to(device);
  auto mask = torch::ones({3, 16}, torch::kBool);
  mask.index_put_({2, torch::indexing::Slice(9, 16)}, false);
  in.mask = mask.to(device);
  in.labels = torch::tensor({0, 2, 1}, torch::kLong).to(device);
  return in;
}

EncoderClassifier seeded_model(torch::Device device, double dropout) {
  EncoderClassifier m(four_layers());
  m->init_weights(7);
  m->set_dropout(dropout);
  if (dropout > 0)
    m->train();
  else
    m->eval();
  m->to(device);
  return m;
}

// Two AdamW steps on the same batch from the same seed; the losses of both steps.
std::vector<double> train_two_steps(EncoderClassifier& model, const inputs& in) {
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(1e-3).weight_decay(0.01));
  torch::manual_seed(3);
  std::vector<double> losses;
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad(/*set_to_none=*/false);
    auto loss = torch::nn::functional::cross_entropy(model->forward(in.ids, in.mask), in.labels);
    loss.backward();
    opt.step();
    losses.push_back(loss.item<double>());
  }
  return losses;
}

using testing::rel_l2;

std::vector<std::string> schedule(std::initializer_list<const char*> steps) {
  return {steps.begin(), steps.end()};
}

}  // namespace

TEST_CASE("offloaded training on the CPU: the resident model's losses, gradients and weights", "[offload]") {
  const torch::Device cpu(torch::kCPU);
  const inputs in = random_inputs(cpu);
  for (const double dropout : {0.0, 0.1}) {
    for (const int64_t prefetch : {0, 1}) {
      INFO("dropout " << dropout << ", prefetch " << prefetch);
      EncoderClassifier plain = seeded_model(cpu, dropout);
      EncoderClassifier streamed = seeded_model(cpu, dropout);
      offload_trainer trainer(streamed, cpu, offload_variant(prefetch, "cpu"));

      const auto expected = train_two_steps(plain, in);
      CHECK(train_two_steps(streamed, in) == expected);
      const auto a = plain->parameters(), b = streamed->parameters();
      REQUIRE(a.size() == b.size());
      for (size_t k = 0; k < a.size(); ++k) {
        INFO("parameter " << k);
        CHECK(b[k].device().is_cpu());
        CHECK(torch::equal(b[k].grad(), a[k].grad()));  // the last step's
        CHECK(torch::equal(b[k], a[k]));                // after AdamW on the host parameters
      }
      CHECK(trainer.steps() == 2);
      CHECK(trainer.resident_bound() == prefetch + 1);
      CHECK(trainer.max_resident_layers() == prefetch + 1);
      if (prefetch == 1)
        CHECK(trainer.last_schedule() ==
              schedule({"load 0", "load 1", "run 0", "load 2", "run 1", "load 3", "run 2",
                        "run 3",  // backward, in reverse
                        "load 3", "load 2", "grad 3", "load 1", "grad 2", "load 0", "grad 1", "grad 0"}));
      else
        CHECK(trainer.last_schedule() ==
              schedule({"load 0", "run 0", "load 1", "run 1", "load 2", "run 2", "load 3", "run 3", "load 3",
                        "grad 3", "load 2", "grad 2", "load 1", "grad 1", "load 0", "grad 0"}));
    }
  }
}

TEST_CASE("offloaded training reports forward, backward and gradient bytes and the host optimizer",
          "[offload]") {
  const torch::Device cpu(torch::kCPU);
  const inputs in = random_inputs(cpu);
  EncoderClassifier model = seeded_model(cpu, 0);
  offload_trainer trainer(model, cpu, offload_variant(1, "cpu"));
  train_two_steps(model, in);
  variant_result r;
  r.batches = 5;
  trainer.annotate(r);
  const offload_info& o = r.offload;
  CHECK(o.used);
  CHECK(o.target == "cpu");
  CHECK(o.host_dtype == "fp32");
  CHECK(o.layers == 4);
  CHECK(o.resident_bound == 2);
  CHECK(o.max_resident_layers == 2);
  // Every layer in for the forward and again for the backward, and its gradients back.
  CHECK(o.d2h_bytes_per_pass == 4 * trainer.layer_bytes() * 5);
  CHECK(o.bytes_per_pass == 3 * o.d2h_bytes_per_pass);
  CHECK(o.resident_weight_bytes == o.full_weight_bytes - 2 * trainer.layer_bytes());
  CHECK(o.copy_ms_per_pass > 0);
  CHECK(o.hidden_share == Approx(0).margin(1e-9));  // synchronous copies hide nothing (sums of the same times, rounded apart)
  CHECK(o.optimizer == offload_optimizer_note);
  CHECK(r.notes == std::vector<std::string>{offload_optimizer_note});
  trainer.annotate(r);
  CHECK(r.notes.size() == 1);  // annotating again adds no second note
}

TEST_CASE("offloaded training on CUDA: host master weights, copy stream, the resident model's gradients",
          "[offload][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  const torch::Device gpu(torch::kCUDA);
  const inputs in = random_inputs(gpu);
  EncoderClassifier plain = seeded_model(gpu, 0);
  EncoderClassifier streamed = seeded_model(gpu, 0);
  offload_trainer trainer(streamed, gpu, offload_variant(1, ""));
  for (const auto& p : streamed->layer(0)->parameters()) {
    CHECK(p.device().is_cpu());
    CHECK(p.is_pinned());
  }
  CHECK(streamed->embeddings()->parameters().front().device().is_cuda());

  const auto expected = train_two_steps(plain, in);
  const auto losses = train_two_steps(streamed, in);
  for (size_t s = 0; s < losses.size(); ++s) CHECK(losses[s] == Approx(expected[s]).epsilon(1e-5));
  const auto a = plain->parameters(), b = streamed->parameters();
  for (size_t k = 0; k < a.size(); ++k) {
    INFO("parameter " << k);
    CHECK(rel_l2(b[k].grad(), a[k].grad()) < 1e-4);
    CHECK(rel_l2(b[k], a[k]) < 1e-5);
  }
  CHECK(trainer.max_resident_layers() == 2);
  variant_result r;
  r.batches = 1;
  trainer.annotate(r);
  CHECK(r.offload.pinned);
  CHECK(r.offload.target.rfind("cuda", 0) == 0);
  CHECK(r.offload.copy_ms_per_pass > 0);
  CHECK(r.offload.h2d_gb_per_s > 0);
  CHECK(r.offload.hidden_share >= 0);
  CHECK(r.offload.hidden_share <= 1);
}
