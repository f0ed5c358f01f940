#include "report/file_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
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
