// A hook every rank of a multi-process variant calls at the start of each pass, once the ranks
// have met: for a program that must act at a known point of a distributed run. None is set by
// default and the attnbench binary never sets one; the test-hooks binary (tests/hooks/) sets one
// that kills a rank mid-run, so the suite can prove a lost rank ends the run in bounded time.
#pragma once

#include <cstdint>

namespace attnbench {

// rank: this process's rank; pass: the variant's passes counted from 1 (1 is the check pass).
using rank_pass_hook = void (*)(int rank, int64_t pass);

// Sets the hook (nullptr removes it). Set it before the run starts: it is read on every pass.
void set_rank_pass_hook(rank_pass_hook hook);
rank_pass_hook current_rank_pass_hook();  // nullptr when none is set

// A hook each rank calls in distributed_world::meet, after announcing itself at the meeting and
// before waiting for the others (tag: the meeting's name). The test-hooks binary's sets one that
// holds a rank there, so the suite can prove rank 0 never leaves (closing the store) before the
// others have seen the meeting complete.
using rank_meet_hook = void (*)(int rank, const char* tag);
void set_rank_meet_hook(rank_meet_hook hook);
rank_meet_hook current_rank_meet_hook();  // nullptr when none is set

}  // namespace attnbench
