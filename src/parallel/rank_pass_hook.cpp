#include "parallel/rank_pass_hook.hpp"

#include <atomic>

namespace attnbench {
namespace {

std::atomic<rank_pass_hook> hook{nullptr};

}  // namespace

void set_rank_pass_hook(rank_pass_hook h) { hook.store(h); }

rank_pass_hook current_rank_pass_hook() { return hook.load(); }

}  // namespace attnbench
