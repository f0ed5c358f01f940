#include "cli/study_command.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/output_check.hpp"
#include "cli/console.hpp"
#include "common/cpu_info.hpp"
#include "common/build_info.hpp"
#include "common/error.hpp"
#include "common/precision_classes.hpp"
#include "config/config_parser.hpp"
#include "runner/config_checks.hpp"
#include "core/device.hpp"
#include "model/encoder.hpp"
#include "model/hf_weights.hpp"
#include "model/safetensors.hpp"
#include "report/file_output.hpp"
#include "runner/decision_study.hpp"
#include "workload/dataset.hpp"

namespace fs = std::filesystem;

namespace attnbench {

double derived_tolerance(double largest_rel_l2) {
  const double x = 4.0 * largest_rel_l2;
  if (!(x > 0)) return 0.0;
  const double decade = std::pow(10.0, std::floor(std::log10(x)));
  for (double step : {1.0, 2.0, 5.0, 10.0})
    if (x <= step * decade * (1 + 1e-12)) return step * decade;
  return 10 * decade;
}

void setup_study(CLI::App& app, study_command_options& opts) {
  auto* cmd = app.add_subcommand(
      "study", "The accuracy check's float64 study per precision class: noise, unstable predictions, tolerances");
  cmd->add_option("config", opts.config_path, "Experiment config (JSON): its model and samples")->required();
  cmd->add_option("--class", opts.classes, "Precision class (repeatable; default: fp32 bf16 fp16 int8)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16", "int8"}));
  cmd->add_option("--out", opts.out, "Output directory (default: <output.dir>/study)");
  cmd->add_flag("--force", opts.force, "Overwrite an earlier study's files in the output directory");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the table and errors");
}

