#include "cli/report_command.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "report/file_output.hpp"
#include "report/make_writers.hpp"
#include "report/result_json.hpp"

namespace fs = std::filesystem;

namespace attnbench {

void setup_report(CLI::App& app, report_command_options& opts) {
  auto* cmd = app.add_subcommand("report", "Render the reports of a results folder again from its results.json");
  cmd->add_option("dir", opts.dir, "A results folder (holding results.json)")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--formats", opts.formats, "Formats to write, comma-separated: html, md, csv, json, svg")
      ->capture_default_str();
  cmd->add_option("--out", opts.out, "Write into this directory instead of DIR");
  cmd->add_flag("--force", opts.force, "Overwrite files of the same names");
}

int run_report(const report_command_options& opts) {
  const std::vector<std::string> formats = split_formats(opts.formats, "--formats");
  const run_result result = load_run_result(fs::path(opts.dir) / "results.json");  // names the file on error
  const fs::path out = opts.out.empty() ? fs::path(opts.dir) : fs::path(opts.out);
  const auto writers = make_writers(formats);
  std::vector<fs::path> files;
  for (const auto& w : writers) files.push_back(out / w->file_name());
  if (auto problems = output_problems(files, opts.force, "--out", "--out"); !problems.empty())
    throw input_error(std::move(problems));
  write_reports(result, writers, out, opts.force);
  for (const auto& f : files) fmt::print("wrote {}\n", f.string());
  return exit_ok;
}

}  // namespace attnbench
