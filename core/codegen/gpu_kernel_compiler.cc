// The GPU code generator: the shared elemental emitter (kernel_emitter.h)
// with seed 000's GPU entry functions, lowered by the shared emitter
// pipeline (emitter_pipeline.h) through the gpu/NVVM dialects to LLVM's
// NVPTX backend. See gpu_kernel_compiler.h.
#include "core/codegen/gpu_kernel_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include "core/codegen/emitter_pipeline.h"
#include "core/codegen/fusion_analysis.h"
#include "core/codegen/kernel_emitter.h"
#include "core/codegen/persistent_kernel_cache.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/DialectConversion.h"

namespace passlab {
namespace {

using namespace codegen_internal;  // NOLINT: the shared emitter's internals

constexpr int64_t kWarpSize = 32;
// Seed 000: 128 threads per block for the loop and transpose emitters.
constexpr int64_t kLoopBlock = 128;
// The transpose tile: 32x32 elements, rows padded to 33 against shared
// memory bank conflicts; 128 threads = 32 x 4, each walks 8 tile rows.
constexpr int64_t kTile = 32;
constexpr int64_t kTileRowStride = 33;
constexpr int64_t kTransposeRowsPerPass = 4;
// Reductions use 256-thread blocks (8 warps).
constexpr int64_t kReductionBlock = 256;
// Threads per block of the scatter kernel when its updates are atomic adds
// (the whole kernel when it is not in place: EmitGridScatter).
constexpr int64_t kScatterBlock = 1024;
// The largest x dimension of a grid (CUDA's limit, 2^31 - 1).
constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kReductionWarps = kReductionBlock / kWarpSize;
// Row reductions with at least this many reduced elements get a whole block
// per row (cross-warp step in shared memory); shorter rows a warp each.
constexpr int64_t kBlockPerRowThreshold = 512;
// Column reductions: 32 warps of 32 lanes per block, as XLA's
// ColumnReductionFusion (kTileSize x kTileSize threads,
// xla/backends/gpu/codegen/emitters/reduction.cc). With 8 warps each
// thread walked 4x as many rows, and ResNet-50's batch-norm statistics
// (f32[8,16,16,64] -> f32[64], 2 blocks) took 47-53 us on an H200.
constexpr int64_t kColumnReductionWarps = 32;

// The entry function's name: the instruction's name as a PTX identifier.
std::string EntryName(const HloInstruction& h) {
  std::string name = "kernel_";
  for (char c : h.name()) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// Physical dims of a shape, major to minor.
std::vector<int64_t> MajorToMinor(const Shape& s) {
  std::vector<int64_t> mtm = MinorToMajor(s);
  return std::vector<int64_t>(mtm.rbegin(), mtm.rend());
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dimensions(d);
  return p;
}

class GpuKernelEmitter : public KernelEmitter {
 public:
  GpuKernelEmitter(mlir::MLIRContext* context, const HloInstruction& instruction, int vector_width)
      : KernelEmitter(context, instruction), requested_width_(vector_width), entry_(EntryName(instruction)) {}

  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> EmitGpu() {
    RETURN_IF_ERROR(Prepare());
    OpenEntry();
    absl::StatusOr<bool> done = false;
    FusionAnalysis analysis = AnalyzeFusion(instruction_);
    if (scatter_ || batch_norm_) {
      done = EmitSingleBlock();
    } else if (analysis.kind == EmitterKind::kReduction) {
      done = EmitReduction(analysis);
    } else if (analysis.kind == EmitterKind::kTranspose) {
      done = EmitTranspose(analysis);
    }
    if (!done.ok()) return done.status();
    if (!*done) {
      // Everything else (and the reductions and transposes the tiled
      // emitters do not take): the loop emitter.
      RETURN_IF_ERROR(EmitLoop());
    }
    mlir::func::ReturnOp::create(b_, loc_);
    return Finish();
  }

  const std::string& entry() const { return entry_; }
  const GpuLaunchDimensions& launch() const { return launch_; }
  EmitterKind emitted_kind() const { return emitted_kind_; }

 private:
  // The entry function `(buffers...)`; the builder is left in its body.
  void OpenEntry() {
    b_.setInsertionPointToEnd(module_->getBody());
    auto func = mlir::func::FuncOp::create(b_, loc_, entry_, b_.getFunctionType(buffer_types_, {}));
    mlir::Block* entry = func.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    buffers_.assign(entry->args_begin(), entry->args_end());
    caches_.clear();
    caches_.emplace_back();
    thread_id_ = mlir::gpu::ThreadIdOp::create(b_, loc_, mlir::gpu::Dimension::x);
    block_id_ = mlir::gpu::BlockIdOp::create(b_, loc_, mlir::gpu::Dimension::x);
  }

  std::vector<int64_t> AllLeaves() const {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < static_cast<int64_t>(leaves_.size()); ++i) order.push_back(i);
    return order;
  }

  // Runs `body` when `cond` holds (no results).
  absl::Status If(Value cond, const std::function<absl::Status()>& body) {
    auto if_op = mlir::scf::IfOp::create(b_, loc_, mlir::TypeRange{}, cond, /*withElseRegion=*/false);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(if_op.thenBlock()->getTerminator());
    std::vector<Cache> saved = caches_;
    caches_.emplace_back();
    absl::Status s = body();
    caches_ = std::move(saved);
    return s;
  }
  Value Lt(Value a, Value x) { return Cmp(mlir::arith::CmpIPredicate::ult, a, x); }
  Value Eq(Value a, Value x) { return Cmp(mlir::arith::CmpIPredicate::eq, a, x); }

  // Stores output leaf `leaf_id` at logical index `idx`, emitting its root's
  // subgraph inline so that bindings (a hero's reduced or transposed value)
  // take effect.
  absl::Status StoreLeafInline(int64_t leaf_id, const Index& idx) {
    const Leaf& leaf = leaves_[leaf_id];
    caches_.clear();
    caches_.emplace_back();
    current_root_ = leaf.instruction;
    absl::StatusOr<std::vector<Value>> r = EmitElement(leaf.instruction, idx);
    current_root_ = nullptr;
    if (!r.ok()) return r.status();
    Value v = (*r)[leaf.tuple_index < 0 ? 0 : leaf.tuple_index];
    Value off = Linearize(idx, PhysicalStrides(leaf.shape));
    mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, leaf.shape.element_type()),
                                  buffers_[instruction_.operand_count() + leaf_id], mlir::ValueRange{off});
    return absl::OkStatus();
  }

  // Whether `hero` is emitted inside `root`'s subgraph function (so a
  // binding of the hero is seen when the root is emitted inline).
  bool InRootSubgraph(const HloInstruction* hero, const HloInstruction* root) const {
    if (hero == root || partition_ == nullptr) return true;
    return partition_->SubgraphOf(hero) == partition_->SubgraphOf(root);
  }

