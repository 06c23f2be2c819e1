// Internal to the rematerialization pass (rematerialization.cc): the
// schedule as a linked list of items, a computation's tuple points-to
// analysis, and the tracker of live bytes as the schedule is walked, as in
// XLA's hlo_rematerialization.cc / hlo_rematerialization_data_structures.cc
// (HloRematInstructionList, MemoryUsageTracker) over TuplePointsToAnalysis.
// PointsTo is also the memory scheduler's buffer model
// (hlo_memory_scheduler.cc).
#ifndef PASSLAB_PASSES_PREPARE_REMATERIALIZATION_MEMORY_TRACKER_H_
#define PASSLAB_PASSES_PREPARE_REMATERIALIZATION_MEMORY_TRACKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/shape.h"

namespace passlab::remat {

using BufferId = int64_t;
using ShapeSizeFunction = std::function<int64_t(const Shape&)>;
struct Item;

// One use of a buffer: the user, its operand number and, for a buffer at
// {i} of a tuple, i.
struct ItemUse {
  Item* user = nullptr;
  int64_t operand_number = 0;
  std::optional<int64_t> index;
  bool operator==(const ItemUse& o) const {
    return user == o.user && operand_number == o.operand_number && index == o.index;
  }
};
using UsesList = std::vector<ItemUse>;

// An instruction of the schedule. Skip nodes are the candidates (big
// enough for min_remat_size, or added by the pass).
struct Item {
  HloInstruction* instruction = nullptr;
  bool placed = false;
  bool denylisted = false;
  std::vector<BufferId> buffers_defined;
  std::vector<BufferId> buffers_output;
  std::vector<BufferId> buffers_used;
  bool is_skip_node = false;
  // Removed from the computation (peak priority removes what a
  // rematerialization killed): the instruction is gone.
  bool removed = false;
  Item* next = nullptr;
  Item* prev = nullptr;
  Item* next_skip_node = nullptr;
  Item* prev_skip_node = nullptr;
  // Positions of the original schedule; an inserted item takes the position
  // of the item it went before.
  int64_t position = 0;
};

class InstructionList {
 public:
  // Items of `denylisted` instructions start denylisted.
  explicit InstructionList(absl::Span<HloInstruction* const> order,
                           const absl::flat_hash_set<const HloInstruction*>& denylisted = {});
  Item* first() const { return first_; }
  Item* next(const Item* item) const { return item->next; }
  Item* first_skip_node() const { return first_skip_node_; }
  Item* next_skip_node(const Item* item) const { return item->next_skip_node; }
  Item* CreateItem(HloInstruction* inst);
  Item* GetItem(const HloInstruction* inst) const { return items_.at(inst).get(); }
  // Before the earliest (by position) of `before`.
  void InsertBeforeInstructions(Item* to_insert, absl::Span<Item* const> before);
  // Right after the latest (by position) of `after`.
  void InsertAfterInstructions(Item* to_insert, absl::Span<Item* const> after);
  void PromoteNodesToSkip(const std::function<bool(Item*)>& should_promote);
  void Denylist(const HloInstruction* inst) { GetItem(inst)->denylisted = true; }

 private:
  void InsertBefore(Item* item, Item* before);
  absl::flat_hash_map<const HloInstruction*, std::unique_ptr<Item>> items_;
  // Items of removed instructions whose address a new instruction took:
  // buffers may still name them.
  std::vector<std::unique_ptr<Item>> retired_;
  Item* first_ = nullptr;
  Item* first_skip_node_ = nullptr;
  Item* last_skip_node_ = nullptr;
};

// XLA's TuplePointsToAnalysis for one computation: at each index of an
// instruction's shape, the logical buffers the value there may be.
class PointsTo {
 public:
  struct LogicalBuffer {
    int64_t id = 0;
    const HloInstruction* instruction = nullptr;
    ShapeIndex index;
    Shape shape;
  };
  struct Element {
    ShapeIndex index;
    std::vector<int64_t> buffers;  // logical buffer ids
  };
  explicit PointsTo(const HloComputation& computation);

  const std::vector<Element>& Of(const HloInstruction* inst) const { return sets_.at(inst); }
  const std::vector<int64_t>& At(const HloInstruction* inst, const ShapeIndex& index) const;
  // Every buffer the value may hold anywhere, in first-seen order.
  std::vector<int64_t> Flattened(const HloInstruction* inst) const;
  const std::vector<int64_t>& DefinedBy(const HloInstruction* inst) const { return defined_.at(inst); }
  const LogicalBuffer& buffer(int64_t id) const { return buffers_[id]; }
  // (instruction, index) pairs whose value may be the buffer.
  const std::vector<std::pair<const HloInstruction*, ShapeIndex>>& Aliases(int64_t id) const {
    return aliases_[id];
  }
  // XLA's DoesNotUseOperandBuffer: `user` reads `operand` but not its
  // buffer at `index` (a get-tuple-element reads only the tuple itself).
  static bool DoesNotUseOperandBuffer(const HloInstruction* operand, const ShapeIndex& index,
                                      const HloInstruction* user);

