// `attnbench history add|show|check|html`: a results history in an SQLite database
// (report/history_db.hpp), trend tables and charts per series, and a check of the newest point of
// each series against its own noise band (report/history_series.hpp; README "CI regression runs").
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attnbench {

struct history_command_options {
  std::string db;
  std::vector<std::string> dirs;  // add: results folders (each holding results.json)
  std::string config;             // show/check/html: only this config's runs ("" for all)
  std::string variant;            // show/check/html: only this variant
  std::string out;                // html: the page to write
  bool force = false;             // html: overwrite
  std::string action;             // "add", "show", "check", "html": set by the parser
};

void setup_history(CLI::App& app, history_command_options& opts);
int run_history(const history_command_options& opts);  // exit code

}  // namespace attnbench
