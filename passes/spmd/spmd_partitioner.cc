#include "passes/spmd/spmd_partitioner.h"

#include <algorithm>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_sharding_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/collectives/collective_util.h"

namespace passlab {
namespace {

// Where a value lives: whole on every partition (no split dimension), or
// split evenly along `dim`, tile k on partition devices[k]. Tuples by
// element.
struct Placement {
  std::optional<int64_t> dim;
  std::vector<int64_t> devices;
  bool tuple = false;
  std::vector<Placement> elements;
  bool operator==(const Placement&) const = default;
};

Placement Replicated(const Shape& shape) {
  Placement p;
  if (!shape.IsTuple()) return p;
  p.tuple = true;
  for (const Shape& e : shape.tuple_shapes()) p.elements.push_back(Replicated(e));
  return p;
}

Placement Split(int64_t dim, std::vector<int64_t> devices) {
  Placement p;
  p.dim = dim;
  p.devices = std::move(devices);
  return p;
}

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : it - v.begin();
}

absl::Status Unsupported(const HloInstruction& inst, const HloSharding& s, int64_t partitions) {
  return absl::UnimplementedError(StrCat("spmd-partitioning: ", inst.name(), ": unsupported sharding ", s.ToString(),
                                         " (supported: replicated, or one dimension split evenly over all ",
                                         partitions, " partitions)"));
}

absl::StatusOr<Placement> PlacementOf(const HloInstruction& inst, const HloSharding& s, const Shape& shape,
                                      int64_t partitions) {
  if (s.kind == HloSharding::Kind::kReplicated) return Replicated(shape);
  if (shape.IsTuple()) {
    if (s.kind != HloSharding::Kind::kTuple || s.tuple_elements.size() != shape.tuple_shapes().size()) {
      return Unsupported(inst, s, partitions);
    }
    Placement p;
    p.tuple = true;
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      ASSIGN_OR_RETURN(Placement e, PlacementOf(inst, s.tuple_elements[i], shape.tuple_shapes()[i], partitions));
      p.elements.push_back(std::move(e));
    }
    return p;
  }
  if (s.kind != HloSharding::Kind::kTiled || !shape.IsArray()) return Unsupported(inst, s, partitions);
  const int64_t rank = shape.rank();
  if (ShardingIsFullyReplicated(s, rank)) return Placement{};
  std::optional<int64_t> d = ShardingSingleSplitDimension(s, rank);
  if (!d.has_value() || static_cast<int64_t>(s.tile_dims.size()) != rank || s.last_tile_dim_replicate ||
      !s.last_tile_dims.empty() || s.tile_dims[*d] != partitions || shape.dimensions(*d) % partitions != 0) {
    return Unsupported(inst, s, partitions);
  }
  std::vector<int64_t> devices = ShardingTileDevices(s);
  std::vector<int64_t> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t k = 0; k < partitions; ++k) {
    if (static_cast<int64_t>(sorted.size()) != partitions || sorted[k] != k) return Unsupported(inst, s, partitions);
  }
  return Split(*d, std::move(devices));
}

Shape LocalShape(const Shape& shape, const Placement& p, int64_t partitions) {
  if (shape.IsTuple()) {
    std::vector<Shape> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      elements.push_back(LocalShape(shape.tuple_shapes()[i], p.elements[i], partitions));
    }
    return Shape::Tuple(std::move(elements));
  }
  Shape local = shape;
  if (p.dim.has_value()) local.set_dimensions(*p.dim, shape.dimensions(*p.dim) / partitions);
  return local;
}

// A reduce whose partial results may be combined by an all-reduce with its
// own computation: the init value must not count twice.
bool PartialReduceCombines(const HloInstruction& reduce) {
  std::optional<ReductionKind> kind = MatchReductionKind(reduce.to_apply());
  if (!kind.has_value()) return false;
  if (*kind != ReductionKind::kSum && *kind != ReductionKind::kProduct) return true;  // idempotent
  const HloInstruction* init = reduce.operand(1);
  if (init->opcode() != HloOpcode::kConstant) return false;
  const double identity = *kind == ReductionKind::kSum ? 0 : 1;
  PrimitiveType t = init->shape().element_type();
  if (IsFloatingPointType(t)) return init->literal().GetDouble(0) == identity;
  if (IsIntegralType(t)) return init->literal().GetInt(0) == static_cast<int64_t>(identity);
  return false;
}

