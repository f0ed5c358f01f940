// Parameter sweeps: a config's `sweep` block names axes (batch_size, max_length, …) and the values
// each takes; every combination is a point, and every point runs the experiment's variants.
//
// The grid (an axis: one name, many values) and the point (one value per axis) are separate
// types, as in llama-bench. A point is applied to the config document as JSON edits and the edited
// document goes through the ordinary parser, so a point is validated exactly like a config a user
// wrote by hand (config_parser.hpp: sweep_point_configs).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/error.hpp"

namespace attnbench {

// One swept parameter and its values, in the order given.
struct sweep_axis {
  std::string name;  // one of sweep_axis_names()
  std::vector<nlohmann::ordered_json> values;
};

struct sweep_config {
  std::vector<sweep_axis> axes;       // in the order the config lists them
  std::vector<std::string> variants;  // run only these (the baseline always runs); empty = all
};

// One point of the grid: a value per axis, in the axes' order.
struct sweep_point {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> params;
  // "batch_size=8 max_length=128": names output files and, in compare, the variants of the point.
  std::string label() const;
};

// Axes a sweep may name, and what each changes:
//   batch_size  every variant's batching.batch_size (static) or max_batch_size (dynamic)
//   max_tokens  every dynamic variant's batching.max_tokens
//   max_length  workload.max_length (a length distribution's max is clipped to it)
//   length      workload.lengths: the fixed length, or the lognormal median
//   samples     workload.samples
//   preset      model.preset
//   attention   every variant's attention ("naive" drops an sdpa_backend)
//   precision   every variant's precision
//   threads     threads
//   test        llama-bench's tests, for the generate scenario (see generate_test): the prompt
//               length and generate.max_new_tokens
const std::vector<std::string>& sweep_axis_names();
bool is_numeric_axis(const std::string& name);

// A llama-bench test, the `test` axis's values: "pp512" prefills one 512-token prompt per sample
// (workload.lengths fixed at 512, max_new_tokens 1: the prefill and its first token, no decode
// step); "tg128" decodes 128 tokens after the shortest prompt the workload allows (2 tokens,
// max_new_tokens 129: the first token comes from the prefill, the 128 after it from 128 decode
// steps). The grid's t/s is prefill_tokens_per_s for pp, decode_tokens_per_s for tg.
struct generate_test {
  bool prefill = true;  // pp; false: tg
  int64_t tokens = 0;
  std::string name() const;  // "pp512", "tg128"
};
// nullopt unless `text` is "pp" or "tg" followed by a decimal integer (pp ≥ 2: a prompt's
// shortest; tg ≥ 1).
std::optional<generate_test> parse_generate_test(const std::string& text);

// "128,256,512", "1-64*2" (1, 2, 4, … 64), "8-32+8" (8, 16, 24, 32), "16-19" (step 1) and lists of
// these ("1-4,8"). Values must be ≥ 1; a range must be ascending and grow each step. Throws
// input_error at `path` naming the bad piece.
std::vector<int64_t> parse_int_range(const std::string& text, const std::string& path);

// Reads the `sweep` block (at JSON path "sweep"); problems are appended to `problems`.
sweep_config read_sweep(const nlohmann::ordered_json& block, std::vector<problem>& problems);

// Every combination of the axes' values. Points are ordered so that set-up is reused: the axes
// that rebuild the model (preset) vary slowest, then threads (re-measures the matmul ceiling),
// then the others in the config's order, the last one fastest.
std::vector<sweep_point> expand_sweep(const sweep_config& sweep);

// The config document with the point's values written in (see sweep_axis_names), the `sweep`
// block removed and the variants filtered. Throws input_error when an axis cannot apply (length
// on a uniform distribution, a file workload, …), at "sweep.axes.<name>".
nlohmann::ordered_json apply_sweep_point(const nlohmann::ordered_json& doc, const sweep_config& sweep,
                                         const sweep_point& point, const std::string& baseline);

}  // namespace attnbench
