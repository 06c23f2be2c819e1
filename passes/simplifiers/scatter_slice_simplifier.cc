#include "passes/simplifiers/scatter_slice_simplifier.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/simplifiers/scatter_simplifier.h"

namespace passlab {
namespace {

int64_t ScatterOperandCount(const HloInstruction& scatter) { return (scatter.operand_count() - 1) / 2; }

// Finds the shape a scatter's slice users allow: every path from the scatter
// through elementwise ops and get-tuple-elements must end in a slice
// truncating the same leading parts.
class ScatterSliceMatcher {
 public:
  explicit ScatterSliceMatcher(const HloInstruction* scatter)
      : scatter_(scatter),
        operand_dims_(scatter->operand(0)->shape().dimensions()),
        result_dims_(operand_dims_) {}

  std::optional<Shape> InferShape() {
    if (!ScatterSimplifier::IsSimplifiedScatter(*scatter_) || !AllUsersValid(scatter_)) return std::nullopt;
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < ScatterOperandCount(*scatter_); ++i) {
      shapes.push_back(Shape(scatter_->operand(i)->shape().element_type(), result_dims_));
    }
    return shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  }

 private:
  // The slice keeps a prefix of each dimension, the same as every other
  // slice, and shrinks only dimensions the updates cover with size 1.
  bool UpdateDimensions(const HloInstruction* slice) {
    const std::vector<SliceDimension>& s = slice->attrs().slice;
    const Shape& updates = scatter_->operand(ScatterOperandCount(*scatter_) + 1)->shape();
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i].start != 0 || s[i].stride != 1) return false;
      if (s[i].limit == result_dims_[i]) continue;
      if (result_dims_[i] != operand_dims_[i]) return false;  // another slice cut it differently
      // A canonical scatter's update dimension i + 1 is operand dimension i.
      if (updates.dimensions(i + 1) != 1) return false;
      result_dims_[i] = s[i].limit;
    }
    return true;
  }

  bool UserValid(const HloInstruction* user) {
    if (user->opcode() == HloOpcode::kSlice) return UpdateDimensions(user);
    const bool valid = visited_.contains(user) ||
                       ((user->IsElementwise() || user->opcode() == HloOpcode::kGetTupleElement) &&
                        AllUsersValid(user));
    if (valid) visited_.insert(user);
    return valid;
  }

  // A path reaching the root without a slice fails.
  bool AllUsersValid(const HloInstruction* inst) {
    if (inst->user_count() == 0) return !inst->IsRoot();
    for (const HloInstruction* user : inst->users()) {
      if (!UserValid(user)) return false;
    }
    return true;
  }

  const HloInstruction* scatter_;
  absl::flat_hash_set<const HloInstruction*> visited_;
  std::vector<int64_t> operand_dims_;
  std::vector<int64_t> result_dims_;
};

HloInstruction* SliceTo(HloInstruction* operand, const Shape& shape) {
  std::vector<SliceDimension> slice;
  for (int64_t d : shape.dimensions()) slice.push_back({0, d, 1});
  return operand->parent()->AddInstruction(HloInstruction::CreateSlice(shape, operand, std::move(slice)));
}

// Rebuilds the users of a replaced scatter at the new shape: slices are
// replaced by the rebuilt value (and removed with what only they used),
// elementwise ops and get-tuple-elements are rebuilt, recursively.
class UserRewriter {
 public:
  explicit UserRewriter(HloComputation* computation) : computation_(computation) {}

  bool Removed(HloInstruction* inst) const { return removed_.contains(inst); }

  absl::Status ReplaceAllUsers(HloInstruction* old_inst, HloInstruction* new_inst) {
    replacements_[old_inst] = new_inst;
    const std::vector<HloInstruction*> users = old_inst->users();
    for (HloInstruction* user : users) {
      if (removed_.contains(user)) continue;  // replaced through another path
      RETURN_IF_ERROR(ReplaceUser(user, new_inst));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ReplaceUser(HloInstruction* user, HloInstruction* operand) {
    // slice(x) => x', the rebuilt x
    if (user->opcode() == HloOpcode::kSlice) {
      RETURN_IF_ERROR(user->ReplaceAllUsesWith(operand));
      return RemoveDead(user);
    }
    HloInstruction* rebuilt = nullptr;
    if (user->IsElementwise()) {
      auto resized = [&](const HloInstruction* from) {
        return Shape(from->shape().element_type(), operand->shape().dimensions());
      };
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : user->operands()) {
        auto it = replacements_.find(op);
        operands.push_back(it != replacements_.end() ? it->second : SliceTo(op, resized(op)));
      }
      rebuilt = computation_->AddInstruction(user->CloneWithNewOperands(resized(user), operands));
    } else {
      auto gte = HloInstruction::CreateGetTupleElement(operand, user->tuple_index());
      gte->set_metadata(user->metadata());
      rebuilt = computation_->AddInstruction(std::move(gte));
    }
    return ReplaceAllUsers(user, rebuilt);
  }

  // XLA's RemoveInstructionAndUnusedOperands, remembering what went.
  absl::Status RemoveDead(HloInstruction* inst) {
    std::vector<HloInstruction*> worklist = {inst};
    while (!worklist.empty()) {
      HloInstruction* x = worklist.back();
      worklist.pop_back();
      if (removed_.contains(x) || x->user_count() != 0 || x == computation_->root_instruction() ||
          (x != inst && (x->opcode() == HloOpcode::kParameter || x->HasSideEffect() ||
                         !x->control_successors().empty()))) {
        continue;
      }
      std::vector<HloInstruction*> operands = x->operands();
      RETURN_IF_ERROR(computation_->RemoveInstruction(x));
      removed_.insert(x);
      for (HloInstruction* op : operands) worklist.push_back(op);
    }
    return absl::OkStatus();
  }

  HloComputation* computation_;
  absl::flat_hash_map<HloInstruction*, HloInstruction*> replacements_;
  absl::flat_hash_set<HloInstruction*> removed_;
};

}  // namespace

absl::StatusOr<bool> ScatterSliceSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<HloInstruction*> scatters;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kScatter) scatters.push_back(inst);
    }
    // One rewriter per computation: it knows what earlier rewrites removed.
    UserRewriter rewriter(c);
    for (HloInstruction* scatter : scatters) {
      if (rewriter.Removed(scatter)) continue;
      std::optional<Shape> shape = ScatterSliceMatcher(scatter).InferShape();
      if (!shape.has_value()) continue;
      // scatter(operands, indices, updates) => scatter(slice(operands), indices, updates)
      const int64_t count = ScatterOperandCount(*scatter);
      std::vector<HloInstruction*> operands;
      for (int64_t i = 0; i < count; ++i) {
        operands.push_back(SliceTo(scatter->mutable_operand(i), shape->IsTuple() ? shape->tuple_shapes(i) : *shape));
      }
      for (int64_t i = count; i < scatter->operand_count(); ++i) operands.push_back(scatter->mutable_operand(i));
      auto smaller = HloInstruction::Create(HloOpcode::kScatter, *shape, operands);
      smaller->mutable_attrs().scatter_dnums = scatter->attrs().scatter_dnums;
      smaller->mutable_attrs().indices_are_sorted = scatter->attrs().indices_are_sorted;
      smaller->mutable_attrs().unique_indices = scatter->attrs().unique_indices;
      smaller->set_to_apply(scatter->to_apply());
      smaller->set_metadata(scatter->metadata());
      HloInstruction* added = c->AddInstruction(std::move(smaller));
      RETURN_IF_ERROR(rewriter.ReplaceAllUsers(scatter, added));
      BumpCounter("shrank a sliced scatter");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
