#include "core/eval/random_inputs.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>

#include "core/ir/hlo_instruction.h"

namespace passlab {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Exclusive upper bound for values of `value` when `user` reads it as
// operand `k`, or -1 when that use is not an index.
int64_t IndexUseBound(const HloInstruction* user, int64_t k) {
  const Shape& operand = user->operand(0)->shape();
  switch (user->opcode()) {
    case HloOpcode::kDynamicSlice:
      if (k < 1 || k - 1 >= operand.rank()) return -1;
      return operand.dimensions(k - 1) - user->shape().dimensions(k - 1) + 1;
    case HloOpcode::kDynamicUpdateSlice:
      if (k < 2 || k - 2 >= operand.rank()) return -1;
      return operand.dimensions(k - 2) - user->operand(1)->shape().dimensions(k - 2) + 1;
    case HloOpcode::kGather: {
      if (k != 1) return -1;
      int64_t bound = INT64_MAX;
      const auto& sizes = user->attrs().slice_sizes;
      for (int64_t d : user->attrs().gather_dnums.start_index_map) {
        if (d < operand.rank() && d < static_cast<int64_t>(sizes.size())) {
          bound = std::min(bound, operand.dimensions(d) - sizes[d] + 1);
        }
      }
      return bound;
    }
    case HloOpcode::kScatter: {
      int64_t n = (user->operand_count() - 1) / 2;
      if (k != n) return -1;
      const ScatterDimensionNumbers& sd = user->attrs().scatter_dnums;
      const Shape& updates = user->operand(n + 1)->shape();
      // Window extent of each operand dimension.
      std::vector<int64_t> window(operand.rank(), 1);
      size_t w = 0;
      for (int64_t d = 0; d < operand.rank(); ++d) {
        if (Contains(sd.inserted_window_dims, d) || Contains(sd.input_batching_dims, d)) continue;
        if (w < sd.update_window_dims.size()) window[d] = updates.dimensions(sd.update_window_dims[w++]);
      }
      int64_t bound = INT64_MAX;
      for (int64_t d : sd.scatter_dims_to_operand_dims) {
        if (d < operand.rank()) bound = std::min(bound, operand.dimensions(d) - window[d] + 1);
      }
      return bound;
    }
    default:
      return -1;
  }
}

// The tightest index bound over every use of `value`, following ops that
// pass values through unchanged.
int64_t IndexBound(const HloInstruction* value, int depth = 0) {
  int64_t bound = INT64_MAX;
  if (depth > 8) return bound;
  for (const HloInstruction* user : value->users()) {
    switch (user->opcode()) {
      case HloOpcode::kConvert: case HloOpcode::kReshape: case HloOpcode::kBitcast: case HloOpcode::kCopy:
      case HloOpcode::kGetTupleElement: case HloOpcode::kBroadcast: case HloOpcode::kSlice:
        bound = std::min(bound, IndexBound(user, depth + 1));
        continue;
      default:
        break;
    }
    for (int64_t k = 0; k < user->operand_count(); ++k) {
      if (user->operand(k) != value) continue;
      int64_t b = IndexUseBound(user, k);
      if (b >= 0) bound = std::min(bound, std::max<int64_t>(b, 1));
    }
  }
  return bound;
}

// Multiples of 1/64 in [-1, 1).
double RandomUnit(std::mt19937_64& gen) { return static_cast<double>(static_cast<int64_t>(gen() % 128) - 64) / 64.0; }

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
  if (IsIntegralType(t)) {
    // Stay inside the type: [0, max] at most.
    int width = PrimitiveBitWidth(t) - (IsSignedIntegralType(t) ? 1 : 0);
    if (width < 62) int_bound = std::min<int64_t>(int_bound, int64_t{1} << width);
  }
  uint64_t bound = static_cast<uint64_t>(std::max<int64_t>(int_bound, 1));
  for (int64_t i = 0, count = l.element_count(); i < count; ++i) {
    if (t == PrimitiveType::kPred) {
      l.SetBits(i, gen() & 1);
    } else if (IsIntegralType(t)) {
      l.SetInt(i, static_cast<int64_t>(gen() % bound));
    } else if (IsComplexType(t)) {
      double re = RandomUnit(gen);
      l.SetComplex(i, {re, RandomUnit(gen)});
    } else if (t == PrimitiveType::kF8E8M0FNU) {
      l.SetDouble(i, std::ldexp(1.0, static_cast<int>(gen() % 9) - 4));
    } else {
      l.SetDouble(i, RandomUnit(gen));
    }
  }
  return l;
}

namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Values a training step's state would hold, for the parameter names that
// passlab's models give it (models/: "<layer>.weight", "<bn>.running_var",
// "<param>.momentum", "labels", ...). Plain [-1, 1) values there make the
// step numerically meaningless: unscaled weights saturate the softmax and
// blow up activations, negative running variances and Adam second moments
// feed sqrt, and random "labels" are no distribution. Such a step is so
// ill-conditioned that the order of a sum moves its gradients by percents,
// and a correct program looks wrong. Every rule maps the generic random
// value x of the same element, so the result stays deterministic.
void ShapeLikeTrainingState(std::string_view name, uint64_t seed, Literal& l) {
  const Shape& shape = l.shape();
  if (!shape.IsArray() || !IsFloatingPointType(shape.element_type())) return;
  const int64_t n = l.element_count();
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) l.SetDouble(i, f(l.GetDouble(i)));
  };
  if (EndsWith(name, ".momentum") || EndsWith(name, ".adam_m")) {
    map([](double x) { return 0.01 * x; });
  } else if (EndsWith(name, ".adam_v")) {
    map([](double x) { return 1e-4 * std::abs(x); });
  } else if (EndsWith(name, "running_var")) {
    map([](double x) { return 1 + 0.25 * std::abs(x); });
  } else if (EndsWith(name, "running_mean")) {
    map([](double x) { return 0.1 * x; });
  } else if (EndsWith(name, ".scale")) {
    map([](double x) { return 1 + 0.1 * x; });
  } else if (EndsWith(name, ".bias") || EndsWith(name, ".offset")) {
    map([](double x) { return 0.1 * x; });
  } else if (EndsWith(name, ".weight") && shape.rank() >= 2) {
    // Variance 1/fan_in (x is uniform with variance 1/3). Dense weights are
    // [in, out]; convolution filters HWIO or OIHW, where the output
    // features are the larger of the two outer dimensions.
    int64_t fan_in = shape.dimensions(0);
    if (shape.rank() > 2) fan_in = n / std::max<int64_t>(1, std::max(shape.dimensions(0), shape.dimensions(shape.rank() - 1)));
    const double scale = std::sqrt(3.0 / static_cast<double>(std::max<int64_t>(1, fan_in)));
    map([&](double x) { return scale * x; });
  } else if ((name == "labels" || EndsWith(name, ".labels")) && shape.rank() == 2) {
    // One-hot rows.
    const int64_t classes = shape.dimensions(1);
    std::mt19937_64 gen(seed);
    for (int64_t i = 0; i < n; ++i) l.SetDouble(i, 0);
    for (int64_t row = 0; row < shape.dimensions(0) && classes > 0; ++row) {
      l.SetDouble(row * classes + static_cast<int64_t>(gen() % static_cast<uint64_t>(classes)), 1);
    }
  }
}

}  // namespace

std::vector<Literal> MakeRandomArguments(const HloComputation& computation, uint64_t seed) {
  std::vector<Literal> args;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    args.push_back(MakeRandomLiteral(p->shape(), seed * 1000003 + i, std::min<int64_t>(8, IndexBound(p))));
    ShapeLikeTrainingState(p->name(), seed * 1000003 + i, args.back());
  }
  return args;
}

}  // namespace passlab
