// AlgebraicSimplifier rules over dot, in the order XLA's HandleDot tries them
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc): zero-sized dots,
// dots without contraction as multiplies, and strength reduction of dots
// where one side has only batch and contracting dims to multiply + reduce;
// and HandleConvolution's scalar multiply reduction.
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/verify/shape_inference.h"
#include "passes/libcall/conv_rewriter.h"
#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

// XLA's SupportedDotPrecisionConfig: no algorithm, or plain f32; the GPU
// simplifier (gpu_compute_capability set; xla/backends/gpu/transforms/
// algebraic_simplifier.cc) also takes the bf16 and tf32 algorithms of dots
// with contracting dims, whose multiply MakeMultiply builds as XLA's
// DotAlgorithmRewriter does.
bool SupportedPrecision(const HloInstruction* dot, bool has_contracting_dim, const RuleContext& ctx) {
  const std::string& a = dot->attrs().precision_config.algorithm;
  if (a.empty() || a == "dot_f32_f32_f32") return true;
  if (ctx.options().gpu_compute_capability.empty() || !has_contracting_dim) return false;
  return a == "dot_bf16_bf16_f32" || a == "dot_bf16_bf16_f32_x3" || a == "dot_bf16_bf16_f32_x6" ||
         a == "dot_bf16_bf16_f32_x9" || a == "dot_tf32_tf32_f32" || a == "dot_tf32_tf32_f32_x3";
}

Shape WithType(const Shape& s, PrimitiveType t) {
  Shape r = s;
  r.set_element_type(t);
  return r;
}

HloInstruction* ConvertTo(HloInstruction* x, PrimitiveType t, RuleContext& ctx) {
  return ctx.Add(HloInstruction::CreateConvert(WithType(x->shape(), t), x));
}

// f32 with the low mantissa bits cleared (0xFFFF0000: bf16's precision;
// 0xFFFFE000: tf32's), through u32 bits.
HloInstruction* Truncate(HloInstruction* x, uint32_t mask, RuleContext& ctx) {
  const Shape u32 = WithType(x->shape(), PrimitiveType::kU32);
  HloInstruction* bits = ctx.Add(HloInstruction::Create(HloOpcode::kBitcastConvert, u32, {x}));
  Literal m(Shape::Scalar(PrimitiveType::kU32));
  m.SetInt(0, mask);
  HloInstruction* masks =
      ctx.Add(HloInstruction::CreateBroadcast(u32, ctx.Add(HloInstruction::CreateConstant(std::move(m))), {}));
  HloInstruction* kept = ctx.Add(HloInstruction::CreateBinary(u32, O::kAnd, bits, masks));
  return ctx.Add(HloInstruction::Create(HloOpcode::kBitcastConvert, x->shape(), {kept}));
}

// x split into n bf16 parts (high first) whose sum is x: each part is the
// remainder truncated to bf16's precision, the last rounded.
std::vector<HloInstruction*> SplitToBf16(HloInstruction* x, int n, RuleContext& ctx) {
  std::vector<HloInstruction*> parts;
  HloInstruction* rest = x;
  for (int k = 0; k + 1 < n; ++k) {
    HloInstruction* high = Truncate(rest, 0xFFFF0000u, ctx);
    parts.push_back(ConvertTo(high, PrimitiveType::kBF16, ctx));
    rest = ctx.Binary(O::kSubtract, rest, high);
  }
  parts.push_back(ConvertTo(rest, PrimitiveType::kBF16, ctx));
  return parts;
}

HloInstruction* SumToF32(HloInstruction* a, HloInstruction* b, RuleContext& ctx) {
  auto f32 = [&](HloInstruction* x) {
    return x->shape().element_type() == PrimitiveType::kF32 ? x : ConvertTo(x, PrimitiveType::kF32, ctx);
  };
  HloInstruction* fa = f32(a);
  return ctx.Add(HloInstruction::CreateBinary(fa->shape(), O::kAdd, fa, f32(b)));
}

// The small partial products' sum, zero where it is not finite (1 * inf
// splits into inf * 1 + inf * 0 = NaN otherwise).
HloInstruction* ZeroNonFinite(HloInstruction* x, RuleContext& ctx) {
  HloInstruction* inf = ctx.Constant(x->shape(), std::numeric_limits<double>::infinity());
  HloInstruction* abs = ctx.Add(HloInstruction::CreateUnary(x->shape(), O::kAbs, x));
  HloInstruction* finite = ctx.Add(HloInstruction::CreateCompare(WithType(x->shape(), PrimitiveType::kPred), inf, abs,
                                                                 ComparisonDirection::kGe));
  return ctx.Add(HloInstruction::CreateTernary(x->shape(), O::kSelect, finite, x, ctx.Constant(x->shape(), 0)));
}

// XLA's MakeMultiplyForDotPrecisionAlgorithm (xla/service/gpu/matmul_utils.cc
// with DotAlgorithmRewriter): the elementwise product the dot's algorithm
// computes. bf16_bf16_f32: one product of the bf16-rounded operands; _x3,
// _x6, _x9: 2 or 3 bf16 parts per operand and the 3, 6 or 9 largest partial
// products summed in f32 smallest first; tf32: the operands truncated to
// tf32 (_x3: high/low parts as for bf16). Any other algorithm: a multiply.
HloInstruction* MakeMultiply(const HloInstruction* dot, HloInstruction* lhs, HloInstruction* rhs, RuleContext& ctx) {
  const std::string& a = dot->attrs().precision_config.algorithm;
  const bool f32_operands = lhs->shape().element_type() == PrimitiveType::kF32 &&
                            rhs->shape().element_type() == PrimitiveType::kF32;
  auto mult = [&](HloInstruction* x, HloInstruction* y) { return ctx.Binary(O::kMultiply, x, y); };
  if (a == "dot_bf16_bf16_f32") {
    auto bf16 = [&](HloInstruction* x) {
      return x->shape().element_type() == PrimitiveType::kBF16 ? x : ConvertTo(x, PrimitiveType::kBF16, ctx);
    };
    return ConvertTo(mult(bf16(lhs), bf16(rhs)), PrimitiveType::kF32, ctx);
  }
  if (f32_operands && (a == "dot_bf16_bf16_f32_x3" || a == "dot_bf16_bf16_f32_x6" || a == "dot_bf16_bf16_f32_x9")) {
    const int n = a == "dot_bf16_bf16_f32_x3" ? 2 : 3;
    std::vector<HloInstruction*> l = SplitToBf16(lhs, n, ctx);
    std::vector<HloInstruction*> r = SplitToBf16(rhs, n, ctx);
    // Partial products (i, j) of parts i of lhs and j of rhs (0 = high), in
    // XLA's order of summation; high*high is added last.
    std::vector<std::pair<int, int>> order;
    if (a == "dot_bf16_bf16_f32_x3") order = {{1, 0}, {0, 1}};
    if (a == "dot_bf16_bf16_f32_x6") order = {{1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}};
    if (a == "dot_bf16_bf16_f32_x9") order = {{2, 2}, {2, 1}, {1, 2}, {1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}};
    HloInstruction* sum = SumToF32(mult(l[order[0].first], r[order[0].second]),
                                   mult(l[order[1].first], r[order[1].second]), ctx);
    for (size_t k = 2; k < order.size(); ++k) sum = SumToF32(sum, mult(l[order[k].first], r[order[k].second]), ctx);
    return SumToF32(ZeroNonFinite(sum, ctx), mult(l[0], r[0]), ctx);
  }
  if (f32_operands && a == "dot_tf32_tf32_f32") {
    return mult(Truncate(lhs, 0xFFFFE000u, ctx), Truncate(rhs, 0xFFFFE000u, ctx));
  }
  if (f32_operands && a == "dot_tf32_tf32_f32_x3") {
    HloInstruction* lh = Truncate(lhs, 0xFFFFE000u, ctx);
    HloInstruction* rh = Truncate(rhs, 0xFFFFE000u, ctx);
    HloInstruction* ll = ctx.Binary(O::kSubtract, lhs, lh);
    HloInstruction* rl = ctx.Binary(O::kSubtract, rhs, rh);
    HloInstruction* low = SumToF32(mult(ll, rh), mult(lh, rl), ctx);
    return SumToF32(ZeroNonFinite(low, ctx), mult(lh, rh), ctx);
  }
  return mult(lhs, rhs);
}

