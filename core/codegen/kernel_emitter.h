// Internal to core/codegen (never include it outside): the elemental
// emitter shared by the CPU and the GPU code generators.
//
// KernelEmitter builds one MLIR module (func, arith, math, scf, memref) for
// one kernel: a fusion or an unfused op. Every HLO value is emitted
// elementally (EmitElement: the value at one multi-index), a fusion's
// computation split into subgraph functions (computation_partitioner.h).
// Emit() adds the CPU's entry functions, one `(buffers..., begin, end)` loop
// nest per group of output leaves, which cpu_kernel_compiler.cc lowers and
// runs on its thread pool; gpu_kernel_compiler.cc derives GpuKernelEmitter,
// which calls Prepare() and Finish() around its own GPU entry function.
//
// The member definitions live in one file per family of ops:
//   kernel_emitter.cc                        what compiles, layout helpers, set-up, the element
//                                            cache, index arithmetic, functions and CPU loop nests
//   kernel_emitter_elemental.cc              unary/binary/compare/convert and every other op of
//                                            EmitOp's switch, constants
//   kernel_emitter_reduction.cc              reduce, reduce-window, batch-norm statistics, the
//                                            CPU's column-reduction nests
//   kernel_emitter_dot_convolution_gather.cc dot, convolution, gather
//   kernel_emitter_transpose.cc              the CPU's tiled transpose nest
//   kernel_emitter_scatter.cc                scatter and select-and-scatter updates
// The emitter pipeline both targets run afterwards is emitter_pipeline.h.
#ifndef PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_
#define PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/codegen/computation_partitioner.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace passlab {
namespace codegen_internal {

using mlir::Value;
using Index = llvm::SmallVector<Value, 6>;

// ---------------------------------------------------------------------------
// What can be compiled.

bool SupportedElementType(PrimitiveType t);
// A static array of a supported element type without tiles.
absl::Status CheckArrayShape(const Shape& shape, const HloInstruction& h);
// CheckArrayShape on every leaf of a (tuple) shape.
absl::Status CheckShapeLeaves(const Shape& shape, const HloInstruction& h);

// The largest select-and-scatter window the emitter unrolls.
inline constexpr int64_t kMaxSelectAndScatterWindow = 256;

// The number of positions in a window (the product of its sizes).
int64_t WindowPositions(const Window& window);

// Opcodes the elemental emitter handles (inside fusions or alone).
bool EmittableOpcode(HloOpcode op);

// Whether `h`'s element at any in-range index may be computed whether or not
// it is used: a parameter, constant or iota moved only by ops that change
// the index (broadcast, transpose, reshape, bitcast, slice, reverse, copy,
// convert), so every load it makes stays inside its buffer. Pad and
// reduce-window read such an operand at a clamped index and select the
// padding instead of branching around the read: straight-line code that
// LLVM's loop vectorizer takes. The ResNet max-pool gradient fusion (nine
// padded slices and a padded reduce-window per element; fusion.354 of the
// ResNet-18 step, fusion.906 of ResNet-50's) took 3.2 ms per step with the
// branches and 0.32 ms without (2 threads, `passlab run --model resnet18
// --batch 8 --image-size 64 --threads 2`).
bool SpeculatableRead(const HloInstruction& h);
// Whether every instruction of `c` is a parameter, constant or a
// side-effect-free, trap-free scalar op (add, multiply, max, min, and, or,
// compare, select): a reducer that may combine a value it then discards.
bool SpeculatableReducer(const HloComputation& c);

// Whether one instruction (and the computations it calls) can be emitted.
absl::Status CheckOne(const HloInstruction& h);
// CheckOne on every instruction of a computation (no nested fusions).
absl::Status CheckComputation(const HloComputation& c);

// ---------------------------------------------------------------------------
// Layout helpers.

// The shape's layout, or the default (row-major) one.
std::vector<int64_t> MinorToMajor(const Shape& s);

// Element strides of each logical dimension in the dense physical buffer.
std::vector<int64_t> PhysicalStrides(const Shape& s);

struct Leaf {
  const HloInstruction* instruction;
  int64_t tuple_index;  // -1: the instruction's array result
  Shape shape;
};

// The array leaves `h` produces: a tuple's operands, a tuple-shaped
// instruction's elements, else `h` itself.
void FlattenLeaves(const HloInstruction* h, std::vector<Leaf>& out);

// One output loop nest: its entry function and the output leaves it writes.
struct LoopNest {
  std::string function;
  std::vector<int64_t> leaf_ids;
  int64_t rows = 1;       // product of the non-minor physical dims (or chunks)
  int64_t inner = 1;      // minor dim (or chunk size)
  int64_t elements = 0;
};

// Flops of the kernel (elementwise ops, dots, reduces) for KernelRecords.
int64_t CountFlops(const HloInstruction& h);

// ---------------------------------------------------------------------------
// The emitter: builds one MLIR module for one kernel.

class KernelEmitter {
 public:
  KernelEmitter(mlir::MLIRContext* context, const HloInstruction& instruction);
  virtual ~KernelEmitter();

