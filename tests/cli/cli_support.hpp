// Shared by the CLI tests: run the real binary, read what it wrote, in a scratch directory.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace attnbench::testing {

struct command_result {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `PROGRAM ARGS` through the shell, with `env` (what env(1) takes before the command:
// "NAME=value …", "-u NAME") applied to its environment.
inline command_result run_program(const std::string& program, const std::string& args, const std::string& env = "") {
  const std::string cmd = (env.empty() ? "" : "env " + env + " ") + program + " " + args + " 2>&1";
  command_result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `attnbench ARGS`: the release binary CMake built, the one users run.
inline command_result run_cli(const std::string& args, const std::string& env = "") {
  return run_program(ATTNBENCH_BINARY, args, env);
}

// Runs `attnbench_testhooks ARGS`: the same CLI with the test-only hooks (tests/hooks/), built
// only with the tests: `run --test-perturb-outputs VARIANT` and ATTNBENCH_TEST_KILL_RANK.
inline command_result run_cli_with_test_hooks(const std::string& args, const std::string& env = "") {
  return run_program(ATTNBENCH_TEST_HOOKS_BINARY, args, env);
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writes `cfg` as dir/config.json and returns its path.
template <class Json>
inline std::filesystem::path write_config(const std::filesystem::path& dir, const Json& cfg) {
  const auto p = dir / "config.json";
  std::ofstream(p) << cfg.dump(2);
  return p;
}

// A fresh directory under the system temp dir, removed with everything in it.
struct temp_dir {
  std::filesystem::path path;
  temp_dir(const std::string& prefix, const std::string& tag)
      : path(std::filesystem::temp_directory_path() /
             ("attnbench_" + prefix + "_" + tag + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
};

}  // namespace attnbench::testing
