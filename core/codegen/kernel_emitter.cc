// The shared elemental emitter's core (see kernel_emitter.h): what the
// emitter can compile, layout helpers, the kernel's set-up (module, buffers,
// subgraph functions), types, index arithmetic, the element cache, and the
// CPU's entry functions (one loop nest per group of output leaves). The op
// families live in kernel_emitter_*.cc.
#include "core/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/codegen/computation_partitioner.h"
#include "core/codegen/fusion_analysis.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Verifier.h"

namespace passlab {
namespace codegen_internal {

// ---------------------------------------------------------------------------
// What can be compiled.

bool SupportedElementType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

absl::Status CheckArrayShape(const Shape& shape, const HloInstruction& h) {
  if (!shape.IsArray()) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": non-array shape ", shape.ToString()));
  }
  if (!SupportedElementType(shape.element_type())) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": element type ",
                                           PrimitiveTypeName(shape.element_type()), " not supported"));
  }
  if (!shape.is_static()) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": dynamic shape ", shape.ToString()));
  }
  if (shape.has_layout() && !shape.layout().tiles().empty()) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": tiled layout ", shape.ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckShapeLeaves(const Shape& shape, const HloInstruction& h) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      RETURN_IF_ERROR(CheckShapeLeaves(s, h));
    }
    return absl::OkStatus();
  }
  return CheckArrayShape(shape, h);
}

// The number of positions in a window (the product of its sizes).
int64_t WindowPositions(const Window& window) {
  int64_t positions = 1;
  for (const WindowDimension& d : window.dimensions) positions *= d.size;
  return positions;
}