  // A shared-memory buffer of `elements` values of `type` (a private
  // memref.global in address space 3, the NVPTX `.shared` space).
  Value SharedMemory(const std::string& name, int64_t elements, mlir::Type type) {
    auto memref_type = mlir::MemRefType::get({elements}, type, mlir::MemRefLayoutAttrInterface{},
                                             b_.getI64IntegerAttr(3));
    {
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(module_->getBody());
      mlir::memref::GlobalOp::create(b_, loc_, name, b_.getStringAttr("private"), memref_type, b_.getUnitAttr(),
                                     /*constant=*/false, b_.getI64IntegerAttr(16));
    }
    return mlir::memref::GetGlobalOp::create(b_, loc_, memref_type, mlir::FlatSymbolRefAttr::get(context_, name));
  }

  // --- loop emitter ------------------------------------------------------------
  absl::Status EmitLoop() {
    emitted_kind_ = EmitterKind::kLoop;
    std::vector<std::vector<int64_t>> groups = LeafGroups(AllLeaves());
    std::vector<int64_t> elements;
    int64_t max_bits = 8;
    for (const Leaf& l : leaves_) max_bits = std::max<int64_t>(max_bits, PrimitiveBitWidth(l.shape.element_type()));
    for (const auto& g : groups) elements.push_back(leaves_[g[0]].shape.element_count());
    GpuLoopLaunch loop = LoopLaunch(elements, max_bits, requested_width_);
    launch_.grid_x = loop.grid;
    launch_.block_x = loop.block;
    Value first = Mul(Add(Mul(block_id_, loop.block), thread_id_), loop.vector_width);
    remember_linear_ = true;
    for (const auto& g : groups) {
      const Shape& s = leaves_[g[0]].shape;
      // vector_width divides every group's element count: one bounds check
      // covers a thread's elements.
      RETURN_IF_ERROR(If(Lt(first, C(s.element_count())), [&]() -> absl::Status {
        // All elements are computed before any is stored: an output may
        // alias an input (in-place ops), so LLVM could not otherwise merge
        // the loads of consecutive elements into vector loads.
        std::vector<std::pair<Value, int64_t>> stores;  // value, leaf
        std::vector<Value> offsets;
        for (int64_t v = 0; v < loop.vector_width; ++v) {
          Value linear = Add(first, C(v));
          Index idx = Delinearize(linear, s.dimensions(), MinorToMajor(s));
          caches_.clear();
          caches_.emplace_back();
          for (int64_t leaf_id : g) {
            const Leaf& leaf = leaves_[leaf_id];
            // The root's subgraph inline: its loads see the linear index.
            current_root_ = leaf.instruction;
            absl::StatusOr<std::vector<Value>> r = EmitElement(leaf.instruction, idx);
            current_root_ = nullptr;
            if (!r.ok()) return r.status();
            stores.push_back({ToStorage((*r)[leaf.tuple_index < 0 ? 0 : leaf.tuple_index], leaf.shape.element_type()),
                              leaf_id});
            offsets.push_back(linear);
          }
        }
        for (size_t i = 0; i < stores.size(); ++i) {
          mlir::memref::StoreOp::create(b_, loc_, stores[i].first,
                                        buffers_[instruction_.operand_count() + stores[i].second],
                                        mlir::ValueRange{offsets[i]});
        }
        return absl::OkStatus();
      }));
    }
    return absl::OkStatus();
  }

  // --- single block: nests that depend on each other ------------------------------
  // Batch-norm training/grad (statistics, then the normalized output) and
  // scatter (copy, then the updates: atomic adds by every thread where
  // ScatterUpdatesAreAtomicAdds, else in order on one thread): one block
  // whose threads stride over each nest, with a barrier between nests.
  absl::StatusOr<bool> EmitSingleBlock() {
    emitted_kind_ = AnalyzeFusion(instruction_).kind;
    bool atomic_scatter = scatter_ && ScatterUpdatesAreAtomicAdds();
    if (atomic_scatter && !select_and_scatter_) return EmitGridScatter();
    const int64_t block = atomic_scatter ? kScatterBlock : kReductionBlock;
    launch_.grid_x = 1;
    launch_.block_x = block;
    RETURN_IF_ERROR(EmitBlockNests(block));
    if (atomic_scatter) {
      RETURN_IF_ERROR(EmitScatterUpdateLoops(thread_id_, block));
      return true;
    }
    if (scatter_) {
      RETURN_IF_ERROR(If(Eq(thread_id_, C(0)), [&] { return EmitScatterUpdateLoops(); }));
    }
    return true;
  }

  // The first nests of the single-block kernel (batch-norm statistics, then
  // the normalized output; scatter's copy of the operand), the block's
  // `block` threads striding over each, a barrier after each.
  absl::Status EmitBlockNests(int64_t block) {
    std::vector<int64_t> order = AllLeaves();
    if (batch_norm_) order = {1, 2, 0};
    std::vector<std::vector<int64_t>> groups = LeafGroups(order);
    for (size_t g = 0; g < groups.size(); ++g) {
      const Shape& s = leaves_[groups[g][0]].shape;
      auto loop = mlir::scf::ForOp::create(b_, loc_, thread_id_, C(s.element_count()), C(block));
      {
        mlir::OpBuilder::InsertionGuard guard(b_);
        b_.setInsertionPointToStart(loop.getBody());
        Value linear = loop.getInductionVar();
        Index idx = Delinearize(linear, s.dimensions(), MinorToMajor(s));
        RETURN_IF_ERROR(EmitStores(groups[g], idx, linear));
      }
      mlir::gpu::BarrierOp::create(b_, loc_);
    }
    return absl::OkStatus();
  }

