#include "passes/simplifiers/dot_strength_reduction.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/dot_operand_dims.h"

namespace passlab {
namespace {

using P = PrimitiveType;
using Dims = std::vector<int64_t>;

// Adds `inst` next to the dot, with the dot's metadata when `metadata` is set.
HloInstruction* Add(HloComputation* c, std::unique_ptr<HloInstruction> inst, const OpMetadata* metadata) {
  if (metadata != nullptr) inst->set_metadata(*metadata);
  return c->AddInstruction(std::move(inst));
}

Shape WithType(const Shape& shape, P type) {
  Shape s = shape;
  s.set_element_type(type);
  return s;
}

HloInstruction* ConvertTo(HloInstruction* x, P type, const OpMetadata* metadata) {
  if (x->shape().element_type() == type) return x;
  return Add(x->parent(), HloInstruction::CreateConvert(WithType(x->shape(), type), x), metadata);
}

HloInstruction* Binary(HloOpcode op, HloInstruction* a, HloInstruction* b) {
  return a->parent()->AddInstruction(HloInstruction::CreateBinary(a->shape(), op, a, b));
}

// ---- XLA's MakeMultiplyForDotPrecisionAlgorithm (matmul_utils.cc, with the
// DotAlgorithmRewriter helpers in dot_algorithm_rewriter.cc). ----

// f32 with the low mantissa bits cleared, through its u32 bits.
HloInstruction* Truncate(HloInstruction* x, uint32_t mask) {
  HloComputation* c = x->parent();
  const Shape u32 = WithType(x->shape(), P::kU32);
  HloInstruction* bits = c->AddInstruction(HloInstruction::Create(HloOpcode::kBitcastConvert, u32, {x}));
  Literal m(Shape::Scalar(P::kU32));
  m.SetInt(0, mask);
  HloInstruction* masks =
      c->AddInstruction(HloInstruction::CreateBroadcast(u32, c->AddInstruction(HloInstruction::CreateConstant(std::move(m))), {}));
  HloInstruction* kept = c->AddInstruction(HloInstruction::CreateBinary(u32, HloOpcode::kAnd, bits, masks));
  return c->AddInstruction(HloInstruction::Create(HloOpcode::kBitcastConvert, x->shape(), {kept}));
}

constexpr uint32_t kBf16Mask = 0xFFFF0000u;
constexpr uint32_t kTf32Mask = 0xFFFFE000u;

HloInstruction* Convert(HloInstruction* x, P type) {
  return x->parent()->AddInstruction(HloInstruction::CreateConvert(WithType(x->shape(), type), x));
}

// x as n bf16 parts, high first, summing to x.
std::vector<HloInstruction*> SplitToBf16(HloInstruction* x, int n) {
  std::vector<HloInstruction*> parts;
  HloInstruction* rest = x;
  for (int k = 0; k + 1 < n; ++k) {
    HloInstruction* high = Truncate(rest, kBf16Mask);
    parts.push_back(high);
    rest = Binary(HloOpcode::kSubtract, rest, high);
  }
  parts.push_back(rest);
  for (HloInstruction*& p : parts) p = Convert(p, P::kBF16);
  return parts;
}

HloInstruction* SumToF32(HloInstruction* a, HloInstruction* b) {
  HloInstruction* fa = Convert(a, P::kF32);
  return Binary(HloOpcode::kAdd, fa, Convert(b, P::kF32));
}

// Zero where the sum of the small partial products is not finite (an inf
// operand split as inf * (1 + 0) would give NaN).
HloInstruction* ZeroNonFinite(HloInstruction* x) {
  HloComputation* c = x->parent();
  auto splat = [&](double v) {
    HloInstruction* k = c->AddInstruction(HloInstruction::CreateConstant(Literal::FromDoubles(Shape::Scalar(P::kF32), {v})));
    return c->AddInstruction(HloInstruction::CreateBroadcast(x->shape(), k, {}));
  };
  HloInstruction* inf = splat(std::numeric_limits<double>::infinity());
  HloInstruction* abs = c->AddInstruction(HloInstruction::CreateUnary(x->shape(), HloOpcode::kAbs, x));
  HloInstruction* finite = c->AddInstruction(
      HloInstruction::CreateCompare(WithType(x->shape(), P::kPred), inf, abs, ComparisonDirection::kGe));
  return c->AddInstruction(HloInstruction::CreateTernary(x->shape(), HloOpcode::kSelect, finite, x, splat(0)));
}

absl::StatusOr<HloInstruction*> MultiplyForAlgorithm(HloInstruction* lhs, HloInstruction* rhs,
                                                     const std::string& algorithm) {
  auto is = [](const HloInstruction* x, P t) { return x->shape().element_type() == t; };
  const bool f32 = is(lhs, P::kF32) && is(rhs, P::kF32);
  auto need_f32 = [&]() {
    return f32 ? absl::OkStatus()
               : absl::InvalidArgumentError(StrCat("algorithm ", algorithm, " needs f32 operands"));
  };
  auto mult = [](HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kMultiply, a, b); };
  if (algorithm.empty() || algorithm == "dot_f32_f32_f32") return mult(lhs, rhs);
  if (algorithm == "dot_bf16_bf16_f32") {
    if (!(is(lhs, P::kF32) || is(lhs, P::kBF16)) || !(is(rhs, P::kF32) || is(rhs, P::kBF16))) {
      return absl::InvalidArgumentError("algorithm dot_bf16_bf16_f32 needs f32 or bf16 operands");
    }
    if (is(lhs, P::kBF16) && is(rhs, P::kBF16)) return Convert(mult(lhs, rhs), P::kF32);
    return Convert(mult(Convert(lhs, P::kBF16), Convert(rhs, P::kBF16)), P::kF32);
  }
  // The partial products (i, j) of lhs part i and rhs part j, smallest
  // first as XLA sums them; high * high comes last, after the NaN guard.
  std::vector<std::pair<int, int>> order;
  int parts = 0;
  if (algorithm == "dot_bf16_bf16_f32_x3") {
    parts = 2;
    order = {{1, 0}, {0, 1}};
  } else if (algorithm == "dot_bf16_bf16_f32_x6") {
    parts = 3;
    order = {{1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}};
  } else if (algorithm == "dot_bf16_bf16_f32_x9") {
    parts = 3;
    order = {{2, 2}, {2, 1}, {1, 2}, {1, 1}, {0, 2}, {2, 0}, {0, 1}, {1, 0}};
  }
  if (parts > 0) {
    RETURN_IF_ERROR(need_f32());
    std::vector<HloInstruction*> l = SplitToBf16(lhs, parts);
    std::vector<HloInstruction*> r = SplitToBf16(rhs, parts);
    std::vector<HloInstruction*> products;
    for (auto [i, j] : order) products.push_back(mult(l[i], r[j]));
    HloInstruction* high = mult(l[0], r[0]);
    HloInstruction* sum = SumToF32(products[0], products[1]);
    for (size_t k = 2; k < products.size(); ++k) sum = SumToF32(sum, products[k]);
    return SumToF32(ZeroNonFinite(sum), high);
  }
  if (algorithm == "dot_tf32_tf32_f32") {
    RETURN_IF_ERROR(need_f32());
    return mult(Truncate(lhs, kTf32Mask), Truncate(rhs, kTf32Mask));
  }
  if (algorithm == "dot_tf32_tf32_f32_x3") {
    RETURN_IF_ERROR(need_f32());
    HloInstruction* lh = Truncate(lhs, kTf32Mask);
    HloInstruction* ll = Binary(HloOpcode::kSubtract, lhs, lh);
    HloInstruction* rh = Truncate(rhs, kTf32Mask);
    HloInstruction* rl = Binary(HloOpcode::kSubtract, rhs, rh);
    HloInstruction* low_high = mult(ll, rh);
    HloInstruction* high_low = mult(lh, rl);
    HloInstruction* high_high = mult(lh, rh);
    return SumToF32(ZeroNonFinite(SumToF32(low_high, high_low)), high_high);
  }
  return absl::InvalidArgumentError(StrCat("Unsupported dot precision algorithm: ", algorithm));
}

// ---- Type rules (XLA's GetGemmAccumulatorType and algorithm_util). ----

// The accumulator type an algorithm names ("dot_bf16_bf16_f32_x6" -> f32).
std::optional<P> AlgorithmAccumulatorType(std::string algorithm) {
  for (std::string_view suffix : {"_fast_accum", "_x3", "_x6", "_x9"}) {
    if (algorithm.size() > suffix.size() && algorithm.compare(algorithm.size() - suffix.size(), suffix.size(), suffix) == 0) {
      algorithm.resize(algorithm.size() - suffix.size());
    }
  }
  const size_t last = algorithm.rfind('_');
  if (algorithm.rfind("dot_", 0) != 0 || last == std::string::npos) return std::nullopt;
  const std::string acc = algorithm.substr(last + 1);
  if (acc == "f16") return P::kF16;
  if (acc == "bf16") return P::kBF16;
  if (acc == "f32") return P::kF32;
  if (acc == "f64") return P::kF64;
  return std::nullopt;
}

P GemmAccumulatorType(const HloInstruction& dot) {
  if (std::optional<P> t = AlgorithmAccumulatorType(dot.attrs().precision_config.algorithm)) return *t;
  const P type = dot.shape().element_type();
  if (IsFloatingPointType(type) && PrimitiveBitWidth(type) <= 32) return P::kF32;
  return type;
}

bool IsF8(P t) {
  return t == P::kF8E5M2 || t == P::kF8E4M3 || t == P::kF8E4M3FN || t == P::kF8E4M3B11FNUZ || t == P::kF8E5M2FNUZ ||
         t == P::kF8E4M3FNUZ || t == P::kF8E3M4;
}

// XLA's legacy_triton::CanTritonHandleGEMM (support_legacy.cc) for a CUDA
// device of compute capability `major`.`minor`.
class TritonGemmSupport {
 public:
  TritonGemmSupport(int major, int minor) : major_(major) { (void)minor; }

