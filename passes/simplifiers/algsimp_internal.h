// Internals of AlgebraicSimplifier shared by its rule files: the rule type,
// the context rules build replacements in, and matchers. Rules of one opcode
// are tried in the order XLA's handler for that opcode tries them; the first
// that fires rewrites the instruction.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_
#define PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "passes/simplifiers/algebraic_simplifier.h"

namespace passlab::algsimp {

// Builds replacement instructions next to the instruction being rewritten.
// What a rule adds and then abandons (it returned nullptr) is removed again
// by the driver, so a rule may build before it decides.
class RuleContext {
 public:
  // Scalar reducers a run has added, by (opcode, type), shared by the rules.
  using ReducerCache = std::map<std::pair<HloOpcode, PrimitiveType>, HloComputation*>;
  RuleContext(HloInstruction* anchor, const AlgebraicSimplifierOptions& options, ReducerCache* reducers)
      : anchor_(anchor), options_(options), reducers_(reducers) {}
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst);
  // A scalar constant of `type` (or of `like`'s element type) broadcast to
  // `shape` (or the scalar itself): XLA's MakeScalarLike.
  HloInstruction* Constant(const Shape& shape, double value);
  HloInstruction* ScalarLike(const HloInstruction* like, double value) { return Constant(like->shape(), value); }
  HloInstruction* Binary(HloOpcode op, HloInstruction* a, HloInstruction* b) {
    return Add(HloInstruction::CreateBinary(a->shape(), op, a, b));
  }
  // Shapes equal for this run: with layouts when layout sensitive.
  bool SameShape(const Shape& a, const Shape& b) const {
    return options_.is_layout_sensitive ? a == b : a.Compatible(b);
  }
  // A scalar computation `x op y` of `type`, added to the module once per
  // (op, type) and run.
  HloComputation* ScalarReducer(HloOpcode op, PrimitiveType type);
  const AlgebraicSimplifierOptions& options() const { return options_; }
  HloComputation* computation() const { return anchor_->parent(); }
  HloModule* module() const { return anchor_->GetModule(); }
  const std::vector<HloInstruction*>& added() const { return added_; }

 private:
  HloInstruction* anchor_;
  const AlgebraicSimplifierOptions& options_;
  ReducerCache* reducers_;
  std::vector<HloInstruction*> added_;
};

// A rule returns the instruction to replace `inst` with; `inst` itself when it
// edited `inst` (or its users) in place; nullptr when it does not apply.
struct Rule {
  HloOpcode opcode;
  std::string_view name;
  std::function<HloInstruction*(HloInstruction* inst, RuleContext& ctx)> apply;
};

// A named rule for `op` (the rule lists of algsimp_*.cc are built from these).
inline Rule R(HloOpcode op, std::string_view name, std::function<HloInstruction*(HloInstruction*, RuleContext&)> f) {
  return {op, name, std::move(f)};
}
inline bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
inline HloInstruction* Op(HloInstruction* i, int64_t k) { return i->mutable_operand(k); }
inline bool IsFloat(const HloInstruction* i) { return IsFloatingPointType(i->shape().element_type()); }
inline bool IsInt(const HloInstruction* i) { return IsIntegralType(i->shape().element_type()); }
inline bool IsPred(const HloInstruction* i) { return i->shape().element_type() == PrimitiveType::kPred; }
inline bool IsComplex(const HloInstruction* i) { return IsComplexType(i->shape().element_type()); }
inline bool Is(const HloInstruction* i, HloOpcode op) { return i->opcode() == op; }
inline bool IsUnstridedSlice(const HloInstruction* slice) {
  for (const SliceDimension& d : slice->attrs().slice) {
    if (d.stride != 1) return false;
  }
  return true;
}
// An array shape of `like`'s element type with `dims` (no layout).
inline Shape WithDims(const Shape& like, std::vector<int64_t> dims) {
  return Shape(like.element_type(), std::move(dims));
}

