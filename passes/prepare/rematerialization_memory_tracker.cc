#include "passes/prepare/rematerialization_memory_tracker.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "core/ir/str_util.h"

namespace passlab::remat {
namespace {

bool IsCollective(HloOpcode op) {
  return op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart || op == HloOpcode::kAllReduce ||
         op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllToAll || op == HloOpcode::kRaggedAllToAll ||
         op == HloOpcode::kReduceScatter || op == HloOpcode::kCollectiveBroadcast;
}

// XLA's IsRematerializable: not copies that keep the layout (copy
// insertion's), collectives unless their layout is constrained, no calls,
// control flow, custom calls, parameters or constants, nothing with side
// effects.
bool IsRematerializable(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kCopy && inst->shape().has_layout() && inst->operand(0)->shape().has_layout() &&
      inst->shape().layout() == inst->operand(0)->shape().layout()) {
    return false;
  }
  if (IsCollective(inst->opcode())) return !inst->attrs().constrain_layout;
  switch (inst->opcode()) {
    case HloOpcode::kCall:
    case HloOpcode::kConstant:
    case HloOpcode::kConditional:
    case HloOpcode::kCustomCall:
    case HloOpcode::kParameter:
    case HloOpcode::kWhile:
      return false;
    default:
      return !inst->HasSideEffect();
  }
}

// Whether reading `inst` reads its buffer at `index` (inside a fusion:
// through tuples, views and get-tuple-elements of that index).
bool ReadsIndex(const HloInstruction* inst, const ShapeIndex& index) {
  for (const HloInstruction* user : inst->users()) {
    if (user->opcode() == HloOpcode::kGetTupleElement) {
      if (index.empty()) return true;
      if (index[0] != user->tuple_index()) continue;
      if (ReadsIndex(user, ShapeIndex(index.begin() + 1, index.end()))) return true;
      continue;
    }
    if (user->opcode() == HloOpcode::kTuple) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != inst) continue;
        ShapeIndex in_tuple = {i};
        in_tuple.insert(in_tuple.end(), index.begin(), index.end());
        if (ReadsIndex(user, in_tuple)) return true;
      }
      continue;
    }
    if (user->opcode() == HloOpcode::kBitcast) {
      if (ReadsIndex(user, index)) return true;
      continue;
    }
    return true;
  }
  // The root hands it out of the fusion.
  return inst->parent() != nullptr && inst->parent()->root_instruction() == inst;
}

}  // namespace

bool IsSupportedIndirectUser(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kBitcast || inst->opcode() == HloOpcode::kGetTupleElement;
}

// ---------------------------------------------------------------------------
// InstructionList

InstructionList::InstructionList(absl::Span<HloInstruction* const> order,
                                 const absl::flat_hash_set<const HloInstruction*>& denylisted) {
  Item* last = nullptr;
  int64_t position = 0;
  for (HloInstruction* inst : order) {
    auto item = std::make_unique<Item>();
    item->instruction = inst;
    item->denylisted = denylisted.contains(inst);
    item->prev = last;
    item->position = position++;
    if (last == nullptr) {
      first_ = item.get();
    } else {
      last->next = item.get();
    }
    last = item.get();
    items_[inst] = std::move(item);
  }
}

Item* InstructionList::CreateItem(HloInstruction* inst) {
  auto item = std::make_unique<Item>();
  item->instruction = inst;
  Item* raw = item.get();
  std::unique_ptr<Item>& slot = items_[inst];
  if (slot != nullptr) retired_.push_back(std::move(slot));
  slot = std::move(item);
  return raw;
}

void InstructionList::InsertBeforeInstructions(Item* to_insert, absl::Span<Item* const> before) {
  Item* min_item = nullptr;
  for (Item* item : before) {
    if (min_item == nullptr || item->position < min_item->position) min_item = item;
  }
  // Items inserted earlier share positions: go to the first of equal
  // position, then forward to the first that is in `before`.
  while (min_item->prev != nullptr && min_item->position == min_item->prev->position) min_item = min_item->prev;
  while (std::find(before.begin(), before.end(), min_item) == before.end()) min_item = min_item->next;
  InsertBefore(to_insert, min_item);
}

