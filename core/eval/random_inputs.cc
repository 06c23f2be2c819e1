#include "core/eval/random_inputs.h"

#include <random>

namespace passlab {
namespace {

// The smallest dimension a value used as an index by `user` may address.
int64_t IndexBound(const HloInstruction* param) {
  int64_t bound = 8;
  for (const HloInstruction* user : param->users()) {
    switch (user->opcode()) {
      case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kGather:
      case HloOpcode::kScatter: {
        const Shape& operand = user->operand(0)->shape();
        for (int64_t d : operand.dimensions()) bound = std::min(bound, std::max<int64_t>(d, 1));
        break;
      }
      default:
        break;
    }
  }
  return bound;
}

}  // namespace

Literal MakeRandomLiteral(const Shape& shape, uint64_t seed, int64_t int_bound) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      elements.push_back(MakeRandomLiteral(shape.tuple_shapes(i), seed * 31 + i + 1, int_bound));
    }
    Literal l = Literal::Tuple(std::move(elements));
    l.set_shape_layout(shape);
    return l;
  }
  Literal l(shape);
  if (!shape.IsArray()) return l;
  std::mt19937_64 gen(seed);
  PrimitiveType t = shape.element_type();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (t == PrimitiveType::kPred) {
      l.SetBits(i, gen() & 1);
    } else if (IsIntegralType(t)) {
      // Non-negative and below the bound, so values used as indices are valid.
      l.SetInt(i, static_cast<int64_t>(gen() % static_cast<uint64_t>(std::max<int64_t>(int_bound, 1))));
    } else if (IsComplexType(t)) {
      l.SetComplex(i, {std::uniform_real_distribution<double>(-1, 1)(gen), std::uniform_real_distribution<double>(-1, 1)(gen)});
    } else {
      // Multiples of 1/64 in [-1, 1): exact in every float type with >= 3 mantissa bits.
      l.SetDouble(i, static_cast<double>(static_cast<int64_t>(gen() % 128) - 64) / 64.0);
    }
  }
  return l;
}

std::vector<Literal> MakeRandomArguments(const HloComputation& computation, uint64_t seed) {
  std::vector<Literal> args;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    args.push_back(MakeRandomLiteral(p->shape(), seed * 1000003 + i, IndexBound(p)));
  }
  return args;
}

}  // namespace passlab
