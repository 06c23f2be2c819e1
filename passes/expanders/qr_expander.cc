#include "passes/expanders/qr_expander.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

constexpr char kQrTarget[] = "Qr";
constexpr char kProductTarget[] = "ProductOfElementaryHouseholderReflectors";
constexpr PrimitiveType kS32 = PrimitiveType::kS32;

bool IsRealFloatArray(const Shape& s) {
  if (!s.IsArray() || !s.is_static()) return false;
  PrimitiveType t = s.element_type();
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
         t == PrimitiveType::kF64;
}

// Per matrix: x [B, m] . y [B, m, ...] over m => [B, ...].
HloInstruction* BatchVectorTimes(ExpansionBuilder& b, HloInstruction* v, HloInstruction* y) {
  DotDimensionNumbers dnums;
  dnums.lhs_batch_dimensions = {0};
  dnums.rhs_batch_dimensions = {0};
  dnums.lhs_contracting_dimensions = {1};
  dnums.rhs_contracting_dimensions = {1};
  return b.Dot(v, y, std::move(dnums));
}

// tau [B], v [B, m], w [B, n] => tau v w^T [B, m, n]: the rank-one update a
// reflector applies to a matrix whose v^T-product is w.
HloInstruction* ScaledOuterProduct(ExpansionBuilder& b, HloInstruction* tau, HloInstruction* v, HloInstruction* w) {
  const int64_t batch = v->shape().dimensions(0), m = v->shape().dimensions(1), n = w->shape().dimensions(1);
  HloInstruction* tv = b.Binary(HloOpcode::kMultiply, b.Broadcast(tau, {batch, m}, {0}), v);
  return b.Binary(HloOpcode::kMultiply, b.Broadcast(tv, {batch, m, n}, {0, 1}), b.Broadcast(w, {batch, m, n}, {0, 2}));
}

// Column j of a [B, m, n] as [B, m].
HloInstruction* Column(ExpansionBuilder& b, HloInstruction* a, HloInstruction* j) {
  const int64_t batch = a->shape().dimensions(0), m = a->shape().dimensions(1);
  HloInstruction* zero = b.ConstantScalar(kS32, 0);
  return b.Reshape(b.DynamicSlice(a, {zero, zero, j}, {batch, m, 1}), {batch, m});
}

// v_j [B, m] from column j of the reflector matrix: 1 at row j, the stored
// vector below, zero above.
HloInstruction* ReflectorVector(ExpansionBuilder& b, HloInstruction* below, HloInstruction* at_j, HloInstruction* tail) {
  PrimitiveType type = tail->shape().element_type();
  const std::vector<int64_t> dims = tail->shape().dimensions();
  return b.Select(below, tail,
                  b.Select(at_j, b.Broadcast(b.ConstantScalar(type, 1), dims), b.Broadcast(b.Zero(type), dims)));
}