  // The CPU kernel: subgraph functions and one `(buffers..., begin, end)`
  // entry function per loop nest.
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Emit();

  const std::vector<LoopNest>& nests() const { return nests_; }
  const std::vector<Shape>& buffer_shapes() const { return buffer_shapes_; }

 protected:
  // --- set-up (kernel_emitter.cc) -------------------------------------------
  // Creates the module, the buffer types, the output leaves and the subgraph
  // functions (shared by the CPU and GPU entry functions).
  absl::Status Prepare();
  // The emitted module, verified.
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> Finish();

  // --- types -----------------------------------------------------------------
  // How a value is stored in a buffer: pred is i8.
  mlir::Type StorageType(PrimitiveType t);
  // The type values have while computing: pred is i1, f16/bf16 are f32.
  mlir::Type ComputeType(PrimitiveType t);
  static bool IsNarrowFloat(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }
  Value FromStorage(Value v, PrimitiveType t);
  Value ToStorage(Value v, PrimitiveType t);
  // Rounds an f32 value to f16/bf16 precision (every op of a narrow type
  // rounds its result, as the evaluator does).
  Value Round(Value v, PrimitiveType t);

  // --- index arithmetic (folding constant 0 and 1 operands) -------------------
  Value C(int64_t v);
  static std::optional<int64_t> ConstOf(Value v);
  Value Add(Value a, Value x);
  Value Sub(Value a, Value x);
  Value Mul(Value a, int64_t k);
  Value Div(Value a, int64_t k);
  Value Rem(Value a, int64_t k);
  Value Cmp(mlir::arith::CmpIPredicate p, Value a, Value x);
  Value And(Value a, Value x);
  Value Select(Value c, Value t, Value f);
  Value Min(Value a, Value x);
  // The linear offset of `idx` with `strides`.
  Value Linearize(const Index& idx, const std::vector<int64_t>& strides);
  // The multi-index of `linear` over `dims` walked in `order_minor_to_major`.
  Index Delinearize(Value linear, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& order_minor_to_major);
  // The logical index of physical row `row` (all physical dims but the most
  // minor one); the minor dim's entry is left for the caller.
  Index RowIndex(const Shape& s, const std::vector<int64_t>& mtm, Value row);
  // Loops `for iv in [lo, hi)`; leaves the builder inside the body.
  Value OpenLoop(Value lo, Value hi);

  // --- buffers ---------------------------------------------------------------
  // Buffer `buffer`'s element at logical index `idx`, in its compute type.
  Value LoadBuffer(int64_t buffer, const Index& idx);

