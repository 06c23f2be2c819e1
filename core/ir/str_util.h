// StrCat / StrAppend / StrJoin over absl that also accept std::string_view.
// Debian's abseil is built with its own absl::string_view (not an alias of
// std::string_view), so absl::StrCat rejects std::string_view arguments; these
// wrappers convert them. Use them everywhere instead of absl::StrCat.
#ifndef PASSLAB_CORE_IR_STR_UTIL_H_
#define PASSLAB_CORE_IR_STR_UTIL_H_

#include <cctype>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace passlab {
namespace str_internal {

inline absl::string_view Piece(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline absl::string_view Piece(const std::string& s) { return absl::string_view(s.data(), s.size()); }
inline absl::string_view Piece(const char* s) { return absl::string_view(s); }
inline absl::string_view Piece(absl::string_view s) { return s; }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, char>>>
absl::AlphaNum Piece(T v) {
  return absl::AlphaNum(v);
}

}  // namespace str_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  return absl::StrCat(str_internal::Piece(args)...);
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  absl::StrAppend(out, str_internal::Piece(args)...);
}

// Joins any range whose elements StrCat accepts.
template <typename Range>
std::string Join(const Range& range, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& element : range) {
    if (!first) out.append(separator);
    first = false;
    StrAppend(&out, element);
  }
  return out;
}

// True when `s` is exactly one bracketed group ("{...}") with balanced
// brackets, where brackets inside "..." strings (with \ escapes) do not
// count: the text the HLO parser captures verbatim for backend_config and
// structured frontend attributes. Such values print unquoted.
inline bool IsSingleBalancedGroup(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  std::vector<char> stack;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] == '\\') ++i;
      }
      if (i >= s.size()) return false;
    } else if (c == '{' || c == '[' || c == '(') {
      stack.push_back(c == '{' ? '}' : c == '[' ? ']' : ')');
    } else if (c == '}' || c == ']' || c == ')') {
      if (stack.empty() || stack.back() != c) return false;
      stack.pop_back();
      if (stack.empty() && i + 1 != s.size()) return false;
    }
  }
  return stack.empty();
}

// absl::SimpleAtoi over std::string_view.
template <typename T>
bool SimpleAtoi(std::string_view s, T* out) {
  return absl::SimpleAtoi(absl::string_view(s.data(), s.size()), out);
}

// Splits on any of the delimiter characters (empty pieces kept).
inline std::vector<std::string_view> SplitAny(std::string_view s, std::string_view delimiters) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || delimiters.find(s[i]) != std::string_view::npos) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// A file-name-safe copy: every character other than [A-Za-z0-9._-] becomes
// '_' (pipeline paths hold '/', instruction names may hold anything). Dumps
// of HLO passes and of emitter passes name their files with it.
inline std::string SanitizeFileName(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return s;
}

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_STR_UTIL_H_
