#include "passes/simplifiers/conditional_simplifier.h"

#include <functional>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/flatten_call_graph.h"
#include "passes/simplifiers/while_loop_util.h"

namespace passlab {
namespace {

bool IsChannelInstruction(HloOpcode op) {
  switch (op) {
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv: case HloOpcode::kRecvDone:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: case HloOpcode::kAllToAll: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kReduceScatter: case HloOpcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

bool CallsChannelInstructions(const HloInstruction* inst) {
  std::vector<const HloComputation*> work(inst->called_computations().begin(), inst->called_computations().end());
  absl::flat_hash_set<const HloComputation*> seen;
  while (!work.empty()) {
    const HloComputation* c = work.back();
    work.pop_back();
    if (!seen.insert(c).second) continue;
    for (const HloInstruction* i : c->instructions()) {
      if (IsChannelInstruction(i->opcode())) return true;
      work.insert(work.end(), i->called_computations().begin(), i->called_computations().end());
    }
  }
  return false;
}

// The elements `keep` (ascending) of a tuple-shaped original value
// ("origin={(a, b, c)}", kept as text), or "" when it is not a tuple
// (XLA's CopyOriginalValue with an index mapping).
std::string SelectOriginalValueElements(const std::string& braced, const std::vector<int64_t>& keep) {
  // Stored as printed, "{(...)}", or without the braces.
  const bool has_braces = braced.size() >= 2 && braced.front() == '{' && braced.back() == '}';
  const std::string text = has_braces ? braced.substr(1, braced.size() - 2) : braced;
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return "";
  std::vector<std::string> elements;
  int depth = 0;
  bool quoted = false;
  std::string current;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '"' && (i == 0 || text[i - 1] != '\\')) quoted = !quoted;
    if (!quoted && (ch == '(' || ch == '{' || ch == '[')) ++depth;
    if (!quoted && (ch == ')' || ch == '}' || ch == ']')) --depth;
    if (!quoted && depth == 0 && ch == ',') {
      elements.push_back(current);
      current.clear();
      continue;
    }
    if (current.empty() && ch == ' ') continue;
    current += ch;
  }
  if (!current.empty()) elements.push_back(current);
  std::string out = "(";
  for (size_t k = 0; k < keep.size(); ++k) {
    if (keep[k] >= static_cast<int64_t>(elements.size())) return "";
    out += (k == 0 ? "" : ", ") + elements[keep[k]];
  }
  return has_braces ? "{" + out + ")}" : out + ")";
}

bool OnlyTupleGteUsers(const HloInstruction* conditional) {
  for (const HloInstruction* user : conditional->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return true;
}

// gte_j users read gte_i instead when every branch returns the same value
// at i and j (i < j).
bool MergeDuplicateTupleElements(HloInstruction* conditional) {
  if (conditional->user_count() == 0 || conditional->IsRoot() || !conditional->shape().IsTuple() ||
      !OnlyTupleGteUsers(conditional)) {
    return false;
  }
  for (const HloComputation* branch : conditional->called_computations()) {
    if (branch->root_instruction()->opcode() != HloOpcode::kTuple) return false;
  }
  bool changed = false;
  std::map<std::vector<const HloInstruction*>, int64_t> first_index;
  for (int64_t i = 0; i < conditional->shape().tuple_shapes_size(); ++i) {
    std::vector<const HloInstruction*> values;
    for (const HloComputation* branch : conditional->called_computations()) {
      values.push_back(branch->root_instruction()->operand(i));
    }
    auto [it, inserted] = first_index.emplace(values, i);
    if (inserted) continue;
    for (HloInstruction* user : conditional->users()) {
      if (user->tuple_index() != i) continue;
      user->set_index(it->second);
      changed = true;
    }
  }
  return changed;
}

// Elements no user reads leave the result (and every branch's root).
bool RemoveUnusedTupleElements(HloInstruction* conditional) {
  if (conditional->user_count() == 0 || conditional->IsRoot() || !conditional->shape().IsTuple() ||
      !OnlyTupleGteUsers(conditional)) {
    return false;
  }
  const Shape old_shape = conditional->shape();
  const int64_t n = old_shape.tuple_shapes_size();
  std::vector<bool> used(n, false);
  for (const HloInstruction* user : conditional->users()) used[user->tuple_index()] = true;
  std::vector<int64_t> old_to_new(n, -1);
  std::vector<Shape> kept;
  for (int64_t i = 0; i < n; ++i) {
    if (!used[i]) continue;
    old_to_new[i] = static_cast<int64_t>(kept.size());
    kept.push_back(old_shape.tuple_shapes(i));
  }
  if (static_cast<int64_t>(kept.size()) == n) return false;
  for (const HloComputation* branch : conditional->called_computations()) {
    const Shape& root = branch->root_instruction()->shape();
    if (!root.IsTuple() || !root.Compatible(old_shape)) return false;
  }
  for (int64_t b = 0; b < conditional->branch_count(); ++b) {
    HloComputation* clone = CloneComputation(*conditional->branch_computation(b));
    conditional->set_called_computation(b, clone);
    HloInstruction* old_root = clone->root_instruction();
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < n; ++i) {
      if (used[i]) elements.push_back(clone->AddInstruction(HloInstruction::CreateGetTupleElement(old_root, i)));
    }
    clone->set_root_instruction(clone->AddInstruction(HloInstruction::CreateTuple(elements)));
  }
  *conditional->mutable_shape() = Shape::Tuple(kept);
  std::vector<int64_t> kept_indices;
  for (int64_t i = 0; i < n; ++i) {
    if (used[i]) kept_indices.push_back(i);
  }
  std::string& origin = conditional->mutable_attrs().original_value;
  if (!origin.empty()) origin = SelectOriginalValueElements(origin, kept_indices);
  for (HloInstruction* user : conditional->users()) user->set_index(old_to_new[user->tuple_index()]);
  return true;
}

// A result nobody reads: every branch returns () instead.
bool ReplaceRootWithEmptyTupleIfNoUsers(HloInstruction* conditional) {
  const Shape empty = Shape::Tuple({});
  if (conditional->user_count() != 0 || conditional->IsRoot() || conditional->shape().Compatible(empty)) {
    return false;
  }
  for (int64_t b = 0; b < conditional->branch_count(); ++b) {
    HloComputation* clone = CloneComputation(*conditional->branch_computation(b));
    conditional->set_called_computation(b, clone);
    clone->set_root_instruction(clone->AddInstruction(HloInstruction::CreateTuple({})));
  }
  *conditional->mutable_shape() = empty;
  return true;
}

// Only tuples, tuple reads and parameters, with an array somewhere in the
// result.
bool IsEmptyWithArrayRoot(const HloComputation* c) {
  for (const HloInstruction* i : c->instructions()) {
    if (i->opcode() != HloOpcode::kTuple && i->opcode() != HloOpcode::kGetTupleElement &&
        i->opcode() != HloOpcode::kParameter) {
      return false;
    }
  }
  bool has_array = false;
  ForEachSubshape(c->root_instruction()->shape(),
                  [&](const Shape& s, const ShapeIndex&) { has_array = has_array || s.IsArray(); });
  return has_array;
}

bool IsExpensive(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kBroadcast: case HloOpcode::kConcatenate: case HloOpcode::kDynamicSlice:
    case HloOpcode::kGetTupleElement: case HloOpcode::kReduce: case HloOpcode::kReshape:
    case HloOpcode::kPad: case HloOpcode::kParameter: case HloOpcode::kSlice: case HloOpcode::kTuple:
      return false;
    default:
      return !i->IsElementwise();
  }
}

absl::Status InlineIfAllowed(HloInstruction* call) {
  if (!CallInlineAllowed(call)) return absl::OkStatus();
  return InlineCall(call).status();
}

absl::StatusOr<bool> TryRemoveConditional(HloInstruction* conditional) {
  HloComputation* c = conditional->parent();
  if (!conditional->control_predecessors().empty() || !conditional->control_successors().empty() ||
      conditional->HasSideEffect() || conditional->frontend_attributes().map.contains("_scheduling_group_id")) {
    return false;
  }
  // XLA's HasSideEffect looks into the called computations too.
  for (const HloComputation* branch : conditional->called_computations()) {
    if (ComputationHasSideEffects(branch)) return false;
  }
  auto create_call = [&](int64_t branch) {
    auto call = HloInstruction::CreateCall(conditional->shape(), {conditional->mutable_operand(branch + 1)},
                                           conditional->branch_computation(branch));
    call->set_metadata(conditional->metadata());
    *call->mutable_frontend_attributes() = conditional->frontend_attributes();
    return c->AddInstruction(std::move(call));
  };

  // One branch, or a constant index: that branch, as a call.
  const HloInstruction* index = conditional->operand(0);
  if (conditional->branch_count() == 1 || index->opcode() == HloOpcode::kConstant) {
    int64_t taken = 0;
    if (conditional->branch_count() > 1) {
      if (index->shape().element_type() == PrimitiveType::kPred) {
        taken = index->literal().GetBits(0) ? 0 : 1;
      } else {
        taken = index->literal().GetInt(0);
        if (taken < 0 || taken >= conditional->branch_count()) taken = conditional->branch_count() - 1;
      }
    }
    HloInstruction* call = create_call(taken);
    RETURN_IF_ERROR(c->ReplaceInstruction(conditional, call));
    RETURN_IF_ERROR(InlineIfAllowed(call));
    return true;
  }

  // conditional(p, a, b) with cheap branches => select(p, true_branch(a),
  // false_branch(b)), element by element.
  if (conditional->branch_count() != 2 || index->shape().element_type() != PrimitiveType::kPred) return false;
  for (const HloComputation* branch : conditional->called_computations()) {
    for (const HloInstruction* i : branch->instructions()) {
      if (IsExpensive(i)) return false;
    }
  }
  if (IsEmptyWithArrayRoot(conditional->branch_computation(0)) ||
      IsEmptyWithArrayRoot(conditional->branch_computation(1))) {
    return false;
  }
  HloInstruction* true_call = create_call(0);
  HloInstruction* false_call = create_call(1);
  HloInstruction* pred = conditional->mutable_operand(0);
  std::function<HloInstruction*(HloInstruction*, HloInstruction*)> select = [&](HloInstruction* t,
                                                                              HloInstruction* f) {
    if (f->shape().IsToken()) {
      return c->AddInstruction(HloInstruction::Create(HloOpcode::kAfterAll, Shape::Token(), {t, f}));
    }
    if (f->shape().IsArray()) {
      HloInstruction* mask = pred;
      if (!f->shape().IsScalar()) {
        Shape mask_shape = f->shape();
        mask_shape.set_element_type(PrimitiveType::kPred);
        mask = c->AddInstruction(HloInstruction::CreateBroadcast(mask_shape, pred, {}));
      }
      return c->AddInstruction(HloInstruction::CreateTernary(f->shape(), HloOpcode::kSelect, mask, t, f));
    }
    std::vector<HloInstruction*> parts;
    for (int64_t i = 0; i < f->shape().tuple_shapes_size(); ++i) {
      parts.push_back(select(c->AddInstruction(HloInstruction::CreateGetTupleElement(t, i)),
                             c->AddInstruction(HloInstruction::CreateGetTupleElement(f, i))));
    }
    return c->AddInstruction(HloInstruction::CreateTuple(parts));
  };
  RETURN_IF_ERROR(c->ReplaceInstruction(conditional, select(true_call, false_call)));
  RETURN_IF_ERROR(InlineIfAllowed(false_call));
  RETURN_IF_ERROR(InlineIfAllowed(true_call));
  return true;
}

// Tuple elements of a branch's parameter the branch never reads leave its
// operand: the branch is cloned with a smaller parameter, and the callers
// pass a smaller tuple.
bool TryRemoveUnusedOperands(HloComputation* branch, const std::vector<HloInstruction*>& callers) {
  HloInstruction* param = branch->parameter_instruction(0);
  if (param == branch->root_instruction() || !param->shape().IsTuple()) return false;
  std::set<int64_t> keep;
  for (const HloInstruction* user : param->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    keep.insert(user->tuple_index());
  }
  const int64_t n = param->shape().tuple_shapes_size();
  if (static_cast<int64_t>(keep.size()) == n) return false;
  std::vector<int64_t> old_to_new(n, -1);
  std::vector<Shape> shapes;
  for (int64_t i : keep) {
    old_to_new[i] = static_cast<int64_t>(shapes.size());
    shapes.push_back(param->shape().tuple_shapes(i));
  }
  HloComputation* clone = CloneComputation(*branch);
  HloInstruction* new_param = clone->parameter_instruction(0);
  *new_param->mutable_shape() = Shape::Tuple(shapes);
  std::string& origin = new_param->mutable_attrs().original_value;
  if (!origin.empty()) origin = SelectOriginalValueElements(origin, std::vector<int64_t>(keep.begin(), keep.end()));
  for (HloInstruction* user : new_param->users()) user->set_index(old_to_new[user->tuple_index()]);
  for (HloInstruction* conditional : callers) {
    if (conditional->has_sharding()) continue;
    for (int64_t b = 0; b < conditional->branch_count(); ++b) {
      if (conditional->branch_computation(b) != branch) continue;
      conditional->set_called_computation(b, clone);
      HloInstruction* operand = conditional->mutable_operand(b + 1);
      std::vector<HloInstruction*> elements;
      for (int64_t i : keep) {
        elements.push_back(
            conditional->parent()->AddInstruction(HloInstruction::CreateGetTupleElement(operand, i)));
      }
      conditional->ReplaceOperandWith(
          b + 1, conditional->parent()->AddInstruction(HloInstruction::CreateTuple(elements)));
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> ConditionalSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  std::vector<HloInstruction*> conditionals;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kConditional || CallsChannelInstructions(inst) || inst->has_sharding()) {
        continue;
      }
      conditionals.push_back(inst);
    }
  }
  bool changed = false;
  absl::flat_hash_set<HloInstruction*> removed;
  for (HloInstruction* conditional : conditionals) {
    if (MergeDuplicateTupleElements(conditional)) {
      BumpCounter("duplicate result elements merged");
      changed = true;
    }
    if (RemoveUnusedTupleElements(conditional)) {
      BumpCounter("unused result elements removed");
      changed = true;
    }
    if (ReplaceRootWithEmptyTupleIfNoUsers(conditional)) {
      BumpCounter("unused result made empty");
      changed = true;
    }
    ASSIGN_OR_RETURN(bool removed_one, TryRemoveConditional(conditional));
    if (removed_one) {
      BumpCounter("conditional removed");
      removed.insert(conditional);
      changed = true;
    }
  }
  // Branch computation -> the remaining conditionals calling it, in order.
  std::vector<HloComputation*> branches;
  absl::flat_hash_map<HloComputation*, std::vector<HloInstruction*>> callers;
  for (HloInstruction* conditional : conditionals) {
    if (removed.contains(conditional)) continue;
    for (int64_t b = 0; b < conditional->branch_count(); ++b) {
      HloComputation* branch = conditional->branch_computation(b);
      std::vector<HloInstruction*>& list = callers[branch];
      if (list.empty()) branches.push_back(branch);
      if (std::find(list.begin(), list.end(), conditional) == list.end()) list.push_back(conditional);
    }
  }
  for (HloComputation* branch : branches) {
    if (TryRemoveUnusedOperands(branch, callers[branch])) {
      BumpCounter("unused branch operands removed");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
