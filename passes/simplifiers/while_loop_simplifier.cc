#include "passes/simplifiers/while_loop_simplifier.h"

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/while_loop_util.h"

namespace passlab {
namespace {

std::optional<int64_t> IntConstant(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsScalar() ||
      !IsIntegralType(inst->shape().element_type())) {
    return std::nullopt;
  }
  return inst->literal().GetInt(0);
}

}  // namespace

std::optional<int64_t> ComputeWhileTripCount(const HloInstruction& w) {
  const HloComputation* cond = w.while_condition();
  const HloComputation* body = w.while_body();
  const HloInstruction* init = w.operand(0);
  const HloInstruction* cmp = cond->root_instruction();
  if (cmp->opcode() != HloOpcode::kCompare || init->opcode() != HloOpcode::kTuple) return std::nullopt;
  // compare(gte(p, k), N) or compare(N, gte(p, k)).
  int64_t k = LoopStateIndex(cmp->operand(0), cond);
  std::optional<int64_t> bound = IntConstant(cmp->operand(1));
  ComparisonDirection dir = cmp->attrs().comparison_direction;
  if (k < 0 || !bound) {
    k = LoopStateIndex(cmp->operand(1), cond);
    bound = IntConstant(cmp->operand(0));
    // N < i  <=>  i > N, etc.
    switch (dir) {
      case ComparisonDirection::kLt: dir = ComparisonDirection::kGt; break;
      case ComparisonDirection::kLe: dir = ComparisonDirection::kGe; break;
      case ComparisonDirection::kGt: dir = ComparisonDirection::kLt; break;
      case ComparisonDirection::kGe: dir = ComparisonDirection::kLe; break;
      default: break;
    }
  }
  if (k < 0 || !bound || k >= init->operand_count()) return std::nullopt;
  std::optional<int64_t> start = IntConstant(init->operand(k));
  const HloInstruction* root = body->root_instruction();
  if (!start || root->opcode() != HloOpcode::kTuple || k >= root->operand_count()) return std::nullopt;
  const HloInstruction* next = root->operand(k);
  if (next->opcode() != HloOpcode::kAdd) return std::nullopt;
  std::optional<int64_t> step;
  if (LoopStateIndex(next->operand(0), body) == k) step = IntConstant(next->operand(1));
  if (!step && LoopStateIndex(next->operand(1), body) == k) step = IntConstant(next->operand(0));
  if (!step || *step == 0) return std::nullopt;
  // Simulate the (small) counter: exact for every direction and sign, and
  // bounded so a loop that never ends is "unknown".
  int64_t i = *start, n = 0;
  auto holds = [&](int64_t v) {
    switch (dir) {
      case ComparisonDirection::kLt: return v < *bound;
      case ComparisonDirection::kLe: return v <= *bound;
      case ComparisonDirection::kGt: return v > *bound;
      case ComparisonDirection::kGe: return v >= *bound;
      case ComparisonDirection::kNe: return v != *bound;
      case ComparisonDirection::kEq: return v == *bound;
    }
    return false;
  };
  while (holds(i)) {
    if (++n > (1 << 20)) return std::nullopt;
    i += *step;
  }
  return n;
}