namespace {

bool OneOf(HloOpcode op, std::initializer_list<HloOpcode> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

bool SpeculatableRead(const HloInstruction& h) {
  const HloInstruction* i = &h;
  // A chain of index moves reaches its source within a few steps; a longer
  // one is not worth computing for elements the select throws away.
  for (int depth = 0; depth < 8; ++depth) {
    if (!i->shape().IsArray()) return false;
    if (OneOf(i->opcode(), {HloOpcode::kParameter, HloOpcode::kConstant, HloOpcode::kIota})) return true;
    if (!OneOf(i->opcode(), {HloOpcode::kBroadcast, HloOpcode::kTranspose, HloOpcode::kReshape, HloOpcode::kBitcast,
                             HloOpcode::kSlice, HloOpcode::kReverse, HloOpcode::kCopy, HloOpcode::kConvert}) ||
        i->operand_count() != 1) {
      return false;
    }
    i = i->operand(0);
  }
  return false;
}

bool SpeculatableReducer(const HloComputation& c) {
  for (const HloInstruction* i : c.instructions()) {
    if (!i->shape().IsArray() || i->shape().rank() != 0) return false;
    if (!OneOf(i->opcode(), {HloOpcode::kParameter, HloOpcode::kConstant, HloOpcode::kAdd, HloOpcode::kMultiply,
                             HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kAnd, HloOpcode::kOr,
                             HloOpcode::kCompare, HloOpcode::kSelect})) {
      return false;
    }
  }
  return true;
}

// Opcodes the elemental emitter handles (inside fusions or alone).
bool EmittableOpcode(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs: case HloOpcode::kAdd: case HloOpcode::kScatter: case HloOpcode::kSelectAndScatter: case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormGrad: case HloOpcode::kGather: case HloOpcode::kBatchNormInference: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kBitcast: case HloOpcode::kBitcastConvert: case HloOpcode::kBroadcast:
    case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClamp: case HloOpcode::kClz:
    case HloOpcode::kCompare: case HloOpcode::kConcatenate: case HloOpcode::kConstant: case HloOpcode::kConvolution:
    case HloOpcode::kConvert: case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kDivide:
    case HloOpcode::kDot: case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFloor:
    case HloOpcode::kFusion: case HloOpcode::kGetTupleElement: case HloOpcode::kIota:
    case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kOr: case HloOpcode::kPad: case HloOpcode::kParameter:
    case HloOpcode::kPopulationCount: case HloOpcode::kPower: case HloOpcode::kReal:
    case HloOpcode::kReduce: case HloOpcode::kReduceWindow: case HloOpcode::kRemainder:
    case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSelect:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSlice: case HloOpcode::kSqrt: case HloOpcode::kSubtract: case HloOpcode::kTan:
    case HloOpcode::kTanh: case HloOpcode::kTranspose: case HloOpcode::kTuple: case HloOpcode::kXor:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kMulhi:
      return true;
    case HloOpcode::kAddDependency: case HloOpcode::kAfterAll: case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
    case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:
   
    case HloOpcode::kCall: case HloOpcode::kCholesky: case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kComplex: case HloOpcode::kConditional:
    case HloOpcode::kCopyDone: case HloOpcode::kCopyStart:
    case HloOpcode::kCustomCall: case HloOpcode::kDomain: case HloOpcode::kDynamicReshape:
    case HloOpcode::kFft: case HloOpcode::kGetDimensionSize: case HloOpcode::kImag:
    case HloOpcode::kInfeed: case HloOpcode::kOptimizationBarrier: case HloOpcode::kOutfeed:
    case HloOpcode::kPartitionId: case HloOpcode::kRaggedAllToAll: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter:
    case HloOpcode::kReplicaId: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
    case HloOpcode::kSort: case HloOpcode::kStochasticConvert: case HloOpcode::kTopK:
    case HloOpcode::kTriangularSolve: case HloOpcode::kWhile:
    // Expanded before codegen (RaggedDotRewriter, ScaledDotRewriter, ScanExpander).
    case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
      return false;
  }
  return false;  // not an opcode
}

absl::Status CheckOne(const HloInstruction& h) {
  if (!EmittableOpcode(h.opcode())) {
    return absl::UnimplementedError(
        StrCat("codegen: ", h.name(), ": opcode '", HloOpcodeString(h.opcode()), "' has no CPU emitter"));
  }
  bool batch_norm_kernel = h.opcode() == HloOpcode::kBatchNormTraining ||
                           h.opcode() == HloOpcode::kBatchNormGrad || h.opcode() == HloOpcode::kScatter;
  if (h.opcode() == HloOpcode::kScatter &&
      (h.IsFused() || !IsIntegralType(h.operand(h.operand_count() / 2)->shape().element_type()))) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": scatter is compiled unfused, integer indices"));
  }
  if (h.opcode() == HloOpcode::kSelectAndScatter) {
    // Each source element's window is unrolled (the selection carries its
    // running choice from position to position).
    if (h.IsFused()) {
      return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": select-and-scatter is compiled unfused"));
    }
    if (static_cast<int64_t>(h.window().dimensions.size()) != h.operand(0)->shape().rank()) {
      return absl::InvalidArgumentError(StrCat("codegen: ", h.name(), ": the window's rank is not the operand's"));
    }
    for (const WindowDimension& d : h.window().dimensions) {
      if (d.window_dilation != 1 || d.base_dilation != 1 || d.window_reversal) {
        return absl::UnimplementedError(
            StrCat("codegen: ", h.name(), ": dilated or reversed select-and-scatter window"));
      }
    }
    if (const int64_t positions = WindowPositions(h.window()); positions > kMaxSelectAndScatterWindow) {
      return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": a select-and-scatter window of ", positions,
                                             " positions (the emitter unrolls at most ", kMaxSelectAndScatterWindow,
                                             ")"));
    }
  }
  if (h.opcode() != HloOpcode::kScatter && batch_norm_kernel &&
      (h.IsFused() || !IsFloatingPointType(h.operand(0)->shape().element_type()))) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": ", HloOpcodeString(h.opcode()),
                                           " is compiled unfused and on floats only"));
  }
  if (h.opcode() == HloOpcode::kTuple || h.opcode() == HloOpcode::kGetTupleElement ||
      h.opcode() == HloOpcode::kReduce || h.opcode() == HloOpcode::kFusion || batch_norm_kernel) {
    RETURN_IF_ERROR(CheckShapeLeaves(h.shape(), h));
  } else if (absl::Status s = CheckArrayShape(h.shape(), h); !s.ok()) {
    return s;
  }
  if (h.opcode() == HloOpcode::kBitcastConvert &&
      PrimitiveBitWidth(h.shape().element_type()) != PrimitiveBitWidth(h.operand(0)->shape().element_type())) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": width-changing bitcast-convert"));
  }
  if (h.opcode() == HloOpcode::kDot && !h.attrs().sparsity.empty()) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": sparse dot"));
  }
  if (h.opcode() == HloOpcode::kBatchNormInference && !IsFloatingPointType(h.shape().element_type())) {
    return absl::InvalidArgumentError(StrCat("codegen: ", h.name(), ": batch-norm on non-floats"));
  }
  if (h.opcode() == HloOpcode::kConvolution && !h.attrs().conv_dnums.has_value()) {
    return absl::InvalidArgumentError(StrCat("codegen: ", h.name(), ": convolution without dim_labels"));
  }
  if (h.opcode() == HloOpcode::kReduceWindow && h.operand_count() != 2) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": variadic reduce-window"));
  }
  if (h.opcode() == HloOpcode::kGetTupleElement && h.operand(0)->opcode() != HloOpcode::kReduce) {
    return absl::UnimplementedError(StrCat("codegen: ", h.name(), ": get-tuple-element of a non-reduce"));
  }
  if (h.opcode() == HloOpcode::kFusion) {
    return CheckComputation(*h.fused_instructions_computation());
  }
  for (const HloComputation* called : h.called_computations()) {
    if (called != nullptr && h.opcode() != HloOpcode::kFusion) {
      RETURN_IF_ERROR(CheckComputation(*called));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckComputation(const HloComputation& c) {
  for (const HloInstruction* h : c.MakeInstructionPostOrder()) {
    if (h->opcode() == HloOpcode::kFusion) {
      return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": nested fusion"));
    }
    RETURN_IF_ERROR(CheckOne(*h));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Layout helpers.

// Layout helpers.

std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major().size()) == s.rank()) {
    return s.layout().minor_to_major();
  }
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// Element strides of each logical dimension in the dense physical buffer.
std::vector<int64_t> PhysicalStrides(const Shape& s) {
  std::vector<int64_t> strides(s.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : MinorToMajor(s)) {
    strides[d] = stride;
    stride *= s.dimensions(d);
  }
  return strides;
}