// "Qr": for each column j < min(m, n), the reflector of a[j:, j] (see the
// header), applied to the columns right of j, then stored in column j.
absl::StatusOr<HloInstruction*> ExpandQr(HloInstruction* call) {
  ExpansionBuilder b(call->parent(), call->metadata());
  const Shape& a_shape = call->operand(0)->shape();
  const PrimitiveType type = a_shape.element_type();
  const int64_t rank = a_shape.rank();
  const int64_t m = a_shape.dimensions(rank - 2), n = a_shape.dimensions(rank - 1), k = std::min(m, n);
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d) batch *= a_shape.dimensions(d);
  HloInstruction* a = b.Reshape(call->mutable_operand(0), {batch, m, n});
  HloInstruction* taus = b.Broadcast(b.Zero(type), {batch, k});
  // No column to reflect: a as it is, no taus.
  if (k == 0) {
    return b.Tuple({call->mutable_operand(0), b.Reshape(taus, call->shape().tuple_shapes(1).dimensions())});
  }
  auto body = [&](ExpansionBuilder& lb, HloInstruction* j,
                  const std::vector<HloInstruction*>& state) -> absl::StatusOr<std::vector<HloInstruction*>> {
    HloInstruction* x = state[0];
    HloInstruction* zero = lb.ConstantScalar(kS32, 0);
    HloInstruction* column = Column(lb, x, j);
    HloInstruction* rows = lb.Iota(kS32, {batch, m}, 1);
    HloInstruction* js = lb.Broadcast(j, {batch, m});
    HloInstruction* below = lb.Compare(rows, js, ComparisonDirection::kGt);
    HloInstruction* at_j = lb.Compare(rows, js, ComparisonDirection::kEq);
    HloInstruction* zeros_m = lb.Broadcast(lb.Zero(type), {batch, m});
    HloInstruction* tail = lb.Select(below, column, zeros_m);
    // sigma = ||a[j+1:, j]||^2, alpha = a[j, j], mu = sqrt(alpha^2 + sigma).
    HloInstruction* sigma = BatchVectorTimes(lb, tail, tail);
    HloInstruction* alpha = lb.Reshape(lb.DynamicSlice(column, {zero, j}, {batch, 1}), {batch});
    HloInstruction* mu =
        lb.Unary(HloOpcode::kSqrt, lb.Binary(HloOpcode::kAdd, lb.Binary(HloOpcode::kMultiply, alpha, alpha), sigma));
    HloInstruction* zeros_b = lb.Broadcast(lb.Zero(type), {batch});
    HloInstruction* ones_b = lb.Broadcast(lb.ConstantScalar(type, 1), {batch});
    // beta = -sign(alpha) mu, sign(0) = +1; a zero tail is its own
    // reflection (tau = 0, beta = alpha).
    HloInstruction* sigma_zero = lb.Compare(sigma, zeros_b, ComparisonDirection::kEq);
    HloInstruction* signed_mu = lb.Select(lb.Compare(alpha, zeros_b, ComparisonDirection::kGe),
                                          lb.Unary(HloOpcode::kNegate, mu), mu);
    HloInstruction* beta = lb.Select(sigma_zero, alpha, signed_mu);
    HloInstruction* tau = lb.Select(
        sigma_zero, zeros_b, lb.Binary(HloOpcode::kDivide, lb.Binary(HloOpcode::kSubtract, beta, alpha), beta));
    HloInstruction* divisor = lb.Select(sigma_zero, ones_b, lb.Binary(HloOpcode::kSubtract, alpha, beta));
    HloInstruction* v_tail = lb.Binary(HloOpcode::kDivide, tail, lb.Broadcast(divisor, {batch, m}, {0}));
    HloInstruction* v = ReflectorVector(lb, below, at_j, v_tail);
    // Columns right of j: x -= tau v (v^T x).
    HloInstruction* update = ScaledOuterProduct(lb, tau, v, BatchVectorTimes(lb, v, x));
    HloInstruction* cols = lb.Iota(kS32, {batch, m, n}, 2);
    HloInstruction* right = lb.Compare(cols, lb.Broadcast(j, {batch, m, n}), ComparisonDirection::kGt);
    HloInstruction* reflected = lb.Select(right, lb.Binary(HloOpcode::kSubtract, x, update), x);
    // Column j: R above and on the diagonal (beta), v below.
    HloInstruction* new_column =
        lb.Select(below, v_tail, lb.Select(at_j, lb.Broadcast(beta, {batch, m}, {0}), column));
    HloInstruction* next_x = lb.DynamicUpdateSlice(reflected, lb.Reshape(new_column, {batch, m, 1}), {zero, zero, j});
    HloInstruction* next_taus = lb.DynamicUpdateSlice(state[1], lb.Reshape(tau, {batch, 1}), {zero, j});
    return std::vector<HloInstruction*>{next_x, next_taus};
  };
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> loop,
      MakeCountedLoop(call->parent(), k, {a, taus}, body, call->metadata(), "householder_qr"));
  HloInstruction* a_out = b.Reshape(loop[0], a_shape.dimensions());
  HloInstruction* taus_out = b.Reshape(loop[1], call->shape().tuple_shapes(1).dimensions());
  return b.Tuple({a_out, taus_out});
}

