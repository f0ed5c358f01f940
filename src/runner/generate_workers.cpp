#include "runner/generate_workers.hpp"

#include <stdexcept>

#include <c10/util/Exception.h>
#include <fmt/format.h>

namespace attnbench {

generate_workers::generate_workers(const std::vector<int64_t>& threads) {
  for (std::size_t i = 0; i < threads.size(); ++i) workers_.push_back(std::make_unique<worker>());
  // One at a time: start_worker_thread restores the caller's count after each.
  for (std::size_t i = 0; i < threads.size(); ++i) {
    int seen = 0;
    workers_[i]->thread = start_worker_thread(threads[i], [this, i] { loop(i); }, &seen);
    workers_[i]->threads_seen = seen;
  }
}

generate_workers::~generate_workers() {
  rounds_.stop();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
}

void generate_workers::loop(std::size_t index) {
  worker& w = *workers_[index];
  for (;;) {
    round r;
    if (!rounds_.next_round(w.seen_round, r)) return;
    std::exception_ptr error;
    try {
      const c10::DebugInfoGuard adopt(r.context);
      (*r.work)(index, r.start);
    } catch (...) {
      error = std::current_exception();
    }
    rounds_.finish([&] { w.error = error; });
  }
}

double generate_workers::run(const job& j) {
  round r;
  r.context = capture_dispatch_context();
  r.work = &j;
  r.start = pass_clock::now();
  rounds_.run_round(r, static_cast<int64_t>(workers_.size()));
  const double seconds = seconds_since(r.start);
  rounds_.clear_context();  // the scope it carries may end with this round
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (!workers_[i]->error) continue;
    try {
      std::rethrow_exception(workers_[i]->error);
    } catch (const c10::Error& e) {
      throw std::runtime_error(fmt::format("worker {}: {}", i, e.what_without_backtrace()));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("worker {}: {}", i, e.what()));
    }
  }
  return seconds;
}

std::vector<int64_t> generate_workers::threads_seen() const {
  std::vector<int64_t> out;
  for (const auto& w : workers_) out.push_back(w->threads_seen);
  return out;
}

}  // namespace attnbench
