#include "passes/expanders/rng_expander.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;
constexpr PrimitiveType kF32 = PrimitiveType::kF32;

bool IsSmallFloat(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }

bool IsSupportedType(PrimitiveType t, RandomDistribution distribution) {
  bool is_float = IsSmallFloat(t) || t == kF32 || t == PrimitiveType::kF64;
  if (distribution == RandomDistribution::kNormal) return is_float;
  return is_float || t == PrimitiveType::kS32 || t == kU32 || t == PrimitiveType::kS64 || t == kU64;
}

// `value` of type `type` broadcast to `dims`.
HloInstruction* Splat(ExpansionBuilder& b, PrimitiveType type, double value, const std::vector<int64_t>& dims) {
  Literal l(Shape::Scalar(type));
  l.SetDouble(0, value);
  return b.Broadcast(b.ConstantLiteral(std::move(l)), dims);
}

HloInstruction* BitcastConvert(ExpansionBuilder& b, HloInstruction* x, PrimitiveType type) {
  return b.Add(HloInstruction::Create(HloOpcode::kBitcastConvert, Shape(type, x->shape().dimensions()), {x}));
}

// Uniform in [lo, hi) from unsigned bits of the float's width: the top
// mantissa-width bits as an integer, times 2^-mantissa_bits (XLA's
// ConvertRandomBitsToUniformFloatingPoint).
HloInstruction* UniformFloat(ExpansionBuilder& b, HloInstruction* bits, PrimitiveType type, HloInstruction* lo,
                             HloInstruction* hi) {
  const std::vector<int64_t> dims = bits->shape().dimensions();
  const int width = PrimitiveBitWidth(type);
  const int mantissa_bits = type == kF32 ? 23 : 52;
  PrimitiveType bits_type = bits->shape().element_type();
  HloInstruction* shifted = b.Binary(HloOpcode::kShiftRightLogical, bits,
                                     b.Broadcast(b.ConstantScalar(bits_type, width - mantissa_bits), dims));
  HloInstruction* unit = b.Binary(HloOpcode::kMultiply, b.Convert(shifted, type),
                                  Splat(b, type, std::ldexp(1.0, -mantissa_bits), dims));
  HloInstruction* range = b.Broadcast(b.Binary(HloOpcode::kSubtract, hi, lo), dims);
  return b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, unit, range), b.Broadcast(lo, dims));
}

// erfinv(x) for x in (-1, 1): Giles' single-precision approximation,
//   w = -log((1 - x)(1 + x));  w < 5: p(w - 2.5)  else: q(sqrt(w) - 3);
//   erfinv(x) = x p.
HloInstruction* ErfInv(ExpansionBuilder& b, HloInstruction* x) {
  static constexpr double kCentral[] = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                        -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                        -0.00417768164,  0.246640727,    1.50140941};
  static constexpr double kTail[] = {-0.000200214257, 0.000100950558, 0.00134934322,
                                     -0.00367342844,  0.00573950773,  -0.0076224613,
                                     0.00943887047,   1.00167406,     2.83297682};
  const PrimitiveType type = x->shape().element_type();
  const std::vector<int64_t> dims = x->shape().dimensions();
  HloInstruction* one = Splat(b, type, 1.0, dims);
  HloInstruction* w = b.Unary(
      HloOpcode::kNegate,
      b.Unary(HloOpcode::kLog, b.Binary(HloOpcode::kMultiply, b.Binary(HloOpcode::kSubtract, one, x),
                                        b.Binary(HloOpcode::kAdd, one, x))));
  auto horner = [&](const double (&coefficients)[9], HloInstruction* t) {
    HloInstruction* p = Splat(b, type, coefficients[0], dims);
    for (int i = 1; i < 9; ++i) {
      p = b.Binary(HloOpcode::kAdd, Splat(b, type, coefficients[i], dims), b.Binary(HloOpcode::kMultiply, p, t));
    }
    return p;
  };
  HloInstruction* central = horner(kCentral, b.Binary(HloOpcode::kSubtract, w, Splat(b, type, 2.5, dims)));
  HloInstruction* tail =
      horner(kTail, b.Binary(HloOpcode::kSubtract, b.Unary(HloOpcode::kSqrt, w), Splat(b, type, 3.0, dims)));
  HloInstruction* is_central = b.Compare(w, Splat(b, type, 5.0, dims), ComparisonDirection::kLt);
  return b.Binary(HloOpcode::kMultiply, b.Select(is_central, central, tail), x);
}

// Uniform integers in [lo, hi): lo + bits mod (hi - lo), computed on the
// unsigned type of the same width; lo when hi <= lo.
HloInstruction* UniformInt(ExpansionBuilder& b, HloInstruction* bits, PrimitiveType type, HloInstruction* lo,
                           HloInstruction* hi) {
  const std::vector<int64_t> dims = bits->shape().dimensions();
  const PrimitiveType u = bits->shape().element_type();
  HloInstruction* ulo = BitcastConvert(b, lo, u);
  HloInstruction* range = b.Broadcast(b.Binary(HloOpcode::kSubtract, BitcastConvert(b, hi, u), ulo), dims);
  HloInstruction* empty = b.Broadcast(b.Compare(hi, lo, ComparisonDirection::kLe), dims);
  HloInstruction* zeros = b.Broadcast(b.Zero(u), dims);
  HloInstruction* divisor = b.Select(empty, b.Broadcast(b.ConstantScalar(u, 1), dims), range);
  HloInstruction* offset = b.Select(empty, zeros, b.Binary(HloOpcode::kRemainder, bits, divisor));
  return BitcastConvert(b, b.Binary(HloOpcode::kAdd, b.Broadcast(ulo, dims), offset), type);
}

