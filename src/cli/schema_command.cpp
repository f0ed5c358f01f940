#include "cli/schema_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "config/config_schema.hpp"
#include "kernels/kernel_catalog.hpp"

namespace attnbench {

nlohmann::ordered_json config_json_schema() {
  json_schema_options options;
  std::vector<std::string>& kernels = options.extra_choices["attention"];
  for (const auto& k : kernel_catalog) kernels.emplace_back(k.name);
  return json_schema(*config_document_schema(), options);
}

void setup_schema(CLI::App& app, schema_command_options& opts) {
  auto* cmd = app.add_subcommand("schema", "Print the config's JSON Schema (draft 2020-12), for editors");
  cmd->add_option("-o,--out", opts.out_path, "Write the schema to this file instead of standard output");
}

int run_schema(const schema_command_options& opts) {
  const std::string text = config_json_schema().dump(2) + "\n";
  if (opts.out_path.empty()) {
    fmt::print("{}", text);
    return exit_ok;
  }
  std::ofstream out(opts.out_path, std::ios::binary);
  out << text;
  if (!out.good()) throw input_error("--out", fmt::format("cannot write {}", opts.out_path));
  return exit_ok;
}

}  // namespace attnbench
