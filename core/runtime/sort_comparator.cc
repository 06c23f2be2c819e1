#include "core/runtime/sort_comparator.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab {
namespace {

using routine_internal::FloatFromBits;
using routine_internal::FloatTotalOrderKey;
using routine_internal::LoadBits;
using routine_internal::SignExtend;

uint64_t MaskOf(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return 1;
  const int width = PrimitiveBitWidth(t);
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

uint64_t FloatToBits(PrimitiveType t, double v) {
  if (t == PrimitiveType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    return bits;
  }
  if (t == PrimitiveType::kF32) {
    float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return bits;
  }
  return DoubleToSmallFloatBits(t, v);
}

template <typename T>
bool Ordered(T x, T y, ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return x == y;
    case ComparisonDirection::kNe: return x != y;
    case ComparisonDirection::kLt: return x < y;
    case ComparisonDirection::kLe: return x <= y;
    case ComparisonDirection::kGt: return x > y;
    case ComparisonDirection::kGe: return x >= y;
  }
  return false;
}

bool IsSupportedScalar(PrimitiveType t) {
  return t == PrimitiveType::kPred || IsFloatingPointType(t) || PrimitiveBitWidth(t) <= 64;
}

absl::Status NotSupported(const HloInstruction& sort, const HloInstruction& inst, std::string_view why) {
  return routine_internal::Unimplemented(
      sort, StrCat("comparator instruction ", inst.name(), " (", HloOpcodeString(inst.opcode()), "): ", why));
}

}  // namespace

absl::StatusOr<SortComparator> SortComparator::Compile(const HloInstruction& sort) {
  const HloComputation* c = sort.to_apply();
  if (c == nullptr) return routine_internal::Unimplemented(sort, "no comparator computation");
  if (c->num_parameters() != 2 * sort.operand_count()) {
    return routine_internal::Unimplemented(
        sort, StrCat("the comparator takes ", c->num_parameters(), " parameters for ", sort.operand_count(),
                     " operands"));
  }
  SortComparator out;
  absl::flat_hash_map<const HloInstruction*, int32_t> slot;
  for (const HloInstruction* inst : c->MakeInstructionPostOrder()) {
    Step s;
    s.opcode = inst->opcode();
    if (!inst->shape().IsArray() || inst->shape().rank() != 0) {
      return NotSupported(sort, *inst, StrCat("not a scalar (", inst->shape().ToString(), ")"));
    }
    s.type = inst->shape().element_type();
    if (IsComplexType(s.type) || !IsSupportedScalar(s.type)) {
      // Complex operands that the comparator never reads are fine: only
      // parameters may be complex, and only when unused.
      if (inst->opcode() != HloOpcode::kParameter || !inst->users().empty()) {
        return NotSupported(sort, *inst, StrCat(PrimitiveTypeName(s.type), " values"));
      }
    }
    if (inst->operand_count() > 3) return NotSupported(sort, *inst, "more than three operands");
    s.arity = static_cast<int32_t>(inst->operand_count());
    for (int32_t i = 0; i < s.arity; ++i) s.operands[i] = slot.at(inst->operand(i));
    if (inst->operand_count() > 0) s.operand_type = inst->operand(0)->shape().element_type();
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
        s.constant = static_cast<uint64_t>(inst->parameter_number());
        break;
      case HloOpcode::kConstant:
        if (!inst->has_literal()) return NotSupported(sort, *inst, "constant without a value");
        s.constant = inst->literal().GetBits(0) & MaskOf(s.type);
        break;
      case HloOpcode::kCompare: {
        if (IsComplexType(s.operand_type)) return NotSupported(sort, *inst, "complex compare");
        s.direction = inst->attrs().comparison_direction;
        ComparisonType t = inst->attrs().comparison_type;
        s.total_order = IsFloatingPointType(s.operand_type) && t == ComparisonType::kTotalOrder;
        break;
      }
      case HloOpcode::kAnd:
      case HloOpcode::kOr:
      case HloOpcode::kXor:
      case HloOpcode::kNot:
        if (IsFloatingPointType(s.type)) return NotSupported(sort, *inst, "bitwise op on floats");
        break;
      case HloOpcode::kSelect:
      case HloOpcode::kConvert:
      case HloOpcode::kNegate:
      case HloOpcode::kCopy:
        break;
      case HloOpcode::kBitcastConvert:
      case HloOpcode::kBitcast:  // of a scalar: XLA's no-op bitcast-convert
        if (PrimitiveBitWidth(s.type) != PrimitiveBitWidth(s.operand_type)) {
          return NotSupported(sort, *inst, "width-changing bitcast-convert");
        }
        break;
      default:
        return NotSupported(sort, *inst, "not supported by the runtime's sort comparator");
    }
    slot[inst] = static_cast<int32_t>(out.steps_.size());
    out.steps_.push_back(s);
  }
  const HloInstruction* root = c->root_instruction();
  if (root->shape().element_type() != PrimitiveType::kPred) {
    return NotSupported(sort, *root, "the comparator must return pred");
  }
  out.root_ = slot.at(root);
  out.RecognizeKeyCompare();
  return out;
}

std::vector<uint8_t> SortComparator::Sides() const {
  std::vector<uint8_t> sides(steps_.size(), 0);
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (s.opcode == HloOpcode::kParameter) {
      sides[i] = s.constant % 2 == 0 ? 1 : 2;
      continue;
    }
    for (int32_t k = 0; k < s.arity; ++k) sides[i] |= sides[s.operands[k]];
  }
  return sides;
}

