#include "config/technique_catalog.hpp"

#include <algorithm>
#include <deque>
#include <mutex>
#include <stdexcept>

namespace attnbench {
namespace {

// A function-local static: registrations run from other files' static initializers, whose order
// across files is unspecified. A deque keeps the pointers handed out valid as it grows.
std::deque<technique_option>& catalog() {
  static std::deque<technique_option> options;
  return options;
}

std::mutex& catalog_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

void register_technique_option(technique_option option) {
  const std::lock_guard<std::mutex> lock(catalog_mutex());
  for (const auto& o : catalog())
    if (o.key == option.key && o.value == option.value)
      throw std::logic_error("technique option " + option.key + "=" + option.value + " registered twice");
  catalog().push_back(std::move(option));
}

const technique_option* find_technique_option(const std::string& key, const std::string& value) {
  const std::lock_guard<std::mutex> lock(catalog_mutex());
  for (const auto& o : catalog())
    if (o.key == key && o.value == value) return &o;
  return nullptr;
}

const technique_option* chosen_option(const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) return find_technique_option(key, value.get<std::string>());
  if (!value.is_object()) return nullptr;
  const std::lock_guard<std::mutex> lock(catalog_mutex());
  for (const auto& o : catalog())
    if (o.key == key && o.is_block()) return &o;
  return nullptr;
}

const technique_option* owning_option(const std::vector<const technique_option*>& chosen) {
  for (const technique_option* o : chosen) {
    const bool covers_others = std::all_of(chosen.begin(), chosen.end(), [o](const technique_option* other) {
      return other == o || std::find(o->combines_with.begin(), o->combines_with.end(),
                                     std::make_pair(other->key, other->value)) != o->combines_with.end();
    });
    if (covers_others) return o;
  }
  return nullptr;
}

std::vector<const technique_option*> technique_options(const std::string& key) {
  const std::lock_guard<std::mutex> lock(catalog_mutex());
  std::vector<const technique_option*> out;
  for (const auto& o : catalog())
    if (o.key == key) out.push_back(&o);
  return out;
}

std::vector<std::string> technique_option_keys() {
  const std::lock_guard<std::mutex> lock(catalog_mutex());
  std::vector<std::string> out;
  for (const auto& o : catalog())
    if (std::find(out.begin(), out.end(), o.key) == out.end()) out.push_back(o.key);
  return out;
}

}  // namespace attnbench