std::string ComputationName(RandomDistribution distribution, const Shape& shape) {
  std::string dims;
  for (int64_t d : shape.dimensions()) dims += StrCat(dims.empty() ? "" : "x", d);
  return StrCat(distribution == RandomDistribution::kNormal ? "rng_normal_" : "rng_uniform_",
                PrimitiveTypeName(shape.element_type()), dims.empty() ? "" : "_", dims);
}

// (state u64[2], a, b) -> values: the generated computation for one
// distribution, result type (f32, f64 or an integer) and shape.
HloComputation* BuildRngComputation(HloModule* module, RandomDistribution distribution, const Shape& shape,
                                    uint64_t seed, const OpMetadata& metadata) {
  const PrimitiveType type = shape.element_type();
  HloComputation* c = module->AddEmbeddedComputation(std::make_unique<HloComputation>(
      StrCat(ComputationName(distribution, shape), "_seed_", seed)));
  ExpansionBuilder b(c, metadata);
  HloInstruction* state = c->AddParameter(HloInstruction::CreateParameter(0, Shape(kU64, {2}), "state"));
  HloInstruction* lo = c->AddParameter(HloInstruction::CreateParameter(1, Shape::Scalar(type), "a_or_mean"));
  HloInstruction* hi = c->AddParameter(HloInstruction::CreateParameter(2, Shape::Scalar(type), "b_or_sigma"));
  // Philox with the key first and the 128-bit counter after it.
  Literal key(Shape(kU64, {1}));
  key.SetBits(0, seed);
  HloInstruction* full_state = b.Concatenate({b.ConstantLiteral(std::move(key)), state}, 0);
  const PrimitiveType bits_type = PrimitiveBitWidth(type) == 64 ? kU64 : kU32;
  HloInstruction* generator = b.Add(HloInstruction::Create(
      HloOpcode::kRngBitGenerator, Shape::Tuple({full_state->shape(), Shape(bits_type, shape.dimensions())}),
      {full_state}));
  generator->mutable_attrs().rng_algorithm = RandomAlgorithm::kPhilox;
  HloInstruction* bits = b.GetTupleElement(generator, 1);
  const std::vector<int64_t> dims = shape.dimensions();
  HloInstruction* result;
  if (distribution == RandomDistribution::kNormal) {
    // u in [nextafter(-1, 0), 1): (1 - u)(1 + u) > 0.
    HloInstruction* u = UniformFloat(b, bits, type, b.ConstantLiteral([&] {
                                       Literal l(Shape::Scalar(type));
                                       l.SetDouble(0, type == kF32 ? std::nextafter(-1.0f, 0.0f)
                                                                   : std::nextafter(-1.0, 0.0));
                                       return l;
                                     }()),
                                     b.ConstantScalar(type, 1));
    HloInstruction* z = b.Binary(HloOpcode::kMultiply, Splat(b, type, std::sqrt(2.0), dims), ErfInv(b, u));
    result = b.Binary(HloOpcode::kAdd, b.Broadcast(lo, dims),
                      b.Binary(HloOpcode::kMultiply, b.Broadcast(hi, dims), z));
  } else if (IsFloatingPointType(type)) {
    result = UniformFloat(b, bits, type, lo, hi);
  } else {
    result = UniformInt(b, bits, type, lo, hi);
  }
  c->set_root_instruction(result);
  return c;
}

}  // namespace

bool RngExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kRng || inst->operand_count() != 2) return false;
  const Shape& s = inst->shape();
  return s.IsArray() && s.is_static() && inst->operand(0)->shape().rank() == 0 &&
         inst->operand(1)->shape().rank() == 0 && IsSupportedType(s.element_type(), inst->attrs().distribution);
}

absl::StatusOr<HloInstruction*> RngExpander::ExpandInstruction(HloInstruction* rng) {
  ExpansionBuilder outer(rng->parent(), rng->metadata());
  const RandomDistribution distribution = rng->attrs().distribution;
  const PrimitiveType type = rng->shape().element_type();
  // Small floats draw in f32 (XLA's ConvertSmallFpRngToF32Rng).
  const PrimitiveType draw_type = IsSmallFloat(type) ? kF32 : type;
  const Shape draw_shape(draw_type, rng->shape().dimensions());
  const std::string name = StrCat(ComputationName(distribution, draw_shape), "_seed_", options_.seed);
  HloModule* module = rng->GetModule();
  if (module == nullptr) return absl::InternalError(StrCat("rng-expander: ", rng->name(), " is not in a module"));
  // One generated computation per distribution and shape, shared by callers.
  HloComputation* computation = module->GetComputationWithName(name);
  if (computation == nullptr || computation->num_parameters() != 3 ||
      computation->root_instruction()->shape() != draw_shape) {
    computation = BuildRngComputation(module, distribution, draw_shape, options_.seed, rng->metadata());
  }
  // 128-bit philox blocks consumed: four 32-bit or two 64-bit values each.
  const int64_t per_block = PrimitiveBitWidth(draw_type) == 64 ? 2 : 4;
  const int64_t delta = (draw_shape.element_count() + per_block - 1) / per_block;
  HloInstruction* state = outer.Add(HloInstruction::Create(HloOpcode::kRngGetAndUpdateState, Shape(kU64, {2}), {}));
  state->mutable_attrs().unknown_attributes.push_back({"delta", StrCat(delta)});
  HloInstruction* lo = outer.Convert(rng->mutable_operand(0), draw_type);
  HloInstruction* hi = outer.Convert(rng->mutable_operand(1), draw_type);
  HloInstruction* call = outer.Add(HloInstruction::CreateCall(draw_shape, {state, lo, hi}, computation));
  return outer.Convert(call, type);
}

}  // namespace passlab