  bool CanHandle(const HloInstruction& dot) const {
    const PrecisionConfig& p = dot.attrs().precision_config;
    if (p.algorithm.empty()) {
      for (PrecisionLevel level : p.operand_precision) {
        if (level != PrecisionLevel::kDefault) return false;
      }
    } else if (!AlgorithmSupported(p.algorithm)) {
      return false;
    }
    const P out = dot.shape().element_type();
    const P lhs = dot.operand(0)->shape().element_type();
    const P rhs = dot.operand(1)->shape().element_type();
    if (!OutputTypeSupported(out)) return false;
    if (lhs != rhs && !(IsF8(lhs) && IsF8(rhs))) return false;
    if (!DataTypeSupported(lhs) || !DataTypeSupported(rhs)) return false;
    auto is_8bit_int = [](P t) { return t == P::kS8 || t == P::kU8; };
    if (out == P::kS32 && !(is_8bit_int(lhs) && is_8bit_int(rhs))) return false;
    return IsIntegralType(lhs) == IsIntegralType(out);
  }

 private:
  bool OutputTypeSupported(P t) const {
    switch (t) {
      case P::kF16:
      case P::kF32:
      case P::kBF16:
        return true;
      case P::kF8E5M2:
      case P::kS32:
        return major_ >= 8;  // Ampere
      case P::kF8E4M3FN:
        return major_ >= 9;  // Hopper
      default:
        return false;
    }
  }
  bool DataTypeSupported(P t) const {
    return OutputTypeSupported(t) || t == P::kPred || t == P::kS8 || t == P::kS16 || t == P::kS32;
  }
  static bool AlgorithmSupported(const std::string& a) {
    return a == "dot_tf32_tf32_f32" || a == "dot_tf32_tf32_f32_x3" || a == "dot_f32_f32_f32" ||
           a == "dot_bf16_bf16_f32" || a == "dot_bf16_bf16_f32_x3" || a == "dot_bf16_bf16_f32_x6" ||
           a == "dot_bf16_bf16_f32_x9";
  }

