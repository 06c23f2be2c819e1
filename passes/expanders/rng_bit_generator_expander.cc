#include "passes/expanders/rng_bit_generator_expander.h"

#include <array>
#include <utility>

#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;

PrimitiveType UnsignedOfWidth(int width) {
  switch (width) {
    case 8: return PrimitiveType::kU8;
    case 16: return PrimitiveType::kU16;
    case 32: return kU32;
    default: return kU64;
  }
}

// Unsigned integer arithmetic on arrays of one shape (scalars: dims {}).
class Bits {
 public:
  Bits(ExpansionBuilder& b, std::vector<int64_t> dims) : b_(b), dims_(std::move(dims)) {}
  ExpansionBuilder& builder() { return b_; }

  HloInstruction* Const(PrimitiveType type, uint64_t value) {
    Literal l(Shape::Scalar(type));
    l.SetBits(0, value);
    return Splat(b_.ConstantLiteral(std::move(l)));
  }
  HloInstruction* Splat(HloInstruction* scalar) { return dims_.empty() ? scalar : b_.Broadcast(scalar, dims_); }
  HloInstruction* Add(HloInstruction* a, HloInstruction* c) { return b_.Binary(HloOpcode::kAdd, a, c); }
  HloInstruction* Mul(HloInstruction* a, HloInstruction* c) { return b_.Binary(HloOpcode::kMultiply, a, c); }
  HloInstruction* Xor(HloInstruction* a, HloInstruction* c) { return b_.Binary(HloOpcode::kXor, a, c); }
  HloInstruction* Or(HloInstruction* a, HloInstruction* c) { return b_.Binary(HloOpcode::kOr, a, c); }
  HloInstruction* Shl(HloInstruction* a, int n) {
    return b_.Binary(HloOpcode::kShiftLeft, a, Const(a->shape().element_type(), n));
  }
  HloInstruction* Shr(HloInstruction* a, int n) {
    return b_.Binary(HloOpcode::kShiftRightLogical, a, Const(a->shape().element_type(), n));
  }
  HloInstruction* RotateLeft(HloInstruction* x, int n) { return Or(Shl(x, n), Shr(x, 32 - n)); }
  HloInstruction* Lo32(HloInstruction* x) { return b_.Convert(x, kU32); }
  HloInstruction* Hi32(HloInstruction* x) { return b_.Convert(Shr(x, 32), kU32); }
  HloInstruction* Join64(HloInstruction* lo, HloInstruction* hi) {
    return Or(b_.Convert(lo, kU64), Shl(b_.Convert(hi, kU64), 32));
  }

 private:
  ExpansionBuilder& b_;
  std::vector<int64_t> dims_;
};

struct Key {
  HloInstruction* k0;  // u32 scalars
  HloInstruction* k1;
};

// Threefry-2x32 with 20 rounds on u32 arrays.
std::array<HloInstruction*, 2> ThreeFry(Bits& v, Bits& s, std::array<HloInstruction*, 2> x, Key key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  HloInstruction* ks[3] = {key.k0, key.k1, s.Xor(s.Xor(s.Const(kU32, 0x1BD11BDAu), key.k0), key.k1)};
  x[0] = v.Add(x[0], v.Splat(ks[0]));
  x[1] = v.Add(x[1], v.Splat(ks[1]));
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x[0] = v.Add(x[0], x[1]);
      x[1] = v.Xor(v.RotateLeft(x[1], kRotations[(group % 2) * 4 + r]), x[0]);
    }
    x[0] = v.Add(x[0], v.Splat(ks[(group + 1) % 3]));
    x[1] = v.Add(x[1], v.Splat(s.Add(ks[(group + 2) % 3], s.Const(kU32, group + 1))));
  }
  return x;
}

// Philox-4x32 with 10 rounds on u32 arrays.
std::array<HloInstruction*, 4> Philox(Bits& v, Bits& s, std::array<HloInstruction*, 4> x, Key key) {
  ExpansionBuilder& b = v.builder();
  for (int round = 0; round < 10; ++round) {
    HloInstruction* p0 = v.Mul(b.Convert(x[0], kU64), v.Const(kU64, 0xD2511F53u));
    HloInstruction* p1 = v.Mul(b.Convert(x[2], kU64), v.Const(kU64, 0xCD9E8D57u));
    x = {v.Xor(v.Xor(v.Hi32(p1), x[1]), v.Splat(key.k0)), v.Lo32(p1),
         v.Xor(v.Xor(v.Hi32(p0), x[3]), v.Splat(key.k1)), v.Lo32(p0)};
    key.k0 = s.Add(key.k0, s.Const(kU32, 0x9E3779B9u));
    key.k1 = s.Add(key.k1, s.Const(kU32, 0xBB67AE85u));
  }
  return x;
}

