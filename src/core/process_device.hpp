// The device one process of a run uses (issue 30). Defined in core/device.cpp.
#pragma once

#include <optional>

#include <torch/torch.h>

namespace attnbench {

// The device one process of a run uses: the run's device, except on a GPU run with ranks
// (`attnbench launch`), where rank r of a host uses cuda:LOCAL_RANK (its NCCL collectives, device
// guard, memory cap and peak statistics too, not GPU 0's). `cuda_devices`: the GPUs this process
// sees. A local rank without a GPU of its own is an input_error naming LOCAL_RANK. Pure: tests
// inject the count.
torch::Device process_device(torch::Device run_device, std::optional<int> local_rank, int cuda_devices);

}  // namespace attnbench
