// The precision classes of the accuracy check and their tolerances, in one place (issue 37 part 3).
//
// Every variant computes in one class: fp32 (reorderings only: fused kernels, packed linears, SDPA
// backends, thread counts), bf16 (autocast or a cast), fp16, int8. Its relative-L2 tolerance is
// the class's, fixed here before any run; a config may tighten it (check.tolerances) but never
// raise it (the parser refuses a larger value).
//
// How the numbers were derived, once: the float64 study of the check (runner/decision_study.hpp)
// ran all-MiniLM-L6-v2 real weights over the first 64 samples of configs/data/handbook-corpus.txt
// (configs/accuracy-study-cpu.json, K = 8 runs per class with weights and activations rounded at
// random at the class's unit roundoff) and reported, per class, the largest relative L2 error of a
// randomly rounded run against the float64 reference; for fp32 also the error of the fp32 kernels
// themselves (naive and SDPA cores), since the emulation accumulates in float64 and an fp32
// reordering changes fp32's own accumulation. Each tolerance is 4 × the larger figure, rounded up
// to the next 1-2-5 step: room for kernels that round differently from the emulation (fused
// attention, other accumulation orders, longer sequences), and still far below what a wrong kernel
// does. `attnbench study` prints the derivation; the run is results/cpu-accuracy-study-zen3/ (its
// COMMAND names the commit and the CPU), made before the reruns the README quotes. int8's 1.0
// means its L2 bound excludes only an output unrelated to the reference: at int8 the relative L2
// of the study's own runs is 0.16, and its predictions decide (the rule of check/output_check.hpp).
#pragma once

#include <array>
#include <string_view>

namespace attnbench {

struct precision_class {
  std::string_view name;  // "fp32", "bf16", "fp16", "int8"
  // The grid the float64 study rounds to (model/random_rounding.hpp): fraction bits of the format,
  // 0 for int8 (weights per output channel on 255 steps, activations per tensor on 256).
  int fraction_bits;
  double unit_roundoff;  // 2^-(fraction bits + 1); int8: half a step of 255, 1/510
  double tolerance;      // the relative-L2 bound of every variant of this class
};

// The four classes (their figures are in precision_classes.cpp, the one place they are written).
const std::array<precision_class, 4>& precision_classes();

// The class a compute dtype ("fp32", "bf16", "fp16", "int8") or a precision value of a config
// ("amp-bf16", "bf16", "amp-fp16", "fp16", "int8", "fp32") belongs to; fp32 for anything else.
const precision_class& precision_class_of(std::string_view value);

}  // namespace attnbench
