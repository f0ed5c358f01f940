#include "parallel/distributed_world.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#if defined(ATTNBENCH_WITH_CUDA) && defined(USE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define ATTNBENCH_WITH_NCCL 1
#endif

#include "common/error.hpp"
#include "parallel/rank_pass_hook.hpp"

namespace attnbench {
namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto heartbeat_period = 200ms;
constexpr auto poll_period = 20ms;
// After a collective fails, how long a rank's heartbeat must stand still to be named as the one
// that stopped (a live rank beats every heartbeat_period).
constexpr auto suspicion_window = 2s;

std::string host_name() {
  char buf[256] = {};
  return gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : "unknown";
}

std::string text_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

std::string joined_key(int r) { return fmt::format("attnbench/joined/{}", r); }
std::string heartbeat_key(int r) { return fmt::format("attnbench/heartbeat/{}", r); }
std::string failure_key(int r) { return fmt::format("attnbench/failed/{}", r); }

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", fmt::join(ranks, ", "));
}

bool loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

}  // namespace

distributed_world::distributed_world(const rank_env& env, const distributed_config& cfg, torch::Device device)
    : env_(env), timeout_s_(cfg.timeout_s), device_(device) {
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000));
  c10d::TCPStoreOptions opts;
  opts.port = static_cast<std::uint16_t>(env_.master_port);
  opts.isServer = env_.rank == 0;
  opts.waitWorkers = false;  // the join below waits, and can name who is missing
  opts.timeout = timeout;
  try {
    store_ = c10::make_intrusive<c10d::TCPStore>(env_.master_addr, opts);
  } catch (const std::exception& e) {
    const std::string what = text_of(e);
    if (env_.rank == 0 && (what.find("EADDRINUSE") != std::string::npos || what.find("already in use") != std::string::npos))
      throw input_error("MASTER_PORT", fmt::format("port {} is already in use on this host, so rank 0 cannot serve "
                                                   "the rendezvous store there; pick a free one (attnbench launch "
                                                   "--master-port, or MASTER_PORT)",
                                                   env_.master_port));
    throw distributed_error(
        env_.rank == 0
            ? fmt::format("rank 0 could not serve the rendezvous store on port {}: {}", env_.master_port, what)
            : fmt::format("rank {} could not reach rank 0's rendezvous store at {} within {} s: is rank 0 running, "
                          "and are MASTER_ADDR and MASTER_PORT the same on every rank? ({})",
                          env_.rank, where(), timeout_s_, what));
  }
  opts.isServer = false;
  heartbeat_store_ = c10::make_intrusive<c10d::TCPStore>(env_.master_addr, opts);
  heartbeat_store_->add(heartbeat_key(env_.rank), 1);
  heartbeat_ = std::thread([this] { heartbeat_loop(); });
  // From here on a failure must stop the heartbeat thread before the exception leaves.
  try {
    join_and_connect(cfg, timeout);
  } catch (...) {
    stopping_ = true;
    heartbeat_.join();
    throw;
  }
}

void distributed_world::join_and_connect(const distributed_config& cfg, std::chrono::milliseconds timeout) {

  // Join: every rank names its host; the ones missing after the timeout are named.
  store_->set(joined_key(env_.rank), host_name());
  std::vector<std::string> keys;
  for (int r = 0; r < env_.world_size; ++r) keys.push_back(joined_key(r));
  const auto deadline = clock_type::now() + timeout;
  try {
    while (!store_->check(keys)) {
      if (clock_type::now() > deadline) {
        std::vector<int> missing;
        for (int r = 0; r < env_.world_size; ++r)
          if (!store_->check({joined_key(r)})) missing.push_back(r);
        throw distributed_error(fmt::format("{} of {} never joined within {} s (rendezvous at {})",
                                            rank_list(missing), env_.world_size, timeout_s_, where()));
      }
      std::this_thread::sleep_for(poll_period);
    }
    for (int r = 0; r < env_.world_size; ++r) {
      const auto bytes = store_->get(joined_key(r));
      hosts_.emplace_back(bytes.begin(), bytes.end());
    }
  } catch (const distributed_error&) {
    throw;
  } catch (const std::exception& e) {
    fail("joining", text_of(e));
  }

  backend_name_ = cfg.backend == "auto" ? (device_.is_cuda() ? "nccl" : "gloo") : cfg.backend;
  const auto prefixed = c10::make_intrusive<c10d::PrefixStore>("attnbench/" + backend_name_, store_);
  try {
    if (backend_name_ == "nccl") {
#ifdef ATTNBENCH_WITH_NCCL
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = timeout;
      // The rank's own GPU (cuda:LOCAL_RANK, current since run_command's device guard), bound to
      // the group so its communicator and collectives never default to GPU 0.
      TORCH_CHECK(device_.is_cuda() && device_.has_index(), "the NCCL backend needs the rank's CUDA device; got ",
                  device_.str());
      group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, env_.rank, env_.world_size, o);
      group_->setBoundDeviceId(device_);
#else
      throw input_error("distributed.backend", "this build of attnbench has no NCCL: use \"gloo\"");
#endif
    } else {
      auto o = c10d::ProcessGroupGloo::Options::create();
      o->timeout = timeout;
      // GLOO_SOCKET_IFNAME picks the interface as in PyTorch; one host talks over loopback.
      const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
      const bool one_host = std::all_of(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h == hosts_[0]; });
      if (ifname && *ifname)
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (one_host && loopback(env_.master_addr))
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, env_.rank, env_.world_size, o);
    }
  } catch (const input_error&) {
    throw;
  } catch (const std::exception& e) {
    fail(fmt::format("forming the {} process group", backend_name_), text_of(e));
  }
}

