// The machinery behind the typed JSON documents' to_json/from_json
// (analysis/run_report.h, analysis/ablation/records.h): each document lists
// its fields once, in a function template over a visitor,
//
//   template <typename V, typename R> void Fields(V& v, R& r) {
//     v.Required("variant", r.variant);
//     v.Optional("block", r.block);   // std::optional<T>
//   }
//
// and the visitors read it (Reader: a missing required key or a mistyped
// value throws SchemaError naming the key), write it (Writer: absent
// optionals are not written) or list its keys (KeyCollector: the rest of a
// document are its `extra` keys, kept as read). Internal to those files.
#ifndef PASSLAB_ANALYSIS_JSON_SCHEMA_H_
#define PASSLAB_ANALYSIS_JSON_SCHEMA_H_

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "core/ir/file_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::json_schema {

using Json = nlohmann::json;

inline constexpr const char* kVersionKey = "schema_version";

// A document that does not fit its schema; the message names the key.
class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Integral values (nanoseconds, counts that went through a double) as JSON
// integers, as their producers wrote them.
inline Json NumberJson(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9e15) return static_cast<int64_t>(x);
  return x;
}

[[noreturn]] inline void WrongType(const char* doc, const std::string& key, const char* expected, const Json& v) {
  throw SchemaError(StrCat(doc, " key '", key, "' must be ", expected, ", not ", v.type_name()));
}

// One JSON value into one C++ value; `doc` and `key` name it in errors.
inline void ReadValue(const char* doc, const std::string& key, const Json& v, std::string& out) {
  if (!v.is_string()) WrongType(doc, key, "a string", v);
  out = v.get<std::string>();
}
inline void ReadValue(const char* doc, const std::string& key, const Json& v, int64_t& out) {
  // Integers, or integral floats (a count that went through a double: 2e8).
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>())) {
    out = static_cast<int64_t>(v.get<double>());
  } else {
    WrongType(doc, key, "an integer", v);
  }
}
inline void ReadValue(const char* doc, const std::string& key, const Json& v, uint64_t& out) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
    WrongType(doc, key, "a non-negative integer", v);
  }
  out = v.get<uint64_t>();
}
inline void ReadValue(const char* doc, const std::string& key, const Json& v, double& out) {
  if (!v.is_number()) WrongType(doc, key, "a number", v);
  out = v.get<double>();
}
inline void ReadValue(const char* doc, const std::string& key, const Json& v, bool& out) {
  if (!v.is_boolean()) WrongType(doc, key, "true or false", v);
  out = v.get<bool>();
}
inline void ReadValue(const char*, const std::string&, const Json& v, Json& out) { out = v; }
inline void ReadValue(const char*, const std::string&, const Json& v, nlohmann::ordered_json& out) { out = v; }
inline void ReadValue(const char* doc, const std::string& key, const Json& v, std::vector<bool>& out) {
  if (!v.is_array()) WrongType(doc, key, "an array", v);
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    bool x = false;
    ReadValue(doc, StrCat(key, "[", i, "]"), v[i], x);
    out.push_back(x);
  }
}
inline void ReadValue(const char* doc, const std::string& key, const Json& v, std::map<std::string, double>& out) {
  if (!v.is_object()) WrongType(doc, key, "an object", v);
  out.clear();
  for (const auto& [name, x] : v.items()) ReadValue(doc, StrCat(key, ".", name), x, out[name]);
}
// A nested document (a struct with its own from_json): its errors get the
// key in front.
template <typename T>
void ReadValue(const char* doc, const std::string& key, const Json& v, T& out) {
  try {
    from_json(v, out);
  } catch (const SchemaError& e) {
    throw SchemaError(StrCat(doc, " key '", key, "': ", e.what()));
  }
}
// A value that may be null (NaN, "none"): null reads as nullopt.
template <typename T>
void ReadValue(const char* doc, const std::string& key, const Json& v, std::optional<T>& out) {
  out.reset();
  if (v.is_null()) return;
  T x{};
  ReadValue(doc, key, v, x);
  out = std::move(x);
}
template <typename T>
void ReadValue(const char* doc, const std::string& key, const Json& v, std::map<std::string, T>& out) {
  if (!v.is_object()) WrongType(doc, key, "an object", v);
  out.clear();
  for (const auto& [name, x] : v.items()) ReadValue(doc, StrCat(key, ".", name), x, out[name]);
}
template <typename T>
void ReadValue(const char* doc, const std::string& key, const Json& v, std::vector<T>& out) {
  if (!v.is_array()) WrongType(doc, key, "an array", v);
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    T x{};
    ReadValue(doc, StrCat(key, "[", i, "]"), v[i], x);
    out.push_back(std::move(x));
  }
}

