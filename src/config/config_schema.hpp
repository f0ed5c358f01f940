// The config schema as data: each block's keys, their types, ranges, defaults and help text,
// declared once beside the block's reader (src/config/*_block.cpp). The readers take types,
// minimums and choices from these declarations, and `attnbench schema` prints them as a JSON Schema
// (draft 2020-12) for editors. What JSON Schema cannot say (a key required only without another,
// a value bounded by another block's) stays as code in the readers; the printed schema is never
// stricter than the reader.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attnbench {

struct block_schema;

// The JSON type of a key; `any` leaves it to `extra` (a byte size: an integer or a string).
enum class value_type { any, integer, number, boolean, string, object, array };

struct key_schema {
  std::string name;
  value_type type = value_type::any;
  std::string help;                           // one line: what the key does (the schema's "description")
  nlohmann::ordered_json default_value;       // null: no default (or one that depends on other keys)
  std::optional<double> minimum, maximum;     // inclusive unless the flag says otherwise
  bool exclusive_minimum = false, exclusive_maximum = false;
  bool allow_empty = false;                   // strings: "" accepted (otherwise minLength 1)
  bool required = false;                      // unconditionally required in its block
  std::vector<std::string> choices;           // a string key's allowed values, in message order
  // Set when a higher layer may add choices the config layer cannot know (attention: kernel
  // names, kernels/kernel_catalog.hpp): the name json_schema_options::extra_choices uses.
  std::string open_choices;
  std::shared_ptr<const block_schema> block;  // objects: their keys (null: any object)
  std::shared_ptr<const key_schema> items;    // arrays: each item
  nlohmann::ordered_json extra;               // further JSON Schema keywords (pattern, anyOf, minItems)

  // Fluent setters, so a declaration reads as one line per key.
  key_schema& at_least(double v) { return minimum = v, exclusive_minimum = false, *this; }
  key_schema& above(double v) { return minimum = v, exclusive_minimum = true, *this; }
  key_schema& at_most(double v) { return maximum = v, exclusive_maximum = false, *this; }
  key_schema& below(double v) { return maximum = v, exclusive_maximum = true, *this; }
  key_schema& by_default(nlohmann::ordered_json v) { return default_value = std::move(v), *this; }
  key_schema& is_required() { return required = true, *this; }
  key_schema& empty_allowed() { return allow_empty = true, *this; }
  key_schema& open(std::string name) { return open_choices = std::move(name), *this; }
  key_schema& with(nlohmann::ordered_json keywords);  // merged into `extra`
};

// One JSON object of the config: its keys in the order messages list them.
struct block_schema {
  std::string help;
  std::vector<key_schema> keys;
  bool closed = true;  // an unknown key is an error (JSON Schema: "additionalProperties": false)
  // Further JSON Schema keywords: rules between keys that the schema can say (the keys a "kind"
  // requires, as "allOf" of "if"/"then"); the reader says them as code.
  nlohmann::ordered_json extra;

  // The declaration of `key`; an undeclared key is a programming error (std::logic_error), so a
  // reader cannot read a key the schema does not show.
  const key_schema& key(const std::string& name) const;
  const key_schema* find(const std::string& name) const;
  std::vector<std::string> key_names() const;
};

// Declarations of each kind of key. `help` is the key's description in the printed schema.
key_schema integer_key(std::string name, std::string help);
key_schema number_key(std::string name, std::string help);
key_schema boolean_key(std::string name, std::string help);
key_schema string_key(std::string name, std::string help);
key_schema choice_key(std::string name, std::vector<std::string> choices, std::string help);
key_schema object_key(std::string name, std::shared_ptr<const block_schema> block, std::string help);
key_schema array_key(std::string name, key_schema items, std::string help);
key_schema any_key(std::string name, std::string help);  // its JSON Schema comes from with()

// {"if": key == value, "then": `required`}: for a block's "allOf".
nlohmann::ordered_json required_when(const std::string& key, const std::string& value,
                                     const std::vector<std::string>& required);

// The whole document, from each block's declaration (src/config/config_reader.cpp). Built on each
// call: registered techniques (config/technique_catalog.hpp) add keys and values, and they register
// from static initializers.
std::shared_ptr<const block_schema> config_document_schema();

struct json_schema_options {
  // Values to add to the choices of keys declared open() under that name, e.g. "attention" → the
  // kernel names; an open key without any here accepts any string beside its choices.
  std::map<std::string, std::vector<std::string>> extra_choices;
};

// The JSON Schema (draft 2020-12) of a config document.
nlohmann::ordered_json json_schema(const block_schema& document, const json_schema_options& options = {});

}  // namespace attnbench