void InstructionList::InsertAfterInstructions(Item* to_insert, absl::Span<Item* const> after) {
  Item* max_item = nullptr;
  for (Item* item : after) {
    if (max_item == nullptr || item->position > max_item->position) max_item = item;
  }
  InsertBeforeInstructions(to_insert, {max_item->next});
}

void InstructionList::PromoteNodesToSkip(const std::function<bool(Item*)>& should_promote) {
  for (Item* item = first_; item != nullptr; item = item->next) {
    if (!should_promote(item)) continue;
    if (first_skip_node_ == nullptr) first_skip_node_ = item;
    item->is_skip_node = true;
    item->prev_skip_node = last_skip_node_;
    if (last_skip_node_ != nullptr) last_skip_node_->next_skip_node = item;
    last_skip_node_ = item;
  }
}

void InstructionList::InsertBefore(Item* item, Item* before) {
  item->is_skip_node = true;
  Item* cursor = before;
  while (cursor != nullptr && !cursor->is_skip_node) cursor = cursor->next;
  if (cursor == nullptr) {
    item->prev_skip_node = last_skip_node_;
    item->next_skip_node = nullptr;
    if (last_skip_node_ != nullptr) last_skip_node_->next_skip_node = item;
    last_skip_node_ = item;
  } else {
    item->prev_skip_node = cursor->prev_skip_node;
    if (item->prev_skip_node != nullptr) item->prev_skip_node->next_skip_node = item;
    item->next_skip_node = cursor;
    cursor->prev_skip_node = item;
  }
  if (first_skip_node_ == cursor) first_skip_node_ = item;
  item->prev = before->prev;
  item->next = before;
  before->prev = item;
  if (item->prev != nullptr) {
    item->prev->next = item;
  } else {
    first_ = item;
  }
  item->position = before->position;
}

// ---------------------------------------------------------------------------
// PointsTo

int64_t PointsTo::NewBuffer(const HloInstruction* inst, const ShapeIndex& index) {
  int64_t id = static_cast<int64_t>(buffers_.size());
  buffers_.push_back({id, inst, index, inst->shape().subshape(index)});
  defined_[inst].push_back(id);
  return id;
}

const std::vector<int64_t>& PointsTo::At(const HloInstruction* inst, const ShapeIndex& index) const {
  for (const Element& e : sets_.at(inst)) {
    if (e.index == index) return e.buffers;
  }
  static const std::vector<int64_t> kNone;
  return kNone;
}

std::vector<int64_t> PointsTo::Flattened(const HloInstruction* inst) const {
  std::vector<int64_t> out;
  for (const Element& e : sets_.at(inst)) {
    for (int64_t b : e.buffers) {
      if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    }
  }
  return out;
}