void FlattenLeaves(const HloInstruction* h, std::vector<Leaf>& out) {
  if (h->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : h->operands()) FlattenLeaves(o, out);
    return;
  }
  if (h->shape().IsTuple()) {
    for (int64_t i = 0; i < h->shape().tuple_shapes_size(); ++i) {
      out.push_back({h, i, h->shape().tuple_shapes(i)});
    }
    return;
  }
  out.push_back({h, -1, h->shape()});
}

// Flops of the kernel (elementwise ops, dots, reduces) for KernelRecords.
int64_t CountFlops(const HloInstruction& h) {
  int64_t flops = 0;
  auto count = [&](const HloInstruction* i) {
    if (i->IsElementwise() && i->shape().IsArray()) flops += i->shape().element_count();
    if (i->opcode() == HloOpcode::kDot) {
      int64_t k = 1;
      for (int64_t d : i->attrs().dot_dnums.lhs_contracting_dimensions) k *= i->operand(0)->shape().dimensions(d);
      flops += 2 * k * i->shape().element_count();
    }
    if (i->opcode() == HloOpcode::kReduce) flops += i->operand(0)->shape().element_count();
  };
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) count(i);
  } else {
    count(&h);
  }
  return flops;
}

// ---------------------------------------------------------------------------
// The emitter: set-up, element cache, functions and the CPU's loop nests.

KernelEmitter::KernelEmitter(mlir::MLIRContext* context, const HloInstruction& instruction)
    : context_(context), instruction_(instruction), b_(context), loc_(b_.getUnknownLoc()) {}

