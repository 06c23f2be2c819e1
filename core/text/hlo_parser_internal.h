// The HLO text parser's internals, shared by its files (not a public
// header: core/text/hlo_parser.h is). One Parser object reads one text;
// its member functions are split by what they read:
//   hlo_parser.cc              the module: header attributes (the config),
//                              resolution of called computations, shape
//                              inference of shape-less instructions, the API
//   hlo_parser_lexer.cc        errors, numbers, strings, balanced text
//   hlo_parser_shapes.cc       shapes, layouts, literals
//   hlo_parser_values.cc       structured attribute values (window,
//                              dim_labels, padding, metadata, ...)
//   hlo_parser_sharding.cc     shardings, named ("V3") shardings included
//   hlo_parser_instructions.cc computations and instructions, operands,
//                              async sugar, inline operands and computations
//   hlo_parser_attributes.cc   instruction attributes, driven by the
//                              attribute table (hlo_attribute_table.h) that
//                              the printer shares
// The lexing helpers stay inline here: every file calls them per token.
#ifndef PASSLAB_CORE_TEXT_HLO_PARSER_INTERNAL_H_
#define PASSLAB_CORE_TEXT_HLO_PARSER_INTERNAL_H_

#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_attribute_table.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace text_internal {

inline constexpr int kMaxNesting = 200;

