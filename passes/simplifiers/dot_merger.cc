#include "passes/simplifiers/dot_merger.h"

#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool SameLayout(const Shape& a, const Shape& b) {
  if (a.has_layout() != b.has_layout()) return false;
  return !a.has_layout() || a.layout() == b.layout();
}

class Merger {
 public:
  Merger(HloComputation& c, int64_t max_size) : c_(c), max_size_(max_size) {}

  bool IsCandidate(const HloInstruction* dot) const {
    int64_t bytes = dot->shape().byte_size();
    for (const HloInstruction* op : dot->operands()) bytes += op->shape().byte_size();
    return bytes <= max_size_;
  }

  absl::StatusOr<HloInstruction*> TryMerge(HloInstruction* a, HloInstruction* b) {
    absl::StatusOr<HloInstruction*> merged = TryMergeSameOperand(a, b);
    if (!merged.ok() || *merged != nullptr) return merged;
    // The shared operand may sit on different sides, once transposed; the
    // merge is not symmetric, so try both orders.
    merged = TryMergeLhsWithRhs(a, b);
    if (!merged.ok() || *merged != nullptr) return merged;
    return TryMergeLhsWithRhs(b, a);
  }

  // d(x, wa), d(x, wb) => slices of d(x, concat(wa, wb)) (or the mirror
  // image with the rhs shared). Returns the merged dot, or null.
  absl::StatusOr<HloInstruction*> TryMergeSameOperand(HloInstruction* a, HloInstruction* b) {
    // Guards: a shared operand, same types, numbers, precision and layouts.
    bool lhs_same = a->operand(0) == b->operand(0);
    if (!lhs_same && a->operand(1) != b->operand(1)) return nullptr;
    if (a->operand_count() != 2 || b->operand_count() != 2) return nullptr;  // sparse
    if (a->operand(0)->shape().element_type() != b->operand(0)->shape().element_type() ||
        a->operand(1)->shape().element_type() != b->operand(1)->shape().element_type() ||
        a->shape().element_type() != b->shape().element_type()) {
      return nullptr;
    }
    const DotDimensionNumbers& dnums = a->attrs().dot_dnums;
    if (!(dnums == b->attrs().dot_dnums) || !(a->attrs().precision_config == b->attrs().precision_config) ||
        !a->attrs().sparsity.empty() || !b->attrs().sparsity.empty()) {
      return nullptr;
    }
    if (!SameLayout(a->shape(), b->shape())) return nullptr;
    HloInstruction* shared = a->mutable_operand(lhs_same ? 0 : 1);
    HloInstruction* diff_a = a->mutable_operand(lhs_same ? 1 : 0);
    HloInstruction* diff_b = b->mutable_operand(lhs_same ? 1 : 0);
    if (!SameLayout(diff_a->shape(), diff_b->shape())) return nullptr;

    // The differing operands must have exactly one free (non-contracting,
    // non-batch) dimension: the one to concatenate along.
    std::set<int64_t> used;
    const auto& contracting = lhs_same ? dnums.rhs_contracting_dimensions : dnums.lhs_contracting_dimensions;
    const auto& batch = lhs_same ? dnums.rhs_batch_dimensions : dnums.lhs_batch_dimensions;
    used.insert(contracting.begin(), contracting.end());
    used.insert(batch.begin(), batch.end());
    if (static_cast<int64_t>(used.size()) + 1 != diff_a->shape().rank()) return nullptr;
    int64_t concat_dim = 0;
    while (used.count(concat_dim) != 0) ++concat_dim;
    for (int64_t d = 0; d < diff_a->shape().rank(); ++d) {
      if (d != concat_dim && diff_a->shape().dimensions(d) != diff_b->shape().dimensions(d)) return nullptr;
    }
    int64_t shared_free = shared->shape().rank() - static_cast<int64_t>(dnums.lhs_batch_dimensions.size()) -
                          static_cast<int64_t>((lhs_same ? dnums.lhs_contracting_dimensions
                                                         : dnums.rhs_contracting_dimensions).size());

    std::vector<int64_t> concat_dims = diff_a->shape().dimensions();
    concat_dims[concat_dim] += diff_b->shape().dimensions(concat_dim);
    Shape concat_shape = diff_a->shape();
    for (int64_t d = 0; d < concat_shape.rank(); ++d) concat_shape.set_dimensions(d, concat_dims[d]);
    // concat(concat(w0, w1), w2) => concat(w0, w1, w2) when the inner one
    // only fed `a` (a dot this pass merged before): a third dot joining a
    // merged pair does not nest concatenates.
    std::vector<HloInstruction*> parts;
    for (HloInstruction* op : {diff_a, diff_b}) {
      if (op->opcode() == HloOpcode::kConcatenate && op->concatenate_dimension() == concat_dim &&
          op->user_count() == 1) {
        parts.insert(parts.end(), op->operands().begin(), op->operands().end());
        flattened_.push_back(op);
      } else {
        parts.push_back(op);
      }
    }
    HloInstruction* concat = c_.AddInstruction(HloInstruction::CreateConcatenate(concat_shape, parts, concat_dim));

    // Result dims: batch, lhs free, rhs free. The concatenated dimension is
    // the last (rhs differs) or the last lhs free one (lhs differs).
    const int64_t rank = a->shape().rank();
    const int64_t slice_dim = lhs_same ? rank - 1 : rank - 1 - shared_free;
    Shape merged_shape = a->shape();
    merged_shape.set_dimensions(slice_dim, a->shape().dimensions(slice_dim) + b->shape().dimensions(slice_dim));
    HloInstruction* lhs = lhs_same ? shared : concat;
    HloInstruction* rhs = lhs_same ? concat : shared;
    HloInstruction* merged = c_.AddInstruction(
        HloInstruction::CreateDot(merged_shape, lhs, rhs, dnums, a->attrs().precision_config));
    merged->set_metadata(!a->metadata().op_name.empty() ? a->metadata() : b->metadata());

    std::vector<SliceDimension> slice;
    for (int64_t d = 0; d < rank; ++d) slice.push_back({0, merged_shape.dimensions(d), 1});
    slice[slice_dim].limit = a->shape().dimensions(slice_dim);
    HloInstruction* new_a = c_.AddInstruction(HloInstruction::CreateSlice(a->shape(), merged, slice));
    slice[slice_dim] = {a->shape().dimensions(slice_dim), merged_shape.dimensions(slice_dim), 1};
    HloInstruction* new_b = c_.AddInstruction(HloInstruction::CreateSlice(b->shape(), merged, slice));
    // Uses move now; the old dots are removed at the end, so that pointers
    // held in the candidate lists stay valid.
    if (absl::Status s = MoveUses(a, new_a); !s.ok()) return s;
    if (absl::Status s = MoveUses(b, new_b); !s.ok()) return s;
    return merged;
  }

