#include "core/text/hlo_parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

constexpr int kMaxNesting = 200;

bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$';
}
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
         c == '$';
}

// Where a name was used, for errors after resolution.
struct Use {
  const char* pos;
  std::string name;
};

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename, ParseOptions options = {})
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), file_(filename),
        options_(std::move(options)) {}

  absl::StatusOr<std::unique_ptr<HloModule>> ParseModule();
  absl::StatusOr<Shape> ParseStandaloneShape();

 private:
  // ---- Errors ----
  absl::Status Error(const char* at, std::string_view message) {
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
  absl::Status Error(std::string_view message) { return Error(p_, message); }

  std::string TokenAt(const char* at) const {
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

  // ---- Lexing helpers ----
  void SkipWs() {
    while (p_ < end_) {
      char c = *p_;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++p_;
      } else if (c == '/' && p_ + 1 < end_ && p_[1] == '/') {
        while (p_ < end_ && *p_ != '\n') ++p_;
      } else if (c == '/' && p_ + 1 < end_ && p_[1] == '*') {
        const char* close = nullptr;
        for (const char* q = p_ + 2; q + 1 < end_; ++q) {
          if (q[0] == '*' && q[1] == '/') {
            close = q;
            break;
          }
        }
        p_ = close == nullptr ? end_ : close + 2;
      } else {
        break;
      }
    }
  }
  bool AtEnd() {
    SkipWs();
    return p_ >= end_;
  }
  char Peek() {
    SkipWs();
    return p_ < end_ ? *p_ : '\0';
  }
  bool PeekIs(std::string_view s) {
    SkipWs();
    return static_cast<size_t>(end_ - p_) >= s.size() && std::string_view(p_, s.size()) == s;
  }
  bool Consume(char c) {
    if (Peek() == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool ConsumeStr(std::string_view s) {
    if (PeekIs(s)) {
      p_ += s.size();
      return true;
    }
    return false;
  }
  absl::Status Expect(char c, std::string_view what = "") {
    if (Consume(c)) return absl::OkStatus();
    return Error(StrCat("expected '", std::string(1, c), "'", what.empty() ? "" : " ", what));
  }
  absl::Status ExpectStr(std::string_view s) {
    if (ConsumeStr(s)) return absl::OkStatus();
    return Error(StrCat("expected '", s, "'"));
  }
  // ", w" follows (w a whole word); consumes nothing.
  bool PeekCommaWord(std::string_view w) {
    if (Peek() != ',') return false;
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    return static_cast<size_t>(end_ - q) >= w.size() && std::string_view(q, w.size()) == w &&
           (q + w.size() >= end_ || !IsNameChar(q[w.size()]));
  }
  // A keyword-like word: letters, digits, '_', '.', '-' (no '%').
  bool PeekWord(std::string_view w) {
    SkipWs();
    if (static_cast<size_t>(end_ - p_) < w.size() || std::string_view(p_, w.size()) != w) {
      return false;
    }
    const char* after = p_ + w.size();
    return after >= end_ || !IsNameChar(*after);
  }
  bool ConsumeWord(std::string_view w) {
    if (!PeekWord(w)) return false;
    p_ += w.size();
    return true;
  }

  absl::StatusOr<std::string> ParseName() {
    SkipWs();
    const char* start = p_;
    if (p_ < end_ && *p_ == '%') ++p_;
    if (p_ >= end_ || !(IsNameStart(*p_) || std::isdigit(static_cast<unsigned char>(*p_)))) {
      return Error(start, "expected a name");
    }
    const char* name_start = p_;
    while (p_ < end_ && IsNameChar(*p_)) ++p_;
    if (p_ == name_start) return Error(start, "expected a name");
    return std::string(name_start, p_);
  }
  // Attribute names and keywords ("to_apply", "control-predecessors").
  absl::StatusOr<std::string> ParseIdentifier() {
    SkipWs();
    const char* start = p_;
    while (p_ < end_ && IsNameChar(*p_)) ++p_;
    if (p_ == start) return Error(start, "expected an identifier");
    return std::string(start, p_);
  }

  absl::StatusOr<int64_t> ParseInt() {
    SkipWs();
    const char* start = p_;
    if (p_ < end_ && (*p_ == '-' || *p_ == '+')) ++p_;
    const char* digits = p_;
    while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
    if (p_ == digits) {
      p_ = start;
      return Error(start, "expected an integer");
    }
    int64_t v;
    if (!SimpleAtoi(std::string_view(start, p_ - start), &v)) {
      return Error(start, "integer out of range");
    }
    return v;
  }
  absl::StatusOr<bool> ParseBool() {
    if (ConsumeWord("true")) return true;
    if (ConsumeWord("false")) return false;
    return Error("expected true or false");
  }
  absl::StatusOr<double> ParseDouble() {
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
  // A "..." string with C escapes; quote='\'' reads XLA's '...' strings
  // (mesh axis names).
  absl::StatusOr<std::string> ParseString(char quote = '"') {
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
  // Captures balanced text starting at an opening bracket, respecting strings.
  absl::StatusOr<std::string> ParseBalanced() {
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
  template <typename T, typename Fn>
  absl::StatusOr<std::vector<T>> ParseList(char open, char close, Fn&& element) {
    std::vector<T> out;
    if (absl::Status s = Expect(open); !s.ok()) return s;
    if (Consume(close)) return out;
    do {
      absl::StatusOr<T> v = element();
      if (!v.ok()) return v.status();
      out.push_back(std::move(*v));
    } while (Consume(','));
    if (absl::Status s = Expect(close); !s.ok()) return s;
    return out;
  }
  absl::StatusOr<std::vector<int64_t>> ParseIntList(char open = '{', char close = '}') {
    return ParseList<int64_t>(open, close, [&] { return ParseInt(); });
  }
  absl::StatusOr<std::vector<bool>> ParseBoolList() {
    return ParseList<bool>('{', '}', [&] { return ParseBool(); });
  }
  absl::StatusOr<std::vector<bool>> ParseBoolOrBoolList() {
    if (Peek() == '{') return ParseBoolList();
    absl::StatusOr<bool> b = ParseBool();
    if (!b.ok()) return b.status();
    return std::vector<bool>{*b};
  }
  // "AxBxC" with optional negative numbers.
  absl::StatusOr<std::vector<int64_t>> ParseXList() {
    std::vector<int64_t> out;
    do {
      absl::StatusOr<int64_t> v = ParseInt();
      if (!v.ok()) return v.status();
      out.push_back(*v);
    } while (p_ < end_ && *p_ == 'x' && ++p_);
    return out;
  }

  // ---- Shapes and layouts ----
  bool PeekShape() {
    SkipWs();
    if (p_ >= end_) return false;
    if (*p_ == '(' || PeekBufferShape()) return true;
    const char* q = p_;
    while (q < end_ && std::isalnum(static_cast<unsigned char>(*q))) ++q;
    std::string_view type_name(p_, q - p_);
    // XLA's lexer allows blanks between the type and '[' ("s32 [2]").
    while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
    if (q >= end_ || *q != '[') return false;
    return PrimitiveTypeFromName(type_name).has_value();
  }

  // "word[" where word is not a type: a misspelt shape ("f33[2]"), reported
  // by ParseShape as an unknown element type.
  bool PeekUnknownShape() {
    SkipWs();
    const char* q = p_;
    while (q < end_ && std::isalnum(static_cast<unsigned char>(*q))) ++q;
    const char* word_end = q;
    while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
    return word_end != p_ && q < end_ && *q == '[';
  }

  // "b(" starts a buffer shape, "b(f32[16])" (XLA's ParseShape).
  bool PeekBufferShape() {
    SkipWs();
    if (p_ >= end_ || *p_ != 'b') return false;
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    return q < end_ && *q == '(';
  }

  absl::StatusOr<Shape> ParseShape(int depth = 0) {
    if (depth > kMaxNesting) return Error("shape nesting too deep");
    SkipWs();
    if (PeekBufferShape()) {
      const char* start = p_;
      ++p_;
      Consume('(');
      absl::StatusOr<Shape> inner = ParseShape(depth + 1);
      if (!inner.ok()) return inner.status();
      // ShapeUtil::MakeValidatedBufferShape: a buffer holds one array.
      if (!inner->IsArray() || inner->IsBuffer()) {
        return Error(start, "a buffer shape b(...) must hold an array shape");
      }
      if (absl::Status s = Expect(')', "closing a buffer shape"); !s.ok()) return s;
      inner->set_is_buffer(true);
      return inner;
    }
    if (Consume('(')) {
      std::vector<Shape> elements;
      if (!Consume(')')) {
        do {
          absl::StatusOr<Shape> e = ParseShape(depth + 1);
          if (!e.ok()) return e.status();
          elements.push_back(std::move(*e));
        } while (Consume(','));
        if (absl::Status s = Expect(')', "closing a tuple shape"); !s.ok()) return s;
      }
      return Shape::Tuple(std::move(elements));
    }
    const char* start = p_;
    while (p_ < end_ && std::isalnum(static_cast<unsigned char>(*p_))) ++p_;
    std::string_view type_name(start, p_ - start);
    std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
    if (!type.has_value() || *type == PrimitiveType::kTuple) {
      return Error(start, StrCat("unknown element type '", type_name, "'"));
    }
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
    if (p_ >= end_ || *p_ != '[') return Error(p_, "expected '[' after the element type");
    ++p_;
    Shape shape;
    if (*type == PrimitiveType::kToken) {
      shape = Shape::Token();
    } else if (*type == PrimitiveType::kOpaque) {
      shape = Shape::Opaque();
    } else {
      shape = Shape::ArrayWithoutLayout(*type, {});
    }
    if (!Consume(']')) {
      do {
        SkipWs();
        if (Consume('?')) {
          shape.add_dimension(Shape::kUnboundedSize, true);
          continue;
        }
        bool dynamic = ConsumeStr("<=");
        const char* at = p_;
        absl::StatusOr<int64_t> d = ParseInt();
        if (!d.ok()) return d.status();
        if (*d < 0) return Error(at, "dimension sizes must be non-negative");
        shape.add_dimension(*d, dynamic);
      } while (Consume(','));
      if (absl::Status s = Expect(']', "closing the dimensions"); !s.ok()) return s;
      if (!shape.IsArray()) return Error(start, "token and opaque shapes have no dimensions");
    }
    if (shape.IsArray()) {
      if (PeekLayout()) {
        absl::StatusOr<Layout> layout = ParseLayout(depth);
        if (!layout.ok()) return layout.status();
        shape.set_layout(std::move(*layout));
      } else if (!keep_missing_layouts_ || shape.rank() == 0) {
        shape.SetDefaultLayout();
      }
    }
    return shape;
  }

  // A '{' starts a layout only when followed by a digit, ':' or '}'; this
  // tells "-> f32[2] {" (a computation body) from "f32[2]{0}".
  bool PeekLayout() {
    if (Peek() != '{') return false;
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')) ++q;
    return q < end_ && (std::isdigit(static_cast<unsigned char>(*q)) || *q == ':' || *q == '}');
  }

  absl::StatusOr<Layout> ParseLayout(int depth) {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    Layout layout;
    if (!Consume('}')) {
      if (Peek() != ':') {
        do {
          absl::StatusOr<int64_t> d = ParseInt();
          if (!d.ok()) return d.status();
          layout.mutable_minor_to_major().push_back(*d);
        } while (Consume(','));
      }
      if (Consume(':')) {
        while (Peek() != '}' && p_ < end_) {
          const char* at = p_;
          if (ConsumeStr("SC")) {
            while (Peek() == '(') {
              ++p_;
              SplitConfig sc;
              absl::StatusOr<int64_t> dim = ParseInt();
              if (!dim.ok()) return dim.status();
              sc.dimension = *dim;
              if (absl::Status s = Expect(':'); !s.ok()) return s;
              do {
                absl::StatusOr<int64_t> v = ParseInt();
                if (!v.ok()) return v.status();
                sc.split_indices.push_back(*v);
              } while (Consume(','));
              if (absl::Status s = Expect(')'); !s.ok()) return s;
              layout.mutable_split_configs().push_back(std::move(sc));
            }
          } else if (Consume('D')) {
            if (absl::Status s = Expect('('); !s.ok()) return s;
            do {
              SkipWs();
              DimLevel level;
              char c = p_ < end_ ? *p_ : '\0';
              if (c == 'D') level.type = DimLevelType::kDense;
              else if (c == 'C') level.type = DimLevelType::kCompressed;
              else if (c == 'S') level.type = DimLevelType::kSingleton;
              else if (c == 'H') level.type = DimLevelType::kLooseCompressed;
              else return Error("expected a dim level type (D, C, S or H)");
              ++p_;
              while (p_ < end_ && (*p_ == '+' || *p_ == '~')) {
                if (*p_ == '+') level.unique = false;
                if (*p_ == '~') level.ordered = false;
                ++p_;
              }
              layout.mutable_dim_levels().push_back(level);
            } while (Consume(','));
            if (absl::Status s = Expect(')'); !s.ok()) return s;
          } else if (Consume('T')) {
            while (Peek() == '(') {
              ++p_;
              Tile tile;
              if (!Consume(')')) {
                do {
                  if (Consume('*')) {
                    tile.dims.push_back(Tile::kCombineDimension);
                  } else {
                    absl::StatusOr<int64_t> v = ParseInt();
                    if (!v.ok()) return v.status();
                    tile.dims.push_back(*v);
                  }
                } while (Consume(','));
                if (absl::Status s = Expect(')'); !s.ok()) return s;
              }
              layout.mutable_tiles().push_back(std::move(tile));
            }
          } else if (Consume('L') || Consume('E') || Consume('S') || Consume('M')) {
            char field = p_[-1];
            if (absl::Status s = Expect('('); !s.ok()) return s;
            absl::StatusOr<int64_t> v = ParseInt();
            if (!v.ok()) return v.status();
            if (absl::Status s = Expect(')'); !s.ok()) return s;
            if (field == 'L') layout.set_tail_padding_alignment_in_elements(*v);
            if (field == 'E') layout.set_element_size_in_bits(*v);
            if (field == 'S') layout.set_memory_space(*v);
            if (field == 'M') layout.set_dynamic_shape_metadata_prefix_bytes(*v);
          } else if (Consume('#') || Consume('*')) {
            char field = p_[-1];
            if (absl::Status s = Expect('('); !s.ok()) return s;
            SkipWs();
            const char* ts = p_;
            while (p_ < end_ && std::isalnum(static_cast<unsigned char>(*p_))) ++p_;
            std::optional<PrimitiveType> t = PrimitiveTypeFromName(std::string_view(ts, p_ - ts));
            if (!t.has_value()) return Error(ts, "unknown primitive type in layout");
            if (absl::Status s = Expect(')'); !s.ok()) return s;
            if (field == '#') layout.set_index_primitive_type(*t);
            else layout.set_pointer_primitive_type(*t);
          } else if (Consume('P')) {
            if (absl::Status s = Expect('('); !s.ok()) return s;
            absl::StatusOr<Shape> phys = ParseShape(depth + 1);
            if (!phys.ok()) return phys.status();
            if (absl::Status s = Expect(')'); !s.ok()) return s;
            layout.set_physical_shape(*phys);
          } else {
            return Error(at, "unknown layout field");
          }
        }
      }
      if (absl::Status s = Expect('}', "closing the layout"); !s.ok()) return s;
    }
    return layout;
  }

  // ---- Literals ----
  absl::Status ParseElement(Literal& lit, int64_t linear) {
    SkipWs();
    const char* at = p_;
    PrimitiveType t = lit.shape().element_type();
    if (t == PrimitiveType::kPred) {
      if (ConsumeWord("true")) return lit.SetBits(linear, 1), absl::OkStatus();
      if (ConsumeWord("false")) return lit.SetBits(linear, 0), absl::OkStatus();
      absl::StatusOr<int64_t> v = ParseInt();
      if (!v.ok() || (*v != 0 && *v != 1)) return Error(at, "expected a pred value (true/false)");
      lit.SetBits(linear, *v);
      return absl::OkStatus();
    }
    if (IsComplexType(t)) {
      if (absl::Status s = Expect('(', "starting a complex value"); !s.ok()) return s;
      absl::StatusOr<double> re = ParseDouble();
      if (!re.ok()) return re.status();
      if (absl::Status s = Expect(','); !s.ok()) return s;
      absl::StatusOr<double> im = ParseDouble();
      if (!im.ok()) return im.status();
      if (absl::Status s = Expect(')'); !s.ok()) return s;
      lit.SetComplex(linear, {*re, *im});
      return absl::OkStatus();
    }
    if (IsIntegralType(t)) {
      const char* start = p_;
      if (p_ < end_ && (*p_ == '-' || *p_ == '+')) ++p_;
      while (p_ < end_ && std::isdigit(static_cast<unsigned char>(*p_))) ++p_;
      std::string_view text(start, p_ - start);
      int width = PrimitiveBitWidth(t);
      if (IsSignedIntegralType(t)) {
        int64_t v;
        if (!SimpleAtoi(text, &v)) return Error(at, "expected an integer constant");
        int64_t lo = width == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (width - 1));
        int64_t hi = width == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1;
        if (v < lo || v > hi) {
          return Error(at, StrCat("constant ", text, " is out of range for ", PrimitiveTypeName(t)));
        }
        lit.SetInt(linear, v);
      } else {
        uint64_t v;
        if (!SimpleAtoi(text, &v)) return Error(at, "expected an unsigned integer constant");
        if (width < 64 && v >= (uint64_t{1} << width)) {
          return Error(at, StrCat("constant ", text, " is out of range for ", PrimitiveTypeName(t)));
        }
        lit.SetBits(linear, v);
      }
      return absl::OkStatus();
    }
    // Floating point, including "nan(0x..)" payloads.
    bool neg = false;
    if (p_ < end_ && (*p_ == '-' || *p_ == '+')) {
      neg = *p_ == '-';
      ++p_;
    }
    if (ConsumeWord("nan")) {
      int mbits = MantissaBits(t);
      int width = PrimitiveBitWidth(t);
      uint64_t payload = mbits > 0 ? uint64_t{1} << (mbits - 1) : 0;
      if (p_ < end_ && *p_ == '(') {
        ++p_;
        if (!ConsumeStr("0x")) return Error("expected a hex NaN payload");
        const char* hs = p_;
        while (p_ < end_ && std::isxdigit(static_cast<unsigned char>(*p_))) ++p_;
        if (p_ == hs || p_ - hs > 16) return Error(hs, "malformed NaN payload");
        payload = std::strtoull(std::string(hs, p_).c_str(), nullptr, 16);
        if (absl::Status s = Expect(')'); !s.ok()) return s;
        if (payload == 0 || (mbits < 64 && payload >= (uint64_t{1} << mbits))) {
          return Error(hs, StrCat("NaN payload does not fit the ", mbits, "-bit mantissa of ",
                                        PrimitiveTypeName(t)));
        }
      }
      uint64_t nan_bits = DoubleToSmallFloatBits(t, std::nan(""));
      if (mbits > 0 && t != PrimitiveType::kF8E4M3FN && t != PrimitiveType::kF8E4M3FNUZ &&
          t != PrimitiveType::kF8E5M2FNUZ && t != PrimitiveType::kF8E4M3B11FNUZ) {
        uint64_t exp_mask = ((uint64_t{1} << (width - 1)) - 1) & ~((uint64_t{1} << mbits) - 1);
        nan_bits = exp_mask | payload;
        if (neg) nan_bits |= uint64_t{1} << (width - 1);
      } else if (neg && t == PrimitiveType::kF8E4M3FN) {
        nan_bits |= 0x80;
      }
      lit.SetBits(linear, nan_bits);
      return absl::OkStatus();
    }
    p_ = at;
    absl::StatusOr<double> v = ParseDouble();
    if (!v.ok()) return v.status();
    lit.SetDouble(linear, *v);
    return absl::OkStatus();
  }

  absl::Status ParseArrayLiteral(Literal& lit, int64_t dim, int64_t& linear, int depth) {
    const auto& dims = lit.shape().dimensions();
    int64_t rank = lit.shape().rank();
    if (depth > kMaxNesting) return Error("literal nesting too deep");
    if (dim == rank) return ParseElement(lit, linear++);
    const char* at = p_;
    if (absl::Status s = Expect('{', StrCat("(the constant has rank ", rank, ")")); !s.ok()) {
      return s;
    }
    int64_t count = 0;
    if (!Consume('}')) {
      do {
        if (count >= dims[dim]) {
          return Error(at, StrCat("too many elements in dimension ", dim, " of the constant (",
                                        dims[dim], " expected)"));
        }
        if (absl::Status s = ParseArrayLiteral(lit, dim + 1, linear, depth + 1); !s.ok()) return s;
        ++count;
      } while (Consume(','));
      if (absl::Status s = Expect('}'); !s.ok()) return s;
    }
    if (count != dims[dim]) {
      return Error(at, StrCat("dimension ", dim, " of the constant has ", count,
                                    " elements but the shape says ", dims[dim]));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Literal> ParseLiteral(const Shape& shape, int depth = 0) {
    if (depth > kMaxNesting) return Error("literal nesting too deep");
    if (shape.IsTuple()) {
      if (absl::Status s = Expect('(', "starting a tuple constant"); !s.ok()) return s;
      std::vector<Literal> elements;
      for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
        if (i > 0) {
          if (absl::Status s = Expect(','); !s.ok()) return s;
        }
        absl::StatusOr<Literal> e = ParseLiteral(shape.tuple_shapes(i), depth + 1);
        if (!e.ok()) return e.status();
        elements.push_back(std::move(*e));
      }
      if (absl::Status s = Expect(')'); !s.ok()) return s;
      Literal l = Literal::Tuple(std::move(elements));
      l.set_shape_layout(shape);
      return l;
    }
    if (!shape.IsArray()) return Error("constants must have an array or tuple shape");
    if (shape.byte_size() > (int64_t{1} << 32)) {
      return Error(StrCat("constant of shape ", shape.ToString(), " is too large (over 4 GiB)"));
    }
    Literal lit(shape);
    if (shape.rank() > 0 && PeekIs("{...}")) {
      p_ += 5;
      lit.set_elided(true);
      return lit;
    }
    // XLA also accepts a scalar written in braces for rank-0? No: rank 0 is
    // the bare element.
    if (shape.rank() > 0 && Peek() != '{') {
      // XLA accepts one value for a whole array: "f32[2,3] constant(0)".
      if (lit.element_count() == 0) return Error("a value was given for an empty array");
      if (absl::Status s = ParseElement(lit, 0); !s.ok()) return s;
      int w = PrimitiveByteWidth(shape.element_type());
      for (int64_t i = 1; i < lit.element_count(); ++i) {
        std::memcpy(lit.untyped_data() + i * w, lit.untyped_data(), w);
      }
      return lit;
    }
    int64_t linear = 0;
    if (absl::Status s = ParseArrayLiteral(lit, 0, linear, depth); !s.ok()) return s;
    return lit;
  }

  // ---- Attribute values ----
  absl::StatusOr<Window> ParseWindow() {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    Window w;
    auto resize = [&](size_t n, const char* at) -> absl::Status {
      if (w.dimensions.empty()) w.dimensions.resize(n);
      if (w.dimensions.size() != n) return Error(at, "window fields have different ranks");
      return absl::OkStatus();
    };
    while (!Consume('}')) {
      if (p_ >= end_) return Error("unterminated window");
      const char* at = p_;
      absl::StatusOr<std::string> field = ParseIdentifier();
      if (!field.ok()) return field.status();
      if (absl::Status s = Expect('='); !s.ok()) return s;
      SkipWs();
      if (*field == "pad") {
        std::vector<std::pair<int64_t, int64_t>> pads;
        do {
          absl::StatusOr<int64_t> lo = ParseInt();
          if (!lo.ok()) return lo.status();
          if (p_ >= end_ || *p_ != '_') return Error("expected '_' in window padding");
          ++p_;
          absl::StatusOr<int64_t> hi = ParseInt();
          if (!hi.ok()) return hi.status();
          pads.push_back({*lo, *hi});
        } while (p_ < end_ && *p_ == 'x' && ++p_);
        if (absl::Status s = resize(pads.size(), at); !s.ok()) return s;
        for (size_t i = 0; i < pads.size(); ++i) {
          w.dimensions[i].padding_low = pads[i].first;
          w.dimensions[i].padding_high = pads[i].second;
        }
        continue;
      }
      absl::StatusOr<std::vector<int64_t>> values = ParseXList();
      if (!values.ok()) return values.status();
      if (absl::Status s = resize(values->size(), at); !s.ok()) return s;
      for (size_t i = 0; i < values->size(); ++i) {
        WindowDimension& d = w.dimensions[i];
        int64_t v = (*values)[i];
        if (*field == "size") d.size = v;
        else if (*field == "stride") d.stride = v;
        else if (*field == "lhs_dilate") d.base_dilation = v;
        else if (*field == "rhs_dilate") d.window_dilation = v;
        else if (*field == "rhs_reversal") d.window_reversal = v != 0;
        else return Error(at, StrCat("unknown window field '", *field, "'"));
      }
    }
    return w;
  }

  absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels() {
    SkipWs();
    const char* at = p_;
    while (p_ < end_ && (std::isalnum(static_cast<unsigned char>(*p_)) || *p_ == '_' ||
                         *p_ == '-' || *p_ == '>' || *p_ == '?')) {
      ++p_;
    }
    std::string text(at, p_);
    size_t arrow = text.find("->");
    size_t us = text.find('_');
    if (arrow == std::string::npos || us == std::string::npos || us > arrow) {
      return Error(at, "malformed dim_labels (expected e.g. b01f_01io->b01f)");
    }
    std::string lhs = text.substr(0, us), rhs = text.substr(us + 1, arrow - us - 1),
                out = text.substr(arrow + 2);
    if (lhs.size() != rhs.size() || lhs.size() != out.size() || lhs.size() < 2) {
      return Error(at, "dim_labels parts must have the same rank (at least 2)");
    }
    ConvolutionDimensionNumbers d;
    int64_t spatial = static_cast<int64_t>(lhs.size()) - 2;
    auto fill = [&](const std::string& s, char a, char b, int64_t& da, int64_t& db,
                    std::vector<int64_t>& sp) -> absl::Status {
      sp.assign(spatial, -1);
      bool seen_a = false, seen_b = false;
      for (size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == a && !seen_a) {
          da = i;
          seen_a = true;
        } else if (c == b && !seen_b) {
          db = i;
          seen_b = true;
        } else if (c >= '0' && c <= '9' && c - '0' < spatial && sp[c - '0'] == -1) {
          sp[c - '0'] = i;
        } else {
          return Error(at, StrCat("invalid dim_labels '", s, "'"));
        }
      }
      return absl::OkStatus();
    };
    if (absl::Status s = fill(lhs, 'b', 'f', d.input_batch_dimension, d.input_feature_dimension,
                              d.input_spatial_dimensions); !s.ok()) return s;
    if (absl::Status s = fill(rhs, 'i', 'o', d.kernel_input_feature_dimension,
                              d.kernel_output_feature_dimension, d.kernel_spatial_dimensions);
        !s.ok()) return s;
    if (absl::Status s = fill(out, 'b', 'f', d.output_batch_dimension, d.output_feature_dimension,
                              d.output_spatial_dimensions); !s.ok()) return s;
    return d;
  }

  absl::StatusOr<PaddingConfig> ParsePadding() {
    PaddingConfig config;
    do {
      PaddingDimension d;
      absl::StatusOr<int64_t> lo = ParseInt();
      if (!lo.ok()) return lo.status();
      if (p_ >= end_ || *p_ != '_') return Error("expected '_' in padding");
      ++p_;
      absl::StatusOr<int64_t> hi = ParseInt();
      if (!hi.ok()) return hi.status();
      d.edge_padding_low = *lo;
      d.edge_padding_high = *hi;
      if (p_ < end_ && *p_ == '_') {
        ++p_;
        absl::StatusOr<int64_t> in = ParseInt();
        if (!in.ok()) return in.status();
        d.interior_padding = *in;
      }
      config.dimensions.push_back(d);
    } while (p_ < end_ && *p_ == 'x' && ++p_);
    return config;
  }

  absl::StatusOr<std::vector<SliceDimension>> ParseSliceRanges() {
    return ParseList<SliceDimension>('{', '}', [&]() -> absl::StatusOr<SliceDimension> {
      SliceDimension d;
      if (absl::Status s = Expect('['); !s.ok()) return s;
      absl::StatusOr<int64_t> a = ParseInt();
      if (!a.ok()) return a.status();
      if (absl::Status s = Expect(':'); !s.ok()) return s;
      absl::StatusOr<int64_t> b = ParseInt();
      if (!b.ok()) return b.status();
      d.start = *a;
      d.limit = *b;
      if (Consume(':')) {
        absl::StatusOr<int64_t> c = ParseInt();
        if (!c.ok()) return c.status();
        d.stride = *c;
      }
      if (absl::Status s = Expect(']'); !s.ok()) return s;
      return d;
    });
  }

  absl::StatusOr<ReplicaGroups> ParseReplicaGroups() {
    ReplicaGroups g;
    if (Peek() == '[') {
      g.iota = true;
      absl::StatusOr<std::vector<int64_t>> dims = ParseIntList('[', ']');
      if (!dims.ok()) return dims.status();
      g.iota_group_dims = *dims;
      if (absl::Status s = ExpectStr("<="); !s.ok()) return s;
      absl::StatusOr<std::vector<int64_t>> reshape = ParseIntList('[', ']');
      if (!reshape.ok()) return reshape.status();
      g.iota_reshape_dims = *reshape;
      if (ConsumeStr("T")) {
        absl::StatusOr<std::vector<int64_t>> perm = ParseIntList('(', ')');
        if (!perm.ok()) return perm.status();
        g.iota_transpose_perm = *perm;
      }
      int64_t n = 1, m = 1;
      for (int64_t d : g.iota_reshape_dims) n *= d;
      for (int64_t d : g.iota_group_dims) m *= d;
      if (g.iota_group_dims.size() != 2 || n != m || n <= 0 || n > (1 << 24)) {
        return Error("iota replica groups must be [groups,size]<=[dims] with equal element counts");
      }
      return g;
    }
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups =
        ParseList<std::vector<int64_t>>('{', '}', [&] { return ParseIntList(); });
    if (!groups.ok()) return groups.status();
    g.groups = std::move(*groups);
    return g;
  }

  absl::StatusOr<OpMetadata> ParseMetadata() {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    OpMetadata m;
    while (!Consume('}')) {
      if (p_ >= end_) return Error("unterminated metadata");
      Consume(',');
      const char* at = p_;
      absl::StatusOr<std::string> key = ParseIdentifier();
      if (!key.ok()) return key.status();
      if (absl::Status s = Expect('='); !s.ok()) return s;
      auto str = [&](std::string& field) -> absl::Status {
        absl::StatusOr<std::string> v = ParseString();
        if (!v.ok()) return v.status();
        field = std::move(*v);
        return absl::OkStatus();
      };
      auto num = [&](int64_t& field) -> absl::Status {
        absl::StatusOr<int64_t> v = ParseInt();
        if (!v.ok()) return v.status();
        field = *v;
        return absl::OkStatus();
      };
      absl::Status s;
      if (*key == "op_type") s = str(m.op_type);
      else if (*key == "op_name") s = str(m.op_name);
      else if (*key == "source_file") s = str(m.source_file);
      else if (*key == "source_line") s = num(m.source_line);
      else if (*key == "source_end_line") s = num(m.source_end_line);
      else if (*key == "source_column") s = num(m.source_column);
      else if (*key == "source_end_column") s = num(m.source_end_column);
      else if (*key == "deduplicated_name") s = str(m.deduplicated_name);
      else if (*key == "scheduling_name") s = str(m.scheduling_name);
      else if (*key == "stack_frame_id") s = num(m.stack_frame_id);
      else if (*key == "preserve_layout") {
        absl::StatusOr<bool> b = ParseBool();
        if (!b.ok()) return b.status();
        m.preserve_layout = *b;
      } else if (*key == "profile_type") {
        absl::StatusOr<std::vector<std::string>> types =
            ParseList<std::string>('{', '}', [&] { return ParseIdentifier(); });
        if (!types.ok()) return types.status();
        m.profile_type = std::move(*types);
      } else {
        return Error(at, StrCat("unknown metadata field '", *key, "'"));
      }
      if (!s.ok()) return s;
    }
    return m;
  }

  // ---- Named ("V3") shardings ----
  // XLA's ParseMesh, ParseAxisRef, ParseDimensionSharding and the
  // NamedSharding overload of ParseSingleSharding (xla/hlo/parser/
  // hlo_parser.cc). What XLA's NamedSharding and Mesh constructors CHECK
  // (VerifyNamedSharding in named_sharding.cc, Mesh::Validate in
  // mesh_and_axis.cc) is an error here, naming the axis.
  struct NamedParse {
    NamedSharding ns;
    std::string mesh_text;  // the mesh as written, for errors
    // Every axis reference so far: one mesh axis (or sub-axis) may be used
    // once per sharding.
    std::vector<NamedSharding::AxisRef> used;
  };

  // XLA's CanonicalizeIotaDims (xla/hlo/ir/tile_assignment.cc): drops
  // dimensions of size one and merges runs the transpose keeps in order, so
  // "[2,2]T(0,1)" is the plain iota "[4]".
  static void CanonicalizeIota(std::vector<int64_t>& dims, std::vector<int64_t>& perm) {
    while (dims.size() > 1) {
      std::vector<int64_t> new_index(dims.size(), -1);
      std::vector<int64_t> kept_dims, kept_perm;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 1) continue;
        new_index[i] = static_cast<int64_t>(kept_dims.size());
        kept_dims.push_back(dims[i]);
      }
      for (int64_t d : perm) {
        if (new_index[d] >= 0) kept_perm.push_back(new_index[d]);
      }
      dims = std::move(kept_dims);
      perm = std::move(kept_perm);
      bool merged = false;
      for (size_t i = 1, base = 0; i < dims.size(); ++i) {
        if (perm[base] + static_cast<int64_t>(i - base) == perm[i]) {
          dims[perm[base]] *= dims[perm[i]];
          dims[perm[i]] = 1;
          merged = true;
        } else {
          base = i;
        }
      }
      if (!merged) break;
    }
  }

  // mesh ::= 'maximal_mesh' '[' 'device_id' '=' int ']'
  //        | 'mesh' '[' ("'name'" '=' size (',' ...)*)? ']'
  //          (',' 'device_ids' '=' '(' (int_list | '[' dims ']' ('T(' perm ')')?) ')')?
  absl::Status ParseMesh(NamedParse& np) {
    SkipWs();
    const char* start = p_;
    NamedSharding& ns = np.ns;
    if (ConsumeWord("maximal_mesh")) {
      if (absl::Status s = Expect('[', "after maximal_mesh"); !s.ok()) return s;
      if (!ConsumeWord("device_id")) return Error("expected device_id= in maximal_mesh");
      if (absl::Status s = Expect('='); !s.ok()) return s;
      absl::StatusOr<int64_t> device = ParseInt();
      if (!device.ok()) return device.status();
      if (absl::Status s = Expect(']', "closing maximal_mesh"); !s.ok()) return s;
      ns.form = NamedSharding::Form::kMaximal;
      ns.maximal_device = *device;
      np.mesh_text = std::string(start, p_);
      return absl::OkStatus();
    }
    if (!ConsumeWord("mesh")) return Error("expected 'mesh' or 'maximal_mesh'");
    if (absl::Status s = Expect('[', "after mesh"); !s.ok()) return s;
    int64_t devices = 1;
    if (!Consume(']')) {
      do {
        SkipWs();
        const char* at = p_;
        absl::StatusOr<std::string> name = ParseString('\'');
        if (!name.ok()) return name.status();
        if (absl::Status s = Expect('=', "after the mesh axis name"); !s.ok()) return s;
        absl::StatusOr<int64_t> size = ParseInt();
        if (!size.ok()) return size.status();
        if (*size < 1) return Error(at, StrCat("mesh axis '", *name, "' must have a positive size"));
        for (const NamedSharding::MeshAxis& axis : ns.mesh) {
          if (axis.name == *name) return Error(at, StrCat("mesh axis '", *name, "' is given twice"));
        }
        if (*size > (1 << 24) || (devices *= *size) > (1 << 24)) return Error(at, "mesh too large");
        ns.mesh.push_back({*name, *size});
      } while (Consume(','));
      if (absl::Status s = Expect(']', "closing the mesh axes"); !s.ok()) return s;
    }
    np.mesh_text = std::string(start, p_);
    if (ns.mesh.empty()) return absl::OkStatus();
    // ", device_ids=" follows the axes; any other ',' belongs to the sharding.
    if (!PeekCommaWord("device_ids")) return absl::OkStatus();
    Consume(',');
    ConsumeWord("device_ids");
    if (absl::Status s = Expect('=', "after device_ids"); !s.ok()) return s;
    if (absl::Status s = Expect('(', "opening device_ids"); !s.ok()) return s;
    SkipWs();
    const char* at = p_;
    if (Peek() == '[') {
      // Iota device ids: [reshape_dims]T(transpose_perm).
      absl::StatusOr<std::vector<int64_t>> reshape = ParseIntList('[', ']');
      if (!reshape.ok()) return reshape.status();
      if (reshape->empty()) return Error(at, "expected non-empty iota reshape dimensions");
      std::vector<int64_t> perm(reshape->size());
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      if (ConsumeWord("T")) {
        absl::StatusOr<std::vector<int64_t>> p = ParseIntList('(', ')');
        if (!p.ok()) return p.status();
        std::vector<int64_t> sorted = *p;
        std::sort(sorted.begin(), sorted.end());
        if (sorted != perm) {
          return Error(at, StrCat("device_ids transpose must be a permutation of 0..",
                                  perm.size() - 1));
        }
        perm = std::move(*p);
      } else if (reshape->size() > 1) {
        return Error("expected 'T(' after the device_ids iota dimensions");
      }
      if (absl::Status s = Expect(')', "closing device_ids"); !s.ok()) return s;
      int64_t product = 1;
      for (int64_t d : *reshape) {
        if (d < 1 || d > (1 << 24) || (product *= d) > (1 << 24)) {
          return Error(at, "invalid device_ids iota dimensions");
        }
      }
      if (product != devices) {
        return Error(at, StrCat("mesh device_ids iota size ", product,
                                " does not match the product of the mesh axis sizes ", devices));
      }
      CanonicalizeIota(*reshape, perm);
      if (reshape->size() > 1) {
        ns.device_iota_reshape = std::move(*reshape);
        ns.device_iota_perm = std::move(perm);
      }
    } else {
      std::vector<int64_t> ids;
      if (!Consume(')')) {
        do {
          absl::StatusOr<int64_t> id = ParseInt();
          if (!id.ok()) return id.status();
          ids.push_back(*id);
          if (static_cast<int64_t>(ids.size()) > devices) {
            return Error(at, StrCat("expected ", devices,
                                    " device_ids based on mesh axes, but got more"));
          }
        } while (Consume(','));
        if (absl::Status s = Expect(')', "closing device_ids"); !s.ok()) return s;
      }
      if (static_cast<int64_t>(ids.size()) != devices) {
        return Error(at, StrCat("expected ", devices, " device_ids based on mesh axes, but got ",
                                ids.size()));
      }
      std::vector<int64_t> sorted = ids;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t i = 0; i < devices; ++i) {
        if (sorted[i] != i) {
          return Error(at, StrCat("mesh device_ids must be a permutation of 0..", devices - 1));
        }
      }
      if (sorted == ids) {
        return Error(at, "mesh device_ids are the identity; XLA requires such a mesh to be "
                         "written without device_ids");
      }
      ns.device_ids = std::move(ids);
    }
    np.mesh_text = std::string(start, p_);
    return absl::OkStatus();
  }

  // axis_ref ::= "'name'" | "'index'" (':(' pre_size ')' size)?
  absl::StatusOr<NamedSharding::AxisRef> ParseAxisRef(NamedParse& np) {
    SkipWs();
    const char* at = p_;
    absl::StatusOr<std::string> name = ParseString('\'');
    if (!name.ok()) return name.status();
    const std::vector<NamedSharding::MeshAxis>& mesh = np.ns.mesh;
    int64_t index = -1;
    for (size_t i = 0; i < mesh.size(); ++i) {
      if (mesh[i].name == *name) index = static_cast<int64_t>(i);
    }
    // XLA accepts an axis by its index too ("'0'"), as printed without a mesh.
    if (index < 0 && !SimpleAtoi(*name, &index)) {
      return Error(at, StrCat("axis '", *name, "' is not a valid axis name or index in mesh ",
                              np.mesh_text));
    }
    if (index < 0 || index >= static_cast<int64_t>(mesh.size())) {
      return Error(at, StrCat("axis index ", index, " is out of bounds for mesh ", np.mesh_text,
                              " which has ", mesh.size(), " axes"));
    }
    NamedSharding::AxisRef ref;
    ref.index = index;
    const int64_t full = mesh[index].size;
    if (Consume(':')) {
      if (absl::Status s = Expect('(', "before the sub-axis pre-size"); !s.ok()) return s;
      absl::StatusOr<int64_t> pre = ParseInt();
      if (!pre.ok()) return pre.status();
      if (absl::Status s = Expect(')', "after the sub-axis pre-size"); !s.ok()) return s;
      absl::StatusOr<int64_t> size = ParseInt();
      if (!size.ok()) return size.status();
      // AxisRef::Validate: pre_size * size divides the axis, size < axis size.
      if (*pre < 1 || *size < 1 || *pre > full || *size >= full || full % (*pre * *size) != 0) {
        return Error(at, StrCat("sub-axis '", *name, "':(", *pre, ")", *size,
                                " does not fit mesh axis '", mesh[index].name, "' of size ", full,
                                " (pre-size times size must divide it; size must be smaller)"));
      }
      ref.sub_axis = std::make_pair(*pre, *size);
    }
    // AxisRef::CanCoexistWithoutOverlap against every axis used so far.
    auto range = [&](const NamedSharding::AxisRef& a) {
      return a.sub_axis ? std::make_pair(a.sub_axis->first, a.sub_axis->first * a.sub_axis->second)
                        : std::make_pair(int64_t{1}, full);
    };
    for (const NamedSharding::AxisRef& other : np.used) {
      if (other.index != index) continue;
      auto [lo, hi] = range(ref);
      auto [other_lo, other_hi] = range(other);
      if (!ref.sub_axis || !other.sub_axis || (lo < other_hi && other_lo < hi)) {
        return Error(at, StrCat("axis '", *name, "' overlaps an axis used earlier in this sharding"));
      }
    }
    np.used.push_back(ref);
    return ref;
  }

  // Two sub-axes that are adjacent pieces of one axis (AxisRef::CanMerge).
  static bool CanMerge(const NamedSharding::AxisRef& a, const NamedSharding::AxisRef& b) {
    return a.index == b.index && a.sub_axis && b.sub_axis &&
           a.sub_axis->first * a.sub_axis->second == b.sub_axis->first;
  }

  // '{' axis_ref (',' axis_ref)* '}' for replicated=, unreduced= and manual=:
  // sorted by axis index and pre-size, no mergeable neighbours.
  absl::Status ParseAxisRefList(NamedParse& np, std::string_view what,
                                std::vector<NamedSharding::AxisRef>& out) {
    SkipWs();
    const char* at = p_;
    absl::StatusOr<std::vector<NamedSharding::AxisRef>> axes =
        ParseList<NamedSharding::AxisRef>('{', '}', [&] { return ParseAxisRef(np); });
    if (!axes.ok()) return axes.status();
    out.insert(out.end(), axes->begin(), axes->end());
    auto key = [](const NamedSharding::AxisRef& a) {
      return std::make_pair(a.index, a.sub_axis ? a.sub_axis->first : int64_t{1});
    };
    for (size_t i = 1; i < out.size(); ++i) {
      if (key(out[i]) < key(out[i - 1])) {
        return Error(at, StrCat(what, " axes must be sorted by mesh axis index and sub-axis pre-size"));
      }
      if (CanMerge(out[i - 1], out[i])) {
        return Error(at, StrCat("adjacent ", what, " axes can be merged into one"));
      }
    }
    return absl::OkStatus();
  }

  // dim_sharding ::= '{' (axis_ref (',' axis_ref)*)? (',' '?')? '}' | '{' '?' '}'
  absl::StatusOr<NamedSharding::DimSharding> ParseDimSharding(NamedParse& np) {
    NamedSharding::DimSharding dim;
    if (absl::Status s = Expect('{', "opening a dimension sharding"); !s.ok()) return s;
    if (Consume('}')) return dim;
    do {
      SkipWs();
      if (!dim.closed) return Error("saw an axis after '?' (the open mark comes last)");
      if (Consume('?')) {
        dim.closed = false;
        continue;
      }
      SkipWs();
      const char* at = p_;
      absl::StatusOr<NamedSharding::AxisRef> ref = ParseAxisRef(np);
      if (!ref.ok()) return ref.status();
      if (!dim.axes.empty() && CanMerge(dim.axes.back(), *ref)) {
        return Error(at, "adjacent axes in a dimension sharding can be merged into one");
      }
      dim.axes.push_back(*ref);
    } while (Consume(','));
    if (absl::Status s = Expect('}', "closing a dimension sharding"); !s.ok()) return s;
    return dim;
  }

  // XLA's ParseSingleOrListMetadata: "{op_name=...}" or "{{...}, {...}}".
  absl::Status ParseShardingMetadata(std::vector<OpMetadata>& out) {
    SkipWs();
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    if (Peek() == '{' && q < end_ && (*q == '{' || *q == '}')) {
      Consume('{');
      if (Consume('}')) return absl::OkStatus();
      do {
        absl::StatusOr<OpMetadata> m = ParseMetadata();
        if (!m.ok()) return m.status();
        out.push_back(std::move(*m));
      } while (Consume(','));
      return Expect('}', "closing the metadata list");
    }
    absl::StatusOr<OpMetadata> m = ParseMetadata();
    if (!m.ok()) return m.status();
    out.push_back(std::move(*m));
    return absl::OkStatus();
  }

  // Which of XLA's spellings NamedSharding::ToString (named_sharding.cc)
  // prints: "{replicated}" when nothing is sharded, unreduced or manual and
  // there are no dimensions; "{unreduced}" when every mesh axis is unreduced
  // in order (axes of size 1 may be left out); "{mesh[...], manual}" likewise
  // for manual; otherwise the full form.
  static NamedSharding::Form PrintedForm(const NamedSharding& ns) {
    using Form = NamedSharding::Form;
    if (ns.form == Form::kMaximal) return Form::kMaximal;
    auto size = [&](const NamedSharding::AxisRef& a) {
      return a.sub_axis ? a.sub_axis->second : ns.mesh[a.index].size;
    };
    auto all_axes_in_order = [&](const std::vector<NamedSharding::AxisRef>& axes) {
      size_t k = 0;
      for (size_t i = 0; i < ns.mesh.size(); ++i) {
        if (k < axes.size() && axes[k].index == static_cast<int64_t>(i)) {
          if (axes[k].sub_axis) return false;
          ++k;
        } else if (ns.mesh[i].size != 1) {
          return false;
        }
      }
      return k == axes.size();
    };
    bool dims_replicated = true;
    for (const NamedSharding::DimSharding& d : ns.dims) {
      for (const NamedSharding::AxisRef& a : d.axes) dims_replicated &= size(a) == 1;
    }
    if (dims_replicated && ns.unreduced_axes.empty() && ns.manual_axes.empty() &&
        ns.dims.empty() && ns.replicated_axes.empty()) {
      return Form::kReplicated;
    }
    if (ns.dims.empty() && !ns.unreduced_axes.empty() && all_axes_in_order(ns.unreduced_axes)) {
      return Form::kUnreduced;
    }
    if (ns.dims.empty() && !ns.manual_axes.empty() && all_axes_in_order(ns.manual_axes)) {
      return Form::kManual;
    }
    return Form::kDims;
  }

  // After the sharding's '{', at "mesh" or "maximal_mesh"; through the '}'.
  absl::Status ParseNamedSharding(HloSharding& sh) {
    NamedParse np;
    if (absl::Status s = ParseMesh(np); !s.ok()) return s;
    NamedSharding& ns = np.ns;
    using ReductionOp = NamedSharding::ReductionOp;
    auto metadata_if_present = [&]() -> absl::Status {
      if (!Consume(',')) return absl::OkStatus();
      if (!ConsumeWord("metadata")) return Error("expected metadata=");
      if (absl::Status s = Expect('=', "after metadata"); !s.ok()) return s;
      return ParseShardingMetadata(sh.metadata);
    };
    auto reduction_op = [&](ReductionOp& op) -> absl::Status {
      if (ConsumeWord("sum")) op = ReductionOp::kSum;
      else if (ConsumeWord("max")) op = ReductionOp::kMax;
      else if (ConsumeWord("min")) op = ReductionOp::kMin;
      else return Error("expected sum, max, or min for unreduced op");
      return absl::OkStatus();
    };
    auto all_axes = [&] {
      std::vector<NamedSharding::AxisRef> axes(ns.mesh.size());
      for (size_t i = 0; i < axes.size(); ++i) axes[i].index = static_cast<int64_t>(i);
      return axes;
    };
    auto finish = [&]() -> absl::Status {
      if (absl::Status s = Expect('}', "closing the sharding"); !s.ok()) return s;
      ns.unreduced_op_written = ns.unreduced_op != ReductionOp::kSum;
      ns.form = PrintedForm(ns);
      sh.kind = HloSharding::Kind::kNamed;
      sh.named = std::move(ns);
      return absl::OkStatus();
    };
    if (ns.form == NamedSharding::Form::kMaximal) {
      if (absl::Status s = metadata_if_present(); !s.ok()) return s;
      return finish();
    }
    Consume(',');
    // Whole-sharding forms: "replicated", "unreduced[=op][{axes}]", "manual".
    if (ConsumeWord("replicated")) {
      if (absl::Status s = metadata_if_present(); !s.ok()) return s;
      return finish();
    }
    if (ConsumeWord("unreduced")) {
      if (Consume('=')) {
        if (absl::Status s = reduction_op(ns.unreduced_op); !s.ok()) return s;
      }
      if (Peek() == '{') {
        if (absl::Status s = ParseAxisRefList(np, "unreduced", ns.unreduced_axes); !s.ok()) return s;
      } else {
        ns.unreduced_axes = all_axes();
      }
      if (absl::Status s = metadata_if_present(); !s.ok()) return s;
      return finish();
    }
    if (ConsumeWord("manual")) {
      ns.manual_axes = all_axes();
      if (absl::Status s = metadata_if_present(); !s.ok()) return s;
      return finish();
    }
    absl::StatusOr<std::vector<NamedSharding::DimSharding>> dims =
        ParseList<NamedSharding::DimSharding>('[', ']', [&] { return ParseDimSharding(np); });
    if (!dims.ok()) return dims.status();
    ns.dims = std::move(*dims);
    while (Peek() != '}') {
      if (p_ >= end_) return Error("unterminated sharding");
      if (absl::Status s = Expect(',', "before the next named sharding attribute"); !s.ok()) return s;
      SkipWs();
      const char* at = p_;
      absl::StatusOr<std::string> attr = ParseIdentifier();
      if (!attr.ok()) return attr.status();
      if (absl::Status s = Expect('=', StrCat("after '", *attr, "'")); !s.ok()) return s;
      absl::Status s;
      if (*attr == "replicated") {
        s = ParseAxisRefList(np, "replicated", ns.replicated_axes);
      } else if (*attr == "unreduced") {
        if (Peek() != '{') s = reduction_op(ns.unreduced_op);
        if (s.ok()) s = ParseAxisRefList(np, "unreduced", ns.unreduced_axes);
      } else if (*attr == "manual") {
        s = ParseAxisRefList(np, "manual", ns.manual_axes);
      } else if (*attr == "metadata") {
        s = ParseShardingMetadata(sh.metadata);
      } else {
        return Error(at, "unknown attribute in named sharding: expected replicated, unreduced, "
                         "manual or metadata");
      }
      if (!s.ok()) return s;
    }
    return finish();
  }

  absl::StatusOr<HloSharding> ParseSharding(int depth = 0) {
    if (depth > kMaxNesting) return Error("sharding nesting too deep");
    const char* start = p_;
    if (absl::Status s = Expect('{', "starting a sharding"); !s.ok()) return s;
    HloSharding sh;
    if (Peek() == '{' || Peek() == '}') {
      sh.kind = HloSharding::Kind::kTuple;
      if (Consume('}')) return sh;
      do {
        absl::StatusOr<HloSharding> e = ParseSharding(depth + 1);
        if (!e.ok()) return e.status();
        sh.tuple_elements.push_back(std::move(*e));
      } while (Consume(','));
      if (absl::Status s = Expect('}'); !s.ok()) return s;
      return sh;
    }
    if (PeekWord("mesh") || PeekWord("maximal_mesh")) {
      if (absl::Status s = ParseNamedSharding(sh); !s.ok()) return s;
      return sh;
    }
    bool have_kind = false;
    bool after_comma = false;
    bool comma_metadata = false;  // ", metadata=": the named spelling
    while (!Consume('}')) {
      if (p_ >= end_) return Error(start, "unterminated sharding");
      const char* at = p_;
      if (ConsumeWord("replicated")) {
        sh.kind = HloSharding::Kind::kReplicated;
        have_kind = true;
      } else if (ConsumeWord("manual")) {
        sh.kind = HloSharding::Kind::kManual;
        have_kind = true;
      } else if (ConsumeWord("unknown")) {
        sh.kind = HloSharding::Kind::kUnknown;
        have_kind = true;
      } else if (ConsumeWord("unreduced")) {
        // XLA's HloSharding::Unreduced(), also what a named sharding that
        // is unreduced over its whole mesh prints as: kept as a named
        // sharding without a mesh.
        sh.kind = HloSharding::Kind::kNamed;
        sh.named.emplace();
        sh.named->form = NamedSharding::Form::kUnreduced;
        if (Consume('=')) {
          // "{unreduced=max}", as a named sharding prints when its op is not sum.
          using ReductionOp = NamedSharding::ReductionOp;
          ReductionOp& op = sh.named->unreduced_op;
          if (ConsumeWord("sum")) op = ReductionOp::kSum;
          else if (ConsumeWord("max")) op = ReductionOp::kMax;
          else if (ConsumeWord("min")) op = ReductionOp::kMin;
          else return Error("expected sum, max, or min for unreduced op");
          sh.named->unreduced_op_written = op != ReductionOp::kSum;
        }
        have_kind = true;
      } else if (ConsumeWord("maximal")) {
        sh.kind = HloSharding::Kind::kMaximal;
        have_kind = true;
        if (absl::Status s = ExpectStr("device="); !s.ok()) return s;
        absl::StatusOr<int64_t> d = ParseInt();
        if (!d.ok()) return d.status();
        sh.device = *d;
      } else if (ConsumeStr("devices=")) {
        sh.kind = HloSharding::Kind::kTiled;
        have_kind = true;
        absl::StatusOr<std::vector<int64_t>> dims = ParseIntList('[', ']');
        if (!dims.ok()) return dims.status();
        sh.tile_dims = *dims;
        int64_t n = 1;
        for (int64_t d : sh.tile_dims) {
          if (d <= 0 || d > (1 << 20)) return Error(at, "invalid tile assignment dimension");
          n *= d;
          if (n > (1 << 24)) return Error(at, "tile assignment too large");
        }
        if (ConsumeStr("<=")) {
          sh.iota = true;
          absl::StatusOr<std::vector<int64_t>> r = ParseIntList('[', ']');
          if (!r.ok()) return r.status();
          sh.iota_reshape_dims = *r;
          if (ConsumeStr("T")) {
            absl::StatusOr<std::vector<int64_t>> perm = ParseIntList('(', ')');
            if (!perm.ok()) return perm.status();
            sh.iota_transpose_perm = *perm;
          }
        } else {
          do {
            absl::StatusOr<int64_t> d = ParseInt();
            if (!d.ok()) return d.status();
            sh.devices.push_back(*d);
          } while (Consume(','));
          if (static_cast<int64_t>(sh.devices.size()) != n) {
            return Error(at, StrCat("tile assignment has ", n, " tiles but ",
                                          sh.devices.size(), " devices are listed"));
          }
        }
      } else if (ConsumeWord("last_tile_dim_replicate")) {
        sh.last_tile_dim_replicate = true;
      } else if (ConsumeStr("last_tile_dims=")) {
        absl::StatusOr<std::vector<HloSharding::SubgroupType>> types =
            ParseList<HloSharding::SubgroupType>('{', '}', [&]() -> absl::StatusOr<HloSharding::SubgroupType> {
              if (ConsumeWord("manual")) return HloSharding::SubgroupType::kManual;
              if (ConsumeWord("replicated")) return HloSharding::SubgroupType::kReplicated;
              if (ConsumeWord("maximal")) return HloSharding::SubgroupType::kMaximal;
              if (ConsumeWord("unreduced")) return HloSharding::SubgroupType::kUnreduced;
              return Error("unknown subgroup type");
            });
        if (!types.ok()) return types.status();
        sh.last_tile_dims = std::move(*types);
      } else if (ConsumeStr("metadata=")) {
        comma_metadata = after_comma;
        if (absl::Status s = ParseShardingMetadata(sh.metadata); !s.ok()) return s;
      } else if (ConsumeWord("shard_as") || ConsumeWord("shard_like")) {
        bool as = std::string_view(at, 8) == "shard_as";
        absl::StatusOr<int64_t> id = ParseInt();
        if (!id.ok()) return id.status();
        sh.shard_as = as;
        sh.shard_like = !as;
        sh.shard_group_id = *id;
      } else {
        return Error(at, "unknown sharding attribute");
      }
      after_comma = Consume(',');
    }
    if (!have_kind) return Error(start, "sharding has no kind (replicated, maximal, devices=...)");
    if (comma_metadata && sh.kind == HloSharding::Kind::kReplicated) {
      // "{replicated, metadata={{...}}}" is how a replicated named sharding
      // prints (XLA's NamedSharding::ToString): kept as one, without a mesh,
      // so that it prints the same again.
      sh.kind = HloSharding::Kind::kNamed;
      sh.named.emplace();
      sh.named->form = NamedSharding::Form::kReplicated;
    }
    return sh;
  }

  absl::StatusOr<FrontendAttributes> ParseFrontendAttributes() {
    FrontendAttributes fa;
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    if (Consume('}')) return fa;
    do {
      absl::StatusOr<std::string> key = ParseIdentifier();
      if (!key.ok()) return key.status();
      if (absl::Status s = Expect('='); !s.ok()) return s;
      std::string value;
      if (Peek() == '{') {
        absl::StatusOr<std::string> v = ParseBalanced();
        if (!v.ok()) return v.status();
        value = std::move(*v);
      } else {
        absl::StatusOr<std::string> v = ParseString();
        if (!v.ok()) return v.status();
        value = std::move(*v);
      }
      fa.map[*key] = std::move(value);
    } while (Consume(','));
    if (absl::Status s = Expect('}'); !s.ok()) return s;
    return fa;
  }

  absl::StatusOr<ShapeIndex> ParseShapeIndex() { return ParseIntList('{', '}'); }

  absl::StatusOr<std::vector<OutputOperandAlias>> ParseAliasing() {
    return ParseList<OutputOperandAlias>('{', '}', [&]() -> absl::StatusOr<OutputOperandAlias> {
      OutputOperandAlias a;
      absl::StatusOr<ShapeIndex> out = ParseShapeIndex();
      if (!out.ok()) return out.status();
      if (absl::Status s = Expect(':'); !s.ok()) return s;
      if (absl::Status s = Expect('('); !s.ok()) return s;
      absl::StatusOr<int64_t> op = ParseInt();
      if (!op.ok()) return op.status();
      if (absl::Status s = Expect(','); !s.ok()) return s;
      absl::StatusOr<ShapeIndex> opi = ParseShapeIndex();
      if (!opi.ok()) return opi.status();
      if (absl::Status s = Expect(')'); !s.ok()) return s;
      a.output_index = *out;
      a.operand = *op;
      a.operand_index = *opi;
      return a;
    });
  }

  // ---- Module structure ----
  struct PendingInstruction {
    HloInstruction* inst;
    std::vector<Use> operands;
    std::vector<Use> control_predecessors;
    const char* pos;
  };
  struct PendingComputationRef {
    HloInstruction* inst;
    size_t slot;
    Use use;
  };
  struct ComputationScope {
    HloComputation* computation;
    absl::flat_hash_map<std::string, HloInstruction*> names;
    std::vector<PendingInstruction> pending;
  };

  absl::Status ParseHeader();
  absl::Status ParseComputation();
  absl::Status ParseComputationBody(const std::string& name, const char* comp_pos, bool is_entry);
  absl::Status ParseInstruction(ComputationScope& scope, std::unique_ptr<HloComputation>& comp,
                                HloInstruction** root, const char** root_pos);
  absl::StatusOr<HloInstruction*> ParseInstructionRest(ComputationScope& scope,
                                                       std::unique_ptr<HloComputation>& comp,
                                                       const std::string& name, const char* inst_pos,
                                                       std::optional<Shape> declared_shape, int depth);
  // After a name-less operand position: "opcode(" starts an inline instruction.
  bool PeekInlineInstruction() {
    SkipWs();
    const char* q = p_;
    if (q < end_ && *q == '%') return false;
    while (q < end_ && IsNameChar(*q)) ++q;
    if (q == p_) return false;
    std::string_view word(p_, q - p_);
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    if (q >= end_ || *q != '(') return false;
    if (StringToHloOpcode(word).has_value()) return true;
    for (std::string_view suffix : {"-start", "-update", "-done"}) {
      if (word.size() > suffix.size() && word.substr(word.size() - suffix.size()) == suffix &&
          StringToHloOpcode(word.substr(0, word.size() - suffix.size())).has_value()) {
        return true;
      }
    }
    return false;
  }
  // ", name=" follows: another attribute. (For an inline operand a ','
  // followed by anything else belongs to the enclosing operand list.)
  bool PeekAttribute() {
    if (Peek() != ',') return false;
    const char* q = p_ + 1;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    const char* w = q;
    while (q < end_ && IsNameChar(*q)) ++q;
    if (q == w) return false;
    while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
    return q < end_ && *q == '=';
  }
  absl::Status ParseAttributes(HloInstruction* inst, HloInstruction* attr_target,
                               const char* inst_pos, absl::flat_hash_set<std::string>& seen,
                               PendingInstruction& pending, bool is_sugar_start);
  // XLA's compact GTE operand "%t#1#0": each "#i" is a get-tuple-element of
  // the operand so far, added before the user and shared by later uses of
  // the same spelling; named as XLA sanitizes it ("t_1_0"). The base must be
  // defined earlier, as XLA requires. Returns the name to use as the operand.
  absl::StatusOr<std::string> ParseCompactGte(ComputationScope& scope,
                                              std::unique_ptr<HloComputation>& comp,
                                              const std::string& base, const char* at) {
    auto it = scope.names.find(base);
    if (it == scope.names.end()) return Error(at, StrCat("instruction does not exist: ", base));
    HloInstruction* current = it->second;
    std::string key = base;
    while (Consume('#')) {
      absl::StatusOr<int64_t> index = ParseInt();
      if (!index.ok()) return index.status();
      const Shape& shape = current->shape();
      if (!shape.IsTuple()) {
        return Error(at, StrCat("GTE operand must be tuple, but has shape: ", shape.ToString()));
      }
      if (*index < 0 || *index >= shape.tuple_shapes_size()) {
        return Error(at, StrCat("GTE index ", *index, " out of bounds for shape: ", shape.ToString()));
      }
      std::string operand_key = key;
      StrAppend(&key, "#", *index);
      auto found = scope.names.find(key);
      if (found != scope.names.end()) {
        current = found->second;
        continue;
      }
      std::string sanitized = key;
      std::replace(sanitized.begin(), sanitized.end(), '#', '_');
      std::string name = sanitized;
      for (int64_t n = 1; scope.names.contains(name); ++n) name = StrCat(sanitized, ".", n);
      auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement, shape.tuple_shapes(*index), {});
      gte->SetName(name);
      gte->set_index(*index);
      PendingInstruction pending{gte.get(), {{at, operand_key}}, {}, at};
      current = comp->AddInstruction(std::move(gte));
      scope.names[key] = current;
      scope.names[name] = current;
      scope.pending.push_back(std::move(pending));
    }
    return key;
  }
  absl::Status ParseOneAttribute(const std::string& name, const char* at, HloInstruction* inst,
                                 HloInstruction* target, PendingInstruction& pending);
  absl::Status Finish();
  // Rejects a computation whose operand/control edges form a cycle, naming
  // one instruction on it.
  absl::Status CheckAcyclic(const HloComputation& comp, const ComputationScope& scope) {
    absl::flat_hash_map<const HloInstruction*, uint8_t> state;  // 1 on stack, 2 done
    std::vector<std::pair<const HloInstruction*, size_t>> stack;
    for (const HloInstruction* start : comp.instructions()) {
      if (state[start] != 0) continue;
      stack.push_back({start, 0});
      state[start] = 1;
      while (!stack.empty()) {
        auto& [inst, k] = stack.back();
        size_t n_ops = inst->operands().size();
        const HloInstruction* dep = nullptr;
        if (k < n_ops) {
          dep = inst->operands()[k];
        } else if (k - n_ops < inst->control_predecessors().size()) {
          dep = inst->control_predecessors()[k - n_ops];
        } else {
          state[inst] = 2;
          stack.pop_back();
          continue;
        }
        ++k;
        uint8_t& s = state[dep];
        if (s == 1) {
          const char* pos = begin_;
          for (const PendingInstruction& pi : scope.pending) {
            if (pi.inst == dep) pos = pi.pos;
          }
          return Error(pos, StrCat("instruction '", dep->name(), "' in computation '", comp.name(),
                                   "' depends on itself (a cycle through '", inst->name(), "')"));
        }
        if (s == 0) {
          s = 1;
          stack.push_back({dep, 0});
        }
      }
    }
    return absl::OkStatus();
  }
  absl::Status InferMissingShapes();

  absl::StatusOr<std::string> ParseComputationRef(HloInstruction* inst, size_t slot) {
    SkipWs();
    const char* at = p_;
    if (Peek() == '{') {
      // A computation written inline as the attribute value.
      std::string name;
      do {
        // The op wrapped by "op-start" has no name yet; fall back to "inline".
        std::string base = inst->name().empty() ? std::string("inline") : inst->name();
        name = StrCat(base, ".inline_computation", ++inline_counter_ > 1 ? StrCat(".", inline_counter_) : "");
      } while (computation_names_.contains(name));
      if (absl::Status s = ParseComputationBody(name, at, /*is_entry=*/false); !s.ok()) return s;
      computation_refs_.push_back({inst, slot, {at, name}});
      return name;
    }
    absl::StatusOr<std::string> name = ParseName();
    if (!name.ok()) return name.status();
    computation_refs_.push_back({inst, slot, {at, *name}});
    return *name;
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string file_;
  std::unique_ptr<HloModule> module_;
  bool is_scheduled_ = false;
  // While parsing entry_computation_layout: arrays without a layout keep
  // none (AUTO) instead of taking the default one (scalars have only one).
  bool keep_missing_layouts_ = false;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  std::vector<const char*> computation_pos_;
  // Computations built for async sugar ("op-start") in the computation bodies
  // being parsed, innermost last, with where.
  std::vector<std::pair<std::unique_ptr<HloComputation>, const char*>> wrapped_computations_;
  absl::flat_hash_map<std::string, HloComputation*> computation_names_;
  HloComputation* entry_ = nullptr;
  std::vector<PendingComputationRef> computation_refs_;
  // Async ops written as sugar ("op-start"), built once operands resolve.
  std::vector<HloInstruction*> async_update_done_without_calls_;
  int64_t sugar_counter_ = 0;
  int64_t inline_counter_ = 0;
  int computation_depth_ = 0;
  // Instructions written without a shape; inferred once the module is built.
  std::vector<std::pair<HloInstruction*, const char*>> needs_inference_;
  ParseOptions options_;
};

absl::Status Parser::ParseHeader() {
  SkipWs();
  if (!ConsumeWord("HloModule")) return absl::OkStatus();
  absl::StatusOr<std::string> name = ParseName();
  if (!name.ok()) return name.status();
  module_->set_name(*name);
  // Seed 000's GELU file writes "HloModule m:"; tolerate the stray colon.
  Consume(':');
  HloModuleConfig& config = module_->config();
  absl::flat_hash_set<std::string> seen;
  while (Consume(',')) {
    const char* at = p_;
    absl::StatusOr<std::string> key = ParseIdentifier();
    if (!key.ok()) return key.status();
    if (!seen.insert(*key).second) return Error(at, StrCat("duplicate module attribute '", *key, "'"));
    if (absl::Status s = Expect('='); !s.ok()) return s;
    if (*key == "is_scheduled") {
      absl::StatusOr<bool> b = ParseBool();
      if (!b.ok()) return b.status();
      is_scheduled_ = *b;
    } else if (*key == "entry_computation_layout") {
      if (absl::Status s = Expect('{'); !s.ok()) return s;
      ProgramShape ps;
      // A shape written here without a layout is XLA's AUTO layout (layout
      // assignment chooses it): it stays without one.
      keep_missing_layouts_ = true;
      absl::StatusOr<std::vector<Shape>> params =
          ParseList<Shape>('(', ')', [&] { return ParseShape(); });
      if (!params.ok()) return params.status();
      ps.parameters = std::move(*params);
      if (absl::Status s = ExpectStr("->"); !s.ok()) return s;
      absl::StatusOr<Shape> result = ParseShape();
      keep_missing_layouts_ = false;
      if (!result.ok()) return result.status();
      ps.result = std::move(*result);
      if (absl::Status s = Expect('}'); !s.ok()) return s;
      config.entry_computation_layout = std::move(ps);
    } else if (*key == "alias_passthrough_params") {
      absl::StatusOr<bool> b = ParseBool();
      if (!b.ok()) return b.status();
      config.alias_passthrough_params = *b;
    } else if (*key == "use_auto_spmd_partitioning") {
      absl::StatusOr<bool> b = ParseBool();
      if (!b.ok()) return b.status();
      config.use_auto_spmd_partitioning = *b;
    } else if (*key == "replica_count" || *key == "num_partitions") {
      absl::StatusOr<int64_t> n = ParseInt();
      if (!n.ok()) return n.status();
      if (*n < 1) return Error(at, StrCat(*key, " must be at least 1"));
      (*key == "replica_count" ? config.replica_count : config.num_partitions) = *n;
    } else if (*key == "frontend_attributes") {
      absl::StatusOr<FrontendAttributes> fa = ParseFrontendAttributes();
      if (!fa.ok()) return fa.status();
      config.frontend_attributes = std::move(*fa);
    } else if (*key == "allow_spmd_sharding_propagation_to_parameters" ||
               *key == "allow_spmd_sharding_propagation_to_output") {
      // XLA's boolean_list: "{true,false}" or one bare "true".
      absl::StatusOr<std::vector<bool>> v = ParseBoolOrBoolList();
      if (!v.ok()) return v.status();
      (*key == "allow_spmd_sharding_propagation_to_output"
           ? config.allow_spmd_sharding_propagation_to_output
           : config.allow_spmd_sharding_propagation_to_parameters) = *v;
    } else if (*key == "input_output_alias") {
      absl::StatusOr<std::vector<InputOutputAlias>> aliases =
          ParseList<InputOutputAlias>('{', '}', [&]() -> absl::StatusOr<InputOutputAlias> {
            InputOutputAlias a;
            absl::StatusOr<ShapeIndex> out = ParseShapeIndex();
            if (!out.ok()) return out.status();
            if (absl::Status s = Expect(':'); !s.ok()) return s;
            if (absl::Status s = Expect('('); !s.ok()) return s;
            absl::StatusOr<int64_t> param = ParseInt();
            if (!param.ok()) return param.status();
            if (absl::Status s = Expect(','); !s.ok()) return s;
            absl::StatusOr<ShapeIndex> pidx = ParseShapeIndex();
            if (!pidx.ok()) return pidx.status();
            if (Consume(',')) {
              if (ConsumeWord("must-alias")) {
                a.must_alias = true;
              } else if (!ConsumeWord("may-alias")) {
                return Error("expected may-alias or must-alias");
              }
            }
            if (absl::Status s = Expect(')'); !s.ok()) return s;
            a.output_index = *out;
            a.parameter_number = *param;
            a.parameter_index = *pidx;
            return a;
          });
      if (!aliases.ok()) return aliases.status();
      config.input_output_alias = std::move(*aliases);
    } else if (*key == "buffer_donor") {
      absl::StatusOr<std::vector<BufferDonor>> donors =
          ParseList<BufferDonor>('{', '}', [&]() -> absl::StatusOr<BufferDonor> {
            BufferDonor d;
            if (absl::Status s = Expect('('); !s.ok()) return s;
            absl::StatusOr<int64_t> param = ParseInt();
            if (!param.ok()) return param.status();
            if (absl::Status s = Expect(','); !s.ok()) return s;
            absl::StatusOr<ShapeIndex> pidx = ParseShapeIndex();
            if (!pidx.ok()) return pidx.status();
            if (absl::Status s = Expect(')'); !s.ok()) return s;
            d.parameter_number = *param;
            d.parameter_index = *pidx;
            return d;
          });
      if (!donors.ok()) return donors.status();
      config.buffer_donor = std::move(*donors);
    } else {
      // Header attributes passlab does not model are kept verbatim.
      SkipWs();
      std::string value;
      if (Peek() == '{' || Peek() == '(' || Peek() == '[') {
        absl::StatusOr<std::string> v = ParseBalanced();
        if (!v.ok()) return v.status();
        value = *v;
      } else if (Peek() == '"') {
        const char* s0 = p_;
        absl::StatusOr<std::string> v = ParseString();
        if (!v.ok()) return v.status();
        value = std::string(s0, p_);
      } else {
        const char* s0 = p_;
        while (p_ < end_ && (IsNameChar(*p_))) ++p_;
        if (p_ == s0) return Error(at, StrCat("missing value for module attribute '", *key, "'"));
        value = std::string(s0, p_);
      }
      config.unknown_attributes.push_back({*key, value});
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HloModule>> Parser::ParseModule() {
  module_ = std::make_unique<HloModule>("module");
  if (absl::Status s = ParseHeader(); !s.ok()) return s;
  while (!AtEnd()) {
    if (absl::Status s = ParseComputation(); !s.ok()) return s;
  }
  if (computations_.empty()) return Error("expected at least one computation");
  if (absl::Status s = Finish(); !s.ok()) return s;
  return std::move(module_);
}

absl::Status Parser::ParseComputation() {
  SkipWs();
  const char* comp_pos = p_;
  bool is_entry = ConsumeWord("ENTRY");
  absl::StatusOr<std::string> name = ParseName();
  if (!name.ok()) return name.status();
  if (computation_names_.contains(*name)) {
    return Error(comp_pos, StrCat("computation '", *name, "' is defined twice"));
  }
  if (is_entry && entry_ != nullptr) return Error(comp_pos, "more than one ENTRY computation");
  // Optional signature "(p: shape, ...) -> shape"; the body is authoritative.
  if (Peek() == '(') {
    absl::StatusOr<std::vector<int>> ignored = ParseList<int>('(', ')', [&]() -> absl::StatusOr<int> {
      absl::StatusOr<std::string> pname = ParseName();
      if (!pname.ok()) return pname.status();
      if (absl::Status s = Expect(':'); !s.ok()) return s;
      absl::StatusOr<Shape> shape = ParseShape();
      if (!shape.ok()) return shape.status();
      return 0;
    });
    if (!ignored.ok()) return ignored.status();
    if (absl::Status s = ExpectStr("->"); !s.ok()) return s;
    absl::StatusOr<Shape> result = ParseShape();
    if (!result.ok()) return result.status();
  }
  return ParseComputationBody(*name, comp_pos, is_entry);
}

absl::Status Parser::ParseComputationBody(const std::string& name_str, const char* comp_pos,
                                          bool is_entry) {
  if (++computation_depth_ > 64) return Error(comp_pos, "computations nested too deeply");
  const std::string* name = &name_str;
  if (absl::Status s = Expect('{', "opening the computation body"); !s.ok()) return s;
  auto comp = std::make_unique<HloComputation>(*name);
  ComputationScope scope{comp.get(), {}, {}};
  const size_t wrapped_mark = wrapped_computations_.size();
  HloInstruction* root = nullptr;
  const char* root_pos = nullptr;
  while (!Consume('}')) {
    if (AtEnd()) return Error(comp_pos, StrCat("computation '", *name, "' is not closed"));
    if (absl::Status s = ParseInstruction(scope, comp, &root, &root_pos); !s.ok()) return s;
  }
  if (comp->instruction_count() == 0) {
    return Error(comp_pos, StrCat("computation '", *name, "' has no instructions"));
  }
  // ", execution_thread=" names the computation's thread; after a computation
  // written inline as an attribute value, any other ", name=" is the next
  // attribute of the instruction ("to_apply={...}, async_execution_thread=").
  if (PeekCommaWord("execution_thread")) {
    Consume(',');
    ConsumeWord("execution_thread");
    if (absl::Status s = Expect('=', "after execution_thread"); !s.ok()) return s;
    absl::StatusOr<std::string> thread = ParseString();
    if (!thread.ok()) return thread.status();
    comp->set_execution_thread(*thread);
  }
  // Resolve operands and control predecessors now that all names are known.
  for (PendingInstruction& pi : scope.pending) {
    for (const Use& use : pi.operands) {
      auto it = scope.names.find(use.name);
      if (it == scope.names.end()) {
        return Error(use.pos, StrCat("instruction '", pi.inst->name(), "' uses '", use.name,
                                           "', which is not defined in computation '", *name, "'"));
      }
      pi.inst->AppendOperand(it->second);
    }
    for (const Use& use : pi.control_predecessors) {
      auto it = scope.names.find(use.name);
      if (it == scope.names.end()) {
        return Error(use.pos, StrCat("control predecessor '", use.name, "' of '",
                                           pi.inst->name(), "' is not defined"));
      }
      it->second->AddControlDependencyTo(pi.inst);
    }
    int arity = HloOpcodeArity(pi.inst->opcode());
    // A sparse convolution (sparsity_config=) takes its sparsity metadata
    // after the two operands: XLA's parser wants "at least 2 operands".
    const bool sparse_convolution = pi.inst->opcode() == HloOpcode::kConvolution &&
                                    pi.inst->operand_count() > arity;
    if (arity != kVariadic && pi.inst->opcode() != HloOpcode::kConstant &&
        pi.inst->opcode() != HloOpcode::kParameter && !sparse_convolution &&
        pi.inst->operand_count() != arity) {
      // rng-bit-generator, iota etc. are fixed; variadic ones are checked by the verifier.
      return Error(pi.pos, StrCat("'", HloOpcodeString(pi.inst->opcode()), "' takes ", arity,
                                        " operand(s) but '", pi.inst->name(), "' has ",
                                        pi.inst->operand_count()));
    }
  }
  // The graph (operands and control edges) must be acyclic.
  if (absl::Status s = CheckAcyclic(*comp, scope); !s.ok()) return s;
  // Parameters: numbers must be 0..n-1 without duplicates.
  std::vector<HloInstruction*> params;
  for (HloInstruction* inst : comp->instructions()) {
    if (inst->opcode() != HloOpcode::kParameter) continue;
    int64_t n = inst->parameter_number();
    if (n < 0 || n >= comp->instruction_count()) {
      return Error(comp_pos, StrCat("parameter '", inst->name(), "' has invalid number ", n));
    }
    if (static_cast<int64_t>(params.size()) <= n) params.resize(n + 1, nullptr);
    if (params[n] != nullptr) {
      return Error(comp_pos, StrCat("computation '", *name, "' has two parameters numbered ", n,
                                          " ('", params[n]->name(), "' and '", inst->name(), "')"));
    }
    params[n] = inst;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return Error(comp_pos, StrCat("computation '", *name, "' has no parameter ", i,
                                          " but has parameter ", params.size() - 1));
    }
  }
  for (size_t i = wrapped_mark; i < wrapped_computations_.size(); ++i) {
    computation_pos_.push_back(wrapped_computations_[i].second);
    computations_.push_back(std::move(wrapped_computations_[i].first));
  }
  wrapped_computations_.resize(wrapped_mark);
  HloComputation* c = comp.get();
  c->RebuildParameterList();
  c->set_root_instruction(root != nullptr ? root : c->instructions().back());
  if (is_entry) entry_ = c;
  computation_names_[*name] = c;
  computation_pos_.push_back(comp_pos);
  computations_.push_back(std::move(comp));
  --computation_depth_;
  return absl::OkStatus();
}

absl::Status Parser::ParseInstruction(ComputationScope& scope, std::unique_ptr<HloComputation>& comp,
                                      HloInstruction** root, const char** root_pos) {
  SkipWs();
  const char* inst_pos = p_;
  bool is_root = ConsumeWord("ROOT");
  absl::StatusOr<std::string> name = ParseName();
  if (!name.ok()) return name.status();
  if (scope.names.contains(*name)) {
    return Error(inst_pos, StrCat("instruction '", *name, "' is defined twice in computation '",
                                        comp->name(), "'"));
  }
  if (absl::Status s = Expect('=', "after the instruction name"); !s.ok()) return s;
  std::optional<Shape> shape;
  if (PeekShape() || PeekUnknownShape()) {
    absl::StatusOr<Shape> parsed = ParseShape();
    if (!parsed.ok()) return parsed.status();
    shape = std::move(*parsed);
  }
  absl::StatusOr<HloInstruction*> added = ParseInstructionRest(scope, comp, *name, inst_pos, shape, 0);
  if (!added.ok()) return added.status();
  if (is_root) {
    if (*root != nullptr) {
      return Error(inst_pos, StrCat("computation '", comp->name(), "' has two ROOT instructions ('",
                                    (*root)->name(), "' and '", *name, "')"));
    }
    *root = *added;
    *root_pos = inst_pos;
  }
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> Parser::ParseInstructionRest(
    ComputationScope& scope, std::unique_ptr<HloComputation>& comp, const std::string& name_str,
    const char* inst_pos, std::optional<Shape> declared_shape, int depth) {
  if (depth > kMaxNesting) return Error(inst_pos, "inline operands nested too deeply");
  const std::string* name = &name_str;
  SkipWs();
  const char* op_pos = p_;
  absl::StatusOr<std::string> opcode_name = ParseIdentifier();
  if (!opcode_name.ok()) return opcode_name.status();
  std::optional<HloOpcode> opcode = StringToHloOpcode(*opcode_name);
  // Async sugar: "<op>-start", "<op>-update", "<op>-done" for ops without
  // their own async opcodes (seed 001).
  std::optional<HloOpcode> wrapped_opcode;
  HloOpcode async_kind = HloOpcode::kAsyncStart;
  if (!opcode.has_value()) {
    for (auto [suffix, kind] : {std::pair<std::string_view, HloOpcode>{"-start", HloOpcode::kAsyncStart},
                                {"-update", HloOpcode::kAsyncUpdate},
                                {"-done", HloOpcode::kAsyncDone}}) {
      std::string_view n = *opcode_name;
      if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix) {
        std::optional<HloOpcode> w = StringToHloOpcode(n.substr(0, n.size() - suffix.size()));
        if (w.has_value()) {
          if (HasOwnAsyncOpcodes(*w)) {
            return Error(op_pos, StrCat("'", HloOpcodeString(*w),
                                              "' has its own async opcodes and cannot be wrapped "
                                              "by async-start"));
          }
          wrapped_opcode = w;
          async_kind = kind;
        }
      }
    }
    if (!wrapped_opcode.has_value()) {
      return Error(op_pos, StrCat("unknown opcode '", *opcode_name, "'"));
    }
    opcode = async_kind;
  }
  if (!declared_shape.has_value() &&
      (*opcode == HloOpcode::kConstant || *opcode == HloOpcode::kParameter ||
       wrapped_opcode.has_value() || *opcode == HloOpcode::kCustomCall ||
       *opcode == HloOpcode::kAsyncStart || *opcode == HloOpcode::kRng ||
       *opcode == HloOpcode::kInfeed || *opcode == HloOpcode::kRecv)) {
    return Error(inst_pos, StrCat("instruction '", *name, "' needs a shape ('",
                                  HloOpcodeString(*opcode), "' shapes cannot be inferred)"));
  }
  const Shape* shape = declared_shape.has_value() ? &*declared_shape : nullptr;
  auto inst = HloInstruction::Create(*opcode, shape != nullptr ? *shape : Shape(), {});
  inst->SetName(*name);
  if (shape == nullptr) needs_inference_.push_back({inst.get(), inst_pos});
  PendingInstruction pending{inst.get(), {}, {}, inst_pos};
  // Operands.
  if (absl::Status s = Expect('(', "opening the operand list"); !s.ok()) return s;
  if (*opcode == HloOpcode::kConstant) {
    absl::StatusOr<Literal> lit = ParseLiteral(*shape);
    if (!lit.ok()) return lit.status();
    inst->set_literal(std::move(*lit));
    if (absl::Status s = Expect(')'); !s.ok()) return s;
  } else if (*opcode == HloOpcode::kParameter) {
    absl::StatusOr<int64_t> n = ParseInt();
    if (!n.ok()) return n.status();
    if (*n < 0) return Error("parameter numbers must be non-negative");
    inst->set_index(*n);
    if (absl::Status s = Expect(')'); !s.ok()) return s;
  } else if (!Consume(')')) {
    do {
      std::optional<Shape> operand_shape;
      if (PeekShape()) {
        absl::StatusOr<Shape> parsed = ParseShape();
        if (!parsed.ok()) return parsed.status();
        operand_shape = std::move(*parsed);
      }
      SkipWs();
      const char* at = p_;
      if (PeekInlineInstruction()) {
        // XLA allows an operand to be an instruction written inline:
        // "broadcast(f32[] constant(0))". It gets a fresh name.
        const char* op_start = p_;
        while (op_start < end_ && IsNameChar(*op_start)) ++op_start;
        std::string base(p_, op_start);
        std::string inline_name;
        do {
          inline_name = StrCat(base, ".", ++inline_counter_);
        } while (scope.names.contains(inline_name));
        absl::StatusOr<HloInstruction*> inner =
            ParseInstructionRest(scope, comp, inline_name, at, operand_shape, depth + 1);
        if (!inner.ok()) return inner.status();
        pending.operands.push_back({at, inline_name});
        continue;
      }
      absl::StatusOr<std::string> operand = ParseName();
      if (!operand.ok()) return operand.status();
      if (Peek() == '#') {
        absl::StatusOr<std::string> gte = ParseCompactGte(scope, comp, *operand, at);
        if (!gte.ok()) return gte.status();
        *operand = std::move(*gte);
      }
      pending.operands.push_back({at, *operand});
    } while (Consume(','));
    if (absl::Status s = Expect(')', "closing the operand list"); !s.ok()) return s;
  }
  // Async sugar start: build the wrapped computation from the start's shape:
  // ((operand shapes...), result, context...).
  HloInstruction* attr_target = inst.get();
  std::unique_ptr<HloInstruction> wrapped;
  if (wrapped_opcode.has_value() && async_kind == HloOpcode::kAsyncStart) {
    if (!shape->IsTuple() || shape->tuple_shapes_size() < 2) {
      return Error(inst_pos, StrCat("'", *opcode_name,
                                    "' must have a tuple shape ((operands...), result, ...)"));
    }
    wrapped = HloInstruction::Create(*wrapped_opcode, shape->tuple_shapes(1), {});
    // Named now: a computation written inline in its attributes is named
    // after it.
    wrapped->SetName(StrCat(*name, ".wrapped"));
    attr_target = wrapped.get();
  }
  absl::flat_hash_set<std::string> seen;
  if (absl::Status s = ParseAttributes(inst.get(), attr_target, inst_pos, seen, pending,
                                       wrapped != nullptr);
      !s.ok()) {
    return s;
  }
  if (wrapped != nullptr) {
    // Element 0 lists the operands: a tuple, or (seed 001's older spelling)
    // the single operand's shape itself.
    Shape operands_shape = shape->tuple_shapes(0);
    if (!operands_shape.IsTuple()) operands_shape = Shape::Tuple({operands_shape});
    if (operands_shape.tuple_shapes_size() != static_cast<int64_t>(pending.operands.size())) {
      return Error(inst_pos, StrCat("'", *name, "' has ", pending.operands.size(),
                                          " operands but its shape lists ",
                                          operands_shape.tuple_shapes_size()));
    }
    auto wc = std::make_unique<HloComputation>(AsyncWrappedComputationName(*name));
    std::vector<HloInstruction*> wparams;
    for (int64_t i = 0; i < operands_shape.tuple_shapes_size(); ++i) {
      wparams.push_back(wc->AddParameter(HloInstruction::CreateParameter(
          i, operands_shape.tuple_shapes(i), StrCat("param_", i))));
    }
    for (HloInstruction* p : wparams) wrapped->AppendOperand(p);
    HloInstruction* w = wc->AddInstruction(std::move(wrapped));
    wc->set_root_instruction(w);
    wc->set_execution_thread(inst->async_execution_thread());
    std::string cname = wc->name();
    while (computation_names_.contains(cname)) cname = StrCat(cname, ".", ++sugar_counter_);
    wc->SetName(cname);
    HloComputation* wcp = wc.get();
    computation_names_[cname] = wcp;
    // Added when the enclosing computation ends, after the computations
    // written inline in it: printed, those become top-level computations
    // ahead of it while this one is not printed, so the order is the same
    // when the printed text is parsed again.
    wrapped_computations_.push_back({std::move(wc), inst_pos});
    inst->AppendCalledComputation(wcp);
  } else if (wrapped_opcode.has_value()) {
    async_update_done_without_calls_.push_back(inst.get());
  } else if ((*opcode == HloOpcode::kAsyncUpdate || *opcode == HloOpcode::kAsyncDone) &&
             inst->called_computations().empty()) {
    async_update_done_without_calls_.push_back(inst.get());
  }
  HloInstruction* added = comp->AddInstruction(std::move(inst));
  scope.names[*name] = added;
  scope.pending.push_back(std::move(pending));
  return added;
}

absl::Status Parser::ParseAttributes(HloInstruction* inst, HloInstruction* attr_target,
                                     const char* inst_pos, absl::flat_hash_set<std::string>& seen,
                                     PendingInstruction& pending, bool is_sugar_start) {
  while (PeekAttribute()) {
    Consume(',');
    SkipWs();
    const char* at = p_;
    absl::StatusOr<std::string> attr = ParseIdentifier();
    if (!attr.ok()) return attr.status();
    if (!seen.insert(*attr).second) {
      return Error(at, StrCat("attribute '", *attr, "' is given twice"));
    }
    if (absl::Status s = Expect('=', StrCat("after attribute '", *attr, "'")); !s.ok()) return s;
    // Generic attributes belong to the async op itself; opcode-specific ones
    // to the op it wraps.
    static const absl::flat_hash_set<std::string> kGeneric = {
        "sharding", "frontend_attributes", "control-predecessors", "metadata",
        "backend_config", "statistics", "origin", "async_execution_thread",
        "output_to_operand_aliasing"};
    HloInstruction* target = is_sugar_start && !kGeneric.contains(*attr) ? attr_target : inst;
    if (absl::Status s = ParseOneAttribute(*attr, at, inst, target, pending); !s.ok()) return s;
  }
  // Required attributes and called computations.
  HloInstruction* t = attr_target;
  auto require = [&](std::string_view a) -> absl::Status {
    if (seen.contains(std::string(a))) return absl::OkStatus();
    return Error(inst_pos, StrCat("'", HloOpcodeString(t->opcode()), "' instruction '",
                                        inst->name(), "' is missing the required attribute '", a, "'"));
  };
  switch (t->opcode()) {
    case HloOpcode::kReduce: case HloOpcode::kMap: case HloOpcode::kSort:
    case HloOpcode::kScatter: case HloOpcode::kReduceWindow: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kReduceScatter: case HloOpcode::kCall:
      if (!seen.contains("to_apply")) return require("to_apply");
      break;
    case HloOpcode::kWhile:
      if (absl::Status s = require("condition"); !s.ok()) return s;
      return require("body");
    case HloOpcode::kSelectAndScatter:
      if (absl::Status s = require("select"); !s.ok()) return s;
      return require("scatter");
    case HloOpcode::kFusion:
      if (absl::Status s = require("kind"); !s.ok()) return s;
      return require("calls");
    case HloOpcode::kConditional:
      if (!seen.contains("branch_computations") &&
          !(seen.contains("true_computation") && seen.contains("false_computation"))) {
        return require("branch_computations");
      }
      break;
    case HloOpcode::kAsyncStart:
      if (!is_sugar_start) return require("calls");
      break;
    case HloOpcode::kCustomCall:
      return require("custom_call_target");
    case HloOpcode::kCompare:
      return require("direction");
    case HloOpcode::kGetTupleElement:
      return require("index");
    case HloOpcode::kIota:
      return require("iota_dimension");
    case HloOpcode::kSlice:
      return require("slice");
    case HloOpcode::kPad:
      return require("padding");
    case HloOpcode::kDynamicSlice:
      return require("dynamic_slice_sizes");
    case HloOpcode::kGather:
      for (std::string_view a : {"offset_dims", "collapsed_slice_dims", "start_index_map",
                                 "index_vector_dim", "slice_sizes"}) {
        if (absl::Status s = require(a); !s.ok()) return s;
      }
      break;
    case HloOpcode::kTranspose: case HloOpcode::kConcatenate: case HloOpcode::kReverse:
      return require("dimensions");
    case HloOpcode::kScan:
      // XLA's parser: to_apply, dimensions and num_carries are required.
      if (absl::Status s = require("to_apply"); !s.ok()) return s;
      if (absl::Status s = require("dimensions"); !s.ok()) return s;
      return require("num_carries");
    case HloOpcode::kConvolution:
      return require("dim_labels");
    default:
      break;
  }
  if (t->opcode() == HloOpcode::kScatter) {
    for (std::string_view a : {"update_window_dims", "inserted_window_dims",
                               "scatter_dims_to_operand_dims", "index_vector_dim"}) {
      if (absl::Status s = require(a); !s.ok()) return s;
    }
  }
  if (t->opcode() == HloOpcode::kConditional && t->called_computations().empty()) {
    return require("branch_computations");
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseOneAttribute(const std::string& name, const char* at, HloInstruction* inst,
                                       HloInstruction* target, PendingInstruction& pending) {
  HloAttributes& a = target->mutable_attrs();
  HloOpcode op = target->opcode();
  auto ints = [&](std::vector<int64_t>& field) -> absl::Status {
    absl::StatusOr<std::vector<int64_t>> v = ParseIntList();
    if (!v.ok()) return v.status();
    field = std::move(*v);
    return absl::OkStatus();
  };
  auto integer = [&](int64_t& field) -> absl::Status {
    absl::StatusOr<int64_t> v = ParseInt();
    if (!v.ok()) return v.status();
    field = *v;
    return absl::OkStatus();
  };
  auto boolean = [&](bool& field) -> absl::Status {
    absl::StatusOr<bool> v = ParseBool();
    if (!v.ok()) return v.status();
    field = *v;
    return absl::OkStatus();
  };
  auto string = [&](std::string& field) -> absl::Status {
    absl::StatusOr<std::string> v = ParseString();
    if (!v.ok()) return v.status();
    field = std::move(*v);
    return absl::OkStatus();
  };
  auto enum_word = [&](auto parse, auto& field, std::string_view what) -> absl::Status {
    SkipWs();
    const char* wat = p_;
    absl::StatusOr<std::string> w = ParseIdentifier();
    if (!w.ok()) return w.status();
    auto v = parse(*w);
    if (!v.has_value()) return Error(wat, StrCat("unknown ", what, " '", *w, "'"));
    field = *v;
    return absl::OkStatus();
  };
  auto computation = [&](size_t slot) -> absl::Status {
    if (target->called_computations().size() <= slot) target->set_called_computation(slot, nullptr);
    absl::StatusOr<std::string> n = ParseComputationRef(target, slot);
    return n.status();
  };
  auto computation_list = [&]() -> absl::Status {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    size_t slot = 0;
    if (!Consume('}')) {
      do {
        if (absl::Status s = computation(slot++); !s.ok()) return s;
      } while (Consume(','));
      if (absl::Status s = Expect('}'); !s.ok()) return s;
    }
    if (slot == 0 && op == HloOpcode::kConditional) return Error(at, "conditional needs branches");
    return absl::OkStatus();
  };

  if (name == "dimensions") return ints(*target->mutable_dimensions());
  if (name == "to_apply") return computation(0);
  if (name == "calls") {
    if (op == HloOpcode::kCall) return computation(0);  // old spelling
    return computation(0);
  }
  if (name == "condition") return computation(0);
  if (name == "body") return computation(1);
  if (name == "select") return computation(0);
  if (name == "scatter") return computation(1);
  if (name == "true_computation") return computation(0);
  if (name == "false_computation") return computation(1);
  if (name == "branch_computations" || name == "called_computations") return computation_list();
  if (name == "metadata") {
    absl::StatusOr<OpMetadata> m = ParseMetadata();
    if (!m.ok()) return m.status();
    inst->set_metadata(std::move(*m));
    return absl::OkStatus();
  }
  if (name == "sharding") {
    absl::StatusOr<HloSharding> s = ParseSharding();
    if (!s.ok()) return s.status();
    inst->set_sharding(std::move(*s));
    return absl::OkStatus();
  }
  if (name == "frontend_attributes") {
    absl::StatusOr<FrontendAttributes> fa = ParseFrontendAttributes();
    if (!fa.ok()) return fa.status();
    *inst->mutable_frontend_attributes() = std::move(*fa);
    return absl::OkStatus();
  }
  if (name == "backend_config") {
    if (Peek() == '{') {
      absl::StatusOr<std::string> v = ParseBalanced();
      if (!v.ok()) return v.status();
      inst->set_raw_backend_config(std::move(*v));
    } else {
      std::string v;
      if (absl::Status s = string(v); !s.ok()) return s;
      inst->set_raw_backend_config(std::move(v));
    }
    return absl::OkStatus();
  }
  if (name == "control-predecessors") {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    if (!Consume('}')) {
      do {
        SkipWs();
        const char* pat = p_;
        absl::StatusOr<std::string> n = ParseName();
        if (!n.ok()) return n.status();
        pending.control_predecessors.push_back({pat, *n});
      } while (Consume(','));
      if (absl::Status s = Expect('}'); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (name == "statistics") {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    Statistics st;
    if (!Consume('}')) {
      do {
        absl::StatusOr<std::string> key = ParseIdentifier();
        if (!key.ok()) return key.status();
        if (absl::Status s = Expect('='); !s.ok()) return s;
        absl::StatusOr<double> v = ParseDouble();
        if (!v.ok()) return v.status();
        if (*key == "visualizing_index") {
          st.visualizing_index = static_cast<int64_t>(*v);
        } else {
          st.stats.push_back({*key, *v});
        }
      } while (Consume(','));
      if (absl::Status s = Expect('}'); !s.ok()) return s;
    }
    inst->mutable_attrs().statistics = std::move(st);
    return absl::OkStatus();
  }
  if (name == "origin") {
    absl::StatusOr<std::string> v = ParseBalanced();
    if (!v.ok()) return v.status();
    inst->mutable_attrs().original_value = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "async_execution_thread") {
    std::string t;
    if (absl::Status s = string(t); !s.ok()) return s;
    inst->set_async_execution_thread(std::move(t));
    return absl::OkStatus();
  }
  if (name == "output_to_operand_aliasing") {
    absl::StatusOr<std::vector<OutputOperandAlias>> v = ParseAliasing();
    if (!v.ok()) return v.status();
    inst->mutable_attrs().output_to_operand_aliasing = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "is_composite" && op == HloOpcode::kCall) return boolean(a.is_composite);
  if (name == "kind" && op == HloOpcode::kFusion) {
    FusionKind kind = FusionKind::kLoop;
    if (absl::Status s = enum_word(ParseFusionKind, kind, "fusion kind"); !s.ok()) return s;
    target->set_fusion_kind(kind);
    return absl::OkStatus();
  }
  if (name == "slice" && op == HloOpcode::kSlice) {
    absl::StatusOr<std::vector<SliceDimension>> v = ParseSliceRanges();
    if (!v.ok()) return v.status();
    a.slice = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "padding" && op == HloOpcode::kPad) {
    absl::StatusOr<PaddingConfig> v = ParsePadding();
    if (!v.ok()) return v.status();
    a.padding_config = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "iota_dimension") {
    int64_t v;
    if (absl::Status s = integer(v); !s.ok()) return s;
    target->set_index(v);
    return absl::OkStatus();
  }
  if (name == "index" && op == HloOpcode::kGetTupleElement) {
    int64_t v;
    if (absl::Status s = integer(v); !s.ok()) return s;
    target->set_index(v);
    return absl::OkStatus();
  }
  if (name == "direction") return enum_word(ParseComparisonDirection, a.comparison_direction, "comparison direction");
  if (name == "type" && op == HloOpcode::kCompare) {
    return enum_word(ParseComparisonType, a.comparison_type, "comparison type");
  }
  if (name == "lhs_batch_dims") return ints(a.dot_dnums.lhs_batch_dimensions);
  if (name == "rhs_batch_dims") return ints(a.dot_dnums.rhs_batch_dimensions);
  if (name == "lhs_contracting_dims") return ints(a.dot_dnums.lhs_contracting_dimensions);
  if (name == "rhs_contracting_dims") return ints(a.dot_dnums.rhs_contracting_dimensions);
  if (name == "lhs_ragged_dims") return ints(a.lhs_ragged_dims);
  if (name == "rhs_group_dims") return ints(a.rhs_group_dims);
  if (name == "num_carries" && op == HloOpcode::kScan) return integer(a.num_carries);
  if (name == "is_reverse" && op == HloOpcode::kScan) return boolean(a.is_reverse);
  if (name == "is_associative" && op == HloOpcode::kScan) {
    bool v = false;
    if (absl::Status s = boolean(v); !s.ok()) return s;
    a.is_associative = v;
    return absl::OkStatus();
  }
  if (name == "operand_precision") {
    absl::StatusOr<std::vector<PrecisionLevel>> v =
        ParseList<PrecisionLevel>('{', '}', [&]() -> absl::StatusOr<PrecisionLevel> {
          SkipWs();
          const char* pat = p_;
          absl::StatusOr<std::string> w = ParseIdentifier();
          if (!w.ok()) return w.status();
          std::optional<PrecisionLevel> lvl = ParsePrecision(*w);
          if (!lvl.has_value()) return Error(pat, StrCat("unknown precision '", *w, "'"));
          return *lvl;
        });
    if (!v.ok()) return v.status();
    a.precision_config.operand_precision = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "algorithm") {
    SkipWs();
    const char* wat = p_;
    absl::StatusOr<std::string> w = ParseIdentifier();
    if (!w.ok()) return w.status();
    if (op == HloOpcode::kRngBitGenerator) {
      if (*w == "rng_default") a.rng_algorithm = RandomAlgorithm::kDefault;
      else if (*w == "rng_three_fry") a.rng_algorithm = RandomAlgorithm::kThreeFry;
      else if (*w == "rng_philox") a.rng_algorithm = RandomAlgorithm::kPhilox;
      else return Error(wat, StrCat("unknown rng algorithm '", *w, "'"));
    } else {
      a.precision_config.algorithm = *w;
    }
    return absl::OkStatus();
  }
  if (name == "sparsity") {
    SkipWs();
    const char* sat = p_;
    while (p_ < end_ && (IsNameChar(*p_) || *p_ == '@' || *p_ == ':')) ++p_;
    for (std::string_view part : SplitAny(std::string_view(sat, p_ - sat), "_")) {
      SparsityDescriptor d;
      int64_t dim, n, m;
      if (part.size() < 2 || (part[0] != 'L' && part[0] != 'R') || part[1] != '.') {
        return Error(sat, "malformed sparsity descriptor (expected e.g. L.1@2:4)");
      }
      std::vector<std::string_view> f = SplitAny(part.substr(2), "@:");
      if (f.size() != 3 || !SimpleAtoi(f[0], &dim) || !SimpleAtoi(f[1], &n) ||
          !SimpleAtoi(f[2], &m)) {
        return Error(sat, "malformed sparsity descriptor (expected e.g. L.1@2:4)");
      }
      d.index = part[0] == 'L' ? 0 : 1;
      d.dimension = dim;
      d.n = n;
      d.m = m;
      a.sparsity.push_back(d);
    }
    return absl::OkStatus();
  }
  if (name == "window") {
    absl::StatusOr<Window> w = ParseWindow();
    if (!w.ok()) return w.status();
    // "window={}" is the same as no window (and prints as none).
    if (!w->dimensions.empty()) a.window = std::move(*w);
    return absl::OkStatus();
  }
  if (name == "dim_labels") {
    absl::StatusOr<ConvolutionDimensionNumbers> d = ParseDimLabels();
    if (!d.ok()) return d.status();
    a.conv_dnums = std::move(*d);
    return absl::OkStatus();
  }
  if (name == "feature_group_count") return integer(a.feature_group_count);
  if (name == "batch_group_count") return integer(a.batch_group_count);
  if (name == "dynamic_slice_sizes") return ints(a.slice_sizes);
  if (name == "slice_sizes") {
    if (op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart) {
      absl::StatusOr<std::vector<std::vector<int64_t>>> v =
          ParseList<std::vector<int64_t>>('{', '}', [&] { return ParseIntList(); });
      if (!v.ok()) return v.status();
      a.dynamic_slice_sizes_list = std::move(*v);
      return absl::OkStatus();
    }
    return ints(a.slice_sizes);
  }
  if (name == "offset_dims") return ints(a.gather_dnums.offset_dims);
  if (name == "collapsed_slice_dims") return ints(a.gather_dnums.collapsed_slice_dims);
  if (name == "start_index_map") return ints(a.gather_dnums.start_index_map);
  if (name == "operand_batching_dims") return ints(a.gather_dnums.operand_batching_dims);
  if (name == "start_indices_batching_dims") return ints(a.gather_dnums.start_indices_batching_dims);
  if (name == "index_vector_dim") {
    int64_t v;
    if (absl::Status s = integer(v); !s.ok()) return s;
    a.gather_dnums.index_vector_dim = v;
    a.scatter_dnums.index_vector_dim = v;
    return absl::OkStatus();
  }
  if (name == "update_window_dims") return ints(a.scatter_dnums.update_window_dims);
  if (name == "inserted_window_dims") return ints(a.scatter_dnums.inserted_window_dims);
  if (name == "scatter_dims_to_operand_dims") return ints(a.scatter_dnums.scatter_dims_to_operand_dims);
  if (name == "input_batching_dims") return ints(a.scatter_dnums.input_batching_dims);
  if (name == "scatter_indices_batching_dims") return ints(a.scatter_dnums.scatter_indices_batching_dims);
  if (name == "indices_are_sorted") return boolean(a.indices_are_sorted);
  if (name == "unique_indices") return boolean(a.unique_indices);
  if (name == "epsilon") {
    absl::StatusOr<double> v = ParseDouble();
    if (!v.ok()) return v.status();
    a.epsilon = static_cast<float>(*v);
    return absl::OkStatus();
  }
  if (name == "feature_index") return integer(a.feature_index);
  if (name == "exponent_bits") return integer(a.exponent_bits);
  if (name == "mantissa_bits") return integer(a.mantissa_bits);
  if (name == "is_stable") return boolean(a.is_stable);
  if (name == "distribution") {
    SkipWs();
    const char* wat = p_;
    absl::StatusOr<std::string> w = ParseIdentifier();
    if (!w.ok()) return w.status();
    if (*w == "rng_uniform") a.distribution = RandomDistribution::kUniform;
    else if (*w == "rng_normal") a.distribution = RandomDistribution::kNormal;
    else return Error(wat, StrCat("unknown distribution '", *w, "'"));
    return absl::OkStatus();
  }
  if (name == "fft_type") return enum_word(ParseFftType, a.fft_type, "fft type");
  if (name == "fft_length") return ints(a.fft_length);
  if (name == "left_side") return boolean(a.triangular_solve.left_side);
  if (name == "lower") {
    if (op == HloOpcode::kCholesky) return boolean(a.cholesky_lower);
    return boolean(a.triangular_solve.lower);
  }
  if (name == "unit_diagonal") return boolean(a.triangular_solve.unit_diagonal);
  if (name == "transpose_a") {
    SkipWs();
    const char* wat = p_;
    absl::StatusOr<std::string> w = ParseIdentifier();
    if (!w.ok()) return w.status();
    if (*w == "NO_TRANSPOSE") a.triangular_solve.transpose_a = TriangularTranspose::kNoTranspose;
    else if (*w == "TRANSPOSE") a.triangular_solve.transpose_a = TriangularTranspose::kTranspose;
    else if (*w == "ADJOINT") a.triangular_solve.transpose_a = TriangularTranspose::kAdjoint;
    else return Error(wat, StrCat("unknown transpose_a '", *w, "'"));
    return absl::OkStatus();
  }
  if (name == "k") return integer(a.k);
  if (name == "largest") return boolean(a.largest);
  if (name == "channel_id") {
    int64_t v;
    if (absl::Status s = integer(v); !s.ok()) return s;
    a.channel_id = v;
    return absl::OkStatus();
  }
  if (name == "replica_groups") {
    absl::StatusOr<ReplicaGroups> g = ParseReplicaGroups();
    if (!g.ok()) return g.status();
    a.replica_groups = std::move(*g);
    return absl::OkStatus();
  }
  if (name == "use_global_device_ids") return boolean(a.use_global_device_ids);
  if (name == "constrain_layout") return boolean(a.constrain_layout);
  if (name == "source_target_pairs") {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> v =
        ParseList<std::pair<int64_t, int64_t>>('{', '}', [&]() -> absl::StatusOr<std::pair<int64_t, int64_t>> {
          absl::StatusOr<std::vector<int64_t>> pair = ParseIntList();
          if (!pair.ok()) return pair.status();
          if (pair->size() != 2) return Error("source_target_pairs entries must be {source,target}");
          return std::make_pair((*pair)[0], (*pair)[1]);
        });
    if (!v.ok()) return v.status();
    a.source_target_pairs = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "is_host_transfer") return boolean(a.is_host_transfer);
  if (name == "custom_call_target") return string(a.custom_call_target);
  if (name == "api_version") {
    return enum_word(ParseCustomCallApiVersion, a.api_version, "custom call api_version");
  }
  if (name == "custom_call_has_side_effect") return boolean(a.custom_call_has_side_effect);
  if (name == "schedule") return enum_word(ParseCustomCallSchedule, a.schedule, "custom call schedule");
  if (name == "padding_type") return enum_word(ParsePaddingType, a.padding_type, "padding type");
  if (name == "operand_layout_constraints") {
    absl::StatusOr<std::vector<Shape>> v = ParseList<Shape>('{', '}', [&] { return ParseShape(); });
    if (!v.ok()) return v.status();
    a.operand_layout_constraints = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "literal" && op == HloOpcode::kCustomCall) {
    absl::StatusOr<Shape> s = ParseShape();
    if (!s.ok()) return s.status();
    absl::StatusOr<Literal> l = ParseLiteral(*s);
    if (!l.ok()) return l.status();
    target->set_literal(std::move(*l));
    return absl::OkStatus();
  }
  if (name == "infeed_config") return string(a.infeed_config);
  if (name == "outfeed_config") return string(a.outfeed_config);
  if (name == "outfeed_shape") {
    absl::StatusOr<Shape> s = ParseShape();
    if (!s.ok()) return s.status();
    a.outfeed_shape = std::move(*s);
    return absl::OkStatus();
  }
  if (name == "parameter_replication") {
    absl::StatusOr<std::vector<bool>> v = ParseBoolList();
    if (!v.ok()) return v.status();
    a.parameter_replication = std::move(*v);
    return absl::OkStatus();
  }
  if (name == "cross_program_prefetch_index") {
    int64_t v;
    if (absl::Status s = integer(v); !s.ok()) return s;
    a.cross_program_prefetch_index = v;
    return absl::OkStatus();
  }
  if (name == "domain" && op == HloOpcode::kDomain) {
    if (absl::Status s = Expect('{'); !s.ok()) return s;
    do {
      absl::StatusOr<std::string> key = ParseIdentifier();
      if (!key.ok()) return key.status();
      if (absl::Status s = Expect('='); !s.ok()) return s;
      if (*key == "kind") {
        if (absl::Status s = string(a.domain.kind); !s.ok()) return s;
      } else if (*key == "entry" || *key == "exit") {
        absl::StatusOr<std::string> v = ParseBalanced();
        if (!v.ok()) return v.status();
        (*key == "entry" ? a.domain.entry : a.domain.exit) = std::move(*v);
      } else {
        return Error(StrCat("unknown domain field '", *key, "'"));
      }
    } while (Consume(','));
    return Expect('}');
  }
  // XLA attributes passlab does not model yet are kept verbatim on any
  // instruction; anything else is kept only on custom calls.
  static const absl::flat_hash_set<std::string> kKeptVerbatim = {
      "result_accuracy", "inferred_dimension", "sparsity_config", "convolution_kind",
      "has_dynamic_root", "delta", "split_dims", "collective_op_id"};
  if (op == HloOpcode::kCustomCall || kKeptVerbatim.contains(name)) {
    // Unknown attributes on custom calls are kept verbatim.
    SkipWs();
    std::string value;
    if (Peek() == '{' || Peek() == '(' || Peek() == '[') {
      absl::StatusOr<std::string> v = ParseBalanced();
      if (!v.ok()) return v.status();
      value = std::move(*v);
    } else if (Peek() == '"') {
      const char* s0 = p_;
      absl::StatusOr<std::string> v = ParseString();
      if (!v.ok()) return v.status();
      value = std::string(s0, p_);
    } else {
      const char* s0 = p_;
      while (p_ < end_ && (IsNameChar(*p_) || *p_ == '%' || *p_ == '+')) ++p_;
      if (p_ == s0) return Error(at, StrCat("attribute '", name, "' has no value"));
      value = std::string(s0, p_);
    }
    a.unknown_attributes.push_back({name, std::move(value)});
    return absl::OkStatus();
  }
  return Error(at, StrCat("unknown attribute '", name, "' for '", HloOpcodeString(op), "'"));
}

absl::Status Parser::Finish() {
  // Resolve called computations.
  for (const PendingComputationRef& ref : computation_refs_) {
    auto it = computation_names_.find(ref.use.name);
    if (it == computation_names_.end()) {
      return Error(ref.use.pos, StrCat("computation '", ref.use.name, "' is not defined"));
    }
    ref.inst->set_called_computation(ref.slot, it->second);
  }
  // Conditionals written with true/false computations may leave holes.
  for (const auto& c : computations_) {
    for (HloInstruction* inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) {
        if (callee == nullptr) {
          return Error(begin_, StrCat("instruction '", inst->name(),
                                            "' is missing one of its called computations"));
        }
      }
      if (inst->opcode() == HloOpcode::kAsyncStart) {
        HloInstruction* wrapped = inst->async_wrapped_instruction();
        if (wrapped != nullptr) {
          for (HloComputation* callee : wrapped->called_computations()) {
            if (callee == nullptr) {
              return Error(begin_, StrCat("instruction '", inst->name(),
                                                "' is missing one of its called computations"));
            }
          }
        }
      }
    }
  }
  // async-update/-done without calls= take their operand's computation.
  for (HloInstruction* inst : async_update_done_without_calls_) {
    if (inst->operand_count() < 1) continue;
    HloInstruction* op = inst->mutable_operand(0);
    if ((op->opcode() != HloOpcode::kAsyncStart && op->opcode() != HloOpcode::kAsyncUpdate) ||
        op->called_computations().empty()) {
      return Error(begin_, StrCat("'", inst->name(), "' must take an async-start or async-update "
                                        "as its operand (seed 001), but takes '", op->name(), "'"));
    }
    inst->AppendCalledComputation(op->called_computations()[0]);
    inst->set_async_execution_thread(op->async_execution_thread());
  }
  // Every computation must be reachable only through valid references; a
  // computation called as a fusion gets its fusion instruction.
  HloComputation* entry = entry_ != nullptr ? entry_ : computations_.back().get();
  // Detect recursion (a computation calling itself transitively).
  absl::flat_hash_map<const HloComputation*, int> state;
  std::function<absl::Status(const HloComputation*, int)> visit =
      [&](const HloComputation* c, int depth) -> absl::Status {
    if (depth > 10000) return Error(begin_, "call graph too deep");
    int& s = state[c];
    if (s == 1) return Error(begin_, StrCat("computation '", c->name(), "' calls itself"));
    if (s == 2) return absl::OkStatus();
    s = 1;
    for (HloInstruction* inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) {
        if (absl::Status st = visit(callee, depth + 1); !st.ok()) return st;
      }
    }
    state[c] = 2;
    return absl::OkStatus();
  };
  for (const auto& c : computations_) {
    if (absl::Status st = visit(c.get(), 0); !st.ok()) return st;
  }
  // An async-start puts its wrapped computation, and every computation that
  // one calls, on its thread (XLA's HloAsyncStartInstruction::
  // set_async_execution_thread, SetThreadName in hlo_instructions.cc): the
  // to_apply of "call-start(...), to_apply={...}, async_execution_thread=" is
  // on that thread too. In text order, as XLA builds them; the call graph is
  // known to be acyclic and shallow here.
  absl::flat_hash_set<const HloComputation*> visited;
  std::function<void(HloComputation*, const std::string&)> set_thread =
      [&](HloComputation* c, const std::string& thread) {
        if (c == nullptr || !visited.insert(c).second) return;
        c->set_execution_thread(thread);
        for (HloInstruction* inst : c->instructions()) {
          if (inst->opcode() == HloOpcode::kAsyncStart || inst->opcode() == HloOpcode::kAsyncUpdate ||
              inst->opcode() == HloOpcode::kAsyncDone) {
            inst->set_async_execution_thread(thread);
          }
          for (HloComputation* callee : inst->called_computations()) set_thread(callee, thread);
        }
      };
  for (const auto& c : computations_) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kAsyncStart || inst->called_computations().empty()) continue;
      visited.clear();
      set_thread(inst->called_computations()[0], inst->async_execution_thread());
    }
  }
  for (size_t i = 0; i < computations_.size(); ++i) {
    HloComputation* c = computations_[i].get();
    module_->AddComputationKeepName(std::move(computations_[i]), c == entry);
  }
  for (HloComputation* c : module_->computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kFusion && !inst->called_computations().empty()) {
        HloComputation* fused = inst->fused_instructions_computation();
        if (fused->FusionInstruction() == nullptr) fused->SetFusionInstruction(inst);
      }
    }
  }
  module_->set_is_scheduled(is_scheduled_);
  // A scheduled module's post order is its text order (HloComputation).
  if (is_scheduled_) {
    for (HloComputation* c : module_->computations()) c->InvalidatePostOrder();
  }
  return InferMissingShapes();
}

absl::Status Parser::InferMissingShapes() {
  if (needs_inference_.empty()) return absl::OkStatus();
  absl::flat_hash_map<const HloInstruction*, const char*> pending;
  for (auto [inst, pos] : needs_inference_) pending[inst] = pos;
  if (!options_.infer_shape) {
    auto [inst, pos] = needs_inference_.front();
    return Error(pos, StrCat("instruction '", inst->name(),
                             "' has no shape, and this parse has no shape inference"));
  }
  for (HloComputation* c : module_->MakeComputationPostOrder()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      auto it = pending.find(inst);
      if (it == pending.end()) continue;
      for (const HloInstruction* op : inst->operands()) {
        if (op->shape().element_type() == PrimitiveType::kInvalid) {
          return Error(it->second, StrCat("cannot infer the shape of '", inst->name(),
                                          "': operand '", op->name(), "' has no shape"));
        }
      }
      absl::StatusOr<Shape> shape = options_.infer_shape(*inst);
      if (!shape.ok()) {
        return Error(it->second, StrCat("cannot infer the shape of '", inst->name(), "': ",
                                        std::string(shape.status().message())));
      }
      *inst->mutable_shape() = std::move(*shape);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> Parser::ParseStandaloneShape() {
  absl::StatusOr<Shape> shape = ParseShape();
  if (!shape.ok()) return shape;
  if (!AtEnd()) return Error("unexpected text after the shape");
  return shape;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                         std::string_view filename,
                                                         const ParseOptions& options) {
  Parser parser(text, filename, options);
  return parser.ParseModule();
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  Parser parser(text, "<shape>");
  return parser.ParseStandaloneShape();
}

}  // namespace passlab