 private:
  int64_t NewBuffer(const HloInstruction* inst, const ShapeIndex& index);
  std::vector<LogicalBuffer> buffers_;
  absl::flat_hash_map<const HloInstruction*, std::vector<Element>> sets_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> defined_;
  std::vector<std::vector<std::pair<const HloInstruction*, ShapeIndex>>> aliases_;
};

// The tracker's view of how a rematerialization is done.
struct TrackerOptions {
  ShapeSizeFunction shape_size;
  std::function<Shape(const Shape&)> compact_shape;
  bool compress = false;
  bool recompute = true;
};

// Live bytes while the schedule of one computation is walked
// (BeginInstruction allocates what an instruction defines, EndInstruction
// frees what died), and the candidates that would lower them.
class MemoryUsageTracker {
 public:
  // `rematerializable` caches IsRematerializable; peak priority also marks
  // its rematerializations false there.
  MemoryUsageTracker(const TrackerOptions& options, const HloComputation& computation,
                     const PointsTo& points_to, InstructionList& list,
                     absl::flat_hash_map<const HloInstruction*, bool>& rematerializable);

  absl::Status BeginInstruction(Item* item);
  absl::Status EndInstruction();
  int64_t memory_usage() const { return memory_usage_; }
  bool IsPlaced(const HloInstruction* inst) const { return list_.GetItem(inst)->placed; }
  bool IsInProgressItem(const Item* item) const { return item == in_progress_; }
  bool HasUnplacedUsers(const Item* item) const;
  UsesList GetItemUses(const Item* item) const;
  int64_t AllocatedSize(const Item* item) const;
  // Bytes of the buffers the item defines that have (unplaced) users.
  int64_t BytesUsedByBuffers(const Item* item, bool only_count_unplaced_users) const;

  enum class Strategy { kRecompute, kCompress };
  struct Pick {
    std::vector<Item*> items;
    Strategy strategy = Strategy::kRecompute;
    Shape compact_shape;
    int64_t effort = 0;
  };
  // The block of min..max consecutive placed items with the lowest cost
  // (memory_limit / bytes saved; 0 for a pure move).
  Pick PickRematerializationCandidates(int64_t memory_limit_bytes, int64_t min_block_size,
                                       int64_t max_block_size, int64_t peak_memory_bytes);

  absl::Status AddRematerializedInstruction(Item* original, Item* remat, absl::Span<Item* const> indirect_users);
  absl::Status AddCompressInstructions(Item* original, Item* compressed, Item* uncompressed);

 private:
  struct Buffer {
    BufferId id;
    Item* defining;
    int64_t size;
    Shape shape;
    bool live_out;
    bool has_indirect_uses;
    ShapeIndex index;
    UsesList users;
    int64_t unfinished_user_count;
  };
  Buffer& NewBuffer(Item* defining, const Shape& shape, const ShapeIndex& index, UsesList uses, bool live_out,
                    bool has_indirect_uses);
  int64_t AllocatedSize(BufferId id) const;
  bool IsCurrentlyLive(BufferId id) const;
  bool IsInUse(BufferId id) const;
  bool IsInstructionCurrentlyLive(const Item* item) const;
  bool CanBeRematerialized(const HloInstruction* inst);
  int64_t MemoryReducedIfRematerialized(absl::Span<Item* const> items) const;
  int64_t MemoryReducedIfCompressed(const Item* item, const Shape& compact_shape) const;
  std::optional<int64_t> CostOfRecompute(absl::Span<Item* const> items, int64_t memory_limit_bytes) const;
  std::optional<int64_t> CostOfCompression(const Item* item, int64_t memory_limit_bytes,
                                           int64_t peak_memory_bytes) const;
  UsesList GetUsers(int64_t logical_buffer, bool* has_indirect_users) const;

  const TrackerOptions& options_;
  const HloComputation& computation_;
  const PointsTo& points_to_;
  InstructionList& list_;
  int64_t memory_usage_ = 0;
  Item* in_progress_ = nullptr;
  std::vector<Buffer> buffers_;
  absl::flat_hash_map<const HloInstruction*, bool>& rematerializable_;
};

// get-tuple-element and bitcast relay the buffers they read to their users.
bool IsSupportedIndirectUser(const HloInstruction* inst);

}  // namespace passlab::remat

#endif  // PASSLAB_PASSES_PREPARE_REMATERIALIZATION_MEMORY_TRACKER_H_
