#pragma once
// Reading the fields of a JSON file the user gave, the one way every reader does it (profiles,
// catalogs, past validate outputs): each problem is an InputError of one line naming the file
// and the JSON path, "my.json: /models/0/layers: expected a positive integer; got -1".
//
//   const JsonObject root(json, "my.json", "", {"models", "gpus"});   // unknown fields refused
//   const JsonObject m = root.element(root.at("models"), "models", 0, {"name", "layers"});
//   m.count("layers");                                               // 1..INT_MAX
//
// Parse the text with parse_json_input (core/json_input.hpp) first.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim {

// A JSON value as messages show it: strings quoted, long ones cut, a long array or object by
// its size ("an array of 2 elements"), a deeply nested one by its kind.
std::string json_shown(const nlohmann::json& v);

// InputError("<where>: <what>").
[[noreturn]] void json_fail(const std::string& where, const std::string& what);

class JsonObject {
 public:
  using Fields = std::vector<const char*>;

  // `value` at `path` ("" the root, "/models/0") of `source` (the file, as messages name it).
  // Fails unless it is an object, and names any field not in `allowed` (a misspelt field is an
  // error, not a silently missing value).
  JsonObject(const nlohmann::json& value, std::string source, std::string path, const Fields& allowed);
  // The same, taking any fields: for outputs of other tools (or of pipesim's other commands)
  // that may carry fields this reader does not know.
  JsonObject(const nlohmann::json& value, std::string source, std::string path);

  std::string where() const;                 // "my.json: /models/0" ("my.json: /" at the root)
  std::string where(const char* key) const;  // "my.json: /models/0/layers"
  std::string child(const char* key) const;  // "/models/0/layers"
  const std::string& source() const { return source_; }

  bool has(const char* key) const { return object_->contains(key); }
  const nlohmann::json& at(const char* key) const;  // fails when missing

  JsonObject object(const char* key, const Fields& allowed) const;
  JsonObject object(const char* key) const;  // taking any fields, as the second constructor
  // Element i of `array`, the value of field `key`.
  JsonObject element(const nlohmann::json& array, const char* key, std::size_t i, const Fields& allowed) const;

  std::string text(const char* key) const;  // a non-empty string
  bool flag(const char* key) const;
  // An integer in min..max.
  std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const;
  // An int of at least `min` (1: "a positive integer", 0: "a non-negative integer").
  int count(const char* key, int min = 1) const;
  std::int64_t bytes(const char* key) const;  // a positive integer
  // A finite number >= 0 (> 0 when `positive`), `unit` naming what it counts ("seconds").
  double number(const char* key, bool positive, const char* unit) const;
  // A non-empty array of finite numbers in [min, max] (`each` says so: "a slowdown in
  // 0.5..100"), non-decreasing when `sorted`.
  std::vector<double> numbers(const char* key, double min, double max, bool sorted, const std::string& each) const;

 private:
  const nlohmann::json* object_ = nullptr;
  std::string source_, path_;
};

}  // namespace pipesim
