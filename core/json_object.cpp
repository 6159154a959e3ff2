#include "core/json_object.hpp"

#include <algorithm>
#include <climits>
#include <cmath>

#include "core/error.hpp"

namespace pipesim {

using nlohmann::json;

namespace {

// True if `v` nests at most `depth` levels of arrays and objects.
bool shallow(const json& v, int depth) {
  if (!v.is_structured()) return true;
  if (depth == 0) return false;
  return std::all_of(v.begin(), v.end(), [&](const json& item) { return shallow(item, depth - 1); });
}

}  // namespace

std::string json_shown(const json& v) {
  // dump() recurses: a value nested 100000 deep (a file of '[') would overflow the stack.
  if (!shallow(v, 8)) return v.is_array() ? "a deeply nested array" : "a deeply nested object";
  std::string s = v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump();
  if (s.size() <= 60) return s;
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + (v.size() == 1 ? " element" : " elements");
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + (v.size() == 1 ? " field" : " fields");
  return s.substr(0, 57) + "...";
}

void json_fail(const std::string& where, const std::string& what) { throw InputError(where + ": " + what); }

JsonObject::JsonObject(const json& value, std::string source, std::string path)
    : object_(&value), source_(std::move(source)), path_(std::move(path)) {
  if (!value.is_object()) json_fail(where(), "expected an object; got " + json_shown(value));
}

JsonObject::JsonObject(const json& value, std::string source, std::string path, const Fields& allowed)
    : JsonObject(value, std::move(source), std::move(path)) {
  for (const auto& item : value.items()) {
    const std::string& key = item.key();
    if (std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) continue;
    std::string names;
    for (const char* a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    json_fail(where(), "unknown field " + quote(key) + " (expected " + names + ")");
  }
}

std::string JsonObject::where() const { return source_ + ": " + (path_.empty() ? "/" : path_); }
std::string JsonObject::where(const char* key) const { return source_ + ": " + child(key); }
std::string JsonObject::child(const char* key) const { return path_ + "/" + key; }

const json& JsonObject::at(const char* key) const {
  if (!has(key)) json_fail(where(), std::string("missing field '") + key + "'");
  return object_->at(key);
}

JsonObject JsonObject::object(const char* key, const Fields& allowed) const {
  return JsonObject(at(key), source_, child(key), allowed);
}

JsonObject JsonObject::object(const char* key) const { return JsonObject(at(key), source_, child(key)); }

JsonObject JsonObject::element(const json& array, const char* key, std::size_t i, const Fields& allowed) const {
  return JsonObject(array[i], source_, child(key) + "/" + std::to_string(i), allowed);
}

std::string JsonObject::text(const char* key) const {
  const json& v = at(key);
  if (!v.is_string() || v.get<std::string>().empty())
    json_fail(where(key), "expected a non-empty string; got " + json_shown(v));
  return v.get<std::string>();
}

bool JsonObject::flag(const char* key) const {
  const json& v = at(key);
  if (!v.is_boolean()) json_fail(where(key), "expected true or false; got " + json_shown(v));
  return v.get<bool>();
}

namespace {

// v, an integer in min..max, or null. A JSON integer may be unsigned 64-bit: compared without
// converting it first.
bool integer_in(const json& v, std::int64_t min, std::int64_t max) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) return max >= 0 && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(max) &&
                                     static_cast<std::int64_t>(v.get<std::uint64_t>()) >= min;
  return v.get<std::int64_t>() >= min && v.get<std::int64_t>() <= max;
}

std::string at_least(std::int64_t min) {
  if (min == 1) return "a positive integer";
  if (min == 0) return "a non-negative integer";
  return "an integer of at least " + std::to_string(min);
}

}  // namespace

std::int64_t JsonObject::integer(const char* key, std::int64_t min, std::int64_t max) const {
  const json& v = at(key);
  if (!integer_in(v, min, max)) {
    const std::string expected = max == INT64_MAX || max == INT_MAX
                                     ? at_least(min)
                                     : "an integer in " + std::to_string(min) + ".." + std::to_string(max);
    json_fail(where(key), "expected " + expected + "; got " + json_shown(v));
  }
  return v.get<std::int64_t>();
}

int JsonObject::count(const char* key, int min) const { return static_cast<int>(integer(key, min, INT_MAX)); }

std::int64_t JsonObject::bytes(const char* key) const { return integer(key, 1, INT64_MAX); }

double JsonObject::number(const char* key, bool positive, const char* unit) const {
  const json& v = at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 || (positive && !(v.get<double>() > 0)))
    json_fail(where(key), std::string("expected a ") + (positive ? "positive" : "non-negative") + " number of " + unit +
                              "; got " + json_shown(v));
  return v.get<double>();
}

std::vector<double> JsonObject::numbers(const char* key, double min, double max, bool sorted,
                                        const std::string& each) const {
  const json& v = at(key);
  if (!v.is_array() || v.empty()) json_fail(where(key), "expected a non-empty array; got " + json_shown(v));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at_i = where(key) + "/" + std::to_string(i);
    if (!v[i].is_number() || !std::isfinite(v[i].get<double>()) || v[i].get<double>() < min || v[i].get<double>() > max)
      json_fail(at_i, "expected " + each + "; got " + json_shown(v[i]));
    if (sorted && !out.empty() && v[i].get<double>() < out.back())
      json_fail(at_i, "expected non-decreasing values; " + json_shown(v[i]) + " follows " + json_shown(v[i - 1]));
    out.push_back(v[i].get<double>());
  }
  return out;
}

}  // namespace pipesim