KernelEmitter::~KernelEmitter() = default;

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> KernelEmitter::Emit() {
  RETURN_IF_ERROR(Prepare());
  RETURN_IF_ERROR(EmitNests());
  if (scatter_) {
    RETURN_IF_ERROR(EmitScatterUpdates());
  }
  return Finish();
}

absl::Status KernelEmitter::Prepare() {
  module_ = mlir::ModuleOp::create(loc_);
  b_.setInsertionPointToEnd(module_->getBody());
  bool fused = instruction_.opcode() == HloOpcode::kFusion;
  const HloInstruction* root = fused ? instruction_.fused_expression_root() : &instruction_;
  for (int64_t i = 0; i < instruction_.operand_count(); ++i) {
    const HloInstruction* in = fused ? instruction_.fused_parameter(i) : instruction_.operand(i);
    if (!input_buffer_.contains(in)) input_buffer_[in] = i;
    RETURN_IF_ERROR(CheckArrayShape(instruction_.operand(i)->shape(), instruction_));
    buffer_shapes_.push_back(instruction_.operand(i)->shape());
  }
  FlattenLeaves(root, leaves_);
  for (const Leaf& l : leaves_) buffer_shapes_.push_back(l.shape);
  tiled_ = AnalyzeFusion(instruction_).kind == EmitterKind::kTranspose;
  // Select-and-scatter is a scatter kernel too: its first nest fills the
  // output with the init value, its second scatters each source element
  // to the position its window selects.
  select_and_scatter_ = instruction_.opcode() == HloOpcode::kSelectAndScatter;
  scatter_ = instruction_.opcode() == HloOpcode::kScatter || select_and_scatter_;
  batch_norm_ = instruction_.opcode() == HloOpcode::kBatchNormTraining ||
                instruction_.opcode() == HloOpcode::kBatchNormGrad;
  for (const Shape& s : buffer_shapes_) {
    buffer_types_.push_back(mlir::MemRefType::get({s.element_count()}, StorageType(s.element_type())));
  }
  if (fused) {
    std::vector<const HloInstruction*> roots;
    for (const Leaf& l : leaves_) {
      if (std::find(roots.begin(), roots.end(), l.instruction) == roots.end()) roots.push_back(l.instruction);
    }
    partition_ = std::make_unique<PartitionedComputation>(*instruction_.fused_instructions_computation(), roots);
    for (const Subgraph& s : partition_->subgraphs()) {
      RETURN_IF_ERROR(EmitSubgraphFunction(s));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> KernelEmitter::Finish() {
  if (mlir::failed(mlir::verify(*module_))) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module_->print(os);
    return absl::InternalError(StrCat("codegen: emitted MLIR for ", instruction_.name(),
                                      " does not verify:\n", text));
  }
  return std::move(module_);
}

mlir::Type KernelEmitter::StorageType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return b_.getI8Type();
    case PrimitiveType::kF16: return b_.getF16Type();
    case PrimitiveType::kBF16: return b_.getBF16Type();
    case PrimitiveType::kF32: return b_.getF32Type();
    case PrimitiveType::kF64: return b_.getF64Type();
    default: return b_.getIntegerType(PrimitiveBitWidth(t));
  }
}

mlir::Type KernelEmitter::ComputeType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred: return b_.getI1Type();
    case PrimitiveType::kF16: case PrimitiveType::kBF16: return b_.getF32Type();
    default: return StorageType(t);
  }
}

Value KernelEmitter::FromStorage(Value v, PrimitiveType t) {
  if (t == PrimitiveType::kPred) {
    return mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, v,
                                       mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI8Type(), 0));
  }
  if (IsNarrowFloat(t)) return mlir::arith::ExtFOp::create(b_, loc_, b_.getF32Type(), v);
  return v;
}

Value KernelEmitter::ToStorage(Value v, PrimitiveType t) {
  if (t == PrimitiveType::kPred) return mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
  if (IsNarrowFloat(t)) return mlir::arith::TruncFOp::create(b_, loc_, StorageType(t), v);
  return v;
}