struct Local {
  HloInstruction* value = nullptr;
  Placement placement;
};

class Partitioner {
 public:
  Partitioner(HloModule& module, HloComputation& c)
      : module_(module), c_(c), partitions_(module.config().num_partitions),
        replicas_(module.config().replica_count) {}

  absl::Status Run();

 private:
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst) {
    inst->clear_sharding();
    return c_.AddInstruction(std::move(inst));
  }
  absl::StatusOr<Local> Partition(HloInstruction& inst, const Placement& want);
  absl::StatusOr<Local> Fallback(HloInstruction& inst);
  HloInstruction* Operand(const HloInstruction& inst, int64_t k) { return locals_.at(inst.operand(k)).value; }
  const Placement& OperandPlacement(const HloInstruction& inst, int64_t k) {
    return locals_.at(inst.operand(k)).placement;
  }
  // Operand k of inst, moved to placement p.
  HloInstruction* OperandAs(const HloInstruction& inst, int64_t k, const Placement& p) {
    const Local& l = locals_.at(inst.operand(k));
    return Reshard(l.value, FullShape(inst.operand(k)), l.placement, p);
  }
  // The unpartitioned shape (parameters are partitioned in place).
  const Shape& FullShape(const HloInstruction* inst) const { return full_shapes_.at(inst); }
  HloInstruction* Reshard(HloInstruction* value, const Shape& full, const Placement& from, const Placement& to);
  HloInstruction* Offset(const std::vector<int64_t>& devices, int64_t block);
  HloInstruction* SliceLocal(HloInstruction* whole, const Shape& full, const Placement& to);
  HloInstruction* AllGather(HloInstruction* local, const Shape& full, const Placement& from);
  HloInstruction* AllReduce(HloInstruction* partial, HloComputation* reduction);
  HloComputation* SumComputation(PrimitiveType type);
  ReplicaGroups AllPartitionGroups(const std::vector<int64_t>& order) const {
    ReplicaGroups groups;
    for (int64_t r = 0; r < replicas_; ++r) {
      std::vector<int64_t> g;
      for (int64_t d : order) g.push_back(r * partitions_ + d);
      groups.groups.push_back(std::move(g));
    }
    return groups;
  }

  HloModule& module_;
  HloComputation& c_;
  const int64_t partitions_;
  const int64_t replicas_;
  int64_t next_channel_id_ = 1;
  HloInstruction* partition_id_ = nullptr;
  absl::flat_hash_map<const HloInstruction*, Local> locals_;
  absl::flat_hash_map<PrimitiveType, HloComputation*> sums_;
  absl::flat_hash_map<const HloInstruction*, Shape> full_shapes_;
};

HloInstruction* Partitioner::Offset(const std::vector<int64_t>& devices, int64_t block) {
  if (partition_id_ == nullptr) {
    partition_id_ = Add(HloInstruction::Create(HloOpcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), {}));
  }
  // offset = table[partition-id]: tile k * block on partition devices[k].
  std::vector<int32_t> table(partitions_);
  for (size_t k = 0; k < devices.size(); ++k) table[devices[k]] = static_cast<int32_t>(k * block);
  HloInstruction* constant = Add(HloInstruction::CreateConstant(Literal::Vector<int32_t>(table)));
  HloInstruction* one = Add(HloInstruction::CreateDynamicSlice(Shape::Array(PrimitiveType::kS32, {1}), constant,
                                                               {partition_id_}, {1}));
  return Add(HloInstruction::CreateReshape(Shape::Scalar(PrimitiveType::kS32), one));
}

HloInstruction* Partitioner::SliceLocal(HloInstruction* whole, const Shape& full, const Placement& to) {
  const int64_t dim = *to.dim;
  Shape local = LocalShape(full, to, partitions_);
  HloInstruction* zero = Add(HloInstruction::CreateConstant(Literal::Scalar<int32_t>(0)));
  std::vector<HloInstruction*> starts(full.rank(), zero);
  starts[dim] = Offset(to.devices, local.dimensions(dim));
  return Add(HloInstruction::CreateDynamicSlice(local, whole, starts, local.dimensions()));
}

