// CPU offloading in the train scenario (ZeRO-Offload's split, for one device): the encoder layers'
// parameters — the master copies the optimizer updates — live in host memory (page-locked on
// CUDA when offload.pinned), and their AdamW state is created there, so the optimizer step on them
// runs on the CPU. Embeddings, pooler and classifier stay on the device with their optimizer state.
//
// Each layer runs as a custom autograd Function on a layer_streamer slot:
//   - forward: the layer's weights are streamed into its slot (the copies of layers up to
//     i + prefetch are issued before layer i computes, as in inference) and the layer runs with
//     grad mode off; only its input is kept, so no graph (and no reference to the slot, which the
//     next layers reuse) outlives the layer;
//   - backward, in reverse layer order: the weights are streamed in again (the copies of layers
//     down to i − prefetch issued before layer i's backward), the layer is run again from its
//     input with grad on (re-entering the forward's autocast state and dropout generator state,
//     see recompute.hpp), and the gradients of its input and of the slot's parameters come from
//     that graph. The parameter gradients are copied back to host memory and returned for the
//     host parameters, so autograd accumulates them into the master parameters' .grad.
// Keeping a layer's weights on the device from its forward to its backward would hold every layer
// at once, above the prefetch + 1 bound; so backward streams them again, and each layer's
// forward runs twice (as with checkpointing every layer): the activations kept are the layer
// inputs. A checkpointing block on top is refused by the config parser.
//
// With offload.target "cpu" (a CPU run) the slots are separate CPU buffers and every copy is
// synchronous: losses, gradients and weights equal the resident model's, and the residency bound
// holds — it tests the mechanism, it is not a speedup.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"

namespace attnbench {

class layer_streamer;

// What the offload variant's report notes about the optimizer.
inline constexpr const char* offload_optimizer_note = "optimizer state in host memory, update on the CPU";

class offload_trainer {
 public:
  // `model` is on `device`. Moves its encoder layers' parameters to host memory (the same
  // parameter tensors: an optimizer built afterwards steps on them there) and makes
  // model->forward() stream them while grad mode is on (and also when it is off, without the
  // autograd Function). Set the model's dropout and train/eval mode before (the slots copy
  // them), and create the optimizer after. The model keeps the streaming state
  // alive; the trainer only reads it.
  offload_trainer(EncoderClassifier& model, torch::Device device, const variant_config& variant);
  ~offload_trainer();
  offload_trainer(const offload_trainer&) = delete;
  offload_trainer& operator=(const offload_trainer&) = delete;

  // The last step's schedule, forward then backward: "load 0", "load 1", "run 0", …, "load 3",
  // "load 2", "grad 3", … (tests read it).
  const std::vector<std::string>& last_schedule() const;
  int64_t max_resident_layers() const;
  int64_t resident_bound() const;
  int64_t layer_bytes() const;
  int64_t steps() const;  // forwards through the layers so far

  // Fills r.offload (r.batches set: per-pass figures are per-step averages times the batches of a
  // pass) and adds the optimizer note to r.notes.
  void annotate(variant_result& r);

  struct state;

 private:
  std::shared_ptr<state> state_;
  offload_config cfg_;
  int64_t resident_bytes_ = 0;  // parameters that stay on the device (embeddings, head)
  int64_t full_bytes_ = 0;      // every parameter of the model
};

}  // namespace attnbench
