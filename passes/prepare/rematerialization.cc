#include "passes/prepare/rematerialization.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/primitive_type.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/prepare/rematerialization_memory_tracker.h"
#include "passes/simplifiers/flatten_call_graph.h"

namespace passlab {
namespace {

using remat::InstructionList;
using remat::Item;
using remat::ItemUse;
using remat::MemoryUsageTracker;
using remat::PointsTo;

// ShapeUtil::ByteSizeOf with 8-byte pointers: a tuple is its pointer table.
int64_t ByteSizeOf(const Shape& shape) {
  if (shape.IsTuple()) return 8 * shape.tuple_shapes_size();
  if (shape.IsOpaque()) return 8;
  return shape.byte_size();
}

// The physical size with the most minor dimension padded to 64 elements
// (CompressingRematerializationTest's size function); tuples: 4 bytes.
int64_t SizePadMinorTo64(const Shape& shape) {
  if (shape.IsTuple()) return 4;
  if (!shape.IsArray()) return 0;
  int64_t size = PrimitiveByteWidth(shape.element_type());
  int64_t minor = shape.rank() - 1;
  if (shape.has_layout() && !shape.layout().minor_to_major().empty()) minor = shape.layout().minor_to_major()[0];
  for (int64_t d = 0; d < shape.rank(); ++d) {
    int64_t dim = shape.dimensions(d);
    if (d == minor) dim = (dim + 63) / 64 * 64;
    size *= dim;
  }
  return size;
}

// Rank 2: the larger dimension becomes the most minor one.
Shape SwapTwoMinorDims(const Shape& shape) {
  if (shape.rank() != 2 || !shape.has_layout() || shape.layout().minor_to_major().size() != 2) return shape;
  Shape result = shape;
  std::vector<int64_t>& m2m = result.mutable_layout().mutable_minor_to_major();
  if (shape.dimensions(m2m[0]) < shape.dimensions(m2m[1])) std::swap(m2m[0], m2m[1]);
  return result;
}

// XLA's HloInstruction::Clone suffix: "x" -> "x.remat", "x.remat" ->
// "x.remat2", "x.remat2" -> "x.remat3".
std::string RematName(const std::string& name) {
  constexpr std::string_view kSuffix = ".remat";
  size_t at = name.rfind(kSuffix);
  if (at == std::string::npos) return StrCat(name, kSuffix);
  std::string after = name.substr(at + kSuffix.size());
  if (after.empty()) return StrCat(name, "2");
  if (!std::all_of(after.begin(), after.end(), [](char c) { return c >= '0' && c <= '9'; }) || after.size() > 18) {
    return StrCat(name, kSuffix);
  }
  return StrCat(name.substr(0, at), kSuffix, std::stoll(after) + 1);
}

// Calls whose callee runs as a sequential program (XLA's
// CallContext::kControlFlow): its peak adds to the caller's at the call.
bool IsControlFlowCall(const HloInstruction* inst) {
  switch (inst->opcode()) {
    case HloOpcode::kCall:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

struct BlockResult {
  int64_t remat_count = 0;
  int64_t net_instructions_added = 0;
  int64_t effort = 0;
};

class Rematerializer {
 public:
  Rematerializer(const RematerializationOptions& options, HloModule& module) : options_(options), module_(module) {
    tracker_options_.shape_size = options.shape_size_function == "pad_minor_to_64" ? SizePadMinorTo64 : ByteSizeOf;
    tracker_options_.compact_shape = options.compact_shape_function == "swap_two_minor_dims"
                                         ? std::function<Shape(const Shape&)>(SwapTwoMinorDims)
                                         : [](const Shape& s) { return s; };
    tracker_options_.compress = options.compress;
    tracker_options_.recompute = options.recompute;
  }

  absl::StatusOr<bool> Run();
  int64_t rematerialized() const { return instructions_rematerialized_; }
  int64_t peak_before() const { return peak_before_; }
  int64_t peak_after() const { return peak_after_; }

 private:
  struct PeakMemory {
    int64_t bytes = 0;
    const HloInstruction* instruction = nullptr;
  };
  absl::StatusOr<PeakMemory> ComputePeakMemory(const HloComputation& c) const;
  int64_t CalledComputationsMemoryUsage(const HloInstruction* inst) const;
  absl::StatusOr<bool> RematerializeComputation(HloComputation& c, int64_t memory_limit_bytes);
  absl::StatusOr<bool> RematerializeComputationPeakPriority(HloComputation& c, int64_t memory_limit_bytes);
  absl::StatusOr<bool> RematerializeCalledComputations(const HloInstruction* inst, int64_t memory_usage,
                                                       int64_t memory_limit_bytes);
  absl::StatusOr<BlockResult> RematerializeBestBlock(int64_t min_block_size, int64_t max_block_size,
                                                     MemoryUsageTracker& tracker, InstructionList& list,
                                                     int64_t memory_limit_bytes, int64_t peak_memory,
                                                     absl::flat_hash_set<const HloInstruction*>& remat_moves,
                                                     absl::flat_hash_map<const HloInstruction*, bool>& rematerializable);
  absl::StatusOr<int64_t> RematerializeInstructions(MemoryUsageTracker& tracker, const std::vector<Item*>& items,
                                                    InstructionList& list,
                                                    absl::flat_hash_set<const HloInstruction*>& remat_moves,
                                                    absl::flat_hash_map<const HloInstruction*, bool>& rematerializable);
  absl::StatusOr<int64_t> CompressInstruction(MemoryUsageTracker& tracker, Item* item, const Shape& compact_shape,
                                              InstructionList& list);
  std::unique_ptr<HloInstruction> CloneForRemat(const HloInstruction& inst);

  bool peak_priority() const { return options_.remat_algorithm == "peak_priority"; }

  const RematerializationOptions& options_;
  HloModule& module_;
  remat::TrackerOptions tracker_options_;

  absl::flat_hash_map<const HloComputation*, int64_t> computation_peak_memory_;
  absl::flat_hash_set<const HloComputation*> rematerialized_computations_;
  int64_t next_channel_id_ = 1;
  int64_t instructions_rematerialized_ = 0;
  int64_t peak_before_ = 0;
  int64_t peak_after_ = 0;
};

absl::StatusOr<Rematerializer::PeakMemory> Rematerializer::ComputePeakMemory(const HloComputation& c) const {
  PointsTo points_to(c);
  std::vector<HloInstruction*> order = c.instructions();
  InstructionList list(order);
  absl::flat_hash_map<const HloInstruction*, bool> rematerializable;
  MemoryUsageTracker tracker(tracker_options_, c, points_to, list, rematerializable);
  PeakMemory peak{tracker.memory_usage(), order.empty() ? nullptr : order.front()};
  for (Item* item = list.first(); item != nullptr; item = list.next(item)) {
    RETURN_IF_ERROR(tracker.BeginInstruction(item));
    int64_t at = tracker.memory_usage() + CalledComputationsMemoryUsage(item->instruction);
    if (at > peak.bytes) peak = {at, item->instruction};
    RETURN_IF_ERROR(tracker.EndInstruction());
  }
  return peak;
}

int64_t Rematerializer::CalledComputationsMemoryUsage(const HloInstruction* inst) const {
  if (!IsControlFlowCall(inst)) return 0;
  int64_t usage = 0;
  for (const HloComputation* callee : inst->called_computations()) {
    auto it = computation_peak_memory_.find(callee);
    if (it != computation_peak_memory_.end()) usage += it->second;
  }
  return usage;
}

std::unique_ptr<HloInstruction> Rematerializer::CloneForRemat(const HloInstruction& inst) {
  std::unique_ptr<HloInstruction> clone = inst.CloneWithNewOperands(inst.shape(), inst.operands());
  if (inst.opcode() == HloOpcode::kFusion) {
    clone->set_called_computation(0, CloneComputation(*inst.fused_instructions_computation()));
  }
  // A rematerialized collective takes a channel of its own.
  if (inst.has_attrs() && inst.attrs().channel_id.has_value()) clone->mutable_attrs().channel_id = next_channel_id_++;
  return clone;
}

absl::StatusOr<int64_t> Rematerializer::RematerializeInstructions(
    MemoryUsageTracker& tracker, const std::vector<Item*>& items, InstructionList& list,
    absl::flat_hash_set<const HloInstruction*>& remat_moves,
    absl::flat_hash_map<const HloInstruction*, bool>& rematerializable) {
  int64_t net_added = 0;
  // Last first: an item may read an earlier one of the block.
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    Item* best_item = *it;
    HloInstruction* best = best_item->instruction;
    HloComputation* c = best->parent();
    // Part of a good block without itself saving anything.
    if (!tracker.HasUnplacedUsers(best_item)) continue;

    HloInstruction* remat = c->AddInstruction(CloneForRemat(*best), RematName(best->name()));
    if (remat->opcode() == HloOpcode::kFusion) remat->fused_instructions_computation()->SetFusionInstruction(remat);
    for (HloInstruction* p : best->control_predecessors()) p->AddControlDependencyTo(remat);
    for (HloInstruction* s : best->control_successors()) remat->AddControlDependencyTo(s);
    Item* remat_item = list.CreateItem(remat);
    // Peak priority never rematerializes a rematerialization again.
    if (peak_priority()) rematerializable[remat] = false;

    // x's later uses => x.remat (through a get-tuple-element or bitcast where
    // the use read an element or a view).
    std::vector<Item*> indirect_users;
    absl::flat_hash_map<int64_t, HloInstruction*> gte_cache;
    for (const ItemUse& use : tracker.GetItemUses(best_item)) {
      if (use.user->placed) continue;
      if (use.user->removed) continue;
      HloInstruction* user = use.user->instruction;
      HloInstruction* remat_use = remat;
      HloInstruction* user_operand = user->mutable_operand(use.operand_number);
      if (remat_use == user_operand) continue;
      if (use.index && remat_use->shape() != user_operand->shape()) {
        auto cached = gte_cache.find(*use.index);
        if (cached == gte_cache.end()) {
          remat_use = c->AddInstruction(HloInstruction::CreateGetTupleElement(
                                            remat->shape().tuple_shapes(*use.index), remat, *use.index),
                                        "gte.remat");
          indirect_users.push_back(list.CreateItem(remat_use));
          gte_cache[*use.index] = remat_use;
        } else {
          remat_use = cached->second;
        }
      }
      if (user_operand->shape() != remat_use->shape()) {
        remat_use = c->AddInstruction(HloInstruction::CreateBitcast(user_operand->shape(), remat_use), "bitcast.remat");
        indirect_users.push_back(list.CreateItem(remat_use));
      }
      user->ReplaceOperandWith(use.operand_number, remat_use);
      if (peak_priority() && remat_use != remat) rematerializable[remat_use] = false;
    }
    if (absl::Status s = tracker.AddRematerializedInstruction(best_item, remat_item, indirect_users); !s.ok()) {
      return s;
    }

    // Before the earliest unplaced use of the value, and of the remat's
    // operands (not to stretch their live ranges), and before its control
    // successors.
    absl::flat_hash_set<const Item*> indirect(indirect_users.begin(), indirect_users.end());
    std::vector<Item*> place_before;
    for (HloInstruction* user : remat->users()) {
      if (!indirect.contains(list.GetItem(user))) place_before.push_back(list.GetItem(user));
    }
    for (Item* relay : indirect_users) {
      for (HloInstruction* user : relay->instruction->users()) {
        if (!indirect.contains(list.GetItem(user))) place_before.push_back(list.GetItem(user));
      }
    }
    for (HloInstruction* operand : remat->operands()) {
      for (HloInstruction* operand_user : operand->users()) {
        if (operand_user == remat) continue;
        Item* operand_user_item = list.GetItem(operand_user);
        if (operand_user_item->placed) continue;
        // Peak priority: an operand smaller than the remat is better kept
        // live than the remat, so its last use does not pull the remat
        // earlier.
        if (peak_priority() && tracker.BytesUsedByBuffers(list.GetItem(operand), false) <
                                   tracker.BytesUsedByBuffers(remat_item, false)) {
          continue;
        }
        place_before.push_back(operand_user_item);
      }
    }
    for (HloInstruction* successor : remat->control_successors()) place_before.push_back(list.GetItem(successor));
    if (place_before.empty()) return absl::InternalError(StrCat("rematerialization: nowhere to place ", remat->name()));
    list.InsertBeforeInstructions(remat_item, place_before);
    for (Item* relay : indirect_users) list.InsertBeforeInstructions(relay, place_before);

    // Dead unless a user beyond the relays remains.
    std::function<bool(const HloInstruction*)> uses_empty = [&](const HloInstruction* inst) {
      for (const HloInstruction* u : inst->users()) {
        if (!remat::IsSupportedIndirectUser(u) || !uses_empty(u)) return false;
      }
      return true;
    };
    if (uses_empty(best)) {
      // A move. Moving a move again would loop: stop there.
      if (remat_moves.contains(best)) list.Denylist(remat);
      // Peak priority removes the dead original (and its dead relays) at
      // once, so that they do not steer where later remats go.
      if (peak_priority()) {
        best->DropAllControlDeps();
        while (best->user_count() > 0) {
          HloInstruction* user = best->users().front();
          if (user->user_count() > 0 || user == c->root_instruction()) {
            return absl::InternalError(StrCat("rematerialization: user ", user->name(), " of ", best->name(),
                                              " killed by rematerialization is not dead"));
          }
          user->DropAllControlDeps();
          list.GetItem(user)->removed = true;
          RETURN_IF_ERROR(c->RemoveInstruction(user));
        }
        best_item->removed = true;
        RETURN_IF_ERROR(c->RemoveInstruction(best));
      }
      remat_moves.insert(remat);
      net_added += static_cast<int64_t>(indirect_users.size());
    } else {
      net_added += static_cast<int64_t>(indirect_users.size()) + 1;
    }
    for (Item* relay : indirect_users) list.Denylist(relay->instruction);
  }
  return net_added;
}

absl::StatusOr<int64_t> Rematerializer::CompressInstruction(MemoryUsageTracker& tracker, Item* item,
                                                            const Shape& compact_shape, InstructionList& list) {
  HloInstruction* best = item->instruction;
  HloComputation* c = best->parent();
  // x => copy(copy(x)): the compact copy right after x, the copy back before
  // the later uses.
  HloInstruction* compressed = c->AddInstruction(HloInstruction::CreateUnary(compact_shape, HloOpcode::kCopy, best),
                                                 StrCat(best->name(), ".remat_compressed"));
  HloInstruction* uncompressed = c->AddInstruction(
      HloInstruction::CreateUnary(best->shape(), HloOpcode::kCopy, compressed), StrCat(best->name(), ".remat_uncompressed"));
  Item* compressed_item = list.CreateItem(compressed);
  compressed_item->placed = true;
  Item* uncompressed_item = list.CreateItem(uncompressed);
  std::vector<HloInstruction*> later_users;
  for (HloInstruction* user : best->users()) {
    if (user != compressed && !tracker.IsPlaced(user)) later_users.push_back(user);
  }
  RETURN_IF_ERROR(best->ReplaceUsesWith(later_users, uncompressed));
  RETURN_IF_ERROR(tracker.AddCompressInstructions(item, compressed_item, uncompressed_item));
  std::vector<Item*> place_before;
  for (HloInstruction* user : uncompressed->users()) place_before.push_back(list.GetItem(user));
  list.Denylist(compressed);
  list.Denylist(uncompressed);
  if (place_before.empty()) return absl::InternalError(StrCat("rematerialization: nowhere to place ", uncompressed->name()));
  list.InsertBeforeInstructions(uncompressed_item, place_before);
  list.InsertAfterInstructions(compressed_item, {item});
  return 2;
}

absl::StatusOr<BlockResult> Rematerializer::RematerializeBestBlock(
    int64_t min_block_size, int64_t max_block_size, MemoryUsageTracker& tracker, InstructionList& list,
    int64_t memory_limit_bytes, int64_t peak_memory, absl::flat_hash_set<const HloInstruction*>& remat_moves,
    absl::flat_hash_map<const HloInstruction*, bool>& rematerializable) {
  MemoryUsageTracker::Pick pick =
      tracker.PickRematerializationCandidates(memory_limit_bytes, min_block_size, max_block_size, peak_memory);
  BlockResult result;
  result.remat_count = static_cast<int64_t>(pick.items.size());
  result.effort = pick.effort;
  if (pick.items.empty()) return result;
  ASSIGN_OR_RETURN(int64_t added, pick.strategy == MemoryUsageTracker::Strategy::kCompress
                                      ? CompressInstruction(tracker, pick.items[0], pick.compact_shape, list)
                                      : RematerializeInstructions(tracker, pick.items, list, remat_moves, rematerializable));
  result.net_instructions_added = added;
  return result;
}

absl::StatusOr<bool> Rematerializer::RematerializeComputation(HloComputation& c, int64_t memory_limit_bytes) {
  auto peak_it = computation_peak_memory_.find(&c);
  if (peak_it == computation_peak_memory_.end() || peak_it->second <= memory_limit_bytes) return false;
  const int64_t peak_memory_before = peak_it->second;
  PointsTo points_to(c);
  std::vector<HloInstruction*> order = c.instructions();
  InstructionList list(order);
  absl::flat_hash_map<const HloInstruction*, bool> rematerializable;
  MemoryUsageTracker tracker(tracker_options_, c, points_to, list, rematerializable);
  list.PromoteNodesToSkip([&](Item* item) { return tracker.AllocatedSize(item) >= options_.min_remat_size; });

  bool changed = false;
  absl::flat_hash_set<const HloInstruction*> remat_moves;
  int64_t peak_memory = tracker.memory_usage();
  for (Item* item = list.first(); item != nullptr; item = list.next(item)) {
    HloInstruction* inst = item->instruction;
    int64_t callee_usage = CalledComputationsMemoryUsage(inst);
    RETURN_IF_ERROR(tracker.BeginInstruction(item));
    int64_t min_block_size = 1;
    int64_t max_block_size = 1;
    // Only where the usage grows.
    if (tracker.AllocatedSize(item) + callee_usage > 0) {
      bool first_phase = true;
      int64_t first_phase_effort = 0;
      int64_t second_phase_effort = 0;
      while (tracker.memory_usage() + callee_usage > memory_limit_bytes) {
        ASSIGN_OR_RETURN(BlockResult block, RematerializeBestBlock(
            min_block_size, max_block_size, tracker, list, memory_limit_bytes, peak_memory_before, remat_moves,
            rematerializable));
        (first_phase ? first_phase_effort : second_phase_effort) += block.effort;
        instructions_rematerialized_ += block.remat_count;
        if (block.remat_count == 0) {
          // Nothing of this size: try larger blocks.
          min_block_size = max_block_size + 1;
          max_block_size = 2 * max_block_size;
          first_phase = false;
        } else {
          changed = true;
          min_block_size = 1;
          max_block_size = 1;
        }
        if (max_block_size > options_.block_size_limit ||
            static_cast<double>(second_phase_effort) >
                options_.block_rematerialization_factor * static_cast<double>(first_phase_effort)) {
          break;
        }
      }
    }
    // Still over at a call or loop: rematerialize inside, under what is left.
    if (IsControlFlowCall(inst) && tracker.memory_usage() + callee_usage > memory_limit_bytes) {
      ASSIGN_OR_RETURN(bool callee_changed,
          RematerializeCalledComputations(inst, tracker.memory_usage(), memory_limit_bytes));
      changed |= callee_changed;
      callee_usage = CalledComputationsMemoryUsage(inst);
    }
    peak_memory = std::max(peak_memory, tracker.memory_usage() + callee_usage);
    RETURN_IF_ERROR(tracker.EndInstruction());
  }
  computation_peak_memory_[&c] = peak_memory;
  std::vector<HloInstruction*> sequence;
  for (Item* item = list.first(); item != nullptr; item = list.next(item)) sequence.push_back(item->instruction);
  if (absl::Status s = c.SetInstructionSequence(sequence); !s.ok()) {
    return absl::InternalError(StrCat("rematerialization: computation ", c.name(), ": ", s.message()));
  }
  rematerialized_computations_.insert(&c);
  return changed;
}

absl::StatusOr<bool> Rematerializer::RematerializeCalledComputations(const HloInstruction* inst, int64_t memory_usage,
                                                                     int64_t memory_limit_bytes) {
  bool changed = false;
  for (HloComputation* callee : inst->called_computations()) {
    if (rematerialized_computations_.contains(callee)) continue;
    int64_t callee_limit = std::max<int64_t>(0, memory_limit_bytes - memory_usage);
    ASSIGN_OR_RETURN(bool callee_changed, peak_priority() ? RematerializeComputationPeakPriority(*callee, callee_limit)
                                                          : RematerializeComputation(*callee, callee_limit));
    changed |= callee_changed;
  }
  return changed;
}

// XLA's kPeakPriority: sub-passes, each walking the schedule to the
// instruction at the peak and rematerializing there until the bytes drop
// below that peak (blocks up to block_size_limit; costs against at least
// 1 GiB), then rescheduling and finding the new peak; until a sub-pass
// changes nothing or the peak is under the limit.
absl::StatusOr<bool> Rematerializer::RematerializeComputationPeakPriority(HloComputation& c,
                                                                          int64_t memory_limit_bytes) {
  constexpr int64_t kMinimumCostEstimateMemoryLimitBytes = int64_t{1} << 30;
  const int64_t cost_limit = std::max(kMinimumCostEstimateMemoryLimitBytes, memory_limit_bytes);
  absl::StatusOr<PeakMemory> peak = ComputePeakMemory(c);
  if (!peak.ok()) return peak.status();
  if (peak->bytes <= memory_limit_bytes) return false;
  absl::flat_hash_set<const HloInstruction*> remat_moves;
  absl::flat_hash_map<const HloInstruction*, bool> rematerializable;
  absl::flat_hash_set<const HloInstruction*> denylisted;
  bool changed = false;
  while (true) {
    std::vector<HloInstruction*> order = c.instructions();
    InstructionList list(order, denylisted);
    PointsTo points_to(c);
    MemoryUsageTracker tracker(tracker_options_, c, points_to, list, rematerializable);
    list.PromoteNodesToSkip([&](Item* item) { return tracker.AllocatedSize(item) >= options_.min_remat_size; });
    bool subpass_changed = false;
    for (Item* item = list.first(); item != nullptr; item = list.next(item)) {
      if (item->removed) continue;
      HloInstruction* inst = item->instruction;
      if (inst->user_count() == 0 && inst != c.root_instruction()) continue;
      int64_t callee_usage = CalledComputationsMemoryUsage(inst);
      RETURN_IF_ERROR(tracker.BeginInstruction(item));
      if (inst == peak->instruction) {
        int64_t max_block_size = 1;
        while (tracker.memory_usage() + callee_usage >= peak->bytes) {
          ASSIGN_OR_RETURN(BlockResult block,
              RematerializeBestBlock(1, max_block_size, tracker, list, cost_limit,
                                     computation_peak_memory_[&c], remat_moves, rematerializable));
          instructions_rematerialized_ += block.remat_count;
          if (block.remat_count == 0) {
            max_block_size *= 2;
          } else {
            subpass_changed = true;
            max_block_size = 1;
          }
          if (max_block_size > options_.block_size_limit) break;
        }
      }
      if (IsControlFlowCall(inst) && tracker.memory_usage() + callee_usage > memory_limit_bytes) {
        ASSIGN_OR_RETURN(bool callee_changed,
            RematerializeCalledComputations(inst, tracker.memory_usage(), memory_limit_bytes));
        subpass_changed |= callee_changed;
      }
      RETURN_IF_ERROR(tracker.EndInstruction());
      if (subpass_changed) break;
    }
    if (!subpass_changed) break;
    changed = true;
    // Reschedule from the list and find the new peak.
    std::vector<HloInstruction*> sequence;
    for (Item* item = list.first(); item != nullptr; item = list.next(item)) {
      if (item->removed) continue;
      sequence.push_back(item->instruction);
      if (item->denylisted) denylisted.insert(item->instruction);
    }
    if (absl::Status s = c.SetInstructionSequence(sequence); !s.ok()) {
      return absl::InternalError(StrCat("rematerialization: computation ", c.name(), ": ", s.message()));
    }
    peak = ComputePeakMemory(c);
    if (!peak.ok()) return peak.status();
    computation_peak_memory_[&c] = peak->bytes;
    if (peak->bytes <= memory_limit_bytes) break;
  }
  rematerialized_computations_.insert(&c);
  return changed;
}

// HloDCE to a fixed point: instructions nothing reads (not roots, not
// parameters, without side effects), then computations nothing calls.
absl::StatusOr<bool> RemoveDeadCode(HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    bool removed = true;
    while (removed) {
      removed = false;
      std::vector<HloInstruction*> order = c->instructions();
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        HloInstruction* inst = *it;
        if (inst->user_count() > 0 || inst == c->root_instruction() || inst->opcode() == HloOpcode::kParameter ||
            inst->HasSideEffect() || !inst->control_successors().empty()) {
          continue;
        }
        inst->DropAllControlDeps();
        RETURN_IF_ERROR(c->RemoveInstruction(inst));
        removed = changed = true;
      }
    }
  }
  changed |= module.RemoveUnusedComputations() > 0;
  return changed;
}

absl::StatusOr<bool> Rematerializer::Run() {
  for (HloComputation* c : module_.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->has_attrs() && inst->attrs().channel_id.has_value()) {
        next_channel_id_ = std::max(next_channel_id_, *inst->attrs().channel_id + 1);
      }
    }
  }
  // The module's outputs are the caller's: take them off the limit.
  int64_t output_size = 0;
  ForEachSubshape(module_.entry_computation()->root_instruction()->shape(),
                  [&](const Shape& s, const ShapeIndex&) { output_size += tracker_options_.shape_size(s); });
  int64_t limit = std::max<int64_t>(0, options_.memory_limit_bytes - output_size);

  // Peaks of the computations that run as programs (reached from the entry
  // through calls, loops and conditionals), callees first.
  absl::flat_hash_set<const HloComputation*> sequential = {module_.entry_computation()};
  std::vector<const HloComputation*> worklist = {module_.entry_computation()};
  while (!worklist.empty()) {
    const HloComputation* c = worklist.back();
    worklist.pop_back();
    for (HloInstruction* inst : c->instructions()) {
      if (!IsControlFlowCall(inst)) continue;
      for (const HloComputation* callee : inst->called_computations()) {
        if (sequential.insert(callee).second) worklist.push_back(callee);
      }
    }
  }
  for (HloComputation* c : module_.MakeComputationPostOrder()) {
    if (!sequential.contains(c)) continue;
    ASSIGN_OR_RETURN(PeakMemory peak, ComputePeakMemory(*c));
    computation_peak_memory_[c] = peak.bytes;
  }
  peak_before_ = computation_peak_memory_[module_.entry_computation()] + output_size;

  ASSIGN_OR_RETURN(bool changed, peak_priority()
                                     ? RematerializeComputationPeakPriority(*module_.entry_computation(), limit)
                                     : RematerializeComputation(*module_.entry_computation(), limit));
  // Moves leave the originals dead.
  ASSIGN_OR_RETURN(bool removed, RemoveDeadCode(module_));
  peak_after_ = computation_peak_memory_[module_.entry_computation()] + output_size;
  return changed || removed;
}

}  // namespace