HloInstruction* Partitioner::AllGather(HloInstruction* local, const Shape& full, const Placement& from) {
  auto gather = HloInstruction::Create(HloOpcode::kAllGather, full, {local});
  gather->mutable_attrs().channel_id = next_channel_id_++;
  gather->mutable_attrs().replica_groups = AllPartitionGroups(from.devices);
  gather->mutable_attrs().use_global_device_ids = true;
  gather->set_dimensions({*from.dim});
  return Add(std::move(gather));
}

HloInstruction* Partitioner::AllReduce(HloInstruction* partial, HloComputation* reduction) {
  std::vector<int64_t> order(partitions_);
  for (int64_t k = 0; k < partitions_; ++k) order[k] = k;
  auto reduce = HloInstruction::Create(HloOpcode::kAllReduce, partial->shape(), {partial});
  reduce->mutable_attrs().channel_id = next_channel_id_++;
  reduce->mutable_attrs().replica_groups = AllPartitionGroups(order);
  reduce->mutable_attrs().use_global_device_ids = true;
  reduce->set_to_apply(reduction);
  return Add(std::move(reduce));
}

HloComputation* Partitioner::SumComputation(PrimitiveType type) {
  if (auto it = sums_.find(type); it != sums_.end()) return it->second;
  auto sum = std::make_unique<HloComputation>("sum");
  Shape scalar = Shape::Scalar(type);
  HloInstruction* a = sum->AddParameter(HloInstruction::CreateParameter(0, scalar, "a"));
  HloInstruction* b = sum->AddParameter(HloInstruction::CreateParameter(1, scalar, "b"));
  sum->set_root_instruction(sum->AddInstruction(HloInstruction::CreateBinary(scalar, HloOpcode::kAdd, a, b)));
  HloComputation* added = module_.AddEmbeddedComputation(std::move(sum));
  sums_[type] = added;
  return added;
}

HloInstruction* Partitioner::Reshard(HloInstruction* value, const Shape& full, const Placement& from,
                                     const Placement& to) {
  if (from == to) return value;
  if (full.IsTuple()) {
    std::vector<HloInstruction*> elements;
    for (size_t i = 0; i < full.tuple_shapes().size(); ++i) {
      HloInstruction* e = Add(HloInstruction::CreateGetTupleElement(value, static_cast<int64_t>(i)));
      elements.push_back(Reshard(e, full.tuple_shapes()[i], from.elements[i], to.elements[i]));
    }
    return Add(HloInstruction::CreateTuple(elements));
  }
  // split -> whole: all-gather; whole -> split: the partition's slice.
  if (from.dim.has_value()) value = AllGather(value, full, from);
  if (to.dim.has_value()) value = SliceLocal(value, full, to);
  return value;
}

absl::StatusOr<Local> Partitioner::Fallback(HloInstruction& inst) {
  // The op on whole operands: correct for any op, at the price of the
  // exchanges.
  std::vector<HloInstruction*> operands;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    operands.push_back(OperandAs(inst, k, Replicated(FullShape(inst.operand(k)))));
  }
  return Local{Add(inst.CloneWithNewOperands(inst.shape(), operands)), Replicated(inst.shape())};
}

