#include "report/json_reader.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

namespace attnbench {

nlohmann::ordered_json read_json_file(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw input_error(file, "cannot read: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(file, fmt::format("cannot read: {}", std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw input_error(file, fmt::format("cannot read: {}", std::strerror(errno)));
  try {
    return nlohmann::ordered_json::parse(text.str());
  } catch (const nlohmann::ordered_json::exception& e) {
    // A parse_error, or out_of_range for a number past a double's (e.g. 1e999). nlohmann's text is
    // "[json.exception.parse_error.101] parse error at line 3, column 5: …": the tag is dropped.
    std::string what = e.what();
    const auto tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    throw input_error(file, "invalid JSON: " + what);
  }
}

}  // namespace attnbench