// "ProductOfElementaryHouseholderReflectors": q = I[:, :n]; for j = k-1
// down to 0, q -= tau_j v_j (v_j^T q).
absl::StatusOr<HloInstruction*> ExpandProduct(HloInstruction* call) {
  ExpansionBuilder b(call->parent(), call->metadata());
  const Shape& a_shape = call->operand(0)->shape();
  const PrimitiveType type = a_shape.element_type();
  const int64_t rank = a_shape.rank();
  const int64_t m = a_shape.dimensions(rank - 2), n = a_shape.dimensions(rank - 1);
  const int64_t k = call->operand(1)->shape().dimensions(rank - 2);
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - 2; ++d) batch *= a_shape.dimensions(d);
  HloInstruction* a = b.Reshape(call->mutable_operand(0), {batch, m, n});
  HloInstruction* taus = b.Reshape(call->mutable_operand(1), {batch, k});
  HloInstruction* diagonal = b.Compare(b.Iota(kS32, {batch, m, n}, 1), b.Iota(kS32, {batch, m, n}, 2),
                                       ComparisonDirection::kEq);
  HloInstruction* identity = b.Select(diagonal, b.Broadcast(b.ConstantScalar(type, 1), {batch, m, n}),
                                      b.Broadcast(b.Zero(type), {batch, m, n}));
  if (k == 0) return b.Reshape(identity, call->shape().dimensions());  // no reflector: I[:, :n]
  auto body = [&](ExpansionBuilder& lb, HloInstruction* i,
                  const std::vector<HloInstruction*>& state) -> absl::StatusOr<std::vector<HloInstruction*>> {
    HloInstruction* q = state[2];
    HloInstruction* zero = lb.ConstantScalar(kS32, 0);
    HloInstruction* j = lb.Binary(HloOpcode::kSubtract, lb.ConstantScalar(kS32, k - 1), i);
    HloInstruction* rows = lb.Iota(kS32, {batch, m}, 1);
    HloInstruction* js = lb.Broadcast(j, {batch, m});
    HloInstruction* v = ReflectorVector(lb, lb.Compare(rows, js, ComparisonDirection::kGt),
                                        lb.Compare(rows, js, ComparisonDirection::kEq), Column(lb, state[0], j));
    HloInstruction* tau = lb.Reshape(lb.DynamicSlice(state[1], {zero, j}, {batch, 1}), {batch});
    HloInstruction* update = ScaledOuterProduct(lb, tau, v, BatchVectorTimes(lb, v, q));
    return std::vector<HloInstruction*>{state[0], state[1], lb.Binary(HloOpcode::kSubtract, q, update)};
  };
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> loop,
      MakeCountedLoop(call->parent(), k, {a, taus, identity}, body, call->metadata(), "householder_product"));
  return b.Reshape(loop[2], call->shape().dimensions());
}

}  // namespace

bool QrExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kCustomCall) return false;
  const std::string& target = inst->custom_call_target();
  if (target == kQrTarget) {
    return inst->operand_count() == 1 && IsRealFloatArray(inst->operand(0)->shape()) &&
           inst->operand(0)->shape().rank() >= 2 && inst->shape().IsTuple() &&
           inst->shape().tuple_shapes().size() == 2;
  }
  if (target == kProductTarget) {
    return inst->operand_count() == 2 && IsRealFloatArray(inst->operand(0)->shape()) &&
           IsRealFloatArray(inst->operand(1)->shape()) && inst->operand(0)->shape().rank() >= 2 &&
           inst->shape().IsArray();
  }
  return false;
}

absl::StatusOr<HloInstruction*> QrExpander::ExpandInstruction(HloInstruction* call) {
  const Shape& a = call->operand(0)->shape();
  const int64_t rank = a.rank();
  const int64_t m = a.dimensions(rank - 2), n = a.dimensions(rank - 1);
  if (call->custom_call_target() == kQrTarget) {
    const Shape& taus = call->shape().tuple_shapes(1);
    std::vector<int64_t> want_taus(a.dimensions().begin(), a.dimensions().end() - 2);
    want_taus.push_back(std::min(m, n));
    if (!call->shape().tuple_shapes(0).Compatible(a) || !taus.IsArray() || taus.dimensions() != want_taus) {
      return absl::InvalidArgumentError(StrCat("qr_expander: ", call->name(), ": \"Qr\" of ", a.ToString(),
                                               " must return (", a.ToString(), ", taus[..., min(m, n)]), not ",
                                               call->shape().ToString()));
    }
    return ExpandQr(call);
  }
  const Shape& taus = call->operand(1)->shape();
  if (!call->shape().Compatible(a) || taus.rank() != rank - 1 || n > m || taus.dimensions(rank - 2) > n) {
    return absl::InvalidArgumentError(StrCat("qr_expander: ", call->name(), ": \"", kProductTarget,
                                             "\" needs a[..., m, n] with m >= n, taus[..., k] with k <= n and "
                                             "a result shaped like a; got ",
                                             a.ToString(), ", ", taus.ToString(), " -> ", call->shape().ToString()));
  }
  return ExpandProduct(call);
}

}  // namespace passlab
