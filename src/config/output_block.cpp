// The `output` block: where the reports are written and in which formats.
#include <fmt/format.h>

#include <algorithm>

#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"

namespace attnbench::config_reading {
namespace {

// Every writer of the default set, then report.html (report/html_writer.hpp): on request only.
names format_names() {
  names allowed;
  for (auto f : defaults::formats) allowed.emplace_back(f);
  allowed.emplace_back("html");
  return allowed;
}

}  // namespace

std::shared_ptr<const block_schema> output_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Where the reports go, and in which formats";
  names formats;
  for (auto f : defaults::formats) formats.emplace_back(f);
  b->keys = {
      string_key("dir", "The output directory; default results/<name>; must be creatable and writable"),
      array_key("formats", choice_key("", format_names(), "A report format"),
                "The reports written: json, csv, md, and html on request")
          .by_default(formats)
          .with({{"minItems", 1}, {"uniqueItems", true}}),
  };
  return b;
}

void config_reader::read_output() {
  output_config& oc = cfg_.output;
  oc.dir = std::string(defaults::output_dir_prefix) + cfg_.name;
  for (auto f : defaults::formats) oc.formats.emplace_back(f);
  object_reader o = root_.object("output");
  o.check_keys();
  auto dir = o.string("dir");
  assign(oc.dir, dir);
  if (dir || (!o.has("dir") && !cfg_.name.empty())) {
    if (auto why = unwritable_reason(oc.dir)) o.add("dir", *why);
  }
  const ordered_json* formats = o.find("formats");
  if (!formats) return;
  if (!formats->is_array()) {
    log_.type_error(o.path("formats"), "an array", *formats);
    return;
  }
  if (formats->empty()) o.add("formats", "must list at least one format");
  const names& allowed = o.spec("formats").items->choices;
  oc.formats.clear();
  for (size_t i = 0; i < formats->size(); ++i) {
    std::string path = fmt::format("{}[{}]", o.path("formats"), i);
    auto f = log_.choice((*formats)[i], path, allowed);
    if (!f) continue;
    if (std::count(oc.formats.begin(), oc.formats.end(), *f))
      log_.add(path, "duplicate format " + quote(*f));
    else
      oc.formats.push_back(*f);
  }
}

}  // namespace attnbench::config_reading
