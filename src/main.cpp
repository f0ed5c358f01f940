// attnbench's entry point: wires the subcommands and maps exceptions to the documented exit
// codes (README "Exit status"). Nothing else happens here. tests/CMakeLists.txt compiles it a
// second time with ATTNBENCH_TEST_HOOKS=1 as attnbench_testhooks, the CLI plus the test-only
// hooks; the attnbench binary has none.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "cli/ab_command.hpp"
#include "cli/attention_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/history_command.hpp"
#include "cli/launch_command.hpp"
#include "cli/profile_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/schema_command.hpp"
#include "cli/serve_command.hpp"
#include "cli/study_command.hpp"
#include "cli/validate_command.hpp"
#include "common/build_info.hpp"
#include "common/error.hpp"
#include "parallel/distributed_world.hpp"
#if ATTNBENCH_TEST_HOOKS
#include "install_test_hooks.hpp"  // tests/hooks/: only in attnbench_testhooks, built with the tests
#endif

int main(int argc, char** argv) {
  using namespace attnbench;
  CLI::App app{"attnbench: measured, output-checked speedups of transformer inference optimisations"};
  app.set_version_flag("--version", std::string("attnbench ") + harness_version() + " (" + harness_git_commit() + ")");
  app.require_subcommand(1);
  run_command_options run_opts;
  validate_command_options validate_opts;
  compare_command_options compare_opts;
  profile_command_options profile_opts;
  attention_command_options attention_opts;
  launch_command_options launch_opts;
  ab_command_options ab_opts;
  serve_command_options serve_opts;
  history_command_options history_opts;
  report_command_options report_opts;
  study_command_options study_opts;
  schema_command_options schema_opts;
  setup_run(app, run_opts);
  setup_validate(app, validate_opts);
  setup_compare(app, compare_opts);
  setup_profile(app, profile_opts);
  setup_attention(app, attention_opts);
  setup_launch(app, launch_opts);
  setup_ab(app, ab_opts);
  setup_serve(app, serve_opts);
  setup_history(app, history_opts);
  setup_report(app, report_opts);
  setup_study(app, study_opts);
  setup_schema(app, schema_opts);
#if ATTNBENCH_TEST_HOOKS
  install_test_hooks(app, run_opts, serve_opts);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_bad_input;
  }
  try {
    if (app.got_subcommand("run")) return run_run(run_opts);
    if (app.got_subcommand("validate")) return run_validate(validate_opts);
    if (app.got_subcommand("compare")) return run_compare(compare_opts);
    if (app.got_subcommand("profile")) return run_profile(profile_opts);
    if (app.got_subcommand("attention")) return run_attention(attention_opts);
    if (app.got_subcommand("launch")) return run_launch(launch_opts);
    if (app.got_subcommand("ab")) return run_ab(ab_opts);
    if (app.got_subcommand("serve")) return run_serve(serve_opts);
    if (app.got_subcommand("history")) return run_history(history_opts);
    if (app.got_subcommand("report")) return run_report(report_opts);
    if (app.got_subcommand("study")) return run_study(study_opts);
    if (app.got_subcommand("schema")) return run_schema(schema_opts);
  } catch (const input_error& e) {
    for (const auto& p : e.problems()) fmt::print(stderr, "error: {}\n", p.to_string());
    return exit_bad_input;
  } catch (const distributed_error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_distributed;
  } catch (const c10::Error& e) {
    fmt::print(stderr, "error (LibTorch): {}\n", e.what_without_backtrace());
    return exit_internal;
  } catch (const std::bad_alloc&) {
    // Outside a variant (a variant's own is its OOM row): building the model or the workload.
    fmt::print(stderr,
               "error: out of memory: the system refused an allocation while setting up the run (the model or the "
               "workload is too large for this machine; `attnbench validate` estimates what a config needs)\n");
    return exit_internal;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return exit_internal;
  }
  return exit_bad_input;
}
