#include "passes/simplifiers/while_loop_simplifier.h"

#include <functional>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/hlo_dce.h"
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
absl::StatusOr<HloInstruction*> ShrinkLoopState(HloInstruction* w, const std::vector<int64_t>& keep,
                                                const std::map<int64_t, int64_t>* dead_to_surviving = nullptr) {
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
  RETURN_IF_ERROR(body->RemoveInstructionAndUnusedOperands(old_root));
  for (HloComputation* comp : {body, cond}) {
    // Instructions that only fed dropped elements are dead now.
    std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* inst = *it;
      if (inst->user_count() != 0 || inst->IsRoot() || inst->opcode() == HloOpcode::kParameter ||
          inst->HasSideEffect() || !inst->control_successors().empty()) {
        continue;
      }
      RETURN_IF_ERROR(comp->RemoveInstruction(inst));
    }
    HloInstruction* param = comp->parameter_instruction(0);
    *param->mutable_shape() = new_shape;
    for (HloInstruction* gte : std::vector<HloInstruction*>(param->users())) {
      if (new_index[gte->tuple_index()] < 0 && gte->user_count() == 0) {
        RETURN_IF_ERROR(comp->RemoveInstruction(gte));
        continue;
      }
      if (new_index[gte->tuple_index()] < 0) {
        return absl::InternalError(StrCat("dropped loop element ", gte->tuple_index(), " of '",
                                          w->name(), "' is still read by '", gte->name(), "'"));
      }
      gte->set_index(new_index[gte->tuple_index()]);
    }
  }
  // Outside: a smaller initial tuple and a new loop; the old loop's value
  // is rebuilt from the new loop's elements and, for the dropped ones (which
  // the loop only passed on), the initial value:
  //   tuple(gte(new_while, 0), gte(init, 1), ...)
  // (XLA's RemoveDeadTupleIndices; TupleSimplifier cleans it up later).
  HloInstruction* old_init = w->mutable_operand(0);
  std::vector<HloInstruction*> init;
  for (int64_t k : keep) init.push_back(TupleElement(c, old_init, k));
  HloInstruction* new_init = c->AddInstruction(HloInstruction::CreateTuple(init));
  auto loop = HloInstruction::CreateWhile(new_shape, cond, body, new_init);
  loop->set_metadata(w->metadata());
  *loop->mutable_frontend_attributes() = w->frontend_attributes();
  loop->set_raw_backend_config(w->raw_backend_config());
  HloInstruction* new_w = c->AddInstruction(std::move(loop), w->name());
  std::vector<HloInstruction*> elements;
  for (int64_t k = 0; k < n; ++k) {
    // A dropped element reads its surviving twin when it has one, else its
    // initial value.
    int64_t source = k;
    if (new_index[k] < 0 && dead_to_surviving != nullptr && dead_to_surviving->contains(k)) {
      source = dead_to_surviving->at(k);
    }
    HloInstruction* from = new_index[source] >= 0 ? new_w : old_init;
    elements.push_back(c->AddInstruction(
        HloInstruction::CreateGetTupleElement(from, new_index[source] >= 0 ? new_index[source] : k)));
  }
  HloInstruction* rebuilt = c->AddInstruction(HloInstruction::CreateTuple(elements));
  rebuilt->set_metadata(w->metadata());
  RETURN_IF_ERROR(c->ReplaceInstruction(w, rebuilt));
  // XLA builds the loop on clones of the body and condition.
  body->SetName(StrCat(body->name(), ".clone"));
  cond->SetName(StrCat(cond->name(), ".clone"));
  return new_w;
}

bool DisablesWhileLoopDce(const HloInstruction* w) {
  for (const char* key : {"xla_disable_while_loop_dce", "xla.disable_while_loop_dce", "xla_preserve_tuple_indices",
                          "xla.preserve_tuple_indices"}) {
    auto it = w->frontend_attributes().map.find(key);
    if (it == w->frontend_attributes().map.end()) continue;
    std::string v = it->second;
    for (char& ch : v) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (v == "true" || v == "1" || v == "yes") return true;
  }
  return false;
}

