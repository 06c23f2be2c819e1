// Each opcode's attributes, in the order XLA prints them (HloInstruction::
// PrintExtraAttributes and the subclasses' PrintExtraAttributesImpl in
// xla/hlo/ir/hlo_instructions.cc). The plain ones print through their rows
// of the attribute table, the same rows the parser reads them with; which
// are printed when is the row's print_default.
#include "core/text/hlo_printer_internal.h"

#include "core/ir/attribute_append.h"

namespace passlab {
namespace text_internal {

void Printer::OpcodeAttributes(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  auto attr = [&](const AttributeSpec& row) { Attr(row, inst); };
  auto dims = [&] { attr(AttributeRow("dimensions")); };
  auto collective = [&] {
    attr(AttributeRow("channel_id"));
    if (!a.replica_groups.empty() || inst.opcode() != HloOpcode::kCollectivePermute) {
      if (inst.opcode() != HloOpcode::kCollectivePermute &&
          inst.opcode() != HloOpcode::kCollectivePermuteStart) {
        Attr("replica_groups", a.replica_groups.ToString());
      }
    }
    attr(AttributeRow("constrain_layout"));
  };
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast: case HloOpcode::kTranspose: case HloOpcode::kReverse:
    case HloOpcode::kReduce: case HloOpcode::kConcatenate: case HloOpcode::kMap:
    case HloOpcode::kGetDimensionSize: case HloOpcode::kSetDimensionSize:
      if (inst.opcode() == HloOpcode::kMap && inst.dimensions().empty()) break;
      dims();
      break;
    case HloOpcode::kSort:
      dims();
      attr(AttributeRow("is_stable"));
      break;
    case HloOpcode::kSlice: {
      std::vector<std::string> parts;
      for (const SliceDimension& d : a.slice) {
        parts.push_back(d.stride == 1 ? StrCat("[", d.start, ":", d.limit, "]")
                                      : StrCat("[", d.start, ":", d.limit, ":", d.stride, "]"));
      }
      Attr("slice", StrCat("{", Join(parts, ", "), "}"));
      break;
    }
    case HloOpcode::kPad: Attr("padding", a.padding_config.ToString()); break;
    case HloOpcode::kIota: attr(AttributeRow("iota_dimension")); break;
    case HloOpcode::kGetTupleElement: attr(AttributeRow("index", kGetTupleElement)); break;
    case HloOpcode::kCompare:
      attr(AttributeRow("direction"));
      attr(AttributeRow("type", kCompare));
      break;
    case HloOpcode::kDot:
      out_ += ", ";
      out_ += a.dot_dnums.ToString();
      Precision(inst);
      if (!a.sparsity.empty()) {
        std::vector<std::string> parts;
        for (const SparsityDescriptor& s : a.sparsity) {
          parts.push_back(StrCat(s.index == 0 ? "L." : "R.", s.dimension, "@", s.n, ":", s.m));
        }
        Attr("sparsity", Join(parts, "_"));
      }
      break;
    case HloOpcode::kRaggedDot:
      // XLA's RaggedDotDimensionNumbersToString.
      out_ += ", ";
      out_ += a.dot_dnums.ToString();
      attr(AttributeRow("lhs_ragged_dims"));
      attr(AttributeRow("rhs_group_dims"));
      Precision(inst);
      break;
    case HloOpcode::kScaledDot:
      out_ += ", ";
      out_ += a.dot_dnums.ToString();
      Precision(inst);
      break;
    case HloOpcode::kScan:
      dims();
      attr(AttributeRow("num_carries", kScan));
      attr(AttributeRow("is_reverse", kScan));
      attr(AttributeRow("is_associative", kScan));
      break;
    case HloOpcode::kConvolution:
      ConvAttributes(inst);
      break;
    case HloOpcode::kReduceWindow: case HloOpcode::kSelectAndScatter:
      if (a.window.has_value() && !a.window->dimensions.empty()) Attr("window", a.window->ToString());
      break;
    case HloOpcode::kDynamicSlice: attr(AttributeRow("dynamic_slice_sizes")); break;
    case HloOpcode::kGather:
      attr(AttributeRow("offset_dims"));
      attr(AttributeRow("collapsed_slice_dims"));
      attr(AttributeRow("start_index_map"));
      attr(AttributeRow("operand_batching_dims"));
      attr(AttributeRow("start_indices_batching_dims"));
      AttrNumber("index_vector_dim", a.gather_dnums.index_vector_dim);
      attr(AttributeRow("slice_sizes", kGather));
      attr(AttributeRow("indices_are_sorted"));
      break;
    case HloOpcode::kScatter:
      attr(AttributeRow("update_window_dims"));
      attr(AttributeRow("inserted_window_dims"));
      attr(AttributeRow("scatter_dims_to_operand_dims"));
      attr(AttributeRow("input_batching_dims"));
      attr(AttributeRow("scatter_indices_batching_dims"));
      AttrNumber("index_vector_dim", a.scatter_dnums.index_vector_dim);
      attr(AttributeRow("indices_are_sorted"));
      attr(AttributeRow("unique_indices"));
      break;
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      attr(AttributeRow("epsilon"));
      attr(AttributeRow("feature_index"));
      break;
    case HloOpcode::kReducePrecision:
      attr(AttributeRow("exponent_bits"));
      attr(AttributeRow("mantissa_bits"));
      break;
    case HloOpcode::kRng: attr(AttributeRow("distribution")); break;
    case HloOpcode::kRngBitGenerator: attr(AttributeRow("algorithm", kRngBitGenerator)); break;
    case HloOpcode::kFft:
      attr(AttributeRow("fft_type"));
      attr(AttributeRow("fft_length"));
      break;
    case HloOpcode::kTriangularSolve:
      attr(AttributeRow("left_side"));
      attr(AttributeRow("lower", kTriangularSolve));
      attr(AttributeRow("unit_diagonal"));
      attr(AttributeRow("transpose_a"));
      break;
    case HloOpcode::kCholesky: attr(AttributeRow("lower", kCholesky)); break;
    case HloOpcode::kTopK:
      attr(AttributeRow("k"));
      attr(AttributeRow("largest"));
      attr(AttributeRow("is_stable"));
      break;
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kReduceScatter:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll: case HloOpcode::kCollectiveBroadcast:
      collective();
      if (inst.opcode() == HloOpcode::kAllGather || inst.opcode() == HloOpcode::kAllGatherStart ||
          inst.opcode() == HloOpcode::kReduceScatter ||
          (inst.opcode() == HloOpcode::kAllToAll && !inst.dimensions().empty())) {
        dims();
      }
      attr(AttributeRow("use_global_device_ids"));
      break;
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart: {
      collective();
      std::vector<std::string> pairs;
      for (auto [s, t] : a.source_target_pairs) pairs.push_back(StrCat("{", s, ",", t, "}"));
      Attr("source_target_pairs", StrCat("{", Join(pairs, ","), "}"));
      if (!a.dynamic_slice_sizes_list.empty()) {
        std::vector<std::string> parts;
        for (const auto& s : a.dynamic_slice_sizes_list) parts.push_back(BracedInts(s));
        Attr("slice_sizes", StrCat("{", Join(parts, ","), "}"));
      }
      break;
    }
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
      attr(AttributeRow("channel_id"));
      attr(AttributeRow("is_host_transfer"));
      break;
    case HloOpcode::kInfeed:
      attr(AttributeRow("infeed_config"));
      break;
    case HloOpcode::kOutfeed:
      if (a.outfeed_shape.has_value()) Attr("outfeed_shape", a.outfeed_shape->ToString());
      attr(AttributeRow("outfeed_config"));
      break;
    case HloOpcode::kParameter: attr(AttributeRow("parameter_replication")); break;
    case HloOpcode::kCopyStart: attr(AttributeRow("cross_program_prefetch_index")); break;
    case HloOpcode::kDomain:
      Attr("domain", StrCat("{kind=\"", CEscape(a.domain.kind), "\", entry=", a.domain.entry,
                                  ", exit=", a.domain.exit, "}"));
      break;
    case HloOpcode::kFusion:
      attr(AttributeRow("kind", kFusion));
      Aliasing(a);
      break;
    case HloOpcode::kCustomCall:
      CustomCallAttributes(inst);
      break;
    case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
      if (inst.async_execution_thread() != "main") {
        Attr("async_execution_thread", StrCat("\"", CEscape(inst.async_execution_thread()), "\""));
      }
      Aliasing(a);
      break;
    // Opcodes without attributes of their own.
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin:
    case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh:
    case HloOpcode::kMulhi: case HloOpcode::kSinh:
    case HloOpcode::kAbs: case HloOpcode::kAdd: case HloOpcode::kAddDependency:
    case HloOpcode::kAfterAll: case HloOpcode::kAllGatherDone: case HloOpcode::kAllReduceDone:
    case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert: case HloOpcode::kCall: case HloOpcode::kCbrt:
    case HloOpcode::kCeil: case HloOpcode::kClamp: case HloOpcode::kClz:
    case HloOpcode::kCollectivePermuteDone: case HloOpcode::kComplex:
    case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
    case HloOpcode::kCopy: case HloOpcode::kCopyDone: case HloOpcode::kCos:
    case HloOpcode::kDivide: case HloOpcode::kDynamicReshape:
    case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kImag:
    case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kMultiply: case HloOpcode::kNegate: case HloOpcode::kNot:
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kOr: case HloOpcode::kPartitionId:
    case HloOpcode::kPopulationCount: case HloOpcode::kPower: case HloOpcode::kReal:
    case HloOpcode::kRemainder: case HloOpcode::kReplicaId: case HloOpcode::kReshape:
    case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSelect:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSqrt: case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract:
    case HloOpcode::kTan: case HloOpcode::kTanh: case HloOpcode::kTuple: case HloOpcode::kWhile:
    case HloOpcode::kXor:
      break;
  }
}

void Printer::Precision(const HloInstruction& inst) {
  const PrecisionConfig& p = inst.attrs().precision_config;
  bool any = false;
  for (PrecisionLevel l : p.operand_precision) any |= l != PrecisionLevel::kDefault;
  if (any) {
    std::vector<std::string_view> parts;
    for (PrecisionLevel l : p.operand_precision) parts.push_back(PrecisionString(l));
    Attr("operand_precision", StrCat("{", Join(parts, ","), "}"));
  }
  Attr(AttributeRow("algorithm"), inst);
}

void Printer::ConvAttributes(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  if (a.window.has_value() && !a.window->dimensions.empty()) Attr("window", a.window->ToString());
  if (a.conv_dnums.has_value()) Attr("dim_labels", a.conv_dnums->ToString());
  Attr(AttributeRow("feature_group_count"), inst);
  Attr(AttributeRow("batch_group_count"), inst);
  Precision(inst);
}

void Printer::Aliasing(const HloAttributes& a) {
  if (a.output_to_operand_aliasing.empty()) return;
  std::vector<std::string> parts;
  for (const OutputOperandAlias& al : a.output_to_operand_aliasing) {
    parts.push_back(StrCat(ShapeIndexToString(al.output_index), ": (", al.operand, ", ",
                                 ShapeIndexToString(al.operand_index), ")"));
  }
  Attr("output_to_operand_aliasing", StrCat("{", Join(parts, ", "), "}"));
}

void Printer::CustomCallAttributes(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  ConvAttributes(inst);
  Attr(AttributeRow("custom_call_target"), inst);
  if (a.operand_layout_constraints.has_value()) {
    std::vector<std::string> parts;
    for (const Shape& s : *a.operand_layout_constraints) parts.push_back(s.ToString());
    Attr("operand_layout_constraints", StrCat("{", Join(parts, ", "), "}"));
  }
  Attr(AttributeRow("custom_call_has_side_effect"), inst);
  Aliasing(a);
  if (inst.has_literal()) {
    Attr("literal", StrCat(inst.literal().shape().ToString(), " ", inst.literal().ToString()));
  }
  Attr(AttributeRow("schedule"), inst);
  Attr(AttributeRow("padding_type"), inst);
  Attr(AttributeRow("api_version"), inst);
}

void Printer::CalledComputations(const HloInstruction& inst) {
  const auto& called = inst.called_computations();
  if (called.empty()) return;
  auto name = [&](const HloComputation* c) {
    return options_.print_percent ? StrCat("%", c->name()) : c->name();
  };
  switch (inst.opcode()) {
    case HloOpcode::kWhile:
      Attr("condition", name(called[0]));
      Attr("body", name(called[1]));
      return;
    case HloOpcode::kSelectAndScatter:
      Attr("select", name(called[0]));
      Attr("scatter", name(called[1]));
      return;
    case HloOpcode::kConditional: {
      if (inst.operand_count() > 0 &&
          inst.operand(0)->shape().element_type() == PrimitiveType::kPred && called.size() == 2) {
        Attr("true_computation", name(called[0]));
        Attr("false_computation", name(called[1]));
      } else {
        std::vector<std::string> names;
        for (const HloComputation* c : called) names.push_back(name(c));
        Attr("branch_computations", StrCat("{", Join(names, ", "), "}"));
      }
      return;
    }
    case HloOpcode::kFusion: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      Attr("calls", name(called[0]));
      return;
    case HloOpcode::kCustomCall: {
      std::vector<std::string> names;
      for (const HloComputation* c : called) names.push_back(name(c));
      Attr("called_computations", StrCat("{", Join(names, ", "), "}"));
      return;
    }
    default:
      Attr("to_apply", name(called[0]));
      // XLA prints it right after to_apply (HloInstruction::PrintExtraAttributes).
      if (inst.opcode() == HloOpcode::kCall) Attr(AttributeRow("is_composite", kCall), inst);
  }
}

void Printer::GenericAttributes(const HloInstruction& inst) {
  if (inst.has_sharding()) Attr("sharding", inst.sharding().ToString());
  if (!inst.frontend_attributes().map.empty()) {
    Attr("frontend_attributes", inst.frontend_attributes().ToString());
  }
  if (!inst.control_predecessors().empty()) {
    std::vector<std::string> names;
    for (const HloInstruction* p : inst.control_predecessors()) {
      names.push_back(options_.print_percent ? StrCat("%", p->name()) : p->name());
    }
    Attr("control-predecessors", StrCat("{", Join(names, ", "), "}"));
  }
  if (options_.print_metadata && !inst.metadata().empty()) {
    out_ += ", metadata=";
    AppendOpMetadata(out_, inst.metadata());
  }
  if (options_.print_backend_config && !inst.raw_backend_config().empty()) {
    const std::string& bc = inst.raw_backend_config();
    if (IsSingleBalancedGroup(bc)) {
      Attr("backend_config", bc);
    } else {
      Attr("backend_config", StrCat("\"", CEscape(bc), "\""));
    }
  }
  const HloAttributes& a = inst.attrs();
  if (a.statistics.has_value()) Attr("statistics", a.statistics->ToString());
  if (!a.original_value.empty()) Attr("origin", a.original_value);
  for (const auto& [name, value] : a.unknown_attributes) Attr(name, value);
}

}  // namespace text_internal
}  // namespace passlab