// A dot that XLA's HandleDot leaves alone after the multiply rewrite: one
// whose only user is a "Sharding" custom call marked unreduced.
bool FeedsUnreducedSharding(const HloInstruction* dot) {
  if (dot->user_count() != 1) return false;
  const HloInstruction* u = dot->users().front();
  if (u->opcode() != O::kCustomCall || u->custom_call_target() != "Sharding") return false;
  if (u->has_sharding() && u->sharding().ToString().find("unreduced") != std::string::npos) return true;
  for (const auto& [k, v] : u->frontend_attributes().map) {
    if (k == "xla.sdy.sharding" && v.find("unreduced") != std::string::npos) return true;
  }
  return false;
}

// Transposes `x` so its batch dims come first and contracting dims last.
HloInstruction* BatchMajorContractingMinor(HloInstruction* x, const std::vector<int64_t>& batch,
                                           const std::vector<int64_t>& contracting, RuleContext& ctx) {
  std::vector<int64_t> perm = batch;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) perm.push_back(d);
  }
  perm.insert(perm.end(), contracting.begin(), contracting.end());
  if (std::is_sorted(perm.begin(), perm.end())) return x;
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(x->shape().dimensions(p));
  return ctx.Add(HloInstruction::CreateTranspose(Shape(x->shape().element_type(), dims), x, perm));
}

HloInstruction* AsType(HloInstruction* x, PrimitiveType t, RuleContext& ctx) {
  if (x->shape().element_type() == t) return x;
  Shape s = x->shape();
  s.set_element_type(t);
  return ctx.Add(HloInstruction::CreateConvert(s, x));
}


enum class Reorder { kNone, kRewritten, kStop };

// XLA's AssociativeReorderNestedDot: (A.B).C => A.(B.C) or A.(B.C) =>
// (A.B).C when that cuts the flops by the threshold; kStop when the outer dot
// contracts a batch dim of the inner one.
Reorder ReorderNestedDot(HloInstruction* dot, RuleContext& ctx, HloInstruction** result, bool dry_run = false) {
  HloInstruction* lhs = Op(dot, 0);
  HloInstruction* rhs = Op(dot, 1);
  bool outer_lhs_dot = lhs->opcode() == O::kDot;
  bool outer_rhs_dot = !outer_lhs_dot && rhs->opcode() == O::kDot;
  if (!outer_lhs_dot && !outer_rhs_dot) return Reorder::kNone;
  HloInstruction* outer = dot;
  HloInstruction* inner = outer_lhs_dot ? lhs : rhs;
  if (!inner->attrs().sparsity.empty()) return Reorder::kNone;
  DotDimensionNumbers ab, ac, bc;
  if (outer_lhs_dot) {
    ab = inner->attrs().dot_dnums;
  } else {
    bc = inner->attrs().dot_dnums;
  }
  auto [map_inner_lhs, map_inner_rhs] = FromDotMaps(inner, inner->operand(0)->shape(), inner->operand(1)->shape());
  const DotDimensionNumbers& od = outer->attrs().dot_dnums;
  auto add_batch = [](DotDimensionNumbers& d, int64_t l, int64_t r) {
    d.lhs_batch_dimensions.push_back(l);
    d.rhs_batch_dimensions.push_back(r);
  };
  for (size_t k = 0; k < od.lhs_batch_dimensions.size(); ++k) {
    int64_t inner_index = outer_lhs_dot ? od.lhs_batch_dimensions[k] : od.rhs_batch_dimensions[k];
    int64_t other_index = outer_lhs_dot ? od.rhs_batch_dimensions[k] : od.lhs_batch_dimensions[k];
    for (int side = 0; side < 2; ++side) {
      const std::vector<int64_t>& map = side == 0 ? map_inner_lhs : map_inner_rhs;
      int64_t mapped = map[inner_index];
      if (mapped == -1) continue;
      if (outer_lhs_dot) {
        add_batch(side == 0 ? ac : bc, mapped, other_index);
      } else {
        add_batch(side == 0 ? ab : ac, other_index, mapped);
      }
    }
  }
  for (size_t k = 0; k < od.lhs_contracting_dimensions.size(); ++k) {
    int64_t inner_index = outer_lhs_dot ? od.lhs_contracting_dimensions[k] : od.rhs_contracting_dimensions[k];
    int64_t other_index = outer_lhs_dot ? od.rhs_contracting_dimensions[k] : od.lhs_contracting_dimensions[k];
    bool from_lhs = map_inner_lhs[inner_index] != -1;
    bool from_rhs = map_inner_rhs[inner_index] != -1;
    if (from_lhs && from_rhs) return Reorder::kStop;
    const std::vector<int64_t>& map = from_lhs ? map_inner_lhs : map_inner_rhs;
    int64_t li = outer_lhs_dot ? map[inner_index] : other_index;
    int64_t ri = outer_lhs_dot ? other_index : map[inner_index];
    DotDimensionNumbers* d = outer_lhs_dot ? (from_lhs ? &ac : &bc) : (from_lhs ? &ab : &ac);
    d->lhs_contracting_dimensions.push_back(li);
    d->rhs_contracting_dimensions.push_back(ri);
  }
  if (dry_run) return Reorder::kNone;
  HloInstruction* new_inner_lhs = outer_lhs_dot ? Op(inner, 1) : Op(outer, 0);
  HloInstruction* new_inner_rhs = outer_lhs_dot ? Op(outer, 1) : Op(inner, 0);
  DotDimensionNumbers new_inner_d = outer_lhs_dot ? bc : ab;
  auto [map_lhs_new_inner, map_rhs_new_inner] = ToDotMaps(new_inner_d, new_inner_lhs->shape(), new_inner_rhs->shape());
  DotDimensionNumbers new_outer_d;
  std::vector<DotDimensionNumbers> to_reorder = outer_lhs_dot ? std::vector<DotDimensionNumbers>{ab, ac}
                                                              : std::vector<DotDimensionNumbers>{ac, bc};
  for (int pair = 0; pair < 2; ++pair) {
    const DotDimensionNumbers& d = to_reorder[pair];
    const std::vector<int64_t>& map = pair == 0 ? map_lhs_new_inner : map_rhs_new_inner;
    for (size_t k = 0; k < d.lhs_batch_dimensions.size(); ++k) {
      int64_t ni = outer_lhs_dot ? d.rhs_batch_dimensions[k] : d.lhs_batch_dimensions[k];
      int64_t oi = outer_lhs_dot ? d.lhs_batch_dimensions[k] : d.rhs_batch_dimensions[k];
      int64_t li = outer_lhs_dot ? oi : map[ni];
      int64_t ri = outer_lhs_dot ? map[ni] : oi;
      if (!Contains(new_outer_d.lhs_batch_dimensions, li)) add_batch(new_outer_d, li, ri);
    }
    for (size_t k = 0; k < d.lhs_contracting_dimensions.size(); ++k) {
      int64_t ni = outer_lhs_dot ? d.rhs_contracting_dimensions[k] : d.lhs_contracting_dimensions[k];
      int64_t oi = outer_lhs_dot ? d.lhs_contracting_dimensions[k] : d.rhs_contracting_dimensions[k];
      new_outer_d.lhs_contracting_dimensions.push_back(outer_lhs_dot ? oi : map[ni]);
      new_outer_d.rhs_contracting_dimensions.push_back(outer_lhs_dot ? map[ni] : oi);
    }
  }
  absl::StatusOr<Shape> new_inner_shape =
      InferDotShape(new_inner_lhs->shape(), new_inner_rhs->shape(), new_inner_d, new_inner_lhs->shape().element_type());
  if (!new_inner_shape.ok()) return Reorder::kNone;
  Shape new_outer_lhs_shape = outer_lhs_dot ? inner->operand(0)->shape() : *new_inner_shape;
  int64_t old_flops = DotFlops(inner->operand(0)->shape(), inner->shape(), inner->attrs().dot_dnums) +
                      DotFlops(outer->operand(0)->shape(), outer->shape(), od);
  int64_t new_flops = DotFlops(new_inner_lhs->shape(), *new_inner_shape, new_inner_d) +
                      DotFlops(new_outer_lhs_shape, outer->shape(), new_outer_d);
  if (!(old_flops / static_cast<double>(new_flops) > ctx.options().associative_reordering_threshold)) {
    return Reorder::kNone;
  }
  HloInstruction* new_inner = MakeDot(new_inner_lhs, new_inner_rhs, new_inner_d, dot, ctx);
  if (new_inner == nullptr) return Reorder::kNone;
  HloInstruction* nol = outer_lhs_dot ? Op(inner, 0) : new_inner;
  HloInstruction* nor = outer_lhs_dot ? new_inner : Op(inner, 1);
  HloInstruction* new_outer = MakeDot(nol, nor, new_outer_d, dot, ctx);
  if (new_outer == nullptr) return Reorder::kNone;
  auto [map_outer_lhs, map_outer_rhs] = FromDotMaps(outer, outer->operand(0)->shape(), outer->operand(1)->shape());
  const std::vector<int64_t>& map_outer_inner = outer_lhs_dot ? map_outer_lhs : map_outer_rhs;
  const std::vector<int64_t>& map_outer_other = outer_lhs_dot ? map_outer_rhs : map_outer_lhs;
  const std::vector<int64_t>& map_inner_new_other = outer_lhs_dot ? map_inner_lhs : map_inner_rhs;
  const std::vector<int64_t>& map_other_new_inner = outer_lhs_dot ? map_rhs_new_inner : map_lhs_new_inner;
  auto [map_lhs_new_outer, map_rhs_new_outer] =
      ToDotMaps(new_outer_d, new_outer->operand(0)->shape(), new_outer->operand(1)->shape());
  const std::vector<int64_t>& map_new_inner_new_outer = outer_lhs_dot ? map_rhs_new_outer : map_lhs_new_outer;
  const std::vector<int64_t>& map_new_other_new_outer = outer_lhs_dot ? map_lhs_new_outer : map_rhs_new_outer;
  std::vector<int64_t> perm(new_outer->shape().rank());
  bool transpose = false;
  for (int64_t k = 0; k < outer->shape().rank(); ++k) {
    int64_t idx;
    if (map_outer_other[k] == -1) {
      int64_t inner_index = map_outer_inner[k];
      if (map_inner_new_other[inner_index] == -1) {
        int64_t nii = outer_lhs_dot ? map_lhs_new_inner[map_inner_rhs[inner_index]]
                                    : map_rhs_new_inner[map_inner_lhs[inner_index]];
        idx = map_new_inner_new_outer[nii];
      } else {
        idx = map_new_other_new_outer[map_inner_new_other[inner_index]];
      }
    } else {
      idx = map_new_inner_new_outer[map_other_new_inner[map_outer_other[k]]];
    }
    perm[k] = idx;
    transpose |= idx != k;
  }
  *result = transpose ? ctx.Add(HloInstruction::CreateTranspose(dot->shape(), new_outer, perm)) : new_outer;
  return Reorder::kRewritten;
}