  // a = dot(x[m,k], wa[k,na]), b = dot(wb[nb,k], transpose(x)[k,m]), both
  // in DotDecomposer form (rank 2, contracting {1} x {0}, no batch):
  //   => d = dot(x, concat(wa, transpose(wb)))  [m, na+nb]
  //      a = slice(d)[:, 0:na], b = transpose(slice(d)[:, na:])
  // (XLA's TryMergeLHSWithRHSOperand; x and its transpose may be either
  // way round.)
  absl::StatusOr<HloInstruction*> TryMergeLhsWithRhs(HloInstruction* a, HloInstruction* b) {
    auto canonical = [](const HloInstruction* d) {
      const DotDimensionNumbers& n = d->attrs().dot_dnums;
      return d->operand_count() == 2 && d->attrs().sparsity.empty() && n.lhs_batch_dimensions.empty() &&
             n.rhs_batch_dimensions.empty() && n.lhs_contracting_dimensions == std::vector<int64_t>{1} &&
             n.rhs_contracting_dimensions == std::vector<int64_t>{0} && d->operand(0)->shape().rank() == 2 &&
             d->operand(1)->shape().rank() == 2;
    };
    if (!canonical(a) || !canonical(b)) return nullptr;
    HloInstruction* a_lhs = a->mutable_operand(0);
    HloInstruction* a_rhs = a->mutable_operand(1);
    HloInstruction* b_lhs = b->mutable_operand(0);
    HloInstruction* b_rhs = b->mutable_operand(1);
    if (a->shape().element_type() != b->shape().element_type() ||
        a_rhs->shape().element_type() != b_lhs->shape().element_type() ||
        a_lhs->shape().element_type() != b_rhs->shape().element_type() ||
        !(a->attrs().precision_config == b->attrs().precision_config) ||
        a->shape().dimensions(0) != b->shape().dimensions(1)) {
      return nullptr;
    }
    // One of a_lhs, b_rhs is the 2-d transpose of the other.
    auto transpose_of = [](const HloInstruction* t, const HloInstruction* x) {
      return t->opcode() == HloOpcode::kTranspose && t->operand(0) == x &&
             t->dimensions() == std::vector<int64_t>{1, 0};
    };
    if (!transpose_of(a_lhs, b_rhs) && !transpose_of(b_rhs, a_lhs)) return nullptr;

    const int64_t m = a->shape().dimensions(0), na = a->shape().dimensions(1), nb = b->shape().dimensions(0);
    const int64_t k = a_rhs->shape().dimensions(0);
    HloInstruction* b_lhs_t = c_.AddInstruction(HloInstruction::CreateTranspose(
        Shape(b_lhs->shape().element_type(), {k, nb}), b_lhs, {1, 0}));
    HloInstruction* concat = c_.AddInstruction(HloInstruction::CreateConcatenate(
        Shape(a_rhs->shape().element_type(), {k, na + nb}), {a_rhs, b_lhs_t}, 1));
    HloInstruction* merged = c_.AddInstruction(HloInstruction::CreateDot(
        Shape(a->shape().element_type(), {m, na + nb}), a_lhs, concat, a->attrs().dot_dnums,
        a->attrs().precision_config));
    merged->set_metadata(!a->metadata().op_name.empty() ? a->metadata() : b->metadata());
    HloInstruction* new_a = c_.AddInstruction(HloInstruction::CreateSlice(a->shape(), merged, {{0, m, 1}, {0, na, 1}}));
    HloInstruction* slice_b = c_.AddInstruction(HloInstruction::CreateSlice(
        Shape(a->shape().element_type(), {m, nb}), merged, {{0, m, 1}, {na, na + nb, 1}}));
    HloInstruction* new_b = c_.AddInstruction(HloInstruction::CreateTranspose(b->shape(), slice_b, {1, 0}));
    if (absl::Status s = MoveUses(a, new_a); !s.ok()) return s;
    if (absl::Status s = MoveUses(b, new_b); !s.ok()) return s;
    return merged;
  }