  // A scatter whose updates are atomic adds, over a grid: XLA's scatter
  // emitter (ScatterWithDistributedUpdates in
  // xla/backends/gpu/codegen/emitters/scatter.cc) gives each thread of a
  // grid of ceil(update elements / block) blocks its update elements
  // (CalculateLaunchDimensions in xla/service/gpu/launch_dimensions.cc; past
  // the x limit XLA adds a y dimension, here the threads stride over the
  // updates instead), each combined atomically into the output. XLA's
  // scatter always updates its operand's buffer in place; passlab's buffer
  // assignment makes the output alias the operand only when the operand is
  // dead afterwards (core/runtime/buffer_assignment.cc), and an operand copy
  // by some blocks cannot be ordered before other blocks' adds. So the
  // kernel compares the two buffers: in place, every thread of the grid
  // takes update elements t, t + grid * block, ...; else block 0 alone copies
  // the operand, synchronizes and adds every update (the single-block
  // kernel), and the other blocks return.
  absl::StatusOr<bool> EmitGridScatter() {
    const int64_t updates = instruction_.operand(2)->shape().element_count();
    launch_.block_x = kScatterBlock;
    launch_.grid_x = std::clamp<int64_t>((updates + kScatterBlock - 1) / kScatterBlock, 1, kMaxGridX);
    const int64_t output = instruction_.operand_count();
    Value operand_address = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, buffers_[0]);
    Value output_address = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, buffers_[output]);
    RETURN_IF_ERROR(If(Eq(operand_address, output_address), [&] {
      return EmitScatterUpdateLoops(Add(Mul(block_id_, kScatterBlock), thread_id_), launch_.grid_x * kScatterBlock);
    }));
    Value copy_first = Cmp(mlir::arith::CmpIPredicate::ne, operand_address, output_address);
    RETURN_IF_ERROR(If(And(copy_first, Eq(block_id_, C(0))), [&]() -> absl::Status {
      RETURN_IF_ERROR(EmitBlockNests(kScatterBlock));
      return EmitScatterUpdateLoops(thread_id_, kScatterBlock);
    }));
    return true;
  }

  // --- transpose emitter ----------------------------------------------------------
  absl::StatusOr<bool> EmitTranspose(const FusionAnalysis& analysis) {
    if (leaves_.size() != 1 || leaves_[0].tuple_index >= 0) return false;
    const HloInstruction* root = leaves_[0].instruction;
    const HloInstruction* hero = analysis.heroes.empty() ? nullptr : analysis.heroes[0];
    if (hero == nullptr || hero->opcode() != HloOpcode::kTranspose || !InRootSubgraph(hero, root)) return false;
    const Shape& s = leaves_[0].shape;
    if (s.rank() < 2) return false;
    // a: the output's most minor physical dim; b: the output dim that is the
    // operand's most minor physical dim. Reads are coalesced along b, writes
    // along a.
    int64_t a = MinorToMajor(s)[0];
    int64_t operand_minor = MinorToMajor(hero->operand(0)->shape())[0];
    int64_t b = -1;
    for (int64_t k = 0; k < s.rank(); ++k) {
      if (hero->dimensions()[k] == operand_minor) b = k;
    }
    if (b < 0 || b == a) return false;
    emitted_kind_ = EmitterKind::kTranspose;
    std::vector<int64_t> others;
    for (int64_t d : MajorToMinor(s)) {
      if (d != a && d != b) others.push_back(d);
    }
    int64_t size_a = s.dimensions(a), size_b = s.dimensions(b);
    int64_t tiles_a = (size_a + kTile - 1) / kTile, tiles_b = (size_b + kTile - 1) / kTile;
    launch_.grid_x = std::max<int64_t>(1, Product(s, others) * tiles_a * tiles_b);
    launch_.block_x = kTile * kTransposeRowsPerPass;
    // Block -> (other dims, tile along a, tile along b).
    Value tile_b = Rem(block_id_, tiles_b);
    Value tile_a = Rem(Div(block_id_, tiles_b), tiles_a);
    Value rest = Div(block_id_, tiles_b * tiles_a);
    Index base(s.rank());
    for (auto it = others.rbegin(); it != others.rend(); ++it) {
      bool last = std::next(it) == others.rend();
      base[*it] = last ? rest : Rem(rest, s.dimensions(*it));
      if (!last) rest = Div(rest, s.dimensions(*it));
    }
    Value a0 = Mul(tile_a, kTile), b0 = Mul(tile_b, kTile);
    Value tx = Rem(thread_id_, kTile), ty = Div(thread_id_, kTile);
    PrimitiveType t = hero->shape().element_type();
    mlir::Type storage = StorageType(t);
    Value tile = SharedMemory("transpose_tile", kTile * kTileRowStride, storage);
    auto tile_loop = [&](const std::function<absl::Status(Value row)>& body) -> absl::Status {
      auto loop = mlir::scf::ForOp::create(b_, loc_, C(0), C(kTile / kTransposeRowsPerPass), C(1));
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(loop.getBody());
      std::vector<Cache> saved = caches_;
      caches_.emplace_back();
      absl::Status st = body(Add(ty, Mul(loop.getInductionVar(), kTransposeRowsPerPass)));
      caches_ = std::move(saved);
      return st;
    };
    // Read loop: tile[i][j] = hero operand at (a0 + i, b0 + j), consecutive
    // threads along b (the operand's minor dim).
    RETURN_IF_ERROR(tile_loop([&](Value i) {
      Index idx = base;
      idx[a] = Add(a0, i);
      idx[b] = Add(b0, tx);
      return If(And(Lt(idx[a], C(size_a)), Lt(idx[b], C(size_b))), [&]() -> absl::Status {
        Index operand_idx(s.rank());
        for (int64_t k = 0; k < s.rank(); ++k) operand_idx[hero->dimensions()[k]] = idx[k];
        ASSIGN_OR_RETURN(Value v, EmitScalar(hero->operand(0), operand_idx));
        mlir::memref::StoreOp::create(b_, loc_, ToStorage(v, t), tile,
                                      mlir::ValueRange{Add(Mul(i, kTileRowStride), tx)});
        return absl::OkStatus();
      });
    }));
    mlir::gpu::BarrierOp::create(b_, loc_);
    // Write loop: output at (a0 + tx, b0 + j) = tile[tx][j], consecutive
    // threads along a (the output's minor dim).
    RETURN_IF_ERROR(tile_loop([&](Value j) {
      Index idx = base;
      idx[a] = Add(a0, tx);
      idx[b] = Add(b0, j);
      return If(And(Lt(idx[a], C(size_a)), Lt(idx[b], C(size_b))), [&]() -> absl::Status {
        Value v = mlir::memref::LoadOp::create(b_, loc_, tile, mlir::ValueRange{Add(Mul(tx, kTileRowStride), j)});
        bindings_[hero] = FromStorage(v, t);
        absl::Status stored = StoreLeafInline(0, idx);
        bindings_.erase(hero);
        return stored;
      });
    }));
    return true;
  }

  // --- reduction emitter -------------------------------------------------------------
  Value Shuffle(Value v, int64_t offset) {
    auto shuffle = mlir::gpu::ShuffleOp::create(b_, loc_, v, static_cast<int32_t>(offset),
                                                static_cast<int32_t>(kWarpSize), mlir::gpu::ShuffleMode::XOR);
    return shuffle.getShuffleResult();
  }
  // Combines each accumulator with the one `offset` lanes away (xor), for
  // offsets from `first` down to 1: afterwards every lane of an aligned group
  // of 2*first lanes holds the group's result.
  absl::StatusOr<std::vector<Value>> WarpReduce(std::vector<Value> acc, int64_t first) {
    for (int64_t offset = first; offset >= 1; offset /= 2) {
      for (size_t h = 0; h < heroes_.size(); ++h) {
        Value other = Shuffle(acc[h], offset);
        ASSIGN_OR_RETURN(std::vector<Value> r, EmitComputation(heroes_[h]->to_apply(), {acc[h], other}));
        acc[h] = r[0];
      }
    }
    return acc;
  }

  // Per-thread partial results over reduced elements n = start, start +
  // step, ... < bound of operand row `kept` (operand dims -> index).
  absl::StatusOr<std::vector<Value>> PartialReduce(Value start, Value bound, int64_t step,
                                                   const std::function<Index(Value)>& operand_index) {
    auto loop = mlir::scf::ForOp::create(b_, loc_, start, bound, C(step), init_);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    std::vector<Cache> saved = caches_;
    caches_.emplace_back();
    Index idx = operand_index(loop.getInductionVar());
    std::vector<Value> next;
    for (size_t h = 0; h < heroes_.size(); ++h) {
      ASSIGN_OR_RETURN(Value x, EmitScalar(heroes_[h]->operand(0), idx));
      reassociate_ = true;
      absl::StatusOr<std::vector<Value>> r =
          EmitComputation(heroes_[h]->to_apply(), {loop.getRegionIterArgs()[h], x});
      reassociate_ = false;
      if (!r.ok()) return r.status();
      next.push_back((*r)[0]);
    }
    // Side outputs: each visited input element is visited by this thread
    // only, so the side outputs' element at the same physical offset is
    // written here, exactly once.
    if (!side_outputs_.empty()) {
      Value offset = Linearize(idx, PhysicalStrides(heroes_[0]->operand(0)->shape()));
      for (int64_t leaf_id : side_outputs_) {
        RETURN_IF_ERROR(StoreSideOutput(leaf_id, offset));
      }
    }
    caches_ = std::move(saved);
    mlir::scf::YieldOp::create(b_, loc_, mlir::ValueRange(next));
    return std::vector<Value>(loop.getResults().begin(), loop.getResults().end());
  }

  // Writes every reduction output leaf at `out_idx` with the heroes bound to
  // `acc` (side outputs are written while the input is walked).
  absl::Status StoreReduced(const std::vector<Value>& acc, const Index& out_idx) {
    for (size_t h = 0; h < heroes_.size(); ++h) bindings_[heroes_[h]] = acc[h];
    absl::Status st = absl::OkStatus();
    for (int64_t leaf = 0; leaf < static_cast<int64_t>(leaves_.size()) && st.ok(); ++leaf) {
      if (std::find(side_outputs_.begin(), side_outputs_.end(), leaf) != side_outputs_.end()) continue;
      st = StoreLeafInline(leaf, out_idx);
    }
    for (const HloInstruction* hero : heroes_) bindings_.erase(hero);
    return st;
  }

  // Index of the operand from coordinates of some of its dims, delinearizing
  // `linear` over `dims` (major to minor).
  void SetCoordinates(Index& idx, Value linear, const Shape& s, const std::vector<int64_t>& dims) {
    Value rest = linear;
    for (size_t i = dims.size(); i-- > 0;) {
      idx[dims[i]] = i == 0 ? rest : Rem(rest, s.dimensions(dims[i]));
      if (i > 0) rest = Div(rest, s.dimensions(dims[i]));
    }
  }
  // The reduce output's index: the kept operand dims in increasing order.
  Index OutputIndex(const Index& operand_idx, const Shape& in) {
    Index out;
    const std::vector<int64_t>& reduced = heroes_[0]->dimensions();
    for (int64_t d = 0; d < in.rank(); ++d) {
      if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) out.push_back(operand_idx[d]);
    }
    return out;
  }

  // Side output `leaf_id` at physical offset `offset` of the reduce heroes'
  // input (and of the side output: IsSideOutput), its root's subgraph inline.
  absl::Status StoreSideOutput(int64_t leaf_id, Value offset) {
    const Leaf& leaf = leaves_[leaf_id];
    // The loop emitter's mapping: a load at the same physical offset reuses
    // `offset` instead of re-linearizing the delinearized index.
    remember_linear_ = true;
    Index idx = Delinearize(offset, leaf.shape.dimensions(), MinorToMajor(leaf.shape));
    caches_.emplace_back();
    current_root_ = leaf.instruction;
    absl::StatusOr<Value> v = EmitScalar(leaf.instruction, idx);
    current_root_ = nullptr;
    caches_.pop_back();
    if (!v.ok()) return v.status();
    mlir::memref::StoreOp::create(b_, loc_, ToStorage(*v, leaf.shape.element_type()),
                                  buffers_[instruction_.operand_count() + leaf_id], mlir::ValueRange{offset});
    return absl::OkStatus();
  }

  // Whether `h` reads the value of one of the reduce heroes.
  bool ReadsHero(const HloInstruction* h) const {
    std::vector<const HloInstruction*> stack = {h};
    std::set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      if (std::find(heroes_.begin(), heroes_.end(), x) != heroes_.end()) return true;
      for (const HloInstruction* o : x->operands()) stack.push_back(o);
    }
    return false;
  }

  // Whether output leaf `leaf` (whose hero is not a reduce) can be written
  // while the reduction walks its input `in`: XLA's reduction emitter takes
  // such "side outputs" when their shape is the reduce input's, ignoring the
  // element type, or a reshape or transpose bitcast of it
  // (ShapesCompatibleForMultiOutputFusion in xla/service/gpu/gpu_fusible.cc;
  // reduction.cc indexes them with GetBitcastMap from the input shape). Here:
  // the same physical dimensions (size-1 dims aside), or both shapes laid out
  // row-major (size-1 dims aside) with the same element count. Either way an
  // input element and the side output's element at the same physical offset
  // correspond one to one. A side output that reads a reduce's result cannot
  // be computed before the reduction ends.
  bool IsSideOutput(const Leaf& leaf, const Shape& in) const {
    if (leaf.tuple_index >= 0 || !leaf.shape.IsArray()) return false;
    if (leaf.shape.element_count() != in.element_count()) return false;
    auto physical = [](const Shape& s) {
      std::vector<int64_t> dims;
      for (int64_t d : MajorToMinor(s)) {
        if (s.dimensions(d) != 1) dims.push_back(s.dimensions(d));
      }
      return dims;
    };
    auto row_major = [](const Shape& s) {
      std::vector<int64_t> dims;
      for (int64_t d : MajorToMinor(s)) {
        if (s.dimensions(d) != 1) dims.push_back(d);
      }
      return std::is_sorted(dims.begin(), dims.end());
    };
    if (physical(leaf.shape) != physical(in) && !(row_major(leaf.shape) && row_major(in))) return false;
    return !ReadsHero(leaf.instruction);
  }

  absl::StatusOr<bool> EmitReduction(const FusionAnalysis& analysis) {
    // Taken: every output's hero is a single-input reduce over the same dims
    // of operands with equal shapes, emitted in its root's subgraph, with a
    // 32-bit accumulator (what warp shuffles move), or a side output of the
    // reduce input's shape (IsSideOutput), as XLA's reduction emitter
    // (xla/backends/gpu/codegen/emitters/reduction.cc) writes "side output
    // roots" while it reads the input.
    if (analysis.heroes.size() != leaves_.size()) return false;
    std::vector<int64_t> side;
    for (size_t i = 0; i < leaves_.size(); ++i) {
      const HloInstruction* hero = analysis.heroes[i];
      if (hero->opcode() != HloOpcode::kReduce) {
        // PASSLAB_GPU_SIDE_OUTPUTS=0: such fusions go to the loop emitter
        // (a diagnostic switch, as before side outputs were taken).
        const char* side_env = std::getenv("PASSLAB_GPU_SIDE_OUTPUTS");
        if (side_env != nullptr && std::string_view(side_env) == "0") return Unwind();
        side.push_back(static_cast<int64_t>(i));
        continue;
      }
      if (hero->operand_count() != 2 || leaves_[i].tuple_index >= 0) return Unwind();
      if (!InRootSubgraph(hero, leaves_[i].instruction)) return Unwind();
      if (std::find(heroes_.begin(), heroes_.end(), hero) != heroes_.end()) return Unwind();
      mlir::Type ct = ComputeType(hero->shape().element_type());
      if (!ct.isF32() && !ct.isInteger(32)) return Unwind();
      // One shared-memory buffer holds every hero's partials.
      if (!heroes_.empty() && ComputeType(heroes_[0]->shape().element_type()) != ct) return Unwind();
      if (!heroes_.empty()) {
        const Shape& first = heroes_[0]->operand(0)->shape();
        const Shape& in = hero->operand(0)->shape();
        if (first.dimensions() != in.dimensions() || MinorToMajor(first) != MinorToMajor(in) ||
            heroes_[0]->dimensions() != hero->dimensions()) {
          return Unwind();
        }
      }
      heroes_.push_back(hero);
    }
    if (heroes_.empty()) return Unwind();
    const Shape& in = heroes_[0]->operand(0)->shape();
    for (int64_t leaf_id : side) {
      if (!IsSideOutput(leaves_[leaf_id], in)) return Unwind();
    }
    side_outputs_ = side;
    const std::vector<int64_t>& reduced = heroes_[0]->dimensions();
    auto is_reduced = [&](int64_t d) { return std::find(reduced.begin(), reduced.end(), d) != reduced.end(); };
    // Physical dims major to minor: [kept_major][reduced][kept_minor].
    std::vector<int64_t> kept_major, reduced_dims, kept_minor;
    for (int64_t d : MajorToMinor(in)) {
      if (is_reduced(d)) {
        if (!kept_minor.empty()) return Unwind();
        reduced_dims.push_back(d);
      } else {
        (reduced_dims.empty() ? kept_major : kept_minor).push_back(d);
      }
    }
    if (reduced_dims.empty()) return Unwind();
    emitted_kind_ = EmitterKind::kReduction;
    for (const HloInstruction* hero : heroes_) {
      ASSIGN_OR_RETURN(Value init, EmitScalar(hero->operand(1), {}));
      init_.push_back(init);
    }
    int64_t n = Product(in, reduced_dims);
    RETURN_IF_ERROR(kept_minor.empty() ? EmitRowReduction(in, kept_major, reduced_dims, n)
                                         : EmitColumnReduction(in, kept_major, reduced_dims, kept_minor, n));
    return true;
  }
  absl::StatusOr<bool> Unwind() {
    heroes_.clear();
    side_outputs_.clear();
    return false;
  }

  // Row reduction: a warp per row (8 rows per block), or a block per row
  // when rows are long; threads stride over the row (coalesced), shuffle
  // within the warp, and (block per row) combine the warps' results through
  // shared memory.
  absl::Status EmitRowReduction(const Shape& in, const std::vector<int64_t>& kept,
                                const std::vector<int64_t>& reduced, int64_t n) {
    int64_t rows = Product(in, kept);
    bool block_per_row = n >= kBlockPerRowThreshold;
    int64_t threads_per_row = block_per_row ? kReductionBlock : kWarpSize;
    int64_t rows_per_block = kReductionBlock / threads_per_row;
    launch_.block_x = kReductionBlock;
    launch_.grid_x = std::max<int64_t>(1, (rows + rows_per_block - 1) / rows_per_block);
    Value row = Add(Mul(block_id_, rows_per_block), Div(thread_id_, threads_per_row));
    Value lane_in_row = Rem(thread_id_, threads_per_row);
    Value row_ok = Lt(row, C(rows));
    // Rows past the end still take part in the shuffles, with no elements.
    Value bound = Select(row_ok, C(n), C(0));
    auto index_of = [&](Value r) {
      Index idx(in.rank());
      if (!kept.empty()) SetCoordinates(idx, row, in, kept);
      SetCoordinates(idx, r, in, reduced);
      return idx;
    };
    absl::StatusOr<std::vector<Value>> acc = PartialReduce(lane_in_row, bound, threads_per_row, index_of);
    if (!acc.ok()) return acc.status();
    acc = WarpReduce(*acc, kWarpSize / 2);
    if (!acc.ok()) return acc.status();
    Value lane = Rem(thread_id_, kWarpSize);
    if (block_per_row) {
      Value warp = Div(thread_id_, kWarpSize);
      mlir::Type ct = init_[0].getType();
      Value partials = SharedMemory("reduction_partials", kReductionWarps * static_cast<int64_t>(heroes_.size()), ct);
      RETURN_IF_ERROR(If(Eq(lane, C(0)), [&] {
        for (size_t h = 0; h < heroes_.size(); ++h) {
          mlir::memref::StoreOp::create(b_, loc_, (*acc)[h], partials,
                                        mlir::ValueRange{Add(C(h * kReductionWarps), warp)});
        }
        return absl::OkStatus();
      }));
      mlir::gpu::BarrierOp::create(b_, loc_);
      // Every warp reads the partials back (lanes past the warp count read
      // the init value) and reduces them; thread 0 writes.
      Value lane_ok = Lt(lane, C(kReductionWarps));
      Value slot = Select(lane_ok, lane, C(0));
      std::vector<Value> cross;
      for (size_t h = 0; h < heroes_.size(); ++h) {
        Value v = mlir::memref::LoadOp::create(b_, loc_, partials, mlir::ValueRange{Add(C(h * kReductionWarps), slot)});
        cross.push_back(Select(lane_ok, v, init_[h]));
      }
      acc = WarpReduce(cross, kReductionWarps / 2);
      if (!acc.ok()) return acc.status();
      lane = thread_id_;
    }
    return If(And(Eq(lane, C(0)), row_ok), [&]() -> absl::Status {
      Index idx(in.rank());
      if (!kept.empty()) SetCoordinates(idx, row, in, kept);
      return StoreReduced(*acc, OutputIndex(idx, in));
    });
  }

  // Column reduction: a block per 32 minor kept elements (and major kept
  // index); 32 lanes along the minor kept dims (coalesced), 32 warps
  // stride over the reduced rows; the 32 partials per column go through a
  // padded shared tile, transposed, and warp w combines column w's by
  // shuffles. XLA's ColumnReductionFusion also vectorizes two columns per
  // thread for 32-bit types (one block of 64 columns); here a block takes
  // 32, so small reductions get twice the blocks.
  absl::Status EmitColumnReduction(const Shape& in, const std::vector<int64_t>& kept_major,
                                   const std::vector<int64_t>& reduced, const std::vector<int64_t>& kept_minor,
                                   int64_t n) {
    int64_t k = Product(in, kept_minor);
    int64_t tiles = (k + kWarpSize - 1) / kWarpSize;
    launch_.block_x = kColumnReductionWarps * kWarpSize;
    launch_.grid_x = std::max<int64_t>(1, Product(in, kept_major) * tiles);
    Value major = Div(block_id_, tiles);
    Value k0 = Mul(Rem(block_id_, tiles), kWarpSize);
    Value tx = Rem(thread_id_, kWarpSize), ty = Div(thread_id_, kWarpSize);
    auto index_at = [&](Value minor, Value r) {
      Index idx(in.rank());
      if (!kept_major.empty()) SetCoordinates(idx, major, in, kept_major);
      SetCoordinates(idx, minor, in, kept_minor);
      if (r) SetCoordinates(idx, r, in, reduced);
      return idx;
    };
    Value column = Add(k0, tx);
    Value bound = Select(Lt(column, C(k)), C(n), C(0));
    absl::StatusOr<std::vector<Value>> acc =
        PartialReduce(ty, bound, kColumnReductionWarps, [&](Value r) { return index_at(column, r); });
    if (!acc.ok()) return acc.status();
    mlir::Type ct = init_[0].getType();
    int64_t per_hero = kColumnReductionWarps * kTileRowStride;
    Value tile = SharedMemory("reduction_tile", per_hero * static_cast<int64_t>(heroes_.size()), ct);
    for (size_t h = 0; h < heroes_.size(); ++h) {
      mlir::memref::StoreOp::create(b_, loc_, (*acc)[h], tile,
                                    mlir::ValueRange{Add(C(h * per_hero), Add(Mul(ty, kTileRowStride), tx))});
    }
    mlir::gpu::BarrierOp::create(b_, loc_);
    // Warp w combines column w: lane l reads partial l (warp l's) of it.
    Value c = ty;
    Value p = tx;
    std::vector<Value> partial;
    for (size_t h = 0; h < heroes_.size(); ++h) {
      partial.push_back(mlir::memref::LoadOp::create(
          b_, loc_, tile, mlir::ValueRange{Add(C(h * per_hero), Add(Mul(p, kTileRowStride), c))}));
    }
    acc = WarpReduce(partial, kWarpSize / 2);
    if (!acc.ok()) return acc.status();
    Value out_column = Add(k0, c);
    return If(And(Eq(p, C(0)), Lt(out_column, C(k))), [&]() -> absl::Status {
      return StoreReduced(*acc, OutputIndex(index_at(out_column, Value()), in));
    });
  }

  int requested_width_;
  std::string entry_;
  GpuLaunchDimensions launch_;
  EmitterKind emitted_kind_ = EmitterKind::kLoop;
  Value thread_id_, block_id_;
  std::vector<const HloInstruction*> heroes_;
  // Output leaves written while the reduction walks its input.
  std::vector<int64_t> side_outputs_;
  std::vector<Value> init_;
};

