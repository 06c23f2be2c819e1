#include "core/verify/hlo_verifier.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace {

absl::Status Fail(const HloInstruction& inst, std::string_view rule, std::string_view detail) {
  return absl::InvalidArgumentError(StrCat("verifier: instruction '", inst.name(), "' in computation '",
                                           inst.parent() ? inst.parent()->name() : "?", "': [", rule, "] ",
                                           detail));
}

absl::Status FailComputation(const HloComputation& c, std::string_view rule, std::string_view detail) {
  return absl::InvalidArgumentError(StrCat("verifier: computation '", c.name(), "': [", rule, "] ", detail));
}

// A layout must be a permutation of the dimensions, with sane tiles.
absl::Status CheckLayout(const Shape& shape, std::string* problem) {
  if (!shape.IsArray() || !shape.has_layout()) return absl::OkStatus();
  const Layout& l = shape.layout();
  std::vector<int64_t> m2m = l.minor_to_major();
  std::sort(m2m.begin(), m2m.end());
  for (int64_t i = 0; i < static_cast<int64_t>(m2m.size()); ++i) {
    if (m2m[i] != i || static_cast<int64_t>(m2m.size()) != shape.rank()) {
      *problem = StrCat("layout ", l.ToString(), " is not a permutation of the ", shape.rank(),
                        " dimensions of ", shape.ToString());
      return absl::InvalidArgumentError(*problem);
    }
  }
  if (static_cast<int64_t>(l.minor_to_major().size()) != shape.rank()) {
    *problem = StrCat("layout ", l.ToString(), " does not cover the ", shape.rank(), " dimensions of ", shape.ToString());
    return absl::InvalidArgumentError(*problem);
  }
  for (const Tile& t : l.tiles()) {
    if (t.dims.empty()) {
      *problem = StrCat("layout ", l.ToString(), " has an empty tile");
      return absl::InvalidArgumentError(*problem);
    }
    for (int64_t d : t.dims) {
      if (d == 0 || d < Tile::kCombineDimension) {
        *problem = StrCat("tile ", t.ToString(), " has an invalid dimension ", d);
        return absl::InvalidArgumentError(*problem);
      }
    }
  }
  if (!l.tiles().empty() && static_cast<int64_t>(l.tiles()[0].dims.size()) > shape.rank() && shape.rank() > 0) {
    *problem = StrCat("tile ", l.tiles()[0].ToString(), " has more dimensions than ", shape.ToString());
    return absl::InvalidArgumentError(*problem);
  }
  if (l.element_size_in_bits() < 0 || l.memory_space() < 0 || l.tail_padding_alignment_in_elements() < 1) {
    *problem = StrCat("layout ", l.ToString(), " has a negative element size or memory space");
    return absl::InvalidArgumentError(*problem);
  }
  if (!l.dim_levels().empty() && static_cast<int64_t>(l.dim_levels().size()) != shape.rank()) {
    *problem = StrCat("layout ", l.ToString(), " has dim level types for ", l.dim_levels().size(),
                      " dimensions, not ", shape.rank());
    return absl::InvalidArgumentError(*problem);
  }
  return absl::OkStatus();
}

absl::Status CheckShapeLayouts(const HloInstruction& inst) {
  absl::Status result;
  ForEachSubshape(inst.shape(), [&](const Shape& s, const ShapeIndex& index) {
    std::string problem;
    if (result.ok() && !CheckLayout(s, &problem).ok()) {
      result = Fail(inst, "layout", index.empty() ? problem : StrCat(problem, " at index ", ShapeIndexToString(index)));
    }
    if (result.ok() && s.IsArray()) {
      for (int64_t i = 0; i < s.rank(); ++i) {
        if (s.dimensions(i) < 0 && s.dimensions(i) != Shape::kUnboundedSize) {
          result = Fail(inst, "shape", StrCat("dimension ", i, " of ", s.ToString(), " is negative"));
        }
      }
      // XLA's ShapeUtil::ValidateShape: the element count and byte size
      // must fit in 64 bits.
      int64_t bytes = std::max<int64_t>(PrimitiveByteWidth(s.element_type()), 1);
      for (int64_t i = 0; result.ok() && i < s.rank(); ++i) {
        const int64_t d = s.dimensions(i);
        if (d <= 0) continue;
        if (bytes > std::numeric_limits<int64_t>::max() / d) {
          result = Fail(inst, "shape", StrCat(s.ToString(), " has more bytes than fit in 64 bits"));
        }
        bytes *= d;
      }
    }
  });
  return result;
}

