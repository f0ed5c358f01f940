// Issue 30: each rank of a GPU run on its own GPU. process_device is the one place a rank's device
// is decided (run_command's device guard, the NCCL group's bound device, the runner's memory cap
// and statistics, the distributed executor's replica); pure, so it runs without a GPU.
#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "core/process_device.hpp"

using namespace attnbench;

TEST_CASE("process_device: a rank of a GPU run uses cuda:LOCAL_RANK, not cuda:0", "[core]") {
  const torch::Device gpu0(torch::kCUDA, 0);
  CHECK(process_device(gpu0, 0, 4) == gpu0);
  CHECK(process_device(gpu0, 3, 4) == torch::Device(torch::kCUDA, 3));
  CHECK(process_device(torch::Device(torch::kCUDA, 1), 2, 4) == torch::Device(torch::kCUDA, 2));
  // No ranks: the run's device as configured.
  CHECK(process_device(torch::Device(torch::kCUDA, 1), std::nullopt, 4) == torch::Device(torch::kCUDA, 1));
  // CPU runs: every rank on the CPU, whatever its local rank.
  CHECK(process_device(torch::kCPU, 5, 0) == torch::Device(torch::kCPU));
}

TEST_CASE("process_device: a local rank without a GPU of its own is refused, naming LOCAL_RANK", "[core]") {
  const torch::Device gpu0(torch::kCUDA, 0);
  CHECK_THROWS_AS(process_device(gpu0, 1, 1), input_error);
  CHECK_THROWS_WITH(process_device(gpu0, 2, 2),
                    Catch::Contains("LOCAL_RANK") && Catch::Contains("local rank 2 has no GPU of its own") &&
                        Catch::Contains("sees 2 CUDA devices"));
  CHECK_THROWS_WITH(process_device(gpu0, -1, 1), Catch::Contains("local rank -1"));
}
