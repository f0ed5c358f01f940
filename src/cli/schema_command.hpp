// `attnbench schema`: print the config's JSON Schema (draft 2020-12), generated from the same
// declarations the config reader uses (config/config_schema.hpp), for editors' completion and
// checking (docs/configs.md, "Editor support").
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

namespace attnbench {

struct schema_command_options {
  std::string out_path;  // empty: stdout
};

// The schema `attnbench schema` prints: the config layer's, with the kernels' names
// (kernels/kernel_catalog.hpp) among the "attention" choices, which the config layer cannot know.
nlohmann::ordered_json config_json_schema();

void setup_schema(CLI::App& app, schema_command_options& opts);
int run_schema(const schema_command_options& opts);  // exit code

}  // namespace attnbench