inline bool IsNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '%' || c == '$';
}
inline bool IsNameChar(char c) {
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
  // ---- Errors (hlo_parser_lexer.cc) ----
  // "FILE:LINE:COL: error: MESSAGE (at 'TOKEN')".
  absl::Status Error(const char* at, std::string_view message);
  absl::Status Error(std::string_view message) { return Error(p_, message); }
  std::string TokenAt(const char* at) const;

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
  absl::StatusOr<double> ParseDouble();
  // A "..." string with C escapes; quote='\'' reads XLA's '...' strings
  // (mesh axis names).
  absl::StatusOr<std::string> ParseString(char quote = '"');
  // Captures balanced text starting at an opening bracket, respecting strings.
  absl::StatusOr<std::string> ParseBalanced();
  template <typename T, typename Fn>
  absl::StatusOr<std::vector<T>> ParseList(char open, char close, Fn&& element) {
    std::vector<T> out;
    RETURN_IF_ERROR(Expect(open));
    if (Consume(close)) return out;
    do {
      ASSIGN_OR_RETURN(T v, element());
      out.push_back(std::move(v));
    } while (Consume(','));
    RETURN_IF_ERROR(Expect(close));
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
    ASSIGN_OR_RETURN(bool b, ParseBool());
    return std::vector<bool>{b};
  }
  // "AxBxC" with optional negative numbers.
  absl::StatusOr<std::vector<int64_t>> ParseXList() {
    std::vector<int64_t> out;
    do {
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      out.push_back(v);
    } while (p_ < end_ && *p_ == 'x' && ++p_);
    return out;
  }

  // ---- Shapes, layouts and literals (hlo_parser_shapes.cc) ----
  bool PeekShape();
  // "word[" where word is not a type: a misspelt shape ("f33[2]"), reported
  // by ParseShape as an unknown element type.
  bool PeekUnknownShape();
  // "b(" starts a buffer shape, "b(f32[16])" (XLA's ParseShape).
  bool PeekBufferShape();
  absl::StatusOr<Shape> ParseShape(int depth = 0);
  // A '{' starts a layout only when followed by a digit, ':' or '}'; this
  // tells "-> f32[2] {" (a computation body) from "f32[2]{0}".
  bool PeekLayout();
  absl::StatusOr<Layout> ParseLayout(int depth);
  absl::Status ParseElement(Literal& lit, int64_t linear);
  absl::Status ParseArrayLiteral(Literal& lit, int64_t dim, int64_t& linear, int depth);
  absl::StatusOr<Literal> ParseLiteral(const Shape& shape, int depth = 0);

  // ---- Structured attribute values (hlo_parser_values.cc) ----
  absl::StatusOr<Window> ParseWindow();
  absl::StatusOr<ConvolutionDimensionNumbers> ParseDimLabels();
  absl::StatusOr<PaddingConfig> ParsePadding();
  absl::StatusOr<std::vector<SliceDimension>> ParseSliceRanges();
  absl::StatusOr<ReplicaGroups> ParseReplicaGroups();
  absl::StatusOr<OpMetadata> ParseMetadata();
  absl::StatusOr<FrontendAttributes> ParseFrontendAttributes();
  absl::StatusOr<ShapeIndex> ParseShapeIndex() { return ParseIntList('{', '}'); }
  absl::StatusOr<std::vector<OutputOperandAlias>> ParseAliasing();
  absl::StatusOr<std::vector<SparsityDescriptor>> ParseSparsity();
  absl::StatusOr<Statistics> ParseStatistics();
  absl::StatusOr<DomainMetadata> ParseDomain();
  // A value passlab does not model, kept as written: balanced brackets, a
  // quoted string (with its quotes) or a bare word (letters, digits and
  // `extra` characters). `what` names the value in the error for none.
  absl::StatusOr<std::string> ParseVerbatimValue(const char* at, std::string_view extra,
                                                 std::string_view what);

  // ---- Shardings (hlo_parser_sharding.cc) ----
  struct NamedParse;
  absl::Status ParseMesh(NamedParse& np);
  absl::StatusOr<NamedSharding::AxisRef> ParseAxisRef(NamedParse& np);
  absl::Status ParseAxisRefList(NamedParse& np, std::string_view what,
                                std::vector<NamedSharding::AxisRef>& out);
  absl::StatusOr<NamedSharding::DimSharding> ParseDimSharding(NamedParse& np);
  absl::Status ParseShardingMetadata(std::vector<OpMetadata>& out);
  absl::Status ParseNamedSharding(HloSharding& sh);
  absl::StatusOr<HloSharding> ParseSharding(int depth = 0);

  // ---- Computations and instructions (hlo_parser_instructions.cc) ----
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

  absl::Status ParseComputation();
  absl::Status ParseComputationBody(const std::string& name, const char* comp_pos, bool is_entry);
  absl::Status ParseInstruction(ComputationScope& scope, std::unique_ptr<HloComputation>& comp,
                                HloInstruction** root, const char** root_pos);
  absl::StatusOr<HloInstruction*> ParseInstructionRest(ComputationScope& scope,
                                                       std::unique_ptr<HloComputation>& comp,
                                                       const std::string& name, const char* inst_pos,
                                                       std::optional<Shape> declared_shape, int depth);
  // After a name-less operand position: "opcode(" starts an inline instruction.
  bool PeekInlineInstruction();
  // XLA's compact GTE operand "%t#1#0": each "#i" is a get-tuple-element of
  // the operand so far, added before the user and shared by later uses of
  // the same spelling; named as XLA sanitizes it ("t_1_0"). The base must be
  // defined earlier, as XLA requires. Returns the name to use as the operand.
  absl::StatusOr<std::string> ParseCompactGte(ComputationScope& scope,
                                              std::unique_ptr<HloComputation>& comp,
                                              const std::string& base, const char* at);
  // Rejects a computation whose operand/control edges form a cycle, naming
  // one instruction on it.
  absl::Status CheckAcyclic(const HloComputation& comp, const ComputationScope& scope);
  // A called computation: a name, or a body written inline ("{...}").
  absl::StatusOr<std::string> ParseComputationRef(HloInstruction* inst, size_t slot);

  // ---- Instruction attributes (hlo_parser_attributes.cc) ----
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
  // The attributes after the operand list, then the check that the
  // attributes the table marks required for the opcode were given.
  // `attr_target`: the op an "op-start" wraps (else `inst`), which takes the
  // opcode's own attributes; generic ones stay on `inst`.
  absl::Status ParseAttributes(HloInstruction* inst, HloInstruction* attr_target,
                               const char* inst_pos, absl::flat_hash_set<std::string>& seen,
                               PendingInstruction& pending, bool is_sugar_start);
  absl::Status ParseOneAttribute(const std::string& name, const char* at, HloInstruction* inst,
                                 HloInstruction* target, PendingInstruction& pending);
  // The value of an attribute of a plain kind (AttrKind other than kSpecial
  // and the computation kinds), stored through the table's accessor.
  absl::Status ParsePlainAttribute(const AttributeSpec& spec, HloInstruction* target);
  absl::Status ParseSpecialAttribute(const AttributeSpec& spec, const char* at, HloInstruction* inst,
                                     HloInstruction* target, PendingInstruction& pending);

  // ---- The module (hlo_parser.cc) ----
  absl::Status ParseHeader();
  absl::Status Finish();
  absl::Status InferMissingShapes();

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

}  // namespace text_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PARSER_INTERNAL_H_
