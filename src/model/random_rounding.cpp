#include "model/random_rounding.hpp"

namespace attnbench {
namespace {

struct active_rounding {
  random_rounding how;
  at::Generator gen;
};

thread_local const active_rounding* current = nullptr;

// floor(v / step + U) · step, U uniform in [0, 1): unbiased rounding onto the grid step·ℤ (+ offset).
torch::Tensor onto_grid(const torch::Tensor& v, const torch::Tensor& step, const torch::Tensor& offset,
                        at::Generator& gen) {
  const auto safe = torch::where(step.gt(0), step, torch::ones_like(step));
  const auto u = at::rand(v.sizes(), gen, v.options());
  return torch::where(step.gt(0), ((v - offset) / safe + u).floor() * safe + offset, v);
}

}  // namespace

torch::Tensor round_randomly(const torch::Tensor& x_in, const random_rounding& r, at::Generator& gen) {
  const torch::NoGradGuard no_grad;
  const torch::Tensor x = x_in.contiguous();
  if (r.int8()) {
    // Per tensor, asymmetric: 255 steps between the least and the largest value.
    const auto lo = x.min(), hi = x.max();
    return onto_grid(x, (hi - lo) / 255.0, lo, gen);
  }
  int stored = 0;
  torch::ScalarType bits_type = torch::kLong;
  if (x.scalar_type() == torch::kDouble) {
    stored = 52;
  } else if (x.scalar_type() == torch::kFloat) {
    stored = 23;
    bits_type = torch::kInt;
  } else {
    TORCH_CHECK(false, "random rounding acts on float64 or float32 tensors, not ", x.scalar_type());
  }
  const int drop = stored - r.fraction_bits;
  if (drop <= 0) return x;
  // Adding a uniform integer below 2^drop to the bit pattern, then clearing the low drop bits,
  // rounds the magnitude up with probability (distance to the lower grid point) / (grid step):
  // the carry moves into the exponent when the fraction overflows, as the format's next value.
  const auto bits = x.view(bits_type);
  const auto noise = at::randint(0, int64_t{1} << drop, x.sizes(), gen, x.options().dtype(bits_type));
  const int64_t mask = ~((int64_t{1} << drop) - 1);
  return (bits + noise).bitwise_and(mask).view(x.scalar_type());
}

torch::Tensor round_weight_randomly(const torch::Tensor& w, const random_rounding& r, at::Generator& gen) {
  const torch::NoGradGuard no_grad;
  if (!r.int8() || w.dim() != 2) return round_randomly(w, r.int8() ? random_rounding{23, false} : r, gen);
  // Symmetric per output channel: 127 steps either side of zero.
  const auto step = w.abs().amax(1, /*keepdim=*/true) / 127.0;  // (out, 1)
  return onto_grid(w, step, torch::zeros_like(step), gen);
}

rounding_scope::rounding_scope(const random_rounding& r, at::Generator gen)
    : previous_(current) {
  current = new active_rounding{r, std::move(gen)};
}

rounding_scope::~rounding_scope() {
  delete current;
  current = static_cast<const active_rounding*>(previous_);
}

torch::Tensor rounded_input(const torch::Tensor& x) {
  if (!current) return x;
  auto gen = current->gen;
  return round_randomly(x, current->how, gen);
}

torch::Tensor rounded_output(const torch::Tensor& x) {
  if (!current || !current->how.outputs) return x;
  auto gen = current->gen;
  return round_randomly(x, current->how, gen);
}

torch::Tensor rounded_float(const torch::Tensor& x) { return rounded_attention(x); }

torch::Tensor rounded_attention(const torch::Tensor& x) {
  if (!current) return x;
  auto gen = current->gen;
  return round_randomly(x, random_rounding{current->how.attention_fraction_bits, true, current->how.attention_fraction_bits}, gen);
}

}  // namespace attnbench
