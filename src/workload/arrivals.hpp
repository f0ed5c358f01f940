// When requests arrive in the server scenario, and which sample each one asks for.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace attnbench {

struct arrival {
  double t_s = 0;      // seconds after the scenario starts
  int64_t sample = 0;  // dataset index
};

// A seeded Poisson process at `rate` requests/s: exponential gaps, at most `requests` arrivals
// and none after `max_time_s`. Samples are taken in dataset order, wrapping around.
std::vector<arrival> poisson_arrivals(double rate, int64_t requests, double max_time_s, uint64_t seed,
                                      int64_t samples);

// A trace file: one "seconds sample_index" pair per line ('#' starts a comment). Throws
// input_error at path "server.trace" naming the line for an unsorted or negative time, a sample
// that does not exist, or a malformed line.
std::vector<arrival> read_trace(const std::string& path, int64_t samples);

// read_trace's parser, on a trace already opened; `path` only names it in messages. Separate so
// that tests/fuzz/fuzz_trace.cpp can feed it bytes without a file.
std::vector<arrival> parse_trace(std::istream& in, const std::string& path, int64_t samples);

}  // namespace attnbench