bool MixedPrecisionAllowed(HloOpcode op) {
  switch (op) {
    case HloOpcode::kDot: case HloOpcode::kConvolution: case HloOpcode::kAllReduce:
    case HloOpcode::kReduce: case HloOpcode::kReduceWindow: case HloOpcode::kMap:
    case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot:
      return true;
    default:
      return false;
  }
}

// Shapes agree: compatible (dims, types, tuple structure); with layouts when
// layout sensitive; element types may differ for mixed-precision ops.
bool ShapesAgree(const Shape& inferred, const Shape& actual, bool layout_sensitive, bool mixed) {
  if (inferred.IsTuple() != actual.IsTuple()) return false;
  if (inferred.IsTuple()) {
    if (inferred.tuple_shapes_size() != actual.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < inferred.tuple_shapes_size(); ++i) {
      if (!ShapesAgree(inferred.tuple_shapes(i), actual.tuple_shapes(i), layout_sensitive, mixed)) return false;
    }
    return true;
  }
  if (inferred.element_type() != actual.element_type() &&
      !(mixed && IsArrayType(inferred.element_type()) && IsArrayType(actual.element_type()))) {
    return false;
  }
  if (inferred.dimensions() != actual.dimensions()) return false;
  // Dynamism: the actual shape may be dynamic where the inferred one is
  // bounded (dynamic padder output) but not the reverse.
  for (int64_t i = 0; i < inferred.rank(); ++i) {
    if (inferred.is_dynamic_dimension(i) && !actual.is_dynamic_dimension(i)) return false;
  }
  return !layout_sensitive || !inferred.has_layout() || !actual.has_layout() ||
         inferred.layout().SamePlacement(actual.layout()) || !IsArrayType(actual.element_type());
}

// Ops whose result layout follows from their operands or definition (they
// reinterpret or pass data on without touching it), as in XLA's
// layout-sensitive verifier; every other op may choose its result layout
// (layout assignment picks it; the kernel writes that layout). Constants are
// not in the list: a passlab literal is logical, the constant's shape alone
// places its buffer.
bool ResultLayoutIsInferred(HloOpcode op) {
  return op == HloOpcode::kBitcast || op == HloOpcode::kCall || op == HloOpcode::kConditional ||
         op == HloOpcode::kCopyDone || op == HloOpcode::kCopyStart ||
         op == HloOpcode::kCustomCall || op == HloOpcode::kGetTupleElement || op == HloOpcode::kInfeed ||
         op == HloOpcode::kOutfeed || op == HloOpcode::kParameter || op == HloOpcode::kRecv ||
         op == HloOpcode::kRecvDone || op == HloOpcode::kSend || op == HloOpcode::kSendDone ||
         op == HloOpcode::kTuple || op == HloOpcode::kWhile;
}