  // Replaces the uses of `old` by `replacement`. When that is a unit-stride
  // slice of the merged dot, users that are unit-stride slices themselves
  // (of a dot merged before) become one slice of the merged dot:
  // slice(slice(A)) => slice(A).
  absl::Status MoveUses(HloInstruction* old, HloInstruction* replacement) {
    if (replacement->opcode() != HloOpcode::kSlice) return old->ReplaceAllUsesWith(replacement);
    HloInstruction* slice = replacement;
    std::vector<HloInstruction*> users = old->users();
    for (HloInstruction* user : users) {
      if (user->user_count() == 0 && !user->IsRoot()) continue;  // garbage already
      bool unit = user->opcode() == HloOpcode::kSlice;
      for (const SliceDimension& d : user->attrs().slice) unit = unit && d.stride == 1;
      if (!unit) continue;
      std::vector<SliceDimension> composed = user->attrs().slice;
      for (size_t d = 0; d < composed.size(); ++d) {
        composed[d].start += slice->attrs().slice[d].start;
        composed[d].limit += slice->attrs().slice[d].start;
      }
      HloInstruction* direct = c_.AddInstruction(
          HloInstruction::CreateSlice(user->shape(), slice->mutable_operand(0), std::move(composed)));
      direct->set_metadata(user->metadata());
      created_slices_.push_back(direct);
      if (absl::Status s = user->ReplaceAllUsesWith(direct); !s.ok()) return s;
      stale_slices_.push_back(user);
    }
    created_slices_.push_back(slice);  // unused when every use was composed
    return old->ReplaceAllUsesWith(slice);
  }