bool ParamUsersAreGtes(const HloComputation* c) {
  for (const HloInstruction* user : c->parameter_instruction(0)->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return true;
}

// XLA's TryRemoveDeadWhileParams: an element can go when it affects no
// other element, nothing reads it after the loop and nothing side-effecting
// (nor the condition) depends on it; and a group of elements that only
// affect each other can go together when none of them is read after the
// loop unless the loop passes it through unchanged. Returns the loop after
// dropping them (or w itself).
absl::StatusOr<HloInstruction*> RemoveDeadParams(HloInstruction* w, int64_t* removed) {
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  HloInstruction* root = body->root_instruction();
  if (DisablesWhileLoopDce(w) || !w->control_predecessors().empty() || !w->control_successors().empty() ||
      !w->operand(0)->shape().IsTuple() || root->opcode() != HloOpcode::kTuple || !ParamUsersAreGtes(body) ||
      !ParamUsersAreGtes(cond)) {
    return w;
  }
  const int64_t n = w->operand(0)->shape().tuple_shapes_size();
  if (n == 0) return w;
  std::vector<bool> used_after(n, w->IsRoot());
  for (const HloInstruction* user : w->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) {
      used_after.assign(n, true);
      break;
    }
    used_after[user->tuple_index()] = true;
  }
  // Union-find over the instructions of body and condition.
  absl::flat_hash_map<const HloInstruction*, const HloInstruction*> parent;
  std::function<const HloInstruction*(const HloInstruction*)> find = [&](const HloInstruction* x) {
    auto it = parent.find(x);
    if (it == parent.end() || it->second == x) return x;
    const HloInstruction* r = find(it->second);
    parent[x] = r;
    return r;
  };
  auto merge = [&](const HloInstruction* a, const HloInstruction* b) {
    const HloInstruction* ra = find(a);
    const HloInstruction* rb = find(b);
    if (ra != rb) parent[ra] = rb;
  };
  // The loop elements each value depends on within one iteration, as bit
  // sets over the n elements (a std::set per instruction made this pass
  // the slowest of the gpu pipeline on XLA's Gemma benchmark modules).
  const size_t words = static_cast<size_t>((n + 63) / 64);
  using ElementSet = std::vector<uint64_t>;
  auto set_bit = [](ElementSet& s, int64_t i) { s[i / 64] |= uint64_t{1} << (i % 64); };
  auto has_bit = [](const ElementSet& s, int64_t i) { return ((s[i / 64] >> (i % 64)) & 1) != 0; };
  auto add_all = [](ElementSet& to, const ElementSet& from) {
    for (size_t w = 0; w < to.size(); ++w) to[w] |= from[w];
  };
  absl::flat_hash_map<const HloInstruction*, ElementSet> deps;
  const ElementSet none(words, 0);
  auto deps_of = [&](const HloInstruction* inst) -> const ElementSet& {
    auto it = deps.find(inst);
    return it == deps.end() ? none : it->second;
  };
  ElementSet side_effecting(words, 0);
  for (HloComputation* comp : {body, cond}) {
    const HloInstruction* input = comp->parameter_instruction(0);
    for (const HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (inst == input || inst == root) continue;
      ElementSet d(words, 0);
      if (inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0) == input) {
        set_bit(d, inst->tuple_index());
        const HloInstruction* output = root->operand(inst->tuple_index());
        if (output != inst) merge(inst, output);
      } else {
        for (const HloInstruction* op : inst->operands()) {
          merge(inst, op);
          add_all(d, deps_of(op));
        }
      }
      if (inst->HasSideEffect() || inst == cond->root_instruction()) add_all(side_effecting, d);
      deps[inst] = std::move(d);
    }
  }
  ElementSet affecting_others(words, 0);
  for (int64_t i = 0; i < n; ++i) {
    ElementSet d = deps_of(root->operand(i));
    d[i / 64] &= ~(uint64_t{1} << (i % 64));  // an element feeding itself affects no other
    add_all(affecting_others, d);
  }
  std::vector<bool> keep(n, true);
  for (int64_t i = 0; i < n; ++i) {
    if (!has_bit(affecting_others, i) && !used_after[i] && !has_bit(side_effecting, i)) keep[i] = false;
  }
  std::map<const HloInstruction*, std::set<int64_t>> groups;
  std::vector<const HloInstruction*> group_order;
  auto add_to_group = [&](const HloInstruction* inst, int64_t index) {
    const HloInstruction* g = find(inst);
    if (!groups.contains(g)) group_order.push_back(g);
    groups[g].insert(index);
  };
  for (int64_t i = 0; i < n; ++i) add_to_group(root->operand(i), i);
  for (HloComputation* comp : {body, cond}) {
    for (const HloInstruction* gte : comp->parameter_instruction(0)->users()) add_to_group(gte, gte->tuple_index());
  }
  const HloInstruction* body_param = body->parameter_instruction(0);
  for (const HloInstruction* g : group_order) {
    bool removable = true;
    for (int64_t index : groups[g]) {
      const HloInstruction* output = root->operand(index);
      const bool passthrough = output->opcode() == HloOpcode::kGetTupleElement && output->operand(0) == body_param &&
                               output->tuple_index() == index;
      if (has_bit(side_effecting, index) || (used_after[index] && !passthrough)) removable = false;
    }
    if (!removable) continue;
    for (int64_t index : groups[g]) keep[index] = false;
  }
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    if (keep[i]) kept.push_back(i);
  }
  if (static_cast<int64_t>(kept.size()) == n) return w;
  *removed = n - static_cast<int64_t>(kept.size());
  return ShrinkLoopState(w, kept);
}