Value KernelEmitter::Round(Value v, PrimitiveType t) {
  if (!IsNarrowFloat(t)) return v;
  return mlir::arith::ExtFOp::create(b_, loc_, b_.getF32Type(), ToStorage(v, t));
}

Value KernelEmitter::C(int64_t v) { return mlir::arith::ConstantIndexOp::create(b_, loc_, v); }

std::optional<int64_t> KernelEmitter::ConstOf(Value v) { return mlir::getConstantIntValue(v); }

Value KernelEmitter::Add(Value a, Value x) {
  if (ConstOf(a) == 0) return x;
  if (ConstOf(x) == 0) return a;
  return mlir::arith::AddIOp::create(b_, loc_, a, x);
}

Value KernelEmitter::Sub(Value a, Value x) {
  if (ConstOf(x) == 0) return a;
  return mlir::arith::SubIOp::create(b_, loc_, a, x);
}

Value KernelEmitter::Mul(Value a, int64_t k) {
  if (k == 1) return a;
  if (k == 0) return C(0);
  return mlir::arith::MulIOp::create(b_, loc_, a, C(k));
}

Value KernelEmitter::Div(Value a, int64_t k) { return k == 1 ? a : mlir::arith::DivUIOp::create(b_, loc_, a, C(k)); }

Value KernelEmitter::Rem(Value a, int64_t k) { return k == 1 ? C(0) : mlir::arith::RemUIOp::create(b_, loc_, a, C(k)); }

Value KernelEmitter::Cmp(mlir::arith::CmpIPredicate p, Value a, Value x) {
  return mlir::arith::CmpIOp::create(b_, loc_, p, a, x);
}

Value KernelEmitter::And(Value a, Value x) { return mlir::arith::AndIOp::create(b_, loc_, a, x); }

Value KernelEmitter::Select(Value c, Value t, Value f) { return mlir::arith::SelectOp::create(b_, loc_, c, t, f); }

Value KernelEmitter::Min(Value a, Value x) { return mlir::arith::MinSIOp::create(b_, loc_, a, x); }

Value KernelEmitter::Linearize(const Index& idx, const std::vector<int64_t>& strides) {
  // An index delinearized from a linear offset with the same strides is
  // that offset (keeps consecutive accesses visibly consecutive).
  if (remember_linear_ && !idx.empty()) {
    auto it = linear_of_.find(Key(idx));
    if (it != linear_of_.end() && it->second.first == strides) return it->second.second;
  }
  Value off = C(0);
  for (size_t d = 0; d < idx.size(); ++d) off = Add(off, Mul(idx[d], strides[d]));
  return off;
}

// Logical row-major linear index <-> multi-index.
Index KernelEmitter::Delinearize(Value linear, const std::vector<int64_t>& dims,
                                 const std::vector<int64_t>& order_minor_to_major) {
  Index idx(dims.size());
  Value rest = linear;
  for (size_t i = 0; i < order_minor_to_major.size(); ++i) {
    int64_t d = order_minor_to_major[i];
    bool last = i + 1 == order_minor_to_major.size();
    idx[d] = last ? rest : Rem(rest, dims[d]);
    rest = last ? rest : Div(rest, dims[d]);
  }
  if (remember_linear_ && !idx.empty()) {
    std::vector<int64_t> strides(dims.size(), 1);
    int64_t stride = 1;
    for (int64_t d : order_minor_to_major) {
      strides[d] = stride;
      stride *= dims[d];
    }
    linear_of_[Key(idx)] = {std::move(strides), linear};
  }
  return idx;
}

Index KernelEmitter::RowIndex(const Shape& s, const std::vector<int64_t>& mtm, Value row) {
  Index idx(s.rank());
  Value rest = row;
  for (size_t i = 1; i < mtm.size(); ++i) {
    int64_t d = mtm[i];
    bool last = i + 1 == mtm.size();
    idx[d] = last ? rest : Rem(rest, s.dimensions(d));
    if (!last) rest = Div(rest, s.dimensions(d));
  }
  return idx;
}

