#include "config/config_schema.hpp"

#include <algorithm>
#include <stdexcept>

namespace attnbench {
namespace {

using ordered_json = nlohmann::ordered_json;

key_schema make_key(std::string name, value_type type, std::string help) {
  key_schema k;
  k.name = std::move(name);
  k.type = type;
  k.help = std::move(help);
  return k;
}

const char* type_name(value_type t) {
  switch (t) {
    case value_type::integer:
      return "integer";
    case value_type::number:
      return "number";
    case value_type::boolean:
      return "boolean";
    case value_type::string:
      return "string";
    case value_type::object:
      return "object";
    case value_type::array:
      return "array";
    case value_type::any:
      break;
  }
  return nullptr;
}

ordered_json block_json(const block_schema& block, const json_schema_options& options);

// An integer bound as an integer, so `"minimum": 1` reads as written, not `1.0`.
ordered_json bound(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v))) return static_cast<int64_t>(v);
  return v;
}

ordered_json key_json(const key_schema& k, const json_schema_options& options) {
  ordered_json out = ordered_json::object();
  if (k.block) {
    out = block_json(*k.block, options);
  } else if (const char* t = type_name(k.type)) {
    out["type"] = t;
  }
  if (!k.help.empty()) out["description"] = k.help;
  if (!k.default_value.is_null()) out["default"] = k.default_value;
  if (k.minimum) out[k.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = bound(*k.minimum);
  if (k.maximum) out[k.exclusive_maximum ? "exclusiveMaximum" : "maximum"] = bound(*k.maximum);
  if (k.type == value_type::string && !k.allow_empty && k.choices.empty()) out["minLength"] = 1;
  if (!k.choices.empty()) {
    std::vector<std::string> values = k.choices;
    const auto extra = options.extra_choices.find(k.open_choices);
    if (!k.open_choices.empty() && extra != options.extra_choices.end()) {
      for (const auto& v : extra->second)
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      out["enum"] = values;
    } else if (!k.open_choices.empty()) {
      // Names only a higher layer knows: any string, the known ones offered for completion.
      out.erase("type");
      out["anyOf"] = ordered_json::array({{{"enum", values}}, {{"type", "string"}}});
    } else {
      out["enum"] = values;
    }
  }
  if (k.items) out["items"] = key_json(*k.items, options);
  for (const auto& [keyword, value] : k.extra.items()) out[keyword] = value;
  return out;
}

ordered_json block_json(const block_schema& block, const json_schema_options& options) {
  ordered_json out{{"type", "object"}};
  if (!block.help.empty()) out["description"] = block.help;
  ordered_json properties = ordered_json::object();
  std::vector<std::string> required;
  for (const auto& k : block.keys) {
    properties[k.name] = key_json(k, options);
    if (k.required) required.push_back(k.name);
  }
  out["properties"] = std::move(properties);
  if (!required.empty()) out["required"] = required;
  if (block.closed) out["additionalProperties"] = false;
  for (const auto& [keyword, value] : block.extra.items()) out[keyword] = value;
  return out;
}

}  // namespace

nlohmann::ordered_json required_when(const std::string& key, const std::string& value,
                                     const std::vector<std::string>& required) {
  return {{"if", {{"properties", {{key, {{"const", value}}}}}, {"required", ordered_json::array({key})}}},
          {"then", {{"required", required}}}};
}

key_schema& key_schema::with(nlohmann::ordered_json keywords) {
  if (extra.is_null()) extra = ordered_json::object();
  for (auto& [keyword, value] : keywords.items()) extra[keyword] = std::move(value);
  return *this;
}

const key_schema* block_schema::find(const std::string& name) const {
  const auto it = std::find_if(keys.begin(), keys.end(), [&](const key_schema& k) { return k.name == name; });
  return it == keys.end() ? nullptr : &*it;
}

const key_schema& block_schema::key(const std::string& name) const {
  if (const key_schema* k = find(name)) return *k;
  throw std::logic_error("config key \"" + name + "\" is read but not declared in its block's schema");
}

std::vector<std::string> block_schema::key_names() const {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.name);
  return out;
}

key_schema integer_key(std::string name, std::string help) {
  return make_key(std::move(name), value_type::integer, std::move(help));
}
key_schema number_key(std::string name, std::string help) {
  return make_key(std::move(name), value_type::number, std::move(help));
}
key_schema boolean_key(std::string name, std::string help) {
  return make_key(std::move(name), value_type::boolean, std::move(help));
}
key_schema string_key(std::string name, std::string help) {
  return make_key(std::move(name), value_type::string, std::move(help));
}
key_schema choice_key(std::string name, std::vector<std::string> choices, std::string help) {
  key_schema k = make_key(std::move(name), value_type::string, std::move(help));
  k.choices = std::move(choices);
  return k;
}
key_schema object_key(std::string name, std::shared_ptr<const block_schema> block, std::string help) {
  key_schema k = make_key(std::move(name), value_type::object, std::move(help));
  k.block = std::move(block);
  return k;
}
key_schema array_key(std::string name, key_schema items, std::string help) {
  key_schema k = make_key(std::move(name), value_type::array, std::move(help));
  k.items = std::make_shared<const key_schema>(std::move(items));
  return k;
}
key_schema any_key(std::string name, std::string help) {
  return make_key(std::move(name), value_type::any, std::move(help));
}

nlohmann::ordered_json json_schema(const block_schema& document, const json_schema_options& options) {
  ordered_json out{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                   {"title", "attnbench config"}};
  const ordered_json body = block_json(document, options);
  for (const auto& [keyword, value] : body.items()) out[keyword] = value;
  return out;
}

}  // namespace attnbench