bool SortComparator::Mirrors(int32_t x, int32_t y) const {
  // A slot both sides share reads neither (RecognizeKeyCompare checks).
  if (x == y) return true;
  const Step& a = steps_[x];
  const Step& b = steps_[y];
  if (a.opcode != b.opcode || a.type != b.type || a.operand_type != b.operand_type || a.direction != b.direction ||
      a.total_order != b.total_order) {
    return false;
  }
  if (a.opcode == HloOpcode::kParameter) return (a.constant ^ 1) == b.constant;
  if (a.opcode == HloOpcode::kConstant) return a.constant == b.constant;
  for (int32_t k = 0; k < a.arity; ++k) {
    if (!Mirrors(a.operands[k], b.operands[k])) return false;
  }
  return true;
}

void SortComparator::RecognizeKeyCompare() {
  const Step& root = steps_[root_];
  if (root.opcode != HloOpcode::kCompare) return;
  const std::vector<uint8_t> sides = Sides();
  const int32_t x = root.operands[0], y = root.operands[1];
  bool swapped;
  if (sides[x] == 1 && sides[y] == 2) {
    swapped = false;
  } else if (sides[x] == 2 && sides[y] == 1) {
    swapped = true;
  } else {
    return;
  }
  if (!Mirrors(x, y)) return;
  key_slot_ = swapped ? y : x;
  key_compare_ = KeyCompare{root.operand_type, root.direction, root.total_order, swapped};
}

uint64_t SortComparator::Compare(const Step& s, uint64_t x, uint64_t y) const {
  const PrimitiveType t = s.operand_type;
  if (IsFloatingPointType(t)) {
    if (s.total_order) return Ordered(FloatTotalOrderKey(t, x), FloatTotalOrderKey(t, y), s.direction);
    return Ordered(FloatFromBits(t, x), FloatFromBits(t, y), s.direction);
  }
  if (IsSignedIntegralType(t)) return Ordered(SignExtend(t, x), SignExtend(t, y), s.direction);
  return Ordered(x, y, s.direction);
}

uint64_t SortComparator::Convert(const Step& s, uint64_t x) const {
  const PrimitiveType from = s.operand_type, to = s.type;
  if (to == PrimitiveType::kPred) {
    return IsFloatingPointType(from) ? FloatFromBits(from, x) != 0 : x != 0;
  }
  if (IsFloatingPointType(to)) {
    double v = IsFloatingPointType(from)          ? FloatFromBits(from, x)
               : IsSignedIntegralType(from)       ? static_cast<double>(SignExtend(from, x))
                                                  : static_cast<double>(x);
    return FloatToBits(to, v);
  }
  if (IsFloatingPointType(from)) {
    // Saturating, NaN to zero (XLA's float-to-int conversion).
    double v = std::trunc(FloatFromBits(from, x));
    if (std::isnan(v)) return 0;
    const int width = PrimitiveBitWidth(to);
    if (IsSignedIntegralType(to)) {
      double hi = std::ldexp(1.0, width - 1);
      int64_t i = v >= hi ? static_cast<int64_t>((uint64_t{1} << (width - 1)) - 1)
                  : v < -hi ? static_cast<int64_t>(~uint64_t{0} << (width - 1))
                            : static_cast<int64_t>(v);
      return static_cast<uint64_t>(i) & MaskOf(to);
    }
    double hi = std::ldexp(1.0, width);
    return v <= 0 ? 0 : v >= hi ? MaskOf(to) : static_cast<uint64_t>(v);
  }
  uint64_t wide = IsSignedIntegralType(from) ? static_cast<uint64_t>(SignExtend(from, x)) : x;
  return wide & MaskOf(to);
}

bool SortComparator::Less(absl::Span<const uint8_t* const> operands, int64_t a, int64_t b,
                          std::vector<uint64_t>& slots) const {
  Evaluate(operands, a, b, slots);
  return slots[root_] != 0;
}

uint64_t SortComparator::KeyBits(absl::Span<const uint8_t* const> operands, int64_t x,
                                 std::vector<uint64_t>& slots) const {
  Evaluate(operands, x, x, slots);
  return slots[key_slot_];
}

void SortComparator::Evaluate(absl::Span<const uint8_t* const> operands, int64_t a, int64_t b,
                              std::vector<uint64_t>& slots) const {
  slots.resize(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    const uint64_t x = slots[s.operands[0]], y = slots[s.operands[1]];
    uint64_t& r = slots[i];
    switch (s.opcode) {
      case HloOpcode::kParameter: {
        const int64_t p = static_cast<int64_t>(s.constant);
        r = IsComplexType(s.type) ? 0 : LoadBits(s.type, operands[p / 2], p % 2 == 0 ? a : b) & MaskOf(s.type);
        break;
      }
      case HloOpcode::kConstant: r = s.constant; break;
      case HloOpcode::kCompare: r = Compare(s, x, y); break;
      case HloOpcode::kAnd: r = x & y; break;
      case HloOpcode::kOr: r = x | y; break;
      case HloOpcode::kXor: r = x ^ y; break;
      case HloOpcode::kNot: r = ~x & MaskOf(s.type); break;
      case HloOpcode::kSelect: r = x != 0 ? y : slots[s.operands[2]]; break;
      case HloOpcode::kConvert: r = Convert(s, x); break;
      case HloOpcode::kBitcastConvert:
      case HloOpcode::kBitcast:
      case HloOpcode::kCopy: r = x; break;
      case HloOpcode::kNegate:
        r = IsFloatingPointType(s.type) ? x ^ (uint64_t{1} << (PrimitiveBitWidth(s.type) - 1))
                                        : (~x + 1) & MaskOf(s.type);
        break;
      default: r = 0; break;  // Compile admits no other opcode
    }
  }
}

}  // namespace passlab