absl::Status CheckAttributes(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case HloOpcode::kCompare: {
      PrimitiveType t = inst.operand(0)->shape().element_type();
      ComparisonType ct = a.comparison_type;
      if (ct == ComparisonType::kFloat || ct == ComparisonType::kTotalOrder) {
        if (!IsFloatingPointType(t) && !IsComplexType(t)) {
          return Fail(inst, "attributes", StrCat("comparison type ", ComparisonTypeString(ct), " needs float operands, not ",
                                                 PrimitiveTypeName(t)));
        }
      } else if ((ct == ComparisonType::kSigned && !IsSignedIntegralType(t)) ||
                 (ct == ComparisonType::kUnsigned && !IsUnsignedIntegralType(t) && t != PrimitiveType::kPred)) {
        return Fail(inst, "attributes", StrCat("comparison type ", ComparisonTypeString(ct), " does not fit ",
                                               PrimitiveTypeName(t)));
      }
      return absl::OkStatus();
    }
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad:
      if (!(a.epsilon > 0) || !std::isfinite(a.epsilon)) {
        return Fail(inst, "attributes", StrCat("epsilon must be finite and positive, not ", a.epsilon));
      }
      return absl::OkStatus();
    case HloOpcode::kConvolution:
      if (a.feature_group_count < 1 || a.batch_group_count < 1) {
        return Fail(inst, "attributes", "group counts must be at least 1");
      }
      if (a.feature_group_count > 1 && a.batch_group_count > 1) {
        return Fail(inst, "attributes", "feature_group_count and batch_group_count cannot both exceed 1");
      }
      return absl::OkStatus();
    case HloOpcode::kFusion:
      return absl::OkStatus();
    case HloOpcode::kParameter:
      if (!a.parameter_replication.empty()) {
        int64_t leaves = 0;
        ForEachSubshape(inst.shape(), [&](const Shape& s, const ShapeIndex&) { leaves += s.IsTuple() ? 0 : 1; });
        if (static_cast<int64_t>(a.parameter_replication.size()) != leaves) {
          return Fail(inst, "attributes", "parameter_replication needs one entry per leaf");
        }
      }
      return absl::OkStatus();
    default:
      return absl::OkStatus();
  }
}

