// Internal to core/codegen (never include it outside): the elemental
// emitter shared by the CPU and the GPU code generators — what can be
// compiled, layout helpers, the KernelEmitter (buffers, subgraph functions,
// elemental emission of every HLO op; the CPU's loop nests) and the emitter
// pipeline passes both targets use. Including it costs an MLIR-heavy TU.
#ifndef PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_
#define PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/codegen/computation_partitioner.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/fusion_analysis.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace passlab {
namespace codegen_internal {

using mlir::Value;
using Index = llvm::SmallVector<Value, 6>;

// ---------------------------------------------------------------------------
// What can be compiled.

inline bool SupportedElementType(PrimitiveType t) {
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

inline absl::Status CheckArrayShape(const Shape& shape, const HloInstruction& h) {
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

inline absl::Status CheckShapeLeaves(const Shape& shape, const HloInstruction& h) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (absl::Status st = CheckShapeLeaves(s, h); !st.ok()) return st;
    }
    return absl::OkStatus();
  }
  return CheckArrayShape(shape, h);
}

// The largest select-and-scatter window the emitter unrolls.
inline constexpr int64_t kMaxSelectAndScatterWindow = 256;

// The number of positions in a window (the product of its sizes).
inline int64_t WindowPositions(const Window& window) {
  int64_t positions = 1;
  for (const WindowDimension& d : window.dimensions) positions *= d.size;
  return positions;
}