PointsTo::PointsTo(const HloComputation& computation) {
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    std::vector<Element>& set = sets_[inst];
    defined_[inst];
    // The operand's set at `from` + suffix, for each index of this shape.
    auto copy_from = [&](const HloInstruction* operand, const ShapeIndex& prefix, const ShapeIndex& at) {
      ShapeIndex source = prefix;
      source.insert(source.end(), at.begin(), at.end());
      return At(operand, source);
    };
    HloOpcode op = inst->opcode();
    ForEachSubshape(inst->shape(), [&](const Shape&, const ShapeIndex& index) {
      Element e{index, {}};
      switch (op) {
        case HloOpcode::kGetTupleElement:
          e.buffers = copy_from(inst->operand(0), {inst->tuple_index()}, index);
          break;
        case HloOpcode::kBitcast:
        case HloOpcode::kDomain:
        case HloOpcode::kAddDependency:
        case HloOpcode::kOptimizationBarrier:
          e.buffers = copy_from(inst->operand(0), {}, index);
          break;
        case HloOpcode::kTuple:
          if (index.empty()) {
            e.buffers = {NewBuffer(inst, index)};
          } else {
            e.buffers = copy_from(inst->operand(index[0]), {}, ShapeIndex(index.begin() + 1, index.end()));
          }
          break;
        case HloOpcode::kCopy:
          e.buffers = index.empty() ? std::vector<int64_t>{NewBuffer(inst, index)} : copy_from(inst->operand(0), {}, index);
          break;
        case HloOpcode::kCopyStart:
          if (!index.empty() && index[0] == 1) {
            e.buffers = copy_from(inst->operand(0), {}, ShapeIndex(index.begin() + 1, index.end()));
          } else {
            e.buffers = {NewBuffer(inst, index)};
          }
          break;
        case HloOpcode::kCopyDone:
          e.buffers = copy_from(inst->operand(0), {0}, index);
          break;
        default: {
          // Fusions and custom calls may alias an output to an operand.
          const std::vector<OutputOperandAlias>* aliasing = nullptr;
          if ((op == HloOpcode::kFusion || op == HloOpcode::kCustomCall) && inst->has_attrs()) {
            aliasing = &inst->attrs().output_to_operand_aliasing;
          }
          bool aliased = false;
          if (aliasing != nullptr) {
            for (const OutputOperandAlias& a : *aliasing) {
              if (a.output_index != index) continue;
              e.buffers = At(inst->operand(a.operand), a.operand_index);
              aliased = true;
            }
          }
          if (!aliased) e.buffers = {NewBuffer(inst, index)};
        }
      }
      set.push_back(std::move(e));
    });
  }
  aliases_.resize(buffers_.size());
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    for (const Element& e : sets_.at(inst)) {
      for (int64_t b : e.buffers) aliases_[b].emplace_back(inst, e.index);
    }
  }
}

bool PointsTo::DoesNotUseOperandBuffer(const HloInstruction* operand, const ShapeIndex& index,
                                       const HloInstruction* user) {
  if (user->opcode() == HloOpcode::kGetTupleElement && !index.empty()) return true;
  if (user->opcode() == HloOpcode::kFusion && user->fusion_kind() == FusionKind::kLoop) {
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != operand) continue;
      if (ReadsIndex(user->fused_parameter(i), index)) return false;
    }
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// MemoryUsageTracker

UsesList MemoryUsageTracker::GetUsers(int64_t logical_buffer, bool* has_indirect_users) const {
  UsesList users;
  *has_indirect_users = false;
  const PointsTo::LogicalBuffer& lb = points_to_.buffer(logical_buffer);
  for (const auto& [alias, alias_index] : points_to_.Aliases(logical_buffer)) {
    for (const HloInstruction* user : alias->users()) {
      if (PointsTo::DoesNotUseOperandBuffer(alias, alias_index, user)) continue;
      if (alias != lb.instruction && !IsSupportedIndirectUser(alias)) *has_indirect_users = true;
      Item* user_item = list_.GetItem(user);
      std::optional<int64_t> user_index;
      if (lb.index.size() == 1) user_index = lb.index.back();
      for (int64_t op = 0; op < user->operand_count(); ++op) {
        if (user->operand(op) != alias) continue;
        ItemUse use{user_item, op, user_index};
        if (std::find(users.begin(), users.end(), use) == users.end()) users.push_back(use);
      }
    }
  }
  return users;
}

MemoryUsageTracker::Buffer& MemoryUsageTracker::NewBuffer(Item* defining, const Shape& shape, const ShapeIndex& index,
                                                          UsesList uses, bool live_out, bool has_indirect_uses) {
  absl::flat_hash_set<Item*> unique_users;
  for (const ItemUse& use : uses) unique_users.insert(use.user);
  BufferId id = static_cast<BufferId>(buffers_.size());
  int64_t users = static_cast<int64_t>(unique_users.size());
  buffers_.push_back(
      Buffer{id, defining, options_.shape_size(shape), shape, live_out, has_indirect_uses, index, std::move(uses), users});
  return buffers_.back();
}