Value KernelEmitter::OpenLoop(Value lo, Value hi) {
  auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, C(1));
  b_.setInsertionPointToStart(loop.getBody());
  return loop.getInductionVar();
}

Value KernelEmitter::LoadBuffer(int64_t buffer, const Index& idx) {
  const Shape& s = buffer_shapes_[buffer];
  Value off = Linearize(idx, PhysicalStrides(s));
  Value v = mlir::memref::LoadOp::create(b_, loc_, buffers_[buffer], mlir::ValueRange{off});
  return FromStorage(v, s.element_type());
}

std::vector<void*> KernelEmitter::Key(const Index& idx) {
  std::vector<void*> k;
  for (Value v : idx) k.push_back(v.getAsOpaquePointer());
  return k;
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitElement(const HloInstruction* h, const Index& idx) {
  auto key = std::make_pair(h, Key(idx));
  for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
    auto found = it->find(key);
    if (found != it->end()) return found->second;
  }
  absl::StatusOr<std::vector<Value>> r = EmitUncached(h, idx);
  if (r.ok()) caches_.back()[key] = *r;
  return r;
}

absl::StatusOr<Value> KernelEmitter::EmitScalar(const HloInstruction* h, const Index& idx) {
  ASSIGN_OR_RETURN(std::vector<Value> r, EmitElement(h, idx));
  if (r.size() != 1) return absl::InternalError(StrCat("codegen: ", h->name(), " is not an array"));
  return r[0];
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitUncached(const HloInstruction* h, const Index& idx) {
  if (auto b = bindings_.find(h); b != bindings_.end()) return std::vector<Value>{b->second};
  if (auto in = input_buffer_.find(h); in != input_buffer_.end()) {
    return std::vector<Value>{LoadBuffer(in->second, idx)};
  }
  if (partition_ != nullptr && partition_->IsSubgraphRoot(h) && h != current_root_) {
    const Subgraph* s = partition_->SubgraphOf(h);
    llvm::SmallVector<Value> args(buffers_.begin(), buffers_.end());
    args.append(idx.begin(), idx.end());
    auto call = mlir::func::CallOp::create(b_, loc_, s->name, ResultTypes(h), args);
    return std::vector<Value>(call.getResults().begin(), call.getResults().end());
  }
  return EmitOp(h, idx);
}

llvm::SmallVector<mlir::Type> KernelEmitter::ResultTypes(const HloInstruction* h) {
  llvm::SmallVector<mlir::Type> types;
  if (h->shape().IsTuple()) {
    for (const Shape& s : h->shape().tuple_shapes()) types.push_back(ComputeType(s.element_type()));
  } else {
    types.push_back(ComputeType(h->shape().element_type()));
  }
  return types;
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitComputation(const HloComputation* c, llvm::ArrayRef<Value> args) {
  std::vector<Cache> saved_caches;
  saved_caches.swap(caches_);
  caches_.emplace_back();
  auto saved_bindings = bindings_;
  for (int64_t i = 0; i < c->num_parameters(); ++i) bindings_[c->parameter_instruction(i)] = args[i];
  const HloInstruction* root = c->root_instruction();
  std::vector<Value> out;
  absl::Status status = absl::OkStatus();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : root->operands()) {
      absl::StatusOr<Value> v = EmitScalar(o, {});
      if (!v.ok()) { status = v.status(); break; }
      out.push_back(*v);
    }
  } else {
    absl::StatusOr<Value> v = EmitScalar(root, {});
    if (v.ok()) out.push_back(*v); else status = v.status();
  }
  bindings_ = std::move(saved_bindings);
  caches_.swap(saved_caches);
  if (!status.ok()) return status;
  return out;
}

mlir::FloatType KernelEmitter::FloatTy(Value v) { return llvm::cast<mlir::FloatType>(v.getType()); }

Value KernelEmitter::FConst(mlir::Type t, double v) {
  return mlir::arith::ConstantOp::create(b_, loc_, t, b_.getFloatAttr(t, v));
}

Value KernelEmitter::IConst(mlir::Type t, int64_t v) {
  return mlir::arith::ConstantOp::create(b_, loc_, t, b_.getIntegerAttr(t, v));
}