absl::StatusOr<Local> Partitioner::Partition(HloInstruction& inst, const Placement& want) {
  const Shape& shape = inst.shape();
  auto local_clone = [&](std::vector<HloInstruction*> operands) {
    return Local{Add(inst.CloneWithNewOperands(LocalShape(shape, want, partitions_), operands)), want};
  };
  auto same_rank_arrays = [&] {
    for (const HloInstruction* o : inst.operands()) {
      if (!o->shape().IsArray() || o->shape().rank() != shape.rank()) return false;
    }
    return shape.IsArray();
  };
  if (inst.opcode() == HloOpcode::kParameter) {
    *inst.mutable_shape() = LocalShape(shape, want, partitions_);
    return Local{&inst, want};
  }
  // Elementwise: every operand split like the result.
  if ((inst.IsElementwise() || inst.opcode() == HloOpcode::kCopy) && inst.operand_count() > 0 && same_rank_arrays()) {
    std::vector<HloInstruction*> operands;
    for (int64_t k = 0; k < inst.operand_count(); ++k) {
      operands.push_back(OperandAs(inst, k, want.dim ? Split(*want.dim, want.devices) : Placement{}));
    }
    return local_clone(operands);
  }
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast: {
      int64_t k = want.dim ? IndexOf(inst.dimensions(), *want.dim) : -1;
      return local_clone({OperandAs(inst, 0, k >= 0 ? Split(k, want.devices) : Placement{})});
    }
    case HloOpcode::kTranspose:
      return local_clone({OperandAs(inst, 0, want.dim ? Split(inst.dimensions(*want.dim), want.devices) : Placement{})});
    case HloOpcode::kReshape: {
      if (!want.dim) return local_clone({OperandAs(inst, 0, Placement{})});
      // The operand dimension whose blocks are the result's split blocks:
      // same elements before both, both divisible by the partitions.
      const Shape& in = FullShape(inst.operand(0));
      int64_t before = 1;
      for (int64_t e = 0; e < *want.dim; ++e) before *= shape.dimensions(e);
      int64_t in_before = 1;
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (in_before == before && in.dimensions(d) != 1) {
          if (in.dimensions(d) % partitions_ == 0) return local_clone({OperandAs(inst, 0, Split(d, want.devices))});
          break;
        }
        in_before *= in.dimensions(d);
      }
      break;
    }
    case HloOpcode::kDot: {
      const DotDimensionNumbers& dn = inst.attrs().dot_dnums;
      if (want.dim) {
        // Result split on a batch or free dimension: each operand split on
        // its dimension of it, or whole.
        std::optional<int64_t> lhs_dim, rhs_dim;
        const int64_t batch = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
        const int64_t lhs_free = inst.operand(0)->shape().rank() - batch -
                                 static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
        auto free_dim = [](const Shape& s, const std::vector<int64_t>& b, const std::vector<int64_t>& c, int64_t i) {
          for (int64_t d = 0; d < s.rank(); ++d) {
            if (IndexOf(b, d) >= 0 || IndexOf(c, d) >= 0) continue;
            if (i-- == 0) return d;
          }
          return int64_t{-1};
        };
        int64_t e = *want.dim;
        if (e < batch) {
          lhs_dim = dn.lhs_batch_dimensions[e];
          rhs_dim = dn.rhs_batch_dimensions[e];
        } else if (e < batch + lhs_free) {
          lhs_dim = free_dim(inst.operand(0)->shape(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions,
                             e - batch);
        } else {
          rhs_dim = free_dim(inst.operand(1)->shape(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions,
                             e - batch - lhs_free);
        }
        return local_clone({OperandAs(inst, 0, lhs_dim ? Split(*lhs_dim, want.devices) : Placement{}),
                            OperandAs(inst, 1, rhs_dim ? Split(*rhs_dim, want.devices) : Placement{})});
      }
      // Whole result from operands split on a contracting dimension: local
      // partial products, summed by an all-reduce.
      if (shape.element_type() == PrimitiveType::kPred) break;
      for (int64_t k = 0; k < 2; ++k) {
        const Placement& p = OperandPlacement(inst, k);
        const std::vector<int64_t>& mine = k == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
        const std::vector<int64_t>& other = k == 0 ? dn.rhs_contracting_dimensions : dn.lhs_contracting_dimensions;
        if (!p.dim) continue;
        int64_t i = IndexOf(mine, *p.dim);
        if (i < 0) continue;
        Placement lhs = k == 0 ? p : Split(other[i], p.devices);
        Placement rhs = k == 0 ? Split(other[i], p.devices) : p;
        HloInstruction* partial =
            Add(inst.CloneWithNewOperands(shape, {OperandAs(inst, 0, lhs), OperandAs(inst, 1, rhs)}));
        return Local{AllReduce(partial, SumComputation(shape.element_type())), Placement{}};
      }
      break;
    }
    case HloOpcode::kReduce: {
      if (inst.operand_count() != 2 || !shape.IsArray()) break;
      const Placement& p = OperandPlacement(inst, 0);
      if (!p.dim) break;
      HloInstruction* init = OperandAs(inst, 1, Placement{});
      if (int64_t r = IndexOf(inst.dimensions(), *p.dim); r < 0) {
        // A kept split dimension: a local reduce, split the same way.
        int64_t e = 0;
        for (int64_t d = 0; d < *p.dim; ++d) e += IndexOf(inst.dimensions(), d) < 0 ? 1 : 0;
        Placement got = Split(e, p.devices);
        return Local{Add(inst.CloneWithNewOperands(LocalShape(shape, got, partitions_), {Operand(inst, 0), init})),
                     got};
      }
      // The split dimension is reduced: local partial reduces, combined.
      if (!PartialReduceCombines(inst)) break;
      HloInstruction* partial = Add(inst.CloneWithNewOperands(shape, {Operand(inst, 0), init}));
      return Local{AllReduce(partial, inst.to_apply()), Placement{}};
    }
    case HloOpcode::kConvolution: {
      const std::optional<ConvolutionDimensionNumbers>& dn = inst.attrs().conv_dnums;
      if (!want.dim || !dn.has_value() || *want.dim != dn->output_batch_dimension ||
          inst.attrs().feature_group_count != 1 || inst.attrs().batch_group_count != 1) {
        break;
      }
      return local_clone({OperandAs(inst, 0, Split(dn->input_batch_dimension, want.devices)),
                          OperandAs(inst, 1, Placement{})});
    }
    case HloOpcode::kTuple: {
      Placement got;
      got.tuple = true;
      std::vector<HloInstruction*> elements;
      for (int64_t k = 0; k < inst.operand_count(); ++k) {
        elements.push_back(Operand(inst, k));
        got.elements.push_back(OperandPlacement(inst, k));
      }
      return Local{Add(HloInstruction::CreateTuple(elements)), got};
    }
    case HloOpcode::kGetTupleElement: {
      const Placement& p = OperandPlacement(inst, 0);
      HloInstruction* element = Add(HloInstruction::CreateGetTupleElement(Operand(inst, 0), inst.tuple_index()));
      return Local{element, p.elements.at(inst.tuple_index())};
    }
    default:
      break;
  }
  return Fallback(inst);
}