// XLA's TryRemoveConstantParams: an element whose initial value and body
// result are equal constants is that constant throughout; it leaves the
// loop state and is read as the constant.
absl::StatusOr<bool> RemoveConstantParams(HloInstruction* w) {
  HloInstruction* init = w->mutable_operand(0);
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  HloComputation* c = w->parent();
  HloInstruction* root = body->root_instruction();
  if (DisablesWhileLoopDce(w) || init->opcode() != HloOpcode::kTuple || root->opcode() != HloOpcode::kTuple ||
      !ParamUsersAreGtes(body) || !ParamUsersAreGtes(cond)) {
    return false;
  }
  const int64_t n = init->operand_count();
  std::vector<bool> constant(n, false);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* a = init->operand(i);
    const HloInstruction* b = root->operand(i);
    constant[i] = a->opcode() == HloOpcode::kConstant && b->opcode() == HloOpcode::kConstant &&
                  a->literal() == b->literal();
    if (!constant[i]) kept.push_back(i);
  }
  if (static_cast<int64_t>(kept.size()) == n) return false;
  if (kept.empty()) {
    // Every element is constant: the loop's value is its initial value.
    RETURN_IF_ERROR(c->ReplaceInstruction(w, init));
    return true;
  }
  std::vector<int64_t> new_index(n, -1);
  std::vector<Shape> shapes;
  for (int64_t i : kept) {
    new_index[i] = static_cast<int64_t>(shapes.size());
    shapes.push_back(init->operand(i)->shape());
  }
  const Shape new_shape = Shape::Tuple(shapes);
  for (HloComputation* comp : {body, cond}) {
    HloInstruction* param = comp->parameter_instruction(0);
    for (HloInstruction* gte : std::vector<HloInstruction*>(param->users())) {
      const int64_t k = gte->tuple_index();
      if (!constant[k]) {
        gte->set_index(new_index[k]);
        continue;
      }
      HloInstruction* value = comp->AddInstruction(HloInstruction::CreateConstant(Literal(init->operand(k)->literal())));
      RETURN_IF_ERROR(gte->ReplaceAllUsesWith(value));
      if (gte->user_count() == 0 && !gte->IsRoot()) {
        RETURN_IF_ERROR(comp->RemoveInstruction(gte));
      }
    }
    *param->mutable_shape() = new_shape;
  }
  std::vector<HloInstruction*> results;
  for (int64_t i : kept) results.push_back(root->mutable_operand(i));
  HloInstruction* new_root = body->AddInstruction(HloInstruction::CreateTuple(results));
  new_root->set_metadata(root->metadata());
  body->set_root_instruction(new_root);
  RETURN_IF_ERROR(body->RemoveInstructionAndUnusedOperands(root));
  std::vector<HloInstruction*> new_init_elements;
  for (int64_t i : kept) new_init_elements.push_back(init->mutable_operand(i));
  HloInstruction* new_init = c->AddInstruction(HloInstruction::CreateTuple(new_init_elements));
  auto loop = HloInstruction::CreateWhile(new_shape, cond, body, new_init);
  loop->set_metadata(w->metadata());
  *loop->mutable_frontend_attributes() = w->frontend_attributes();
  loop->set_raw_backend_config(w->raw_backend_config());
  HloInstruction* new_w = c->AddInstruction(std::move(loop), w->name());
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < n; ++i) {
    elements.push_back(constant[i] ? init->mutable_operand(i)
                                   : c->AddInstruction(HloInstruction::CreateGetTupleElement(new_w, new_index[i])));
  }
  HloInstruction* rebuilt = c->AddInstruction(HloInstruction::CreateTuple(elements));
  rebuilt->set_metadata(w->metadata());
  RETURN_IF_ERROR(c->ReplaceInstruction(w, rebuilt));
  body->SetName(StrCat(body->name(), ".clone"));
  cond->SetName(StrCat(cond->name(), ".clone"));
  return true;
}

