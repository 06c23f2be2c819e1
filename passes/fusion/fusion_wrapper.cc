#include "passes/fusion/fusion_wrapper.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"
#include "passes/fusion/gpu_performance_model.h"

namespace passlab {
namespace {

// XLA's FusionWrapper::MustWrapInstruction list, less what passlab's
// emitters cannot compile inside a fusion (see the header). An allow-list:
// a new opcode stays unwrapped until someone checks the emitters.
bool IsWrappedOpcode(HloOpcode op) {
  static const auto* kOps = new absl::flat_hash_set<HloOpcode>{
      HloOpcode::kAbs, HloOpcode::kAcos, HloOpcode::kAcosh, HloOpcode::kAsin, HloOpcode::kAsinh,
      HloOpcode::kAdd, HloOpcode::kAnd, HloOpcode::kAtan2, HloOpcode::kAtanh, HloOpcode::kBitcastConvert,
      HloOpcode::kBroadcast, HloOpcode::kCeil, HloOpcode::kCbrt, HloOpcode::kClamp, HloOpcode::kClz,
      HloOpcode::kCompare, HloOpcode::kConcatenate, HloOpcode::kConvolution, HloOpcode::kConvert,
      HloOpcode::kCos, HloOpcode::kCosh, HloOpcode::kDivide, HloOpcode::kDot, HloOpcode::kDynamicSlice,
      HloOpcode::kErf, HloOpcode::kExp, HloOpcode::kExpm1, HloOpcode::kFloor,
      HloOpcode::kGather, HloOpcode::kIota, HloOpcode::kIsFinite, HloOpcode::kLog, HloOpcode::kLog1p,
      HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kMultiply, HloOpcode::kMulhi, HloOpcode::kNegate,
      HloOpcode::kNot, HloOpcode::kOr, HloOpcode::kPad, HloOpcode::kPopulationCount, HloOpcode::kPower,
      HloOpcode::kReshape, HloOpcode::kReduce, HloOpcode::kReduceWindow, HloOpcode::kRemainder,
      HloOpcode::kReverse, HloOpcode::kRoundNearestAfz, HloOpcode::kRoundNearestEven, HloOpcode::kRsqrt,
      HloOpcode::kSelect, HloOpcode::kShiftLeft, HloOpcode::kShiftRightLogical,
      HloOpcode::kShiftRightArithmetic, HloOpcode::kSign, HloOpcode::kSin, HloOpcode::kSinh, HloOpcode::kSlice,
      HloOpcode::kSqrt, HloOpcode::kSubtract, HloOpcode::kTan, HloOpcode::kTanh, HloOpcode::kTranspose,
      HloOpcode::kXor};
  return kOps->contains(op);
}

bool MustWrap(const HloInstruction& h) {
  if (!IsWrappedOpcode(h.opcode()) || h.HasSideEffect()) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!IsEmittableArrayShape(operand->shape())) return false;
  }
  bool emittable = true;
  ForEachSubshape(h.shape(), [&](const Shape& s, const ShapeIndex&) {
    if (!s.IsTuple() && !IsEmittableArrayShape(s)) emittable = false;
  });
  return emittable;
}

// XLA's ChooseFusionKind for a lone op: kInput for the kernels with a hero
// (reductions, tiled transposes), kLoop otherwise.
FusionKind KindOf(const HloInstruction& h) {
  KernelEmitterKind kind = EmitterKindOf(nullptr, h);
  return kind == KernelEmitterKind::kReduction || kind == KernelEmitterKind::kTranspose ? FusionKind::kInput
                                                                                       : FusionKind::kLoop;
}

absl::Status Wrap(HloInstruction* instruction) {
  HloComputation* computation = instruction->parent();
  HloModule* module = computation->parent();
  const std::string opcode(HloOpcodeString(instruction->opcode()));
  HloComputation* body = module->AddEmbeddedComputation(
      std::make_unique<HloComputation>(StrCat("wrapped_", opcode, "_computation")));
  std::vector<HloInstruction*> operands;
  std::vector<HloInstruction*> parameters;  // per operand slot
  for (HloInstruction* operand : instruction->operands()) {
    auto it = std::find(operands.begin(), operands.end(), operand);
    if (it != operands.end()) {
      parameters.push_back(parameters[it - operands.begin()]);
      continue;
    }
    const int64_t n = static_cast<int64_t>(operands.size());
    operands.push_back(operand);
    parameters.push_back(
        body->AddParameter(HloInstruction::CreateParameter(n, operand->shape(), StrCat("param_", n))));
  }
  body->set_root_instruction(
      body->AddInstruction(instruction->CloneWithNewOperands(instruction->shape(), parameters)));
  HloInstruction* fusion = computation->AddInstruction(
      HloInstruction::CreateFusion(instruction->shape(), KindOf(*instruction), operands, body),
      StrCat("wrapped_", opcode));
  fusion->set_metadata(instruction->metadata());
  instruction->CopyControlDependenciesTo(fusion);
  instruction->DropAllControlDeps();
  return computation->ReplaceInstruction(instruction, fusion);
}

absl::StatusOr<bool> WrapComputation(HloComputation& computation) {
  bool changed = false;
  for (HloInstruction* h : computation.MakeInstructionPostOrder()) {
    const HloOpcode op = h->opcode();
    if (op == HloOpcode::kConditional || op == HloOpcode::kWhile || op == HloOpcode::kCall ||
        op == HloOpcode::kAsyncStart) {
      for (HloComputation* called : h->called_computations()) {
        if (called == nullptr) continue;
        ASSIGN_OR_RETURN(bool c, WrapComputation(*called));
        changed |= c;
      }
      continue;
    }
    if (!MustWrap(*h)) continue;
    RETURN_IF_ERROR(Wrap(h));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> FusionWrapper::RunImpl(HloModule& module, PassRunContext*) {
  absl::StatusOr<bool> changed = WrapComputation(*module.entry_computation());
  if (changed.ok() && *changed) BumpCounter("ops wrapped");
  return changed;
}

}  // namespace passlab
