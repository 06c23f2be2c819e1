// Random numbers. rng-bit-generator is bit-exact with XLA's expansion
// (RngBitGeneratorExpander over prng.cc): state[0] is the key; three-fry
// counts from state[1], philox from the 128-bit counter (state[1], state[2])
// or, for a two-word state, (state[1], state[0]). RNG_DEFAULT means philox,
// the CPU and GPU backends' choice. `rng` draws from philox keyed by
// EvaluatorOptions::rng_seed, a new counter block per evaluation.
#include <cmath>
#include <numbers>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::eval {

std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> x, std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u, p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    x = {static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += 0x9E3779B9u;
    key[1] += 0xBB67AE85u;
  }
  return x;
}

std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDAu ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      int rot = kRotations[(group % 2) * 4 + r];
      x[0] += x[1];
      x[1] = (x[1] << rot) | (x[1] >> (32 - rot));
      x[1] ^= x[0];
    }
    x[0] += ks[(group + 1) % 3];
    x[1] += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return x;
}

namespace {

uint32_t Lo(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t Hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

struct U128 {
  uint64_t low, high;
  U128 Plus(uint64_t n) const {
    uint64_t l = low + n;
    return {l, l < low ? high + 1 : high};
  }
  std::array<uint32_t, 4> Words() const { return {Lo(low), Hi(low), Lo(high), Hi(high)}; }
};

// Stores the low `width` bits of v at element i.
void Store(Literal& out, int64_t i, uint64_t v, int width) {
  out.SetBits(i, width >= 64 ? v : v & ((uint64_t{1} << width) - 1));
}

absl::StatusOr<Literal> ThreeFryBits(const Literal& state, const Shape& data_shape, Literal& new_state) {
  if (state.element_count() < 2) return absl::InvalidArgumentError("three-fry needs a u64[2] state");
  uint64_t key = state.GetUint(0), start = state.GetUint(1);
  std::array<uint32_t, 2> k = {Lo(key), Hi(key)};
  Literal out(data_shape);
  int width = PrimitiveBitWidth(data_shape.element_type());
  int64_t n = out.element_count();
  auto block = [&](uint64_t counter) { return ThreeFry2x32({Lo(counter), Hi(counter)}, k); };
  uint64_t used;
  if (width == 64) {
    for (int64_t i = 0; i < n; ++i) {
      std::array<uint32_t, 2> x = block(start + static_cast<uint64_t>(i));
      out.SetBits(i, uint64_t{x[0]} | uint64_t{x[1]} << 32);
    }
    used = static_cast<uint64_t>(n);
  } else {
    // XLA splits the shape in halves along the first even dimension (else
    // the largest): element c of that dimension takes word c % 2 of the
    // block counted at c / 2.
    const std::vector<int64_t>& dims = data_shape.dimensions();
    int64_t split = -1;
    for (size_t i = 0; i < dims.size() && split < 0; ++i) {
      if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
    }
    if (split < 0) {
      for (size_t i = 0; i < dims.size(); ++i) {
        if (split < 0 || dims[i] > dims[split]) split = static_cast<int64_t>(i);
      }
    }
    std::vector<int64_t> half = dims;
    if (split >= 0) half[split] = (dims[split] + 1) / 2;
    used = 1;
    for (int64_t h : half) used *= static_cast<uint64_t>(h);
    Index h;
    if (!dims.empty()) ForEachIndex(dims, [&](const Index& idx, int64_t linear) {
      h = idx;
      h[split] /= 2;
      std::array<uint32_t, 2> x = block(start + static_cast<uint64_t>(Linear(h, half)));
      Store(out, linear, x[idx[split] % 2], width);
    });
    if (dims.empty()) Store(out, 0, block(start)[0], width);
  }
  new_state.SetBits(0, key);
  new_state.SetBits(1, start + used);
  return out;
}

absl::StatusOr<Literal> PhiloxBits(const Literal& state, const Shape& data_shape, Literal& new_state) {
  int64_t words = state.element_count();
  if (words < 2) return absl::InvalidArgumentError("philox needs a u64[2] or u64[3] state");
  uint64_t key = state.GetUint(0);
  U128 counter = words >= 3 ? U128{state.GetUint(1), state.GetUint(2)} : U128{state.GetUint(1), state.GetUint(0)};
  std::array<uint32_t, 2> k = {Lo(key), Hi(key)};
  Literal out(data_shape);
  int width = PrimitiveBitWidth(data_shape.element_type());
  int64_t n = out.element_count();
  uint64_t blocks;
  if (width == 64) {
    blocks = static_cast<uint64_t>((n + 1) / 2);
    for (uint64_t b = 0; b < blocks; ++b) {
      std::array<uint32_t, 4> x = Philox4x32(counter.Plus(b).Words(), k);
      int64_t i = static_cast<int64_t>(2 * b);
      out.SetBits(i, uint64_t{x[0]} | uint64_t{x[1]} << 32);
      if (i + 1 < n) out.SetBits(i + 1, uint64_t{x[2]} | uint64_t{x[3]} << 32);
    }
  } else {
    blocks = static_cast<uint64_t>((n + 3) / 4);
    for (uint64_t b = 0; b < blocks; ++b) {
      std::array<uint32_t, 4> x = Philox4x32(counter.Plus(b).Words(), k);
      for (int j = 0; j < 4; ++j) {
        int64_t i = static_cast<int64_t>(4 * b) + j;
        if (i < n) Store(out, i, x[j], width);
      }
    }
  }
  U128 next = counter.Plus(blocks);
  new_state.SetBits(0, key);
  new_state.SetBits(1, next.low);
  if (words >= 3) new_state.SetBits(2, next.high);
  return out;
}

absl::StatusOr<Literal> RngBitGenerator(const HloInstruction& inst, const Literal& state) {
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return absl::InvalidArgumentError("rng-bit-generator must return (state, data)");
  }
  const Shape& data_shape = shape.tuple_shapes(1);
  int width = PrimitiveBitWidth(data_shape.element_type());
  if (width > 64 || IsComplexType(data_shape.element_type())) {
    return absl::UnimplementedError(StrCat("rng-bit-generator of ", PrimitiveTypeName(data_shape.element_type())));
  }
  Literal new_state = state;
  new_state.set_shape_layout(shape.tuple_shapes(0));
  ASSIGN_OR_RETURN(Literal data, inst.attrs().rng_algorithm == RandomAlgorithm::kThreeFry
                                     ? ThreeFryBits(state, data_shape, new_state)
                                     : PhiloxBits(state, data_shape, new_state));
  return Literal::Tuple({std::move(new_state), std::move(data)});
}

// rng(a, b) uniform in [a, b) or normal(mean a, deviation b).
absl::StatusOr<Literal> Rng(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const Shape& shape = inst.shape();
  Literal out(shape);
  PrimitiveType t = shape.element_type();
  uint64_t seed = ctx.options().rng_seed;
  U128 counter{0, ctx.NextRngCounter()};
  std::array<uint32_t, 2> key = {Lo(seed), Hi(seed)};
  auto bits64 = [&](int64_t i) {
    std::array<uint32_t, 4> x = Philox4x32(counter.Plus(static_cast<uint64_t>(i)).Words(), key);
    return std::array<uint64_t, 2>{uint64_t{x[0]} | uint64_t{x[1]} << 32, uint64_t{x[2]} | uint64_t{x[3]} << 32};
  };
  // Uniform in (0, 1] from 53 random bits.
  auto unit = [](uint64_t b) { return (static_cast<double>(b >> 11) + 1.0) * 0x1p-53; };
  bool normal = inst.attrs().distribution == RandomDistribution::kNormal;
  if (normal && !IsFloatingPointType(t)) return absl::InvalidArgumentError("rng_normal needs a float type");
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
    std::array<uint64_t, 2> b = bits64(i);
    if (normal) {
      double mu = ops[0]->GetDouble(0), sigma = ops[1]->GetDouble(0);
      double z = std::sqrt(-2.0 * std::log(unit(b[0]))) * std::cos(2 * std::numbers::pi * unit(b[1]));
      out.SetDouble(i, mu + sigma * z);
    } else if (IsFloatingPointType(t)) {
      double a = ops[0]->GetDouble(0), hi = ops[1]->GetDouble(0);
      double v = a + (unit(b[0]) - 0x1p-53) * (hi - a);
      out.SetDouble(i, v);
      if (out.GetDouble(i) >= hi && hi > a) out.SetDouble(i, a);
    } else if (t == PrimitiveType::kPred) {
      out.SetBits(i, b[0] & 1);
    } else if (IsSignedIntegralType(t)) {
      int64_t a = ops[0]->GetInt(0), hi = ops[1]->GetInt(0);
      uint64_t range = hi > a ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(a) : 0;
      out.SetInt(i, range == 0 ? a : static_cast<int64_t>(static_cast<uint64_t>(a) + b[0] % range));
    } else if (IsUnsignedIntegralType(t)) {
      uint64_t a = ops[0]->GetUint(0), hi = ops[1]->GetUint(0);
      uint64_t range = hi > a ? hi - a : 0;
      out.SetBits(i, range == 0 ? a : a + b[0] % range);
    } else {
      return absl::UnimplementedError(StrCat("rng of ", PrimitiveTypeName(t)));
    }
  }
  return out;
}

int64_t Delta(const HloInstruction& inst) {
  for (const auto& [name, value] : inst.attrs().unknown_attributes) {
    int64_t d;
    if (name == "delta" && SimpleAtoi(value, &d)) return d;
  }
  return 1;
}

}  // namespace

absl::StatusOr<Literal> EvalRng(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  switch (inst.opcode()) {
    case HloOpcode::kRngBitGenerator:
      return RngBitGenerator(inst, *ops[0]);
    case HloOpcode::kRng:
      return Rng(inst, ops, ctx);
    case HloOpcode::kRngGetAndUpdateState: {
      // Returns the state, then advances it by `delta`.
      Literal out(inst.shape());
      std::array<uint64_t, 2>& state = ctx.RngState();
      for (int64_t i = 0; i < std::min<int64_t>(out.element_count(), 2); ++i) out.SetBits(i, state[i]);
      U128 next = U128{state[0], state[1]}.Plus(static_cast<uint64_t>(Delta(inst)));
      state = {next.low, next.high};
      return out;
    }
    default:
      return absl::InternalError(StrCat("'", HloOpcodeString(inst.opcode()), "' is not a random-number op"));
  }
}

}  // namespace passlab::eval