  absl::StatusOr<bool> Run() {
    // Operand -> dots using it, both ordered by unique id for determinism.
    std::map<int64_t, std::vector<HloInstruction*>> classes;
    for (HloInstruction* inst : c_.MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kDot || !inst->control_predecessors().empty() ||
          !inst->control_successors().empty()) {
        continue;
      }
      for (HloInstruction* op : inst->operands()) {
        // A transposed operand also counts as its operand (DotDecomposer
        // transposes operands into its canonical form).
        for (HloInstruction* key : {op, op->opcode() == HloOpcode::kTranspose ? op->mutable_operand(0) : op}) {
          std::vector<HloInstruction*>& dots = classes[key->unique_id()];
          if (std::find(dots.begin(), dots.end(), inst) == dots.end()) dots.push_back(inst);
        }
      }
    }
    absl::flat_hash_set<HloInstruction*> dead;
    std::vector<HloInstruction*> dead_in_order;
    for (auto& [id, dots] : classes) {
      if (dots.size() < 2) continue;
      std::sort(dots.begin(), dots.end(),
                [](const HloInstruction* x, const HloInstruction* y) { return x->unique_id() < y->unique_id(); });
      for (size_t i = 0; i < dots.size(); ++i) {
        for (size_t j = i + 1; j < dots.size() && dots[i] != nullptr; ++j) {
          HloInstruction* a = dots[i];
          HloInstruction* b = dots[j];
          if (b == nullptr || dead.contains(a) || dead.contains(b)) continue;
          if (!IsCandidate(a) && !IsCandidate(b)) continue;
          if (Reaches(a, b) || Reaches(b, a)) continue;
          absl::StatusOr<HloInstruction*> merged = TryMerge(a, b);
          if (!merged.ok()) return merged.status();
          if (*merged == nullptr) continue;
          reach_valid_ = false;  // the merge changed the graph
          for (HloInstruction* d : {a, b}) {
            dead.insert(d);
            dead_in_order.push_back(d);
          }
          dots[i] = *merged;
          dots[j] = nullptr;
        }
      }
    }
    // Remove what the merges left unused: composed-away slices first, then
    // dots (users before operands), then flattened concatenates.
    std::vector<HloInstruction*> garbage;
    absl::flat_hash_set<HloInstruction*> listed;
    for (const auto* list : {&stale_slices_, &created_slices_, &dead_in_order, &flattened_}) {
      for (HloInstruction* g : *list) {
        if (listed.insert(g).second) garbage.push_back(g);
      }
    }
    for (bool progress = true; progress && !garbage.empty();) {
      progress = false;
      for (HloInstruction*& g : garbage) {
        if (g == nullptr || g->user_count() != 0 || g->IsRoot()) continue;
        if (absl::Status s = c_.RemoveInstruction(g); !s.ok()) return s;
        g = nullptr;
        progress = true;
      }
    }
    return !dead_in_order.empty();
  }

 private:
  // Whether dot `from` reaches `to` along operand and control edges: one
  // pass over the computation gives every instruction the bit set of the dots
  // it depends on (recomputed only after a merge changed the graph), instead
  // of a graph walk per pair of dots.
  bool Reaches(const HloInstruction* from, const HloInstruction* to) {
    if (!reach_valid_) ComputeDotReachability();
    const int64_t bit = dot_index_.at(from);
    return (reach_bits_.at(to)[bit / 64] >> (bit % 64)) & 1;
  }

  void ComputeDotReachability() {
    dot_index_.clear();
    reach_bits_.clear();
    std::vector<HloInstruction*> order = c_.MakeInstructionPostOrder();
    for (const HloInstruction* inst : order) {
      if (inst->opcode() == HloOpcode::kDot) dot_index_.emplace(inst, dot_index_.size());
    }
    const size_t words = (dot_index_.size() + 63) / 64;
    for (const HloInstruction* inst : order) {
      std::vector<uint64_t> bits(words, 0);
      for (const auto* list : {&inst->operands(), &inst->control_predecessors()}) {
        for (const HloInstruction* pred : *list) {
          const std::vector<uint64_t>& p = reach_bits_.at(pred);
          for (size_t w = 0; w < words; ++w) bits[w] |= p[w];
        }
      }
      if (auto it = dot_index_.find(inst); it != dot_index_.end()) {
        bits[it->second / 64] |= uint64_t{1} << (it->second % 64);
      }
      reach_bits_.emplace(inst, std::move(bits));
    }
    reach_valid_ = true;
  }

  bool reach_valid_ = false;
  absl::flat_hash_map<const HloInstruction*, int64_t> dot_index_;
  absl::flat_hash_map<const HloInstruction*, std::vector<uint64_t>> reach_bits_;
  HloComputation& c_;
  int64_t max_size_;
  std::vector<HloInstruction*> flattened_;     // concatenates replaced by flat ones
  std::vector<HloInstruction*> stale_slices_;    // slices replaced by composed ones
  std::vector<HloInstruction*> created_slices_;  // may end up unused
};

}  // namespace

absl::StatusOr<bool> DotMerger::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::StatusOr<bool> merged = Merger(*c, options_.max_size_to_merge).Run();
    if (!merged.ok()) return merged.status();
    if (*merged) BumpCounter("merged dot pairs");
    changed = changed || *merged;
  }
  return changed;
}

}  // namespace passlab