// XLA's AssociativeReorderDotOperator: dot(reverse/pad/broadcast(A), B)
// => dot(A, reverse/slice/reduce(B)) when that cuts the flops.
HloInstruction* ReorderDotOperator(HloInstruction* dot, RuleContext& ctx) {
  const DotDimensionNumbers& d = dot->attrs().dot_dnums;
  HloInstruction* lhs = Op(dot, 0);
  HloInstruction* rhs = Op(dot, 1);
  auto movable = [](const HloInstruction* x) {
    return x->opcode() == O::kBroadcast || x->opcode() == O::kPad || x->opcode() == O::kReverse;
  };
  bool lhs_to_rhs = movable(lhs);
  bool rhs_to_lhs = !lhs_to_rhs && movable(rhs);
  if (!lhs_to_rhs && !rhs_to_lhs) return nullptr;
  HloInstruction* from = lhs_to_rhs ? lhs : rhs;
  HloInstruction* to = lhs_to_rhs ? rhs : lhs;
  HloInstruction* reordered = to;
  HloInstruction* unreordered = Op(from, 0);
  DotDimensionNumbers nd = d;
  double multiplier = 1.0;
  bool make = false;
  std::vector<int64_t> fwd(from->shape().rank(), -1), bwd(to->shape().rank(), -1);
  for (size_t k = 0; k < d.lhs_contracting_dimensions.size(); ++k) {
    int64_t fi = lhs_to_rhs ? d.lhs_contracting_dimensions[k] : d.rhs_contracting_dimensions[k];
    int64_t ti = lhs_to_rhs ? d.rhs_contracting_dimensions[k] : d.lhs_contracting_dimensions[k];
    fwd[fi] = ti;
    bwd[ti] = fi;
  }
  double threshold = ctx.options().associative_reordering_threshold;
  if (from->opcode() == O::kReverse) {
    if (from->shape().element_count() / static_cast<double>(to->shape().element_count()) < threshold) return nullptr;
    std::vector<int64_t> rdims, udims;
    for (int64_t k : from->dimensions()) {
      if (fwd[k] != -1) {
        rdims.push_back(fwd[k]);
        make = true;
      } else {
        udims.push_back(k);
      }
    }
    if (!make) return nullptr;
    reordered = ctx.Add(HloInstruction::CreateReverse(to->shape(), to, rdims));
    if (!udims.empty()) {
      multiplier = 2.0;
      unreordered = ctx.Add(HloInstruction::CreateReverse(Op(from, 0)->shape(), Op(from, 0), udims));
    }
  } else if (from->opcode() == O::kPad) {
    std::vector<SliceDimension> sl;
    PaddingConfig npc = from->attrs().padding_config;
    std::vector<int64_t> dims;
    for (int64_t t = 0; t < to->shape().rank(); ++t) {
      SliceDimension s{0, to->shape().dimensions(t), 1};
      if (bwd[t] != -1) {
        const PaddingDimension& p = from->attrs().padding_config.dimensions[bwd[t]];
        if (p.edge_padding_low > 0 || p.edge_padding_high > 0 || p.interior_padding > 0) {
          make = true;
          s.start += p.edge_padding_low;
          s.limit -= p.edge_padding_high;
          s.stride += p.interior_padding;
          npc.dimensions[bwd[t]] = PaddingDimension{};
        }
      }
      sl.push_back(s);
      dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
    }
    if (!make) return nullptr;
    reordered = ctx.Add(HloInstruction::CreateSlice(Shape(to->shape().element_type(), dims), to, sl));
    for (const PaddingDimension& p : npc.dimensions) {
      if (p.edge_padding_low != 0 || p.edge_padding_high != 0) {
        multiplier = 2.0;
        HloInstruction* a = Op(from, 0);
        std::vector<int64_t> pdims;
        for (int64_t k = 0; k < a->shape().rank(); ++k) {
          const PaddingDimension& q = npc.dimensions[k];
          int64_t n = a->shape().dimensions(k);
          pdims.push_back(q.edge_padding_low + q.edge_padding_high + n + std::max<int64_t>(n - 1, 0) * q.interior_padding);
        }
        unreordered = ctx.Add(HloInstruction::CreatePad(Shape(a->shape().element_type(), pdims), a, Op(from, 1), npc));
        break;
      }
    }
  } else {  // broadcast
    const int64_t pre = Op(from, 0)->shape().rank();
    std::vector<int64_t> bmap(from->shape().rank(), -1);
    for (int64_t k = 0; k < pre; ++k) bmap[from->dimensions(k)] = k;
    nd.lhs_contracting_dimensions.clear();
    nd.rhs_contracting_dimensions.clear();
    std::vector<int64_t> reduce_dims, kept_dims;
    std::vector<int64_t> deleted;
    for (size_t k = 0; k < d.lhs_contracting_dimensions.size(); ++k) {
      int64_t fi = lhs_to_rhs ? d.lhs_contracting_dimensions[k] : d.rhs_contracting_dimensions[k];
      int64_t ti = lhs_to_rhs ? d.rhs_contracting_dimensions[k] : d.lhs_contracting_dimensions[k];
      if (bmap[fi] == -1) {
        reduce_dims.push_back(ti);
        deleted.push_back(fi);
        make = true;
      } else {
        nd.lhs_contracting_dimensions.push_back(lhs_to_rhs ? bmap[fi] : ti);
        nd.rhs_contracting_dimensions.push_back(lhs_to_rhs ? ti : bmap[fi]);
      }
    }
    if (!make) return nullptr;
    std::vector<int64_t> nbshape;
    for (int64_t k = 0; k < from->shape().rank(); ++k) {
      if (!Contains(deleted, k)) nbshape.push_back(from->shape().dimensions(k));
    }
    Shape new_bcast(from->shape().element_type(), nbshape);
    if (!(Op(from, 0)->shape().Compatible(new_bcast))) {
      multiplier = 2.0;
      // The broadcast's dims, renumbered without the deleted ones.
      std::vector<int64_t> bd;
      for (int64_t x : from->dimensions()) {
        int64_t shift = 0;
        for (int64_t del : deleted) shift += del < x ? 1 : 0;
        bd.push_back(x - shift);
      }
      unreordered = ctx.Add(HloInstruction::CreateBroadcast(new_bcast, Op(from, 0), bd));
    }
    PrimitiveType t = to->shape().element_type();
    HloInstruction* zero = ctx.Add(HloInstruction::CreateConstant(Literal(Shape::Scalar(from->shape().element_type()))));
    std::vector<int64_t> rdims;
    for (int64_t k = 0; k < to->shape().rank(); ++k) {
      if (!Contains(reduce_dims, k)) rdims.push_back(to->shape().dimensions(k));
    }
    std::vector<int64_t> sorted_reduce = reduce_dims;
    std::sort(sorted_reduce.begin(), sorted_reduce.end());
    reordered = ctx.Add(HloInstruction::CreateReduce(Shape(t, rdims), {to}, {zero}, sorted_reduce, ctx.ScalarReducer(O::kAdd, t)));
  }
  HloInstruction* nl = lhs_to_rhs ? unreordered : reordered;
  HloInstruction* nr = lhs_to_rhs ? reordered : unreordered;
  HloInstruction* new_dot = MakeDot(nl, nr, nd, dot, ctx);
  if (new_dot == nullptr) return nullptr;
  int64_t old_flops = DotFlops(lhs->shape(), dot->shape(), d);
  int64_t new_flops = DotFlops(nl->shape(), new_dot->shape(), nd);
  bool reorder = old_flops / static_cast<double>(new_flops) > multiplier * threshold;
  if (reorder || from->opcode() == O::kReverse) return new_dot;
  return nullptr;
}

