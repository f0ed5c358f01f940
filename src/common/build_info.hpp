// The harness's version and git commit, recorded at build time (cmake/build_info.cmake).
#pragma once

namespace attnbench {
const char* harness_version();
const char* harness_git_commit();  // short hash, "-dirty" when built from uncommitted changes
}  // namespace attnbench
