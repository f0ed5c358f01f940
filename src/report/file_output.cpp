#include "report/file_output.hpp"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "common/error.hpp"

namespace attnbench {
namespace fs = std::filesystem;

namespace {

fs::path temp_of(const fs::path& path) { return path.string() + ".tmp-" + std::to_string(::getpid()); }

// ATTNBENCH_TEST_WRITE_FAULT=ERRNO[:TEXT] (tests only): a write to a file whose path contains TEXT
// (any file when absent) fails part way with that error (ENOSPC, EIO, EROFS), as a full disk would.
int injected_fault(const fs::path& path) {
  const char* spec = std::getenv("ATTNBENCH_TEST_WRITE_FAULT");
  if (!spec || !*spec) return 0;
  const std::string s(spec);
  const auto colon = s.find(':');
  const std::string name = s.substr(0, colon), text = colon == std::string::npos ? "" : s.substr(colon + 1);
  if (!text.empty() && path.string().find(text) == std::string::npos) return 0;
  if (name == "ENOSPC") return ENOSPC;
  if (name == "EROFS") return EROFS;
  return EIO;
}

// Writes `contents` to `temp`; on failure removes it and throws input_error naming `path`.
void write_temp(const fs::path& temp, const fs::path& path, const std::string& contents) {
  auto fail = [&](const std::string& reason) {
    std::error_code ignored;  // already failing; the first error is the one to report
    fs::remove(temp, ignored);
    throw input_error(fmt::format("cannot write {}: {}", path.string(), reason));
  };
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) fail(std::strerror(errno));
  const int fault = injected_fault(path);
  const std::size_t n = fault ? contents.size() / 2 : contents.size();  // a fault strikes part way
  out.write(contents.data(), static_cast<std::streamsize>(n));
  out.flush();
  if (fault) {
    out.close();
    fail(std::strerror(fault));
  }
  if (!out) fail(std::strerror(errno));
  out.close();
  if (!out) fail(std::strerror(errno));
}

}  // namespace

void write_file_atomic(const fs::path& path, const std::string& contents) {
  write_files_atomic({{path, contents}});
}

void write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files) {
  std::vector<fs::path> written;
  const auto remove_written = [&] {
    std::error_code ignored;
    for (const auto& t : written) fs::remove(t, ignored);
  };
  try {
    for (const auto& [path, contents] : files) {
      write_temp(temp_of(path), path, contents);
      written.push_back(temp_of(path));
    }
  } catch (...) {
    remove_written();  // none of the set is left: not the first files without the rest
    throw;
  }
  for (const auto& [path, contents] : files) {
    std::error_code ec;
    fs::rename(temp_of(path), path, ec);
    if (ec) {
      remove_written();
      throw input_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
  }
}

void commit_written_file(const fs::path& temp, const fs::path& path) {
  std::error_code ec;
  if (const int fault = injected_fault(path)) {
    fs::remove(temp, ec);
    throw input_error(fmt::format("cannot write {}: {}", path.string(), std::strerror(fault)));
  }
  if (!fs::exists(temp, ec)) throw input_error(fmt::format("cannot write {}: nothing was written", path.string()));
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw input_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  }
}

fs::path temporary_path_for(const fs::path& path) { return temp_of(path); }

void write_output_file(const fs::path& path, const std::string& contents) {
  const fs::path dir = path.parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) throw input_error(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  write_file_atomic(path, contents);
}

namespace {

// Why files cannot be created in `dir`, or "" when they can, found by trying what `run` will do:
// create the first missing directory of the path (and remove it again), or, when `dir` exists,
// a file in it (removed again). Permission bits alone pass a path under /proc or /sys for root,
// where every mkdir fails; only trying tells. Leaves nothing behind.
std::string uncreatable_reason(const fs::path& dir) {
  std::error_code ec;
  fs::path existing = dir.empty() ? fs::path(".") : dir, first_missing;
  while (!existing.empty() && !fs::exists(existing, ec)) {
    first_missing = existing;
    existing = existing.parent_path();
  }
  if (existing.empty()) existing = ".";
  if (!fs::is_directory(existing, ec)) return fmt::format("{} is not a writable directory", existing.string());
  if (!first_missing.empty()) {
    if (::mkdir(first_missing.c_str(), 0777) != 0)
      return fmt::format("cannot create {}: {}", first_missing.string(), std::strerror(errno));
    ::rmdir(first_missing.c_str());
    return "";
  }
  const fs::path probe = existing / fmt::format(".attnbench-probe-{}", ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return fmt::format("{} is not a writable directory ({})", existing.string(), std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

}  // namespace

std::vector<problem> output_problems(const std::vector<fs::path>& files, bool force, const std::string& where,
                                     const std::string& option) {
  std::vector<problem> problems;
  std::set<fs::path> unwritable;  // one problem per directory, however many files go there
  for (const auto& f : files) {
    const fs::path dir = f.parent_path();
    if (unwritable.count(dir)) continue;
    std::error_code ec;
    if (const std::string why = uncreatable_reason(dir); !why.empty()) {
      problems.push_back({where, fmt::format("{} is not writable ({})", dir.empty() ? "." : dir.string(), why)});
      unwritable.insert(dir);
      continue;
    }
    if (!force && fs::exists(f, ec))
      problems.push_back(
          {where, fmt::format("{} exists from an earlier run; pass --force to overwrite, or choose "
                              "another {}",
                              f.string(), option)});
  }
  return problems;
}

void write_reports(const run_result& result, const std::vector<std::unique_ptr<writer_base>>& writers,
                   const fs::path& dir, bool force) {
  if (!force) {
    for (const auto& w : writers) {
      const fs::path target = dir / w->file_name();
      std::error_code ec;
      if (fs::exists(target, ec) || ec)
        throw input_error(
            fmt::format("{} exists; pass --force to overwrite, or choose another --out", target.string()));
    }
  }
  std::vector<std::string> rendered;
  for (const auto& w : writers) {
    std::ostringstream out;
    w->write(result, out);
    rendered.push_back(out.str());
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw input_error(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  std::vector<std::pair<fs::path, std::string>> files;
  for (size_t i = 0; i < writers.size(); ++i) files.emplace_back(dir / writers[i]->file_name(), std::move(rendered[i]));
  write_files_atomic(files);
}

}  // namespace attnbench
