// CPU offloading for decoders (issue 41 part 3): the blocks' weights stay in host memory and are
// copied, a block at a time, into prefetch + 1 slots just before the block computes, in every
// forward — the prefill, each decode step, the check's teacher forcing — through the encoders'
// mechanism (techniques/layer_streamer.hpp) with DecoderBlock slots. The embeddings, final norm
// and LM head stay resident. Built for offload.target "cpu": the slots are CPU buffers and every
// copy is synchronous, so the variant measures what streaming every block's bytes per token costs
// against the resident model, the mechanism a GPU run would overlap with compute. Streaming to a
// GPU is the encoder executor's only (decoder_offload_skip_reason says so).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/config.hpp"
#include "model/decoder.hpp"
#include "report/result.hpp"
#include "techniques/layer_streamer.hpp"
#include "techniques/variant_plan.hpp"

namespace attnbench {

// Why a decoder variant with this offload block cannot stream here, or none. precision_label:
// the variant's resolved precision ("fp32", "bf16", "amp", "int8", …).
std::optional<std::string> decoder_offload_skip_reason(const offload_config& offload, torch::Device device,
                                                       const std::string& precision_label);

class decoder_offload {
 public:
  // model: the variant's own copy (its blocks' parameters become the host weights); sets the
  // model's block source to the slots until this is destroyed.
  decoder_offload(DecoderLM model, const offload_config& cfg);
  ~decoder_offload();
  decoder_offload(const decoder_offload&) = delete;
  decoder_offload& operator=(const decoder_offload&) = delete;

  int64_t forwards() const { return forwards_; }
  const layer_streamer& streamer() const { return *streamer_; }
  // Bracket one timed pass: the report's copy times and bytes are those of the timed passes only
  // (the check pass's first copies, into memory not yet touched, are no pass's cost).
  void begin_timed_pass();
  void end_timed_pass();
  // The offload block of the report: bytes resident, and per timed pass the bytes copied (every
  // block once per forward), the copy time and how much of it compute waited for (all, on the CPU).
  void annotate(offload_info& o);

 private:
  DecoderBlockImpl& acquire(std::size_t layer);
  DecoderLM model_;
  int64_t prefetch_ = 0;
  std::unique_ptr<layer_streamer> streamer_;
  int64_t next_load_ = 0;
  int64_t forwards_ = 0;
  int64_t full_bytes_ = 0, resident_bytes_ = 0;
  layer_streamer::copy_times at_begin_;
  int64_t forwards_at_begin_ = 0;
  double timed_h2d_ms_ = 0, timed_exposed_ms_ = 0;
  int64_t timed_forwards_ = 0, timed_passes_ = 0;
};

}  // namespace attnbench
