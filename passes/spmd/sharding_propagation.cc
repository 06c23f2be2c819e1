#include "passes/spmd/sharding_propagation.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "core/ir/hlo_sharding_util.h"

namespace passlab {
namespace {

using DimMap = std::function<std::optional<int64_t>(int64_t)>;

bool IsTiled(const HloSharding& s) { return s.kind == HloSharding::Kind::kTiled; }

// A tiled sharding of a rank-`rank` array with exactly one split dimension
// and no replication dimensions: the tile grid is one line of devices, so it
// moves to another dimension (or array) unchanged.
std::optional<int64_t> SimpleSplitDimension(const HloSharding& s, int64_t rank) {
  if (!IsTiled(s) || static_cast<int64_t>(s.tile_dims.size()) != rank || s.last_tile_dim_replicate ||
      !s.last_tile_dims.empty()) {
    return std::nullopt;
  }
  return ShardingSingleSplitDimension(s, rank);
}

// `s` (of a rank `from_rank` array) seen on a rank `to_rank` array whose
// dimension map(d) holds the blocks of dimension d. A split dimension with
// no image gives `unmapped` (nullopt: nothing inferred).
std::optional<HloSharding> MoveSharding(const HloSharding& s, int64_t from_rank, int64_t to_rank, const DimMap& map,
                                        std::optional<HloSharding> unmapped) {
  if (s.kind == HloSharding::Kind::kReplicated || s.kind == HloSharding::Kind::kMaximal) return s;
  if (!IsTiled(s)) return std::nullopt;
  if (ShardingIsFullyReplicated(s, from_rank)) return ReplicatedSharding();
  std::optional<int64_t> d = SimpleSplitDimension(s, from_rank);
  if (!d.has_value()) return std::nullopt;
  std::optional<int64_t> e = map(*d);
  if (!e.has_value()) return unmapped;
  HloSharding moved = s;
  moved.metadata.clear();
  moved.tile_dims.assign(to_rank, 1);
  moved.tile_dims[*e] = s.tile_dims[*d];
  return moved;
}

// The dimension of `to` whose blocks are dimension d's blocks in a reshape
// from `from` to `to`, split into `tiles`: same elements before it, and one
// of the two sizes a multiple of the other.
std::optional<int64_t> ReshapeDimension(const Shape& from, const Shape& to, int64_t d, int64_t tiles) {
  int64_t before = 1;
  for (int64_t i = 0; i < d; ++i) before *= from.dimensions(i);
  int64_t to_before = 1;
  for (int64_t e = 0; e < to.rank(); ++e) {
    if (to_before == before && to.dimensions(e) != 1) {
      int64_t a = from.dimensions(d), b = to.dimensions(e);
      bool nested = (a % b == 0 || b % a == 0) && std::min(a, b) % tiles == 0;
      return nested ? std::optional<int64_t>(e) : std::nullopt;
    }
    to_before *= to.dimensions(e);
    if (to_before > before) return std::nullopt;
  }
  return std::nullopt;
}

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : it - v.begin();
}

// A dot's result dimensions: batch, then lhs free, then rhs free. Operand
// dimension d of operand `k` -> result dimension (nullopt: contracting).
std::optional<int64_t> DotResultDimension(const HloInstruction& dot, int64_t k, int64_t d) {
  const DotDimensionNumbers& dn = dot.attrs().dot_dnums;
  const std::vector<int64_t>& batch = k == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting = k == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
  if (int64_t b = IndexOf(batch, d); b >= 0) return b;
  if (IndexOf(contracting, d) >= 0) return std::nullopt;
  int64_t result = static_cast<int64_t>(batch.size());
  if (k == 1) {
    result += dot.operand(0)->shape().rank() - static_cast<int64_t>(batch.size()) -
              static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
  }
  for (int64_t i = 0; i < d; ++i) {
    if (IndexOf(batch, i) < 0 && IndexOf(contracting, i) < 0) ++result;
  }
  return result;
}

// Result dimension e of a dot -> operand k's dimension (nullopt: the other
// operand's free dimension).
std::optional<int64_t> DotOperandDimension(const HloInstruction& dot, int64_t k, int64_t e) {
  for (int64_t d = 0; d < dot.operand(k)->shape().rank(); ++d) {
    if (DotResultDimension(dot, k, d) == e) return d;
  }
  return std::nullopt;
}

// Reduce: operand dimension d -> result dimension (nullopt: reduced).
std::optional<int64_t> ReduceResultDimension(const HloInstruction& reduce, int64_t d) {
  if (IndexOf(reduce.dimensions(), d) >= 0) return std::nullopt;
  int64_t e = 0;
  for (int64_t i = 0; i < d; ++i) e += IndexOf(reduce.dimensions(), i) < 0 ? 1 : 0;
  return e;
}

std::optional<HloSharding> Known(const HloInstruction* i) {
  if (!i->has_sharding()) return std::nullopt;
  return i->sharding();
}

// The sharding of `inst` implied by its operand `k`'s sharding.
std::optional<HloSharding> FromOperand(const HloInstruction& inst, int64_t k) {
  const HloInstruction* operand = inst.operand(k);
  std::optional<HloSharding> s = Known(operand);
  if (!s.has_value()) return std::nullopt;
  if (inst.opcode() == HloOpcode::kTuple) return std::nullopt;  // all elements at once, below
  if (inst.opcode() == HloOpcode::kGetTupleElement) {
    if (s->kind == HloSharding::Kind::kTuple) return s->tuple_elements.at(inst.tuple_index());
    if (s->kind == HloSharding::Kind::kReplicated || s->kind == HloSharding::Kind::kMaximal) return s;
    return std::nullopt;
  }
  if (!inst.shape().IsArray() || !operand->shape().IsArray()) return std::nullopt;
  const int64_t from = operand->shape().rank(), to = inst.shape().rank();
  if (inst.IsElementwise() && from == to) return s;
  switch (inst.opcode()) {
    case HloOpcode::kCopy:
      return s;
    case HloOpcode::kBroadcast:
      return MoveSharding(*s, from, to, [&](int64_t d) -> std::optional<int64_t> { return inst.dimensions(d); },
                          std::nullopt);
    case HloOpcode::kTranspose:
      return MoveSharding(*s, from, to,
                          [&](int64_t d) -> std::optional<int64_t> { return IndexOf(inst.dimensions(), d); },
                          std::nullopt);
    case HloOpcode::kReshape:
      return MoveSharding(*s, from, to,
                          [&](int64_t d) {
                            return ReshapeDimension(operand->shape(), inst.shape(), d, s->tile_dims[d]);
                          },
                          std::nullopt);
    case HloOpcode::kDot:
      return MoveSharding(*s, from, to, [&](int64_t d) { return DotResultDimension(inst, k, d); },
                          ReplicatedSharding());
    case HloOpcode::kReduce:
      if (k != 0 || inst.operand_count() != 2) return std::nullopt;
      return MoveSharding(*s, from, to, [&](int64_t d) { return ReduceResultDimension(inst, d); },
                          ReplicatedSharding());
    case HloOpcode::kConvolution: {
      if (k != 0 || !inst.attrs().conv_dnums.has_value()) return std::nullopt;
      const ConvolutionDimensionNumbers& dn = *inst.attrs().conv_dnums;
      return MoveSharding(*s, from, to,
                          [&](int64_t d) -> std::optional<int64_t> {
                            if (d != dn.input_batch_dimension) return std::nullopt;
                            return dn.output_batch_dimension;
                          },
                          std::nullopt);
    }
    default:
      return std::nullopt;
  }
}

// The sharding of operand `k` of `user` implied by the user's sharding.
std::optional<HloSharding> FromUser(const HloInstruction& user, int64_t k) {
  std::optional<HloSharding> s = Known(&user);
  if (!s.has_value()) return std::nullopt;
  const HloInstruction* operand = user.operand(k);
  if (user.opcode() == HloOpcode::kTuple) {
    if (s->kind == HloSharding::Kind::kTuple) return s->tuple_elements.at(k);
    if (s->kind == HloSharding::Kind::kReplicated || s->kind == HloSharding::Kind::kMaximal) return s;
    return std::nullopt;
  }
  if (!user.shape().IsArray() || !operand->shape().IsArray()) return std::nullopt;
  const int64_t from = user.shape().rank(), to = operand->shape().rank();
  if ((user.IsElementwise() || user.opcode() == HloOpcode::kCopy) && from == to) return s;
  switch (user.opcode()) {
    case HloOpcode::kBroadcast:
      return MoveSharding(*s, from, to,
                          [&](int64_t e) -> std::optional<int64_t> {
                            int64_t d = IndexOf(user.dimensions(), e);
                            return d < 0 ? std::nullopt : std::optional<int64_t>(d);
                          },
                          ReplicatedSharding());
    case HloOpcode::kTranspose:
      return MoveSharding(*s, from, to, [&](int64_t e) -> std::optional<int64_t> { return user.dimensions(e); },
                          std::nullopt);
    case HloOpcode::kReshape:
      return MoveSharding(*s, from, to,
                          [&](int64_t e) {
                            return ReshapeDimension(user.shape(), operand->shape(), e, s->tile_dims[e]);
                          },
                          std::nullopt);
    case HloOpcode::kDot:
      return MoveSharding(*s, from, to, [&](int64_t e) { return DotOperandDimension(user, k, e); },
                          ReplicatedSharding());
    case HloOpcode::kReduce: {
      if (user.operand_count() != 2) return std::nullopt;
      if (k == 1) return ReplicatedSharding();  // the init value
      return MoveSharding(*s, from, to,
                          [&](int64_t e) -> std::optional<int64_t> {
                            for (int64_t d = 0; d < to; ++d) {
                              if (ReduceResultDimension(user, d) == e) return d;
                            }
                            return std::nullopt;
                          },
                          std::nullopt);
    }
    case HloOpcode::kConvolution: {
      if (!user.attrs().conv_dnums.has_value()) return std::nullopt;
      const ConvolutionDimensionNumbers& dn = *user.attrs().conv_dnums;
      if (k == 1) {
        // The kernel of a batch-split convolution is whole on every device.
        return SimpleSplitDimension(*s, from) == dn.output_batch_dimension ? std::optional(ReplicatedSharding())
                                                                           : std::nullopt;
      }
      return MoveSharding(*s, from, to,
                          [&](int64_t e) -> std::optional<int64_t> {
                            if (e != dn.output_batch_dimension) return std::nullopt;
                            return dn.input_batch_dimension;
                          },
                          std::nullopt);
    }
    default:
      return std::nullopt;
  }
}

// Forward: from the operands, first operand first; a tuple once every
// element is known.
std::optional<HloSharding> InferForward(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kTuple) {
    if (inst.operand_count() == 0) return std::nullopt;
    HloSharding tuple;
    tuple.kind = HloSharding::Kind::kTuple;
    for (const HloInstruction* element : inst.operands()) {
      if (!element->has_sharding() || element->sharding().kind == HloSharding::Kind::kTuple) return std::nullopt;
      tuple.tuple_elements.push_back(element->sharding());
    }
    return tuple;
  }
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    if (std::optional<HloSharding> s = FromOperand(inst, k)) return s;
  }
  return std::nullopt;
}