absl::StatusOr<Value> KernelEmitter::EmitIf(Value cond, mlir::Type type,
                                            const std::function<absl::StatusOr<Value>()>& then_fn,
                                            const std::function<absl::StatusOr<Value>()>& else_fn) {
  auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{type}, cond, /*withElseRegion=*/true);
  mlir::OpBuilder::InsertionGuard guard(b_);
  for (int branch = 0; branch < 2; ++branch) {
    b_.setInsertionPointToStart(branch == 0 ? if_op.thenBlock() : if_op.elseBlock());
    caches_.emplace_back();
    absl::StatusOr<Value> v = branch == 0 ? then_fn() : else_fn();
    caches_.pop_back();
    if (!v.ok()) return v.status();
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange{*v});
  }
  return if_op.getResult(0);
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitLoopNest(
    const std::vector<int64_t>& bounds, std::vector<Value> init,
    const std::function<absl::StatusOr<std::vector<Value>>(const Index&, const std::vector<Value>&)>& body) {
  Index ivs;
  std::function<absl::StatusOr<std::vector<Value>>(size_t, std::vector<Value>)> nest =
      [&](size_t level, std::vector<Value> carried) -> absl::StatusOr<std::vector<Value>> {
    if (level == bounds.size()) return body(ivs, carried);
    auto loop = mlir::scf::ForOp::create(b_, loc_, C(0), C(bounds[level]), C(1), carried);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    caches_.emplace_back();
    ivs.push_back(loop.getInductionVar());
    std::vector<Value> inner(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    absl::StatusOr<std::vector<Value>> r = nest(level + 1, inner);
    ivs.pop_back();
    caches_.pop_back();
    if (!r.ok()) return r.status();
    // A loop without carried values already ends in an implicit yield.
    if (!carried.empty()) mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange(*r));
    return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
  };
  return nest(0, std::move(init));
}

absl::Status KernelEmitter::EmitSubgraphFunction(const Subgraph& s) {
  llvm::SmallVector<mlir::Type> args(buffer_types_.begin(), buffer_types_.end());
  int64_t rank = s.root->shape().IsTuple() ? s.root->shape().tuple_shapes(0).rank() : s.root->shape().rank();
  for (int64_t i = 0; i < rank; ++i) args.push_back(b_.getIndexType());
  auto type = b_.getFunctionType(args, ResultTypes(s.root));
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToEnd(module_->getBody());
  auto func = mlir::func::FuncOp::create(b_, loc_, s.name, type);
  func.setPrivate();
  mlir::Block* entry = func.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  buffers_.assign(entry->args_begin(), entry->args_begin() + buffer_types_.size());
  Index idx(entry->args_begin() + buffer_types_.size(), entry->args_end());
  caches_.clear();
  caches_.emplace_back();
  current_root_ = s.root;
  absl::StatusOr<std::vector<Value>> r = EmitElement(s.root, idx);
  current_root_ = nullptr;
  if (!r.ok()) return r.status();
  mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange(*r));
  return absl::OkStatus();
}

absl::Status KernelEmitter::EmitStores(const std::vector<int64_t>& group, const Index& idx, Value out_offset) {
  int64_t num_inputs = instruction_.operand_count();
  caches_.clear();
  caches_.emplace_back();
  batch_norm_stats_.clear();
  for (int64_t leaf_id : group) {
    const Leaf& leaf = leaves_[leaf_id];
    if (scatter_) {
      // The scatter kernel's first nest copies each operand to its output;
      // select-and-scatter's fills it with the init value (operand 2).
      Value v = select_and_scatter_ ? LoadBuffer(2, Index{})
                                    : LoadBuffer(leaf.tuple_index < 0 ? 0 : leaf.tuple_index, idx);
      mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, leaf.shape.element_type()),
                                    buffers_[num_inputs + leaf_id], mlir::ValueRange{out_offset});
      continue;
    }
    if (batch_norm_) {
      ASSIGN_OR_RETURN(Value v, EmitBatchNormLeaf(leaf.instruction, leaf.tuple_index, idx));
      mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, leaf.shape.element_type()),
                                    buffers_[num_inputs + leaf_id], mlir::ValueRange{out_offset});
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<Value> r, EmitElement(leaf.instruction, idx));
    Value v = r[leaf.tuple_index < 0 ? 0 : leaf.tuple_index];
    mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, leaf.shape.element_type()),
                                  buffers_[num_inputs + leaf_id], mlir::ValueRange{out_offset});
  }
  return absl::OkStatus();
}

