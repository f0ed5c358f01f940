#include "workload/arrivals.hpp"

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"

namespace attnbench {

std::vector<arrival> poisson_arrivals(double rate, int64_t requests, double max_time_s, uint64_t seed,
                                      int64_t samples) {
  std::mt19937_64 rng(seed);
  std::vector<arrival> out;
  double t = 0;
  for (int64_t i = 0; i < requests; ++i) {
    // Inverse-CDF exponential from the top 53 bits: the same gaps on every platform.
    const double u = 1.0 - static_cast<double>(rng() >> 11) * 0x1.0p-53;  // (0, 1]
    t += -std::log(u) / rate;
    if (t > max_time_s) break;
    out.push_back({t, i % samples});
  }
  return out;
}

std::vector<arrival> read_trace(const std::string& path, int64_t samples) {
  std::ifstream in(path);
  if (!in) throw input_error("server.trace", fmt::format("cannot read {}", path));
  return parse_trace(in, path, samples);
}

std::vector<arrival> parse_trace(std::istream& in, const std::string& path, int64_t samples) {
  std::vector<arrival> out;
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); ++lineno) {
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    arrival a;
    std::string extra;
    const auto where = [&](const std::string& what) {
      return input_error("server.trace", fmt::format("{}:{}: {}", path, lineno, what));
    };
    if (!(fields >> a.t_s >> a.sample) || (fields >> extra)) throw where("expected \"seconds sample_index\"");
    if (!std::isfinite(a.t_s) || a.t_s < 0) throw where(fmt::format("time {} is negative", a.t_s));
    if (!out.empty() && a.t_s < out.back().t_s)
      throw where(fmt::format("time {} is earlier than the line before ({}): the trace must be sorted", a.t_s,
                              out.back().t_s));
    if (a.sample < 0 || a.sample >= samples)
      throw where(fmt::format("sample {} does not exist (the workload has {} samples)", a.sample, samples));
    out.push_back(a);
  }
  if (out.empty()) throw input_error("server.trace", fmt::format("{} holds no arrivals", path));
  return out;
}

}  // namespace attnbench
