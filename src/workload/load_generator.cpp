#include "workload/load_generator.hpp"

namespace attnbench {

load_clock::time_point load_time(load_clock::time_point t0, double s) {
  return t0 + std::chrono::duration_cast<load_clock::duration>(std::chrono::duration<double>(s));
}

load_generator::load_generator(const std::vector<arrival>& arrivals, const dataset& data, load_clock::time_point t0)
    : thread_([this, &arrivals, &data, t0] { deliver(arrivals, data, t0); }) {}

load_generator::~load_generator() {
  {
    const std::lock_guard<std::mutex> lock(mutex);
    stop_ = true;
  }
  stopped_.notify_all();
  thread_.join();
}

void load_generator::deliver(const std::vector<arrival>& arrivals, const dataset& data, load_clock::time_point t0) {
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    const auto len = static_cast<int64_t>(data.samples[static_cast<std::size_t>(arrivals[i].sample)].size());
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (stopped_.wait_until(lock, load_time(t0, arrivals[i].t_s), [&] { return stop_; })) return;
      // The arrival time is the scheduled one: a late wake-up of this thread counts as queueing.
      inbox.push_back({static_cast<int64_t>(i), arrivals[i].sample, len, arrivals[i].t_s});
    }
    wake.notify_one();
  }
  {
    const std::lock_guard<std::mutex> lock(mutex);
    all_arrived = true;
  }
  wake.notify_one();
}

}  // namespace attnbench