MemoryUsageTracker::MemoryUsageTracker(const TrackerOptions& options, const HloComputation& computation,
                                       const PointsTo& points_to, InstructionList& list,
                                       absl::flat_hash_map<const HloInstruction*, bool>& rematerializable)
    : options_(options),
      computation_(computation),
      points_to_(points_to),
      list_(list),
      rematerializable_(rematerializable) {
  std::vector<int64_t> live_out = points_to_.Flattened(computation_.root_instruction());
  auto is_live_out = [&](int64_t lb) { return std::find(live_out.begin(), live_out.end(), lb) != live_out.end(); };
  absl::flat_hash_map<int64_t, BufferId> buffer_of;
  for (Item* item = list_.first(); item != nullptr; item = item->next) {
    const HloInstruction* inst = item->instruction;
    for (int64_t lb : points_to_.DefinedBy(inst)) {
      BufferId id;
      if (inst->opcode() == HloOpcode::kWhile) {
        // A while defines no new buffer: it reuses its operand's at the same
        // index, which gains the while's users.
        const std::vector<int64_t>& source = points_to_.At(inst->operand(0), points_to_.buffer(lb).index);
        id = buffer_of.at(source.at(0));
        buffers_[id].has_indirect_uses = true;
        buffers_[id].live_out = buffers_[id].live_out || is_live_out(lb);
        bool unused = false;
        for (ItemUse& use : GetUsers(lb, &unused)) {
          UsesList& users = buffers_[id].users;
          if (std::any_of(users.begin(), users.end(), [&](const ItemUse& u) { return u.user == use.user; })) continue;
          buffers_[id].unfinished_user_count++;
          use.user->buffers_used.push_back(id);
          users.push_back(use);
        }
      } else {
        bool has_indirect_uses = false;
        UsesList users = GetUsers(lb, &has_indirect_uses);
        const PointsTo::LogicalBuffer& logical = points_to_.buffer(lb);
        id = NewBuffer(list_.GetItem(logical.instruction), logical.shape, logical.index, std::move(users),
                       is_live_out(lb), has_indirect_uses)
                 .id;
        item->buffers_defined.push_back(id);
        for (ItemUse& use : buffers_[id].users) {
          std::vector<BufferId>& used = use.user->buffers_used;
          if (std::find(used.begin(), used.end(), id) == used.end()) used.push_back(id);
        }
      }
      buffer_of[lb] = id;
    }
    for (int64_t lb : points_to_.Flattened(inst)) item->buffers_output.push_back(buffer_of.at(lb));
  }
}

int64_t MemoryUsageTracker::AllocatedSize(BufferId id) const {
  const Buffer& buffer = buffers_.at(id);
  // Parameters and outputs belong to the caller.
  if (buffer.live_out || buffer.defining->instruction->opcode() == HloOpcode::kParameter) return 0;
  return buffer.size;
}

int64_t MemoryUsageTracker::AllocatedSize(const Item* item) const {
  int64_t size = 0;
  for (BufferId id : item->buffers_defined) size += AllocatedSize(id);
  return size;
}

int64_t MemoryUsageTracker::BytesUsedByBuffers(const Item* item, bool only_count_unplaced_users) const {
  int64_t bytes = 0;
  for (BufferId id : item->buffers_defined) {
    for (const ItemUse& use : buffers_.at(id).users) {
      if (only_count_unplaced_users && use.user->placed) continue;
      bytes += AllocatedSize(id);
      break;
    }
  }
  return bytes;
}

bool MemoryUsageTracker::IsCurrentlyLive(BufferId id) const {
  const Buffer& buffer = buffers_[id];
  return buffer.defining->placed && buffer.unfinished_user_count > 0;
}

bool MemoryUsageTracker::IsInUse(BufferId id) const {
  if (in_progress_ == nullptr) return false;
  const std::vector<BufferId>& used = in_progress_->buffers_used;
  return std::find(used.begin(), used.end(), id) != used.end();
}

bool MemoryUsageTracker::IsInstructionCurrentlyLive(const Item* item) const {
  if (!IsPlaced(item->instruction)) return false;
  for (const HloInstruction* user : item->instruction->users()) {
    if (!IsPlaced(user)) return true;
  }
  return false;
}

absl::Status MemoryUsageTracker::BeginInstruction(Item* item) {
  if (in_progress_ != nullptr) return absl::InternalError("rematerialization: nested BeginInstruction");
  in_progress_ = item;
  item->placed = true;
  for (BufferId id : item->buffers_defined) memory_usage_ += AllocatedSize(id);
  return absl::OkStatus();
}