bool StopsDotRewrites(HloInstruction* dot, RuleContext& ctx) {
  if (ctx.options().is_layout_sensitive || FeedsUnreducedSharding(dot) || !dot->attrs().sparsity.empty()) return true;
  if (!ctx.options().use_associative_reordering) return false;
  // A nested dot the reordering gave up on stops every later dot rewrite.
  HloInstruction* unused = nullptr;
  return ReorderNestedDot(dot, ctx, &unused, /*dry_run=*/true) == Reorder::kStop;
}

void DotRulesInto(std::vector<Rule>& rules) {
  // dot of (or to) zero elements => broadcast(0)
  rules.push_back(R(O::kDot, "zero-element dot => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (ctx.options().is_layout_sensitive) return nullptr;
    if (i->shape().element_count() != 0 && Op(i, 0)->shape().element_count() != 0 && Op(i, 1)->shape().element_count() != 0) {
      return nullptr;
    }
    return ctx.ScalarLike(i, 0);
  }));
  // dot without contracting dims => multiply of broadcasts
  rules.push_back(R(O::kDot, "dot without contraction => multiply", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const DotDimensionNumbers& d = i->attrs().dot_dnums;
    if (ctx.options().is_layout_sensitive || !i->attrs().sparsity.empty() || !SupportedPrecision(i, false, ctx) ||
        !ctx.options().enable_dot_to_multiply_rewrite || !d.lhs_contracting_dimensions.empty()) {
      return nullptr;
    }
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    PrimitiveType t = i->shape().element_type();
    HloInstruction* nl = AsType(BatchMajorContractingMinor(lhs, d.lhs_batch_dimensions, d.lhs_contracting_dimensions, ctx), t, ctx);
    HloInstruction* nr = AsType(BatchMajorContractingMinor(rhs, d.rhs_batch_dimensions, d.rhs_contracting_dimensions, ctx), t, ctx);
    if (i->shape().rank() != lhs->shape().rank()) {
      std::vector<int64_t> dims(lhs->shape().rank());
      std::iota(dims.begin(), dims.end(), 0);
      nl = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), nl, dims));
    }
    if (i->shape().rank() != rhs->shape().rank()) {
      std::vector<int64_t> dims(d.lhs_batch_dimensions.size());
      std::iota(dims.begin(), dims.end(), 0);
      for (int64_t k = lhs->shape().rank(); k < i->shape().rank(); ++k) dims.push_back(k);
      nr = ctx.Add(HloInstruction::CreateBroadcast(i->shape(), nr, dims));
    }
    return ctx.Add(HloInstruction::CreateBinary(i->shape(), O::kMultiply, nl, nr));
  }));
  // (A.B).C => A.(B.C) and the mirror, when that cuts the flops
  rules.push_back(R(O::kDot, "dot chain reassociation", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().use_associative_reordering || ctx.options().is_layout_sensitive || FeedsUnreducedSharding(i) ||
        !i->attrs().sparsity.empty()) {
      return nullptr;
    }
    HloInstruction* result = nullptr;
    return ReorderNestedDot(i, ctx, &result) == Reorder::kRewritten ? result : nullptr;
  }));
  // dot(reverse/pad/broadcast(A), B) => dot(A, reverse/slice/reduce(B))
  rules.push_back(R(O::kDot, "dot operator reassociation", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().use_associative_reordering || StopsDotRewrites(i, ctx)) return nullptr;
    return ReorderDotOperator(i, ctx);
  }));
  // dot where one side has only batch and contracting dims => reduce(multiply)
  rules.push_back(R(O::kDot, "dot with a vector side => reduce(multiply)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const DotDimensionNumbers& d = i->attrs().dot_dnums;
    if (StopsDotRewrites(i, ctx) || !SupportedPrecision(i, true, ctx) || !ctx.options().enable_dot_strength_reduction) {
      return nullptr;
    }
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    int64_t nc = static_cast<int64_t>(d.lhs_contracting_dimensions.size());
    int64_t lhs_outer = lhs->shape().rank() - nb - nc;
    int64_t rhs_outer = rhs->shape().rank() - nb - static_cast<int64_t>(d.rhs_contracting_dimensions.size());
    if (lhs_outer != 0 && rhs_outer != 0) return nullptr;
    // On CPU only dots of batch and contracting dims alone are reduced.
    if (ctx.options().executing_on_cpu && (lhs_outer != 0 || rhs_outer != 0)) return nullptr;
    PrimitiveType t = i->shape().element_type();
    HloInstruction* nl = AsType(BatchMajorContractingMinor(lhs, d.lhs_batch_dimensions, d.lhs_contracting_dimensions, ctx), t, ctx);
    HloInstruction* nr = AsType(BatchMajorContractingMinor(rhs, d.rhs_batch_dimensions, d.rhs_contracting_dimensions, ctx), t, ctx);
    if (rhs_outer > 0) {
      std::vector<int64_t> dims(lhs->shape().rank());
      std::iota(dims.begin(), dims.begin() + nb, 0);
      std::iota(dims.begin() + nb, dims.end(), nb + rhs_outer);
      nl = ctx.Add(HloInstruction::CreateBroadcast(nr->shape(), nl, dims));
    } else if (lhs_outer > 0) {
      std::vector<int64_t> dims(rhs->shape().rank());
      std::iota(dims.begin(), dims.begin() + nb, 0);
      std::iota(dims.begin() + nb, dims.end(), nb + lhs_outer);
      nr = ctx.Add(HloInstruction::CreateBroadcast(nl->shape(), nr, dims));
    }
    HloInstruction* product = MakeMultiply(i, nl, nr, ctx);
    PrimitiveType acc = IsFloatingPointType(t) ? (t == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32) : t;
    product = AsType(product, acc, ctx);
    std::vector<int64_t> reduce_dims(nc);
    std::iota(reduce_dims.begin(), reduce_dims.end(), std::max(lhs_outer, rhs_outer) + nb);
    std::vector<int64_t> kept;
    for (int64_t k = 0; k < product->shape().rank(); ++k) {
      if (!Contains(reduce_dims, k)) kept.push_back(product->shape().dimensions(k));
    }
    HloInstruction* zero = ctx.Add(HloInstruction::CreateConstant(Literal(Shape::Scalar(acc))));
    HloInstruction* sum = ctx.Add(HloInstruction::CreateReduce(Shape(acc, kept), {product}, {zero}, reduce_dims,
                                                               ctx.ScalarReducer(O::kAdd, acc)));
    return AsType(sum, t, ctx);
  }));
  // slice(dot(A, B)) => dot(slice(A), slice(B)) (raise_slice_and_reduce_through_dot)
  rules.push_back(R(O::kSlice, "slice(dot) => dot(slice, slice)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* dot = Op(i, 0);
    if (ctx.options().is_layout_sensitive || !ctx.options().raise_slice_and_reduce_through_dot || dot->opcode() != O::kDot ||
        !dot->attrs().sparsity.empty()) {
      return nullptr;
    }
    const DotDimensionNumbers& d = dot->attrs().dot_dnums;
    HloInstruction* lhs = Op(dot, 0);
    HloInstruction* rhs = Op(dot, 1);
    auto [map_lhs, map_rhs] = ToDotMaps(d, lhs->shape(), rhs->shape());
    auto slice_side = [&](HloInstruction* x, const std::vector<int64_t>& map) -> HloInstruction* {
      std::vector<SliceDimension> sl;
      std::vector<int64_t> dims;
      bool any = false;
      for (int64_t k = 0; k < x->shape().rank(); ++k) {
        int64_t size = x->shape().dimensions(k);
        int64_t m = map[k];
        SliceDimension s = m >= 0 ? i->attrs().slice[m] : SliceDimension{0, size, 1};
        any |= s.start != 0 || s.limit < size || s.stride != 1;
        sl.push_back(s);
        dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
      }
      if (!any) return x;
      return ctx.Add(HloInstruction::CreateSlice(Shape(x->shape().element_type(), dims), x, sl));
    };
    HloInstruction* nl = slice_side(lhs, map_lhs);
    HloInstruction* nr = slice_side(rhs, map_rhs);
    HloInstruction* nd = MakeDot(nl, nr, d, dot, ctx);
    if (nd == nullptr) return nullptr;
    auto true_rank = [](const Shape& s) {
      int64_t n = 0;
      for (int64_t v : s.dimensions()) n += v != 1 ? 1 : 0;
      return n;
    };
    bool one_side_only = static_cast<int64_t>(d.lhs_batch_dimensions.size() + d.lhs_contracting_dimensions.size()) == true_rank(nl->shape()) ||
                         static_cast<int64_t>(d.rhs_batch_dimensions.size() + d.rhs_contracting_dimensions.size()) == true_rank(nr->shape());
    return one_side_only ? nullptr : nd;
  }));
  // dot(reshape(transpose(A)), C) contracting the reshaped dims, C constant
  // => dot(reshape(A), reshape(transpose(reshape(C)))): the reordering moves
  // to the constant side, where constant folding removes it
  rules.push_back(R(O::kDot, "dot(reshape(transpose(A)), C) => dot(reshape(A), C')", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (StopsDotRewrites(i, ctx)) return nullptr;
    const DotDimensionNumbers& dn = i->attrs().dot_dnums;
    std::vector<int64_t> lcd = dn.lhs_contracting_dimensions, rcd = dn.rhs_contracting_dimensions;
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    bool swapped = lhs->opcode() == O::kConstant;
    if (swapped) {
      std::swap(lhs, rhs);
      std::swap(lcd, rcd);
    }
    if (dn.lhs_contracting_dimensions.size() != 1) return nullptr;
    if (lhs->opcode() != O::kReshape || Op(lhs, 0)->opcode() != O::kTranspose || rhs->opcode() != O::kConstant) return nullptr;
    HloInstruction* reshape = lhs;
    HloInstruction* transpose = Op(reshape, 0);
    HloInstruction* input = Op(transpose, 0);
    HloInstruction* constant = rhs;
    auto unmodified = DimensionsUnmodifiedByReshape(transpose->shape(), reshape->shape());
    if (static_cast<int64_t>(unmodified.size()) != reshape->shape().rank() - 1) return nullptr;
    for (auto [f, t] : unmodified) {
      if (t == lcd[0]) return nullptr;
    }
    std::vector<int64_t> kept;
    for (auto [f, t] : unmodified) kept.push_back(f);
    lcd.clear();
    for (int64_t k = 0; k < transpose->shape().rank(); ++k) {
      if (!Contains(kept, k)) lcd.push_back(k);
    }
    for (size_t k = 1; k < lcd.size(); ++k) {
      if (lcd[k] != lcd[k - 1] + 1) return nullptr;
    }
    if (lcd.empty()) return nullptr;
    const std::vector<int64_t>& tdims = transpose->dimensions();
    for (int64_t k = 0; k < static_cast<int64_t>(tdims.size()); ++k) {
      if (tdims[k] != k && !Contains(lcd, k)) return nullptr;
    }
    std::vector<int64_t> perm;
    for (int64_t d : lcd) perm.push_back(tdims[d] - lcd[0]);
    std::vector<int64_t> sorted_perm = perm;
    std::sort(sorted_perm.begin(), sorted_perm.end());
    for (size_t k = 0; k < sorted_perm.size(); ++k) {
      if (sorted_perm[k] != static_cast<int64_t>(k)) return nullptr;
    }
    std::vector<int64_t> new_lcd;
    for (int64_t p : perm) new_lcd.push_back(lcd[p]);
    lcd = new_lcd;
    std::sort(lcd.begin(), lcd.end());
    HloInstruction* new_lhs = ctx.Add(HloInstruction::CreateReshape(reshape->shape(), input));
    if (rcd.size() != 1) return nullptr;
    std::vector<int64_t> unsquished = constant->shape().dimensions();
    auto it = unsquished.erase(unsquished.begin() + rcd[0]);
    for (int64_t d : lcd) {
      it = unsquished.insert(it, transpose->shape().dimensions(d));
      ++it;
    }
    PrimitiveType ct = constant->shape().element_type();
    HloInstruction* rhs_reshape = ctx.Add(HloInstruction::CreateReshape(Shape(ct, unsquished), constant));
    int64_t r0 = rcd[0];
    rcd.assign(lcd.size(), 0);
    std::iota(rcd.begin(), rcd.end(), r0);
    std::vector<int64_t> tshape = rhs_reshape->shape().dimensions();
    it = tshape.erase(tshape.begin() + rcd[0], tshape.begin() + rcd[0] + rcd.size());
    for (int64_t d : lcd) {
      it = tshape.insert(it, input->shape().dimensions(d));
      ++it;
    }
    std::vector<int64_t> tperm(rhs_reshape->shape().rank());
    std::iota(tperm.begin(), tperm.end(), 0);
    auto jt = tperm.erase(tperm.begin() + rcd[0], tperm.begin() + rcd[0] + rcd.size());
    std::vector<int64_t> inv = InversePermutation(tdims);
    for (int64_t d : lcd) {
      jt = tperm.insert(jt, inv[d] - lcd[0] + rcd[0]);
      ++jt;
    }
    HloInstruction* rhs_t = ctx.Add(HloInstruction::CreateTranspose(Shape(ct, tshape), rhs_reshape, tperm));
    HloInstruction* new_rhs = ctx.Add(HloInstruction::CreateReshape(constant->shape(), rhs_t));
    if (swapped) std::swap(new_lhs, new_rhs);
    return ctx.Add(HloInstruction::CreateDot(i->shape(), new_lhs, new_rhs, dn, i->attrs().precision_config));
  }));
  // dot with 1-sized dims => reshape(dot of the operands without them)
  rules.push_back(R(O::kDot, "dot drops degenerate dims", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (StopsDotRewrites(i, ctx)) return nullptr;
    const DotDimensionNumbers& d = i->attrs().dot_dnums;
    auto dim_map = [](const Shape& s, int64_t* degenerate) {
      std::vector<int64_t> map(s.rank(), -1);
      for (int64_t k = 0; k < s.rank(); ++k) {
        if (s.dimensions(k) == 1) {
          ++*degenerate;
        } else {
          map[k] = k - *degenerate;
        }
      }
      return map;
    };
    int64_t nl = 0, nr = 0;
    std::vector<int64_t> lmap = dim_map(Op(i, 0)->shape(), &nl);
    std::vector<int64_t> rmap = dim_map(Op(i, 1)->shape(), &nr);
    if (nl == 0 && nr == 0) return nullptr;
    auto remap = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& map) {
      std::vector<int64_t> out;
      for (int64_t x : dims) {
        if (map[x] != -1) out.push_back(map[x]);
      }
      return out;
    };
    DotDimensionNumbers nd;
    nd.lhs_batch_dimensions = remap(d.lhs_batch_dimensions, lmap);
    nd.lhs_contracting_dimensions = remap(d.lhs_contracting_dimensions, lmap);
    nd.rhs_batch_dimensions = remap(d.rhs_batch_dimensions, rmap);
    nd.rhs_contracting_dimensions = remap(d.rhs_contracting_dimensions, rmap);
    auto drop = [&ctx](HloInstruction* x, int64_t n) -> HloInstruction* {
      if (n == 0) return x;
      std::vector<int64_t> dims;
      for (int64_t v : x->shape().dimensions()) {
        if (v != 1) dims.push_back(v);
      }
      return ctx.Add(HloInstruction::CreateReshape(Shape(x->shape().element_type(), dims), x));
    };
    HloInstruction* l = drop(Op(i, 0), nl);
    HloInstruction* r = drop(Op(i, 1), nr);
    absl::StatusOr<Shape> shape = InferDotShape(l->shape(), r->shape(), nd, i->shape().element_type());
    if (!shape.ok()) return nullptr;
    HloInstruction* dot = ctx.Add(HloInstruction::CreateDot(*shape, l, r, nd, i->attrs().precision_config));
    if (dot->shape().Compatible(i->shape())) return dot;
    return ctx.Add(HloInstruction::CreateReshape(i->shape(), dot));
  }));
  // dot(transpose(A), transpose(B)) with matching batch transposes =>
  // transpose(dot(A, B)) (operands swapped when the transposes swap the last two dims)
  rules.push_back(R(O::kDot, "dot(transpose(A),transpose(B)) => transpose(dot)", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (StopsDotRewrites(i, ctx)) return nullptr;
    const DotDimensionNumbers& d = i->attrs().dot_dnums;
    HloInstruction* lhs = Op(i, 0);
    HloInstruction* rhs = Op(i, 1);
    int64_t rank = i->shape().rank();
    if (lhs->opcode() != O::kTranspose || rhs->opcode() != O::kTranspose || lhs->dimensions() != rhs->dimensions()) {
      return nullptr;
    }
    const std::vector<int64_t>& perm = lhs->dimensions();
    if (d.lhs_batch_dimensions != d.rhs_batch_dimensions || d.lhs_contracting_dimensions.size() != 1 ||
        d.rhs_contracting_dimensions.size() != 1 || d.lhs_contracting_dimensions[0] != rank - 1 ||
        d.rhs_contracting_dimensions[0] != rank - 2 || rank != static_cast<int64_t>(d.lhs_batch_dimensions.size()) + 2) {
      return nullptr;
    }
    bool swap;
    if (perm[rank - 2] == rank - 2 && perm[rank - 1] == rank - 1) {
      swap = false;
    } else if (perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2) {
      swap = true;
    } else {
      return nullptr;
    }
    HloInstruction* nl = swap ? Op(rhs, 0) : Op(lhs, 0);
    HloInstruction* nr = swap ? Op(lhs, 0) : Op(rhs, 0);
    Shape shape = i->shape();
    for (int64_t k = 0; k < rank; ++k) shape.set_dimensions(perm[k], i->shape().dimensions(k));
    PrecisionConfig pc = i->attrs().precision_config;
    if (swap && pc.operand_precision.size() == 2) std::swap(pc.operand_precision[0], pc.operand_precision[1]);
    HloInstruction* dot = ctx.Add(HloInstruction::CreateDot(Shape(shape.element_type(), shape.dimensions()), nl, nr, d, pc));
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), dot, perm));
  }));
  // dot(P, X) with P parameter-like and X not => transpose(dot(X, P))
  rules.push_back(R(O::kDot, "dot(param, x) => transpose(dot(x, param))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (!ctx.options().enable_move_dot_param_to_rhs || StopsDotRewrites(i, ctx)) return nullptr;
    if (!IsParameterLike(i->operand(0)) || IsParameterLike(i->operand(1))) return nullptr;
    DotDimensionNumbers d = i->attrs().dot_dnums;
    std::swap(d.lhs_contracting_dimensions, d.rhs_contracting_dimensions);
    std::swap(d.lhs_batch_dimensions, d.rhs_batch_dimensions);
    HloInstruction* nd = MakeDot(Op(i, 1), Op(i, 0), d, i, ctx);
    if (nd == nullptr) return nullptr;
    PrecisionConfig& pc = nd->mutable_attrs().precision_config;
    if (pc.operand_precision.size() == 2) std::swap(pc.operand_precision[0], pc.operand_precision[1]);
    int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    int64_t lhs_free = nd->operand(0)->shape().rank() - nb - static_cast<int64_t>(d.lhs_contracting_dimensions.size());
    int64_t rhs_free = nd->operand(1)->shape().rank() - nb - static_cast<int64_t>(d.rhs_contracting_dimensions.size());
    std::vector<int64_t> perm;
    for (int64_t k = 0; k < nb; ++k) perm.push_back(k);
    for (int64_t k = 0; k < rhs_free; ++k) perm.push_back(nb + lhs_free + k);
    for (int64_t k = 0; k < lhs_free; ++k) perm.push_back(nb + k);
    return ctx.Add(HloInstruction::CreateTranspose(i->shape(), nd, perm));
  }));
}