// ---------------------------------------------------------------------------
// The emitter pipeline.

const std::vector<EmitterPassInfo>& GpuPassList() {
  static const auto* passes = new std::vector<EmitterPassInfo>{
      {"inline", true, "Inlines subgraph functions into the entry function"},
      {"canonicalize", true, "Folds and canonicalizes"},
      {"cse", true, "Common subexpression elimination"},
      {"loop-invariant-code-motion", true, "Hoists loop-invariant code"},
      {"expand-math", true, "Polynomial approximations of transcendental functions (else libdevice)"},
      {"symbol-dce", true, "Drops unused subgraph functions"},
      {"convert-math-to-funcs", false, "Integer power as a function"},
      {"arith-expand", false, "Expands bf16 conversions and other compound arith ops"},
      {"convert-scf-to-cf", false, "Structured loops to a CFG"},
      {"convert-gpu-to-nvvm", false, "Thread/block ids, barriers, shuffles to NVVM; math to libdevice calls"},
      {"convert-math-to-llvm", false, "Remaining math ops to LLVM intrinsics"},
      {"expand-strided-metadata", false, "Memref metadata to arithmetic"},
      {"finalize-memref-to-llvm", false, "Memrefs to LLVM pointers (shared memory in address space 3)"},
      {"convert-arith-to-llvm", false, "Arith to the LLVM dialect"},
      {"convert-cf-to-llvm", false, "CFG to the LLVM dialect"},
      {"convert-func-to-llvm", false, "Functions to the LLVM dialect (one bare pointer per buffer)"},
      {"reconcile-unrealized-casts", false, "Removes conversion casts"},
  };
  return *passes;
}

