#include "runner/pass_statistics.hpp"

#include "stats/summary.hpp"

namespace attnbench {

std::vector<double> per_second(const std::vector<double>& pass_s, double amount) {
  std::vector<double> rates;
  rates.reserve(pass_s.size());
  for (double s : pass_s) rates.push_back(amount / s);
  return rates;
}

void summarize_passes(variant_result& r, const std::vector<double>& pass_s, double samples, double tokens,
                      const std::vector<double>& base_samples_per_s, bool base_ran) {
  const std::vector<double> samples_per_s = per_second(pass_s, samples);
  r.throughput = summarize(samples_per_s);
  r.tokens_per_s = summarize(per_second(pass_s, tokens));
  if (base_ran) r.speedup = speedup_of(samples_per_s, base_samples_per_s);
}

}  // namespace attnbench