namespace {

// Rewrites loop `w` so that its state keeps only the elements in `keep`
// (ascending). The caller guarantees that dropped elements are used nowhere:
// not by w's users, not by the condition, and in the body only by the root
// tuple at their own position. Returns the new loop.
absl::StatusOr<HloInstruction*> ShrinkLoopState(HloInstruction* w, const std::vector<int64_t>& keep) {
  HloComputation* c = w->parent();
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  const int64_t n = w->shape().tuple_shapes().size();
  std::vector<int64_t> new_index(n, -1);
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < static_cast<int64_t>(keep.size()); ++i) {
    new_index[keep[i]] = i;
    shapes.push_back(w->shape().tuple_shapes()[keep[i]]);
  }
  const Shape new_shape = Shape::Tuple(shapes);
  // Body: new root with the kept elements, then renumber the state reads.
  HloInstruction* old_root = body->root_instruction();
  std::vector<HloInstruction*> kept_values;
  for (int64_t k : keep) kept_values.push_back(old_root->mutable_operand(k));
  HloInstruction* new_root = body->AddInstruction(HloInstruction::CreateTuple(kept_values));
  new_root->set_metadata(old_root->metadata());
  body->set_root_instruction(new_root);
  if (absl::Status s = body->RemoveInstructionAndUnusedOperands(old_root); !s.ok()) return s;
  for (HloComputation* comp : {body, cond}) {
    HloInstruction* param = comp->parameter_instruction(0);
    *param->mutable_shape() = new_shape;
    for (HloInstruction* gte : std::vector<HloInstruction*>(param->users())) {
      if (new_index[gte->tuple_index()] < 0 && gte->user_count() == 0) {
        if (absl::Status s = comp->RemoveInstruction(gte); !s.ok()) return s;
        continue;
      }
      if (new_index[gte->tuple_index()] < 0) {
        return absl::InternalError(StrCat("dropped loop element ", gte->tuple_index(), " of '",
                                          w->name(), "' is still read by '", gte->name(), "'"));
      }
      gte->set_index(new_index[gte->tuple_index()]);
    }
  }
  // Outside: a smaller initial tuple, a new loop, and renumbered reads.
  std::vector<HloInstruction*> init;
  for (int64_t k : keep) init.push_back(TupleElement(c, w->mutable_operand(0), k));
  HloInstruction* new_init = c->AddInstruction(HloInstruction::CreateTuple(init));
  auto loop = HloInstruction::CreateWhile(new_shape, cond, body, new_init);
  loop->set_metadata(w->metadata());
  HloInstruction* new_w = c->AddInstruction(std::move(loop), w->name());
  for (HloInstruction* gte : std::vector<HloInstruction*>(w->users())) {
    gte->ReplaceOperandWith(0, new_w);
    gte->set_index(new_index[gte->tuple_index()]);
  }
  if (absl::Status s = c->RemoveInstructionAndUnusedOperands(w); !s.ok()) return s;
  return new_w;
}

// Elements of loop `w` that nothing needs: unread after the loop, unread by
// the condition, and read in the body only by computations whose values flow
// back into that same element. Returns the loop after dropping them (or w
// itself).
absl::StatusOr<HloInstruction*> RemoveUnusedElements(HloInstruction* w, int64_t* removed) {
  const int64_t n = w->shape().tuple_shapes().size();
  if (w->IsRoot()) return w;
  std::vector<bool> used(n, false);
  for (const HloInstruction* user : w->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return w;
    used[user->tuple_index()] = true;
  }
  for (const HloInstruction* gte : w->while_condition()->parameter_instruction(0)->users()) {
    used[gte->tuple_index()] = true;
  }
  // For every body value, the loop elements its value flows into.
  const HloComputation* body = w->while_body();
  const HloInstruction* root = body->root_instruction();
  absl::flat_hash_map<const HloInstruction*, std::vector<bool>> flows;
  std::vector<HloInstruction*> order = body->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const HloInstruction* inst = *it;
    if (inst == root) continue;
    std::vector<bool>& into = flows[inst];
    into.assign(n, false);
    for (const HloInstruction* user : inst->users()) {
      if (user == root) {
        for (int64_t j = 0; j < n; ++j) into[j] = into[j] || root->operand(j) == inst;
        continue;
      }
      const std::vector<bool>& u = flows[user];
      for (int64_t j = 0; j < n; ++j) into[j] = into[j] || u[j];
    }
  }
  for (const HloInstruction* gte : body->parameter_instruction(0)->users()) {
    const int64_t k = gte->tuple_index();
    const std::vector<bool>& into = flows[gte];
    for (int64_t j = 0; j < n; ++j) {
      if (into[j] && j != k) used[k] = true;
    }
  }
  // A kept element computed from a dropped one keeps it: repeat until stable.
  bool grew = true;
  while (grew) {
    grew = false;
    for (const HloInstruction* gte : body->parameter_instruction(0)->users()) {
      const int64_t k = gte->tuple_index();
      if (used[k]) continue;
      const std::vector<bool>& into = flows[gte];
      for (int64_t j = 0; j < n; ++j) {
        if (into[j] && used[j] && j != k) used[k] = grew = true;
      }
    }
  }
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < n; ++i) {
    if (used[i]) keep.push_back(i);
  }
  if (static_cast<int64_t>(keep.size()) == n) return w;
  *removed = n - static_cast<int64_t>(keep.size());
  return ShrinkLoopState(w, keep);
}