std::vector<std::vector<int64_t>> KernelEmitter::LeafGroups(const std::vector<int64_t>& order) const {
  std::vector<std::vector<int64_t>> groups;
  for (int64_t i : order) {
    bool placed = false;
    for (auto& g : groups) {
      const Shape& s = leaves_[g[0]].shape;
      if (s.dimensions() == leaves_[i].shape.dimensions() && MinorToMajor(s) == MinorToMajor(leaves_[i].shape)) {
        g.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({i});
  }
  return groups;
}

absl::Status KernelEmitter::EmitNests() {
  // Group leaves by dims and layout: each group is one loop nest.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < static_cast<int64_t>(leaves_.size()); ++i) order.push_back(i);
  // Batch norm: the statistics (leaves 1, 2) are computed before output 0
  // reads them.
  if (batch_norm_) order = {1, 2, 0};
  std::vector<std::vector<int64_t>> groups = LeafGroups(order);
  for (size_t g = 0; g < groups.size(); ++g) {
    const Shape& s = leaves_[groups[g][0]].shape;
    std::vector<int64_t> mtm = MinorToMajor(s);
    LoopNest nest;
    nest.function = StrCat("kernel_", g);
    nest.leaf_ids = groups[g];
    nest.elements = s.element_count();
    int64_t minor = s.rank() == 0 ? 1 : s.dimensions(mtm[0]);
    int64_t rows = minor == 0 ? 0 : nest.elements / minor;
    llvm::SmallVector<mlir::Type> args(buffer_types_.begin(), buffer_types_.end());
    args.push_back(b_.getIndexType());
    args.push_back(b_.getIndexType());
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(module_->getBody());
    auto func = mlir::func::FuncOp::create(b_, loc_, nest.function, b_.getFunctionType(args, {}));
    mlir::Block* entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    buffers_.assign(entry->args_begin(), entry->args_begin() + buffer_types_.size());
    Value begin = entry->getArgument(buffer_types_.size());
    Value end = entry->getArgument(buffer_types_.size() + 1);
    absl::Status status = absl::OkStatus();
    if (tiled_ && s.rank() >= 2 && rows > 1) {
      status = EmitTransposeNest(groups[g], s, mtm, rows, minor, begin, end, nest);
    } else if (IsColumnReductionGroup(groups[g], mtm)) {
      status = EmitColumnReductionNest(groups[g], s, mtm, rows, minor, begin, end, nest);
    } else {
      nest.inner = minor;
      nest.rows = rows;
      // A single long row is split into chunks so it can run in parallel.
      bool chunked = rows == 1 && minor > 8192;
      if (chunked) {
        nest.inner = 4096;
        nest.rows = (minor + 4095) / 4096;
      }
      Value row = OpenLoop(begin, end);
      Index idx = RowIndex(s, mtm, row);
      Value row_base = Mul(row, nest.inner);
      // Bounds check of the last chunk.
      Value inner_bound = chunked ? Min(C(nest.inner), Sub(C(minor), row_base)) : C(nest.inner);
      Value j = OpenLoop(C(0), inner_bound);
      if (s.rank() > 0) idx[mtm[0]] = chunked ? Add(row_base, j) : j;
      status = EmitStores(groups[g], idx, Add(row_base, j));
    }
    if (!status.ok()) return status;
    b_.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(b_, loc_);
    nests_.push_back(nest);
  }
  return absl::OkStatus();
}

}  // namespace codegen_internal
}  // namespace passlab
