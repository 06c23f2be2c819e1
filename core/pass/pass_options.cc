#include "core/pass/pass_options.h"

#include <cerrno>
#include <cstdlib>

#include <cctype>

#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool ParseBool(std::string_view text, bool* out) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "true" || lower == "1") {
    *out = true;
    return true;
  }
  if (lower == "false" || lower == "0") {
    *out = false;
    return true;
  }
  return false;
}

// Decimal, with an optional K/M/G (binary) suffix: "30M" = 30 * 2^20.
bool ParseInt(std::string_view text, int64_t* out) {
  int64_t scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K': scale = int64_t{1} << 10; break;
      case 'M': scale = int64_t{1} << 20; break;
      case 'G': scale = int64_t{1} << 30; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  int64_t v = 0;
  if (!SimpleAtoi(text, &v)) return false;
  if (v > INT64_MAX / scale || v < INT64_MIN / scale) return false;
  *out = v * scale;
  return true;
}

bool ParseFloat(std::string_view text, double* out) {
  std::string s(text);
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return false;
  *out = v;
  return true;
}

}  // namespace

std::string_view PassOptionTypeName(PassOptionType type) {
  switch (type) {
    case PassOptionType::kBool: return "bool";
    case PassOptionType::kInt: return "int";
    case PassOptionType::kFloat: return "float";
    case PassOptionType::kString: return "string";
  }
  return "?";
}

absl::Status CheckPassOptionValue(const PassOptionSpec& spec, std::string_view value) {
  bool ok = true;
  switch (spec.type) {
    case PassOptionType::kBool: {
      bool b;
      ok = ParseBool(value, &b);
      break;
    }
    case PassOptionType::kInt: {
      int64_t i;
      ok = ParseInt(value, &i);
      break;
    }
    case PassOptionType::kFloat: {
      double d;
      ok = ParseFloat(value, &d);
      break;
    }
    case PassOptionType::kString:
      ok = true;
      break;
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(StrCat("option '", spec.name, "' takes a ",
                                                 PassOptionTypeName(spec.type), ", not '", value, "'"));
}

const PassOptionSpec* PassOptionValues::Find(std::string_view name) const {
  for (const PassOptionSpec& s : specs_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

absl::Status PassOptionValues::Set(std::string_view pass, std::string_view name, std::string_view value) {
  const PassOptionSpec* spec = Find(name);
  if (spec == nullptr) {
    if (specs_.empty()) {
      return absl::InvalidArgumentError(StrCat("pass '", pass, "' takes no options (got '", name, "')"));
    }
    std::vector<std::string_view> names;
    for (const PassOptionSpec& s : specs_) names.push_back(s.name);
    return absl::InvalidArgumentError(StrCat("pass '", pass, "' has no option '", name,
                                                   "'; its options: ", Join(names, ", ")));
  }
  absl::Status s = CheckPassOptionValue(*spec, value);
  if (!s.ok()) return absl::InvalidArgumentError(StrCat(pass, ": ", s.message()));
  values_[std::string(name)] = std::string(value);
  return absl::OkStatus();
}

std::string PassOptionValues::Raw(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it != values_.end()) return it->second;
  const PassOptionSpec* spec = Find(name);
  return spec ? std::string(spec->default_value) : std::string();
}

bool PassOptionValues::GetBool(std::string_view name) const {
  bool b = false;
  ParseBool(Raw(name), &b);
  return b;
}

int64_t PassOptionValues::GetInt(std::string_view name) const {
  int64_t i = 0;
  ParseInt(Raw(name), &i);
  return i;
}

double PassOptionValues::GetFloat(std::string_view name) const {
  double d = 0;
  if (!ParseFloat(Raw(name), &d)) d = 0;
  return d;
}

std::string PassOptionValues::GetString(std::string_view name) const { return Raw(name); }

absl::StatusOr<PassOptionSetting> ParsePassOptionSetting(std::string_view text) {
  size_t eq = text.find('=');
  size_t dot = text.substr(0, eq).find('.');
  if (eq == std::string_view::npos || dot == std::string_view::npos || dot == 0 || dot + 1 == eq) {
    return absl::InvalidArgumentError(
        StrCat("pass option '", text, "' is not PASS.OPTION=VALUE (e.g. algsimp.enable_conv_simplification=false)"));
  }
  PassOptionSetting s;
  s.pass = std::string(text.substr(0, dot));
  s.option = std::string(text.substr(dot + 1, eq - dot - 1));
  s.value = std::string(text.substr(eq + 1));
  return s;
}

}  // namespace passlab
