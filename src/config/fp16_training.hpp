// Why fp16 training is refused (issue 30), shared by the config parser and precision "amp".
// Torch-free.
#pragma once

#include <string>

namespace attnbench {

// Why the train scenario refuses fp16 autocast (issue 30): attnbench's training step has no loss
// scaler, and without one fp16's range (smallest normal 6.1e-5, subnormals to 6e-8) flushes small
// gradients to zero and large ones overflow, so its gradients would be wrong, not slow. One
// sentence, used by the config parser (explicit "amp-fp16") and by resolve_amp ("amp" on a GPU
// whose tensor cores have fp16 but not bf16).
std::string fp16_training_refusal();

}  // namespace attnbench
