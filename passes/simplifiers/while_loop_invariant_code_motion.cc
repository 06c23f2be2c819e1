#include "passes/simplifiers/while_loop_invariant_code_motion.h"

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/simplifiers/flatten_call_graph.h"
#include "passes/simplifiers/while_loop_util.h"

namespace passlab {
namespace {

// Data movement that costs (almost) nothing: not worth a loop-carried value
// of its own.
bool IsFreeDataMovement(HloOpcode op) {
  for (HloOpcode free : {HloOpcode::kBitcast, HloOpcode::kReshape, HloOpcode::kBroadcast,
                         HloOpcode::kIota, HloOpcode::kTranspose, HloOpcode::kSlice,
                         HloOpcode::kReverse, HloOpcode::kGetTupleElement, HloOpcode::kTuple,
                         HloOpcode::kConstant}) {
    if (op == free) return true;
  }
  return false;
}

bool CanMove(const HloInstruction* inst) {
  if (inst->HasSideEffect() || inst->opcode() == HloOpcode::kParameter ||
      !inst->control_predecessors().empty() || !inst->control_successors().empty()) {
    return false;
  }
  for (const HloComputation* callee : inst->called_computations()) {
    if (ComputationHasSideEffects(callee)) return false;
  }
  // Tuples inside loop bodies stay: they are the loop state's plumbing.
  return !inst->shape().IsTuple();
}

class LoopHoister {
 public:
  LoopHoister(HloInstruction* w, const WhileLoopInvariantCodeMotionOptions& options)
      : w_(w), body_(w->while_body()), options_(options) {}

  // Returns the number of instructions hoisted.
  absl::StatusOr<int64_t> Run() {
    FindInvariants();
    SelectHoisted();
    if (hoisted_.empty()) return 0;
    return Hoist();
  }

 private:
  void FindInvariants() {
    const HloInstruction* root = body_->root_instruction();
    for (HloInstruction* inst : body_->MakeInstructionPostOrder()) {
      int64_t k = LoopStateIndex(inst, body_);
      if (k >= 0) {
        // A read of an element the body passes on unchanged.
        const HloInstruction* next = root->operand(k);
        if (LoopStateIndex(next, body_) == k) invariant_.insert(inst);
        continue;
      }
      if (inst == root || !CanMove(inst)) continue;
      bool all = true;
      for (const HloInstruction* op : inst->operands()) all &= invariant_.contains(op);
      if (all) invariant_.insert(inst);
    }
  }

  // True when `inst` computes nothing but constants (not hoisted unless asked:
  // constant folding handles those).
  bool ComputedFromConstantsOnly(const HloInstruction* inst) {
    if (inst->opcode() == HloOpcode::kConstant) return true;
    if (LoopStateIndex(inst, body_) >= 0) return false;
    auto [it, inserted] = constant_only_.try_emplace(inst, true);
    if (!inserted) return it->second;
    bool all = true;
    for (const HloInstruction* op : inst->operands()) all &= ComputedFromConstantsOnly(op);
    constant_only_[inst] = all;
    return all;
  }

  void AddWithOperands(const HloInstruction* inst) {
    if (LoopStateIndex(inst, body_) >= 0 || hoisted_.contains(inst)) return;
    for (const HloInstruction* op : inst->operands()) AddWithOperands(op);
    hoisted_.insert(inst);
  }

  void SelectHoisted() {
    for (const HloInstruction* inst : body_->MakeInstructionPostOrder()) {
      if (!invariant_.contains(inst) || LoopStateIndex(inst, body_) >= 0) continue;
      if (inst->opcode() == HloOpcode::kConstant) continue;
      if (!options_.hoist_reshapes && IsFreeDataMovement(inst->opcode())) continue;
      if (!options_.hoist_constants && ComputedFromConstantsOnly(inst)) continue;
      worth_.insert(inst);
      AddWithOperands(inst);
    }
  }