// Seed 001: each async-start/update has exactly one user, the next step of
// the chain; the chain shares one wrapped computation; shapes agree.
absl::Status CheckAsync(const HloInstruction& inst) {
  HloOpcode op = inst.opcode();
  if (op != HloOpcode::kAsyncStart && op != HloOpcode::kAsyncUpdate && op != HloOpcode::kAsyncDone) {
    return absl::OkStatus();
  }
  if (inst.called_computations().size() != 1 || inst.async_wrapped_computation() == nullptr) {
    return Fail(inst, "async", "must call exactly one wrapped computation");
  }
  const HloComputation* wrapped = inst.async_wrapped_computation();
  const HloInstruction* root = wrapped->root_instruction();
  if (root == nullptr) return Fail(inst, "async", "the wrapped computation has no root");
  if (HasOwnAsyncOpcodes(root->opcode())) {
    return Fail(inst, "async", StrCat("wraps '", HloOpcodeString(root->opcode()), "', which has its own -start/-done opcodes"));
  }
  if (!inst.shape().IsTuple() && op != HloOpcode::kAsyncDone) {
    return Fail(inst, "async", "async-start and async-update produce a tuple (operands, result, context...)");
  }
  if (op == HloOpcode::kAsyncStart) {
    const Shape& s = inst.shape();
    if (s.tuple_shapes_size() < 2) return Fail(inst, "async", "the tuple needs (operands, result, context...)");
    Shape operands = s.tuple_shapes(0);
    if (!operands.IsTuple()) operands = Shape::Tuple({operands});  // seed 001's single-operand spelling
    if (operands.tuple_shapes_size() != inst.operand_count() ||
        wrapped->num_parameters() != inst.operand_count()) {
      return Fail(inst, "async", StrCat("has ", inst.operand_count(), " operands but its shape lists ",
                                        operands.tuple_shapes_size(), " and the wrapped computation takes ",
                                        wrapped->num_parameters()));
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (!operands.tuple_shapes(i).Compatible(inst.operand(i)->shape()) ||
          !wrapped->parameter_instruction(i)->shape().Compatible(inst.operand(i)->shape())) {
        return Fail(inst, "async", StrCat("operand ", i, " does not match the shape tuple or the wrapped parameter"));
      }
    }
    if (!s.tuple_shapes(1).Compatible(root->shape())) {
      return Fail(inst, "async", StrCat("element 1 is ", s.tuple_shapes(1).ToString(false),
                                        " but the wrapped op returns ", root->shape().ToString(false)));
    }
  } else {
    const HloInstruction* prev = inst.operand(0);
    if (prev->opcode() != HloOpcode::kAsyncStart && prev->opcode() != HloOpcode::kAsyncUpdate) {
      return Fail(inst, "async", StrCat("operand 0 must be an async-start or async-update, not '", prev->name(), "'"));
    }
    if (prev->async_wrapped_computation() != wrapped) {
      return Fail(inst, "async", "the chain must wrap one computation throughout");
    }
    if (op == HloOpcode::kAsyncUpdate && !inst.shape().Compatible(prev->shape())) {
      return Fail(inst, "async", "async-update must have the shape of its operand");
    }
    if (op == HloOpcode::kAsyncDone &&
        (!prev->shape().IsTuple() || prev->shape().tuple_shapes_size() < 2 ||
         !inst.shape().Compatible(prev->shape().tuple_shapes(1)))) {
      return Fail(inst, "async", "async-done must have the shape of element 1 of its operand");
    }
  }
  if (op != HloOpcode::kAsyncDone) {
    if (inst.user_count() != 1) {
      return Fail(inst, "async", StrCat("must have exactly one user (an async-update or async-done), has ", inst.user_count()));
    }
    HloOpcode u = inst.users()[0]->opcode();
    if (u != HloOpcode::kAsyncUpdate && u != HloOpcode::kAsyncDone) {
      return Fail(inst, "async", StrCat("its user '", inst.users()[0]->name(), "' is not an async-update or async-done"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPairs(const HloInstruction& inst) {
  auto needs = [&](HloOpcode expected) -> absl::Status {
    if (inst.operand(0)->opcode() != expected) {
      return Fail(inst, "async", StrCat("operand must be a ", HloOpcodeString(expected), ", not '",
                                        inst.operand(0)->name(), "'"));
    }
    return absl::OkStatus();
  };
  switch (inst.opcode()) {
    case HloOpcode::kAllReduceDone: return needs(HloOpcode::kAllReduceStart);
    case HloOpcode::kAllGatherDone: return needs(HloOpcode::kAllGatherStart);
    case HloOpcode::kCollectivePermuteDone: return needs(HloOpcode::kCollectivePermuteStart);
    case HloOpcode::kCopyDone: return needs(HloOpcode::kCopyStart);
    case HloOpcode::kSendDone: return needs(HloOpcode::kSend);
    case HloOpcode::kRecvDone: return needs(HloOpcode::kRecv);
    default: return absl::OkStatus();
  }
}

absl::Status VerifyComputation(const HloComputation& c, const VerifierOptions& options) {
  if (c.root_instruction() == nullptr) return FailComputation(c, "structure", "has no root instruction");
  if (c.root_instruction()->parent() != &c) return FailComputation(c, "structure", "its root belongs to another computation");
  absl::flat_hash_set<std::string> names;
  std::vector<bool> seen_params(c.num_parameters(), false);
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    const HloInstruction* p = c.parameter_instruction(i);
    if (p->parameter_number() != i) {
      return Fail(*p, "structure", StrCat("is parameter ", p->parameter_number(), " but listed at position ", i));
    }
  }
  int64_t parameter_instructions = 0;
  for (const HloInstruction* inst : c.instructions()) {
    if (!names.insert(inst->name()).second) {
      return Fail(*inst, "structure", "its name is used twice in the computation");
    }
    if (inst->opcode() == HloOpcode::kParameter) ++parameter_instructions;
    for (const HloInstruction* op : inst->operands()) {
      if (op->parent() != &c) {
        return Fail(*inst, "structure", StrCat("operand '", op->name(), "' belongs to another computation"));
      }
      if (!inst->IsUserOf(op)) return Fail(*inst, "structure", StrCat("is not in the user list of operand '", op->name(), "'"));
    }
    for (const HloInstruction* user : inst->users()) {
      if (std::find(user->operands().begin(), user->operands().end(), inst) == user->operands().end()) {
        return Fail(*inst, "structure", StrCat("lists '", user->name(), "' as a user but is not its operand"));
      }
    }
  }
  if (parameter_instructions != c.num_parameters()) {
    return FailComputation(c, "structure", "parameter instructions and the parameter list disagree");
  }
  if (static_cast<int64_t>(c.MakeInstructionPostOrder().size()) != c.instruction_count()) {
    return FailComputation(c, "structure", "has a cycle");
  }
  // A cycle still yields a full post order; detect it with a topological check.
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  std::vector<HloInstruction*> order = c.MakeInstructionPostOrder();
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int64_t>(i);
  for (const HloInstruction* inst : order) {
    for (const HloInstruction* op : inst->operands()) {
      if (position[op] >= position[inst]) {
        return Fail(*inst, "structure", StrCat("depends on itself through '", op->name(), "' (a cycle)"));
      }
    }
  }
  for (const HloInstruction* inst : order) {
    int arity = HloOpcodeArity(inst->opcode());
    // A sparse convolution (sparsity_config=) takes its sparsity metadata
    // after the two operands, as XLA allows.
    const bool sparse_convolution =
        inst->opcode() == HloOpcode::kConvolution && inst->operand_count() > arity;
    if (arity != kVariadic && !sparse_convolution && inst->operand_count() != arity) {
      return Fail(*inst, "arity", StrCat("'", HloOpcodeString(inst->opcode()), "' takes ", arity,
                                         " operand(s), not ", inst->operand_count()));
    }
    if (arity == kVariadic && inst->operand_count() == 0) {
      switch (inst->opcode()) {
        case HloOpcode::kTuple: case HloOpcode::kAfterAll: case HloOpcode::kCustomCall:
        case HloOpcode::kCall: case HloOpcode::kFusion: case HloOpcode::kAsyncStart: case HloOpcode::kRng:
          break;
        default:
          return Fail(*inst, "arity", StrCat("'", HloOpcodeString(inst->opcode()), "' needs operands"));
      }
    }
    for (const HloComputation* callee : inst->called_computations()) {
      if (callee == nullptr) return Fail(*inst, "structure", "has a missing called computation");
      if (callee->parent() != c.parent()) {
        return Fail(*inst, "structure", StrCat("calls '", callee->name(), "', which is not in the module"));
      }
    }
    RETURN_IF_ERROR(CheckShapeLayouts(*inst));
    absl::StatusOr<Shape> inferred = InferInstructionShape(*inst);
    if (!inferred.ok()) return Fail(*inst, "shape", std::string(inferred.status().message()));
    bool mixed = options.allow_mixed_precision && MixedPrecisionAllowed(inst->opcode());
    bool compare_layout = options.layout_sensitive && ResultLayoutIsInferred(inst->opcode());
    if (!ShapesAgree(*inferred, inst->shape(), compare_layout, mixed)) {
      return Fail(*inst, "shape", StrCat("inferred ", inferred->ToString(options.layout_sensitive),
                                         " but the instruction has ", inst->shape().ToString(options.layout_sensitive)));
    }
    RETURN_IF_ERROR(CheckAttributes(*inst));
    RETURN_IF_ERROR(CheckAsync(*inst));
    RETURN_IF_ERROR(CheckPairs(*inst));
    if (inst->opcode() == HloOpcode::kFusion) {
      const HloComputation* fused = inst->fused_instructions_computation();
      if (fused->FusionInstruction() != inst) {
        return Fail(*inst, "fusion", StrCat("fused computation '", fused->name(), "' does not point back to it"));
      }
    }
    if (inst->HasSideEffect() && c.IsFusionComputation() && inst->opcode() != HloOpcode::kRng) {
      return Fail(*inst, "fusion", "side-effecting instructions cannot be fused");
    }
    if (options.layout_sensitive && inst->IsElementwise() && inst->opcode() != HloOpcode::kCopy &&
        inst->shape().IsArray() && inst->shape().has_layout()) {
      for (const HloInstruction* op : inst->operands()) {
        if (op->shape().IsArray() && op->shape().rank() == inst->shape().rank() && op->shape().has_layout() &&
            !op->shape().layout().SamePlacement(inst->shape().layout())) {
          return Fail(*inst, "layout", StrCat("operand '", op->name(), "' has layout ", op->shape().layout().ToString(),
                                              " but an elementwise op needs ", inst->shape().layout().ToString()));
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyInstruction(const HloInstruction& inst, const VerifierOptions& options) {
  RETURN_IF_ERROR(CheckShapeLayouts(inst));
  absl::StatusOr<Shape> inferred = InferInstructionShape(inst);
  if (!inferred.ok()) return Fail(inst, "shape", std::string(inferred.status().message()));
  bool mixed = options.allow_mixed_precision && MixedPrecisionAllowed(inst.opcode());
  bool compare_layout = options.layout_sensitive && ResultLayoutIsInferred(inst.opcode());
  if (!ShapesAgree(*inferred, inst.shape(), compare_layout, mixed)) {
    return Fail(inst, "shape", StrCat("inferred ", inferred->ToString(), " but the instruction has ", inst.shape().ToString()));
  }
  RETURN_IF_ERROR(CheckAttributes(inst));
  return CheckAsync(inst);
}

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options) {
  if (module.entry_computation() == nullptr) {
    return absl::InvalidArgumentError(StrCat("verifier: module '", module.name(), "': [structure] has no entry computation"));
  }
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_map<const HloComputation*, int64_t> async_starts;
  for (const HloComputation* c : module.computations()) {
    if (!names.insert(c->name()).second) return FailComputation(*c, "structure", "its name is used twice in the module");
    RETURN_IF_ERROR(VerifyComputation(*c, options));
    for (const HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kAsyncStart) ++async_starts[inst->async_wrapped_computation()];
      if (inst->opcode() == HloOpcode::kFusion && c->IsFusionComputation() == false && inst->fusion_kind() == FusionKind::kCustom &&
          inst->fused_instructions_computation() == nullptr) {
        return Fail(*inst, "fusion", "has no fused computation");
      }
    }
  }
  for (const auto& [computation, count] : async_starts) {
    if (count > 1) {
      return FailComputation(*computation, "async", StrCat("is wrapped by ", count, " async-start instructions (one each)"));
    }
  }
  const HloComputation* entry = module.entry_computation();
  if (module.config().entry_computation_layout.has_value()) {
    const ProgramShape& layout = *module.config().entry_computation_layout;
    if (static_cast<int64_t>(layout.parameters.size()) != entry->num_parameters()) {
      return FailComputation(*entry, "entry", StrCat("entry_computation_layout lists ", layout.parameters.size(),
                                                     " parameters but the entry takes ", entry->num_parameters()));
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      if (!layout.parameters[i].Compatible(entry->parameter_instruction(i)->shape())) {
        return FailComputation(*entry, "entry", StrCat("entry_computation_layout parameter ", i, " is ",
                                                       layout.parameters[i].ToString(false), " but the parameter is ",
                                                       entry->parameter_instruction(i)->shape().ToString(false)));
      }
    }
    if (!layout.result.Compatible(entry->root_instruction()->shape())) {
      return FailComputation(*entry, "entry", StrCat("entry_computation_layout result is ", layout.result.ToString(false),
                                                     " but the entry returns ", entry->root_instruction()->shape().ToString(false)));
    }
  }
  return absl::OkStatus();
}

}  // namespace passlab
