// Turns output format names into writers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "report/writer_base.hpp"

namespace attnbench {

// One writer per name, in the order given: "json", "csv", "md", "html", "svg". "md" brings the svg
// writer with it (right after it, unless "svg" is listed too): report.md shows throughput.svg,
// so whoever asks for the report gets its chart. Unknown names or duplicates throw input_error.
std::vector<std::unique_ptr<writer_base>> make_writers(const std::vector<std::string>& formats);

// "json,md,html" → {"json", "md", "html"}, each name checked by make_writers' rules; an empty
// item or an unknown or repeated name throws input_error naming `option`.
std::vector<std::string> split_formats(const std::string& list, const std::string& option);

}  // namespace attnbench