distributed_world::~distributed_world() {
  // The process group first, explicitly, while the store it may write to still stands: left to its
  // destructor, ProcessGroupNCCL tears its communicators down without a shutdown (PyTorch warns
  // that this can hang, and it would be the last thing the run does). A healthy world shuts down
  // (its pending collectives flushed, then ncclCommDestroy); one that failed aborts instead
  // (ncclCommAbort), since a dead peer would leave a flush waiting for it; so does a world torn
  // down by an exception on its way out. Gloo's are no-ops.
  if (group_) {
    try {
      if (failed_ || std::uncaught_exceptions() > 0)
        group_->abort();
      else
        group_->shutdown();
    } catch (const std::exception&) {
      // tearing down: nothing left to report to
    }
    group_.reset();
  }
  stopping_ = true;
  if (heartbeat_.joinable()) heartbeat_.join();
}

std::string distributed_world::where() const { return fmt::format("{}:{}", env_.master_addr, env_.master_port); }

void distributed_world::heartbeat_loop() {
  while (!stopping_) {
    std::this_thread::sleep_for(heartbeat_period);
    try {
      heartbeat_store_->add(heartbeat_key(env_.rank), 1);
    } catch (const std::exception&) {
      return;  // the store is gone (rank 0 exited): the main thread finds out on its next call
    }
  }
}

std::vector<int> distributed_world::silent_ranks(std::chrono::milliseconds window) {
  std::map<int, int64_t> first;
  for (int r = 0; r < env_.world_size; ++r) first[r] = store_->add(heartbeat_key(r), 0);
  std::this_thread::sleep_for(window);
  std::vector<int> silent;
  for (int r = 0; r < env_.world_size; ++r)
    if (r != env_.rank && store_->add(heartbeat_key(r), 0) == first[r]) silent.push_back(r);
  return silent;
}

void distributed_world::fail(const std::string& during, const std::string& what) {
  failed_ = true;
  std::string who;
  try {
    const auto silent = silent_ranks(std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min<std::chrono::duration<double>>(suspicion_window, std::chrono::duration<double>(timeout_s_))));
    who = silent.empty() ? "every other rank still has a heartbeat"
                         : fmt::format("{} stopped responding (no heartbeat)", rank_list(silent));
  } catch (const std::exception&) {
    who = env_.rank == 0 ? "the store is unreachable"
                         : fmt::format("rank 0, which serves the store at {}, is gone", where());
  }
  throw distributed_error(fmt::format("rank {}: {} failed: {}; {}", env_.rank, during, who, what));
}

void distributed_world::wait_for(const std::vector<std::string>& keys, const std::string& waiting_for) {
  std::map<int, std::pair<int64_t, clock_type::time_point>> beats;  // rank → (counter, when it last changed)
  auto next_check = clock_type::now();
  // Every way out but the loop's end is a lost or failed rank.
  struct mark_failed {
    std::atomic<bool>& failed;
    bool done = false;
    ~mark_failed() {
      if (!done) failed = true;
    }
  } failing{failed_};
  try {
    while (!store_->check(keys)) {
      const auto now = clock_type::now();
      if (now >= next_check) {
        next_check = now + heartbeat_period;
        for (int r = 0; r < env_.world_size; ++r) {
          if (r != env_.rank && store_->check({failure_key(r)})) {
            const auto why = store_->get(failure_key(r));
            throw distributed_error(fmt::format("rank {}: rank {} failed while this rank was waiting for {}: {}",
                                                env_.rank, r, waiting_for, std::string(why.begin(), why.end())));
          }
          const int64_t beat = store_->add(heartbeat_key(r), 0);
          auto it = beats.find(r);
          if (it == beats.end() || it->second.first != beat) {
            beats[r] = {beat, now};
          } else if (std::chrono::duration<double>(now - it->second.second).count() > timeout_s_) {
            throw distributed_error(fmt::format("rank {}: rank {} stopped responding (no heartbeat for {} s) while "
                                                "waiting for {}",
                                                env_.rank, r, timeout_s_, waiting_for));
          }
        }
      }
      std::this_thread::sleep_for(poll_period);
    }
    failing.done = true;
  } catch (const distributed_error&) {
    throw;
  } catch (const std::exception& e) {
    throw distributed_error(fmt::format("rank {}: lost the rendezvous store at {} while waiting for {}: rank 0, "
                                        "which serves it, has exited or is unreachable ({})",
                                        env_.rank, where(), waiting_for, text_of(e)));
  }
}