  int major_;
};

// XLA's IsMatrixMultiplicationTooSmallForRewriting (matmul_utils.cc):
// (M + N) * K below the threshold.
bool TooSmallForGemm(const HloInstruction& dot, int64_t threshold) {
  DotOperandDims lhs = DotOperandDims::FromDotOperand(dot, 0);
  DotOperandDims rhs = DotOperandDims::FromDotOperand(dot, 1);
  auto product = [](const Dims& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
  };
  const int64_t k = product(lhs.Sizes(DotOperandDims::kContracting));
  const int64_t m = product(lhs.Sizes(DotOperandDims::kNonContracting));
  const int64_t n = product(rhs.Sizes(DotOperandDims::kNonContracting));
  return (m + n) * k < threshold;
}

// XLA's ShapeUtil::InsertDimensionsAtIndex: the new dimensions are placed
// in the layout just more major than the dimension they are inserted before
// (most minor when appended).
Shape InsertDimensions(const Shape& shape, int64_t at, const Dims& bounds) {
  Dims dims = shape.dimensions();
  dims.insert(dims.begin() + at, bounds.begin(), bounds.end());
  Shape out(shape.element_type(), dims);
  if (!shape.has_layout()) return out;
  const int64_t n = static_cast<int64_t>(bounds.size());
  Dims m2m;
  if (at == shape.rank()) {
    for (int64_t i = n - 1; i >= 0; --i) m2m.push_back(at + i);
  }
  for (int64_t d : shape.layout().minor_to_major()) {
    m2m.push_back(d >= at ? d + n : d);
    if (d == at) {
      for (int64_t i = n - 1; i >= 0; --i) m2m.push_back(at + i);
    }
  }
  Layout layout = shape.layout();
  layout.mutable_minor_to_major() = m2m;
  out.set_layout(layout);
  return out;
}

// `shape` without its last `count` dimensions (and them out of the layout).
Shape DropTrailingDimensions(const Shape& shape, int64_t count) {
  const int64_t keep = shape.rank() - count;
  Dims dims(shape.dimensions().begin(), shape.dimensions().begin() + keep);
  Shape out(shape.element_type(), dims);
  if (!shape.has_layout()) return out;
  Dims m2m;
  for (int64_t d : shape.layout().minor_to_major()) {
    if (d < keep) m2m.push_back(d);
  }
  Layout layout = shape.layout();
  layout.mutable_minor_to_major() = m2m;
  out.set_layout(layout);
  return out;
}

HloComputation* ScalarAdd(HloModule& module, P type) {
  auto c = std::make_unique<HloComputation>("scalar_add_computation");
  const Shape scalar = Shape::Scalar(type);
  HloInstruction* a = c->AddParameter(HloInstruction::CreateParameter(0, scalar, "scalar_lhs"));
  HloInstruction* b = c->AddParameter(HloInstruction::CreateParameter(1, scalar, "scalar_rhs"));
  c->set_root_instruction(c->AddInstruction(HloInstruction::CreateBinary(scalar, HloOpcode::kAdd, a, b)));
  return module.AddEmbeddedComputation(std::move(c));
}

}  // namespace