// XLA's IsOpCodeMultiplyCommutative less select: select(p, A*c, B) is not
// select(p, A, B)*c, so passlab does not look through selects.
bool CommutesWithScalarMultiply(const HloInstruction* i) {
  return i->opcode() == O::kMultiply || i->opcode() == O::kTranspose || i->opcode() == O::kReshape;
}

// multiply(X, broadcast(c)) (either order) with c a floating-point scalar
// constant: the operand index of X; XLA's MultiplyAnyOrder(m::Op(),
// m::Broadcast(m::ConstantScalar())).
std::optional<int64_t> ScalarMultiplyOperand(const HloInstruction* i) {
  if (i->opcode() != O::kMultiply) return std::nullopt;
  for (int64_t k : {0, 1}) {
    const HloInstruction* b = i->operand(1 - k);
    if (b->opcode() == O::kBroadcast && IsEffectiveScalarConstant(b->operand(0)) && IsFloat(b->operand(0))) return k;
  }
  return std::nullopt;
}

float ScalarMultiplier(const HloInstruction* multiply, int64_t operand) {
  return static_cast<float>(multiply->operand(1 - operand)->operand(0)->literal().GetDouble(0));
}

// `inst` feeds `user` once and nothing else: changing its value changes only
// `user`'s.
bool OnlyFeeds(const HloInstruction* inst, const HloInstruction* user) {
  return inst->user_count() == 1 && std::count(user->operands().begin(), user->operands().end(), inst) == 1;
}