// a and b compute the same value once state elements i and j are equal.
bool EquivalentUnderSwap(const HloInstruction* a, const HloInstruction* b, const HloComputation* body,
                         int64_t i, int64_t j, int depth) {
  if (a == b) return true;
  int64_t ka = LoopStateIndex(a, body), kb = LoopStateIndex(b, body);
  if (ka >= 0 && kb >= 0) {
    auto canon = [&](int64_t k) { return k == j ? i : k; };
    return canon(ka) == canon(kb);
  }
  if (depth == 0 || a->opcode() != b->opcode() || a->operand_count() != b->operand_count() ||
      a->opcode() == HloOpcode::kParameter || a->HasSideEffect() || !(a->shape() == b->shape()) ||
      !a->IdenticalSlowPath(*b)) {
    return false;
  }
  for (int64_t k = 0; k < a->operand_count(); ++k) {
    if (!EquivalentUnderSwap(a->operand(k), b->operand(k), body, i, j, depth - 1)) return false;
  }
  return true;
}

// Elements i < j that start equal and are updated alike stay equal: every
// read of j becomes a read of i (j is then unused and dropped).
absl::StatusOr<bool> MergeDuplicateElements(HloInstruction* w) {
  HloInstruction* init = w->mutable_operand(0);
  if (init->opcode() != HloOpcode::kTuple) return false;
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  const HloInstruction* root = body->root_instruction();
  const int64_t n = init->operand_count();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      if (init->operand(i) != init->operand(j)) continue;
      if (!EquivalentUnderSwap(root->operand(i), root->operand(j), body, i, j, 8)) continue;
      // Reads of j (body, condition, after the loop) read i instead.
      bool any = false;
      auto redirect = [&](HloComputation* comp, HloInstruction* tuple) -> absl::Status {
        HloInstruction* read_i = nullptr;
        for (HloInstruction* gte : std::vector<HloInstruction*>(tuple->users())) {
          if (gte->opcode() != HloOpcode::kGetTupleElement || gte->tuple_index() != j) continue;
          if (read_i == nullptr) {
            read_i = comp->AddInstruction(HloInstruction::CreateGetTupleElement(tuple, i));
          }
          if (absl::Status s = comp->ReplaceInstruction(gte, read_i); !s.ok()) return s;
          any = true;
        }
        return absl::OkStatus();
      };
      if (absl::Status s = redirect(body, body->parameter_instruction(0)); !s.ok()) return s;
      if (absl::Status s = redirect(cond, cond->parameter_instruction(0)); !s.ok()) return s;
      if (!w->IsRoot()) {
        if (absl::Status s = redirect(w->parent(), w); !s.ok()) return s;
      }
      if (any) return true;
    }
  }
  return false;
}

void FlattenLeaves(HloComputation* c, HloInstruction* value, std::vector<HloInstruction*>& out) {
  if (!value->shape().IsTuple()) {
    out.push_back(value);
    return;
  }
  for (int64_t k = 0; k < static_cast<int64_t>(value->shape().tuple_shapes().size()); ++k) {
    FlattenLeaves(c, TupleElement(c, value, k), out);
  }
}

HloInstruction* RebuildNested(HloComputation* c, const Shape& shape,
                              const std::vector<HloInstruction*>& leaves, size_t& pos) {
  if (!shape.IsTuple()) return leaves[pos++];
  std::vector<HloInstruction*> parts;
  for (const Shape& s : shape.tuple_shapes()) parts.push_back(RebuildNested(c, s, leaves, pos));
  return c->AddInstruction(HloInstruction::CreateTuple(parts));
}

bool HasNestedTuple(const Shape& shape) {
  for (const Shape& s : shape.tuple_shapes()) {
    if (s.IsTuple()) return true;
  }
  return false;
}

// A computation `flat_param -> nested state -> old(nested)` with the call
// inlined; the result is flattened when `flatten_result`.
absl::StatusOr<HloComputation*> WrapWithFlatState(HloModule& module, HloComputation* old,
                                                  const Shape& nested, const Shape& flat,
                                                  bool flatten_result) {
  auto comp = std::make_unique<HloComputation>(StrCat(old->name(), ".flat"));
  HloComputation* c = comp.get();
  HloInstruction* param = c->AddParameter(HloInstruction::CreateParameter(0, flat, "state"));
  std::vector<HloInstruction*> leaves;
  for (int64_t k = 0; k < static_cast<int64_t>(flat.tuple_shapes().size()); ++k) {
    leaves.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(param, k)));
  }
  size_t pos = 0;
  HloInstruction* state = RebuildNested(c, nested, leaves, pos);
  HloInstruction* call = c->AddInstruction(
      HloInstruction::CreateCall(old->root_instruction()->shape(), {state}, old));
  c->set_root_instruction(call);
  HloComputation* added = module.AddEmbeddedComputation(std::move(comp));
  absl::StatusOr<HloInstruction*> result = InlineCall(added->root_instruction());
  if (!result.ok()) return result.status();
  if (flatten_result) {
    std::vector<HloInstruction*> out;
    FlattenLeaves(added, *result, out);
    added->set_root_instruction(added->AddInstruction(HloInstruction::CreateTuple(out)));
  }
  return added;
}

