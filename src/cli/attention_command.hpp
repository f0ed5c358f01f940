// `attnbench attention`: attention implementations alone over a grid (runner/attention_bench.hpp),
// each validated against float64 before it is timed; writes attention.md and attention.csv.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attnbench {

struct attention_command_options {
  std::vector<int64_t> batch, heads, seq, head_dim;
  std::vector<std::string> causal;  // "false" / "true"
  std::vector<std::string> dtype;
  std::vector<double> valid;  // shares of real keys per sample
  std::vector<std::string> impls;
  int64_t warmup = 0;
  int64_t repetitions = 0;
  std::string memory_cap;  // "1GiB", "512MiB", bytes, "0" (none); default by device
  std::string device = "auto";
  int64_t threads = 0;
  uint64_t seed = 0;
  std::string out = "results/attention";
  bool force = false;
  bool quiet = false;
  bool verbose = false;
};

void setup_attention(CLI::App& app, attention_command_options& opts);
int run_attention(const attention_command_options& opts);  // exit code

// "1GiB" → 1073741824; accepts B, KiB, MiB, GiB (and a bare number of bytes). nullopt if malformed.
std::optional<int64_t> parse_byte_size(const std::string& text);

}  // namespace attnbench
