#include "report/make_writers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "report/csv_writer.hpp"
#include "report/html_writer.hpp"
#include "report/json_writer.hpp"
#include "report/markdown_writer.hpp"
#include "report/svg_writer.hpp"

namespace attnbench {

std::vector<std::unique_ptr<writer_base>> make_writers(const std::vector<std::string>& formats) {
  const auto listed = [&](const std::string& f) { return std::count(formats.begin(), formats.end(), f); };
  std::vector<std::unique_ptr<writer_base>> writers;
  for (const auto& f : formats) {
    if (listed(f) > 1) throw input_error(fmt::format("output format '{}' given more than once", f));
    if (f == "json") {
      writers.push_back(std::make_unique<json_writer>());
    } else if (f == "csv") {
      writers.push_back(std::make_unique<csv_writer>());
    } else if (f == "md") {
      // The report shows its chart, so the chart comes with it: a reference that never dangles.
      const svg_writer chart;
      writers.push_back(std::make_unique<markdown_writer>(chart.file_name()));
      if (listed("svg") == 0) writers.push_back(std::make_unique<svg_writer>());
    } else if (f == "svg") {
      writers.push_back(std::make_unique<svg_writer>());
    } else if (f == "html") {
      writers.push_back(std::make_unique<html_writer>());
    } else {
      throw input_error(fmt::format("unknown output format '{}'; expected json, csv, md, html or svg", f));
    }
  }
  return writers;
}

std::vector<std::string> split_formats(const std::string& list, const std::string& option) {
  std::vector<std::string> formats;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = list.find(',', from);
    std::string item = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) throw input_error(option, fmt::format("empty format name in \"{}\"", list));
    formats.push_back(item);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  try {
    make_writers(formats);
  } catch (const input_error& e) {
    throw input_error(option, e.what());
  }
  return formats;
}

}  // namespace attnbench