  // --- elemental emission (kernel_emitter.cc) ----------------------------------
  // (instruction, index) -> its values, one map per open region.
  using Cache = std::map<std::pair<const HloInstruction*, std::vector<void*>>, std::vector<Value>>;
  std::vector<void*> Key(const Index& idx);
  // The values of `h` at `idx` (one per tuple element for a tuple-shaped
  // reduce), from the innermost cache that has them, else emitted.
  absl::StatusOr<std::vector<Value>> EmitElement(const HloInstruction* h, const Index& idx);
  // EmitElement of an array-shaped instruction.
  absl::StatusOr<Value> EmitScalar(const HloInstruction* h, const Index& idx);
  // A binding, an input buffer's load, a call of another subgraph's
  // function, else EmitOp.
  absl::StatusOr<std::vector<Value>> EmitUncached(const HloInstruction* h, const Index& idx);
  llvm::SmallVector<mlir::Type> ResultTypes(const HloInstruction* h);
  // Emits a scalar computation (reducer, map function) on given values, with
  // its own cache (its instructions are emitted once per call site).
  absl::StatusOr<std::vector<Value>> EmitComputation(const HloComputation* c, llvm::ArrayRef<Value> args);
  mlir::FloatType FloatTy(Value v);
  Value FConst(mlir::Type t, double v);
  Value IConst(mlir::Type t, int64_t v);
  // Emits `then_fn` when `cond` holds and `else_fn` otherwise, both yielding
  // one value of type `type`.
  absl::StatusOr<Value> EmitIf(Value cond, mlir::Type type, const std::function<absl::StatusOr<Value>()>& then_fn,
                               const std::function<absl::StatusOr<Value>()>& else_fn);
  // Emits nested scf.for loops over `bounds` carrying `init` values; `body`
  // gets the induction variables and the carried values and returns the new
  // carried values.
  absl::StatusOr<std::vector<Value>> EmitLoopNest(
      const std::vector<int64_t>& bounds, std::vector<Value> init,
      const std::function<absl::StatusOr<std::vector<Value>>(const Index&, const std::vector<Value>&)>& body);

  // --- elemental ops (kernel_emitter_elemental.cc) ------------------------------
  // XLA's convert: NaN -> 0 and saturation for float -> int.
  absl::StatusOr<Value> Convert(Value v, PrimitiveType from, PrimitiveType to);
  Value CompareValues(Value x, Value y, PrimitiveType t, ComparisonDirection dir, ComparisonType ctype);
  absl::StatusOr<Value> Binary(HloOpcode op, Value x, Value y, PrimitiveType t, const HloInstruction* h);
  absl::StatusOr<Value> Unary(HloOpcode op, Value x, PrimitiveType t, const HloInstruction* h);
  absl::StatusOr<Value> EmitConstant(const HloInstruction* h, const Index& idx);
  // The value(s) of `h` at `idx`: one case per opcode.
  absl::StatusOr<std::vector<Value>> EmitOp(const HloInstruction* h, const Index& idx);

  // --- reductions (kernel_emitter_reduction.cc) ----------------------------------
  // A reduce's reduced dims, major to minor in its input's layout: the
  // order its loop nest walks them (the innermost loop walks the most minor
  // reduced dimension).
  static std::vector<int64_t> ReducedDims(const HloInstruction* reduce);
  // The index into a reduce's input of output element `out` at the reduced
  // dims' induction variables `ivs` (in ReducedDims order).
  static Index ReduceInputIndex(int64_t rank, const std::vector<int64_t>& reduced, const Index& ivs,
                                const Index& out);
  absl::StatusOr<std::vector<Value>> EmitReduce(const HloInstruction* h, const Index& idx);
  absl::StatusOr<Value> EmitReduceWindow(const HloInstruction* h, const Index& idx);
  // Output `tuple_index` of batch-norm-training / batch-norm-grad at `idx`.
  absl::StatusOr<Value> EmitBatchNormLeaf(const HloInstruction* h, int64_t tuple_index, const Index& idx);
  // Column reductions: every leaf of a nest is a single-input reduce (no
  // epilogue) of a type the accumulator can be stored as, and its input's
  // most minor dimension is kept and is the output's most minor one (seed
  // 000's column reduction: batch-norm statistics over N, H, W of NHWC).
  // The per-output loop over the reduced dims would walk the input with a
  // stride, one column at a time; EmitColumnReductions interchanges it.
  static constexpr int64_t kColumnBlock = 64;
  static constexpr int64_t kPartials = 16;
  bool IsColumnReductionGroup(const std::vector<int64_t>& group, const std::vector<int64_t>& out_mtm) const;
  // The body of the entry function of a column-reduction nest over output
  // shape `s` (`rows` x `minor` physically): tasks [begin, end) of blocks of
  // kColumnBlock columns; sets `nest`'s extent.
  absl::Status EmitColumnReductionNest(const std::vector<int64_t>& group, const Shape& s,
                                       const std::vector<int64_t>& mtm, int64_t rows, int64_t minor, Value begin,
                                       Value end, LoopNest& nest);
  // One task of a column-reduction nest: output columns [j0, j0 + width) of
  // the output row at `row_idx` (linear offset `row_base`).
  absl::Status EmitColumnReductions(const std::vector<int64_t>& group, const std::vector<int64_t>& out_mtm,
                                    const std::vector<Value>& partials, const Index& row_idx, Value row_base,
                                    Value j0, Value width);