struct GpuToNvvmPass : public mlir::PassWrapper<GpuToNvvmPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GpuToNvvmPass)
  llvm::StringRef getArgument() const override { return "convert-gpu-to-nvvm"; }
  llvm::StringRef getDescription() const override {
    return "gpu dialect ops to NVVM, math ops to libdevice calls";
  }
  void runOnOperation() override {
    mlir::LowerToLLVMOptions options(&getContext());
    mlir::LLVMTypeConverter converter(&getContext(), options);
    mlir::RewritePatternSet patterns(&getContext());
    mlir::populateGpuToNVVMConversionPatterns(converter, patterns);
    mlir::populateLibDeviceConversionPatterns(converter, patterns);
    mlir::ConversionTarget target(getContext());
    target.addLegalDialect<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
    target.addIllegalDialect<mlir::gpu::GPUDialect>();
    if (mlir::failed(mlir::applyPartialConversion(getOperation(), target, std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

absl::Status RunGpuEmitterPipeline(mlir::ModuleOp module, const GpuCompileOptions& o, const std::string& kernel) {
  EmitterPipelineTarget target;
  target.passes = &GpuPassList();
  target.error_prefix = "gpu codegen";
  target.lowered_to = "NVVM/LLVM";
  target.before_math_to_llvm = [] { return std::make_unique<GpuToNvvmPass>(); };
  target.bare_pointer_calls = true;
  return RunEmitterPipeline(module, target, o.disabled_passes, o.observer, o.observer_wants_text, kernel);
}

std::unique_ptr<mlir::MLIRContext> MakeGpuContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::gpu::GPUDialect, mlir::NVVM::NVVMDialect>();
  mlir::registerNVVMDialectTranslation(registry);
  return MakeEmitterContext(std::move(registry));
}

void InitializeNvptxOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

// LLVM IR -> PTX: link libdevice when a `__nv_*` function is called,
// internalize everything but the entry, run O3 for the NVPTX target, print.
absl::StatusOr<std::string> LlvmToPtx(llvm::Module& module, const std::string& entry, const GpuCompileOptions& o) {
  InitializeNvptxOnce();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return absl::InternalError(StrCat("gpu codegen: no NVPTX target: ", error));
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, o.target, o.ptx_features, llvm::TargetOptions(), std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (tm == nullptr) return absl::InternalError(StrCat("gpu codegen: cannot create an NVPTX TargetMachine for ", o.target));
  module.setTargetTriple(triple);
  module.setDataLayout(tm->createDataLayout());
  bool needs_libdevice = false;
  for (const llvm::Function& f : module) {
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) needs_libdevice = true;
  }
  if (needs_libdevice) {
    llvm::SMDiagnostic diagnostic;
    std::unique_ptr<llvm::Module> libdevice = llvm::parseIRFile(o.libdevice_path, diagnostic, module.getContext());
    if (libdevice == nullptr) {
      return absl::FailedPreconditionError(StrCat("gpu codegen: kernel ", entry, " needs libdevice, which cannot be read from '",
                                                  o.libdevice_path, "': ", diagnostic.getMessage().str()));
    }
    libdevice->setTargetTriple(triple);
    libdevice->setDataLayout(module.getDataLayout());
    if (llvm::Linker::linkModules(module, std::move(libdevice), llvm::Linker::LinkOnlyNeeded)) {
      return absl::InternalError(StrCat("gpu codegen: linking libdevice into ", entry, " failed"));
    }
    // libdevice's __nvvm_reflect("__CUDA_FTZ") reads this flag: no flush to
    // zero (the evaluator keeps denormals).
    module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t{0});
  }
  for (llvm::Function& f : module) {
    if (!f.isDeclaration() && f.getName() != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  if (o.llvm_opt_level > 0) RunLlvmPipeline(module, tm.get(), o.llvm_opt_level);
  llvm::SmallString<0> ptx;
  llvm::raw_svector_ostream os(ptx);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::AssemblyFile)) {
    return absl::InternalError("gpu codegen: the NVPTX target cannot print assembly");
  }
  codegen.run(module);
  return std::string(ptx.str());
}

}  // namespace

