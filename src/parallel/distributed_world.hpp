// The ranks of a multi-process run on PyTorch's own distributed runtime (c10d): they meet through
// a TCPStore that rank 0 serves, and talk through ProcessGroupGloo (CPU) or ProcessGroupNCCL
// (CUDA). Every rank also keeps a heartbeat counter in the store, so a rank that waits — for the
// others to join, or while rank 0 runs the single-process variants — can tell a busy rank from a
// dead or hung one and name it, instead of hanging.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <torch/torch.h>

#include "config/config.hpp"
#include "parallel/rank_env.hpp"

namespace c10d {
class Store;
class Backend;
}  // namespace c10d

namespace attnbench {

// A rank died, hung, never joined, or a collective failed: the run cannot finish. main() maps it
// to exit status 5; no report is written.
class distributed_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class distributed_world {
 public:
  // Joins the other ranks; throws distributed_error naming the ranks that have not joined within
  // cfg.timeout_s, input_error when rank 0's port is taken.
  distributed_world(const rank_env& env, const distributed_config& cfg, torch::Device device);
  // Shuts the process group down explicitly (aborts it once anything failed), then stops the
  // heartbeat.
  ~distributed_world();
  distributed_world(const distributed_world&) = delete;
  distributed_world& operator=(const distributed_world&) = delete;

  int rank() const { return env_.rank; }
  int size() const { return env_.world_size; }
  const rank_env& env() const { return env_; }
  const std::string& backend() const { return backend_name_; }  // "gloo" | "nccl"
  const std::vector<std::string>& hosts() const { return hosts_; }  // each rank's host name
  std::string where() const;  // "127.0.0.1:29500", for messages

  // Every rank reaches `tag` (unique per call site and pass). Waits as long as the ranks not yet
  // there keep their heartbeat; one silent for timeout_s → distributed_error naming it.
  void meet(const std::string& tag);
  // Rank 0's `value` on every rank (the others' is ignored), through the store, waiting as meet().
  bool agree(const std::string& tag, bool value);
  // Tells the other ranks this one is failing with `what`, so that a rank waiting for it stops at
  // once with that message instead of after the timeout. Never throws.
  void announce_failure(const std::string& what) noexcept;
  // A c10d barrier, within the collective timeout.
  void barrier();
  // Each rank's vector (all the same length), rank by rank.
  std::vector<std::vector<double>> all_gather(const std::vector<double>& mine);
  // Each rank's (n_r, C) float rows (n_r may differ), rank by rank, on the CPU.
  std::vector<torch::Tensor> all_gather_rows(const torch::Tensor& mine);

 private:
  void join_and_connect(const distributed_config& cfg, std::chrono::milliseconds timeout);
  [[noreturn]] void fail(const std::string& during, const std::string& what);
  void wait_for(const std::vector<std::string>& keys, const std::string& waiting_for);
  std::vector<int> silent_ranks(std::chrono::milliseconds window);
  void heartbeat_loop();

  rank_env env_;
  double timeout_s_;
  torch::Device device_;
  std::string backend_name_;
  std::vector<std::string> hosts_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Store> heartbeat_store_;  // its own connection: the loop runs on a thread
  c10::intrusive_ptr<c10d::Backend> group_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> failed_{false};  // a collective or a rank failed: teardown aborts, never waits
  std::thread heartbeat_;
};

}  // namespace attnbench
