// Writing report files so that a crash or a full disk never leaves a half-written file, and
// existing results are never overwritten by accident.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/error.hpp"
#include "report/result.hpp"
#include "report/writer_base.hpp"

namespace attnbench {

// Writes `contents` to "<path>.tmp-<pid>" in the same directory, then renames it over `path`
// (atomic on POSIX within one file system). On failure removes the temporary file and throws
// input_error naming the path and the system's reason.
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

// A set of files written together: every temporary file first, then the renames, so a failure
// (a full disk) leaves none of the set behind, not the first files without the rest.
void write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files);

// For a file another library writes (the profiler's trace): it writes temporary_path_for(path),
// then commit_written_file renames it over `path`, or removes it and throws input_error.
std::filesystem::path temporary_path_for(const std::filesystem::path& path);
void commit_written_file(const std::filesystem::path& temp, const std::filesystem::path& path);

// write_file_atomic into a directory created first when missing (with its parents): for output
// paths the user names, such as --junit FILE, whose directory preflight_outputs accepted.
void write_output_file(const std::filesystem::path& path, const std::string& contents);

// Everything that could stop output files from being written, checked before any work starts (a
// long benchmark must not end in "cannot write"): the nearest existing ancestor of each file's
// directory must be a writable directory, and unless `force` no file may exist. Returns every
// problem, with JSON path or option `where` (e.g. "output.dir", "--junit"); `option` is the flag
// to name for choosing another place (e.g. "--out"). Callers collect the problems of all their
// outputs and throw input_error once, so the user sees them together.
std::vector<problem> output_problems(const std::vector<std::filesystem::path>& files, bool force,
                                     const std::string& where, const std::string& option);

// Writes one file per writer into `dir` (created if missing). Unless `force`, throws
// input_error before writing anything when any target file already exists. All files are
// rendered before the first is written, so a rendering error leaves nothing behind.
void write_reports(const run_result& result, const std::vector<std::unique_ptr<writer_base>>& writers,
                   const std::filesystem::path& dir, bool force);

}  // namespace attnbench