absl::StatusOr<std::string> GpuTargetForComputeCapability(int major, int minor) {
  if (major <= 0 || minor < 0 || minor > 9) {
    return absl::InvalidArgumentError(StrCat("gpu codegen: no PTX target for compute capability ", major, ".", minor));
  }
  InitializeNvptxOnce();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return absl::InternalError(StrCat("gpu codegen: no NVPTX target: ", error));
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));
  if (sti == nullptr) return absl::InternalError("gpu codegen: no NVPTX subtarget information");
  // The device's own target, else the newest older one LLVM knows.
  for (int m = major; m >= 2; --m) {
    for (int n = m == major ? minor : 9; n >= 0; --n) {
      std::string sm = StrCat("sm_", m, n);
      if (sti->isCPUStringValid(sm)) return sm;
    }
  }
  return absl::InvalidArgumentError(
      StrCat("gpu codegen: LLVM's NVPTX backend has no target for compute capability ", major, ".", minor));
}

const std::vector<EmitterPassInfo>& GpuEmitterPipelinePasses() { return GpuPassList(); }

GpuLoopLaunch LoopLaunch(const std::vector<int64_t>& output_elements, int64_t max_element_bits, int requested_width) {
  GpuLoopLaunch launch;
  for (int64_t e : output_elements) launch.elements = std::max(launch.elements, e);
  auto divides_all = [&](int64_t w) {
    return std::all_of(output_elements.begin(), output_elements.end(), [&](int64_t e) { return e % w == 0; });
  };
  int64_t width = 1;
  if (requested_width > 0) {
    width = requested_width;
  } else {
    // 4 elements per thread (at most 128 bits) when the output has enough
    // elements to give every SM of a large GPU (132 on an H100) a few blocks
    // at 4 per thread; 2 for mid-sized outputs.
    constexpr int64_t kFourWideMin = int64_t{132} * 4 * kLoopBlock * 4;
    constexpr int64_t kTwoWideMin = int64_t{132} * kLoopBlock * 2;
    if (launch.elements >= kFourWideMin) width = 4;
    else if (launch.elements >= kTwoWideMin) width = 2;
    while (width > 1 && width * max_element_bits > 128) width /= 2;
  }
  while (width > 1 && !divides_all(width)) width /= 2;
  launch.vector_width = width;
  int64_t threads = (launch.elements + width - 1) / width;
  // Tiny outputs: one block of whole warps.
  launch.block = std::clamp<int64_t>((threads + kWarpSize - 1) / kWarpSize * kWarpSize, kWarpSize, kLoopBlock);
  launch.grid = std::max<int64_t>(1, (threads + launch.block - 1) / launch.block);
  return launch;
}