std::optional<HloSharding> InferBackward(const HloInstruction& inst) {
  for (const HloInstruction* user : inst.users()) {
    for (int64_t k = 0; k < user->operand_count(); ++k) {
      if (user->operand(k) != &inst) continue;
      if (std::optional<HloSharding> s = FromUser(*user, k)) return s;
    }
  }
  return std::nullopt;
}

bool HasAnnotation(const HloModule& module) {
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->has_sharding()) return true;
    }
  }
  return false;
}

// Instructions that never get a sharding: tokens, and ops without an array
// or tuple value.
bool Skipped(const HloInstruction& inst) {
  return !inst.shape().IsArray() && !inst.shape().IsTuple();
}

}  // namespace

absl::StatusOr<bool> ShardingPropagation::RunImpl(HloModule& module, PassRunContext*) {
  if (!HasAnnotation(module)) return false;
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    // Each round assigns at least one sharding or stops, so the number of
    // instructions bounds the rounds.
    for (size_t round = 0; round <= order.size(); ++round) {
      bool progress = false;
      for (HloInstruction* inst : order) {
        if (inst->has_sharding() || Skipped(*inst)) continue;
        if (std::optional<HloSharding> s = InferForward(*inst)) {
          inst->set_sharding(std::move(*s));
          progress = true;
        }
      }
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        HloInstruction* inst = *it;
        if (inst->has_sharding() || Skipped(*inst)) continue;
        if (std::optional<HloSharding> s = InferBackward(*inst)) {
          inst->set_sharding(std::move(*s));
          progress = true;
        }
      }
      if (!progress) break;
      changed = true;
    }
  }
  if (changed) BumpCounter("shardings inferred");
  return changed;
}

}  // namespace passlab
