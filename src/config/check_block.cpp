// The `check` block: tolerances of the output check against the baseline, and when the float64
// study runs.
#include <fmt/format.h>

#include "common/precision_classes.hpp"
#include "config/byte_size.hpp"
#include "config/config_defaults.hpp"
#include "config/config_reader.hpp"
#include "config/technique_catalog.hpp"

namespace attnbench::config_reading {
namespace {

// The default tolerance of a tolerance key: its class's (config/config_defaults.hpp) for a core
// precision, the registered one for a technique's.
double default_tolerance(const std::string& key) {
  for (auto p : all_precisions)
    if (to_string(p) == key) return defaults::tolerance(p);
  const technique_option* o = find_technique_option("precision", key);
  return o ? o->default_tolerance : precision_class_of(key).tolerance;
}

std::shared_ptr<const block_schema> tolerances_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "Relative-L2 bounds against the baseline, per precision; a config may tighten its class's "
            "tolerance (src/common/precision_classes.hpp), never raise it";
  for (const auto& key : tolerance_keys())
    b->keys.push_back(number_key(key, "The " + key + " variants' bound; at most the " +
                                          std::string(precision_class_of(key).name) + " class's")
                          .above(0)
                          .at_most(precision_class_of(key).tolerance)
                          .by_default(default_tolerance(key)));
  return b;
}

}  // namespace

names tolerance_keys() {
  names all = names_of(all_precisions);
  for (const auto* o : technique_options("precision")) all.push_back(o->value);
  return all;
}

std::shared_ptr<const block_schema> check_schema() {
  auto b = std::make_shared<block_schema>();
  b->help = "The output check: each variant's outputs against the baseline's";
  b->keys = {
      object_key("tolerances", tolerances_schema(), "Per-precision tolerances (only tighter than the class's)"),
      choice_key("study", {"on-change", "always"},
                 "When the float64 study of every class runs: on-change (when its inputs changed) or always")
          .by_default("on-change"),
      any_key("study_max_memory",
              "Memory the float64 study of a decoder's changed tokens may take: bytes, or a string such as "
              "\"16GiB\"; 0: no study; default: the host's available memory less 1 GiB")
          .with(byte_size_keywords()),
  };
  return b;
}

void config_reader::read_check() {
  for (auto p : all_precisions) cfg_.check.tolerance[p] = defaults::tolerance(p);
  object_reader c = root_.object("check");
  c.check_keys();
  object_reader t = c.object("tolerances");
  t.check_keys();
  // A config may tighten its class's tolerance, never raise it (common/precision_classes.hpp):
  // a verdict must not depend on a bound chosen after seeing the run.
  const auto within_class = [&](const std::string& key, std::optional<double> tol) -> std::optional<double> {
    const precision_class& pc = precision_class_of(key);
    if (tol && *tol > pc.tolerance) {
      t.add(key, fmt::format("{} raises the {} class's tolerance {} (fixed before any run, "
                             "src/common/precision_classes.hpp); a config may only tighten it",
                             *tol, pc.name, pc.tolerance));
      return std::nullopt;
    }
    return tol;
  };
  for (auto p : all_precisions) assign(cfg_.check.tolerance[p], within_class(to_string(p), t.number(to_string(p))));
  for (const auto* o : technique_options("precision"))
    if (auto tol = within_class(o->value, t.number(o->value))) cfg_.check.technique_tolerance[o->value] = *tol;
  cfg_.check.study = c.choice("study").value_or("on-change");
  // study_max_memory is read from the document by the generate scenario (config/byte_size.hpp).
  if (const ordered_json* m = c.find("study_max_memory"); m && !parse_byte_size(*m))
    c.add("study_max_memory", byte_size_problem(*m));
}

}  // namespace attnbench::config_reading