absl::StatusOr<bool> Rematerialization::RunImpl(HloModule& module, PassRunContext*) {
  if (options_.memory_limit_bytes < 0) {
    BumpCounter("no memory limit: nothing rematerialized");
    return false;
  }
  if (!module.is_scheduled()) {
    return absl::FailedPreconditionError(StrCat(name(), ": the module must be scheduled"));
  }
  if (options_.host_offload) return absl::UnimplementedError(StrCat(name(), ": host offload is not modelled"));
  if (options_.remat_algorithm != "always_remat" && options_.remat_algorithm != "peak_priority") {
    return absl::InvalidArgumentError(StrCat(name(), ": unknown remat_algorithm ", options_.remat_algorithm));
  }
  if (!options_.recompute && !options_.compress) {
    BumpCounter("every strategy disabled: nothing rematerialized");
    return false;
  }
  Rematerializer rematerializer(options_, module);
  absl::StatusOr<bool> changed = rematerializer.Run();
  if (!changed.ok()) return absl::InternalError(StrCat(name(), ": ", changed.status().message()));
  if (rematerializer.rematerialized() > 0) BumpCounter("instructions rematerialized", rematerializer.rematerialized());
  if (rematerializer.peak_before() > rematerializer.peak_after()) {
    BumpCounter("peak bytes saved", rematerializer.peak_before() - rematerializer.peak_after());
  }
  return *changed;
}

}  // namespace passlab