absl::Status MemoryUsageTracker::EndInstruction() {
  if (in_progress_ == nullptr) return absl::InternalError("rematerialization: EndInstruction without Begin");
  for (BufferId id : in_progress_->buffers_used) {
    Buffer& buffer = buffers_.at(id);
    if (--buffer.unfinished_user_count < 0) {
      return absl::InternalError(StrCat("rematerialization: buffer of ", buffer.defining->instruction->name(),
                                        " has a negative user count"));
    }
    if (buffer.unfinished_user_count == 0) memory_usage_ -= AllocatedSize(id);
  }
  // A value nothing reads dies at once.
  for (BufferId id : in_progress_->buffers_defined) {
    if (buffers_.at(id).unfinished_user_count == 0) memory_usage_ -= AllocatedSize(id);
  }
  in_progress_ = nullptr;
  return absl::OkStatus();
}

bool MemoryUsageTracker::HasUnplacedUsers(const Item* item) const {
  for (BufferId id : item->buffers_defined) {
    for (const ItemUse& use : buffers_.at(id).users) {
      if (!use.user->placed) return true;
    }
  }
  return false;
}

UsesList MemoryUsageTracker::GetItemUses(const Item* item) const {
  UsesList uses;
  for (BufferId id : item->buffers_defined) {
    const UsesList& users = buffers_.at(id).users;
    uses.insert(uses.end(), users.begin(), users.end());
  }
  return uses;
}

bool MemoryUsageTracker::CanBeRematerialized(const HloInstruction* inst) {
  auto [it, inserted] = rematerializable_.try_emplace(inst, false);
  if (inserted) it->second = IsRematerializable(inst);
  return it->second;
}

int64_t MemoryUsageTracker::MemoryReducedIfRematerialized(absl::Span<Item* const> items) const {
  int64_t reduced = 0;
  absl::flat_hash_set<const Item*> candidates;
  for (const Item* item : items) {
    if (!item->placed || item == in_progress_) return 0;
    // Its values stop being live here ...
    for (BufferId id : item->buffers_defined) {
      const Buffer& buffer = buffers_.at(id);
      // ... unless aliasing or liveness out makes that hard to reason about.
      if (buffer.has_indirect_uses || buffer.live_out || buffer.index.size() > 1) return 0;
      if (IsInUse(id)) return 0;
      if (IsCurrentlyLive(id)) reduced += AllocatedSize(id);
    }
    // ... but dead operands it reads become live across this point.
    for (BufferId id : item->buffers_used) {
      if (IsCurrentlyLive(id)) continue;
      if (!candidates.contains(buffers_.at(id).defining)) reduced -= AllocatedSize(id);
    }
    candidates.insert(item);
  }
  return reduced;
}

int64_t MemoryUsageTracker::MemoryReducedIfCompressed(const Item* item, const Shape& compact_shape) const {
  if (!item->placed || item == in_progress_) return 0;
  BufferId id = item->buffers_output.at(0);
  if (!IsCurrentlyLive(id) || IsInUse(id) || !IsInstructionCurrentlyLive(item)) return 0;
  return buffers_.at(id).size - options_.shape_size(compact_shape);
}

std::optional<int64_t> MemoryUsageTracker::CostOfRecompute(absl::Span<Item* const> items,
                                                           int64_t memory_limit_bytes) const {
  // A placed control successor would be violated.
  for (const Item* item : items) {
    for (const HloInstruction* successor : item->instruction->control_successors()) {
      if (IsPlaced(successor)) return std::nullopt;
    }
  }
  int64_t reduced = MemoryReducedIfRematerialized(items);
  if (reduced <= 0) return std::nullopt;
  // Moving an instruction none of whose users is placed costs nothing.
  bool zero_cost_move = true;
  for (const Item* item : items) {
    for (const HloInstruction* user : item->instruction->users()) {
      if (IsPlaced(user)) zero_cost_move = false;
    }
  }
  if (zero_cost_move) return 0;
  return memory_limit_bytes / reduced;
}