// Elements of one group (two or more) become the first of them: reads of
// the others read it, and the others leave the state (XLA's
// RemoveRepeatedWhileTupleIndices). After the loop a dropped element is its
// initial value (replace_with_init) or its twin's value.
absl::StatusOr<HloInstruction*> MergeRepeatedIndices(HloInstruction* w,
                                                     const std::vector<std::vector<int64_t>>& groups,
                                                     bool replace_with_init) {
  std::map<int64_t, int64_t> dead_to_surviving;
  for (const std::vector<int64_t>& group : groups) {
    for (size_t i = 1; i < group.size(); ++i) dead_to_surviving[group[i]] = group[0];
  }
  if (dead_to_surviving.empty()) return w;
  for (HloComputation* comp : {w->while_body(), w->while_condition()}) {
    HloInstruction* param = comp->parameter_instruction(0);
    std::map<int64_t, HloInstruction*> surviving_reads;
    for (HloInstruction* gte : std::vector<HloInstruction*>(param->users())) {
      auto it = dead_to_surviving.find(gte->tuple_index());
      if (it == dead_to_surviving.end()) continue;
      HloInstruction*& read = surviving_reads[it->second];
      if (read == nullptr) read = comp->AddInstruction(HloInstruction::CreateGetTupleElement(param, it->second));
      RETURN_IF_ERROR(comp->ReplaceInstruction(gte, read));
    }
  }
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < w->shape().tuple_shapes_size(); ++i) {
    if (!dead_to_surviving.contains(i)) keep.push_back(i);
  }
  return ShrinkLoopState(w, keep, replace_with_init ? nullptr : &dead_to_surviving);
}

