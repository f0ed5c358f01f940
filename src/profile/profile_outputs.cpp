#include "profile/profile_outputs.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "report/file_output.hpp"

namespace fs = std::filesystem;

namespace attnbench {
namespace {

constexpr const char* trace_suffix = ".pt.trace.json";

bool is_tensorboard_trace(const fs::path& p) {
  const std::string name = p.filename().string();
  const std::string suffix = trace_suffix;
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::string safe_file_name(const std::string& name) {
  std::string safe = name;
  std::replace_if(
      safe.begin(), safe.end(),
      [](char c) {
        return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
      },
      '_');
  return safe;
}

fs::path variant_profile_dir(const fs::path& dir, const std::string& variant) {
  return dir / safe_file_name(variant);
}

fs::path tensorboard_run_dir(const fs::path& dir, const std::string& variant) {
  return dir / "tensorboard" / safe_file_name(variant);
}

std::string tensorboard_trace_name(const std::string& worker, int64_t timestamp_ms) {
  return fmt::format("{}.{}{}", worker, timestamp_ms, trace_suffix);
}

std::vector<fs::path> profile_output_files(const fs::path& dir, const std::vector<std::string>& variants) {
  std::vector<fs::path> files{dir / "profile.md", dir / "breakdown.md", dir / "breakdown.csv"};
  for (const auto& v : variants)
    for (const char* f : {"trace.json", "operators.md", "operators.csv"})
      files.push_back(variant_profile_dir(dir, v) / f);
  return files;
}

std::vector<problem> profile_output_problems(const fs::path& dir, const std::vector<std::string>& variants,
                                             bool force, const std::string& where,
                                             const std::string& option) {
  auto problems = output_problems(profile_output_files(dir, variants), force, where, option);
  if (force) return problems;
  for (const auto& v : variants) {
    std::error_code ec;
    const fs::path run = tensorboard_run_dir(dir, v);
    if (!fs::is_directory(run, ec)) continue;
    for (const auto& entry : fs::directory_iterator(run, ec))
      if (is_tensorboard_trace(entry.path())) {
        problems.push_back(
            {where, fmt::format("{} holds traces of an earlier profile; use --force to replace them, "
                                "or {} to write elsewhere",
                                run.string(), option)});
        break;
      }
  }
  return problems;
}

}  // namespace attnbench
