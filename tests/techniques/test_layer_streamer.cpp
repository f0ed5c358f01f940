// layer_streamer's teardown on CUDA (issue 30): a streamer destroyed while its copies are still in
// flight (a forward that threw mid-copy) must not free slot memory the copy stream still writes.
// The slots are recorded on the copy stream and the destructor waits for it; without either, the
// caching allocator could hand a slot's block straight to the next tensor on the compute stream
// while a copy still lands in it. Skipped without a GPU.
#include "techniques/layer_streamer.hpp"

#include <catch2/catch.hpp>

#include <torch/cuda.h>

#include "model/encoder.hpp"
#include "test_support.hpp"

using namespace attnbench;

TEST_CASE("layer_streamer: destroyed mid-copy, its slots are never reused under a copy", "[offload][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::NoGradGuard no_grad;
  const torch::Device gpu(torch::kCUDA, 0);
  auto m = testing::tiny_model();
  m.layers = 4;
  m.hidden = 1024;  // 12.6 M parameters a layer, 50 MB in fp32: copies long enough to be in flight
  m.heads = 16;
  m.ffn = 4096;
  std::vector<std::vector<torch::Tensor>> host;
  for (int64_t i = 0; i < m.layers; ++i) {
    EncoderLayer layer(m);
    std::vector<torch::Tensor> params;
    for (const auto& p : layer->parameters()) params.push_back(p.detach().clone().pin_memory());
    host.push_back(std::move(params));
  }
  for (int round = 0; round < 5; ++round) {
    {
      layer_streamer streamer(m, host, gpu, /*prefetch=*/1, /*pinned=*/true);
      streamer.load(0);
      streamer.load(1);  // both copies queued; the streamer goes before they land
    }
    // Tensors shaped like both slots' parameters, on the compute stream: without the fix these
    // can take the slots' freed blocks while the copies still write them.
    std::vector<torch::Tensor> fresh;
    for (int slot = 0; slot < 2; ++slot)
      for (const auto& p : host.front())
        fresh.push_back(torch::full(p.sizes(), 7.0f, torch::TensorOptions().device(gpu)));
    torch::cuda::synchronize();
    for (const auto& t : fresh) CHECK(torch::all(t == 7.0f).item<bool>());
  }
}
