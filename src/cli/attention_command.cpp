#include "cli/attention_command.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/console.hpp"
#include "common/error.hpp"
#include "model/attention_impls.hpp"
#include "report/file_output.hpp"
#include "runner/attention_bench.hpp"
#include "runner/matmul_ceiling.hpp"
#include "core/device.hpp"

namespace fs = std::filesystem;

namespace attnbench {

std::optional<int64_t> parse_byte_size(const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1024.0;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  if (scale == 0 || value < 0) return std::nullopt;
  return static_cast<int64_t>(value * scale);
}

void setup_attention(CLI::App& app, attention_command_options& opts) {
  auto* cmd = app.add_subcommand("attention",
                                 "Benchmark attention implementations alone over a grid, validated first");
  opts.batch = {attention_default_batch};
  opts.heads = {attention_default_heads};
  opts.head_dim = {attention_default_head_dim};
  opts.seq.assign(attention_default_seq.begin(), attention_default_seq.end());
  opts.causal = {"false"};
  opts.dtype = {"fp32"};
  opts.valid = {1.0};
  opts.warmup = attention_default_warmup;
  opts.repetitions = attention_default_repetitions;
  cmd->add_option("--batch", opts.batch, "Batch sizes, comma-separated")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--heads", opts.heads, "Head counts")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--seq", opts.seq, "Sequence lengths")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--head-dim", opts.head_dim, "Head dimensions")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--causal", opts.causal, "false, true or both")
      ->delimiter(',')
      ->check(CLI::IsMember({"false", "true"}))
      ->capture_default_str();
  cmd->add_option("--dtype", opts.dtype, "fp32, bf16, fp16")
      ->delimiter(',')
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--valid", opts.valid,
                  "Shares of each sample's keys that are real, the rest key padding (1: no mask), e.g. 1,0.5")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--impl", opts.impls,
                  "Implementations to run (default: all; naive, sdpa-math, sdpa-flash, ...)")
      ->delimiter(',');
  cmd->add_option("--warmup", opts.warmup, "Untimed calls per implementation and point")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--repetitions", opts.repetitions, "Timed calls")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option(
      "--memory-cap", opts.memory_cap,
      "Largest (B,H,S,S) scores+probabilities naive/math may materialise, e.g. 1GiB; beyond it they are "
      "reported OOM without running (default 1GiB on CPU, none on CUDA; 0: none)");
  cmd->add_option("--device", opts.device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  cmd->add_option("--threads", opts.threads, "Intra-op threads (0: LibTorch's default)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", opts.seed, "Seed of the random inputs");
  cmd->add_option("--out", opts.out, "Output directory for attention.md and attention.csv")
      ->capture_default_str();
  cmd->add_flag("--force", opts.force, "Overwrite an earlier run's files");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the table and errors");
  cmd->add_flag("-v,--verbose", opts.verbose, "Print each point on stderr");
}

int run_attention(const attention_command_options& opts) {
  console out(opts.quiet ? verbosity::quiet : opts.verbose ? verbosity::verbose : verbosity::normal);
  std::vector<problem> problems;
  const device_caps caps = detect_device_caps();
  if (opts.device != "auto" && opts.device != "cpu" && opts.device.rfind("cuda", 0) != 0)
    problems.push_back(
        {"--device", fmt::format("expected cpu, cuda, cuda:N or auto; got \"{}\"", opts.device)});
  else if (opts.device.rfind("cuda", 0) == 0 && caps.cuda_devices == 0)
    problems.push_back(
        {"--device", fmt::format("\"{}\" is not available: this machine has no CUDA device", opts.device)});
  std::vector<std::string> known;
  for (const auto& impl : attention_impls()) known.push_back(impl.name);
  for (const auto& name : opts.impls)
    if (std::find(known.begin(), known.end(), name) == known.end())
      problems.push_back(
          {"--impl", fmt::format("no implementation named \"{}\"; known: {}", name, fmt::join(known, ", "))});
  std::optional<int64_t> cap;
  if (!opts.memory_cap.empty() && !(cap = parse_byte_size(opts.memory_cap)))
    problems.push_back({"--memory-cap", fmt::format("expected a size such as 1GiB, 512MiB or 0; got \"{}\"",
                                                    opts.memory_cap)});
  const fs::path dir = opts.out;
  for (auto& p : output_problems({dir / "attention.md", dir / "attention.csv"}, opts.force, "--out", "--out"))
    problems.push_back(std::move(p));
  if (!problems.empty()) throw input_error(std::move(problems));

  attention_bench_options o;
  o.device = resolve_device(opts.device);
  o.grid = {opts.batch, opts.heads, opts.seq, opts.head_dim, {}, opts.dtype, opts.valid};
  for (const auto& c : opts.causal) o.grid.causal.push_back(c == "true");
  o.impls = opts.impls;
  o.warmup = opts.warmup;
  o.repetitions = opts.repetitions;
  o.memory_cap_bytes = cap.value_or(o.device.is_cpu() ? attention_default_cpu_memory_cap : 0);
  o.seed = opts.seed;
  o.log = [&](const std::string& s) { out.log(s); };
  if (opts.threads > 0) at::set_num_threads(static_cast<int>(opts.threads));

  out.info(
      fmt::format("attnbench: attention over {} points on {}", grid_points(o.grid).size(), o.device.str()));
  // The yardstick for "Of ceiling", measured here, in this run, per dtype of the grid.
  for (const auto& dtype : opts.dtype) {
    // The squares and the grid's own products (Q·Kᵀ and P·V at its longest sequence up to 2048,
    // for each head dim), as the run's ceilings are measured (runner/matmul_ceiling.hpp).
    std::vector<gemm_shape> shapes = square_shapes(default_ceiling_sizes(o.device));
    const int64_t seq = std::min<int64_t>(2048, *std::max_element(o.grid.seq.begin(), o.grid.seq.end()));
    const int64_t bh = o.grid.batch.front() * o.grid.heads.front();
    for (const int64_t d : o.grid.head_dim) {
      shapes.push_back({bh, seq, d, seq, fmt::format("scores {}x{}x{}x{}", bh, seq, d, seq)});
      shapes.push_back({bh, seq, seq, d, fmt::format("context {}x{}x{}x{}", bh, seq, seq, d)});
    }
    const auto c = measure_matmul_ceiling(o.device, attention_dtype(dtype), shapes);
    o.ceilings.push_back({c.dtype, c.gflops, c.shape, c.spread});
    out.log(fmt::format("matmul ceiling {}: {:.1f} GFLOP/s ({}, spread {:.1f}%)", c.dtype, c.gflops, c.shape,
                        100 * c.spread));
  }
  const auto rows = run_attention_bench(o);
  const std::string md = fmt::format("# Attention implementations on {} ({})\n\n{}", device_name(o.device),
                                     o.device.str(), attention_markdown(rows, o.ceilings));
  fs::create_directories(dir);
  write_files_atomic({{dir / "attention.md", md}, {dir / "attention.csv", attention_csv(rows)}});
  fmt::print("{}\n", attention_markdown(rows, o.ceilings));
  out.info(fmt::format("wrote attention.md and attention.csv to {}", dir.string()));
  const bool failed = std::any_of(rows.begin(), rows.end(),
                                  [](const attention_row& r) { return r.status == attention_status::fail; });
  return failed ? exit_check_failed : exit_ok;
}

}  // namespace attnbench
