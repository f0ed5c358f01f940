// Precision "amp": the device's automatic-mixed-precision dtype, chosen from what the hardware
// multiplies natively, so that the seed table's AMP row means the same thing on every machine.
// On a GPU that is the tensor cores' dtype; on a CPU with avx512_bf16 or AMX it is bf16; on a CPU
// without any native reduced precision (a Zen 3: AVX2 only) LibTorch's bf16 GEMM is a scalar
// reference path ~100× slower than fp32, so "amp" runs fp32 there and every report says why,
// citing the run's measured matmul ceilings. The explicit "amp-bf16"/"amp-fp16" are untouched.
//
// The decision reads only the environment record (CPU features, GPU capability, ceilings), so
// tests inject a machine, and every rank of a multi-process run decides alike: the features
// decide, the ceilings (measured by rank 0 only) are the evidence the reason cites.
// Torch-free.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "report/result.hpp"

namespace attnbench {

// The dtypes a CUDA device's tensor cores multiply, from its capability "major.minor": fp16
// from 7.0 (Volta), bf16 and tf32 from 8.0 (Ampere), fp8 from 8.9 (Ada, Hopper); empty below
// 7.0 or when the capability does not parse.
std::vector<std::string> tensor_core_dtypes(const std::string& capability);

struct amp_decision {
  precision_kind precision = precision_kind::fp32;  // amp_bf16, amp_fp16, or fp32 (no autocast)
  std::string dtype = "fp32";                       // its matmul dtype: "bf16", "fp16" or "fp32"
  // The reduced dtype the decision was about, whose ceiling the run measures to back the reason:
  // the chosen one, or the one found wanting ("bf16" on a CPU without native bf16).
  std::string considered = "bf16";
  std::string reason;  // one sentence, shown as a note beside every "amp" variant
};

// What "amp" means on env.device: CUDA → bf16 where the tensor cores have it, else fp16, else
// fp32; CPU → bf16 with avx512_bf16 or amx_bf16, else fp16 with avx512_fp16 or amx_fp16, else
// fp32. The measured ceilings of fp32 and `considered`, when env holds them, go into the reason.
amp_decision choose_amp(const environment_info& env);

// Gives every variant written "precision": "amp" its precision and precision_choice. In the
// train scenario "amp" never resolves to fp16 (fp16_training_refusal): it runs fp32 there, saying
// why.
void resolve_amp(config& cfg, const environment_info& env);

// True when a variant is written "precision": "amp" (resolved or not).
bool any_amp(const config& cfg);

}  // namespace attnbench
