// The comparison as markdown: what `compare` prints on stdout and writes as compare.md, fit for
// a CI job summary ($GITHUB_STEP_SUMMARY). The verdict comes first, then the warnings, the
// per-variant table and the notes.
#pragma once

#include <string>

#include "report/comparison.hpp"

namespace attnbench {

std::string comparison_markdown(const comparison& c);

}  // namespace attnbench