// Opcodes the elemental emitter handles (inside fusions or alone).
inline bool EmittableOpcode(HloOpcode op) {
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

inline absl::Status CheckComputation(const HloComputation& c);

inline absl::Status CheckOne(const HloInstruction& h) {
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
    if (absl::Status s = CheckShapeLeaves(h.shape(), h); !s.ok()) return s;
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
      if (absl::Status s = CheckComputation(*called); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

inline absl::Status CheckComputation(const HloComputation& c) {
  for (const HloInstruction* h : c.MakeInstructionPostOrder()) {
    if (h->opcode() == HloOpcode::kFusion) {
      return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": nested fusion"));
    }
    if (absl::Status s = CheckOne(*h); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Layout helpers.

inline std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major().size()) == s.rank()) {
    return s.layout().minor_to_major();
  }
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// Element strides of each logical dimension in the dense physical buffer.
inline std::vector<int64_t> PhysicalStrides(const Shape& s) {
  std::vector<int64_t> strides(s.rank(), 1);
  int64_t stride = 1;
  for (int64_t d : MinorToMajor(s)) {
    strides[d] = stride;
    stride *= s.dimensions(d);
  }
  return strides;
}

struct Leaf {
  const HloInstruction* instruction;
  int64_t tuple_index;  // -1: the instruction's array result
  Shape shape;
};

inline void FlattenLeaves(const HloInstruction* h, std::vector<Leaf>& out) {
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

// One output loop nest: its entry function and the output leaves it writes.
struct LoopNest {
  std::string function;
  std::vector<int64_t> leaf_ids;
  int64_t rows = 1;       // product of the non-minor physical dims (or chunks)
  int64_t inner = 1;      // minor dim (or chunk size)
  int64_t elements = 0;
};

// ---------------------------------------------------------------------------
// The emitter: builds one MLIR module for one kernel.

class KernelEmitter {
 public:
  KernelEmitter(mlir::MLIRContext* context, const HloInstruction& instruction)
      : context_(context), instruction_(instruction), b_(context), loc_(b_.getUnknownLoc()) {}

  virtual ~KernelEmitter() = default;

  // The CPU kernel: subgraph functions and one `(buffers..., begin, end)`
  // entry function per loop nest.
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Emit() {
    if (absl::Status s = Prepare(); !s.ok()) return s;
    if (absl::Status s = EmitNests(); !s.ok()) return s;
    if (scatter_) {
      if (absl::Status s = EmitScatterUpdates(); !s.ok()) return s;
    }
    return Finish();
  }

  const std::vector<LoopNest>& nests() const { return nests_; }
  const std::vector<Shape>& buffer_shapes() const { return buffer_shapes_; }

 protected:
  // Creates the module, the buffer types, the output leaves and the subgraph
  // functions (shared by the CPU and GPU entry functions).
  absl::Status Prepare() {
    module_ = mlir::ModuleOp::create(loc_);
    b_.setInsertionPointToEnd(module_->getBody());
    bool fused = instruction_.opcode() == HloOpcode::kFusion;
    const HloInstruction* root = fused ? instruction_.fused_expression_root() : &instruction_;
    for (int64_t i = 0; i < instruction_.operand_count(); ++i) {
      const HloInstruction* in = fused ? instruction_.fused_parameter(i) : instruction_.operand(i);
      if (!input_buffer_.contains(in)) input_buffer_[in] = i;
      if (absl::Status s = CheckArrayShape(instruction_.operand(i)->shape(), instruction_); !s.ok()) return s;
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
        if (absl::Status st = EmitSubgraphFunction(s); !st.ok()) return st;
      }
    }
    return absl::OkStatus();
  }

  // The emitted module, verified.
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Finish() {
    if (mlir::failed(mlir::verify(*module_))) {
      std::string text;
      llvm::raw_string_ostream os(text);
      module_->print(os);
      return absl::InternalError(StrCat("codegen: emitted MLIR for ", instruction_.name(),
                                        " does not verify:\n", text));
    }
    return std::move(module_);
  }

  // --- types -------------------------------------------------------------
  mlir::Type StorageType(PrimitiveType t) {
    switch (t) {
      case PrimitiveType::kPred: return b_.getI8Type();
      case PrimitiveType::kF16: return b_.getF16Type();
      case PrimitiveType::kBF16: return b_.getBF16Type();
      case PrimitiveType::kF32: return b_.getF32Type();
      case PrimitiveType::kF64: return b_.getF64Type();
      default: return b_.getIntegerType(PrimitiveBitWidth(t));
    }
  }
  // The type values have while computing: pred is i1, f16/bf16 are f32.
  mlir::Type ComputeType(PrimitiveType t) {
    switch (t) {
      case PrimitiveType::kPred: return b_.getI1Type();
      case PrimitiveType::kF16: case PrimitiveType::kBF16: return b_.getF32Type();
      default: return StorageType(t);
    }
  }
  static bool IsNarrowFloat(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }

  Value FromStorage(Value v, PrimitiveType t) {
    if (t == PrimitiveType::kPred) {
      return mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, v,
                                         mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI8Type(), 0));
    }
    if (IsNarrowFloat(t)) return mlir::arith::ExtFOp::create(b_, loc_, b_.getF32Type(), v);
    return v;
  }
  Value ToStorage(Value v, PrimitiveType t) {
    if (t == PrimitiveType::kPred) return mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
    if (IsNarrowFloat(t)) return mlir::arith::TruncFOp::create(b_, loc_, StorageType(t), v);
    return v;
  }
  // Rounds an f32 value to f16/bf16 precision (every op of a narrow type
  // rounds its result, as the evaluator does).
  Value Round(Value v, PrimitiveType t) {
    if (!IsNarrowFloat(t)) return v;
    return mlir::arith::ExtFOp::create(b_, loc_, b_.getF32Type(), ToStorage(v, t));
  }

  // --- index arithmetic ----------------------------------------------------
  Value C(int64_t v) { return mlir::arith::ConstantIndexOp::create(b_, loc_, v); }
  static std::optional<int64_t> ConstOf(Value v) { return mlir::getConstantIntValue(v); }
  Value Add(Value a, Value x) {
    if (ConstOf(a) == 0) return x;
    if (ConstOf(x) == 0) return a;
    return mlir::arith::AddIOp::create(b_, loc_, a, x);
  }
  Value Sub(Value a, Value x) {
    if (ConstOf(x) == 0) return a;
    return mlir::arith::SubIOp::create(b_, loc_, a, x);
  }
  Value Mul(Value a, int64_t k) {
    if (k == 1) return a;
    if (k == 0) return C(0);
    return mlir::arith::MulIOp::create(b_, loc_, a, C(k));
  }
  Value Div(Value a, int64_t k) { return k == 1 ? a : mlir::arith::DivUIOp::create(b_, loc_, a, C(k)); }
  Value Rem(Value a, int64_t k) { return k == 1 ? C(0) : mlir::arith::RemUIOp::create(b_, loc_, a, C(k)); }
  Value Cmp(mlir::arith::CmpIPredicate p, Value a, Value x) {
    return mlir::arith::CmpIOp::create(b_, loc_, p, a, x);
  }
  Value And(Value a, Value x) { return mlir::arith::AndIOp::create(b_, loc_, a, x); }
  Value Select(Value c, Value t, Value f) { return mlir::arith::SelectOp::create(b_, loc_, c, t, f); }

  Value Linearize(const Index& idx, const std::vector<int64_t>& strides) {
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
  Index Delinearize(Value linear, const std::vector<int64_t>& dims, const std::vector<int64_t>& order_minor_to_major) {
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

  // --- buffers ---------------------------------------------------------------
  Value LoadBuffer(int64_t buffer, const Index& idx) {
    const Shape& s = buffer_shapes_[buffer];
    Value off = Linearize(idx, PhysicalStrides(s));
    Value v = mlir::memref::LoadOp::create(b_, loc_, buffers_[buffer], mlir::ValueRange{off});
    return FromStorage(v, s.element_type());
  }

  // --- elemental emission ------------------------------------------------------
  using Cache = std::map<std::pair<const HloInstruction*, std::vector<void*>>, std::vector<Value>>;

  std::vector<void*> Key(const Index& idx) {
    std::vector<void*> k;
    for (Value v : idx) k.push_back(v.getAsOpaquePointer());
    return k;
  }

  absl::StatusOr<std::vector<Value>> EmitElement(const HloInstruction* h, const Index& idx) {
    auto key = std::make_pair(h, Key(idx));
    for (auto it = caches_.rbegin(); it != caches_.rend(); ++it) {
      auto found = it->find(key);
      if (found != it->end()) return found->second;
    }
    absl::StatusOr<std::vector<Value>> r = EmitUncached(h, idx);
    if (r.ok()) caches_.back()[key] = *r;
    return r;
  }

  absl::StatusOr<Value> EmitScalar(const HloInstruction* h, const Index& idx) {
    absl::StatusOr<std::vector<Value>> r = EmitElement(h, idx);
    if (!r.ok()) return r.status();
    if (r->size() != 1) return absl::InternalError(StrCat("codegen: ", h->name(), " is not an array"));
    return (*r)[0];
  }

  absl::StatusOr<std::vector<Value>> EmitUncached(const HloInstruction* h, const Index& idx) {
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

  llvm::SmallVector<mlir::Type> ResultTypes(const HloInstruction* h) {
    llvm::SmallVector<mlir::Type> types;
    if (h->shape().IsTuple()) {
      for (const Shape& s : h->shape().tuple_shapes()) types.push_back(ComputeType(s.element_type()));
    } else {
      types.push_back(ComputeType(h->shape().element_type()));
    }
    return types;
  }

  // Emits a scalar computation (reducer, map function) on given values, with
  // its own cache (its instructions are emitted once per call site).
  absl::StatusOr<std::vector<Value>> EmitComputation(const HloComputation* c, llvm::ArrayRef<Value> args) {
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

  mlir::FloatType FloatTy(Value v) { return llvm::cast<mlir::FloatType>(v.getType()); }
  Value FConst(mlir::Type t, double v) {
    return mlir::arith::ConstantOp::create(b_, loc_, t, b_.getFloatAttr(t, v));
  }
  Value IConst(mlir::Type t, int64_t v) {
    return mlir::arith::ConstantOp::create(b_, loc_, t, b_.getIntegerAttr(t, v));
  }

  absl::StatusOr<Value> Convert(Value v, PrimitiveType from, PrimitiveType to) {
    namespace arith = mlir::arith;
    if (from == to) return v;
    mlir::Type tt = ComputeType(to);
    bool ffloat = IsFloatingPointType(from), tfloat = IsFloatingPointType(to);
    if (to == PrimitiveType::kPred) {
      if (ffloat) return Value(arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::UNE, v, FConst(v.getType(), 0)));
      return Cmp(arith::CmpIPredicate::ne, v, IConst(v.getType(), 0));
    }
    if (from == PrimitiveType::kPred) {
      if (tfloat) return Round(arith::UIToFPOp::create(b_, loc_, tt, v), to);
      return Value(arith::ExtUIOp::create(b_, loc_, tt, v));
    }
    if (!ffloat && !tfloat) {
      int fw = PrimitiveBitWidth(from), tw = PrimitiveBitWidth(to);
      if (fw == tw) return v;
      if (fw > tw) return Value(arith::TruncIOp::create(b_, loc_, tt, v));
      if (IsSignedIntegralType(from)) return Value(arith::ExtSIOp::create(b_, loc_, tt, v));
      return Value(arith::ExtUIOp::create(b_, loc_, tt, v));
    }
    if (!ffloat && tfloat) {
      Value r = IsSignedIntegralType(from) ? Value(arith::SIToFPOp::create(b_, loc_, tt, v))
                                           : Value(arith::UIToFPOp::create(b_, loc_, tt, v));
      return Round(r, to);
    }
    if (ffloat && tfloat) {
      mlir::Type ft = v.getType();
      Value r = v;
      if (FloatTy(r).getWidth() < llvm::cast<mlir::FloatType>(tt).getWidth()) {
        r = arith::ExtFOp::create(b_, loc_, tt, r);
      } else if (FloatTy(r).getWidth() > llvm::cast<mlir::FloatType>(tt).getWidth()) {
        r = arith::TruncFOp::create(b_, loc_, tt, r);
      }
      (void)ft;
      return Round(r, to);
    }
    // Float -> int: NaN -> 0, saturating at the type's range.
    int w = PrimitiveBitWidth(to);
    mlir::Type ft = v.getType();
    Value is_nan = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::UNO, v, v);
    Value zero = IConst(tt, 0);
    if (IsSignedIntegralType(to)) {
      double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1);
      Value conv = arith::FPToSIOp::create(b_, loc_, tt, v);
      Value min = IConst(tt, w == 64 ? std::numeric_limits<int64_t>::min() : static_cast<int64_t>(lo));
      Value max = IConst(tt, w == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(hi) - 1);
      Value le = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLE, v, FConst(ft, lo));
      Value ge = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGE, v, FConst(ft, hi));
      return Select(is_nan, zero, Select(le, min, Select(ge, max, conv)));
    }
    double hi = std::ldexp(1.0, w);
    Value conv = arith::FPToUIOp::create(b_, loc_, tt, v);
    Value le = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLE, v, FConst(ft, 0));
    Value ge = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGE, v, FConst(ft, hi));
    return Select(is_nan, zero, Select(le, zero, Select(ge, IConst(tt, -1), conv)));
  }

  Value CompareValues(Value x, Value y, PrimitiveType t, ComparisonDirection dir, ComparisonType ctype) {
    namespace arith = mlir::arith;
    if (ctype == ComparisonType::kDefault) ctype = DefaultComparisonType(t);
    if (IsFloatingPointType(t) && ctype == ComparisonType::kTotalOrder) {
      int w = FloatTy(x).getWidth();
      mlir::Type it = b_.getIntegerType(w);
      auto key = [&](Value v) {
        Value bits = arith::BitcastOp::create(b_, loc_, it, v);
        Value neg = Cmp(arith::CmpIPredicate::slt, bits, IConst(it, 0));
        Value flipped = arith::XOrIOp::create(b_, loc_, bits, IConst(it, w == 64 ? std::numeric_limits<int64_t>::max()
                                                                                  : (int64_t{1} << (w - 1)) - 1));
        return Select(neg, flipped, bits);
      };
      x = key(x);
      y = key(y);
      ctype = ComparisonType::kSigned;
    } else if (IsFloatingPointType(t)) {
      arith::CmpFPredicate p = arith::CmpFPredicate::OEQ;
      switch (dir) {
        case ComparisonDirection::kEq: p = arith::CmpFPredicate::OEQ; break;
        case ComparisonDirection::kNe: p = arith::CmpFPredicate::UNE; break;
        case ComparisonDirection::kLt: p = arith::CmpFPredicate::OLT; break;
        case ComparisonDirection::kLe: p = arith::CmpFPredicate::OLE; break;
        case ComparisonDirection::kGt: p = arith::CmpFPredicate::OGT; break;
        case ComparisonDirection::kGe: p = arith::CmpFPredicate::OGE; break;
      }
      return arith::CmpFOp::create(b_, loc_, p, x, y);
    }
    bool is_signed = ctype == ComparisonType::kSigned ||
                     (ctype != ComparisonType::kUnsigned && IsSignedIntegralType(t));
    arith::CmpIPredicate p = arith::CmpIPredicate::eq;
    switch (dir) {
      case ComparisonDirection::kEq: p = arith::CmpIPredicate::eq; break;
      case ComparisonDirection::kNe: p = arith::CmpIPredicate::ne; break;
      case ComparisonDirection::kLt: p = is_signed ? arith::CmpIPredicate::slt : arith::CmpIPredicate::ult; break;
      case ComparisonDirection::kLe: p = is_signed ? arith::CmpIPredicate::sle : arith::CmpIPredicate::ule; break;
      case ComparisonDirection::kGt: p = is_signed ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt; break;
      case ComparisonDirection::kGe: p = is_signed ? arith::CmpIPredicate::sge : arith::CmpIPredicate::uge; break;
    }
    return Cmp(p, x, y);
  }

  absl::StatusOr<Value> Binary(HloOpcode op, Value x, Value y, PrimitiveType t, const HloInstruction* h) {
    namespace arith = mlir::arith;
    namespace math = mlir::math;
    if (IsFloatingPointType(t)) {
      Value r;
      switch (op) {
        case HloOpcode::kAdd: r = arith::AddFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kSubtract: r = arith::SubFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kMultiply: r = arith::MulFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kDivide: r = arith::DivFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kRemainder: r = arith::RemFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kPower: r = math::PowFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kAtan2: r = math::Atan2Op::create(b_, loc_, x, y); break;
        case HloOpcode::kMaximum: r = arith::MaximumFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kMinimum: r = arith::MinimumFOp::create(b_, loc_, x, y); break;
        case HloOpcode::kAbs: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
        case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
        case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
        case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kBatchNormGrad:
        case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast:
        case HloOpcode::kBitcastConvert: case HloOpcode::kBroadcast: case HloOpcode::kCall:
        case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kCholesky: case HloOpcode::kClamp:
        case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
        case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
        case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
        case HloOpcode::kCopyStart: case HloOpcode::kCos: case HloOpcode::kCustomCall:
        case HloOpcode::kDomain: case HloOpcode::kDot: case HloOpcode::kDynamicReshape:
        case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf:
        case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFft: case HloOpcode::kFloor:
        case HloOpcode::kFusion: case HloOpcode::kGather: case HloOpcode::kGetDimensionSize:
        case HloOpcode::kGetTupleElement: case HloOpcode::kImag: case HloOpcode::kInfeed:
        case HloOpcode::kIota: case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p:
        case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kNegate: case HloOpcode::kNot:
        case HloOpcode::kOptimizationBarrier: case HloOpcode::kOr: case HloOpcode::kOutfeed:
        case HloOpcode::kPad: case HloOpcode::kParameter: case HloOpcode::kPartitionId:
        case HloOpcode::kPopulationCount: case HloOpcode::kRaggedAllToAll: case HloOpcode::kReal:
        case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
        case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
        case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
        case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
        case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
        case HloOpcode::kScatter: case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter:
        case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
        case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
        case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin:
        case HloOpcode::kSlice: case HloOpcode::kSort: case HloOpcode::kSqrt:
        case HloOpcode::kStochasticConvert: case HloOpcode::kTan: case HloOpcode::kTanh:
        case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
        case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
        case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
          return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on floats"));
      }
      if (reassociate_ && r.getDefiningOp() != nullptr && r.getDefiningOp()->hasAttr("fastmath")) {
        r.getDefiningOp()->setAttr("fastmath", mlir::arith::FastMathFlagsAttr::get(
                                                   context_, mlir::arith::FastMathFlags::reassoc));
      }
      return Round(r, t);
    }
    mlir::Type it = x.getType();
    int w = it.getIntOrFloatBitWidth();
    bool is_signed = IsSignedIntegralType(t);
    Value zero = IConst(it, 0);
    switch (op) {
      case HloOpcode::kAdd: return Value(arith::AddIOp::create(b_, loc_, x, y));
      case HloOpcode::kSubtract: return Value(arith::SubIOp::create(b_, loc_, x, y));
      case HloOpcode::kMultiply: return Value(arith::MulIOp::create(b_, loc_, x, y));
      // The high half of the double-width product (XLA's mulhi).
      case HloOpcode::kMulhi:
        return is_signed ? Value(arith::MulSIExtendedOp::create(b_, loc_, x, y).getHigh())
                         : Value(arith::MulUIExtendedOp::create(b_, loc_, x, y).getHigh());
      case HloOpcode::kAnd: return Value(arith::AndIOp::create(b_, loc_, x, y));
      case HloOpcode::kOr: return Value(arith::OrIOp::create(b_, loc_, x, y));
      case HloOpcode::kXor: return Value(arith::XOrIOp::create(b_, loc_, x, y));
      case HloOpcode::kMaximum:
        return is_signed ? Value(arith::MaxSIOp::create(b_, loc_, x, y)) : Value(arith::MaxUIOp::create(b_, loc_, x, y));
      case HloOpcode::kMinimum:
        return is_signed ? Value(arith::MinSIOp::create(b_, loc_, x, y)) : Value(arith::MinUIOp::create(b_, loc_, x, y));
      case HloOpcode::kDivide:
      case HloOpcode::kRemainder: {
        Value y_zero = Cmp(arith::CmpIPredicate::eq, y, zero);
        if (!is_signed) {
          Value safe = Select(y_zero, IConst(it, 1), y);
          if (op == HloOpcode::kDivide) {
            return Select(y_zero, IConst(it, -1), arith::DivUIOp::create(b_, loc_, x, safe));
          }
          return Select(y_zero, x, arith::RemUIOp::create(b_, loc_, x, safe));
        }
        Value min = IConst(it, w == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (w - 1)));
        Value overflow = And(Cmp(arith::CmpIPredicate::eq, x, min), Cmp(arith::CmpIPredicate::eq, y, IConst(it, -1)));
        Value safe = Select(mlir::arith::OrIOp::create(b_, loc_, y_zero, overflow), IConst(it, 1), y);
        if (op == HloOpcode::kDivide) {
          return Select(y_zero, IConst(it, -1), Select(overflow, min, arith::DivSIOp::create(b_, loc_, x, safe)));
        }
        return Select(y_zero, x, Select(overflow, zero, arith::RemSIOp::create(b_, loc_, x, safe)));
      }
      case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightLogical:
      case HloOpcode::kShiftRightArithmetic: {
        Value too_big = Cmp(arith::CmpIPredicate::uge, y, IConst(it, w));
        Value safe = Select(too_big, zero, y);
        if (op == HloOpcode::kShiftLeft) return Select(too_big, zero, arith::ShLIOp::create(b_, loc_, x, safe));
        if (op == HloOpcode::kShiftRightLogical) return Select(too_big, zero, arith::ShRUIOp::create(b_, loc_, x, safe));
        Value fill = arith::ShRSIOp::create(b_, loc_, x, IConst(it, w - 1));
        return Select(too_big, fill, arith::ShRSIOp::create(b_, loc_, x, safe));
      }
      case HloOpcode::kPower: {
        // Negative exponents give 0 except for bases 1 and -1 (math.ipowi's
        // rule, the evaluator's too).
        if (!is_signed) {
          Value neg_y = Cmp(arith::CmpIPredicate::slt, y, zero);
          Value r = math::IPowIOp::create(b_, loc_, x, y);
          (void)neg_y;
          return r;
        }
        return Value(math::IPowIOp::create(b_, loc_, x, y));
      }
      case HloOpcode::kAbs: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll: case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart:
      case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2: case HloOpcode::kBatchNormGrad:
      case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast:
      case HloOpcode::kBitcastConvert: case HloOpcode::kBroadcast: case HloOpcode::kCall:
      case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kCholesky: case HloOpcode::kClamp:
      case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
      case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
      case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
      case HloOpcode::kCopyStart: case HloOpcode::kCos: case HloOpcode::kCustomCall: case HloOpcode::kDomain:
      case HloOpcode::kDot: case HloOpcode::kDynamicReshape: case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf: case HloOpcode::kExp:
      case HloOpcode::kExpm1: case HloOpcode::kFft: case HloOpcode::kFloor: case HloOpcode::kFusion:
      case HloOpcode::kGather: case HloOpcode::kGetDimensionSize: case HloOpcode::kGetTupleElement:
      case HloOpcode::kImag: case HloOpcode::kInfeed: case HloOpcode::kIota: case HloOpcode::kIsFinite:
      case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kMap:
      case HloOpcode::kNegate: case HloOpcode::kNot: case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
      case HloOpcode::kPartitionId: case HloOpcode::kPopulationCount: case HloOpcode::kRaggedAllToAll:
      case HloOpcode::kReal: case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
      case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
      case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
      case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
      case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
      case HloOpcode::kScatter: case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter:
      case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
      case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSlice: case HloOpcode::kSort:
      case HloOpcode::kSqrt: case HloOpcode::kStochasticConvert: case HloOpcode::kTan: case HloOpcode::kTanh:
      case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
      case HloOpcode::kTuple: case HloOpcode::kWhile:
        case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
        return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on ",
                                               PrimitiveTypeName(t)));
    }
    return absl::InternalError("codegen: binary opcode out of range");
  }

  absl::StatusOr<Value> Unary(HloOpcode op, Value x, PrimitiveType t, const HloInstruction* h) {
    namespace arith = mlir::arith;
    namespace math = mlir::math;
    if (op == HloOpcode::kCopy || op == HloOpcode::kReal) return x;
    if (IsFloatingPointType(t)) {
      mlir::Type ft = x.getType();
      Value r;
      switch (op) {
        case HloOpcode::kAbs: r = math::AbsFOp::create(b_, loc_, x); break;
        case HloOpcode::kNegate: r = arith::NegFOp::create(b_, loc_, x); break;
        case HloOpcode::kExp: r = math::ExpOp::create(b_, loc_, x); break;
        case HloOpcode::kExpm1: r = math::ExpM1Op::create(b_, loc_, x); break;
        case HloOpcode::kLog: r = math::LogOp::create(b_, loc_, x); break;
        case HloOpcode::kLog1p: r = math::Log1pOp::create(b_, loc_, x); break;
        case HloOpcode::kLogistic: {
          Value e = math::ExpOp::create(b_, loc_, arith::NegFOp::create(b_, loc_, x));
          r = arith::DivFOp::create(b_, loc_, FConst(ft, 1), arith::AddFOp::create(b_, loc_, FConst(ft, 1), e));
          break;
        }
        case HloOpcode::kSqrt: r = math::SqrtOp::create(b_, loc_, x); break;
        case HloOpcode::kRsqrt:
          r = arith::DivFOp::create(b_, loc_, FConst(ft, 1), math::SqrtOp::create(b_, loc_, x));
          break;
        case HloOpcode::kCbrt: r = math::CbrtOp::create(b_, loc_, x); break;
        case HloOpcode::kSin: r = math::SinOp::create(b_, loc_, x); break;
        case HloOpcode::kCos: r = math::CosOp::create(b_, loc_, x); break;
        case HloOpcode::kTan: r = math::TanOp::create(b_, loc_, x); break;
        case HloOpcode::kTanh: r = math::TanhOp::create(b_, loc_, x); break;
        case HloOpcode::kAcos: r = math::AcosOp::create(b_, loc_, x); break;
        case HloOpcode::kAcosh: r = math::AcoshOp::create(b_, loc_, x); break;
        case HloOpcode::kAsin: r = math::AsinOp::create(b_, loc_, x); break;
        case HloOpcode::kAsinh: r = math::AsinhOp::create(b_, loc_, x); break;
        case HloOpcode::kAtanh: r = math::AtanhOp::create(b_, loc_, x); break;
        case HloOpcode::kCosh: r = math::CoshOp::create(b_, loc_, x); break;
        case HloOpcode::kSinh: r = math::SinhOp::create(b_, loc_, x); break;
        case HloOpcode::kErf: r = math::ErfOp::create(b_, loc_, x); break;
        case HloOpcode::kCeil: r = math::CeilOp::create(b_, loc_, x); break;
        case HloOpcode::kFloor: r = math::FloorOp::create(b_, loc_, x); break;
        case HloOpcode::kRoundNearestAfz: r = math::RoundOp::create(b_, loc_, x); break;
        case HloOpcode::kRoundNearestEven: r = math::RoundEvenOp::create(b_, loc_, x); break;
        case HloOpcode::kSign: {
          Value zero = FConst(ft, 0);
          Value pos = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OGT, x, zero);
          Value neg = arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::OLT, x, zero);
          r = Select(pos, FConst(ft, 1), Select(neg, FConst(ft, -1), x));
          break;
        }
        case HloOpcode::kIsFinite: {
          Value a = math::AbsFOp::create(b_, loc_, x);
          return Value(arith::CmpFOp::create(b_, loc_, arith::CmpFPredicate::ONE, a,
                                             FConst(ft, std::numeric_limits<double>::infinity())));
        }
        case HloOpcode::kAdd: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
        case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
        case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
        case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
        case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2:
        case HloOpcode::kBatchNormGrad: case HloOpcode::kBatchNormInference:
        case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast: case HloOpcode::kBitcastConvert:
        case HloOpcode::kBroadcast: case HloOpcode::kCall: case HloOpcode::kCholesky: case HloOpcode::kClamp:
        case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
        case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
        case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConcatenate:
        case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
        case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
        case HloOpcode::kCopyStart: case HloOpcode::kCustomCall: case HloOpcode::kDivide:
        case HloOpcode::kDomain: case HloOpcode::kDot: case HloOpcode::kDynamicReshape:
        case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kFft:
        case HloOpcode::kFusion: case HloOpcode::kGather: case HloOpcode::kGetDimensionSize:
        case HloOpcode::kGetTupleElement: case HloOpcode::kImag: case HloOpcode::kInfeed:
        case HloOpcode::kIota: case HloOpcode::kMap: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
        case HloOpcode::kMultiply: case HloOpcode::kNot: case HloOpcode::kOptimizationBarrier:
        case HloOpcode::kOr: case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
        case HloOpcode::kPartitionId: case HloOpcode::kPopulationCount: case HloOpcode::kPower:
        case HloOpcode::kRaggedAllToAll: case HloOpcode::kReal: case HloOpcode::kRecv:
        case HloOpcode::kRecvDone: case HloOpcode::kReduce: case HloOpcode::kReducePrecision:
        case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow: case HloOpcode::kRemainder:
        case HloOpcode::kReplicaId: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kRng:
        case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kScatter:
        case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter: case HloOpcode::kSend:
        case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize: case HloOpcode::kShiftLeft:
        case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSlice:
        case HloOpcode::kSort: case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract:
        case HloOpcode::kTopK: case HloOpcode::kTranspose: case HloOpcode::kTriangularSolve:
        case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
        case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
          return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on floats"));
      }
      return Round(r, t);
    }
    mlir::Type it = x.getType();
    bool is_signed = IsSignedIntegralType(t);
    switch (op) {
      case HloOpcode::kNot: return Value(arith::XOrIOp::create(b_, loc_, x, IConst(it, -1)));
      case HloOpcode::kPopulationCount: return Value(math::CtPopOp::create(b_, loc_, x));
      case HloOpcode::kClz: return Value(math::CountLeadingZerosOp::create(b_, loc_, x));
      case HloOpcode::kNegate: return Value(arith::SubIOp::create(b_, loc_, IConst(it, 0), x));
      case HloOpcode::kAbs: return is_signed ? Value(math::AbsIOp::create(b_, loc_, x)) : x;
      case HloOpcode::kSign: {
        if (!is_signed) return Value(arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::ne, x, IConst(it, 0))));
        Value pos = arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::sgt, x, IConst(it, 0)));
        Value neg = arith::ExtUIOp::create(b_, loc_, it, Cmp(arith::CmpIPredicate::slt, x, IConst(it, 0)));
        return Value(arith::SubIOp::create(b_, loc_, pos, neg));
      }
      case HloOpcode::kAdd: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2:
      case HloOpcode::kBatchNormGrad: case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcast: case HloOpcode::kBitcastConvert:
      case HloOpcode::kBroadcast: case HloOpcode::kCall: case HloOpcode::kCbrt: case HloOpcode::kCeil:
      case HloOpcode::kCholesky: case HloOpcode::kClamp: case HloOpcode::kCollectiveBroadcast:
      case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteDone:
      case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCompare: case HloOpcode::kComplex:
      case HloOpcode::kConcatenate: case HloOpcode::kConditional: case HloOpcode::kConstant:
      case HloOpcode::kConvert: case HloOpcode::kConvolution: case HloOpcode::kCopy:
      case HloOpcode::kCopyDone: case HloOpcode::kCopyStart: case HloOpcode::kCos:
      case HloOpcode::kCustomCall: case HloOpcode::kDivide: case HloOpcode::kDomain: case HloOpcode::kDot:
      case HloOpcode::kDynamicReshape: case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFft:
      case HloOpcode::kFloor: case HloOpcode::kFusion: case HloOpcode::kGather:
      case HloOpcode::kGetDimensionSize: case HloOpcode::kGetTupleElement: case HloOpcode::kImag:
      case HloOpcode::kInfeed: case HloOpcode::kIota: case HloOpcode::kIsFinite: case HloOpcode::kLog:
      case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kMaximum:
      case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kOptimizationBarrier:
      case HloOpcode::kOr: case HloOpcode::kOutfeed: case HloOpcode::kPad: case HloOpcode::kParameter:
      case HloOpcode::kPartitionId: case HloOpcode::kPower: case HloOpcode::kRaggedAllToAll:
      case HloOpcode::kReal: case HloOpcode::kRecv: case HloOpcode::kRecvDone: case HloOpcode::kReduce:
      case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter: case HloOpcode::kReduceWindow:
      case HloOpcode::kRemainder: case HloOpcode::kReplicaId: case HloOpcode::kReshape:
      case HloOpcode::kReverse: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kRoundNearestAfz:
      case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kScatter:
      case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter: case HloOpcode::kSend:
      case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize: case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSin:
      case HloOpcode::kSlice: case HloOpcode::kSort: case HloOpcode::kSqrt:
      case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kTan:
      case HloOpcode::kTanh: case HloOpcode::kTopK: case HloOpcode::kTranspose:
      case HloOpcode::kTriangularSolve: case HloOpcode::kTuple: case HloOpcode::kWhile: case HloOpcode::kXor:
        case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kMulhi: case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
        return absl::UnimplementedError(StrCat("codegen: ", h->name(), ": '", HloOpcodeString(op), "' on ",
                                               PrimitiveTypeName(t)));
    }
    return absl::InternalError("codegen: unary opcode out of range");
  }

  // Emits `then_fn` when `cond` holds and `else_fn` otherwise, both yielding
  // one value of type `type`.
  absl::StatusOr<Value> EmitIf(Value cond, mlir::Type type, const std::function<absl::StatusOr<Value>()>& then_fn,
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

  // Emits nested scf.for loops over `bounds` carrying `init` values; `body`
  // gets the induction variables and the carried values and returns the new
  // carried values.
  absl::StatusOr<std::vector<Value>> EmitLoopNest(
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

  // A reduce's reduced dims, major to minor in its input's layout: the
  // order its loop nest walks them (the innermost loop walks the most minor
  // reduced dimension).
  static std::vector<int64_t> ReducedDims(const HloInstruction* reduce) {
    const std::vector<int64_t>& dims = reduce->dimensions();
    std::vector<int64_t> reduced;
    std::vector<int64_t> mtm = MinorToMajor(reduce->operand(0)->shape());
    for (auto it = mtm.rbegin(); it != mtm.rend(); ++it) {
      if (std::find(dims.begin(), dims.end(), *it) != dims.end()) reduced.push_back(*it);
    }
    return reduced;
  }

  // The index into a reduce's input of output element `out` at the reduced
  // dims' induction variables `ivs` (in ReducedDims order).
  static Index ReduceInputIndex(int64_t rank, const std::vector<int64_t>& reduced, const Index& ivs,
                                const Index& out) {
    Index in(rank);
    size_t out_pos = 0;
    for (int64_t d = 0; d < rank; ++d) {
      auto r = std::find(reduced.begin(), reduced.end(), d);
      in[d] = r != reduced.end() ? ivs[r - reduced.begin()] : out[out_pos++];
    }
    return in;
  }

  absl::StatusOr<std::vector<Value>> EmitReduce(const HloInstruction* h, const Index& idx) {
    int64_t n = h->operand_count() / 2;
    const Shape& in_shape = h->operand(0)->shape();
    std::vector<Value> init;
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<Value> v = EmitScalar(h->operand(n + i), {});
      if (!v.ok()) return v.status();
      init.push_back(*v);
    }
    const std::vector<int64_t> reduced = ReducedDims(h);
    std::vector<int64_t> bounds;
    for (int64_t d : reduced) bounds.push_back(in_shape.dimensions(d));
    return EmitLoopNest(bounds, init, [&](const Index& ivs, const std::vector<Value>& acc)
                                          -> absl::StatusOr<std::vector<Value>> {
      const Index in = ReduceInputIndex(in_shape.rank(), reduced, ivs, idx);
      llvm::SmallVector<Value> args(acc.begin(), acc.end());
      for (int64_t i = 0; i < n; ++i) {
        absl::StatusOr<Value> v = EmitScalar(h->operand(i), in);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      // The reducer may be reassociated (LLVM then vectorizes the loop);
      // the order is fixed by the compiled code, so results stay
      // deterministic.
      reassociate_ = true;
      absl::StatusOr<std::vector<Value>> combined = EmitComputation(h->to_apply(), args);
      reassociate_ = false;
      return combined;
    });
  }

  absl::StatusOr<Value> EmitReduceWindow(const HloInstruction* h, const Index& idx) {
    const Shape& in_shape = h->operand(0)->shape();
    const Window& w = h->window();
    absl::StatusOr<Value> init = EmitScalar(h->operand(1), {});
    if (!init.ok()) return init.status();
    std::vector<int64_t> bounds;
    for (const WindowDimension& d : w.dimensions) bounds.push_back(d.size);
    mlir::Type t = init->getType();
    absl::StatusOr<std::vector<Value>> r = EmitLoopNest(
        bounds, {*init}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          // Position in the padded, base-dilated input.
          Value in_bounds = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
          Index in(in_shape.rank());
          for (int64_t d = 0; d < in_shape.rank(); ++d) {
            const WindowDimension& wd = w.dimensions[d];
            Value pos = Sub(Add(Mul(idx[d], wd.stride), Mul(ivs[d], wd.window_dilation)), C(wd.padding_low));
            Value ok = Cmp(mlir::arith::CmpIPredicate::sge, pos, C(0));
            Value q = pos;
            if (wd.base_dilation > 1) {
              Value safe = Select(ok, pos, C(0));
              ok = And(ok, Cmp(mlir::arith::CmpIPredicate::eq, Rem(safe, wd.base_dilation), C(0)));
              q = Div(safe, wd.base_dilation);
            }
            ok = And(ok, Cmp(mlir::arith::CmpIPredicate::slt, q, C(in_shape.dimensions(d))));
            in_bounds = And(in_bounds, ok);
            in[d] = q;
          }
          absl::StatusOr<Value> next = EmitIf(
              in_bounds, t,
              [&]() -> absl::StatusOr<Value> {
                absl::StatusOr<Value> v = EmitScalar(h->operand(0), in);
                if (!v.ok()) return v.status();
                absl::StatusOr<std::vector<Value>> c = EmitComputation(h->to_apply(), {acc[0], *v});
                if (!c.ok()) return c.status();
                return (*c)[0];
              },
              [&]() -> absl::StatusOr<Value> { return acc[0]; });
          if (!next.ok()) return next.status();
          return std::vector<Value>{*next};
        });
    if (!r.ok()) return r.status();
    return (*r)[0];
  }

  absl::StatusOr<Value> EmitDot(const HloInstruction* h, const Index& idx) {
    const DotDimensionNumbers& dn = h->attrs().dot_dnums;
    const Shape& ls = h->operand(0)->shape();
    const Shape& rs = h->operand(1)->shape();
    PrimitiveType t = h->shape().element_type();
    mlir::Type ct = ComputeType(t);
    Value zero = IsFloatingPointType(t) ? FConst(ct, 0) : IConst(ct, 0);
    std::vector<int64_t> bounds;
    for (int64_t d : dn.lhs_contracting_dimensions) bounds.push_back(ls.dimensions(d));
    auto free_dims = [](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
      std::vector<int64_t> f;
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
          f.push_back(d);
        }
      }
      return f;
    };
    std::vector<int64_t> lfree = free_dims(ls, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
    std::vector<int64_t> rfree = free_dims(rs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
    absl::StatusOr<std::vector<Value>> r = EmitLoopNest(
        bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          Index li(ls.rank()), ri(rs.rank());
          size_t pos = 0;
          for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i, ++pos) {
            li[dn.lhs_batch_dimensions[i]] = idx[pos];
            ri[dn.rhs_batch_dimensions[i]] = idx[pos];
          }
          for (int64_t d : lfree) li[d] = idx[pos++];
          for (int64_t d : rfree) ri[d] = idx[pos++];
          for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
            li[dn.lhs_contracting_dimensions[i]] = ivs[i];
            ri[dn.rhs_contracting_dimensions[i]] = ivs[i];
          }
          absl::StatusOr<Value> a = EmitScalar(h->operand(0), li);
          if (!a.ok()) return a.status();
          absl::StatusOr<Value> bv = EmitScalar(h->operand(1), ri);
          if (!bv.ok()) return bv.status();
          absl::StatusOr<Value> ac = Convert(*a, h->operand(0)->shape().element_type(), t);
          absl::StatusOr<Value> bc = Convert(*bv, h->operand(1)->shape().element_type(), t);
          if (!ac.ok()) return ac.status();
          if (!bc.ok()) return bc.status();
          if (t == PrimitiveType::kPred) {
            return std::vector<Value>{mlir::arith::OrIOp::create(b_, loc_, acc[0], And(*ac, *bc))};
          }
          if (IsFloatingPointType(t)) {
            Value p = mlir::arith::MulFOp::create(b_, loc_, *ac, *bc);
            return std::vector<Value>{mlir::arith::AddFOp::create(b_, loc_, acc[0], p)};
          }
          Value p = mlir::arith::MulIOp::create(b_, loc_, *ac, *bc);
          return std::vector<Value>{mlir::arith::AddIOp::create(b_, loc_, acc[0], p)};
        });
    if (!r.ok()) return r.status();
    return Round((*r)[0], t);
  }

  // Direct convolution: each output element sums over the window taps and
  // the input features of its group (feature and batch groups as the
  // evaluator defines them).
  absl::StatusOr<Value> EmitConvolution(const HloInstruction* h, const Index& idx) {
    const ConvolutionDimensionNumbers& d = *h->attrs().conv_dnums;
    const Shape& ls = h->operand(0)->shape();
    const Shape& rs = h->operand(1)->shape();
    const Window& w = h->window();
    PrimitiveType t = h->shape().element_type();
    mlir::Type ct = ComputeType(t);
    int64_t fgc = h->attrs().feature_group_count, bgc = h->attrs().batch_group_count;
    int64_t I = rs.dimensions(d.kernel_input_feature_dimension);
    int64_t O = rs.dimensions(d.kernel_output_feature_dimension);
    int64_t n_out = h->shape().dimensions(d.output_batch_dimension);
    int64_t og = std::max<int64_t>(1, O / (fgc * bgc));
    size_t spatial = d.input_spatial_dimensions.size();
    Value o = idx[d.output_feature_dimension];
    Value n = idx[d.output_batch_dimension];
    Value g = Div(o, og);
    Value in_batch = bgc > 1 ? Add(Mul(g, n_out), n) : n;
    Value feature_base = fgc > 1 ? Mul(g, I) : C(0);
    Value zero = IsFloatingPointType(t) ? FConst(ct, 0) : IConst(ct, 0);
    std::vector<int64_t> bounds;
    for (size_t s = 0; s < spatial; ++s) bounds.push_back(rs.dimensions(d.kernel_spatial_dimensions[s]));
    bounds.push_back(I);
    absl::StatusOr<std::vector<Value>> r = EmitLoopNest(
        bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          Index li(ls.rank()), ri(rs.rank());
          Value c = ivs[spatial];
          li[d.input_batch_dimension] = in_batch;
          li[d.input_feature_dimension] = Add(feature_base, c);
          ri[d.kernel_input_feature_dimension] = c;
          ri[d.kernel_output_feature_dimension] = o;
          Value in_bounds = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
          for (size_t s = 0; s < spatial; ++s) {
            const WindowDimension& wd = w.dimensions[s];
            Value k = ivs[s];
            Value pos = Sub(Add(Mul(idx[d.output_spatial_dimensions[s]], wd.stride), Mul(k, wd.window_dilation)),
                            C(wd.padding_low));
            Value ok = Cmp(mlir::arith::CmpIPredicate::sge, pos, C(0));
            Value q = Select(ok, pos, C(0));
            if (wd.base_dilation > 1) {
              ok = And(ok, Cmp(mlir::arith::CmpIPredicate::eq, Rem(q, wd.base_dilation), C(0)));
              q = Div(q, wd.base_dilation);
            }
            ok = And(ok, Cmp(mlir::arith::CmpIPredicate::slt, q, C(ls.dimensions(d.input_spatial_dimensions[s]))));
            in_bounds = And(in_bounds, ok);
            li[d.input_spatial_dimensions[s]] = q;
            ri[d.kernel_spatial_dimensions[s]] = wd.window_reversal ? Sub(C(bounds[s] - 1), k) : k;
          }
          absl::StatusOr<Value> next = EmitIf(
              in_bounds, ct,
              [&]() -> absl::StatusOr<Value> {
                absl::StatusOr<Value> a = EmitScalar(h->operand(0), li);
                if (!a.ok()) return a.status();
                absl::StatusOr<Value> bv = EmitScalar(h->operand(1), ri);
                if (!bv.ok()) return bv.status();
                absl::StatusOr<Value> ac = Convert(*a, ls.element_type(), t);
                absl::StatusOr<Value> bc = Convert(*bv, rs.element_type(), t);
                if (!ac.ok()) return ac.status();
                if (!bc.ok()) return bc.status();
                if (IsFloatingPointType(t)) {
                  return Value(mlir::arith::AddFOp::create(b_, loc_, acc[0], mlir::arith::MulFOp::create(b_, loc_, *ac, *bc)));
                }
                return Value(mlir::arith::AddIOp::create(b_, loc_, acc[0], mlir::arith::MulIOp::create(b_, loc_, *ac, *bc)));
              },
              [&]() -> absl::StatusOr<Value> { return acc[0]; });
          if (!next.ok()) return next.status();
          return std::vector<Value>{*next};
        });
    if (!r.ok()) return r.status();
    return Round((*r)[0], t);
  }

  // Gather in XLA's general form: batch dims of the output walk the start
  // indices, offset dims walk the slice, starts are clamped so the slice
  // fits (operand batching dims follow their indices dims).
  absl::StatusOr<Value> EmitGather(const HloInstruction* h, const Index& idx) {
    const GatherDimensionNumbers& g = h->attrs().gather_dnums;
    const Shape& os = h->operand(0)->shape();
    const Shape& is = h->operand(1)->shape();
    const Shape& out = h->shape();
    auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    std::vector<int64_t> batch_out;
    for (int64_t d = 0; d < out.rank(); ++d) {
      if (!contains(g.offset_dims, d)) batch_out.push_back(d);
    }
    Index ind(is.rank());
    size_t b = 0;
    for (int64_t d = 0; d < is.rank(); ++d) {
      if (d == g.index_vector_dim) continue;
      ind[d] = idx[batch_out[b++]];
    }
    Index in(os.rank());
    size_t off = 0;
    for (int64_t d = 0; d < os.rank(); ++d) {
      bool no_offset = contains(g.collapsed_slice_dims, d) || contains(g.operand_batching_dims, d);
      in[d] = no_offset ? C(0) : idx[g.offset_dims[off++]];
    }
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      int64_t d = g.start_index_map[k];
      Index at = ind;
      if (g.index_vector_dim < is.rank()) at[g.index_vector_dim] = C(static_cast<int64_t>(k));
      absl::StatusOr<Value> v = EmitScalar(h->operand(1), at);
      if (!v.ok()) return v.status();
      Value i = IsSignedIntegralType(is.element_type())
                    ? Value(mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), *v))
                    : Value(mlir::arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), *v));
      Value start = mlir::arith::MaxSIOp::create(
          b_, loc_, C(0), Min(i, C(os.dimensions(d) - h->attrs().slice_sizes[d])));
      in[d] = Add(in[d], start);
    }
    for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
      in[g.operand_batching_dims[i]] = ind[g.start_indices_batching_dims[i]];
    }
    return EmitScalar(h->operand(0), in);
  }

  // batch-norm-training / batch-norm-grad as one kernel of two loop nests:
  // first the per-feature statistics (outputs 1 and 2, reductions over every
  // other dim), then the elementwise output 0, which reads the statistics
  // back from their output buffers. Formulas as the evaluator's.
  absl::StatusOr<Value> EmitBatchNormLeaf(const HloInstruction* h, int64_t tuple_index, const Index& idx) {
    namespace arith = mlir::arith;
    const Shape& xs = h->operand(0)->shape();
    int64_t f = h->attrs().feature_index;
    bool training = h->opcode() == HloOpcode::kBatchNormTraining;
    mlir::Type ct = ComputeType(xs.element_type());
    int64_t num_inputs = instruction_.operand_count();
    int64_t features = xs.dimensions(f);
    double count = features == 0 ? 0 : static_cast<double>(xs.element_count() / features);
    Value n = FConst(ct, std::max(count, 1.0));
    Value eps = FConst(ct, h->attrs().epsilon);
    auto load = [&](int64_t operand, const Index& at) { return EmitScalar(h->operand(operand), at); };
    auto inv_std = [&](Value var) {
      return Value(arith::DivFOp::create(b_, loc_, FConst(ct, 1),
                                         mlir::math::SqrtOp::create(b_, loc_, arith::AddFOp::create(b_, loc_, var, eps))));
    };
    if (tuple_index > 0) {
      if (batch_norm_stats_.empty()) {
        Value c = idx[0];
        std::vector<int64_t> dims, bounds;
        std::vector<int64_t> mtm = MinorToMajor(xs);
        for (auto it = mtm.rbegin(); it != mtm.rend(); ++it) {
          if (*it != f) dims.push_back(*it);
        }
        for (int64_t d : dims) bounds.push_back(xs.dimensions(d));
        auto at = [&](const Index& ivs) {
          Index in(xs.rank());
          in[f] = c;
          for (size_t i = 0; i < dims.size(); ++i) in[dims[i]] = ivs[i];
          return in;
        };
        Value zero = FConst(ct, 0);
        if (training) {
          absl::StatusOr<std::vector<Value>> sum = EmitLoopNest(bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
            absl::StatusOr<Value> x = load(0, at(ivs));
            if (!x.ok()) return x.status();
            return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], *x)};
          });
          if (!sum.ok()) return sum.status();
          Value mean = arith::DivFOp::create(b_, loc_, (*sum)[0], n);
          absl::StatusOr<std::vector<Value>> sq = EmitLoopNest(bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
            absl::StatusOr<Value> x = load(0, at(ivs));
            if (!x.ok()) return x.status();
            Value d = arith::SubFOp::create(b_, loc_, *x, mean);
            return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], arith::MulFOp::create(b_, loc_, d, d))};
          });
          if (!sq.ok()) return sq.status();
          batch_norm_stats_ = {mean, arith::DivFOp::create(b_, loc_, (*sq)[0], n)};
        } else {
          absl::StatusOr<Value> mean = load(2, {c});
          absl::StatusOr<Value> var = load(3, {c});
          if (!mean.ok()) return mean.status();
          if (!var.ok()) return var.status();
          absl::StatusOr<std::vector<Value>> sums = EmitLoopNest(bounds, {zero, zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
            absl::StatusOr<Value> x = load(0, at(ivs));
            absl::StatusOr<Value> dy = load(4, at(ivs));
            if (!x.ok()) return x.status();
            if (!dy.ok()) return dy.status();
            Value xmu = arith::SubFOp::create(b_, loc_, *x, *mean);
            return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], *dy),
                                      arith::AddFOp::create(b_, loc_, acc[1], arith::MulFOp::create(b_, loc_, *dy, xmu))};
          });
          if (!sums.ok()) return sums.status();
          Value dscale = arith::MulFOp::create(b_, loc_, (*sums)[1], inv_std(*var));
          batch_norm_stats_ = {dscale, (*sums)[0]};
        }
      }
      return Round(batch_norm_stats_[tuple_index - 1], xs.element_type());
    }
    Index fi{idx[f]};
    Value s1 = LoadBuffer(num_inputs + 1, fi);
    Value s2 = LoadBuffer(num_inputs + 2, fi);
    absl::StatusOr<Value> x = load(0, idx);
    absl::StatusOr<Value> scale = load(1, fi);
    if (!x.ok()) return x.status();
    if (!scale.ok()) return scale.status();
    if (training) {
      absl::StatusOr<Value> offset = load(2, fi);
      if (!offset.ok()) return offset.status();
      Value norm = arith::MulFOp::create(b_, loc_, arith::SubFOp::create(b_, loc_, *x, s1), inv_std(s2));
      return Round(arith::AddFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, norm, *scale), *offset),
                   xs.element_type());
    }
    absl::StatusOr<Value> mean = load(2, fi);
    absl::StatusOr<Value> var = load(3, fi);
    absl::StatusOr<Value> dy = load(4, idx);
    if (!mean.ok()) return mean.status();
    if (!var.ok()) return var.status();
    if (!dy.ok()) return dy.status();
    // dx = scale * inv * (dy - doffset / N - (x - mean) * inv * dscale / N)
    Value inv = inv_std(*var);
    Value xmu = arith::SubFOp::create(b_, loc_, *x, *mean);
    Value t1 = arith::DivFOp::create(b_, loc_, s2, n);
    Value t2 = arith::DivFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, xmu, inv), s1), n);
    Value inner = arith::SubFOp::create(b_, loc_, arith::SubFOp::create(b_, loc_, *dy, t1), t2);
    Value dx = arith::MulFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, *scale, inv), inner);
    return Round(dx, xs.element_type());
  }

  absl::StatusOr<Value> EmitConstant(const HloInstruction* h, const Index& idx) {
    const Literal& lit = h->literal();
    PrimitiveType t = h->shape().element_type();
    if (lit.element_count() == 1) {
      mlir::Type ct = ComputeType(t);
      if (t == PrimitiveType::kPred) return IConst(ct, lit.GetInt(0) != 0);
      if (IsFloatingPointType(t)) return FConst(ct, lit.GetDouble(0));
      return IConst(ct, static_cast<int64_t>(lit.GetBits(0)));
    }
    auto it = globals_.find(h);
    if (it == globals_.end()) {
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(module_->getBody());
      auto type = mlir::MemRefType::get({lit.element_count()}, StorageType(t));
      auto tensor_type = mlir::RankedTensorType::get({lit.element_count()}, StorageType(t));
      llvm::ArrayRef<char> raw(reinterpret_cast<const char*>(lit.untyped_data()), lit.size_bytes());
      auto attr = mlir::DenseElementsAttr::getFromRawBuffer(tensor_type, raw);
      std::string name = StrCat("constant_", globals_.size());
      mlir::memref::GlobalOp::create(b_, loc_, name, b_.getStringAttr("private"), type, attr,
                                     /*constant=*/true, /*alignment=*/nullptr);
      it = globals_.emplace(h, name).first;
    }
    auto type = mlir::MemRefType::get({lit.element_count()}, StorageType(t));
    Value g = mlir::memref::GetGlobalOp::create(b_, loc_, type, it->second);
    Value off = Linearize(idx, RowMajorStrides(h->shape().dimensions()));
    Value v = mlir::memref::LoadOp::create(b_, loc_, g, mlir::ValueRange{off});
    return FromStorage(v, t);
  }

  absl::StatusOr<std::vector<Value>> EmitOp(const HloInstruction* h, const Index& idx) {
    auto one = [](absl::StatusOr<Value> v) -> absl::StatusOr<std::vector<Value>> {
      if (!v.ok()) return v.status();
      return std::vector<Value>{*v};
    };
    const Shape& shape = h->shape();
    PrimitiveType t = shape.element_type();
    auto operand_at = [&](int64_t i, const Index& at) { return EmitScalar(h->operand(i), at); };
    // Operand index for ops whose operands have the output's dims (scalars
    // broadcast implicitly for clamp/select).
    auto same = [&](int64_t i) -> Index { return h->operand(i)->shape().rank() == 0 ? Index{} : idx; };
    HloOpcode op = h->opcode();
    switch (op) {
      case HloOpcode::kParameter:
        return absl::InternalError(StrCat("codegen: unbound parameter ", h->name()));
      case HloOpcode::kConstant:
        return one(EmitConstant(h, idx));
      case HloOpcode::kGetTupleElement: {
        absl::StatusOr<std::vector<Value>> r = EmitElement(h->operand(0), idx);
        if (!r.ok()) return r.status();
        return std::vector<Value>{(*r)[h->tuple_index()]};
      }
      case HloOpcode::kReduce:
        return EmitReduce(h, idx);
      case HloOpcode::kReduceWindow:
        return one(EmitReduceWindow(h, idx));
      case HloOpcode::kDot:
        return one(EmitDot(h, idx));
      case HloOpcode::kConvolution:
        return one(EmitConvolution(h, idx));
      case HloOpcode::kGather:
        return one(EmitGather(h, idx));
      case HloOpcode::kBatchNormTraining:
      case HloOpcode::kBatchNormGrad:
      case HloOpcode::kScatter:
        return absl::InternalError(StrCat("codegen: ", h->name(), " is emitted as its own kernel"));
      case HloOpcode::kBatchNormInference: {
        // (x - mean) / sqrt(var + epsilon) * scale + offset, per feature.
        Index f{idx[h->attrs().feature_index]};
        std::vector<Value> v;
        for (int64_t i = 0; i < 5; ++i) {
          absl::StatusOr<Value> e = operand_at(i, i == 0 ? idx : f);
          if (!e.ok()) return e.status();
          v.push_back(*e);
        }
        namespace arith = mlir::arith;
        Value eps = FConst(v[4].getType(), h->attrs().epsilon);
        Value rstd = mlir::math::SqrtOp::create(b_, loc_, arith::AddFOp::create(b_, loc_, v[4], eps));
        Value norm = arith::DivFOp::create(b_, loc_, arith::SubFOp::create(b_, loc_, v[0], v[3]), rstd);
        Value y = arith::AddFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, norm, v[1]), v[2]);
        return std::vector<Value>{Round(y, t)};
      }
      case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
      case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp:
      case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kIsFinite: case HloOpcode::kLog:
      case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate: case HloOpcode::kNot:
      case HloOpcode::kPopulationCount: case HloOpcode::kReal: case HloOpcode::kRoundNearestAfz:
      case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
      case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
      case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
      case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: {
        absl::StatusOr<Value> x = operand_at(0, idx);
        if (!x.ok()) return x.status();
        return one(Unary(op, *x, h->operand(0)->shape().element_type(), h));
      }
      case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kDivide:
      case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kOr:
      case HloOpcode::kPower: case HloOpcode::kRemainder: case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract:
      case HloOpcode::kXor: case HloOpcode::kMulhi: {
        absl::StatusOr<Value> x = operand_at(0, idx);
        if (!x.ok()) return x.status();
        absl::StatusOr<Value> y = operand_at(1, idx);
        if (!y.ok()) return y.status();
        return one(Binary(op, *x, *y, t, h));
      }
      case HloOpcode::kCompare: {
        absl::StatusOr<Value> x = operand_at(0, idx);
        if (!x.ok()) return x.status();
        absl::StatusOr<Value> y = operand_at(1, idx);
        if (!y.ok()) return y.status();
        return std::vector<Value>{CompareValues(*x, *y, h->operand(0)->shape().element_type(),
                                                h->attrs().comparison_direction, h->attrs().comparison_type)};
      }
      case HloOpcode::kSelect: {
        absl::StatusOr<Value> c = operand_at(0, same(0));
        absl::StatusOr<Value> x = operand_at(1, same(1));
        absl::StatusOr<Value> y = operand_at(2, same(2));
        if (!c.ok()) return c.status();
        if (!x.ok()) return x.status();
        if (!y.ok()) return y.status();
        return std::vector<Value>{Select(*c, *x, *y)};
      }
      case HloOpcode::kClamp: {
        absl::StatusOr<Value> lo = operand_at(0, same(0));
        absl::StatusOr<Value> x = operand_at(1, same(1));
        absl::StatusOr<Value> hi = operand_at(2, same(2));
        if (!lo.ok()) return lo.status();
        if (!x.ok()) return x.status();
        if (!hi.ok()) return hi.status();
        absl::StatusOr<Value> m = Binary(HloOpcode::kMaximum, *x, *lo, t, h);
        if (!m.ok()) return m.status();
        return one(Binary(HloOpcode::kMinimum, *m, *hi, t, h));
      }
      case HloOpcode::kConvert: {
        absl::StatusOr<Value> x = operand_at(0, idx);
        if (!x.ok()) return x.status();
        return one(Convert(*x, h->operand(0)->shape().element_type(), t));
      }
      case HloOpcode::kBitcastConvert: {
        absl::StatusOr<Value> x = operand_at(0, idx);
        if (!x.ok()) return x.status();
        PrimitiveType from = h->operand(0)->shape().element_type();
        Value s = ToStorage(*x, from);
        Value c = mlir::arith::BitcastOp::create(b_, loc_, StorageType(t), s);
        return std::vector<Value>{FromStorage(c, t)};
      }
      case HloOpcode::kMap: {
        llvm::SmallVector<Value> args;
        for (int64_t i = 0; i < h->operand_count(); ++i) {
          absl::StatusOr<Value> v = operand_at(i, idx);
          if (!v.ok()) return v.status();
          args.push_back(*v);
        }
        return EmitComputation(h->to_apply(), args);
      }
      case HloOpcode::kIota: {
        Value i = idx.empty() ? C(0) : idx[h->iota_dimension()];
        Value i64 = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), i);
        return one(Convert(i64, PrimitiveType::kS64, t));
      }
      case HloOpcode::kBroadcast: {
        Index in;
        for (int64_t d : h->dimensions()) in.push_back(idx[d]);
        return one(operand_at(0, in));
      }
      case HloOpcode::kTranspose: {
        Index in(shape.rank());
        for (int64_t i = 0; i < shape.rank(); ++i) in[h->dimensions(i)] = idx[i];
        return one(operand_at(0, in));
      }
      case HloOpcode::kReshape: {
        const Shape& os = h->operand(0)->shape();
        Value linear = Linearize(idx, RowMajorStrides(shape.dimensions()));
        std::vector<int64_t> row_major_mtm;
        for (int64_t d = os.rank() - 1; d >= 0; --d) row_major_mtm.push_back(d);
        return one(operand_at(0, Delinearize(linear, os.dimensions(), row_major_mtm)));
      }
      case HloOpcode::kBitcast: {
        // Same bytes: the physical offset in the result's layout names the
        // operand element at that offset in the operand's layout.
        const Shape& os = h->operand(0)->shape();
        Value linear = Linearize(idx, PhysicalStrides(shape));
        return one(operand_at(0, Delinearize(linear, os.dimensions(), MinorToMajor(os))));
      }
      case HloOpcode::kSlice: {
        Index in(shape.rank());
        for (int64_t d = 0; d < shape.rank(); ++d) {
          const SliceDimension& s = h->attrs().slice[d];
          in[d] = Add(Mul(idx[d], s.stride), C(s.start));
        }
        return one(operand_at(0, in));
      }
      case HloOpcode::kReverse: {
        Index in(idx.begin(), idx.end());
        for (int64_t d : h->dimensions()) in[d] = Sub(C(shape.dimensions(d) - 1), idx[d]);
        return one(operand_at(0, in));
      }
      case HloOpcode::kPad: {
        const Shape& os = h->operand(0)->shape();
        Value ok = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
        Index in(shape.rank());
        for (int64_t d = 0; d < shape.rank(); ++d) {
          const PaddingDimension& p = h->attrs().padding_config.dimensions[d];
          Value rel = Sub(idx[d], C(p.edge_padding_low));
          Value good = Cmp(mlir::arith::CmpIPredicate::sge, rel, C(0));
          Value safe = Select(good, rel, C(0));
          Value q = safe;
          if (p.interior_padding > 0) {
            good = And(good, Cmp(mlir::arith::CmpIPredicate::eq, Rem(safe, p.interior_padding + 1), C(0)));
            q = Div(safe, p.interior_padding + 1);
          }
          good = And(good, Cmp(mlir::arith::CmpIPredicate::slt, q, C(os.dimensions(d))));
          ok = And(ok, good);
          in[d] = q;
        }
        return one(EmitIf(
            ok, ComputeType(t), [&]() { return operand_at(0, in); }, [&]() { return operand_at(1, {}); }));
      }
      case HloOpcode::kConcatenate: {
        int64_t dim = h->concatenate_dimension();
        // A chain of ifs: operand i covers [offset_i, offset_i + size_i).
        std::function<absl::StatusOr<Value>(int64_t, int64_t)> pick = [&](int64_t i, int64_t offset) -> absl::StatusOr<Value> {
          int64_t size = h->operand(i)->shape().dimensions(dim);
          Index in(idx.begin(), idx.end());
          in[dim] = Sub(idx[dim], C(offset));
          if (i + 1 == h->operand_count()) return operand_at(i, in);
          Value inside = Cmp(mlir::arith::CmpIPredicate::slt, idx[dim], C(offset + size));
          return EmitIf(
              inside, ComputeType(t), [&]() { return operand_at(i, in); },
              [&]() { return pick(i + 1, offset + size); });
        };
        return one(pick(0, 0));
      }
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice: {
        bool dus = op == HloOpcode::kDynamicUpdateSlice;
        const Shape& os = h->operand(0)->shape();
        int64_t first_index = dus ? 2 : 1;
        Index starts;
        for (int64_t d = 0; d < os.rank(); ++d) {
          const HloInstruction* s = h->operand(first_index + d);
          absl::StatusOr<Value> v = EmitScalar(s, {});
          if (!v.ok()) return v.status();
          Value i = IsSignedIntegralType(s->shape().element_type())
                        ? Value(mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), *v))
                        : Value(mlir::arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), *v));
          int64_t size = dus ? h->operand(1)->shape().dimensions(d) : shape.dimensions(d);
          Value clamped = mlir::arith::MaxSIOp::create(
              b_, loc_, C(0), mlir::arith::MinSIOp::create(b_, loc_, i, C(os.dimensions(d) - size)));
          starts.push_back(clamped);
        }
        if (!dus) {
          Index in;
          for (int64_t d = 0; d < os.rank(); ++d) in.push_back(Add(idx[d], starts[d]));
          return one(operand_at(0, in));
        }
        Value inside = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
        Index in;
        for (int64_t d = 0; d < os.rank(); ++d) {
          Value rel = Sub(idx[d], starts[d]);
          inside = And(inside, Cmp(mlir::arith::CmpIPredicate::sge, rel, C(0)));
          inside = And(inside, Cmp(mlir::arith::CmpIPredicate::slt, rel, C(h->operand(1)->shape().dimensions(d))));
          in.push_back(rel);
        }
        return one(EmitIf(
            inside, ComputeType(t), [&]() { return operand_at(1, in); }, [&]() { return operand_at(0, idx); }));
      }
      case HloOpcode::kTuple:
      case HloOpcode::kFusion:
        return absl::InternalError(StrCat("codegen: ", h->name(), " emitted elementally"));
      case HloOpcode::kAddDependency: case HloOpcode::kAfterAll: case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
      case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:
       
       case HloOpcode::kCall: case HloOpcode::kCholesky:
      case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kComplex: case HloOpcode::kConditional: 
      case HloOpcode::kCopyDone: case HloOpcode::kCopyStart: case HloOpcode::kCustomCall:
      case HloOpcode::kDomain: case HloOpcode::kDynamicReshape: case HloOpcode::kFft:
       case HloOpcode::kGetDimensionSize: case HloOpcode::kImag:
      case HloOpcode::kInfeed: case HloOpcode::kOptimizationBarrier: case HloOpcode::kOutfeed:
      case HloOpcode::kPartitionId: case HloOpcode::kRaggedAllToAll: case HloOpcode::kRecv:
      case HloOpcode::kRecvDone: case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter:
      case HloOpcode::kReplicaId: case HloOpcode::kRng: case HloOpcode::kRngBitGenerator:
      case HloOpcode::kRngGetAndUpdateState:  case HloOpcode::kSelectAndScatter:
      case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
      case HloOpcode::kSort: case HloOpcode::kStochasticConvert: case HloOpcode::kTopK:
      case HloOpcode::kTriangularSolve: case HloOpcode::kWhile:
        case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
        return absl::UnimplementedError(
            StrCat("codegen: ", h->name(), ": no emitter for '", HloOpcodeString(op), "'"));
    }
    return absl::InternalError(StrCat("codegen: ", h->name(), ": opcode out of range"));
  }

  // --- functions -------------------------------------------------------------
  absl::Status EmitSubgraphFunction(const Subgraph& s) {
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

  // Stores every leaf of `group` at logical index `idx` / physical offset
  // `out_offset`.
  absl::Status EmitStores(const std::vector<int64_t>& group, const Index& idx, Value out_offset) {
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
        absl::StatusOr<Value> v = EmitBatchNormLeaf(leaf.instruction, leaf.tuple_index, idx);
        if (!v.ok()) return v.status();
        mlir::memref::StoreOp::create(b_, loc_, ToStorage(*v, leaf.shape.element_type()),
                                      buffers_[num_inputs + leaf_id], mlir::ValueRange{out_offset});
        continue;
      }
      absl::StatusOr<std::vector<Value>> r = EmitElement(leaf.instruction, idx);
      if (!r.ok()) return r.status();
      Value v = (*r)[leaf.tuple_index < 0 ? 0 : leaf.tuple_index];
      mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, leaf.shape.element_type()),
                                    buffers_[num_inputs + leaf_id], mlir::ValueRange{out_offset});
    }
    return absl::OkStatus();
  }

  // Column reductions: every leaf of a nest is a single-input reduce (no
  // epilogue) of a type the accumulator can be stored as, and its input's
  // most minor dimension is kept and is the output's most minor one (seed
  // 000's column reduction: batch-norm statistics over N, H, W of NHWC).
  // The per-output loop over the reduced dims would walk the input with a
  // stride, one column at a time; EmitColumnReductions interchanges it.
  static constexpr int64_t kColumnBlock = 64;
  static constexpr int64_t kPartials = 16;
  bool IsColumnReductionGroup(const std::vector<int64_t>& group, const std::vector<int64_t>& out_mtm) const {
    if (batch_norm_ || scatter_ || tiled_ || out_mtm.empty()) return false;
    for (int64_t id : group) {
      const Leaf& leaf = leaves_[id];
      const HloInstruction* r = leaf.instruction;
      if (leaf.tuple_index >= 0 || r->opcode() != HloOpcode::kReduce || r->operand_count() != 2) return false;
      switch (leaf.shape.element_type()) {
        case PrimitiveType::kF32: case PrimitiveType::kF64: case PrimitiveType::kS32:
        case PrimitiveType::kS64: case PrimitiveType::kU32: case PrimitiveType::kU64:
          break;
        default:
          return false;
      }
      const Shape& in = r->operand(0)->shape();
      const std::vector<int64_t>& dims = r->dimensions();
      if (in.rank() == 0 || dims.empty()) return false;
      const int64_t in_minor = MinorToMajor(in)[0];
      if (std::find(dims.begin(), dims.end(), in_minor) != dims.end()) return false;
      const int64_t out_dim = in_minor - std::count_if(dims.begin(), dims.end(), [&](int64_t d) { return d < in_minor; });
      if (out_dim != out_mtm[0]) return false;
    }
    return true;
  }

  // One task of a column-reduction nest: output columns [j0, j0 + width) of
  // the output row at `row_idx` (linear offset `row_base`). The reduced
  // dims are walked in the order the per-output loop walks them
  // (EmitReduce), with the block's columns innermost (contiguous,
  // vectorized). Each output column keeps kPartials partial results in
  // `partials` (one stack buffer per leaf, kPartials x kColumnBlock): row r
  // of the walk goes to partial r mod kPartials, and the partials are
  // combined in order at the end, as a vectorized reduction would (a single
  // sequential f32 sum over the 8192 rows of a stem batch norm misses the
  // evaluator by several times more). The init value is applied once
  // (partial 0 starts from it, partials 1.. from rows 1..), so the results
  // do not depend on the blocking or the threads.
  absl::Status EmitColumnReductions(const std::vector<int64_t>& group, const std::vector<int64_t>& out_mtm,
                                    const std::vector<Value>& partials, const Index& row_idx, Value row_base,
                                    Value j0, Value width) {
    const int64_t num_inputs = instruction_.operand_count();
    caches_.clear();
    caches_.emplace_back();
    // body(jj, offset, idx) for each column of the block: its position in
    // the block, the output's linear offset and logical index.
    auto columns = [&](const std::function<absl::Status(Value, Value, const Index&)>& body) -> absl::Status {
      auto loop = mlir::scf::ForOp::create(b_, loc_, C(0), width, C(1));
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(loop.getBody());
      caches_.emplace_back();
      Value jj = loop.getInductionVar();
      Value j = Add(j0, jj);
      Index idx = row_idx;
      idx[out_mtm[0]] = j;
      absl::Status st = body(jj, Add(row_base, j), idx);
      caches_.pop_back();
      return st;
    };
    auto slot = [&](Value partial, Value jj) { return Add(Mul(partial, kColumnBlock), jj); };
    std::map<int64_t, size_t> position;  // leaf id -> index into `partials`
    for (size_t i = 0; i < group.size(); ++i) position[group[i]] = i;
    absl::Status init = columns([&](Value jj, Value, const Index&) -> absl::Status {
      for (int64_t id : group) {
        absl::StatusOr<Value> v = EmitScalar(leaves_[id].instruction->operand(1), {});
        if (!v.ok()) return v.status();
        mlir::memref::StoreOp::create(b_, loc_, *v, partials[position[id]], mlir::ValueRange{slot(C(0), jj)});
      }
      return absl::OkStatus();
    });
    if (!init.ok()) return init;
    // Leaves reducing the same dims of same-shaped inputs share one walk.
    std::vector<std::vector<int64_t>> walks;
    for (int64_t id : group) {
      const HloInstruction* r = leaves_[id].instruction;
      auto same = [&](const std::vector<int64_t>& w) {
        const HloInstruction* o = leaves_[w[0]].instruction;
        return o->dimensions() == r->dimensions() &&
               o->operand(0)->shape().dimensions() == r->operand(0)->shape().dimensions() &&
               MinorToMajor(o->operand(0)->shape()) == MinorToMajor(r->operand(0)->shape());
      };
      auto it = std::find_if(walks.begin(), walks.end(), same);
      if (it == walks.end()) {
        walks.push_back({id});
      } else {
        it->push_back(id);
      }
    }
    std::map<int64_t, int64_t> used;  // leaf id -> partials in use (1 for short walks)
    for (const std::vector<int64_t>& walk : walks) {
      const HloInstruction* first = leaves_[walk[0]].instruction;
      const Shape& in_shape = first->operand(0)->shape();
      const std::vector<int64_t> reduced = ReducedDims(first);
      std::vector<int64_t> bounds;
      int64_t rows = 1;
      for (int64_t d : reduced) {
        bounds.push_back(in_shape.dimensions(d));
        rows *= in_shape.dimensions(d);
      }
      const int64_t k = rows >= kPartials ? kPartials : 1;
      for (int64_t id : walk) used[id] = k;
      absl::Status walked =
          EmitLoopNest(bounds, {}, [&](const Index& ivs, const std::vector<Value>&)
                                       -> absl::StatusOr<std::vector<Value>> {
            Value row = C(0);
            for (size_t i = 0; i < bounds.size(); ++i) row = Add(Mul(row, bounds[i]), ivs[i]);
            Value partial = Rem(row, k);
            // Rows 1..k-1 start partials 1..k-1; every other row combines.
            Value starts = mlir::arith::AndIOp::create(
                b_, loc_,
                mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::uge, row, C(1)),
                mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ult, row, C(k)));
            auto branch = mlir::scf::IfOp::create(b_, loc_, starts, /*withElseRegion=*/true);
            for (int combine = 0; combine < 2; ++combine) {
              mlir::OpBuilder::InsertionGuard guard(b_);
              b_.setInsertionPointToStart(combine == 0 ? branch.thenBlock() : branch.elseBlock());
              caches_.emplace_back();
              absl::Status st = columns([&](Value jj, Value, const Index& idx) -> absl::Status {
                const Index in = ReduceInputIndex(in_shape.rank(), reduced, ivs, idx);
                Value at = slot(partial, jj);
                for (int64_t id : walk) {
                  const HloInstruction* r = leaves_[id].instruction;
                  Value buffer = partials[position[id]];
                  absl::StatusOr<Value> v = EmitScalar(r->operand(0), in);
                  if (!v.ok()) return v.status();
                  Value result = *v;
                  if (combine == 1) {
                    Value acc = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{at});
                    absl::StatusOr<std::vector<Value>> combined = EmitComputation(r->to_apply(), {acc, *v});
                    if (!combined.ok()) return combined.status();
                    result = (*combined)[0];
                  }
                  mlir::memref::StoreOp::create(b_, loc_, result, buffer, mlir::ValueRange{at});
                }
                return absl::OkStatus();
              });
              caches_.pop_back();
              if (!st.ok()) return st;
            }
            return std::vector<Value>{};
          }).status();
      if (!walked.ok()) return walked;
    }
    // The partials, combined in order, are the outputs.
    return columns([&](Value jj, Value offset, const Index&) -> absl::Status {
      for (int64_t id : group) {
        const HloInstruction* r = leaves_[id].instruction;
        Value buffer = partials[position[id]];
        Value acc = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{slot(C(0), jj)});
        for (int64_t p = 1; p < used[id]; ++p) {
          Value next = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{slot(C(p), jj)});
          absl::StatusOr<std::vector<Value>> combined = EmitComputation(r->to_apply(), {acc, next});
          if (!combined.ok()) return combined.status();
          acc = (*combined)[0];
        }
        mlir::memref::StoreOp::create(b_, loc_, acc, buffers_[num_inputs + id], mlir::ValueRange{offset});
      }
      return absl::OkStatus();
    });
  }

  // The logical index of physical row `row` (all physical dims but the most
  // minor one); the minor dim's entry is left for the caller.
  Index RowIndex(const Shape& s, const std::vector<int64_t>& mtm, Value row) {
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

  Value Min(Value a, Value x) { return mlir::arith::MinSIOp::create(b_, loc_, a, x); }

  // Loops `for iv in [lo, hi)`; leaves the builder inside the body.
  Value OpenLoop(Value lo, Value hi) {
    auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, C(1));
    b_.setInsertionPointToStart(loop.getBody());
    return loop.getInductionVar();
  }

  // The scatter kernel's second nest: one thread walks the updates in
  // row-major order (so duplicate indices combine deterministically, as the
  // evaluator does); a window that does not fit entirely is skipped.
  // Select-and-scatter's walks the source, one row per disjoint slice.
  absl::Status EmitScatterUpdates() {
    llvm::SmallVector<mlir::Type> args(buffer_types_.begin(), buffer_types_.end());
    args.push_back(b_.getIndexType());
    args.push_back(b_.getIndexType());
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(module_->getBody());
    LoopNest nest;
    nest.function = StrCat("kernel_", nests_.size());
    nest.rows = 1;
    nest.inner = 1;
    nest.elements = 1;
    // Select-and-scatter: one row per slice of the source along the
    // dimensions whose windows never overlap, so the rows may run in
    // parallel and each output position still gets its contributions in
    // row-major order.
    std::vector<int64_t> split;
    if (select_and_scatter_) {
      split = DisjointWindowDims();
      const Shape& ss = instruction_.operand(1)->shape();
      nest.rows = 1;
      for (int64_t d : split) nest.rows *= ss.dimensions(d);
      nest.inner = nest.rows == 0 ? 0 : ss.element_count() / nest.rows;
      nest.elements = ss.element_count() * WindowPositions(instruction_.window());
    }
    auto func = mlir::func::FuncOp::create(b_, loc_, nest.function, b_.getFunctionType(args, {}));
    mlir::Block* entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    buffers_.assign(entry->args_begin(), entry->args_begin() + buffer_types_.size());
    Value row = OpenLoop(entry->getArgument(buffer_types_.size()), entry->getArgument(buffer_types_.size() + 1));
    absl::Status status = select_and_scatter_ ? EmitSelectAndScatterLoops(nullptr, 0, row, split)
                                              : EmitScatterUpdateLoops();
    if (!status.ok()) return status;
    b_.setInsertionPointToEnd(entry);
    mlir::func::ReturnOp::create(b_, loc_);
    nests_.push_back(nest);
    return absl::OkStatus();
  }

  // buffers_[buffer][offset] += value, atomically (the GPU's parallel
  // scatter-adds).
  void AtomicAdd(Value value, int64_t buffer, Value offset) {
    const bool is_float = llvm::isa<mlir::FloatType>(value.getType());
    mlir::memref::AtomicRMWOp::create(b_, loc_,
                                      is_float ? mlir::arith::AtomicRMWKind::addf : mlir::arith::AtomicRMWKind::addi,
                                      value, buffers_[buffer], mlir::ValueRange{offset});
  }

  // Calls `body` on every index of `s`: in row-major loops with `thread`
  // null, else on the elements thread, thread + threads, ... (linear in the
  // physical order).
  absl::Status ForEachElement(
      const Shape& s, Value thread, int64_t threads,
      const std::function<absl::StatusOr<std::vector<Value>>(const Index&, const std::vector<Value>&)>& body) {
    if (thread == nullptr) return EmitLoopNest(s.dimensions(), {}, body).status();
    auto loop = mlir::scf::ForOp::create(b_, loc_, thread, C(s.element_count()), C(threads));
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    return body(Delinearize(loop.getInductionVar(), s.dimensions(), MinorToMajor(s)), {}).status();
  }

  // Whether the scatter's updates may be applied by many threads at once with
  // one atomic read-modify-write each: one output whose combiner is an
  // add of its two parameters, in a type the atomic add takes as stored.
  // The sum's order then varies between runs (rounding differs, as XLA's
  // atomic scatter does); other scatters keep the row-major loop.
  bool ScatterUpdatesAreAtomicAdds() const {
    const HloInstruction* h = &instruction_;
    if (!scatter_ || h->operand_count() != 3) return false;
    const HloComputation* c = select_and_scatter_ ? h->scatter() : h->to_apply();
    const HloInstruction* root = c == nullptr ? nullptr : c->root_instruction();
    if (root == nullptr || root->opcode() != HloOpcode::kAdd || c->num_parameters() != 2) return false;
    if (root->operand(0)->opcode() != HloOpcode::kParameter || root->operand(1)->opcode() != HloOpcode::kParameter ||
        root->operand(0) == root->operand(1)) {
      return false;
    }
    switch (h->shape().element_type()) {
      case PrimitiveType::kF32: case PrimitiveType::kF64: case PrimitiveType::kS32: case PrimitiveType::kU32:
      case PrimitiveType::kS64: case PrimitiveType::kU64:
        return true;
      default:
        return false;
    }
  }

  // The scatter updates, emitted at the insertion point (buffers_ set). With
  // `thread` null: in row-major order (so duplicate indices combine
  // deterministically, as the evaluator does), shared by the CPU nest and
  // the GPU's single thread. Else (ScatterUpdatesAreAtomicAdds) update
  // elements thread, thread + threads, ... each added atomically.
  absl::Status EmitScatterUpdateLoops(Value thread = nullptr, int64_t threads = 0) {
    if (select_and_scatter_) return EmitSelectAndScatterLoops(thread, threads, nullptr, {});
    const HloInstruction* h = &instruction_;
    const ScatterDimensionNumbers& sd = h->attrs().scatter_dnums;
    int64_t n = h->operand_count() / 2;
    const Shape& os = h->operand(0)->shape();
    const Shape& is = h->operand(n)->shape();
    const Shape& us = h->operand(n + 1)->shape();
    auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    std::vector<int64_t> window_operand_dims, update_scatter_dims, index_dims, window_size(os.rank(), 1);
    for (int64_t i = 0; i < os.rank(); ++i) {
      if (!contains(sd.inserted_window_dims, i) && !contains(sd.input_batching_dims, i)) window_operand_dims.push_back(i);
    }
    for (int64_t d = 0; d < us.rank(); ++d) {
      if (!contains(sd.update_window_dims, d)) update_scatter_dims.push_back(d);
    }
    if (window_operand_dims.size() != sd.update_window_dims.size()) {
      return absl::InvalidArgumentError(StrCat("codegen: ", h->name(), ": scatter dimension numbers do not match"));
    }
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      window_size[window_operand_dims[k]] = us.dimensions(sd.update_window_dims[k]);
    }
    for (int64_t d = 0; d < is.rank(); ++d) {
      if (d != sd.index_vector_dim) index_dims.push_back(d);
    }
    caches_.clear();
    caches_.emplace_back();
    auto update = [&](const Index& uidx, const std::vector<Value>&) -> absl::StatusOr<std::vector<Value>> {
      Index sidx(is.rank());
      for (size_t j = 0; j < index_dims.size(); ++j) sidx[index_dims[j]] = uidx[update_scatter_dims[j]];
      Index start(os.rank());
      for (int64_t d = 0; d < os.rank(); ++d) start[d] = C(0);
      for (size_t k = 0; k < sd.scatter_dims_to_operand_dims.size(); ++k) {
        Index at = sidx;
        if (sd.index_vector_dim < is.rank()) at[sd.index_vector_dim] = C(static_cast<int64_t>(k));
        Value v = LoadBuffer(n, at);
        start[sd.scatter_dims_to_operand_dims[k]] =
            IsSignedIntegralType(is.element_type())
                ? Value(mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), v))
                : Value(mlir::arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), v));
      }
      for (size_t k = 0; k < sd.input_batching_dims.size(); ++k) {
        start[sd.input_batching_dims[k]] = sidx[sd.scatter_indices_batching_dims[k]];
      }
      Value fits = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
      for (int64_t d = 0; d < os.rank(); ++d) {
        fits = And(fits, Cmp(mlir::arith::CmpIPredicate::sge, start[d], C(0)));
        fits = And(fits, Cmp(mlir::arith::CmpIPredicate::sle, start[d], C(os.dimensions(d) - window_size[d])));
      }
      auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{}, fits, /*withElseRegion=*/false);
      mlir::OpBuilder::InsertionGuard inner_guard(b_);
      b_.setInsertionPoint(if_op.thenBlock()->getTerminator());
      Index dst = start;
      for (size_t k = 0; k < window_operand_dims.size(); ++k) {
        dst[window_operand_dims[k]] = Add(dst[window_operand_dims[k]], uidx[sd.update_window_dims[k]]);
      }
      int64_t num_inputs = h->operand_count();
      if (thread != nullptr) {
        AtomicAdd(LoadBuffer(n + 1, uidx), num_inputs, Linearize(dst, PhysicalStrides(buffer_shapes_[num_inputs])));
        return std::vector<Value>{};
      }
      llvm::SmallVector<Value> reducer_args;
      for (int64_t k = 0; k < n; ++k) reducer_args.push_back(LoadBuffer(num_inputs + k, dst));
      for (int64_t k = 0; k < n; ++k) reducer_args.push_back(LoadBuffer(n + 1 + k, uidx));
      absl::StatusOr<std::vector<Value>> r = EmitComputation(h->to_apply(), reducer_args);
      if (!r.ok()) return r.status();
      Value off = Linearize(dst, PhysicalStrides(buffer_shapes_[num_inputs]));
      for (int64_t k = 0; k < n; ++k) {
        mlir::memref::StoreOp::create(b_, loc_, ToStorage((*r)[k], buffer_shapes_[num_inputs + k].element_type()),
                                      buffers_[num_inputs + k], mlir::ValueRange{off});
      }
      return std::vector<Value>{};
    };
    return ForEachElement(us, thread, threads, update);
  }

  // Select-and-scatter's second nest, emitted at the insertion point
  // (buffers_ set): for each source element, its window in the operand
  // (stride, low padding; positions in the padding are skipped) is walked in
  // row-major order, unrolled, keeping the selected position as the
  // evaluator does: the first valid one, replaced by a later one whenever
  // select(selected, later) is false. The source element is then combined
  // into the output there with the scatter computation. With `thread` null
  // the source is walked in row-major order (a deterministic order for
  // elements whose windows select the same position); else (atomic adds)
  // elements thread, thread + threads, ... each added atomically.
  // The source dimensions whose windows never overlap (size <= stride):
  // source elements that differ in one of them select different positions.
  std::vector<int64_t> DisjointWindowDims() const {
    std::vector<int64_t> dims;
    const std::vector<WindowDimension>& window = instruction_.window().dimensions;
    for (size_t d = 0; d < window.size(); ++d) {
      if (window[d].size <= window[d].stride) dims.push_back(static_cast<int64_t>(d));
    }
    return dims;
  }

  // With `row` (the CPU's nest; `thread` null), only the source elements of
  // slice `row` along the `split` dimensions (row-major over them), the
  // other dimensions in row-major order.
  absl::Status EmitSelectAndScatterLoops(Value thread, int64_t threads, Value row, const std::vector<int64_t>& split) {
    const HloInstruction* h = &instruction_;
    const Shape& os = h->operand(0)->shape();
    const Shape& ss = h->operand(1)->shape();
    const std::vector<WindowDimension>& window = h->window().dimensions;
    const int64_t rank = os.rank();
    const int64_t num_inputs = h->operand_count();
    // Every window offset, row-major.
    std::vector<std::vector<int64_t>> offsets(1);
    for (int64_t d = 0; d < rank; ++d) {
      std::vector<std::vector<int64_t>> next;
      for (const std::vector<int64_t>& o : offsets) {
        for (int64_t k = 0; k < window[d].size; ++k) {
          next.push_back(o);
          next.back().push_back(k);
        }
      }
      offsets = std::move(next);
    }
    caches_.clear();
    caches_.emplace_back();
    auto i1 = [&](bool v) -> Value { return mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), v ? 1 : 0); };
    auto update = [&](const Index& sidx, const std::vector<Value>&) -> absl::StatusOr<std::vector<Value>> {
      Index start(rank);
      for (int64_t d = 0; d < rank; ++d) start[d] = Sub(Mul(sidx[d], window[d].stride), C(window[d].padding_low));
      Value found = i1(false), best;
      Index best_idx(rank);
      for (const std::vector<int64_t>& o : offsets) {
        Value valid = i1(true);
        Index pos(rank);
        for (int64_t d = 0; d < rank; ++d) {
          pos[d] = Add(start[d], C(o[d]));
          valid = And(valid, Cmp(mlir::arith::CmpIPredicate::sge, pos[d], C(0)));
          valid = And(valid, Cmp(mlir::arith::CmpIPredicate::slt, pos[d], C(os.dimensions(d))));
        }
        // A position in the padding reads element 0 instead (in bounds;
        // never selected).
        for (int64_t d = 0; d < rank; ++d) pos[d] = Select(valid, pos[d], C(0));
        Value candidate = LoadBuffer(0, pos);
        if (!best) {
          best = candidate;
          best_idx = pos;
          found = valid;
          continue;
        }
        absl::StatusOr<std::vector<Value>> keep = EmitComputation(h->select(), {best, candidate});
        if (!keep.ok()) return keep.status();
        Value replace = mlir::arith::XOrIOp::create(b_, loc_, (*keep)[0], i1(true));
        Value not_found = mlir::arith::XOrIOp::create(b_, loc_, found, i1(true));
        Value take = And(valid, mlir::arith::OrIOp::create(b_, loc_, not_found, replace));
        best = Select(take, candidate, best);
        for (int64_t d = 0; d < rank; ++d) best_idx[d] = Select(take, pos[d], best_idx[d]);
        found = mlir::arith::OrIOp::create(b_, loc_, found, valid);
      }
      auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{}, found, /*withElseRegion=*/false);
      mlir::OpBuilder::InsertionGuard inner_guard(b_);
      b_.setInsertionPoint(if_op.thenBlock()->getTerminator());
      Value off = Linearize(best_idx, PhysicalStrides(buffer_shapes_[num_inputs]));
      Value source = LoadBuffer(1, sidx);
      if (thread != nullptr) {
        AtomicAdd(source, num_inputs, off);
        return std::vector<Value>{};
      }
      Value current = LoadBuffer(num_inputs, best_idx);
      absl::StatusOr<std::vector<Value>> r = EmitComputation(h->scatter(), {current, source});
      if (!r.ok()) return r.status();
      mlir::memref::StoreOp::create(b_, loc_, ToStorage((*r)[0], buffer_shapes_[num_inputs].element_type()),
                                    buffers_[num_inputs], mlir::ValueRange{off});
      return std::vector<Value>{};
    };
    if (row == nullptr || split.empty()) return ForEachElement(ss, thread, threads, update);
    Index fixed(rank);
    Value rest = row;
    for (size_t i = split.size(); i-- > 0;) {
      const int64_t size = ss.dimensions(split[i]);
      fixed[split[i]] = i == 0 ? rest : Rem(rest, size);
      if (i > 0) rest = Div(rest, size);
    }
    std::vector<int64_t> free_dims, bounds;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(split.begin(), split.end(), d) == split.end()) {
        free_dims.push_back(d);
        bounds.push_back(ss.dimensions(d));
      }
    }
    return EmitLoopNest(bounds, {}, [&](const Index& ivs, const std::vector<Value>& carried) {
             Index sidx = fixed;
             for (size_t i = 0; i < free_dims.size(); ++i) sidx[free_dims[i]] = ivs[i];
             return update(sidx, carried);
           })
        .status();
  }

  absl::Status EmitNests() {
    // Group leaves by dims and layout: each group is one loop nest.
    std::vector<std::vector<int64_t>> groups;
    std::vector<int64_t> order;
    for (int64_t i = 0; i < static_cast<int64_t>(leaves_.size()); ++i) order.push_back(i);
    // Batch norm: the statistics (leaves 1, 2) are computed before output 0
    // reads them.
    if (batch_norm_) order = {1, 2, 0};
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
        // Transpose emitter: the output is walked in kTile x kTile tiles of
        // (row, minor) so that the transposed reads of a tile stay in cache;
        // the parallel unit is a band of kTile rows. Partial tiles at the
        // edges are bounds-checked.
        // 8: with power-of-two row strides a tile's input rows share one L1
        // set, and L1 has 8 ways (measured: 8 is 3x faster than 32 on a
        // 4096x4096 f32 transpose, 16 is 2x slower than 8).
        constexpr int64_t kTile = 8;
        nest.rows = (rows + kTile - 1) / kTile;
        nest.inner = minor;
        Value band = OpenLoop(begin, end);
        Value row0 = Mul(band, kTile);
        Value band_rows = Min(C(kTile), Sub(C(rows), row0));
        auto column_tiles = mlir::scf::ForOp::create(b_, loc_, C(0), C(minor), C(kTile));
        b_.setInsertionPointToStart(column_tiles.getBody());
        Value j0 = column_tiles.getInductionVar();
        Value tile_cols = Min(C(kTile), Sub(C(minor), j0));
        Value rr = OpenLoop(C(0), band_rows);
        Value row = Add(row0, rr);
        Index idx = RowIndex(s, mtm, row);
        Value jj = OpenLoop(C(0), tile_cols);
        Value j = Add(j0, jj);
        idx[mtm[0]] = j;
        status = EmitStores(groups[g], idx, Add(Mul(row, minor), j));
      } else if (IsColumnReductionGroup(groups[g], mtm)) {
        // The unit of work is a block of kColumnBlock output columns of one
        // output row, so that a few outputs still spread over the threads;
        // the threshold then weighs the elements reduced, not the outputs.
        const int64_t blocks = (minor + kColumnBlock - 1) / kColumnBlock;
        nest.rows = rows * blocks;
        nest.inner = std::min(minor, kColumnBlock);
        nest.elements = leaves_[groups[g][0]].instruction->operand(0)->shape().element_count();
        // The partial results, on the stack of the function (not of each
        // task: an alloca in a loop would grow the stack every iteration).
        std::vector<Value> partials;
        for (int64_t id : groups[g]) {
          mlir::Type t = mlir::cast<mlir::MemRefType>(buffer_types_[instruction_.operand_count() + id]).getElementType();
          partials.push_back(
              mlir::memref::AllocaOp::create(b_, loc_, mlir::MemRefType::get({kPartials * kColumnBlock}, t)));
        }
        Value task = OpenLoop(begin, end);
        Value row = Div(task, blocks);
        Value j0 = Mul(Rem(task, blocks), kColumnBlock);
        Value width = Min(C(kColumnBlock), Sub(C(minor), j0));
        status = EmitColumnReductions(groups[g], mtm, partials, RowIndex(s, mtm, row), Mul(row, minor), j0, width);
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

  mlir::MLIRContext* context_;
  const HloInstruction& instruction_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  absl::flat_hash_map<const HloInstruction*, int64_t> input_buffer_;
  absl::flat_hash_map<const HloInstruction*, Value> bindings_;
  std::map<const HloInstruction*, std::string> globals_;
  std::vector<Shape> buffer_shapes_;
  std::vector<mlir::Type> buffer_types_;
  std::vector<Leaf> leaves_;
  std::unique_ptr<PartitionedComputation> partition_;
  std::vector<Value> buffers_;
  std::vector<Cache> caches_;
  const HloInstruction* current_root_ = nullptr;
  std::vector<LoopNest> nests_;
  bool tiled_ = false;  // the transpose emitter's tiled loop nest
  bool batch_norm_ = false;
  bool scatter_ = false;             // scatter or select-and-scatter: two nests
  bool select_and_scatter_ = false;
  bool reassociate_ = false;  // emitting a reduce's reducer
  std::vector<Value> batch_norm_stats_;  // this iteration's statistics
  // Delinearized indices -> (physical strides, the linear offset); only
  // when remember_linear_ (the GPU loop emitter: the CPU backend's
  // convolutions gave wrong results with it, not yet understood).
  bool remember_linear_ = false;
  std::map<std::vector<void*>, std::pair<std::vector<int64_t>, Value>> linear_of_;
};


