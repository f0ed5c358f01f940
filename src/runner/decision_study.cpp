#include "runner/decision_study.hpp"

#include <fmt/format.h>

#include "common/precision_classes.hpp"
#include "model/random_rounding.hpp"

namespace attnbench {
namespace {

// Every sample alone through `model`, (N, D) float64 in sample order.
torch::Tensor outputs_of(EncoderClassifier& model, const dataset& data) {
  std::vector<torch::Tensor> rows;
  rows.reserve(data.samples.size());
  for (const auto& s : data.samples) {
    const auto ids = torch::tensor(s, torch::kLong).unsqueeze(0);  // (1, S)
    rows.push_back(model->forward(ids, torch::Tensor()).to(torch::kDouble).squeeze(0));
  }
  return torch::stack(rows);
}

}  // namespace

std::shared_ptr<decision_evidence> run_decision_study(const EncoderClassifier& model, const dataset& data,
                                                      const std::string& class_name, int64_t runs) {
  auto ev = std::make_shared<decision_evidence>();
  ev->precision_class = class_name;
  const torch::NoGradGuard no_grad;
  const c10::InferenceMode inference;
  // A float64 copy on the CPU with the naive core (every kernel, fused or not, is a reordering of it).
  EncoderClassifier ref = replicate(model, torch::kCPU);
  ref->to(torch::kDouble);
  attention_settings naive = model->attention();
  naive.kind = attention_kind::naive;
  ref->set_attention(naive);
  ev->reference = outputs_of(ref, data);

  const precision_class& pc = precision_class_of(class_name);
  random_rounding how;
  how.fraction_bits = pc.fraction_bits;
  how.outputs = pc.fraction_bits != 0;
  how.attention_fraction_bits = pc.fraction_bits != 0 ? pc.fraction_bits : precision_class_of("fp32").fraction_bits;
  const auto originals = ref->named_parameters(/*recurse=*/true);
  for (int64_t k = 0; k < runs; ++k) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(study_seed + static_cast<uint64_t>(k));
    // replicate() builds an fp32 model: made float64 before the rounded values go in.
    EncoderClassifier run = replicate(model, torch::kCPU);
    run->to(torch::kDouble);
    run->set_attention(naive);
    for (auto& p : run->named_parameters(/*recurse=*/true)) {
      // int8 quantizes the encoder layers' linear weights; embeddings, LayerNorm and biases stay fp32.
      const bool int8_weight = pc.fraction_bits == 0 && p.key().find("layers.") == 0 && p.value().dim() == 2;
      p.value().copy_(int8_weight ? round_weight_randomly(originals[p.key()], how, gen)
                                  : round_randomly(originals[p.key()],
                                                   pc.fraction_bits == 0 ? random_rounding{23, false} : how, gen));
    }
    const rounding_scope scope(how, gen);
    ev->perturbed.push_back(outputs_of(run, data));
  }
  return ev;
}

double study_noise_rel_l2(const decision_evidence& ev) {
  double worst = 0;
  const double ref_norm = ev.reference.norm().item<double>();
  for (const auto& p : ev.perturbed) {
    const double d = (p - ev.reference).norm().item<double>();
    worst = std::max(worst, ref_norm > 0 ? d / ref_norm : d);
  }
  return worst;
}

double fp32_kernel_rel_l2(const EncoderClassifier& model, const dataset& data, const decision_evidence& ev) {
  const torch::NoGradGuard no_grad;
  const c10::InferenceMode inference;
  EncoderClassifier run = replicate(model, torch::kCPU);
  const double ref_norm = ev.reference.norm().item<double>();
  double worst = 0;
  for (const attention_kind kind : {attention_kind::naive, attention_kind::sdpa}) {
    attention_settings a = model->attention();
    a.kind = kind;
    run->set_attention(a);
    const double d = (outputs_of(run, data) - ev.reference).norm().item<double>();
    worst = std::max(worst, ref_norm > 0 ? d / ref_norm : d);
  }
  return worst;
}

}  // namespace attnbench
