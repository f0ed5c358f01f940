#include "parallel/rank_pass_hook.hpp"

#include <atomic>

namespace attnbench {
namespace {

std::atomic<rank_pass_hook> hook{nullptr};
std::atomic<rank_meet_hook> meet_hook{nullptr};

}  // namespace

void set_rank_pass_hook(rank_pass_hook h) { hook.store(h); }

rank_pass_hook current_rank_pass_hook() { return hook.load(); }

void set_rank_meet_hook(rank_meet_hook h) { meet_hook.store(h); }

rank_meet_hook current_rank_meet_hook() { return meet_hook.load(); }

}  // namespace attnbench