// XLA's IsAll: constant (through broadcasts) with every element == value.
// Exact for integers of any width.
bool IsAll(const HloInstruction* inst, double value);
// Every element is the largest (or smallest) value of `type`: +inf/-inf for
// floats with infinities, the extreme finite value otherwise.
bool IsAllMaxValue(const HloInstruction* inst, PrimitiveType type);
bool IsAllMinValue(const HloInstruction* inst, PrimitiveType type);
// XLA's ConstantEffectiveScalar: a constant with one element.
bool IsEffectiveScalarConstant(const HloInstruction* inst);
// A constant whose value is +-2^k (through a broadcast of an effective scalar).
bool IsAllFpConstantPowerOf2(const HloInstruction* inst);
// XLA's IsNonNegative: every element is >= 0 (not -0, not NaN).
bool IsNonNegative(const HloInstruction* inst, const AlgebraicSimplifierOptions& options);
// XLA's IsPositive.
bool IsPositive(const HloInstruction* inst, const AlgebraicSimplifierOptions& options);
// The permutation p with p[perm[i]] = i.
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm);
bool IsIdentityPermutation(const std::vector<int64_t>& perm);
// The binary opcode a two-parameter scalar computation applies to its
// parameters (in either order), or nullopt.
std::optional<HloOpcode> ScalarReducerOpcode(const HloComputation* c);
// XLA's ShapeUtil::DimensionsUnmodifiedByReshape: (input dim, output dim)
// pairs a reshape from `in` to `out` leaves alone.
std::vector<std::pair<int64_t, int64_t>> DimensionsUnmodifiedByReshape(const Shape& in, const Shape& out);
// XLA's ShapeUtil::InsertedOrDeleted1SizedDimensions for reshape pre -> post:
// the 1-sized dims it deletes from pre and inserts into post, or nullopt when
// it changes any other dim.
struct InsertedOrDeleted {
  std::vector<int64_t> deleted;
  std::vector<int64_t> inserted;
};
std::optional<InsertedOrDeleted> InsertedOrDeleted1SizedDimensions(const Shape& pre, const Shape& post);
// A rule for `op` (reshape, transpose or bitcast) applying XLA's
// TryRemovingBitcastOrReshapeTransposeChain: a chain of transposes and
// reshapes (bitcasts when layout sensitive) that only add or drop one
// 1-sized dim and whose transposes compose to the identity => its source.
Rule ChainRule(HloOpcode op, std::string_view name);
// Layout helpers (algsimp_copy.cc). XLA's ShapeUtil::ReshapeIsBitcast:
// every element keeps its place in memory (both shapes need layouts).
bool ReshapeIsBitcast(const Shape& from, const Shape& to);
// XLA's ShapeUtil::TransposeIsBitcast for transpose(from, perm) -> to.
bool TransposeIsBitcast(const Shape& from, const Shape& to, const std::vector<int64_t>& perm);
// XLA's ShapeUtil::DeduceTransposeDimensionsForBitcast: the permutation
// when bitcast(from) -> to is a transpose (same rank, layouts), else nullopt.
std::optional<std::vector<int64_t>> TransposeDimsOfBitcast(const Shape& from, const Shape& to);
// XLA's SimplifyTransposeOfBroadcast (algsimp_shape.cc): `i` (a transpose,
// or a bitcast that transposes by `perm`) of broadcast(A) => broadcast(A)
// when A's dims keep their order; nullptr otherwise.
HloInstruction* TransposeOfBroadcast(HloInstruction* i, const std::vector<int64_t>& perm, RuleContext& ctx);
// Dot helpers (algsimp_dot.cc). XLA's HloCostAnalysis::GetDotFlops.
int64_t DotFlops(const Shape& lhs, const Shape& result, const DotDimensionNumbers& d);
// XLA's ConstructToDotMaps: operand dim -> dot result dim (-1: contracted).
std::pair<std::vector<int64_t>, std::vector<int64_t>> ToDotMaps(const DotDimensionNumbers& d, const Shape& a,
                                                                const Shape& b);
// XLA's ConstructFromDotMaps: dot result dim -> operand dim (-1: absent).
std::pair<std::vector<int64_t>, std::vector<int64_t>> FromDotMaps(const HloInstruction* dot, const Shape& a,
                                                                  const Shape& b);
// A parameter, or a chain of single-operand ops over one (XLA's IsParameterLike).
bool IsParameterLike(const HloInstruction* inst);
// A dot of l and r with `like`'s precision and element type, shape inferred.
HloInstruction* MakeDot(HloInstruction* l, HloInstruction* r, const DotDimensionNumbers& d, const HloInstruction* like,
                        RuleContext& ctx);

std::vector<Rule> ArithmeticRules();
// Data movement: constants, broadcasts, reshapes, transposes
// (algsimp_shape.cc), then the families below, in this order.
std::vector<Rule> ShapeRules();
void AddSliceRules(std::vector<Rule>& rules);        // algsimp_slice.cc
void AddConcatPadRules(std::vector<Rule>& rules);    // algsimp_concat_pad.cc
void AddCopyBitcastRules(std::vector<Rule>& rules);  // algsimp_copy.cc
std::vector<Rule> ReduceRules();
std::vector<Rule> DotRules();
std::vector<Rule> GatherRules();

}  // namespace passlab::algsimp

#endif  // PASSLAB_PASSES_SIMPLIFIERS_ALGSIMP_INTERNAL_H_