// XLA's ScalarMultiplyReduction (HandleConvolution with
// enable_scalar_multiply_reduction). The scalar multiplies below the conv's
// larger sides, and one above it, are bypassed, and their product multiplies
// the smallest side. Unlike XLA, passlab only edits instructions whose value
// feeds nothing else, so other users keep their values.
HloInstruction* ReduceScalarMultiplies(HloInstruction* conv, RuleContext& ctx) {
  PrimitiveType type = conv->shape().element_type();
  if (type != PrimitiveType::kBF16 && type != PrimitiveType::kF32) return nullptr;
  HloInstruction* lhs = Op(conv, 0);
  HloInstruction* rhs = Op(conv, 1);
  const int64_t conv_size = conv->shape().element_count();
  const int64_t lhs_size = lhs->shape().element_count();
  const int64_t rhs_size = rhs->shape().element_count();
  // (instruction, its user, operand index, whether it feeds only that user)
  struct Use {
    HloInstruction* inst;
    HloInstruction* user;
    int64_t index;
    bool exclusive;
  };
  std::vector<Use> below;
  bool above = false;
  HloInstruction* target = nullptr;
  auto look_below = [&](int64_t k) { below.push_back({Op(conv, k), conv, k, OnlyFeeds(Op(conv, k), conv)}); };
  if (conv_size <= std::min(lhs_size, rhs_size)) {
    target = conv;
    if (conv_size < lhs_size) look_below(0);
    if (conv_size < rhs_size) look_below(1);
  } else if (lhs_size <= rhs_size) {
    target = lhs;
    if (lhs_size < rhs_size) look_below(1);
    above = lhs_size < conv_size && conv->user_count() == 1;
  } else {
    target = rhs;
    if (rhs_size < lhs_size) look_below(0);
    above = rhs_size < conv_size && conv->user_count() == 1;
  }
  // Depth first, last pushed first, as XLA multiplies the values in.
  std::vector<float> values;
  std::vector<Use> bypasses;  // user's operand `index` becomes `inst`
  while (!below.empty()) {
    Use u = below.back();
    below.pop_back();
    if (!CommutesWithScalarMultiply(u.inst)) continue;
    if (std::optional<int64_t> k = ScalarMultiplyOperand(u.inst)) {
      values.push_back(ScalarMultiplier(u.inst, *k));
      HloInstruction* x = Op(u.inst, *k);
      bypasses.push_back({x, u.user, u.index, false});
      below.push_back({x, u.user, u.index, u.exclusive && OnlyFeeds(x, u.inst)});
      continue;
    }
    // Looking inside changes this instruction's value.
    if (!u.exclusive) continue;
    for (int64_t k = 0; k < u.inst->operand_count(); ++k) {
      below.push_back({Op(u.inst, k), u.inst, k, OnlyFeeds(Op(u.inst, k), u.inst)});
    }
  }
  // Above: the first scalar multiply up the chain of single users.
  HloInstruction* multiply_above = nullptr;
  int64_t multiply_above_operand = 0;
  for (HloInstruction *prev = conv, *cur = above ? conv->users()[0] : nullptr; cur != nullptr;) {
    if (!CommutesWithScalarMultiply(cur) || !OnlyFeeds(prev, cur)) break;
    if (std::optional<int64_t> k = ScalarMultiplyOperand(cur); k.has_value() && Op(cur, *k) == prev) {
      values.push_back(ScalarMultiplier(cur, *k));
      multiply_above = cur;
      multiply_above_operand = *k;
      break;
    }
    if (cur->user_count() != 1) break;
    prev = cur;
    cur = cur->users()[0];
  }
  if (values.empty()) return nullptr;
  float multiplier = 1.0f;
  for (float v : values) multiplier *= v;
  HloInstruction* scale = ctx.Constant(target->shape(), static_cast<double>(multiplier));
  HloInstruction* scaled = ctx.Binary(O::kMultiply, target, scale);
  for (const Use& b : bypasses) b.user->ReplaceOperandWith(b.index, b.inst);
  if (multiply_above != nullptr && !multiply_above->ReplaceAllUsesWith(Op(multiply_above, multiply_above_operand)).ok()) {
    return nullptr;
  }
  if (target == lhs) {
    conv->ReplaceOperandWith(0, scaled);
  } else if (target == rhs) {
    conv->ReplaceOperandWith(1, scaled);
  } else if (!conv->ReplaceAllUsesWith(scaled).ok()) {
    return nullptr;
  }
  return conv;
}