// Arrays of shape `dims` stacked along a new dimension `at` of size parts.size().
HloInstruction* Interleave(ExpansionBuilder& b, const std::vector<HloInstruction*>& parts, std::vector<int64_t> dims,
                           int64_t at) {
  std::vector<int64_t> with_one = dims;
  with_one.insert(with_one.begin() + at, 1);
  std::vector<HloInstruction*> reshaped;
  for (HloInstruction* p : parts) reshaped.push_back(b.Reshape(p, with_one));
  return b.Concatenate(reshaped, at);
}

// The u64 scalar state[i].
HloInstruction* StateWord(ExpansionBuilder& b, HloInstruction* state, int64_t i) { return b.ElementAsScalar(state, i); }

// state with words [1, 1 + replacement.size()) replaced by the u64 scalars.
HloInstruction* ReplaceStateWords(ExpansionBuilder& b, HloInstruction* state,
                                  const std::vector<HloInstruction*>& replacement) {
  int64_t words = state->shape().dimensions(0);
  std::vector<HloInstruction*> parts = {b.Slice(state, {0}, {1})};
  for (HloInstruction* w : replacement) parts.push_back(b.Reshape(w, {1}));
  int64_t next = 1 + static_cast<int64_t>(replacement.size());
  if (next < words) parts.push_back(b.Slice(state, {next}, {words}));
  return b.Concatenate(parts, 0);
}

// Raw u32 (width <= 32) or u64 values of the data shape -> the data type.
HloInstruction* ToDataType(ExpansionBuilder& b, HloInstruction* raw, const Shape& data) {
  int width = PrimitiveBitWidth(data.element_type());
  HloInstruction* bits = b.Reshape(b.Convert(raw, UnsignedOfWidth(width)), data.dimensions());
  if (bits->shape().element_type() == data.element_type()) return bits;
  return b.Add(HloInstruction::Create(HloOpcode::kBitcastConvert, Shape(data.element_type(), data.dimensions()), {bits}));
}

// Builds (new state, data) for three-fry.
std::pair<HloInstruction*, HloInstruction*> ExpandThreeFry(ExpansionBuilder& b, HloInstruction* state,
                                                           const Shape& data) {
  Bits s(b, {});
  HloInstruction* key = StateWord(b, state, 0);
  Key k = {s.Lo32(key), s.Hi32(key)};
  HloInstruction* start = StateWord(b, state, 1);
  const int width = PrimitiveBitWidth(data.element_type());
  const std::vector<int64_t>& dims = data.dimensions();
  // One block per element (64-bit), else one per two elements along `split`.
  int64_t split = -1;
  std::vector<int64_t> half = dims;
  if (width != 64) {
    for (size_t i = 0; i < dims.size() && split < 0; ++i) {
      if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
    }
    if (split < 0) {  // no even dimension: the (first) largest
      for (size_t i = 0; i < dims.size(); ++i) {
        if (split < 0 || dims[i] > dims[split]) split = static_cast<int64_t>(i);
      }
    }
    if (split >= 0) half[split] = (dims[split] + 1) / 2;
  }
  int64_t blocks = 1;
  for (int64_t h : half) blocks *= h;
  Bits v(b, {blocks});
  HloInstruction* counters = v.Add(v.Splat(start), b.Add(HloInstruction::CreateIota(Shape(kU64, {blocks}), 0)));
  std::array<HloInstruction*, 2> y = ThreeFry(v, s, {v.Lo32(counters), v.Hi32(counters)}, k);
  HloInstruction* raw;
  if (width == 64) {
    raw = v.Join64(y[0], y[1]);
  } else if (split < 0) {
    raw = y[0];  // a scalar takes word 0 of one block
  } else {
    raw = Interleave(b, {b.Reshape(y[0], half), b.Reshape(y[1], half)}, half, split + 1);
    std::vector<int64_t> merged = half;
    merged[split] *= 2;
    raw = b.Reshape(raw, merged);
    if (merged[split] != dims[split]) {
      std::vector<int64_t> zeros(dims.size(), 0);
      raw = b.Slice(raw, zeros, dims);
    }
  }
  HloInstruction* next = s.Add(start, s.Const(kU64, static_cast<uint64_t>(blocks)));
  return {ReplaceStateWords(b, state, {next}), ToDataType(b, raw, data)};
}