GpuKernelCompiler::GpuKernelCompiler(GpuCompileOptions options) : options_(std::move(options)) {}

absl::Status GpuKernelCompiler::CheckCompilable(const HloInstruction& instruction) {
  return CpuKernelCompiler::CheckCompilable(instruction);
}

bool GpuKernelCompiler::CanCompile(const HloInstruction& instruction) { return CheckCompilable(instruction).ok(); }

absl::StatusOr<std::string> GpuKernelCompiler::EmitMlir(const HloInstruction& instruction) {
  RETURN_IF_ERROR(CheckCompilable(instruction));
  std::unique_ptr<mlir::MLIRContext> context = MakeGpuContext();
  GpuKernelEmitter emitter(context.get(), instruction, options_.vector_width);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, emitter.EmitGpu());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

namespace {

std::mutex gpu_cache_mu;
std::map<std::string, GpuKernel>& GpuKernelCache() {
  static auto* cache = new std::map<std::string, GpuKernel>();
  return *cache;
}
std::atomic<int64_t> gpu_cache_hits{0}, gpu_cache_misses{0};
std::atomic<int64_t> gpu_persistent_hits{0}, gpu_persistent_misses{0};

// A GpuKernel (less its name, which is the instruction's) as the persistent
// cache's payload.
std::string SerializeGpuKernel(const GpuKernel& k) {
  CacheRecordWriter w;
  w.Int(static_cast<int64_t>(k.emitter_kind));
  w.Bytes(k.entry);
  w.Bytes(k.ptx);
  w.Bytes(k.target);
  for (int64_t v : {k.launch.grid_x, k.launch.grid_y, k.launch.grid_z, k.launch.block_x, k.launch.block_y,
                    k.launch.block_z, k.launch.dynamic_shared_memory_bytes, k.num_buffers, k.bytes_read,
                    k.bytes_written, k.flops}) {
    w.Int(v);
  }
  return std::move(w).Finish();
}

std::optional<GpuKernel> DeserializeGpuKernel(std::string_view payload) {
  CacheRecordReader r(payload);
  GpuKernel k;
  int64_t kind = 0;
  if (!r.Int(&kind) || kind < 0 || kind > static_cast<int64_t>(EmitterKind::kInPlaceDynamicUpdateSlice)) {
    return std::nullopt;
  }
  k.emitter_kind = static_cast<EmitterKind>(kind);
  if (!r.Bytes(&k.entry) || !r.Bytes(&k.ptx) || !r.Bytes(&k.target)) return std::nullopt;
  for (int64_t* v : {&k.launch.grid_x, &k.launch.grid_y, &k.launch.grid_z, &k.launch.block_x, &k.launch.block_y,
                     &k.launch.block_z, &k.launch.dynamic_shared_memory_bytes, &k.num_buffers, &k.bytes_read,
                     &k.bytes_written, &k.flops}) {
    if (!r.Int(v)) return std::nullopt;
  }
  if (!r.AtEnd()) return std::nullopt;
  return k;
}

}  // namespace

