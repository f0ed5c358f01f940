// Writing report files so that a crash or a full disk never leaves a half-written file, and
// existing results are never overwritten by accident.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "report/result.hpp"
#include "report/writer_base.hpp"

namespace attnbench {

// Writes `contents` to "<path>.tmp-<pid>" in the same directory, then renames it over `path`
// (atomic on POSIX within one file system). On failure removes the temporary file and throws
// input_error naming the path and the system's reason.
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

// Writes one file per writer into `dir` (created if missing). Unless `force`, throws
// input_error before writing anything when any target file already exists. All files are
// rendered before the first is written, so a rendering error leaves nothing behind.
void write_reports(const run_result& result, const std::vector<std::unique_ptr<writer_base>>& writers,
                   const std::filesystem::path& dir, bool force);

}  // namespace attnbench
