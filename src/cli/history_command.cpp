#include "cli/history_command.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"
#include "report/file_output.hpp"
#include "report/history_db.hpp"
#include "report/history_series.hpp"
#include "report/result_json.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

void add_filters(CLI::App* cmd, history_command_options& opts) {
  cmd->add_option("--config", opts.config, "Only runs of the config with this name");
  cmd->add_option("--variant", opts.variant, "Only this variant");
}

}  // namespace

void setup_history(CLI::App& app, history_command_options& opts) {
  auto* history = app.add_subcommand("history", "Record runs in an SQLite history; show trends; check for outliers");
  history->require_subcommand(1);
  auto* add = history->add_subcommand("add", "Record results folders (their results.json) in the database");
  add->add_option("--db", opts.db, "The SQLite database (created when missing)")->required();
  add->add_option("dirs", opts.dirs, "Results folders")->required()->check(CLI::ExistingDirectory);
  add->callback([&opts] { opts.action = "add"; });
  auto* show = history->add_subcommand("show", "Trend table by commit and date, one series per config and machine");
  show->add_option("--db", opts.db, "The SQLite database")->required()->check(CLI::ExistingFile);
  add_filters(show, opts);
  show->callback([&opts] { opts.action = "show"; });
  auto* check = history->add_subcommand(
      "check", "Each series' newest point against the noise band of its earlier points; exit 1 when one is below");
  check->add_option("--db", opts.db, "The SQLite database")->required()->check(CLI::ExistingFile);
  add_filters(check, opts);
  check->callback([&opts] { opts.action = "check"; });
  auto* html = history->add_subcommand("html", "Write a self-contained HTML page with a trend chart per series");
  html->add_option("--db", opts.db, "The SQLite database")->required()->check(CLI::ExistingFile);
  html->add_option("out", opts.out, "The page to write, e.g. history.html")->required();
  html->add_flag("--force", opts.force, "Overwrite it");
  add_filters(html, opts);
  html->callback([&opts] { opts.action = "html"; });
}

int run_history(const history_command_options& opts) {
  if (opts.action == "add") {
    // Every folder read before the first is recorded: a bad one adds nothing.
    std::vector<std::pair<std::string, run_result>> runs;
    for (const auto& d : opts.dirs) runs.emplace_back(d, load_run_result(fs::path(d) / "results.json"));
    history_db db(opts.db);
    for (const auto& [dir, run] : runs) {
      const bool added = db.add(run, dir);
      fmt::print("{} {} ({}, {}, {})\n", added ? "added" : "already recorded:", dir, run.name,
                 run.environment.git_commit, run.environment.date);
    }
    return exit_ok;
  }
  history_db db(opts.db);
  const auto series = series_of(db.points(opts.config, opts.variant));
  if (opts.action == "show") {
    fmt::print("{}", history_markdown(series));
    return exit_ok;
  }
  if (opts.action == "html") {
    if (auto problems = output_problems({opts.out}, opts.force, "out", "a different path"); !problems.empty())
      throw input_error(std::move(problems));
    write_output_file(opts.out, history_html(series, opts.db));
    fmt::print("wrote {}\n", opts.out);
    return exit_ok;
  }
  const auto rows = check_series(series);
  fmt::print("{}", history_check_markdown(rows));
  int64_t below = 0;
  for (const auto& r : rows) below += r.position == band_position::below;
  if (below > 0) fmt::print("\n{} series' newest point below its noise band\n", below);
  return below > 0 ? exit_regression : exit_ok;
}

}  // namespace attnbench