// XLA's SwapConvolutionOperandsIfBeneficial (conv_operand_swapper.cc), which
// HandleConvolution tries (SwapConvOperands) with enable_conv_operand_swap
// when not layout sensitive: conv(x, w) => conv(reverse(w), x), the kernel
// becoming the input and the input the kernel, when the product of the
// kernel's sizes over the swapped spatial dimensions exceeds the input's.
// Spatial dimensions that are pure contractions (kernel as large as the
// input, no padding, dilation, stride or reversal) or group dimensions (base
// dilation = kernel size, stride = kernel size - 1) stay as they are; every
// other one gets a reversed window of the input's size, the dilations
// exchanged and the padding that keeps the result's size; the kernel is
// reversed on those dimensions unless its window already was. Only
// ungrouped convolutions. Unlike XLA's handler, which first replaces a
// convolution of an empty operand by zeros, passlab leaves those alone here;
// and where the swapped convolution's shape cannot be inferred (a group
// dimension whose input and kernel sizes differ), XLA's pass fails while
// passlab's rule declines.
HloInstruction* SwapConvOperands(HloInstruction* conv, RuleContext& ctx) {
  const HloAttributes& a = conv->attrs();
  if (a.feature_group_count > 1 || a.batch_group_count > 1 || !a.conv_dnums.has_value()) return nullptr;
  HloInstruction* input = Op(conv, 0);
  HloInstruction* kernel = Op(conv, 1);
  if (input->shape().element_count() == 0 || kernel->shape().element_count() == 0) return nullptr;
  const ConvolutionDimensionNumbers& d = *a.conv_dnums;
  const std::vector<WindowDimension>& window = conv->window().dimensions;
  if (window.size() != d.input_spatial_dimensions.size()) return nullptr;
  Window swapped;
  int64_t kernel_product = 1;
  int64_t swapped_kernel_product = 1;
  std::vector<int64_t> reverse_dims;
  for (size_t j = 0; j < window.size(); ++j) {
    const WindowDimension& w = window[j];
    const int64_t kernel_size = w.size;
    const int64_t input_size = input->shape().dimensions(d.input_spatial_dimensions[j]);
    const bool plain = !w.window_reversal && w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1;
    const bool group_dim = plain && w.base_dilation == kernel_size && w.stride == kernel_size - 1;
    const bool contraction_dim = plain && kernel_size == input_size && w.base_dilation == 1 && w.stride == 1;
    if (group_dim || contraction_dim) {
      swapped.dimensions.push_back(w);
      continue;
    }
    const int64_t dilated_kernel_size = 1 + (kernel_size - 1) * w.window_dilation;
    const int64_t dilated_input_size = 1 + (input_size - 1) * w.base_dilation;
    kernel_product *= kernel_size;
    // A 1-element input padded to a full correlation costs as much as the
    // kernel it would become.
    const bool full_correlation_of_one = input_size == 1 && w.stride == 1 && w.window_dilation == 1 &&
                                         w.padding_low == kernel_size - 1 && w.padding_high == kernel_size - 1;
    swapped_kernel_product *= full_correlation_of_one ? kernel_size : input_size;
    WindowDimension n;
    n.size = input_size;
    n.window_reversal = true;
    if (!w.window_reversal) reverse_dims.push_back(d.kernel_spatial_dimensions[j]);
    n.base_dilation = w.window_dilation;
    n.window_dilation = w.base_dilation;
    n.stride = w.stride;
    n.padding_low = dilated_input_size + w.padding_low - dilated_kernel_size;
    n.padding_high = dilated_input_size + w.padding_high - dilated_kernel_size;
    swapped.dimensions.push_back(n);
  }
  if (kernel_product <= swapped_kernel_product) return nullptr;
  ConvolutionDimensionNumbers sd;
  sd.output_spatial_dimensions = d.output_spatial_dimensions;
  sd.output_batch_dimension = d.output_feature_dimension;
  sd.output_feature_dimension = d.output_batch_dimension;
  sd.input_spatial_dimensions = d.kernel_spatial_dimensions;
  sd.input_batch_dimension = d.kernel_output_feature_dimension;
  sd.input_feature_dimension = d.kernel_input_feature_dimension;
  sd.kernel_spatial_dimensions = d.input_spatial_dimensions;
  sd.kernel_output_feature_dimension = d.input_batch_dimension;
  sd.kernel_input_feature_dimension = d.input_feature_dimension;
  // The operands' precisions swap with them (XLA builds a fresh config).
  PrecisionConfig precision;
  const std::vector<PrecisionLevel>& p = a.precision_config.operand_precision;
  if (p.size() == 2) precision.operand_precision = {p[1], p[0]};
  if (!reverse_dims.empty()) kernel = ctx.Add(HloInstruction::CreateReverse(kernel->shape(), kernel, reverse_dims));
  absl::StatusOr<Shape> shape =
      InferConvolveShape(kernel->shape(), input->shape(), 1, 1, swapped, sd, conv->shape().element_type());
  if (!shape.ok() || !shape->Compatible(conv->shape())) return nullptr;
  HloInstruction* swapped_conv =
      ctx.Add(HloInstruction::CreateConvolve(*shape, kernel, input, 1, 1, std::move(swapped), std::move(sd), precision));
  if (ctx.options().conv_is_lowerable_callback == "conv-rewriter" && !ConvRewriter::ConvIsLowerable(swapped_conv)) {
    return nullptr;
  }
  if (conv->has_sharding()) swapped_conv->set_sharding(conv->sharding());
  return swapped_conv;
}