  // --- dot, convolution, gather (kernel_emitter_dot_convolution_gather.cc) -----
  absl::StatusOr<Value> EmitDot(const HloInstruction* h, const Index& idx);
  absl::StatusOr<Value> EmitConvolution(const HloInstruction* h, const Index& idx);
  absl::StatusOr<Value> EmitGather(const HloInstruction* h, const Index& idx);

  // --- transpose (kernel_emitter_transpose.cc) ------------------------------------
  // The body of the entry function of a tiled transpose nest over output
  // shape `s` (`rows` x `minor` physically): tasks [begin, end) of bands of
  // rows; sets `nest`'s extent.
  absl::Status EmitTransposeNest(const std::vector<int64_t>& group, const Shape& s, const std::vector<int64_t>& mtm,
                                 int64_t rows, int64_t minor, Value begin, Value end, LoopNest& nest);

  // --- functions and CPU entry points (kernel_emitter.cc) ---------------------------
  // A subgraph's private function `(buffers..., index...) -> values`.
  absl::Status EmitSubgraphFunction(const Subgraph& s);
  // Stores every leaf of `group` at logical index `idx` / physical offset
  // `out_offset`.
  absl::Status EmitStores(const std::vector<int64_t>& group, const Index& idx, Value out_offset);
  // The CPU's entry functions: output leaves grouped by dims and layout, one
  // loop nest per group (tiled for transposes, blocked for column
  // reductions, rows of the minor dim otherwise).
  absl::Status EmitNests();
  // Output leaves grouped by dims and layout, in `order`: each group is one
  // loop nest (CPU) or one thread mapping (GPU).
  std::vector<std::vector<int64_t>> LeafGroups(const std::vector<int64_t>& order) const;

  // --- scatter and select-and-scatter (kernel_emitter_scatter.cc) -------------------
  // The scatter kernel's second nest (the CPU's entry function): the updates
  // in order, or select-and-scatter's source one row per disjoint slice.
  absl::Status EmitScatterUpdates();
  // buffers_[buffer][offset] += value, atomically (the GPU's parallel
  // scatter-adds).
  void AtomicAdd(Value value, int64_t buffer, Value offset);
  // Calls `body` on every index of `s`: in row-major loops with `thread`
  // null, else on the elements thread, thread + threads, ... (linear in the
  // physical order).
  absl::Status ForEachElement(
      const Shape& s, Value thread, int64_t threads,
      const std::function<absl::StatusOr<std::vector<Value>>(const Index&, const std::vector<Value>&)>& body);
  // Whether the scatter's updates may be applied by many threads at once with
  // one atomic read-modify-write each.
  bool ScatterUpdatesAreAtomicAdds() const;
  // The scatter updates, emitted at the insertion point (buffers_ set). With
  // `thread` null: in row-major order (so duplicate indices combine
  // deterministically, as the evaluator does), shared by the CPU nest and
  // the GPU's single thread. Else (ScatterUpdatesAreAtomicAdds) update
  // elements thread, thread + threads, ... each added atomically.
  absl::Status EmitScatterUpdateLoops(Value thread = nullptr, int64_t threads = 0);
  // The source dimensions whose windows never overlap (size <= stride):
  // source elements that differ in one of them select different positions.
  std::vector<int64_t> DisjointWindowDims() const;
  // Select-and-scatter's second nest, emitted at the insertion point
  // (buffers_ set); with `row`, only slice `row` along `split`.
  absl::Status EmitSelectAndScatterLoops(Value thread, int64_t threads, Value row, const std::vector<int64_t>& split);

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

}  // namespace codegen_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_KERNEL_EMITTER_H_
