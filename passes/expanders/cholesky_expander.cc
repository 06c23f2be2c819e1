#include "passes/expanders/cholesky_expander.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

constexpr PrimitiveType kS32 = PrimitiveType::kS32;
constexpr PrimitiveType kPred = PrimitiveType::kPred;

// x [B, m, k] . y [B, n, k] contracting the last dimensions => [B, m, n].
HloInstruction* BatchDotTransposed(ExpansionBuilder& b, HloInstruction* x, HloInstruction* y) {
  DotDimensionNumbers dnums;
  dnums.lhs_batch_dimensions = {0};
  dnums.rhs_batch_dimensions = {0};
  dnums.lhs_contracting_dimensions = {2};
  dnums.rhs_contracting_dimensions = {2};
  return b.Dot(x, y, std::move(dnums));
}

HloInstruction* True(ExpansionBuilder& b) {
  Literal t(Shape::Scalar(kPred));
  t.SetBits(0, 1);
  return b.ConstantLiteral(std::move(t));
}

struct Factor {
  HloInstruction* l;   // [B, n, n], lower triangular
  HloInstruction* ok;  // pred[B]: every pivot was positive
};

// The unblocked algorithm on the lower triangle of a [B, n, n]: a loop over
// the columns j,
//   d      = a[j, j] - sum_{k<j} l[j, k]^2
//   l[j,j] = sqrt(d)
//   l[i,j] = (a[i, j] - sum_{k<j} l[i, k] l[j, k]) / l[j, j]   (i > j)
// where both sums are one dot of l with its row j (columns >= j of l are
// still zero).
absl::StatusOr<Factor> FactorUnblocked(ExpansionBuilder& outer, HloInstruction* a, const OpMetadata& metadata) {
  const PrimitiveType type = a->shape().element_type();
  const int64_t batch = a->shape().dimensions(0), n = a->shape().dimensions(1);
  HloInstruction* l0 = outer.Broadcast(outer.Zero(type), {batch, n, n});
  HloInstruction* ok0 = outer.Broadcast(True(outer), {batch});
  if (n == 0) return Factor{l0, ok0};  // no column to slice
  auto body = [&](ExpansionBuilder& b, HloInstruction* j,
                  const std::vector<HloInstruction*>& state) -> absl::StatusOr<std::vector<HloInstruction*>> {
    HloInstruction* x = state[0];
    HloInstruction* l = state[1];
    HloInstruction* ok = state[2];
    HloInstruction* zero = b.ConstantScalar(kS32, 0);
    HloInstruction* row = b.DynamicSlice(l, {zero, j, zero}, {batch, 1, n});
    HloInstruction* sums = BatchDotTransposed(b, l, row);  // [B, n, 1]
    HloInstruction* column = b.DynamicSlice(x, {zero, zero, j}, {batch, n, 1});
    HloInstruction* diff = b.Binary(HloOpcode::kSubtract, column, sums);
    HloInstruction* d = b.Reshape(b.DynamicSlice(diff, {zero, j, zero}, {batch, 1, 1}), {batch});
    HloInstruction* pivot = b.Unary(HloOpcode::kSqrt, d);
    HloInstruction* pivots = b.Broadcast(pivot, {batch, n, 1}, {0});
    HloInstruction* scaled = b.Binary(HloOpcode::kDivide, diff, pivots);
    // Rows above j stay zero, row j is the pivot, rows below are scaled.
    HloInstruction* rows = b.Iota(kS32, {batch, n, 1}, 1);
    HloInstruction* js = b.Broadcast(j, {batch, n, 1});
    HloInstruction* zeros = b.Broadcast(b.Zero(type), {batch, n, 1});
    HloInstruction* new_column =
        b.Select(b.Compare(rows, js, ComparisonDirection::kGt), scaled,
                 b.Select(b.Compare(rows, js, ComparisonDirection::kEq), pivots, zeros));
    HloInstruction* next_l = b.DynamicUpdateSlice(l, new_column, {zero, zero, j});
    HloInstruction* positive = b.Compare(d, b.Broadcast(b.Zero(type), {batch}), ComparisonDirection::kGt);
    HloInstruction* next_ok = b.Binary(HloOpcode::kAnd, ok, positive);
    return std::vector<HloInstruction*>{x, next_l, next_ok};
  };
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> result,
      MakeCountedLoop(outer.computation(), n, {a, l0, ok0}, body, metadata, "cholesky_unblocked"));
  return Factor{result[1], result[2]};
}

