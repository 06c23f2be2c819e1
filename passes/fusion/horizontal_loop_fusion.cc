#include "passes/fusion/horizontal_loop_fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"

namespace passlab {
namespace {

constexpr int64_t kMaxElements = 128 * 2048;
constexpr int64_t kMaxFusedInstructions = 30;
constexpr int64_t kMaxBatch = 32;

bool HasDefaultLayout(const Shape& s) {
  if (!s.has_layout()) return true;
  const std::vector<int64_t>& m2m = s.layout().minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != s.rank() - 1 - static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool IsCandidate(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion && h.fusion_kind() == FusionKind::kLoop && h.shape().IsArray() &&
         IsFusibleFusion(h) && ReductionHero(h) == nullptr && HasDefaultLayout(h.shape()) &&
         h.shape().element_count() > 0 && h.shape().element_count() <= kMaxElements &&
         FusedInstructionCount(h) <= kMaxFusedInstructions && !h.IsRoot();
}

Shape Flat(const Shape& s, int64_t n) {
  Shape flat = Shape::Array(s.element_type(), {n});
  return flat;
}

// Replaces the fusions of `batch` by one fusion computing
// tuple(slice_k(concatenate(reshape_k(value_k)))), read back through
// bitcasts.
absl::Status FuseHorizontally(HloComputation& computation, const std::vector<HloInstruction*>& batch) {
  HloModule* module = computation.parent();
  HloComputation* body = module->AddEmbeddedComputation(std::make_unique<HloComputation>("fused_computation"));
  std::vector<HloInstruction*> operands;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> parameter_of;
  auto parameter = [&](HloInstruction* operand) {
    auto it = parameter_of.find(operand);
    if (it != parameter_of.end()) return it->second;
    int64_t n = static_cast<int64_t>(operands.size());
    operands.push_back(operand);
    HloInstruction* p =
        body->AddParameter(HloInstruction::CreateParameter(n, operand->shape(), StrCat("param_", n)));
    parameter_of[operand] = p;
    return p;
  };
  std::vector<HloInstruction*> flats;
  int64_t total = 0;
  for (HloInstruction* f : batch) {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
    const HloComputation* inner = f->fused_instructions_computation();
    for (int64_t i = 0; i < inner->num_parameters(); ++i) {
      clones[inner->parameter_instruction(i)] = parameter(f->mutable_operand(i));
    }
    for (HloInstruction* h : inner->MakeInstructionPostOrder()) {
      if (h->opcode() == HloOpcode::kParameter) continue;
      std::vector<HloInstruction*> ops;
      for (HloInstruction* o : h->operands()) ops.push_back(clones.at(o));
      clones[h] = body->AddInstruction(h->CloneWithNewOperands(h->shape(), ops));
    }
    int64_t n = f->shape().element_count();
    flats.push_back(
        body->AddInstruction(HloInstruction::CreateReshape(Flat(f->shape(), n), clones.at(inner->root_instruction()))));
    total += n;
  }
  PrimitiveType type = batch.front()->shape().element_type();
  HloInstruction* concat =
      body->AddInstruction(HloInstruction::CreateConcatenate(Shape::Array(type, {total}), flats, 0));
  std::vector<HloInstruction*> slices;
  int64_t offset = 0;
  for (HloInstruction* f : batch) {
    int64_t n = f->shape().element_count();
    SliceDimension d;
    d.start = offset;
    d.limit = offset + n;
    d.stride = 1;
    slices.push_back(body->AddInstruction(HloInstruction::CreateSlice(Flat(f->shape(), n), concat, {d})));
    offset += n;
  }
  HloInstruction* root = body->AddInstruction(HloInstruction::CreateTuple(slices));
  body->set_root_instruction(root);
  HloInstruction* fusion = computation.AddInstruction(
      HloInstruction::CreateFusion(root->shape(), FusionKind::kLoop, operands, body), "horizontally_fused");
  for (size_t k = 0; k < batch.size(); ++k) {
    HloInstruction* gte = computation.AddInstruction(HloInstruction::CreateGetTupleElement(fusion, k));
    HloInstruction* back = computation.AddInstruction(HloInstruction::CreateBitcast(batch[k]->shape(), gte));
    HloComputation* old_body = batch[k]->fused_instructions_computation();
    RETURN_IF_ERROR(computation.ReplaceInstruction(batch[k], back));
    RETURN_IF_ERROR(module->RemoveEmbeddedComputation(old_body));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> GpuHorizontalLoopFusion::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : ProgramComputations(module)) {
    ReachabilityQuery reachability(*computation);
    std::vector<HloInstruction*> order = computation->MakeInstructionPostOrder();
    absl::flat_hash_set<const HloInstruction*> removed;
    computation->set_removal_listener([&](const HloInstruction* h) { removed.insert(h); });
    absl::Status status;
    for (auto it = order.rbegin(); it != order.rend() && status.ok(); ++it) {
      if (removed.contains(*it)) continue;
      std::vector<HloInstruction*> candidates;
      for (HloInstruction* o : (*it)->operands()) {
        if (IsCandidate(*o) && std::find(candidates.begin(), candidates.end(), o) == candidates.end()) {
          candidates.push_back(o);
        }
      }
      // Greedy batches: one element type, mutually independent, within the
      // operand/output limit.
      std::vector<bool> taken(candidates.size(), false);
      for (size_t i = 0; i < candidates.size() && status.ok(); ++i) {
        if (taken[i]) continue;
        std::vector<HloInstruction*> batch = {candidates[i]};
        absl::flat_hash_set<const HloInstruction*> batch_operands(candidates[i]->operands().begin(),
                                                                  candidates[i]->operands().end());
        for (size_t j = i + 1; j < candidates.size() && static_cast<int64_t>(batch.size()) < kMaxBatch; ++j) {
          HloInstruction* c = candidates[j];
          if (taken[j] || c->shape().element_type() != candidates[i]->shape().element_type()) continue;
          absl::flat_hash_set<const HloInstruction*> merged = batch_operands;
          merged.insert(c->operands().begin(), c->operands().end());
          if (static_cast<int64_t>(merged.size() + batch.size()) + 1 > kMaxOperandsAndOutputsPerFusion) continue;
          bool independent = true;
          for (const HloInstruction* b : batch) {
            if (reachability.Reaches(b, c) || reachability.Reaches(c, b)) independent = false;
          }
          if (!independent) continue;
          batch.push_back(c);
          batch_operands = std::move(merged);
          taken[j] = true;
        }
        if (batch.size() < 2) continue;
        status = FuseHorizontally(*computation, batch);
        reachability.Invalidate();
        BumpCounter("loop fusions fused horizontally", static_cast<int64_t>(batch.size()));
        changed = true;
      }
    }
    computation->set_removal_listener(nullptr);
    if (!status.ok()) return status;
  }
  return changed;
}

}  // namespace passlab
