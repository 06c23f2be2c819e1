#include "passes/collectives/async_collective_creator.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace {

enum class AsyncForm { kNone, kOwnOpcodes, kGenericAsync };

// Bytes of an array's elements, summed over a tuple (XLA's GetShapeSize).
int64_t ResultBytes(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.element_count() * PrimitiveByteWidth(shape.element_type()) : 0;
  int64_t bytes = 0;
  for (const Shape& s : shape.tuple_shapes()) bytes += ResultBytes(s);
  return bytes;
}

// Whether the options convert this collective (XLA's MatchCollectives).
bool Converts(const HloInstruction& inst, const AsyncCollectiveCreatorOptions& o) {
  auto large_enough = [&](int64_t threshold) {
    return o.should_ignore_size_check || ResultBytes(inst.shape()) >= threshold;
  };
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
      return o.convert_all_reduce && large_enough(o.all_reduce_min_threshold_in_bytes);
    case HloOpcode::kAllGather:
      return o.convert_all_gather && large_enough(o.all_gather_min_threshold_in_bytes);
    case HloOpcode::kReduceScatter:
      return o.convert_reduce_scatter && large_enough(o.reduce_scatter_min_threshold_in_bytes);
    case HloOpcode::kCollectivePermute:
      return o.convert_collective_permute;
    case HloOpcode::kAllToAll:
      return o.convert_all_to_all;
    case HloOpcode::kCollectiveBroadcast:
      return o.convert_collective_broadcast;
    default:
      return false;
  }
}

AsyncForm FormOf(const HloInstruction& inst, const AsyncCollectiveCreatorOptions& o) {
  if (!Converts(inst, o)) return AsyncForm::kNone;
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
      // all-reduce-start's shape is inferred from its reduction: an
      // all-reduce whose reduction computes in another type (bf16 values
      // reduced in f32) stays synchronous.
      for (const HloInstruction* op : inst.operands()) {
        if (inst.to_apply() == nullptr ||
            op->shape().element_type() != inst.to_apply()->root_instruction()->shape().element_type()) {
          return AsyncForm::kNone;
        }
      }
      return o.use_generic_async_start_done ? AsyncForm::kGenericAsync : AsyncForm::kOwnOpcodes;
    case HloOpcode::kAllGather:
      return o.use_generic_async_start_done ? AsyncForm::kGenericAsync : AsyncForm::kOwnOpcodes;
    case HloOpcode::kCollectivePermute:
      // The in-place form (with offsets) keeps its synchronous spelling.
      if (inst.operand_count() != 1) return AsyncForm::kNone;
      return o.use_generic_async_start_done ? AsyncForm::kGenericAsync : AsyncForm::kOwnOpcodes;
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
      return AsyncForm::kGenericAsync;
    default:
      return AsyncForm::kNone;
  }
}

Shape OperandsShape(const HloInstruction& inst) {
  std::vector<Shape> shapes;
  for (const HloInstruction* op : inst.operands()) shapes.push_back(op->shape());
  return shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
}

// The -start of an op with its own async opcodes.
std::unique_ptr<HloInstruction> OwnStart(const HloInstruction& inst) {
  std::vector<HloInstruction*> ops(inst.operands().begin(), inst.operands().end());
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
      return HloInstruction::Create(HloOpcode::kAllReduceStart, inst.shape(), ops);
    case HloOpcode::kAllGather:
      return HloInstruction::Create(HloOpcode::kAllGatherStart, Shape::Tuple({OperandsShape(inst), inst.shape()}),
                                    ops);
    default:  // collective-permute: (operand, result, u32[], u32[])
      return HloInstruction::Create(HloOpcode::kCollectivePermuteStart,
                                    Shape::Tuple({inst.operand(0)->shape(), inst.shape(),
                                                  Shape::Scalar(PrimitiveType::kU32),
                                                  Shape::Scalar(PrimitiveType::kU32)}),
                                    ops);
  }
}

