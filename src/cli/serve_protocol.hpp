// The line protocol between `attnbench ab` (the parent) and the `attnbench serve` children it
// starts, one per build (README "CI regression runs"). Versioned, so a parent never misreads a
// child of another build: the child's first line is
//   attnbench-serve <protocol version> <harness version> <git commit>
// then, once the config is loaded and the model built, `ready <variants> <samples> <real tokens>`
// (or `error <message>`, then it exits 2). Requests, one line each, every reply one line:
//   prepare I          → ok <flops per pass> <batches> | skip <reason> | fail <message>
//   check I FILE       → ok <rows> <cols>: its check-pass outputs, float32 row-major, in FILE
//   pass I warmup|timed → ok <seconds> [<batch ms> …]: one pass of variant I, timed by the child
//   quit               → bye, and it exits 0
// Any request may instead be answered `fail <message>` (the variant FAILs) or, for one it cannot
// parse, `error <message>`. Messages are one line.
#pragma once

#include <string>
#include <vector>

namespace attnbench::serve_protocol {

inline constexpr const char* greeting = "attnbench-serve";
inline constexpr int version = 1;

// Words of a line, split on spaces.
std::vector<std::string> split_words(const std::string& line);
// The words from index `from` on, joined by one space: a message's text.
std::string words_from(const std::vector<std::string>& words, std::size_t from);
// `text` on one line: newlines and carriage returns become spaces.
std::string one_line(std::string text);

}  // namespace attnbench::serve_protocol