// Builds (new state, data) for philox.
std::pair<HloInstruction*, HloInstruction*> ExpandPhilox(ExpansionBuilder& b, HloInstruction* state,
                                                         const Shape& data) {
  Bits s(b, {});
  const int64_t words = state->shape().dimensions(0);
  HloInstruction* key = StateWord(b, state, 0);
  Key k = {s.Lo32(key), s.Hi32(key)};
  HloInstruction* low = StateWord(b, state, 1);
  HloInstruction* high = StateWord(b, state, words >= 3 ? 2 : 0);
  const int width = PrimitiveBitWidth(data.element_type());
  const int64_t n = data.element_count();
  const int64_t per_block = width == 64 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  // 128-bit counters (low, high) + b for b in [0, blocks).
  Bits v(b, {blocks});
  HloInstruction* low_b = v.Add(v.Splat(low), b.Add(HloInstruction::CreateIota(Shape(kU64, {blocks}), 0)));
  HloInstruction* carry = b.Convert(b.Compare(low_b, v.Splat(low), ComparisonDirection::kLt), kU64);
  HloInstruction* high_b = v.Add(v.Splat(high), carry);
  std::array<HloInstruction*, 4> y = Philox(v, s, {v.Lo32(low_b), v.Hi32(low_b), v.Lo32(high_b), v.Hi32(high_b)}, k);
  HloInstruction* raw = width == 64 ? Interleave(b, {v.Join64(y[0], y[1]), v.Join64(y[2], y[3])}, {blocks}, 1)
                                    : Interleave(b, {y[0], y[1], y[2], y[3]}, {blocks}, 1);
  raw = b.Reshape(raw, {blocks * per_block});
  if (blocks * per_block != n) raw = b.Slice(raw, {0}, {n});
  // The counter advances by the blocks used, with carry into the high word.
  HloInstruction* next_low = s.Add(low, s.Const(kU64, static_cast<uint64_t>(blocks)));
  HloInstruction* next_carry = b.Convert(b.Compare(next_low, low, ComparisonDirection::kLt), kU64);
  std::vector<HloInstruction*> replaced = {next_low};
  if (words >= 3) replaced.push_back(s.Add(high, next_carry));
  return {ReplaceStateWords(b, state, replaced), ToDataType(b, raw, data)};
}

std::string ShapeTag(const Shape& s) {
  return StrCat(PrimitiveTypeName(s.element_type()), s.rank() == 0 ? "" : "_", Join(s.dimensions(), "x"));
}

}  // namespace

bool RngBitGeneratorExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kRngBitGenerator) return false;
  const Shape& shape = inst->shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) return false;
  const Shape& state = inst->operand(0)->shape();
  const Shape& data = shape.tuple_shapes(1);
  if (state.element_type() != kU64 || state.rank() != 1 || state.dimensions(0) < 2) return false;
  if (!data.IsArray() || data.element_type() == PrimitiveType::kPred || IsComplexType(data.element_type())) {
    return false;
  }
  int width = PrimitiveBitWidth(data.element_type());
  return width == 8 || width == 16 || width == 32 || width == 64;
}

absl::StatusOr<HloInstruction*> RngBitGeneratorExpander::ExpandInstruction(HloInstruction* inst) {
  RandomAlgorithm algorithm = inst->attrs().rng_algorithm;
  if (algorithm == RandomAlgorithm::kDefault) algorithm = options_.default_algorithm;
  if (algorithm == RandomAlgorithm::kDefault) {
    return absl::InvalidArgumentError("RngBitGeneratorExpanderOptions::default_algorithm must be a real algorithm");
  }
  const Shape& state_shape = inst->operand(0)->shape();
  const Shape& data = inst->shape().tuple_shapes(1);
  HloModule* module = inst->GetModule();
  std::string name = StrCat(algorithm == RandomAlgorithm::kThreeFry ? "rng_three_fry_" : "rng_philox_",
                            ShapeTag(state_shape), "_to_", ShapeTag(data));
  // One generated computation per algorithm and shapes, shared by callers.
  HloComputation* generator = module->GetComputationWithName(name);
  if (generator == nullptr || generator->num_parameters() != 1 ||
      generator->parameter_instruction(0)->shape() != state_shape ||
      generator->root_instruction()->shape() != inst->shape()) {
    generator = module->AddEmbeddedComputation(std::make_unique<HloComputation>(name));
    ExpansionBuilder b(generator, inst->metadata());
    HloInstruction* state = generator->AddParameter(HloInstruction::CreateParameter(0, state_shape, "state"));
    auto [new_state, bits] = algorithm == RandomAlgorithm::kThreeFry ? ExpandThreeFry(b, state, data)
                                                                     : ExpandPhilox(b, state, data);
    generator->set_root_instruction(b.Tuple({new_state, bits}));
  }
  ExpansionBuilder outer(inst->parent(), inst->metadata());
  return outer.Add(HloInstruction::CreateCall(inst->shape(), {inst->mutable_operand(0)}, generator));
}

}  // namespace passlab