HloOpcode DoneOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
      return HloOpcode::kAllReduceDone;
    case HloOpcode::kAllGather:
      return HloOpcode::kAllGatherDone;
    default:
      return HloOpcode::kCollectivePermuteDone;
  }
}

}  // namespace

absl::StatusOr<bool> AsyncCollectiveCreator::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    // Wrapped computations already are the inside of an async op.
    if (c->IsFusionComputation() || c->name().ends_with(".wrapped_computation")) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      AsyncForm form = FormOf(*inst, options_);
      if (form == AsyncForm::kNone) continue;
      std::vector<HloInstruction*> ops(inst->operands().begin(), inst->operands().end());
      HloInstruction* start = nullptr;
      HloInstruction* done = nullptr;
      if (form == AsyncForm::kOwnOpcodes) {
        // op(x) => op-done(op-start(x)).
        std::unique_ptr<HloInstruction> s = OwnStart(*inst);
        // The start carries every attribute of the op (groups, channel id,
        // dimensions, reduction).
        s->mutable_attrs() = inst->attrs();
        for (HloComputation* called : inst->called_computations()) s->AppendCalledComputation(called);
        s->set_dimensions(inst->dimensions());
        s->set_metadata(inst->metadata());
        // Only forms shape inference accepts (e.g. not an all-reduce whose
        // reduction runs in another type than its operands).
        absl::StatusOr<Shape> inferred = InferInstructionShape(*s);
        if (!inferred.ok() || !inferred->Compatible(s->shape())) continue;
        start = c->AddInstruction(std::move(s), StrCat(inst->name(), "-start"));
        done = c->AddInstruction(HloInstruction::Create(DoneOpcode(inst->opcode()), inst->shape(), {start}),
                                 StrCat(inst->name(), "-done"));
        BumpCounter(StrCat(HloOpcodeString(inst->opcode()), " => ", HloOpcodeString(inst->opcode()), "-start/done"));
      } else {
        // op(x) => async-done(async-start(x), calls=wrapped) with
        // wrapped(p) { ROOT op(p) } (seed 001).
        std::vector<Shape> operand_shapes;
        for (const HloInstruction* op : ops) operand_shapes.push_back(op->shape());
        start = c->AddInstruction(
            HloInstruction::Create(
                HloOpcode::kAsyncStart,
                Shape::Tuple({Shape::Tuple(operand_shapes), inst->shape(), Shape::Scalar(PrimitiveType::kS32)}), ops),
            StrCat(inst->name(), "-start"));
        // Named after the start, so it prints as op-start / op-done.
        auto wrapped = std::make_unique<HloComputation>(AsyncWrappedComputationName(start->name()));
        std::vector<HloInstruction*> params;
        for (int64_t i = 0; i < inst->operand_count(); ++i) {
          params.push_back(wrapped->AddParameter(
              HloInstruction::CreateParameter(i, inst->operand(i)->shape(), StrCat("param_", i))));
        }
        wrapped->set_root_instruction(wrapped->AddInstruction(inst->CloneWithNewOperands(inst->shape(), params)));
        HloComputation* callee = module.AddEmbeddedComputation(std::move(wrapped));
        start->AppendCalledComputation(callee);
        auto d = HloInstruction::Create(HloOpcode::kAsyncDone, inst->shape(), {start});
        d->AppendCalledComputation(callee);
        done = c->AddInstruction(std::move(d), StrCat(inst->name(), "-done"));
        BumpCounter(StrCat(HloOpcodeString(inst->opcode()), " => async-start/done"));
      }
      // Whatever had to run before the op runs before its start; whatever
      // waited for it waits for its done.
      for (HloInstruction* p : inst->control_predecessors()) p->AddControlDependencyTo(start);
      for (HloInstruction* succ : inst->control_successors()) done->AddControlDependencyTo(succ);
      inst->DropAllControlDeps();
      RETURN_IF_ERROR(c->ReplaceInstruction(inst, done));
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
