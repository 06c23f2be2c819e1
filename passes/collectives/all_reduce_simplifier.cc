#include "passes/collectives/all_reduce_simplifier.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// Whether `inst` has the same value on every member of a group of mode
// `mode` (memoized). Allow-list: anything not listed may differ.
class UniformValues {
 public:
  explicit UniformValues(CollectiveGroupMode mode) : mode_(mode) {}

  bool IsUniform(const HloInstruction* inst) {
    auto it = memo_.find(inst);
    if (it != memo_.end()) return it->second;
    bool uniform = Compute(inst);
    memo_[inst] = uniform;
    return uniform;
  }

 private:
  bool Compute(const HloInstruction* inst) {
    switch (inst->opcode()) {
      case HloOpcode::kConstant: case HloOpcode::kIota:
        return true;
      case HloOpcode::kParameter: {
        // Entry parameters marked replicated hold one value on every
        // replica (not across partitions).
        if (mode_ != CollectiveGroupMode::kCrossReplica || !inst->parent()->IsEntryComputation()) return false;
        const std::vector<bool>& r = inst->attrs().parameter_replication;
        if (r.empty()) return false;
        for (bool b : r) {
          if (!b) return false;
        }
        return true;
      }
      case HloOpcode::kPartitionId:
        // The same on every replica of one partition.
        return mode_ == CollectiveGroupMode::kCrossReplica;
      case HloOpcode::kBroadcast: case HloOpcode::kReshape: case HloOpcode::kTranspose:
      case HloOpcode::kSlice: case HloOpcode::kConcatenate: case HloOpcode::kConvert: case HloOpcode::kCopy:
      case HloOpcode::kBitcast: case HloOpcode::kPad: case HloOpcode::kReverse: case HloOpcode::kDot:
      case HloOpcode::kTuple: case HloOpcode::kGetTupleElement: case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kReduce: case HloOpcode::kSelect:
      case HloOpcode::kCompare: case HloOpcode::kClamp:
        return OperandsUniform(inst);
      default:
        return inst->IsElementwise() && !inst->HasSideEffect() && inst->opcode() != HloOpcode::kRng &&
               OperandsUniform(inst);
    }
  }

  bool OperandsUniform(const HloInstruction* inst) {
    for (const HloInstruction* o : inst->operands()) {
      if (!IsUniform(o)) return false;
    }
    return true;
  }

  CollectiveGroupMode mode_;
  absl::flat_hash_map<const HloInstruction*, bool> memo_;
};

// The participants of every group, when all groups have the same size.
std::optional<int64_t> UniformGroupSize(const HloInstruction& inst, const HloModule& module) {
  const HloModuleConfig& config = module.config();
  CollectiveGroupMode mode = GroupModeOf(inst);
  std::vector<std::vector<int64_t>> groups =
      ExpandedGroups(inst, GroupModeIdCount(mode, config.replica_count, config.num_partitions));
  std::optional<int64_t> size;
  for (const std::vector<int64_t>& g : groups) {
    int64_t n = ParticipantsPerGroup(inst, static_cast<int64_t>(g.size()), config.num_partitions);
    if (size.has_value() && *size != n) return std::nullopt;
    size = n;
  }
  return size;
}

// The collective's operands as one value of its (array or tuple) shape.
HloInstruction* OperandsAsValue(HloInstruction* inst) {
  if (inst->operand_count() == 1 && !inst->shape().IsTuple()) return inst->mutable_operand(0);
  std::vector<HloInstruction*> ops(inst->operands().begin(), inst->operands().end());
  return inst->parent()->AddInstruction(HloInstruction::CreateTuple(ops));
}

}  // namespace

absl::StatusOr<bool> AllReduceSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      HloOpcode op = inst->opcode();
      if ((op != HloOpcode::kAllReduce && op != HloOpcode::kAllGather && op != HloOpcode::kReduceScatter) ||
          inst->attrs().constrain_layout || !inst->control_successors().empty() ||
          !inst->control_predecessors().empty()) {
        continue;
      }
      // all-gather / reduce-scatter over groups of one: operand => result.
      if (op != HloOpcode::kAllReduce) {
        if (inst->operand_count() != 1 || !inst->operand(0)->shape().Compatible(inst->shape())) continue;
        RETURN_IF_ERROR(c->ReplaceInstruction(inst, inst->mutable_operand(0)));
        BumpCounter(StrCat(HloOpcodeString(op), " over groups of one => operand"));
        changed = true;
        continue;
      }
      std::optional<int64_t> group_size = UniformGroupSize(*inst, module);
      if (!group_size.has_value()) continue;
      // all-reduce over groups of one => operand.
      if (*group_size == 1) {
        RETURN_IF_ERROR(c->ReplaceInstruction(inst, OperandsAsValue(inst)));
        BumpCounter("all-reduce over groups of one => operand");
        changed = true;
        continue;
      }
      // all-reduce(x) of a value every member holds: x for idempotent
      // reductions, x * n for sum.
      std::optional<ReductionKind> kind = MatchReductionKind(inst->to_apply());
      if (!kind.has_value() || *kind == ReductionKind::kProduct || inst->operand_count() != 1 ||
          inst->shape().IsTuple()) {
        continue;
      }
      if (*kind == ReductionKind::kSum && inst->shape().element_type() == PrimitiveType::kPred) continue;
      UniformValues uniform(GroupModeOf(*inst));
      if (!uniform.IsUniform(inst->operand(0))) continue;
      HloInstruction* replacement = inst->mutable_operand(0);
      if (*kind == ReductionKind::kSum) {
        Literal n(Shape::Scalar(inst->shape().element_type()));
        n.SetDouble(0, static_cast<double>(*group_size));
        HloInstruction* scalar = c->AddInstruction(HloInstruction::CreateConstant(std::move(n)));
        HloInstruction* factor = c->AddInstruction(HloInstruction::CreateBroadcast(inst->shape(), scalar, {}));
        replacement = c->AddInstruction(
            HloInstruction::CreateBinary(inst->shape(), HloOpcode::kMultiply, inst->mutable_operand(0), factor));
        BumpCounter("all-reduce sum of a replicated value => value * group size");
      } else {
        BumpCounter("all-reduce min/max/and/or of a replicated value => value");
      }
      RETURN_IF_ERROR(c->ReplaceInstruction(inst, replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