bool DotStrengthReduction::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kDot || !inst->attrs().sparsity.empty()) return false;
  const DotDimensionNumbers& d = inst->attrs().dot_dnums;
  const Shape& lhs = inst->operand(0)->shape();
  const Shape& rhs = inst->operand(1)->shape();
  const bool lhs_vector = static_cast<int64_t>(d.lhs_batch_dimensions.size() + d.lhs_contracting_dimensions.size()) ==
                          lhs.rank();
  const bool rhs_vector = static_cast<int64_t>(d.rhs_batch_dimensions.size() + d.rhs_contracting_dimensions.size()) ==
                          rhs.rank();
  // s32 x s32 -> s32 contracting rhs dimension 1: slow in the loop emitter.
  const bool favourable_s32 = lhs.element_type() == P::kS32 && rhs.element_type() == P::kS32 &&
                              inst->shape().element_type() == P::kS32 && d.rhs_contracting_dimensions.size() == 1 &&
                              d.rhs_contracting_dimensions[0] == 1;
  if (!lhs_vector && !rhs_vector && !favourable_s32) return false;
  // Vector-vector dots: gemm fusion does not take them.
  if (lhs_vector && rhs_vector) return true;
  if (TooSmallForGemm(*inst, /*threshold=*/10000000)) return true;
  // What Triton cannot take is left to the fusion pipeline as elementwise ops.
  return !TritonGemmSupport(options_.compute_capability_major, options_.compute_capability_minor).CanHandle(*inst);
}