// The blocked left-looking algorithm: for each panel of columns [i, i+k),
//   panel    = a[i:, i:i+k] - l[i:, :i] l[i:i+k, :i]^T
//   l11      = unblocked(panel[:k])
//   l[i+k:, i:i+k] = panel[k:] l11^-T        (triangular-solve)
absl::StatusOr<Factor> FactorBlocked(ExpansionBuilder& b, HloInstruction* a, int64_t block_size,
                                     const OpMetadata& metadata) {
  const PrimitiveType type = a->shape().element_type();
  const int64_t batch = a->shape().dimensions(0), n = a->shape().dimensions(1);
  if (n <= block_size) return FactorUnblocked(b, a, metadata);
  HloInstruction* l = b.Broadcast(b.Zero(type), {batch, n, n});
  HloInstruction* ok = b.Broadcast(True(b), {batch});
  HloInstruction* zero = b.ConstantScalar(kS32, 0);
  for (int64_t i = 0; i < n; i += block_size) {
    const int64_t k = std::min(block_size, n - i);
    HloInstruction* panel = b.Slice(a, {0, i, i}, {batch, n, i + k});
    if (i > 0) {
      HloInstruction* below = b.Slice(l, {0, i, 0}, {batch, n, i});
      HloInstruction* block_rows = b.Slice(l, {0, i, 0}, {batch, i + k, i});
      panel = b.Binary(HloOpcode::kSubtract, panel, BatchDotTransposed(b, below, block_rows));
    }
    ASSIGN_OR_RETURN(Factor diagonal, FactorUnblocked(b, b.Slice(panel, {0, 0, 0}, {batch, k, k}), metadata));
    ok = b.Binary(HloOpcode::kAnd, ok, diagonal.ok);
    HloInstruction* at_i = b.ConstantScalar(kS32, i);
    l = b.DynamicUpdateSlice(l, diagonal.l, {zero, at_i, at_i});
    if (i + k == n) continue;
    HloInstruction* rest = b.Slice(panel, {0, k, 0}, {batch, n - i, k});
    HloInstruction* solved =
        b.Add(HloInstruction::Create(HloOpcode::kTriangularSolve, rest->shape(), {diagonal.l, rest}));
    solved->mutable_attrs().triangular_solve = {.left_side = false,
                                                .lower = true,
                                                .unit_diagonal = false,
                                                .transpose_a = TriangularTranspose::kTranspose};
    l = b.DynamicUpdateSlice(l, solved, {zero, b.ConstantScalar(kS32, i + k), at_i});
  }
  return Factor{l, ok};
}

}  // namespace

bool CholeskyExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kCholesky) return false;
  const Shape& s = inst->shape();
  PrimitiveType t = s.IsArray() ? s.element_type() : PrimitiveType::kTuple;
  return s.IsArray() && s.rank() >= 2 && s.is_static() &&
         (t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
          t == PrimitiveType::kF64);
}

absl::StatusOr<HloInstruction*> CholeskyExpander::ExpandInstruction(HloInstruction* cholesky) {
  const Shape& shape = cholesky->shape();
  const int64_t rank = shape.rank();
  const int64_t n = shape.dimensions(rank - 1);
  if (shape.dimensions(rank - 2) != n) {
    return absl::InvalidArgumentError(
        StrCat("cholesky_expander: ", cholesky->name(), " is not square: ", shape.ToString()));
  }
  if (options_.block_size < 1) {
    return absl::InvalidArgumentError(StrCat("cholesky_expander: block_size ", options_.block_size, " < 1"));
  }
  ExpansionBuilder b(cholesky->parent(), cholesky->metadata());
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d) batch *= shape.dimensions(d);
  // Work on [B, n, n] lower factors; the upper factor of a is the transposed
  // lower factor of a^T.
  const bool lower = cholesky->attrs().cholesky_lower;
  HloInstruction* a = b.Reshape(cholesky->mutable_operand(0), {batch, n, n});
  if (!lower) a = b.Transpose(a, {0, 2, 1});
  ASSIGN_OR_RETURN(Factor factor, FactorBlocked(b, a, options_.block_size, cholesky->metadata()));
  Literal nan(Shape::Scalar(shape.element_type()));
  nan.SetDouble(0, std::nan(""));
  HloInstruction* nans = b.Broadcast(b.ConstantLiteral(std::move(nan)), {batch, n, n});
  HloInstruction* ok = b.Add(HloInstruction::CreateBroadcast(Shape(kPred, {batch, n, n}), factor.ok, {0}));
  HloInstruction* result = b.Select(ok, factor.l, nans);
  if (!lower) result = b.Transpose(result, {0, 2, 1});
  return b.Reshape(result, shape.dimensions());
}

}  // namespace passlab
