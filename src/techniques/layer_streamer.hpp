// The mechanism under CPU offloading, in inference (offload_executor) and in training
// (offload_trainer): the encoder layers' weights live in host memory and are copied, a layer at a
// time, into one of prefetch + 1 device slots just before the layer computes. A slot is a spare
// EncoderLayer on the device; layer i always uses slot i mod (prefetch + 1), so any prefetch + 1
// consecutive layers — walked forward or backward — hold distinct slots.
//
// On CUDA each copy is issued on a separate copy stream, and events order the two streams: compute
// waits for a slot's copy (wait_for), and a slot is refilled only after the layer that used it has
// run (release). On the CPU (offload.target "cpu") the slots are separate CPU buffers and the
// copies are synchronous: every copy is exposed. Either way at most prefetch + 1 offloaded layers
// are on the device at once: asserted on every load and reported. The slots are recorded on the
// copy stream (record_stream), and the destructor waits for the copy stream, so nothing a copy
// still writes or reads is freed or reused when a forward throws mid-copy (issue 30).
//
// The caller drives the schedule: load() the layers it wants ahead, wait_for() the one it runs,
// release() it once its work is queued.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "model/encoder.hpp"
#include "report/result.hpp"

namespace attnbench {

// The bytes the tensors hold (offload reports' resident and copied bytes).
int64_t bytes_of(const std::vector<torch::Tensor>& ts);

class layer_streamer {
 public:
  // host: per layer, its parameters in host memory in registration order (every layer alike).
  // The streamer keeps these tensors, not copies: in training they are the master parameters,
  // which the optimizer updates in place between steps. `pinned`: they are page-locked (CUDA
  // copies from them are then asynchronous, and to_host returns page-locked tensors too).
  layer_streamer(const model_config& model, std::vector<std::vector<torch::Tensor>> host,
                 torch::Device device, int64_t prefetch, bool pinned);
  // The same for any layer module (a decoder's blocks): make_slot builds one empty layer, built
  // like every host layer (its parameters in the host layers' registration order).
  using slot_factory = std::function<std::shared_ptr<torch::nn::Module>()>;
  layer_streamer(const slot_factory& make_slot, std::vector<std::vector<torch::Tensor>> host, torch::Device device,
                 int64_t prefetch, bool pinned);
  ~layer_streamer();
  layer_streamer(const layer_streamer&) = delete;
  layer_streamer& operator=(const layer_streamer&) = delete;

  // Gives every slot module the dropout probabilities and the train/eval mode of `like` (one of
  // the model's layers); slots start in eval mode with the model config's defaults.
  void match_mode(EncoderLayerImpl& like);

  // Issues the copy of `layer`'s weights into its slot. The slot must be free (released).
  void load(int64_t layer);
  // Makes compute wait for `layer`'s weights (loaded before) and returns the slot module holding
  // them. `what` names the step in the schedule: "run" (forward) or "grad" (backward).
  EncoderLayer wait_for(int64_t layer, const char* what);
  // wait_for for a streamer of any layer module: the slot module, as make_slot built it.
  std::shared_ptr<torch::nn::Module> wait_for_module(int64_t layer, const char* what);
  // `layer`'s work is queued on the compute stream: its slot may be refilled.
  void release(int64_t layer);
  // A new sweep over the layers starts: forgets layers left resident by a sweep an error cut short.
  void forget_resident() { resident_.clear(); }

  // New host tensors holding `device_tensors` (a layer's gradients), page-locked when the host
  // weights are; returns once the copies have landed, so all their time is exposed. Undefined
  // tensors stay undefined.
  std::vector<torch::Tensor> to_host(const std::vector<torch::Tensor>& device_tensors);

  // Loads and steps since clear_schedule(): "load 0", "load 1", "run 0", … (tests read it).
  const std::vector<std::string>& schedule() const { return schedule_; }
  void clear_schedule() { schedule_.clear(); }

  int64_t layers() const { return static_cast<int64_t>(host_.size()); }
  const std::vector<std::vector<torch::Tensor>>& host_weights() const { return host_; }
  std::vector<torch::Tensor> slot_parameters() const;  // every slot's, on the device
  int64_t resident_bound() const;  // the slot count: prefetch + 1, at most the layers
  int64_t max_resident_layers() const { return max_resident_; }
  int64_t layer_bytes() const { return layer_bytes_; }  // one layer's host weights, as copied
  int64_t slot_bytes() const;                           // one slot's parameters on the device
  bool pinned() const { return pinned_; }

  // Copy times so far, in ms. Waits for the device to finish what is queued (CUDA: the times are
  // read from events).
  struct copy_times {
    double h2d_ms = 0;
    double d2h_ms = 0;
    double exposed_ms = 0;  // of both, the time compute (or the host) waited for a copy
  };
  copy_times settle();

  // Fills what the streamer measured into `o`: target, pinned, layers, the bound and the measured
  // residency, and copy times scaled to one pass (settles first). The caller sets
  // o.bytes_per_pass and o.d2h_bytes_per_pass before (the bandwidth is host → device bytes over
  // host → device time). `batches`: per pass; `sweeps`: forwards (inference) or steps (training)
  // run so far, over which the times were measured.
  void annotate(offload_info& o, int64_t batches, int64_t sweeps);

 private:
  struct slot;
  struct cuda_state;
  slot& slot_of(int64_t layer);

  torch::Device device_;
  bool pinned_;
  std::vector<std::vector<torch::Tensor>> host_;  // per layer: its parameters in host memory
  std::vector<slot> slots_;
  int64_t layer_bytes_ = 0;
  std::set<int64_t> resident_;  // offloaded layers whose weights are on the device now
  int64_t max_resident_ = 0;
  std::vector<std::string> schedule_;
  copy_times cpu_times_;  // CPU mechanism: host clock
  std::unique_ptr<cuda_state> cuda_;
};

}  // namespace attnbench
