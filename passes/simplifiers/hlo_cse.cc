#include "passes/simplifiers/hlo_cse.h"

#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

constexpr std::string_view kSdyShardingAttr = "xla.sdy.sharding";

bool IsBinaryCommutative(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
    case HloOpcode::kMultiply:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

std::string FrontendAttribute(const HloInstruction* inst, std::string_view name) {
  auto it = inst->frontend_attributes().map.find(std::string(name));
  return it == inst->frontend_attributes().map.end() ? std::string() : it->second;
}

// XLA's HloCSE::ShouldEliminateInstruction plus the opcodes passlab keeps
// apart on purpose (random draws, async and copy pairs).
bool ShouldEliminate(const HloInstruction* inst) {
  const auto& attrs = inst->frontend_attributes().map;
  if (inst->operand_count() == 0 && inst->opcode() != HloOpcode::kPartitionId &&
      inst->opcode() != HloOpcode::kReplicaId && !attrs.contains("_xla_cse_safe_zero_operand")) {
    return false;
  }
  if (attrs.contains("MUST_FUSE") || inst->HasSideEffect()) return false;
  switch (inst->opcode()) {
    case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCopyDone:
      return false;
    default:
      return true;
  }
}

// Equality of instructions as XLA's CSE sees it
// (HloInstruction::IdenticalIgnoringCommutativeOperandOrder, sharding
// sensitive), with called computations compared structurally.
class CseEquality {
 public:
  explicit CseEquality(bool layout_sensitive) : layout_sensitive_(layout_sensitive) {}

  bool SameShape(const Shape& a, const Shape& b) const { return layout_sensitive_ ? a == b : a.Compatible(b); }

  // Everything but the operands.
  bool SameAttributes(const HloInstruction& a, const HloInstruction& b) {
    if (a.opcode() != b.opcode() || !SameShape(a.shape(), b.shape()) || a.operand_count() != b.operand_count() ||
        a.index() != b.index() || a.dimensions() != b.dimensions() ||
        a.raw_backend_config() != b.raw_backend_config() ||
        a.async_execution_thread() != b.async_execution_thread() || !(a.attrs() == b.attrs())) {
      return false;
    }
    if (a.opcode() == HloOpcode::kFusion && a.fusion_kind() != b.fusion_kind()) return false;
    if (a.has_literal() != b.has_literal()) return false;
    if (a.has_literal() && (a.literal() != b.literal() || !SameShape(a.literal().shape(), b.literal().shape()))) {
      return false;
    }
    if (a.has_sharding() && b.has_sharding() && !(a.sharding() == b.sharding())) return false;
    if (FrontendAttribute(&a, kSdyShardingAttr) != FrontendAttribute(&b, kSdyShardingAttr)) return false;
    if (a.called_computations().size() != b.called_computations().size()) return false;
    for (size_t i = 0; i < a.called_computations().size(); ++i) {
      if (!SameComputation(a.called_computations()[i], b.called_computations()[i])) return false;
    }
    return true;
  }

  // Iotas are interchangeable operands when they are equal.
  bool SameOperand(const HloInstruction* a, const HloInstruction* b) const {
    if (a == b) return true;
    return a->opcode() == HloOpcode::kIota && b->opcode() == HloOpcode::kIota &&
           a->iota_dimension() == b->iota_dimension() && a->attrs() == b->attrs() &&
           SameShape(a->shape(), b->shape());
  }

  bool Identical(const HloInstruction& a, const HloInstruction& b) {
    if (&a == &b) return true;
    if (!SameAttributes(a, b)) return false;
    if (IsBinaryCommutative(a.opcode()) && a.operand_count() == 2) {
      return (SameOperand(a.operand(0), b.operand(0)) && SameOperand(a.operand(1), b.operand(1))) ||
             (SameOperand(a.operand(0), b.operand(1)) && SameOperand(a.operand(1), b.operand(0)));
    }
    for (int64_t i = 0; i < a.operand_count(); ++i) {
      if (!SameOperand(a.operand(i), b.operand(i))) return false;
    }
    return true;
  }

 private:
  // Structural equality: the same parameters and the same instruction DAG
  // under the roots (layouts included), names aside.
  bool SameComputation(const HloComputation* a, const HloComputation* b) {
    if (a == b) return true;
    auto key = std::make_pair(a, b);
    if (auto it = computations_.find(key); it != computations_.end()) return it->second;
    computations_[key] = false;  // recursion guard
    bool same = a->num_parameters() == b->num_parameters();
    for (int64_t i = 0; same && i < a->num_parameters(); ++i) {
      same = a->parameter_instruction(i)->shape() == b->parameter_instruction(i)->shape();
    }
    absl::flat_hash_map<const HloInstruction*, const HloInstruction*> matched;
    same = same && SameTree(a->root_instruction(), b->root_instruction(), matched);
    computations_[key] = same;
    return same;
  }

  bool SameTree(const HloInstruction* a, const HloInstruction* b,
                absl::flat_hash_map<const HloInstruction*, const HloInstruction*>& matched) {
    if (auto it = matched.find(a); it != matched.end()) return it->second == b;
    if (a->opcode() != b->opcode() || !(a->shape() == b->shape())) return false;
    if (a->opcode() == HloOpcode::kParameter) {
      if (a->parameter_number() != b->parameter_number()) return false;
    } else {
      CseEquality strict(/*layout_sensitive=*/true);
      if (!strict.SameAttributes(*a, *b)) return false;
      for (int64_t i = 0; i < a->operand_count(); ++i) {
        if (!SameTree(a->operand(i), b->operand(i), matched)) return false;
      }
    }
    matched[a] = b;
    return true;
  }

  bool layout_sensitive_;
  std::map<std::pair<const HloComputation*, const HloComputation*>, bool> computations_;
};

size_t CseHash(const HloInstruction* inst) {
  size_t h = absl::HashOf(static_cast<int>(inst->opcode()), inst->shape().IsArray() ? inst->shape().dimensions()
                                                                                    : std::vector<int64_t>{});
  if (IsBinaryCommutative(inst->opcode()) && inst->operand_count() == 2) {
    int64_t id0 = inst->operand(0)->opcode() == HloOpcode::kIota ? 0 : inst->operand(0)->unique_id();
    int64_t id1 = inst->operand(1)->opcode() == HloOpcode::kIota ? 0 : inst->operand(1)->unique_id();
    return absl::HashOf(h, std::min(id0, id1), std::max(id0, id1));
  }
  for (const HloInstruction* op : inst->operands()) {
    if (op->opcode() != HloOpcode::kIota) h = absl::HashOf(h, op->unique_id());
  }
  return absl::HashOf(h, inst->dimensions(), inst->index());
}

// Equal constants (type, value and, when layout-sensitive, layout): the
// later ones are replaced by the first in instruction order.
absl::StatusOr<bool> CombineConstants(HloComputation* c, CseEquality& eq) {
  bool has_domain = false;
  for (HloInstruction* inst : c->instructions()) has_domain = has_domain || inst->opcode() == HloOpcode::kDomain;
  // XLA keys constants by domain too; passlab does not model domains, so it
  // leaves constants alone when the computation has any.
  if (has_domain) return false;
  absl::flat_hash_map<std::string, std::vector<HloInstruction*>> constants;
  bool changed = false;
  for (HloInstruction* inst : c->instructions()) {
    if (inst->opcode() != HloOpcode::kConstant) continue;
    std::vector<HloInstruction*>& same_text = constants[inst->shape().ToString(false)];
    HloInstruction* match = nullptr;
    for (HloInstruction* candidate : same_text) {
      if (eq.SameShape(candidate->shape(), inst->shape()) && candidate->literal() == inst->literal()) {
        match = candidate;
        break;
      }
    }
    if (match == nullptr) {
      same_text.push_back(inst);
      continue;
    }
    RETURN_IF_ERROR(inst->ReplaceAllUsesWith(match));
    RETURN_IF_ERROR(c->RemoveInstruction(inst));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloCSE::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  CseEquality eq(options_.is_layout_sensitive);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (options_.only_fusion_computations && !c->IsFusionComputation()) continue;
    ASSIGN_OR_RETURN(bool constants, CombineConstants(c, eq));
    if (constants) BumpCounter("merged constant");
    changed = changed || constants;

    absl::flat_hash_map<size_t, std::vector<HloInstruction*>> representatives;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (!ShouldEliminate(inst)) continue;
      // XLA's HloComputation::IsSafelyRemovable.
      if (inst->opcode() == HloOpcode::kParameter && !c->IsFusionComputation()) continue;
      if (!options_.ignore_control_dependencies &&
          (!inst->control_predecessors().empty() || !inst->control_successors().empty())) {
        continue;
      }
      std::vector<HloInstruction*>& bucket = representatives[CseHash(inst)];
      HloInstruction* equal = nullptr;
      for (HloInstruction* candidate : bucket) {
        if (eq.Identical(*candidate, *inst)) {
          equal = candidate;
          break;
        }
      }
      if (equal != nullptr) {
        BumpCounter(StrCat("merged ", HloOpcodeString(inst->opcode())));
        RETURN_IF_ERROR(inst->ReplaceAllUsesWith(equal));
        if (options_.ignore_control_dependencies) {
          for (HloInstruction* pred : std::vector<HloInstruction*>(inst->control_predecessors())) {
            pred->RemoveControlDependencyTo(inst);
          }
          for (HloInstruction* succ : std::vector<HloInstruction*>(inst->control_successors())) {
            inst->RemoveControlDependencyTo(succ);
          }
        }
        RETURN_IF_ERROR(c->RemoveInstructionAndUnusedOperands(inst));
        changed = true;
        continue;
      }
      bucket.push_back(inst);
      // Equal iota operands of one instruction become one.
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        HloInstruction* a = inst->mutable_operand(i);
        if (a->opcode() != HloOpcode::kIota) continue;
        for (int64_t j = i + 1; j < inst->operand_count(); ++j) {
          HloInstruction* b = inst->mutable_operand(j);
          if (a == b || !eq.SameOperand(a, b)) continue;
          inst->ReplaceOperandWith(j, a);
          changed = true;
          if (b->user_count() == 0 && !b->IsRoot()) {
            RETURN_IF_ERROR(c->RemoveInstruction(b));
          }
        }
      }
    }
  }
  return changed;
}

}  // namespace passlab
