// Scatter and select-and-scatter in the elemental emitter (see
// kernel_emitter.h): the kernel's second nest, applying the updates in
// row-major order (or, on the GPU, as atomic adds), and select-and-scatter's
// unrolled window selection.
#include "core/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace passlab {
namespace codegen_internal {

// The scatter kernel's second nest: one thread walks the updates in
// row-major order (so duplicate indices combine deterministically, as the
// evaluator does); a window that does not fit entirely is skipped.
// Select-and-scatter's walks the source, one row per disjoint slice.
absl::Status KernelEmitter::EmitScatterUpdates() {
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
  RETURN_IF_ERROR(select_and_scatter_ ? EmitSelectAndScatterLoops(nullptr, 0, row, split)
                                            : EmitScatterUpdateLoops());
  b_.setInsertionPointToEnd(entry);
  mlir::func::ReturnOp::create(b_, loc_);
  nests_.push_back(nest);
  return absl::OkStatus();
}

void KernelEmitter::AtomicAdd(Value value, int64_t buffer, Value offset) {
  const bool is_float = llvm::isa<mlir::FloatType>(value.getType());
  mlir::memref::AtomicRMWOp::create(b_, loc_,
                                    is_float ? mlir::arith::AtomicRMWKind::addf : mlir::arith::AtomicRMWKind::addi,
                                    value, buffers_[buffer], mlir::ValueRange{offset});
}

absl::Status KernelEmitter::ForEachElement(
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
bool KernelEmitter::ScatterUpdatesAreAtomicAdds() const {
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

absl::Status KernelEmitter::EmitScatterUpdateLoops(Value thread, int64_t threads) {
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
    ASSIGN_OR_RETURN(std::vector<Value> r, EmitComputation(h->to_apply(), reducer_args));
    Value off = Linearize(dst, PhysicalStrides(buffer_shapes_[num_inputs]));
    for (int64_t k = 0; k < n; ++k) {
      mlir::memref::StoreOp::create(b_, loc_, ToStorage(r[k], buffer_shapes_[num_inputs + k].element_type()),
                                    buffers_[num_inputs + k], mlir::ValueRange{off});
    }
    return std::vector<Value>{};
  };
  return ForEachElement(us, thread, threads, update);
}

std::vector<int64_t> KernelEmitter::DisjointWindowDims() const {
  std::vector<int64_t> dims;
  const std::vector<WindowDimension>& window = instruction_.window().dimensions;
  for (size_t d = 0; d < window.size(); ++d) {
    if (window[d].size <= window[d].stride) dims.push_back(static_cast<int64_t>(d));
  }
  return dims;
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
// With `row` (the CPU's nest; `thread` null), only the source elements of
// slice `row` along the `split` dimensions (row-major over them), the
// other dimensions in row-major order.
absl::Status KernelEmitter::EmitSelectAndScatterLoops(Value thread, int64_t threads, Value row,
                                                      const std::vector<int64_t>& split) {
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
      ASSIGN_OR_RETURN(std::vector<Value> keep, EmitComputation(h->select(), {best, candidate}));
      Value replace = mlir::arith::XOrIOp::create(b_, loc_, keep[0], i1(true));
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
    ASSIGN_OR_RETURN(std::vector<Value> r, EmitComputation(h->scatter(), {current, source}));
    mlir::memref::StoreOp::create(b_, loc_, ToStorage(r[0], buffer_shapes_[num_inputs].element_type()),
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

}  // namespace codegen_internal
}  // namespace passlab