int64_t GpuKernelCompiler::CacheHits() { return gpu_cache_hits.load(); }
int64_t GpuKernelCompiler::CacheMisses() { return gpu_cache_misses.load(); }
int64_t GpuKernelCompiler::PersistentCacheHits() { return gpu_persistent_hits.load(); }
int64_t GpuKernelCompiler::PersistentCacheMisses() { return gpu_persistent_misses.load(); }

absl::StatusOr<GpuKernel> GpuKernelCompiler::Compile(const HloInstruction& instruction) {
  RETURN_IF_ERROR(CheckCompilable(instruction));
  if (options_.observer) {  // it must see every pass run
    ++gpu_cache_misses;
    return CompileUncached(instruction);
  }
  std::string key = StrCat(KernelCacheKey(instruction), "|", options_.target, options_.ptx_features, "|w",
                           options_.vector_width, "|O", options_.llvm_opt_level, "|", options_.libdevice_path);
  for (const std::string& d : options_.disabled_passes) key += "|-" + d;
  if (options_.use_cache) {
    std::lock_guard<std::mutex> lock(gpu_cache_mu);
    auto it = GpuKernelCache().find(key);
    if (it != GpuKernelCache().end()) {
      ++gpu_cache_hits;
      GpuKernel kernel = it->second;
      kernel.name = instruction.name();  // the code (and its PTX entry) is shared
      return kernel;
    }
  }
  ++gpu_cache_misses;
  auto remember = [&](const GpuKernel& kernel) {
    if (!options_.use_cache) return;
    std::lock_guard<std::mutex> lock(gpu_cache_mu);
    GpuKernelCache().emplace(key, kernel);
  };
  PersistentKernelCache* disk = nullptr;
  std::string disk_key;
  if (!options_.persistent_cache_dir.empty()) {
    ASSIGN_OR_RETURN(PersistentKernelCache* opened, PersistentKernelCache::Open(options_.persistent_cache_dir));
    disk = opened;
    // The target (sm version, PTX ISA) is in `key`; the compiler's version
    // (passlab's build, LLVM's NVPTX backend) completes it.
    disk_key = StrCat("gpu-kernel\n", KernelCompilerVersion(), "\n", key);
    if (std::optional<std::string> payload = disk->Load(disk_key)) {
      if (std::optional<GpuKernel> kernel = DeserializeGpuKernel(*payload)) {
        ++gpu_persistent_hits;
        kernel->name = instruction.name();
        remember(*kernel);
        return *kernel;
      }
      std::fprintf(stderr, "passlab: kernel cache: malformed entry for %s in '%s'; compiling instead\n",
                   instruction.name().c_str(), disk->dir().c_str());
    }
    ++gpu_persistent_misses;
  }
  absl::StatusOr<GpuKernel> kernel = CompileUncached(instruction);
  if (!kernel.ok()) return kernel;
  if (disk != nullptr) {
    if (absl::Status s = disk->Store(disk_key, SerializeGpuKernel(*kernel)); !s.ok()) {
      std::fprintf(stderr, "passlab: %s\n", std::string(s.message()).c_str());
    }
  }
  remember(*kernel);
  return kernel;
}

absl::StatusOr<GpuKernel> GpuKernelCompiler::CompileUncached(const HloInstruction& instruction) {
  std::unique_ptr<mlir::MLIRContext> context = MakeGpuContext();
  GpuKernelEmitter emitter(context.get(), instruction, options_.vector_width);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, emitter.EmitGpu());
  RETURN_IF_ERROR(RunGpuEmitterPipeline(*module, options_, instruction.name()));
  // The entry is a kernel with at most `block` threads; every buffer is at
  // least 16-byte aligned (the runtime's contract, gpu_kernel.h), which lets
  // LLVM's load/store vectorizer use vector loads.
  const GpuLaunchDimensions& launch = emitter.launch();
  auto entry = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(emitter.entry());
  if (!entry) return absl::InternalError(StrCat("gpu codegen: no entry function for ", instruction.name()));
  mlir::Builder b(context.get());
  entry->setAttr(mlir::NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  entry->setAttr(mlir::NVVM::NVVMDialect::getMaxntidAttrName(),
                 b.getDenseI32ArrayAttr({static_cast<int32_t>(launch.block_x), static_cast<int32_t>(launch.block_y),
                                         static_cast<int32_t>(launch.block_z)}));
  for (unsigned i = 0; i < entry.getNumArguments(); ++i) {
    entry.setArgAttr(i, mlir::LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(16));
  }
  llvm::LLVMContext llvm_context;
  std::unique_ptr<llvm::Module> llvm_module = mlir::translateModuleToLLVMIR(*module, llvm_context, instruction.name());
  if (llvm_module == nullptr) {
    return absl::InternalError(StrCat("gpu codegen: translation to LLVM IR failed for ", instruction.name()));
  }
  ASSIGN_OR_RETURN(std::string ptx, LlvmToPtx(*llvm_module, emitter.entry(), options_));
  GpuKernel kernel;
  kernel.name = instruction.name();
  kernel.emitter_kind = emitter.emitted_kind();
  kernel.entry = emitter.entry();
  kernel.ptx = std::move(ptx);
  kernel.target = options_.target;
  kernel.launch = launch;
  kernel.num_buffers = static_cast<int64_t>(emitter.buffer_shapes().size());
  kernel.bytes_written = instruction.shape().total_leaf_bytes();
  for (const HloInstruction* operand : instruction.operands()) kernel.bytes_read += operand->shape().byte_size();
  kernel.flops = CountFlops(instruction);
  return kernel;
}

}  // namespace passlab
