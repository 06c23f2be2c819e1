// Reductions in the elemental emitter (see kernel_emitter.h): reduce and
// reduce-window per output element, batch-norm training/grad statistics,
// and the CPU's column-reduction nests (the reduced rows walked with the
// output columns innermost).
#include "core/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace passlab {
namespace codegen_internal {

std::vector<int64_t> KernelEmitter::ReducedDims(const HloInstruction* reduce) {
  const std::vector<int64_t>& dims = reduce->dimensions();
  std::vector<int64_t> reduced;
  std::vector<int64_t> mtm = MinorToMajor(reduce->operand(0)->shape());
  for (auto it = mtm.rbegin(); it != mtm.rend(); ++it) {
    if (std::find(dims.begin(), dims.end(), *it) != dims.end()) reduced.push_back(*it);
  }
  return reduced;
}

Index KernelEmitter::ReduceInputIndex(int64_t rank, const std::vector<int64_t>& reduced, const Index& ivs,
                                             const Index& out) {
  Index in(rank);
  size_t out_pos = 0;
  for (int64_t d = 0; d < rank; ++d) {
    auto r = std::find(reduced.begin(), reduced.end(), d);
    in[d] = r != reduced.end() ? ivs[r - reduced.begin()] : out[out_pos++];
  }
  return in;
}

absl::StatusOr<std::vector<Value>> KernelEmitter::EmitReduce(const HloInstruction* h, const Index& idx) {
  int64_t n = h->operand_count() / 2;
  const Shape& in_shape = h->operand(0)->shape();
  std::vector<Value> init;
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(Value v, EmitScalar(h->operand(n + i), {}));
    init.push_back(v);
  }
  const std::vector<int64_t> reduced = ReducedDims(h);
  std::vector<int64_t> bounds;
  for (int64_t d : reduced) bounds.push_back(in_shape.dimensions(d));
  return EmitLoopNest(bounds, init, [&](const Index& ivs, const std::vector<Value>& acc)
                                        -> absl::StatusOr<std::vector<Value>> {
    const Index in = ReduceInputIndex(in_shape.rank(), reduced, ivs, idx);
    llvm::SmallVector<Value> args(acc.begin(), acc.end());
    for (int64_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(Value v, EmitScalar(h->operand(i), in));
      args.push_back(v);
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

absl::StatusOr<Value> KernelEmitter::EmitReduceWindow(const HloInstruction* h, const Index& idx) {
  const Shape& in_shape = h->operand(0)->shape();
  const Window& w = h->window();
  ASSIGN_OR_RETURN(Value init, EmitScalar(h->operand(1), {}));
  std::vector<int64_t> bounds;
  for (const WindowDimension& d : w.dimensions) bounds.push_back(d.size);
  mlir::Type t = init.getType();
  const bool speculate = SpeculatableRead(*h->operand(0)) && SpeculatableReducer(*h->to_apply()) &&
                         h->operand(0)->shape().element_count() > 0;
  ASSIGN_OR_RETURN(std::vector<Value> r, EmitLoopNest(
      bounds, {init}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
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
        if (speculate) {
          // Read at the index clamped into the input and combine; keep the
          // result only inside it (no branch: vectorizable).
          for (int64_t d = 0; d < in_shape.rank(); ++d) {
            in[d] = Min(mlir::arith::MaxSIOp::create(b_, loc_, in[d], C(0)), C(in_shape.dimensions(d) - 1));
          }
          ASSIGN_OR_RETURN(Value v, EmitScalar(h->operand(0), in));
          ASSIGN_OR_RETURN(std::vector<Value> c, EmitComputation(h->to_apply(), {acc[0], v}));
          return std::vector<Value>{Select(in_bounds, c[0], acc[0])};
        }
        ASSIGN_OR_RETURN(Value next, EmitIf(
            in_bounds, t,
            [&]() -> absl::StatusOr<Value> {
              ASSIGN_OR_RETURN(Value v, EmitScalar(h->operand(0), in));
              ASSIGN_OR_RETURN(std::vector<Value> c, EmitComputation(h->to_apply(), {acc[0], v}));
              return c[0];
            },
            [&]() -> absl::StatusOr<Value> { return acc[0]; }));
        return std::vector<Value>{next};
      }));
  return r[0];
}

// batch-norm-training / batch-norm-grad as one kernel of two loop nests:
// first the per-feature statistics (outputs 1 and 2, reductions over every
// other dim), then the elementwise output 0, which reads the statistics
// back from their output buffers. Formulas as the evaluator's.
//
// The statistics are summed in f64 whatever the element type, then rounded:
// the variance is two-pass (the mean first, then the squared deviations
// from it), and a two-pass variance is only as good as its mean. Summed in
// f32, the mean of a channel of 1.2M equal values 1e3 (MobileNetV2's batch
// 96 at 112x112) is off by rounding in the running sum, and the variance
// came out 3.3e-5 instead of 0. In f64 the sum of up to 2^29 f32 values is
// exact, so a constant channel gives exactly its value and variance 0, and a
// large mean with a small spread loses nothing to cancellation.
absl::StatusOr<Value> KernelEmitter::EmitBatchNormLeaf(const HloInstruction* h, int64_t tuple_index, const Index& idx) {
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
      // Accumulation in f64 (see above): widen what is loaded, narrow
      // the statistics.
      mlir::Type wt = b_.getF64Type();
      auto widen = [&](Value v) { return v.getType() == wt ? v : Value(arith::ExtFOp::create(b_, loc_, wt, v)); };
      auto narrow = [&](Value v) { return ct == wt ? v : Value(arith::TruncFOp::create(b_, loc_, ct, v)); };
      auto load_wide = [&](int64_t operand, const Index& in) -> absl::StatusOr<Value> {
        ASSIGN_OR_RETURN(Value v, load(operand, in));
        return widen(v);
      };
      Value zero = FConst(wt, 0);
      Value wide_n = FConst(wt, std::max(count, 1.0));
      if (training) {
        ASSIGN_OR_RETURN(std::vector<Value> sum, EmitLoopNest(bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          ASSIGN_OR_RETURN(Value x, load_wide(0, at(ivs)));
          return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], x)};
        }));
        Value mean = arith::DivFOp::create(b_, loc_, sum[0], wide_n);
        ASSIGN_OR_RETURN(std::vector<Value> sq, EmitLoopNest(bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          ASSIGN_OR_RETURN(Value x, load_wide(0, at(ivs)));
          Value d = arith::SubFOp::create(b_, loc_, x, mean);
          return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], arith::MulFOp::create(b_, loc_, d, d))};
        }));
        batch_norm_stats_ = {narrow(mean), narrow(arith::DivFOp::create(b_, loc_, sq[0], wide_n))};
      } else {
        absl::StatusOr<Value> mean = load_wide(2, {c});
        absl::StatusOr<Value> var = load_wide(3, {c});
        if (!mean.ok()) return mean.status();
        if (!var.ok()) return var.status();
        ASSIGN_OR_RETURN(std::vector<Value> sums, EmitLoopNest(bounds, {zero, zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
          absl::StatusOr<Value> x = load_wide(0, at(ivs));
          absl::StatusOr<Value> dy = load_wide(4, at(ivs));
          if (!x.ok()) return x.status();
          if (!dy.ok()) return dy.status();
          Value xmu = arith::SubFOp::create(b_, loc_, *x, *mean);
          return std::vector<Value>{arith::AddFOp::create(b_, loc_, acc[0], *dy),
                                    arith::AddFOp::create(b_, loc_, acc[1], arith::MulFOp::create(b_, loc_, *dy, xmu))};
        }));
        Value wide_inv_std = arith::DivFOp::create(
            b_, loc_, FConst(wt, 1),
            mlir::math::SqrtOp::create(b_, loc_, arith::AddFOp::create(b_, loc_, *var, FConst(wt, h->attrs().epsilon))));
        Value dscale = arith::MulFOp::create(b_, loc_, sums[1], wide_inv_std);
        batch_norm_stats_ = {narrow(dscale), narrow(sums[0])};
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
    ASSIGN_OR_RETURN(Value offset, load(2, fi));
    Value norm = arith::MulFOp::create(b_, loc_, arith::SubFOp::create(b_, loc_, *x, s1), inv_std(s2));
    return Round(arith::AddFOp::create(b_, loc_, arith::MulFOp::create(b_, loc_, norm, *scale), offset),
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

bool KernelEmitter::IsColumnReductionGroup(const std::vector<int64_t>& group,
                                           const std::vector<int64_t>& out_mtm) const {
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

absl::Status KernelEmitter::EmitColumnReductionNest(const std::vector<int64_t>& group, const Shape& s,
                                                    const std::vector<int64_t>& mtm, int64_t rows,
                                                    int64_t minor, Value begin, Value end, LoopNest& nest) {
  // The unit of work is a block of kColumnBlock output columns of one
  // output row, so that a few outputs still spread over the threads;
  // the threshold then weighs the elements reduced, not the outputs.
  const int64_t blocks = (minor + kColumnBlock - 1) / kColumnBlock;
  nest.rows = rows * blocks;
  nest.inner = std::min(minor, kColumnBlock);
  nest.elements = leaves_[group[0]].instruction->operand(0)->shape().element_count();
  // The partial results, on the stack of the function (not of each
  // task: an alloca in a loop would grow the stack every iteration).
  std::vector<Value> partials;
  for (int64_t id : group) {
    mlir::Type t = mlir::cast<mlir::MemRefType>(buffer_types_[instruction_.operand_count() + id]).getElementType();
    partials.push_back(
        mlir::memref::AllocaOp::create(b_, loc_, mlir::MemRefType::get({kPartials * kColumnBlock}, t)));
  }
  Value task = OpenLoop(begin, end);
  Value row = Div(task, blocks);
  Value j0 = Mul(Rem(task, blocks), kColumnBlock);
  Value width = Min(C(kColumnBlock), Sub(C(minor), j0));
  return EmitColumnReductions(group, mtm, partials, RowIndex(s, mtm, row), Mul(row, minor), j0, width);
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
absl::Status KernelEmitter::EmitColumnReductions(const std::vector<int64_t>& group,
                                                 const std::vector<int64_t>& out_mtm,
                                                 const std::vector<Value>& partials, const Index& row_idx,
                                                 Value row_base, Value j0, Value width) {
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
  RETURN_IF_ERROR(columns([&](Value jj, Value, const Index&) -> absl::Status {
    for (int64_t id : group) {
      ASSIGN_OR_RETURN(Value v, EmitScalar(leaves_[id].instruction->operand(1), {}));
      mlir::memref::StoreOp::create(b_, loc_, v, partials[position[id]], mlir::ValueRange{slot(C(0), jj)});
    }
    return absl::OkStatus();
  }));
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
    RETURN_IF_ERROR(EmitLoopNest(bounds, {}, [&](const Index& ivs, const std::vector<Value>&)
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
                ASSIGN_OR_RETURN(Value v, EmitScalar(r->operand(0), in));
                Value result = v;
                if (combine == 1) {
                  Value acc = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{at});
                  ASSIGN_OR_RETURN(std::vector<Value> combined, EmitComputation(r->to_apply(), {acc, v}));
                  result = combined[0];
                }
                mlir::memref::StoreOp::create(b_, loc_, result, buffer, mlir::ValueRange{at});
              }
              return absl::OkStatus();
            });
            caches_.pop_back();
            if (!st.ok()) return st;
          }
          return std::vector<Value>{};
        }).status());
  }
  // The partials, combined in order, are the outputs.
  return columns([&](Value jj, Value offset, const Index&) -> absl::Status {
    for (int64_t id : group) {
      const HloInstruction* r = leaves_[id].instruction;
      Value buffer = partials[position[id]];
      Value acc = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{slot(C(0), jj)});
      for (int64_t p = 1; p < used[id]; ++p) {
        Value next = mlir::memref::LoadOp::create(b_, loc_, buffer, mlir::ValueRange{slot(C(p), jj)});
        ASSIGN_OR_RETURN(std::vector<Value> combined, EmitComputation(r->to_apply(), {acc, next}));
        acc = combined[0];
      }
      mlir::memref::StoreOp::create(b_, loc_, acc, buffers_[num_inputs + id], mlir::ValueRange{offset});
    }
    return absl::OkStatus();
  });
}

}  // namespace codegen_internal
}  // namespace passlab