// XLA's TryRemoveRepeatedWhileTupleIndices: elements the body passes
// through unchanged and that start from the same value are one element;
// so are elements the body updates by the same dynamic-update-slice
// (same start, update and indices).
absl::StatusOr<bool> RemoveRepeatedIndices(HloInstruction* w) {
  if (DisablesWhileLoopDce(w) || !w->control_predecessors().empty() || !w->control_successors().empty() ||
      w->operand(0)->opcode() != HloOpcode::kTuple || w->while_body()->root_instruction()->opcode() != HloOpcode::kTuple ||
      !ParamUsersAreGtes(w->while_body()) || !ParamUsersAreGtes(w->while_condition())) {
    return false;
  }
  auto read_of_own_index = [](const HloInstruction* x, int64_t index) {
    return x->opcode() == HloOpcode::kGetTupleElement && x->operand(0) == x->parent()->parameter_instruction(0) &&
           x->tuple_index() == index;
  };
  auto group_by = [](std::vector<std::pair<std::vector<const HloInstruction*>, int64_t>> keyed) {
    std::vector<std::vector<int64_t>> groups;
    std::map<std::vector<const HloInstruction*>, size_t> where;
    for (auto& [key, index] : keyed) {
      auto [it, inserted] = where.emplace(key, groups.size());
      if (inserted) groups.push_back({});
      groups[it->second].push_back(index);
    }
    return groups;
  };
  HloInstruction* original = w;
  {
    const HloInstruction* init = w->operand(0);
    const HloInstruction* root = w->while_body()->root_instruction();
    std::vector<std::pair<std::vector<const HloInstruction*>, int64_t>> keyed;
    for (int64_t i = 0; i < init->operand_count(); ++i) {
      if (read_of_own_index(root->operand(i), i)) keyed.push_back({{init->operand(i)}, i});
    }
    ASSIGN_OR_RETURN(HloInstruction* merged, MergeRepeatedIndices(w, group_by(keyed), /*replace_with_init=*/true));
    w = merged;
  }
  {
    const HloInstruction* init = w->operand(0);
    const HloInstruction* root = w->while_body()->root_instruction();
    std::vector<std::pair<std::vector<const HloInstruction*>, int64_t>> keyed;
    for (int64_t i = 0; i < init->operand_count(); ++i) {
      const HloInstruction* out = root->operand(i);
      if (out->opcode() != HloOpcode::kDynamicUpdateSlice || !read_of_own_index(out->operand(0), i)) continue;
      std::vector<const HloInstruction*> key = {init->operand(i), out->operand(1)};
      for (int64_t k = 2; k < out->operand_count(); ++k) key.push_back(out->operand(k));
      keyed.push_back({key, i});
    }
    ASSIGN_OR_RETURN(HloInstruction* merged, MergeRepeatedIndices(w, group_by(keyed), /*replace_with_init=*/false));
    w = merged;
  }
  return w != original;
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
  ASSIGN_OR_RETURN(HloInstruction* result, InlineCall(added->root_instruction()));
  if (flatten_result) {
    std::vector<HloInstruction*> out;
    FlattenLeaves(added, result, out);
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
  ASSIGN_OR_RETURN(HloComputation* body,
      WrapWithFlatState(module, w->while_body(), w->shape(), flat, /*flatten_result=*/true));
  ASSIGN_OR_RETURN(HloComputation* cond,
      WrapWithFlatState(module, w->while_condition(), w->shape(), flat, /*flatten_result=*/false));
  HloInstruction* new_init = c->AddInstruction(HloInstruction::CreateTuple(init));
  auto loop = HloInstruction::CreateWhile(flat, cond, body, new_init);
  loop->set_metadata(w->metadata());
  HloInstruction* new_w = c->AddInstruction(std::move(loop));
  std::vector<HloInstruction*> leaves;
  for (int64_t k = 0; k < static_cast<int64_t>(leaf_shapes.size()); ++k) {
    leaves.push_back(c->AddInstruction(HloInstruction::CreateGetTupleElement(new_w, k)));
  }
  size_t pos = 0;
  HloInstruction* nested = RebuildNested(c, w->shape(), leaves, pos);
  RETURN_IF_ERROR(c->ReplaceInstruction(w, nested));
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  // Like XLA: the loops are collected first, and each gets at most one of
  // the rewrites below per run (in this order); the pipeline's fixed point
  // applies the rest.
  std::vector<HloInstruction*> whiles;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kWhile) whiles.push_back(inst);
    }
  }
  bool changed = false;
  for (HloInstruction* w : whiles) {
    if (CountCallers(module, w->while_body()) > 1 || CountCallers(module, w->while_condition()) > 1 ||
        DisablesWhileLoopDce(w)) {
      continue;
    }
    HloComputation* c = w->parent();
    // Elements that are provably the same => one element.
    ASSIGN_OR_RETURN(bool merged, RemoveRepeatedIndices(w));
    if (merged) {
      BumpCounter("repeated loop element merged");
      changed = true;
      continue;
    }
    if (IsRewritableWhile(w)) {
      // while((..., (a, b), ...)) => while((..., a, b, ...)): flat state.
      ASSIGN_OR_RETURN(bool flattened, FlattenNestedState(w));
      if (flattened) {
        BumpCounter("nested state flattened");
        changed = true;
        continue;
      }
    }
    // Elements nothing needs => dropped from the state.
    int64_t removed = 0;
    ASSIGN_OR_RETURN(HloInstruction* shrunk, RemoveDeadParams(w, &removed));
    if (removed > 0) {
      BumpCounter("unused loop element removed", removed);
      changed = true;
      continue;
    }
    // Elements that stay one constant => read as that constant.
    ASSIGN_OR_RETURN(bool constants, RemoveConstantParams(w));
    if (constants) {
      BumpCounter("constant loop element removed");
      changed = true;
      continue;
    }
    if (!w->control_predecessors().empty() || !w->control_successors().empty() ||
        ComputationHasSideEffects(w->while_condition()) || ComputationHasSideEffects(w->while_body())) {
      continue;
    }
    std::optional<int64_t> trips = ComputeWhileTripCount(*w);
    if (trips && *trips == 0) {
      // while(init) that never runs => init
      RETURN_IF_ERROR(c->ReplaceInstruction(w, w->mutable_operand(0)));
      BumpCounter("zero-trip loop removed");
      changed = true;
      continue;
    }
    if (trips && *trips == 1 && CallInlineAllowed(w)) {
      // while(init) that runs once => body(init), inlined
      auto call = HloInstruction::CreateCall(w->shape(), {w->mutable_operand(0)}, w->while_body());
      call->set_metadata(w->metadata());
      HloInstruction* added = c->AddInstruction(std::move(call));
      RETURN_IF_ERROR(c->ReplaceInstruction(w, added));
      ASSIGN_OR_RETURN(HloInstruction* inlined, InlineCall(added));
      BumpCounter("one-trip loop inlined");
      changed = true;
    }
  }
  if (changed) {
    // XLA runs HloDCE after a change.
    ASSIGN_OR_RETURN(bool dce, HloDCE().Run(module));
  }
  return changed;
}

}  // namespace passlab
