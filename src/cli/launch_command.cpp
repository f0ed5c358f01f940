#include "cli/launch_command.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.hpp"
#include "config/config_parser.hpp"
#include "runner/config_checks.hpp"
#include "core/device.hpp"

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto term_grace = 5s;  // after SIGTERM, before SIGKILL

volatile std::sig_atomic_t interrupted = 0;
volatile std::sig_atomic_t signals_received = 0;
void on_signal(int sig) {
  interrupted = sig;
  signals_received = signals_received + 1;
}

// A port that is free on this host now (the kernel's pick), as torchrun's standalone mode does.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("socket(): {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    throw std::runtime_error(fmt::format("finding a free port: {}", std::strerror(errno)));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "stopped";
}

pid_t start_rank(const launch_command_options& opts, int rank, int port) {
  std::vector<std::string> args{"/proc/self/exe", "run", opts.config_path};
  if (!opts.out.empty()) args.insert(args.end(), {"--out", opts.out});
  if (opts.force) args.emplace_back("--force");
  if (opts.save_outputs) args.emplace_back("--save-outputs");
  if (!opts.junit.empty()) args.insert(args.end(), {"--junit", opts.junit});
  if (opts.quiet) args.emplace_back("--quiet");
  if (opts.verbose) args.emplace_back("--verbose");
  for (auto& a : monitor_arguments(opts.monitor, rank)) args.push_back(std::move(a));
  // Rank 0 reports for every rank: its scalars are the run's.
  if (rank == 0 && !opts.monitor.tensorboard.empty()) args.insert(args.end(), {"--tensorboard", opts.monitor.tensorboard});
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork(): {}", std::strerror(errno)));
  if (pid > 0) return pid;
  // The rank: dies with the launcher, so no rank outlives it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(exit_distributed);
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(opts.nproc).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(opts.nproc).c_str(), 1);
  setenv("MASTER_ADDR", opts.master_addr.c_str(), 1);
  setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  fmt::print(stderr, "error: attnbench launch: could not start rank {}: {}\n", rank, std::strerror(errno));
  _exit(exit_internal);
}

}  // namespace

void setup_launch(CLI::App& app, launch_command_options& opts) {
  auto* cmd = app.add_subcommand("launch", "Start N local ranks of `attnbench run` (as torchrun does) and supervise "
                                           "them");
  cmd->add_option("--nproc", opts.nproc, "Ranks to start on this host")->required()->check(CLI::Range(1, 1024));
  cmd->add_option("--master-addr", opts.master_addr, "Address rank 0 serves the rendezvous store on")
      ->capture_default_str();
  cmd->add_option("--master-port", opts.master_port, "Its port (default: a free one)")->check(CLI::Range(1, 65535));
  cmd->add_option("config", opts.config_path, "Experiment config (JSON)")->required();
  cmd->add_option("--out", opts.out, "Output directory (overrides the config's output.dir)");
  cmd->add_flag("--force", opts.force, "Overwrite result files of an earlier run in the output directory");
  cmd->add_flag("--save-outputs", opts.save_outputs, "Also write each variant's logits as outputs/<variant>.npy");
  cmd->add_option("--junit", opts.junit, "Also write a JUnit XML report");
  cmd->add_flag("-q,--quiet", opts.quiet, "Print only the table and errors");
  cmd->add_flag("-v,--verbose", opts.verbose, "Print each step on stderr");
  add_monitor_options(*cmd, opts.monitor, /*tensorboard=*/true);
}

int run_launch(const launch_command_options& opts) {
  // Validated once here, so a bad config is one message, not one per rank.
  const config cfg = load_checked_config(opts.config_path, detect_device_caps());
  monitor_arguments(opts.monitor, opts.nproc - 1);  // the last rank's metrics port must exist too
  const auto grace = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(cfg.distributed.timeout_s));
  const int port = opts.master_port > 0 ? opts.master_port : free_port();
  if (!opts.quiet)
    fmt::print(stderr, "attnbench launch: {} ranks, rendezvous at {}:{}\n", opts.nproc, opts.master_addr, port);

  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::map<pid_t, int> running;  // pid → rank
  for (int r = 0; r < opts.nproc; ++r) running[start_rank(opts, r, port)] = r;

  int exit_status = exit_ok;
  bool failed = false;
  clock_type::time_point give_up{};  // once a rank has failed: when the others are stopped
  bool termed = false;
  bool forwarded = false, killed_now = false;
  while (!running.empty()) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0 && running.count(pid)) {
      const int rank = running[pid];
      running.erase(pid);
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !failed) {
        failed = true;
        exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : exit_distributed;
        give_up = clock_type::now() + grace;
        fmt::print(stderr, "attnbench launch: rank {} {}; waiting up to {} s for the other ranks to stop\n", rank,
                   describe_status(status), cfg.distributed.timeout_s);
      } else if (!ok && !opts.quiet) {
        fmt::print(stderr, "attnbench launch: rank {} {}\n", rank, describe_status(status));
      }
      continue;
    }
    if (interrupted && !forwarded) {
      // Every rank gets the signal: they stop together at the next round (rank 0 decides, through
      // the round agreement) and rank 0 writes the reports, marked incomplete. They get the
      // distributed timeout to do so, then SIGKILL; a second signal kills them at once.
      forwarded = true;
      for (const auto& [p, rank] : running) kill(p, interrupted);
      if (!opts.quiet)
        fmt::print(stderr, "attnbench launch: {} forwarded to {} rank(s); waiting up to {} s for their reports\n",
                   strsignal(interrupted), running.size(), cfg.distributed.timeout_s);
      if (!failed) {
        failed = true;
        exit_status = 128 + interrupted;
        give_up = clock_type::now() + grace;
        termed = true;  // the next step after the grace is SIGKILL
      }
    }
    if (signals_received > 1 && !killed_now) {
      killed_now = true;
      give_up = clock_type::now();
      termed = true;
    }
    if (failed && !running.empty() && clock_type::now() >= give_up) {
      const int sig = termed ? SIGKILL : SIGTERM;
      for (const auto& [p, rank] : running) {
        if (!opts.quiet) fmt::print(stderr, "attnbench launch: stopping rank {} ({})\n", rank, strsignal(sig));
        kill(p, sig);
      }
      termed = true;
      give_up = clock_type::now() + term_grace;
    }
    std::this_thread::sleep_for(20ms);
  }
  return exit_status;
}

}  // namespace attnbench