void distributed_world::meet(const std::string& tag) {
  const std::string prefix = "attnbench/meet/" + tag + "/";
  std::vector<std::string> keys;
  for (int r = 0; r < env_.world_size; ++r) keys.push_back(prefix + std::to_string(r));
  try {
    store_->set(keys[static_cast<std::size_t>(env_.rank)], std::string("1"));
  } catch (const std::exception& e) {
    throw distributed_error(fmt::format("rank {}: lost the rendezvous store at {}: rank 0 has exited ({})",
                                        env_.rank, where(), text_of(e)));
  }
  if (const rank_meet_hook hook = current_rank_meet_hook()) hook(env_.rank, tag.c_str());
  wait_for(keys, "the other ranks at " + tag);
  // Rank 0 serves the store: it leaves only once every other rank has seen the meeting complete,
  // or a rank still polling would find the store gone when rank 0 returns and exits.
  try {
    if (env_.rank != 0) store_->set(prefix + "passed/" + std::to_string(env_.rank), std::string("1"));
  } catch (const std::exception& e) {
    throw distributed_error(fmt::format("rank {}: lost the rendezvous store at {}: rank 0 has exited ({})",
                                        env_.rank, where(), text_of(e)));
  }
  if (env_.rank == 0 && env_.world_size > 1) {
    std::vector<std::string> passed;
    for (int r = 1; r < env_.world_size; ++r) passed.push_back(prefix + "passed/" + std::to_string(r));
    wait_for(passed, "the other ranks to leave " + tag);
  }
}

bool distributed_world::agree(const std::string& tag, bool value) {
  const std::string key = "attnbench/agree/" + tag;
  if (env_.rank == 0) {
    try {
      store_->set(key, std::string(value ? "1" : "0"));
    } catch (const std::exception& e) {
      fail("publishing " + tag, text_of(e));
    }
    return value;
  }
  wait_for({key}, "rank 0's decision on " + tag);
  const auto bytes = store_->get(key);
  return !bytes.empty() && bytes[0] == '1';
}

void distributed_world::announce_failure(const std::string& what) noexcept {
  failed_ = true;
  try {
    store_->set(failure_key(env_.rank), what);
  } catch (...) {
    // the store is gone too: the others find out from the heartbeat
  }
}

void distributed_world::barrier() {
  try {
    group_->barrier()->wait();
  } catch (const std::exception& e) {
    fail("a barrier", text_of(e));
  }
}

std::vector<std::vector<double>> distributed_world::all_gather(const std::vector<double>& mine) {
  const auto on = backend_name_ == "nccl" ? device_ : torch::Device(torch::kCPU);
  std::vector<at::Tensor> in{torch::tensor(mine, torch::kDouble).to(on)};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < env_.world_size; ++r) out[0].push_back(torch::empty_like(in[0]));
  try {
    group_->allgather(out, in)->wait();
  } catch (const std::exception& e) {
    fail("an all-gather", text_of(e));
  }
  std::vector<std::vector<double>> result;
  for (const auto& t : out[0]) {
    const auto c = t.to(torch::kCPU).contiguous();
    result.emplace_back(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  }
  return result;
}

std::vector<torch::Tensor> distributed_world::all_gather_rows(const torch::Tensor& mine) {
  // Rows differ per rank and all-gather wants equal shapes: pad to the longest, then cut.
  const auto rows = all_gather({static_cast<double>(mine.size(0)), static_cast<double>(mine.size(1))});
  int64_t longest = 0;
  for (const auto& r : rows) longest = std::max(longest, static_cast<int64_t>(r[0]));
  longest = std::max<int64_t>(longest, 1);  // no zero-size collective
  const auto width = mine.size(1);
  const auto on = backend_name_ == "nccl" ? device_ : torch::Device(torch::kCPU);
  auto padded = torch::zeros({longest, width}, torch::kFloat);
  padded.narrow(0, 0, mine.size(0)).copy_(mine);
  std::vector<at::Tensor> in{padded.to(on)};
  std::vector<std::vector<at::Tensor>> out(1);
  for (int r = 0; r < env_.world_size; ++r) out[0].push_back(torch::empty_like(in[0]));
  try {
    group_->allgather(out, in)->wait();
  } catch (const std::exception& e) {
    fail("gathering outputs", text_of(e));
  }
  std::vector<torch::Tensor> result;
  for (int r = 0; r < env_.world_size; ++r)
    result.push_back(out[0][static_cast<std::size_t>(r)].to(torch::kCPU).narrow(
        0, 0, static_cast<int64_t>(rows[static_cast<std::size_t>(r)][0])));
  return result;
}

}  // namespace attnbench
