// Where a run's weights live (issue 16, part 1): the host model, and the whole model on the
// device only when a variant runs it whole. On the CPU they are one model.
#include "runner/model_placement.hpp"

#include <catch2/catch.hpp>

#include <torch/cuda.h>

#include "test_support.hpp"

using namespace attnbench;

TEST_CASE("on the CPU the host model is the device model: nothing is copied", "[runner]") {
  torch::InferenceMode inference;
  EncoderClassifier host(testing::tiny_model());
  model_placement placement(host, torch::kCPU, /*host_bytes=*/12345);
  CHECK(placement.placed());
  CHECK(placement.on_device().get() == host.get());
  CHECK(placement.device_bytes() == 12345);  // what building the host model allocated
  CHECK(device_allocated_bytes(torch::kCPU) == -1);
}

TEST_CASE("on CUDA the whole model is placed on the first call only, measured", "[runner][gpu]") {
  if (!torch::cuda::is_available()) {
    testing::skip_test(testing::no_gpu);
    return;
  }
  torch::InferenceMode inference;
  EncoderClassifier host(testing::tiny_model());
  host->init_weights(1);
  host->eval();
  const torch::Device gpu(torch::kCUDA, 0);
  model_placement placement(host, gpu, -1);
  CHECK(!placement.placed());
  CHECK(placement.device_bytes() == -1);
  const EncoderClassifier& whole = placement.on_device();
  CHECK(placement.placed());
  CHECK(whole->parameters().front().device() == gpu);
  CHECK(host->parameters().front().device().is_cpu());  // the host model stays on the host
  int64_t bytes = 0;
  for (const auto& p : whole->parameters()) bytes += static_cast<int64_t>(p.nbytes());
  CHECK(placement.device_bytes() >= bytes);
  CHECK(placement.device_bytes() < bytes + 1024 * 1024);  // the allocator's rounding, nothing more
  CHECK(placement.on_device().get() == whole.get());      // placed once
}