  absl::StatusOr<int64_t> Hoist() {
    HloComputation* outer = w_->parent();
    HloInstruction* init = w_->mutable_operand(0);
    // Clone the hoisted instructions in front of the loop.
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> outside;
    std::vector<HloInstruction*> order;
    for (HloInstruction* inst : body_->MakeInstructionPostOrder()) {
      if (!hoisted_.contains(inst)) continue;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : inst->operands()) {
        int64_t k = LoopStateIndex(op, body_);
        if (k >= 0) {
          auto [it, inserted] = outside.try_emplace(op, nullptr);
          if (inserted) it->second = TupleElement(outer, init, k);
          operands.push_back(it->second);
        } else {
          operands.push_back(outside.at(op));
        }
      }
      std::unique_ptr<HloInstruction> clone = inst->CloneWithNewOperands(inst->shape(), operands);
      clone->SetName("");
      outside[inst] = outer->AddInstruction(std::move(clone), inst->name());
      order.push_back(inst);
    }
    // Hoisted values the body still uses become new loop-carried values.
    std::vector<HloInstruction*> boundary;
    // Cheap operands (constants, free data movement) that the body also uses
    // stay in the body as well instead of becoming loop state.
    for (HloInstruction* inst : order) {
      if (!worth_.contains(inst)) continue;
      for (const HloInstruction* user : inst->users()) {
        if (!hoisted_.contains(user)) {
          boundary.push_back(inst);
          break;
        }
      }
    }
    const int64_t n = w_->shape().tuple_shapes().size();
    std::vector<Shape> shapes = w_->shape().tuple_shapes();
    for (HloInstruction* b : boundary) shapes.push_back(b->shape());
    const Shape new_shape = Shape::Tuple(shapes);
    HloComputation* cond = w_->while_condition();
    // A condition other loops share gets its own copy (XLA builds the new
    // loop on copies of body and condition).
    if (CountCallers(*w_->GetModule(), cond) > 1) cond = CloneComputation(*cond);
    HloInstruction* body_param = body_->parameter_instruction(0);
    *body_param->mutable_shape() = new_shape;
    *cond->parameter_instruction(0)->mutable_shape() = new_shape;
    HloInstruction* old_root = body_->root_instruction();
    std::vector<HloInstruction*> root_operands = old_root->operands();
    for (int64_t i = 0; i < static_cast<int64_t>(boundary.size()); ++i) {
      HloInstruction* read =
          body_->AddInstruction(HloInstruction::CreateGetTupleElement(body_param, n + i));
      RETURN_IF_ERROR(boundary[i]->ReplaceAllUsesWith(read));
      root_operands.push_back(read);
    }
    HloInstruction* new_root = body_->AddInstruction(HloInstruction::CreateTuple(root_operands));
    body_->set_root_instruction(new_root);
    RETURN_IF_ERROR(body_->RemoveInstructionAndUnusedOperands(old_root));
    // Anything hoisted that the body no longer uses goes away.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if ((*it)->user_count() == 0) {
        RETURN_IF_ERROR(body_->RemoveInstruction(*it));
      }
    }
    std::vector<HloInstruction*> new_init;
    for (int64_t k = 0; k < n; ++k) new_init.push_back(TupleElement(outer, init, k));
    for (HloInstruction* b : boundary) new_init.push_back(outside.at(b));
    HloInstruction* init_tuple = outer->AddInstruction(HloInstruction::CreateTuple(new_init));
    auto loop = HloInstruction::CreateWhile(new_shape, cond, body_, init_tuple);
    loop->set_metadata(w_->metadata());
    HloInstruction* new_w = outer->AddInstruction(std::move(loop));
    std::vector<HloInstruction*> results;
    for (int64_t k = 0; k < n; ++k) {
      results.push_back(outer->AddInstruction(HloInstruction::CreateGetTupleElement(new_w, k)));
    }
    HloInstruction* old_shape_result = outer->AddInstruction(HloInstruction::CreateTuple(results));
    RETURN_IF_ERROR(outer->ReplaceInstruction(w_, old_shape_result));
    return static_cast<int64_t>(order.size());
  }

  HloInstruction* w_;
  HloComputation* body_;
  const WhileLoopInvariantCodeMotionOptions& options_;
  absl::flat_hash_set<const HloInstruction*> invariant_;
  absl::flat_hash_set<const HloInstruction*> hoisted_;
  absl::flat_hash_set<const HloInstruction*> worth_;  // worth hoisting on their own
  absl::flat_hash_map<const HloInstruction*, bool> constant_only_;
};

// IsRewritableWhile, but the condition may be shared with other loops (it
// is copied before it changes).
bool IsHoistableWhile(const HloInstruction* w) {
  if (w->opcode() != HloOpcode::kWhile || !w->shape().IsTuple()) return false;
  if (!w->control_predecessors().empty() || !w->control_successors().empty()) return false;
  const HloComputation* body = w->while_body();
  const HloComputation* cond = w->while_condition();
  if (body == cond || w->GetModule() == nullptr || CountCallers(*w->GetModule(), body) != 1) return false;
  if (body->root_instruction()->opcode() != HloOpcode::kTuple) return false;
  for (const HloComputation* c : {body, cond}) {
    if (c->num_parameters() != 1) return false;
    for (const HloInstruction* user : c->parameter_instruction(0)->users()) {
      if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    }
  }
  return !ComputationHasSideEffects(body) && !ComputationHasSideEffects(cond);
}

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* w : c->MakeInstructionPostOrder()) {
      if (!IsHoistableWhile(w)) continue;
      ASSIGN_OR_RETURN(int64_t hoisted, LoopHoister(w, options_).Run());
      if (hoisted > 0) {
        BumpCounter("hoisted instructions", hoisted);
        BumpCounter("loops changed");
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace passlab