// dot(a, b) => convert(reduce(convert(multiply(broadcast(transpose(a)),
//                                             broadcast(transpose(b))))))
absl::StatusOr<HloInstruction*> DotStrengthReduction::ExpandInstruction(HloInstruction* dot) {
  const OpMetadata* metadata = &dot->metadata();
  HloComputation* c = dot->parent();
  std::array<DotOperandDims, 2> dims = {DotOperandDims::FromDotOperand(*dot, 0),
                                        DotOperandDims::FromDotOperand(*dot, 1)};
  std::array<HloInstruction*, 2> operands = {dot->mutable_operand(0), dot->mutable_operand(1)};
  for (int i = 0; i < 2; ++i) {
    DotOperandDims& ours = dims[i];
    const DotOperandDims& other = dims[1 - i];
    operands[i] = ConvertTo(operands[i], dot->shape().element_type(), metadata);
    // [batch, non-contracting, contracting], each in its listed order.
    Dims permutation;
    for (auto category : {DotOperandDims::kBatch, DotOperandDims::kNonContracting, DotOperandDims::kContracting}) {
      for (int64_t d : ours.Indices(category)) permutation.push_back(d);
    }
    if (!std::is_sorted(permutation.begin(), permutation.end())) {
      operands[i] = Add(c,
                        HloInstruction::CreateTranspose(PermuteShapeDimensions(permutation, operands[i]->shape()),
                                                        operands[i], permutation),
                        metadata);
      ours.ApplyPermutation(permutation);
    }
    // Both sides become [batch, lhs non-contracting, rhs non-contracting,
    // contracting]: the other side's non-contracting dimensions go after
    // ours (lhs) or before (rhs).
    int64_t insert_before = ours.Rank(DotOperandDims::kBatch);
    if (i == 0) insert_before += ours.Rank(DotOperandDims::kNonContracting);
    const Dims bounds = other.Sizes(DotOperandDims::kNonContracting);
    if (bounds.empty()) continue;
    const int64_t rank = operands[i]->shape().rank();
    Dims broadcast_dims;
    for (int64_t d = 0; d < rank; ++d) {
      broadcast_dims.push_back(d < insert_before ? d : d + static_cast<int64_t>(bounds.size()));
    }
    operands[i] = Add(c,
                      HloInstruction::CreateBroadcast(InsertDimensions(operands[i]->shape(), insert_before, bounds),
                                                      operands[i], broadcast_dims),
                      metadata);
  }
  if (operands[0]->shape().dimensions() != operands[1]->shape().dimensions()) {
    return absl::InternalError("strength-reduced dot operands differ in shape");
  }
  ASSIGN_OR_RETURN(HloInstruction* product,
      MultiplyForAlgorithm(operands[0], operands[1], dot->attrs().precision_config.algorithm));
  HloInstruction* flow = product;
  flow->set_metadata(*metadata);

  // Reduce the contracting dimensions (the trailing ones) in the
  // accumulator type.
  const int64_t contracting = dims[0].Rank(DotOperandDims::kContracting);
  if (contracting > 0) {
    const P acc = GemmAccumulatorType(*dot);
    HloInstruction* input = ConvertTo(flow, acc, metadata);
    Dims reduce_dims;
    for (int64_t d = flow->shape().rank() - contracting; d < flow->shape().rank(); ++d) reduce_dims.push_back(d);
    HloInstruction* zero = c->AddInstruction(HloInstruction::CreateConstant(Literal(Shape::Scalar(acc))));
    flow = Add(c,
               HloInstruction::CreateReduce(WithType(DropTrailingDimensions(flow->shape(), contracting), acc), {input},
                                            {zero}, reduce_dims, ScalarAdd(*dot->GetModule(), acc)),
               metadata);
  }
  return ConvertTo(flow, dot->shape().element_type(), metadata);
}

}  // namespace passlab