int run_study(const study_command_options& opts) {
  console out(opts.quiet ? verbosity::quiet : verbosity::normal);
  const config cfg = load_checked_config(opts.config_path, detect_device_caps());
  if (!cfg.model.torchscript.empty())
    throw input_error("model.torchscript", "the float64 study runs the built-in encoder; a TorchScript model has none");
  const fs::path dir = opts.out.empty() ? fs::path(cfg.output.dir) / "study" : fs::path(opts.out);
  if (auto problems = output_problems({dir / "study.md", dir / "study.json"}, opts.force,
                                      opts.out.empty() ? "output.dir" : "--out", "--out");
      !problems.empty())
    throw input_error(std::move(problems));
  if (cfg.threads > 0) at::set_num_threads(static_cast<int>(cfg.threads));
  const torch::InferenceMode inference;
  EncoderClassifier model(cfg.model);
  if (cfg.model.weights.empty()) {
    model->init_weights(cfg.model.seed);
  } else {
    const safetensors_file weights(cfg.model.weights);
    for (const auto& w : load_hf_weights(*model, weights)) out.log("warning: " + w);
  }
  model->eval();
  const dataset data = make_dataset(cfg.workload, cfg.model);
  const output_kind kind = output_kind_of(cfg.model, model->output_width());
  out.info(fmt::format("attnbench: float64 study of {} over {} samples ({} real tokens), {} runs per class", cfg.name,
                       data.samples.size(), data.real_tokens(), study_runs));

  std::string md = fmt::format(
      "# Float64 study: {}\n\nModel {} ({}), {} samples ({}), predictions: {}. Each class: {} runs of the model in "
      "float64 with its weights and activations rounded at random at the class's unit roundoff "
      "(runner/decision_study.hpp), against the float64 reference. CPU: {}, {} threads, attnbench {}.\n\n"
      "| class | unit roundoff | rel. L2 (max over runs) | rel. L2 (median) | least cosine | predictions changed in "
      "some run | fp32 kernels' rel. L2 | derived tolerance (4 × the larger, 1-2-5) | check's tolerance | seconds |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
      cfg.name, cfg.model.weights.empty() ? "random weights, preset " + cfg.model.preset : cfg.model.weights,
      cfg.model.mean_pool ? "mean-pooled embeddings" : "logits", data.samples.size(), data.description,
      prediction_text(kind), study_runs, cpu_model_name(), at::get_num_threads(), harness_git_commit());
  nlohmann::ordered_json j{{"name", cfg.name},           {"model", cfg.model.weights.empty() ? cfg.model.preset : cfg.model.weights},
                           {"weight_checksum", weight_checksum(*model)}, {"samples", data.samples.size()},
                           {"workload", data.description}, {"predictions", prediction_text(kind)},
                           {"runs", study_runs},         {"cpu", cpu_model_name()},
                           {"threads", at::get_num_threads()}, {"commit", harness_git_commit()},
                           {"classes", nlohmann::ordered_json::array()}};
  for (const auto& cls : opts.classes) {
    out.info(fmt::format("attnbench: studying {}", cls));
    const auto t0 = std::chrono::steady_clock::now();
    const auto ev = run_decision_study(model, data, cls);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> errs;
    double least_cos = 1.0;
    const auto ref_pred = decision_scores(ev->reference, kind).argmax(1);
    auto changed = torch::zeros_like(ref_pred, torch::kBool);
    const double ref_norm = ev->reference.norm().item<double>();
    for (const auto& p : ev->perturbed) {
      errs.push_back((p - ev->reference).norm().item<double>() / ref_norm);
      const auto cos = torch::cosine_similarity(p, ev->reference, 1);
      least_cos = std::min(least_cos, cos.min().item<double>());
      changed = changed.logical_or(decision_scores(p, kind).argmax(1).ne(ref_pred));
    }
    std::vector<double> sorted = errs;
    std::sort(sorted.begin(), sorted.end());
    const double worst = sorted.back(), median = sorted[sorted.size() / 2];
    const int64_t unstable = changed.sum().item<int64_t>();
    const precision_class& pc = precision_class_of(cls);
    // fp32's variants are reorderings of fp32 arithmetic: its tolerance also covers what the fp32
    // kernels themselves measure against the float64 reference (decision_study.hpp).
    const double kernels = cls == "fp32" ? fp32_kernel_rel_l2(model, data, *ev) : 0.0;
    const double derived = derived_tolerance(std::max(worst, kernels));
    md += fmt::format("| {} | {:.3g} | {:.3g} | {:.3g} | {:.6f} | {} of {} | {} | {:.0e} | {:.0e} | {:.0f} |\n", cls,
                      pc.unit_roundoff, worst, median, least_cos, unstable, data.samples.size(),
                      cls == "fp32" ? fmt::format("{:.3g}", kernels) : std::string("—"), derived, pc.tolerance,
                      seconds);
    j["classes"].push_back({{"class", cls},
                            {"unit_roundoff", pc.unit_roundoff},
                            {"rel_l2", errs},
                            {"rel_l2_max", worst},
                            {"rel_l2_median", median},
                            {"cosine_min", least_cos},
                            {"unstable_predictions", unstable},
                            {"fp32_kernels_rel_l2", cls == "fp32" ? nlohmann::json(kernels) : nlohmann::json()},
                            {"derived_tolerance", derived},
                            {"check_tolerance", pc.tolerance},
                            {"seconds", seconds}});
  }
  md += "\nPredictions changed in some run: samples whose prediction in at least one randomly rounded run differs "
        "from the float64 reference's, the decisions that precision can tip. fp32 kernels: the model itself in fp32 (naive "
        "and SDPA cores) against the float64 reference, the accumulation error the emulation leaves out; only fp32's "
        "variants are reorderings of it. The check's tolerance is the class's "
        "in src/common/precision_classes.hpp, fixed before any run.\n";
  fs::create_directories(dir);
  write_files_atomic({{dir / "study.md", md}, {dir / "study.json", j.dump(2) + "\n"}});
  fmt::print("{}", md);
  out.info("wrote study.md and study.json to " + dir.string());
  return exit_ok;
}

}  // namespace attnbench