void ConvolutionRulesInto(std::vector<Rule>& rules) {
  // conv(A*c1, B*c2) => conv(A, B)*(c1*c2), on the conv's smallest side
  rules.push_back(R(O::kConvolution, "scalar multiplies around conv => one on its smallest side",
                    [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                      if (!ctx.options().enable_scalar_multiply_reduction) return nullptr;
                      return ReduceScalarMultiplies(i, ctx);
                    }));
  // conv(x, w) => conv(reverse(w), x), window reversed, when w is the larger
  rules.push_back(R(O::kConvolution, "conv with a kernel larger than its input => operands swapped",
                    [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
                      if (!ctx.options().enable_conv_operand_swap || ctx.options().is_layout_sensitive) return nullptr;
                      return SwapConvOperands(i, ctx);
                    }));
}

}  // namespace

// XLA's HloCostAnalysis::GetDotFlops: 2 * |result| * product of the lhs
// contracting dims.
int64_t DotFlops(const Shape& lhs, const Shape& result, const DotDimensionNumbers& d) {
  int64_t width = 1;
  for (int64_t k : d.lhs_contracting_dimensions) width *= lhs.dimensions(k);
  return 2 * result.element_count() * width;
}

// XLA's ConstructToDotMaps: operand dim -> dot result dim (-1 when contracted).
std::pair<std::vector<int64_t>, std::vector<int64_t>> ToDotMaps(const DotDimensionNumbers& d, const Shape& a,
                                                                const Shape& b) {
  std::vector<int64_t> ma(a.rank(), -1), mb(b.rank(), -1);
  int64_t ab = 0;
  for (size_t k = 0; k < d.lhs_batch_dimensions.size(); ++k) {
    ma[d.lhs_batch_dimensions[k]] = ab;
    mb[d.rhs_batch_dimensions[k]] = ab;
    ++ab;
  }
  for (int64_t k = 0; k < a.rank(); ++k) {
    if (!Contains(d.lhs_contracting_dimensions, k) && !Contains(d.lhs_batch_dimensions, k)) ma[k] = ab++;
  }
  for (int64_t k = 0; k < b.rank(); ++k) {
    if (!Contains(d.rhs_contracting_dimensions, k) && !Contains(d.rhs_batch_dimensions, k)) mb[k] = ab++;
  }
  return {ma, mb};
}

// XLA's ConstructFromDotMaps: dot result dim -> operand dim (-1 when absent).
std::pair<std::vector<int64_t>, std::vector<int64_t>> FromDotMaps(const HloInstruction* dot, const Shape& a,
                                                                  const Shape& b) {
  std::vector<int64_t> ra(dot->shape().rank(), -1), rb(dot->shape().rank(), -1);
  auto [ma, mb] = ToDotMaps(dot->attrs().dot_dnums, a, b);
  for (size_t k = 0; k < ma.size(); ++k) {
    if (ma[k] != -1) ra[ma[k]] = static_cast<int64_t>(k);
  }
  for (size_t k = 0; k < mb.size(); ++k) {
    if (mb[k] != -1) rb[mb[k]] = static_cast<int64_t>(k);
  }
  return {ra, rb};
}

HloInstruction* MakeDot(HloInstruction* l, HloInstruction* r, const DotDimensionNumbers& d, const HloInstruction* like,
                        RuleContext& ctx) {
  absl::StatusOr<Shape> shape = InferDotShape(l->shape(), r->shape(), d, like->shape().element_type());
  if (!shape.ok()) return nullptr;
  return ctx.Add(HloInstruction::CreateDot(*shape, l, r, d, like->attrs().precision_config));
}

bool IsParameterLike(const HloInstruction* inst) {
  while (inst->opcode() != O::kParameter) {
    if (inst->operand_count() != 1) return false;
    inst = inst->operand(0);
  }
  return true;
}

std::vector<Rule> DotRules() {
  std::vector<Rule> rules;
  DotRulesInto(rules);
  ConvolutionRulesInto(rules);
  return rules;
}

}  // namespace passlab::algsimp
