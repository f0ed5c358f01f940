#include "techniques/registry.hpp"

#include <stdexcept>
#include <vector>

#include "config/technique_catalog.hpp"

namespace attnbench {
namespace {

std::vector<std::unique_ptr<technique>>& registered() {
  static std::vector<std::unique_ptr<technique>> all;  // see technique_catalog.cpp: init order
  return all;
}

}  // namespace

void register_technique(std::unique_ptr<technique> t) {
  for (const auto& existing : registered())
    if (existing->name() == t->name()) throw std::logic_error("technique " + t->name() + " registered twice");
  registered().push_back(std::move(t));
}

const technique* technique_for(const variant_config& v) {
  std::vector<const technique_option*> chosen;
  for (const auto& [key, value] : v.techniques)
    if (const technique_option* o = chosen_option(key, value)) chosen.push_back(o);
  if (chosen.empty()) return nullptr;
  const technique_option* o = owning_option(chosen);
  if (!o) throw std::logic_error("variant " + v.name + " chose registered values no one technique runs");
  for (const auto& t : registered())
    if (t->name() == o->technique) return t.get();
  throw std::logic_error("no technique named " + o->technique + " is registered for " + o->key + "=" + o->value);
}

}  // namespace attnbench