std::optional<int64_t> MemoryUsageTracker::CostOfCompression(const Item* item, int64_t memory_limit_bytes,
                                                             int64_t peak_memory_bytes) const {
  if (item->buffers_output.size() != 1) return std::nullopt;
  const Buffer& output = buffers_.at(item->buffers_output[0]);
  if (!item->placed || item == in_progress_ || output.live_out) return std::nullopt;
  const Shape& shape = item->instruction->shape();
  if (!shape.IsArray()) return std::nullopt;
  Shape compact = options_.compact_shape(shape);
  int64_t reduced = MemoryReducedIfCompressed(item, compact);
  // Both forms are live while converting: only when both fit under the peak.
  int64_t size = options_.shape_size(shape);
  int64_t compact_size = options_.shape_size(compact);
  if (reduced > 0 && size + compact_size < peak_memory_bytes) return memory_limit_bytes / reduced;
  return std::nullopt;
}

MemoryUsageTracker::Pick MemoryUsageTracker::PickRematerializationCandidates(int64_t memory_limit_bytes,
                                                                             int64_t min_block_size,
                                                                             int64_t max_block_size,
                                                                             int64_t peak_memory_bytes) {
  Pick best;
  int64_t best_cost = std::numeric_limits<int64_t>::max();
  for (Item* start = list_.first_skip_node(); start != nullptr; start = list_.next_skip_node(start)) {
    // Dead: every use already moved to a rematerialization.
    if (start->removed ||
        (start->instruction->user_count() == 0 && start->instruction != computation_.root_instruction())) {
      continue;
    }
    std::vector<Item*> block;
    for (Item* cur = start; static_cast<int64_t>(block.size()) < min_block_size; cur = cur->next) {
      if (cur == nullptr || cur->removed || !cur->placed || cur == in_progress_) break;
      block.push_back(cur);
    }
    if (static_cast<int64_t>(block.size()) < min_block_size) break;
    bool excluded = false;
    for (Item* item : block) excluded |= item->denylisted || !CanBeRematerialized(item->instruction);
    if (excluded) continue;

    if (options_.compress && block.size() == 1) {
      ++best.effort;
      std::optional<int64_t> cost = CostOfCompression(block[0], memory_limit_bytes, peak_memory_bytes);
      if (cost && *cost < best_cost) {
        best.strategy = Strategy::kCompress;
        best.compact_shape = options_.compact_shape(block[0]->instruction->shape());
        best.items = block;
        best_cost = *cost;
      }
    }
    if (!options_.recompute) continue;
    // Grow the block one instruction at a time up to max_block_size.
    while (static_cast<int64_t>(block.size()) <= max_block_size) {
      ++best.effort;
      std::optional<int64_t> cost = CostOfRecompute(block, memory_limit_bytes);
      if (cost && *cost < best_cost) {
        best.strategy = Strategy::kRecompute;
        best.items = block;
        best_cost = *cost;
      }
      Item* next = block.back()->next;
      if (next == nullptr || next->removed || next->denylisted || !next->placed || next == in_progress_ ||
          !CanBeRematerialized(next->instruction)) {
        break;
      }
      block.push_back(next);
    }
  }
  return best;
}