absl::Status Partitioner::Run() {
  std::vector<HloInstruction*> order = c_.MakeInstructionPostOrder();
  for (HloInstruction* inst : order) full_shapes_[inst] = inst->shape();
  for (HloInstruction* inst : order) {
    ASSIGN_OR_RETURN(Placement want,
        inst->has_sharding() ? PlacementOf(*inst, inst->sharding(), inst->shape(), partitions_)
                             : absl::StatusOr<Placement>(Replicated(inst->shape())));
    ASSIGN_OR_RETURN(Local local, Partition(*inst, want));
    local.value = Reshard(local.value, inst->shape(), local.placement, want);
    if (local.value != inst && inst->has_sharding()) local.value->set_sharding(inst->sharding());
    locals_[inst] = Local{local.value, want};
  }
  HloInstruction* old_root = c_.root_instruction();
  c_.set_root_instruction(locals_.at(old_root).value);
  // The whole-array program goes; parameters were partitioned in place.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* old = *it;
    if (old->opcode() == HloOpcode::kParameter || locals_.at(old).value == old) continue;
    RETURN_IF_ERROR(c_.RemoveInstruction(old));
  }
  return absl::OkStatus();
}

bool HasSharding(const HloComputation& c) {
  for (const HloInstruction* i : c.instructions()) {
    if (i->has_sharding()) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> SpmdPartitioner::RunImpl(HloModule& module, PassRunContext*) {
  HloComputation* entry = module.entry_computation();
  if (module.config().num_partitions <= 1 || entry == nullptr || !HasSharding(*entry)) return false;
  Partitioner partitioner(module, *entry);
  RETURN_IF_ERROR(partitioner.Run());
  // The entry's parameters and result now have per-partition shapes.
  module.config().entry_computation_layout.reset();
  BumpCounter("modules partitioned");
  return true;
}

}  // namespace passlab
