#include "core/text/hlo_parser_internal.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/ir/status_macros.h"

namespace passlab {
namespace text_internal {

bool Parser::PeekShape() {
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
bool Parser::PeekUnknownShape() {
  SkipWs();
  const char* q = p_;
  while (q < end_ && std::isalnum(static_cast<unsigned char>(*q))) ++q;
  const char* word_end = q;
  while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
  return word_end != p_ && q < end_ && *q == '[';
}

// "b(" starts a buffer shape, "b(f32[16])" (XLA's ParseShape).
bool Parser::PeekBufferShape() {
  SkipWs();
  if (p_ >= end_ || *p_ != 'b') return false;
  const char* q = p_ + 1;
  while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
  return q < end_ && *q == '(';
}

absl::StatusOr<Shape> Parser::ParseShape(int depth) {
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
    RETURN_IF_ERROR(Expect(')', "closing a buffer shape"));
    inner->set_is_buffer(true);
    return inner;
  }
  if (Consume('(')) {
    std::vector<Shape> elements;
    if (!Consume(')')) {
      do {
        ASSIGN_OR_RETURN(Shape e, ParseShape(depth + 1));
        elements.push_back(std::move(e));
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(')', "closing a tuple shape"));
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
      ASSIGN_OR_RETURN(int64_t d, ParseInt());
      if (d < 0) return Error(at, "dimension sizes must be non-negative");
      shape.add_dimension(d, dynamic);
    } while (Consume(','));
    RETURN_IF_ERROR(Expect(']', "closing the dimensions"));
    if (!shape.IsArray()) return Error(start, "token and opaque shapes have no dimensions");
  }
  if (shape.IsArray()) {
    if (PeekLayout()) {
      ASSIGN_OR_RETURN(Layout layout, ParseLayout(depth));
      shape.set_layout(std::move(layout));
    } else if (!keep_missing_layouts_ || shape.rank() == 0) {
      shape.SetDefaultLayout();
    }
  }
  return shape;
}

// A '{' starts a layout only when followed by a digit, ':' or '}'; this

bool Parser::PeekLayout() {
  if (Peek() != '{') return false;
  const char* q = p_ + 1;
  while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')) ++q;
  return q < end_ && (std::isdigit(static_cast<unsigned char>(*q)) || *q == ':' || *q == '}');
}

absl::StatusOr<Layout> Parser::ParseLayout(int depth) {
  RETURN_IF_ERROR(Expect('{'));
  Layout layout;
  if (!Consume('}')) {
    if (Peek() != ':') {
      do {
        ASSIGN_OR_RETURN(int64_t d, ParseInt());
        layout.mutable_minor_to_major().push_back(d);
      } while (Consume(','));
    }
    if (Consume(':')) {
      while (Peek() != '}' && p_ < end_) {
        const char* at = p_;
        if (ConsumeStr("SC")) {
          while (Peek() == '(') {
            ++p_;
            SplitConfig sc;
            ASSIGN_OR_RETURN(int64_t dim, ParseInt());
            sc.dimension = dim;
            RETURN_IF_ERROR(Expect(':'));
            do {
              ASSIGN_OR_RETURN(int64_t v, ParseInt());
              sc.split_indices.push_back(v);
            } while (Consume(','));
            RETURN_IF_ERROR(Expect(')'));
            layout.mutable_split_configs().push_back(std::move(sc));
          }
        } else if (Consume('D')) {
          RETURN_IF_ERROR(Expect('('));
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
          RETURN_IF_ERROR(Expect(')'));
        } else if (Consume('T')) {
          while (Peek() == '(') {
            ++p_;
            Tile tile;
            if (!Consume(')')) {
              do {
                if (Consume('*')) {
                  tile.dims.push_back(Tile::kCombineDimension);
                } else {
                  ASSIGN_OR_RETURN(int64_t v, ParseInt());
                  tile.dims.push_back(v);
                }
              } while (Consume(','));
              RETURN_IF_ERROR(Expect(')'));
            }
            layout.mutable_tiles().push_back(std::move(tile));
          }
        } else if (Consume('L') || Consume('E') || Consume('S') || Consume('M')) {
          char field = p_[-1];
          RETURN_IF_ERROR(Expect('('));
          ASSIGN_OR_RETURN(int64_t v, ParseInt());
          RETURN_IF_ERROR(Expect(')'));
          if (field == 'L') layout.set_tail_padding_alignment_in_elements(v);
          if (field == 'E') layout.set_element_size_in_bits(v);
          if (field == 'S') layout.set_memory_space(v);
          if (field == 'M') layout.set_dynamic_shape_metadata_prefix_bytes(v);
        } else if (Consume('#') || Consume('*')) {
          char field = p_[-1];
          RETURN_IF_ERROR(Expect('('));
          SkipWs();
          const char* ts = p_;
          while (p_ < end_ && std::isalnum(static_cast<unsigned char>(*p_))) ++p_;
          std::optional<PrimitiveType> t = PrimitiveTypeFromName(std::string_view(ts, p_ - ts));
          if (!t.has_value()) return Error(ts, "unknown primitive type in layout");
          RETURN_IF_ERROR(Expect(')'));
          if (field == '#') layout.set_index_primitive_type(*t);
          else layout.set_pointer_primitive_type(*t);
        } else if (Consume('P')) {
          RETURN_IF_ERROR(Expect('('));
          ASSIGN_OR_RETURN(Shape phys, ParseShape(depth + 1));
          RETURN_IF_ERROR(Expect(')'));
          layout.set_physical_shape(phys);
        } else {
          return Error(at, "unknown layout field");
        }
      }
    }
    RETURN_IF_ERROR(Expect('}', "closing the layout"));
  }
  return layout;
}

absl::Status Parser::ParseElement(Literal& lit, int64_t linear) {
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
    RETURN_IF_ERROR(Expect('(', "starting a complex value"));
    ASSIGN_OR_RETURN(double re, ParseDouble());
    RETURN_IF_ERROR(Expect(','));
    ASSIGN_OR_RETURN(double im, ParseDouble());
    RETURN_IF_ERROR(Expect(')'));
    lit.SetComplex(linear, {re, im});
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
      RETURN_IF_ERROR(Expect(')'));
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
  ASSIGN_OR_RETURN(double v, ParseDouble());
  lit.SetDouble(linear, v);
  return absl::OkStatus();
}

absl::Status Parser::ParseArrayLiteral(Literal& lit, int64_t dim, int64_t& linear, int depth) {
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
      RETURN_IF_ERROR(ParseArrayLiteral(lit, dim + 1, linear, depth + 1));
      ++count;
    } while (Consume(','));
    RETURN_IF_ERROR(Expect('}'));
  }
  if (count != dims[dim]) {
    return Error(at, StrCat("dimension ", dim, " of the constant has ", count,
                                  " elements but the shape says ", dims[dim]));
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Parser::ParseLiteral(const Shape& shape, int depth) {
  if (depth > kMaxNesting) return Error("literal nesting too deep");
  if (shape.IsTuple()) {
    RETURN_IF_ERROR(Expect('(', "starting a tuple constant"));
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      if (i > 0) {
        RETURN_IF_ERROR(Expect(','));
      }
      ASSIGN_OR_RETURN(Literal e, ParseLiteral(shape.tuple_shapes(i), depth + 1));
      elements.push_back(std::move(e));
    }
    RETURN_IF_ERROR(Expect(')'));
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
    RETURN_IF_ERROR(ParseElement(lit, 0));
    int w = PrimitiveByteWidth(shape.element_type());
    for (int64_t i = 1; i < lit.element_count(); ++i) {
      std::memcpy(lit.untyped_data() + i * w, lit.untyped_data(), w);
    }
    return lit;
  }
  int64_t linear = 0;
  RETURN_IF_ERROR(ParseArrayLiteral(lit, 0, linear, depth));
  return lit;
}

absl::StatusOr<Shape> Parser::ParseStandaloneShape() {
  absl::StatusOr<Shape> shape = ParseShape();
  if (!shape.ok()) return shape;
  if (!AtEnd()) return Error("unexpected text after the shape");
  return shape;
}

}  // namespace text_internal
}  // namespace passlab