absl::Status MemoryUsageTracker::AddRematerializedInstruction(Item* original, Item* remat,
                                                              absl::Span<Item* const> indirect_users) {
  if (in_progress_ == nullptr || !original->placed || remat->placed) {
    return absl::InternalError("rematerialization: bad tracker state for a recompute");
  }
  remat->buffers_used = original->buffers_used;
  // The remat reads what the original read: dead operands come back to life.
  for (BufferId id : original->buffers_used) {
    Buffer& buffer = buffers_.at(id);
    if (buffer.unfinished_user_count == 0) memory_usage_ += AllocatedSize(id);
    buffer.unfinished_user_count++;
    UsesList added;
    for (const ItemUse& use : buffer.users) {
      if (use.user == original) added.push_back(ItemUse{remat, use.operand_number, use.index});
    }
    buffer.users.insert(buffer.users.end(), added.begin(), added.end());
  }
  absl::flat_hash_set<const Item*> indirect(indirect_users.begin(), indirect_users.end());
  for (BufferId old_id : original->buffers_defined) {
    UsesList placed_users;
    UsesList unplaced_users;
    for (ItemUse& use : buffers_.at(old_id).users) {
      if (use.user->placed) {
        placed_users.push_back(use);
      } else if (!IsSupportedIndirectUser(use.user->instruction) || indirect.contains(use.user)) {
        unplaced_users.push_back(use);
      } else {
        // A relaying user no longer reached: dead.
        use.user->buffers_output.clear();
        use.user->buffers_used.clear();
      }
    }
    buffers_.at(old_id).users = std::move(placed_users);
    buffers_.at(old_id).unfinished_user_count = 0;
    memory_usage_ -= AllocatedSize(old_id);
    Buffer old = buffers_.at(old_id);
    BufferId new_id = NewBuffer(remat, old.shape, old.index, std::move(unplaced_users), false, false).id;
    remat->buffers_defined.push_back(new_id);
    remat->buffers_output.push_back(new_id);
    for (ItemUse& use : buffers_.at(new_id).users) {
      std::replace(use.user->buffers_used.begin(), use.user->buffers_used.end(), old_id, new_id);
      std::replace(use.user->buffers_output.begin(), use.user->buffers_output.end(), old_id, new_id);
    }
  }
  // The new get-tuple-elements and bitcasts relay the remat's buffers.
  for (Item* user : indirect_users) {
    const Item* source = list_.GetItem(user->instruction->operand(0));
    if (user->instruction->opcode() == HloOpcode::kBitcast) {
      user->buffers_used =
          IsSupportedIndirectUser(source->instruction) ? source->buffers_output : source->buffers_defined;
      user->buffers_output = user->buffers_used;
    } else {
      for (BufferId id : source->buffers_defined) {
        const Buffer& def = buffers_.at(id);
        if (def.index == ShapeIndex{user->instruction->tuple_index()}) user->buffers_output.push_back(id);
        if (def.index.empty()) user->buffers_used.push_back(id);
      }
    }
    for (BufferId id : user->buffers_used) {
      buffers_.at(id).unfinished_user_count++;
      buffers_.at(id).users.push_back(ItemUse{user, 0, std::nullopt});
    }
  }
  return absl::OkStatus();
}

absl::Status MemoryUsageTracker::AddCompressInstructions(Item* original, Item* compressed, Item* uncompressed) {
  if (!original->placed || original->buffers_output.size() != 1) {
    return absl::InternalError("rematerialization: bad tracker state for a compression");
  }
  memory_usage_ -= options_.shape_size(original->instruction->shape());
  memory_usage_ += options_.shape_size(compressed->instruction->shape());
  BufferId original_id = original->buffers_output[0];
  UsesList placed_users;
  UsesList unplaced_users;
  for (const ItemUse& use : buffers_.at(original_id).users) (use.user->placed ? placed_users : unplaced_users).push_back(use);
  placed_users.push_back(ItemUse{compressed, 0, std::nullopt});
  buffers_.at(original_id).users = std::move(placed_users);
  buffers_.at(original_id).unfinished_user_count = 0;
  ShapeIndex index = buffers_.at(original_id).index;

  BufferId compressed_id = NewBuffer(compressed, compressed->instruction->shape(), index,
                                     {ItemUse{uncompressed, 0, std::nullopt}}, false, false)
                               .id;
  compressed->buffers_used = original->buffers_output;
  compressed->buffers_output = {compressed_id};
  compressed->buffers_defined.push_back(compressed_id);

  BufferId uncompressed_id =
      NewBuffer(uncompressed, uncompressed->instruction->shape(), index, std::move(unplaced_users), false, false).id;
  uncompressed->buffers_used = {compressed_id};
  uncompressed->buffers_output = {uncompressed_id};
  uncompressed->buffers_defined = {uncompressed_id};
  for (ItemUse& use : buffers_.at(uncompressed_id).users) {
    std::replace(use.user->buffers_used.begin(), use.user->buffers_used.end(), original_id, uncompressed_id);
  }
  return absl::OkStatus();
}

}  // namespace passlab::remat
