#include "core/text/hlo_parser_internal.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace passlab {
namespace text_internal {

absl::Status Parser::Error(const char* at, std::string_view message) {
  int line = 1, col = 1;
  for (const char* c = begin_; c < at && c < end_; ++c) {
    if (*c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  std::string token = TokenAt(at);
  std::string msg = StrCat(file_, ":", line, ":", col, ": error: ", message);
  if (!token.empty()) StrAppend(&msg, " (at '", token, "')");
  return absl::InvalidArgumentError(msg);
}

std::string Parser::TokenAt(const char* at) const {
  if (at >= end_) return "end of input";
  const char* e = at;
  if (IsNameChar(*e) || *e == '%') {
    while (e < end_ && (IsNameChar(*e) || *e == '%') && e - at < 40) ++e;
  } else {
    ++e;
  }
  std::string t(at, e);
  for (char& c : t) {
    if (c == '\n') c = ' ';
  }
  return t;
}

absl::StatusOr<double> Parser::ParseDouble() {
  SkipWs();
  const char* start = p_;
  bool neg = false;
  if (p_ < end_ && (*p_ == '-' || *p_ == '+')) {
    neg = *p_ == '-';
    ++p_;
  }
  if (ConsumeWord("inf")) return neg ? -HUGE_VAL : HUGE_VAL;
  if (ConsumeWord("nan")) return neg ? -std::nan("") : std::nan("");
  const char* num = p_;
  while (p_ < end_ && (std::isdigit(static_cast<unsigned char>(*p_)) || *p_ == '.' ||
                       *p_ == 'e' || *p_ == 'E' ||
                       ((*p_ == '-' || *p_ == '+') && p_ > num && (p_[-1] == 'e' || p_[-1] == 'E')))) {
    ++p_;
  }
  if (p_ == num) {
    p_ = start;
    return Error(start, "expected a number");
  }
  std::string s(start, p_);
  char* endp = nullptr;
  double v = std::strtod(s.c_str(), &endp);
  if (endp != s.c_str() + s.size()) return Error(start, "malformed number");
  return v;
}

absl::StatusOr<std::string> Parser::ParseString(char quote) {
  SkipWs();
  const char* start = p_;
  if (p_ >= end_ || *p_ != quote) {
    return Error(quote == '"' ? "expected a string" : "expected a '...' string");
  }
  ++p_;
  std::string out;
  while (p_ < end_ && *p_ != quote) {
    char c = *p_++;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (p_ >= end_) break;
    char e = *p_++;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case '\\': out += '\\'; break;
      case '"': out += '"'; break;
      case '\'': out += '\''; break;
      case 'x': {
        int v = 0, n = 0;
        while (p_ < end_ && n < 2 && std::isxdigit(static_cast<unsigned char>(*p_))) {
          v = v * 16 + (std::isdigit(static_cast<unsigned char>(*p_)) ? *p_ - '0' : (std::tolower(*p_) - 'a' + 10));
          ++p_;
          ++n;
        }
        out += static_cast<char>(v);
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', n = 1;
          while (p_ < end_ && n < 3 && *p_ >= '0' && *p_ <= '7') {
            v = v * 8 + (*p_++ - '0');
            ++n;
          }
          out += static_cast<char>(v);
        } else {
          out += e;
        }
    }
  }
  if (p_ >= end_) return Error(start, "unterminated string");
  ++p_;
  return out;
}

absl::StatusOr<std::string> Parser::ParseBalanced() {
  SkipWs();
  const char* start = p_;
  std::vector<char> stack;
  do {
    if (p_ >= end_) return Error(start, "unbalanced brackets");
    char c = *p_;
    if (c == '"') {
      ++p_;
      while (p_ < end_ && *p_ != '"') {
        if (*p_ == '\\') ++p_;
        ++p_;
      }
      if (p_ >= end_) return Error(start, "unterminated string");
    } else if (c == '{' || c == '[' || c == '(') {
      if (stack.size() > 1000) return Error(start, "nesting too deep");
      stack.push_back(c == '{' ? '}' : c == '[' ? ']' : ')');
    } else if (c == '}' || c == ']' || c == ')') {
      if (stack.empty() || stack.back() != c) return Error(p_, "unbalanced brackets");
      stack.pop_back();
    }
    ++p_;
  } while (!stack.empty());
  return std::string(start, p_);
}

}  // namespace text_internal
}  // namespace passlab
