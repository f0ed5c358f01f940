#include "report/file_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "common/error.hpp"

namespace attnbench {
namespace fs = std::filesystem;

void write_file_atomic(const fs::path& path, const std::string& contents) {
  const fs::path temp = path.string() + ".tmp-" + std::to_string(::getpid());
  auto fail = [&](const std::string& reason) {
    std::error_code ignored;  // already failing; the first error is the one to report
    fs::remove(temp, ignored);
    throw input_error(fmt::format("cannot write {}: {}", path.string(), reason));
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail(std::strerror(errno));
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) fail(std::strerror(errno));
    out.close();
    if (!out) fail(std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) fail(ec.message());
}

void write_output_file(const fs::path& path, const std::string& contents) {
  const fs::path dir = path.parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) throw input_error(fmt::format("cannot create directory {}: {}", dir.string(), ec.message()));
  write_file_atomic(path, contents);
}

std::vector<problem> output_problems(const std::vector<fs::path>& files, bool force, const std::string& where,
                                     const std::string& option) {
  std::vector<problem> problems;
  std::set<fs::path> unwritable;  // one problem per directory, however many files go there
  for (const auto& f : files) {
    const fs::path dir = f.parent_path();
    if (unwritable.count(dir)) continue;
    fs::path probe = dir;
    std::error_code ec;
    while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
    if (probe.empty()) probe = ".";
    if (!fs::is_directory(probe, ec) || ::access(probe.c_str(), W_OK) != 0) {
      problems.push_back({where, fmt::format("{} is not writable ({} is not a writable directory)",
                                             dir.empty() ? "." : dir.string(), probe.string())});
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
  for (size_t i = 0; i < writers.size(); ++i) write_file_atomic(dir / writers[i]->file_name(), rendered[i]);
}

}  // namespace attnbench