// ---------------------------------------------------------------------------
// The emitter pipeline.

struct UnrollInnermostLoopsPass
    : public mlir::PassWrapper<UnrollInnermostLoopsPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollInnermostLoopsPass)
  explicit UnrollInnermostLoopsPass(int factor) : factor(factor) {}
  llvm::StringRef getArgument() const override { return "unroll"; }
  llvm::StringRef getDescription() const override { return "Unrolls innermost scf.for loops"; }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> innermost;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      bool has_inner = false;
      loop.getBody()->walk([&](mlir::scf::ForOp) { has_inner = true; });
      if (!has_inner) innermost.push_back(loop);
    });
    for (mlir::scf::ForOp loop : innermost) (void)mlir::loopUnrollByFactor(loop, factor);
  }
  int factor;
};

struct ExpandMathPass : public mlir::PassWrapper<ExpandMathPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandMathPass)
  llvm::StringRef getArgument() const override { return "expand-math"; }
  llvm::StringRef getDescription() const override {
    return "Polynomial approximations of tanh, erf, exp, expm1, log, log1p (vectorizable)";
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::populateMathPolynomialApproximationPatterns(patterns, [](llvm::StringRef name) {
      name.consume_front("math.");
      return name == "tanh" || name == "erf" || name == "exp" || name == "expm1" || name == "log" ||
             name == "log1p";
    });
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

class ObserverInstrumentation : public mlir::PassInstrumentation {
 public:
  ObserverInstrumentation(std::function<void(const EmitterPassSnapshot&)> observer, bool wants_text,
                          std::string kernel)
      : observer_(std::move(observer)), wants_text_(wants_text), kernel_(std::move(kernel)) {}
  void runBeforePass(mlir::Pass* pass, mlir::Operation* op) override {
    before_.push_back(wants_text_ ? Print(op) : std::string());
    start_.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPassFailed(mlir::Pass* pass, mlir::Operation* op) override {
    start_.pop_back();
    before_.pop_back();
  }
  void runAfterPass(mlir::Pass* pass, mlir::Operation* op) override {
    EmitterPassSnapshot s;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_.back()).count();
    start_.pop_back();
    s.before = std::move(before_.back());
    before_.pop_back();
    s.kernel_name = kernel_;
    s.pass_name = pass->getArgument().str();
    if (wants_text_) s.after = Print(op);
    observer_(s);
  }

 private:
  static std::string Print(mlir::Operation* op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }
  std::function<void(const EmitterPassSnapshot&)> observer_;
  bool wants_text_;
  std::string kernel_;
  // Nested pipelines run passes inside passes: one entry per open pass.
  std::vector<std::string> before_;
  std::vector<std::chrono::steady_clock::time_point> start_;
};


// Flops of the kernel (elementwise ops, dots, reduces) for KernelRecords.
inline int64_t CountFlops(const HloInstruction& h) {
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

}  // namespace codegen_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_