struct Reader {
  const char* doc;  // "record", "manifest", ... (errors start with it)
  const Json& j;
  template <typename T>
  void Required(const char* key, T& field) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) throw SchemaError(StrCat(doc, " has no '", key, "'"));
    ReadValue(doc, key, *it, field);
  }
  template <typename T>
  void Optional(const char* key, std::optional<T>& field) {
    field.reset();
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    T value{};
    ReadValue(doc, key, *it, value);
    field = std::move(value);
  }
  // A key the writer always writes, null when the value is absent (the
  // ablation report's style); read like Optional.
  template <typename T>
  void Nullable(const char* key, std::optional<T>& field) {
    Optional(key, field);
  }
  // A nullable number written as an integer when integral (NumberJson).
  void Number(const char* key, std::optional<double>& field) { Optional(key, field); }
  // A key the writer always writes, whose absence (in a hand-written or
  // older document) or null leaves the field's default.
  template <typename T>
  void Defaulted(const char* key, T& field) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return;
    ReadValue(doc, key, *it, field);
  }
};

// Writes the fields into a json (keys sorted) or an ordered_json (keys in
// field order).
template <typename JsonT>
struct BasicWriter {
  JsonT& j;
  template <typename T>
  void Required(const char* key, const T& field) {
    j[key] = field;
  }
  template <typename T>
  void Optional(const char* key, const std::optional<T>& field) {
    if (field.has_value()) j[key] = *field;
  }
  template <typename T>
  void Nullable(const char* key, const std::optional<T>& field) {
    j[key] = field.has_value() ? JsonT(*field) : JsonT(nullptr);
  }
  void Number(const char* key, const std::optional<double>& field) {
    j[key] = field.has_value() ? JsonT(NumberJson(*field)) : JsonT(nullptr);
  }
  template <typename T>
  void Defaulted(const char* key, const T& field) {
    j[key] = field;
  }
};
using Writer = BasicWriter<Json>;

// A whole JSON file: "no WHAT 'PATH'" when it does not exist, "PATH: not
// JSON" when it does not parse.
inline absl::StatusOr<Json> ReadJsonFile(const std::string& path, std::string_view what) {
  if (!std::filesystem::exists(path)) return absl::NotFoundError(StrCat("no ", what, " '", path, "'"));
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError(StrCat(path, ": not JSON"));
  return j;
}

struct KeyCollector {
  std::set<std::string> keys;
  template <typename T>
  void Required(const char* key, const T&) {
    keys.insert(key);
  }
  template <typename T>
  void Optional(const char* key, const T&) {
    keys.insert(key);
  }
  template <typename T>
  void Nullable(const char* key, const T&) {
    keys.insert(key);
  }
  template <typename T>
  void Number(const char* key, const T&) {
    keys.insert(key);
  }
  template <typename T>
  void Defaulted(const char* key, const T&) {
    keys.insert(key);
  }
};

inline void RequireObject(const char* doc, const Json& j) {
  if (!j.is_object()) throw SchemaError(StrCat(doc, " is not a JSON object but ", j.type_name()));
}

// The document's version: its "schema_version", 1 when it has none.
inline int ReadVersion(const char* doc, const Json& j) {
  auto it = j.find(kVersionKey);
  if (it == j.end()) return 1;
  int64_t version = 0;
  ReadValue(doc, kVersionKey, *it, version);
  if (version < 1) throw SchemaError(StrCat(doc, " has schema_version ", version, " (versions start at 1)"));
  return static_cast<int>(version);
}

// The keys of `j` that `fields(visitor, T&)` does not list (nor the version).
template <typename T, typename Fields>
Json ExtraKeys(const Json& j, Fields fields) {
  KeyCollector known;
  T unused{};
  fields(known, unused);
  Json extra = Json::object();
  for (const auto& [key, value] : j.items()) {
    if (key != kVersionKey && !known.keys.contains(key)) extra[key] = value;
  }
  return extra;
}

// j.get<T>() as a Status: `where` (file:line) and the key in the message.
template <typename T>
absl::StatusOr<T> Parse(const Json& j, const std::string& where) {
  try {
    return j.get<T>();
  } catch (const SchemaError& e) {
    return absl::InvalidArgumentError(StrCat(where, ": ", e.what()));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(StrCat(where, ": ", e.what()));
  }
}

}  // namespace passlab::json_schema

#endif  // PASSLAB_ANALYSIS_JSON_SCHEMA_H_
