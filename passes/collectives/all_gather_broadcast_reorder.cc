#include "passes/collectives/all_gather_broadcast_reorder.h"

#include <algorithm>

#include "core/ir/status_macros.h"

namespace passlab {
namespace {

// The all-gathers this pass moves: one array operand that is a broadcast
// adding at least one dimension, one gather dimension.
bool IsCandidate(const HloInstruction* ag) {
  if (ag->opcode() != HloOpcode::kAllGather || ag->operand_count() != 1 || !ag->shape().IsArray() ||
      ag->dimensions().size() != 1 || ag->attrs().constrain_layout) {
    return false;
  }
  const HloInstruction* bcast = ag->operand(0);
  if (bcast->opcode() != HloOpcode::kBroadcast) return false;
  if (bcast->operand(0)->shape().rank() >= bcast->shape().rank()) return false;
  // The gathered block must divide the result evenly (it always does for a
  // verified all-gather).
  int64_t d = ag->dimensions(0);
  int64_t block = bcast->shape().dimensions(d);
  return block > 0 && ag->shape().dimensions(d) % block == 0;
}

}  // namespace

absl::StatusOr<bool> AllGatherBroadcastReorder::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* ag : c->MakeInstructionPostOrder()) {
      if (!IsCandidate(ag)) continue;
      HloInstruction* bcast = ag->mutable_operand(0);
      HloInstruction* x = bcast->mutable_operand(0);
      const std::vector<int64_t>& bdims = bcast->dimensions();
      const int64_t d = ag->dimensions(0);
      const int64_t block = bcast->shape().dimensions(d);
      const int64_t participants = ag->shape().dimensions(d) / block;
      const PrimitiveType type = ag->shape().element_type();
      auto new_all_gather = [&](HloInstruction* operand, const Shape& shape, int64_t dim) {
        auto gathered = HloInstruction::Create(HloOpcode::kAllGather, shape, {operand});
        gathered->mutable_attrs() = ag->attrs();
        gathered->set_dimensions({dim});
        gathered->set_metadata(ag->metadata());
        return c->AddInstruction(std::move(gathered));
      };
      auto from_x = std::find(bdims.begin(), bdims.end(), d);
      if (from_x != bdims.end()) {
        // all-gather(broadcast(x)) along x's dimension k => broadcast(all-gather(x) along k).
        const int64_t k = from_x - bdims.begin();
        std::vector<int64_t> dims = x->shape().dimensions();
        dims[k] *= participants;
        HloInstruction* gathered = new_all_gather(x, Shape::Array(type, dims), k);
        auto moved = HloInstruction::CreateBroadcast(ag->shape(), gathered, bdims);
        RETURN_IF_ERROR(c->ReplaceWithNewInstruction(ag, std::move(moved)));
        BumpCounter("all-gather(broadcast(x)) => broadcast(all-gather(x))");
        changed = true;
        continue;
      }
      // all-gather(broadcast(x)) along an added dimension d =>
      //   reshape(broadcast(all-gather(reshape(x) with a size-1 dim), [.., G, S, ..])).
      // x's size-1 dimension goes where d sits among the broadcast dimensions,
      // so the broadcast dimensions stay in their order.
      const int64_t p = std::count_if(bdims.begin(), bdims.end(), [&](int64_t b) { return b < d; });
      std::vector<int64_t> x_dims = x->shape().dimensions();
      x_dims.insert(x_dims.begin() + p, 1);
      HloInstruction* reshaped = c->AddInstruction(HloInstruction::CreateReshape(Shape::Array(type, x_dims), x));
      x_dims[p] = participants;
      HloInstruction* gathered = new_all_gather(reshaped, Shape::Array(type, x_dims), p);
      std::vector<int64_t> split_dims = ag->shape().dimensions();
      split_dims[d] = block;
      split_dims.insert(split_dims.begin() + d, participants);
      std::vector<int64_t> split_bdims;
      for (int64_t i = 0; i < static_cast<int64_t>(bdims.size()); ++i) {
        if (i == p) split_bdims.push_back(d);
        split_bdims.push_back(bdims[i] < d ? bdims[i] : bdims[i] + 1);
      }
      if (p == static_cast<int64_t>(bdims.size())) split_bdims.push_back(d);
      HloInstruction* broadcast = c->AddInstruction(
          HloInstruction::CreateBroadcast(Shape::Array(type, split_dims), gathered, split_bdims));
      auto merged = HloInstruction::CreateReshape(ag->shape(), broadcast);
      RETURN_IF_ERROR(c->ReplaceWithNewInstruction(ag, std::move(merged)));
      BumpCounter("all-gather(broadcast(x)) along a broadcast dim => reshape(broadcast(all-gather(x)))");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
