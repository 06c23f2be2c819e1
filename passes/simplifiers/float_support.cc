#include "passes/simplifiers/float_support.h"

#include <algorithm>
#include <initializer_list>

namespace passlab {
namespace {

bool OneOf(HloOpcode opcode, std::initializer_list<HloOpcode> opcodes) {
  return std::find(opcodes.begin(), opcodes.end(), opcode) != opcodes.end();
}

// Instructions that pass values through without computing on them.
bool IsPassThrough(HloOpcode opcode) {
  return OneOf(opcode, {HloOpcode::kCall, HloOpcode::kConditional, HloOpcode::kCustomCall, HloOpcode::kDomain,
                        HloOpcode::kGetTupleElement, HloOpcode::kTuple, HloOpcode::kWhile,
                        HloOpcode::kOptimizationBarrier});
}

}  // namespace

bool FloatSupport::SupportsLowPrecisionOperand(const HloInstruction& inst, int64_t operand_index) const {
  if (IsPassThrough(inst.opcode())) return true;
  if (inst.opcode() == HloOpcode::kConvert) return inst.operand(0)->shape().element_type() == low_;
  return false;
}

bool FloatSupport::SupportsLowPrecisionOutput(const HloInstruction& inst) const {
  if (IsPassThrough(inst.opcode())) return true;
  if (inst.opcode() == HloOpcode::kConvert) return inst.shape().element_type() == low_;
  return false;
}

bool FloatSupport::SupportsMixedPrecisions(const HloInstruction& inst) const {
  return IsPassThrough(inst.opcode()) || inst.opcode() == HloOpcode::kConvert;
}

bool FloatSupport::EffectiveOperandPrecisionIsOutputPrecision(const HloInstruction& inst, int64_t operand_index) {
  const HloOpcode op = inst.opcode();
  if (OneOf(op, {HloOpcode::kAbs, HloOpcode::kAllGather, HloOpcode::kAllToAll, HloOpcode::kBroadcast,
                 HloOpcode::kClamp, HloOpcode::kCollectivePermute, HloOpcode::kConcatenate, HloOpcode::kConvert,
                 HloOpcode::kCopy, HloOpcode::kDomain, HloOpcode::kGetTupleElement, HloOpcode::kMaximum,
                 HloOpcode::kMinimum, HloOpcode::kPad, HloOpcode::kReshape, HloOpcode::kReverse, HloOpcode::kSlice,
                 HloOpcode::kSort, HloOpcode::kTranspose, HloOpcode::kTuple, HloOpcode::kOptimizationBarrier})) {
    return true;
  }
  if (op == HloOpcode::kBitcast) return inst.shape().element_type() == inst.operand(0)->shape().element_type();
  if (op == HloOpcode::kDynamicSlice || op == HloOpcode::kGather) return operand_index == 0;
  if (op == HloOpcode::kDynamicUpdateSlice) return operand_index == 0 || operand_index == 1;
  if (op == HloOpcode::kSelect) return operand_index == 1 || operand_index == 2;
  return false;
}

bool GpuFloatSupport::IsSupported(const HloInstruction& inst) const {
  const HloOpcode op = inst.opcode();
  // Data movement.
  if (OneOf(op, {HloOpcode::kAllGather, HloOpcode::kAllReduce, HloOpcode::kAllToAll, HloOpcode::kBroadcast,
                 HloOpcode::kCollectivePermute, HloOpcode::kConcatenate, HloOpcode::kCopy,
                 HloOpcode::kDynamicSlice, HloOpcode::kDynamicUpdateSlice, HloOpcode::kGather, HloOpcode::kPad,
                 HloOpcode::kReshape, HloOpcode::kReverse, HloOpcode::kScatter, HloOpcode::kSelect,
                 HloOpcode::kSelectAndScatter, HloOpcode::kSlice, HloOpcode::kTranspose, HloOpcode::kBitcast})) {
    return true;
  }
  // bf16 arithmetic the GPU has instructions for (Hopper), and the library
  // calls.
  if (LowPrecisionType() == PrimitiveType::kBF16 &&
      OneOf(op, {HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kMultiply})) {
    return true;
  }
  return OneOf(op, {HloOpcode::kDot, HloOpcode::kConvolution});
}

bool GpuFloatSupport::SupportsLowPrecisionOperand(const HloInstruction& inst, int64_t operand_index) const {
  return FloatSupport::SupportsLowPrecisionOperand(inst, operand_index) || IsSupported(inst);
}

bool GpuFloatSupport::SupportsLowPrecisionOutput(const HloInstruction& inst) const {
  return FloatSupport::SupportsLowPrecisionOutput(inst) || IsSupported(inst);
}

bool GpuFloatSupport::SupportsMixedPrecisions(const HloInstruction& inst) const {
  return FloatSupport::SupportsMixedPrecisions(inst) || OneOf(inst.opcode(), {HloOpcode::kDot, HloOpcode::kConvolution});
}

}  // namespace passlab