// A loop whose state nests tuples runs on the flattened state instead.
absl::StatusOr<bool> FlattenNestedState(HloInstruction* w) {
  if (!HasNestedTuple(w->shape())) return false;
  HloComputation* c = w->parent();
  HloModule& module = *c->parent();
  std::vector<HloInstruction*> init;
  FlattenLeaves(c, w->mutable_operand(0), init);
  std::vector<Shape> leaf_shapes;
  for (HloInstruction* v : init) leaf_shapes.push_back(v->shape());
  const Shape flat = Shape::Tuple(leaf_shapes);
  absl::StatusOr<HloComputation*> body =
      WrapWithFlatState(module, w->while_body(), w->shape(), flat, /*flatten_result=*/true);
  if (!body.ok()) return body.status();
  absl::StatusOr<HloComputation*> cond =
      WrapWithFlatState(module, w->while_condition(), w->shape(), flat, /*flatten_result=*/false);
  if (!cond.ok()) return cond.status();
  HloInstruction* new_init = c->AddInstruction(HloInstruction::CreateTuple(init));
  auto loop = HloInstruction::CreateWhile(flat, *cond, *body, new_init);
  loop->set_metadata(w->metadata());
  HloInstruction* new_w = c->AddInstruction(std::move(loop));
  std::vector<HloInstruction*> leaves;
  for (int64_t k = 0; k < static_cast<int64_t>(leaf_shapes.size()); ++k) {
    leaves.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(new_w, k)));
  }
  size_t pos = 0;
  HloInstruction* nested = RebuildNested(c, w->shape(), leaves, pos);
  if (absl::Status s = c->ReplaceInstruction(w, nested); !s.ok()) return s;
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* w : c->MakeInstructionPostOrder()) {
      if (w->opcode() != HloOpcode::kWhile || !w->control_predecessors().empty() ||
          !w->control_successors().empty()) {
        continue;
      }
      if (ComputationHasSideEffects(w->while_condition()) || ComputationHasSideEffects(w->while_body())) continue;
      std::optional<int64_t> trips = ComputeWhileTripCount(*w);
      if (trips && *trips == 0) {
        // while(init) that never runs => init
        if (absl::Status s = c->ReplaceInstruction(w, w->mutable_operand(0)); !s.ok()) return s;
        BumpCounter("zero-trip loop removed");
        changed = true;
        continue;
      }
      if (trips && *trips == 1) {
        // while(init) that runs once => body(init), inlined
        auto call = HloInstruction::CreateCall(w->shape(), {w->mutable_operand(0)}, w->while_body());
        call->set_metadata(w->metadata());
        HloInstruction* added = c->AddInstruction(std::move(call));
        if (absl::Status s = c->ReplaceInstruction(w, added); !s.ok()) return s;
        absl::StatusOr<HloInstruction*> inlined = InlineCall(added);
        if (!inlined.ok()) return inlined.status();
        BumpCounter("one-trip loop inlined");
        changed = true;
        continue;
      }
      if (!IsRewritableWhile(w)) continue;
      // while((..., (a, b), ...)) => while((..., a, b, ...)): flat state.
      absl::StatusOr<bool> flattened = FlattenNestedState(w);
      if (!flattened.ok()) return flattened.status();
      if (*flattened) {
        BumpCounter("nested state flattened");
        changed = true;
        continue;  // the new loop is handled in the next fixed-point round
      }
      // Elements i, j with equal start and equal updates => one element.
      for (;;) {
        absl::StatusOr<bool> merged = MergeDuplicateElements(w);
        if (!merged.ok()) return merged.status();
        if (!*merged) break;
        BumpCounter("duplicate loop element merged");
        changed = true;
      }
      // Elements nothing reads => dropped from the state.
      int64_t removed = 0;
      absl::StatusOr<HloInstruction*> shrunk = RemoveUnusedElements(w, &removed);
      if (!shrunk.ok()) return shrunk.status();
      if (removed > 0) {
        BumpCounter("unused loop element removed", removed);
        changed = true;
      }
    }
  }
  if (changed) module.RemoveUnusedComputations();
  return changed;
}

}  // namespace passlab
