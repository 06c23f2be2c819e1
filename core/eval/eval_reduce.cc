// Reductions and windows: reduce, reduce-window, select-and-scatter, and the
// batch-norm ops.
#include <algorithm>
#include <cmath>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

std::vector<Literal> InitialOutputs(const Shape& shape, int64_t n, Operands inits) {
  std::vector<Literal> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(Filled(shape.IsTuple() ? shape.tuple_shapes(k) : shape, *inits[k]));
  return outs;
}

Literal Pack(std::vector<Literal> outs, const Shape& shape) {
  if (!shape.IsTuple()) return std::move(outs[0]);
  return Literal::Tuple(std::move(outs));
}

// f32/f64 reductions with add/multiply/max/min run on doubles (add and
// multiply accumulate in double: at least as accurate as any order XLA picks).
bool IsFastReducer(const std::optional<SimpleBinary>& simple, PrimitiveType in, PrimitiveType out) {
  if (!simple.has_value() || in != out || (in != PrimitiveType::kF32 && in != PrimitiveType::kF64)) return false;
  switch (simple->opcode) {
    case HloOpcode::kAdd: case HloOpcode::kMultiply: case HloOpcode::kMaximum: case HloOpcode::kMinimum: return true;
    default: return false;
  }
}

double Combine(HloOpcode op, double acc, double x) {
  switch (op) {
    case HloOpcode::kAdd: return acc + x;
    case HloOpcode::kMultiply: return acc * x;
    case HloOpcode::kMaximum:
      if (std::isnan(acc) || std::isnan(x)) return std::nan("");
      if (acc == 0 && x == 0) return std::signbit(acc) ? x : acc;
      return std::max(acc, x);
    case HloOpcode::kMinimum:
      if (std::isnan(acc) || std::isnan(x)) return std::nan("");
      if (acc == 0 && x == 0) return std::signbit(acc) ? acc : x;
      return std::min(acc, x);
    default: return acc;
  }
}

// The input positions (row-major linear) inside the window of output `oidx`;
// padding and the holes of base dilation contribute nothing.
void WindowPositions(const Window& w, const Shape& in, const Index& oidx, bool dilated, std::vector<int64_t>& out) {
  out.clear();
  int64_t rank = in.rank();
  std::vector<int64_t> wdims(rank);
  for (int64_t d = 0; d < rank; ++d) wdims[d] = w.dimensions[d].size;
  Index src(rank);
  ForEachIndex(wdims, [&](const Index& widx, int64_t) {
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& wd = w.dimensions[d];
      int64_t pos = oidx[d] * wd.stride - wd.padding_low + widx[d] * (dilated ? wd.window_dilation : 1);
      int64_t base = dilated ? wd.base_dilation : 1;
      if (pos < 0 || pos % base != 0) return;
      pos /= base;
      if (pos >= in.dimensions(d)) return;
      src[d] = pos;
    }
    out.push_back(Linear(src, in.dimensions()));
  });
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = static_cast<int64_t>(ops.size()) / 2;
  const Shape& in = ops[0]->shape();
  std::vector<Literal> outs = InitialOutputs(inst.shape(), n, ops.subspan(n));
  std::vector<bool> reduced(in.rank(), false);
  for (int64_t d : inst.dimensions()) reduced[d] = true;
  // Stride in the output of each input dimension (0 for reduced ones).
  std::vector<int64_t> out_stride(in.rank(), 0);
  int64_t stride = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    if (reduced[d]) continue;
    out_stride[d] = stride;
    stride *= in.dimensions(d);
  }
  auto out_linear = [&](const Index& idx) {
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) o += idx[d] * out_stride[d];
    return o;
  };
  std::optional<SimpleBinary> simple = RecognizeSimpleBinary(inst.to_apply());
  if (n == 1 && IsFastReducer(simple, in.element_type(), outs[0].shape().element_type())) {
    std::vector<double> x = ToDoubles(*ops[0]), acc = ToDoubles(outs[0]);
    ForEachIndex(in.dimensions(), [&](const Index& idx, int64_t linear) {
      double& a = acc[out_linear(idx)];
      a = simple->swapped ? Combine(simple->opcode, x[linear], a) : Combine(simple->opcode, a, x[linear]);
    });
    FromDoubles(acc, outs[0]);
    return Pack(std::move(outs), inst.shape());
  }
  std::vector<Literal*> accs;
  for (Literal& o : outs) accs.push_back(&o);
  absl::Status status;
  ForEachIndex(in.dimensions(), [&](const Index& idx, int64_t linear) {
    if (status.ok()) status = Accumulate(ctx, simple, inst.to_apply(), accs, out_linear(idx), ops.subspan(0, n), linear);
  });
  if (!status.ok()) return status;
  return Pack(std::move(outs), inst.shape());
}

absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = static_cast<int64_t>(ops.size()) / 2;
  const Shape& in = ops[0]->shape();
  const Window& w = inst.window();
  if (static_cast<int64_t>(w.dimensions.size()) != in.rank()) {
    return absl::InvalidArgumentError("reduce-window needs one window dimension per operand dimension");
  }
  std::vector<Literal> outs = InitialOutputs(inst.shape(), n, ops.subspan(n));
  std::optional<SimpleBinary> simple = RecognizeSimpleBinary(inst.to_apply());
  bool fast = n == 1 && IsFastReducer(simple, in.element_type(), outs[0].shape().element_type());
  std::vector<double> x, acc;
  if (fast) {
    x = ToDoubles(*ops[0]);
    acc = ToDoubles(outs[0]);
  }
  std::vector<Literal*> accs;
  for (Literal& o : outs) accs.push_back(&o);
  std::vector<int64_t> positions;
  absl::Status status;
  ForEachIndex(outs[0].shape().dimensions(), [&](const Index& oidx, int64_t olin) {
    if (!status.ok()) return;
    WindowPositions(w, in, oidx, /*dilated=*/true, positions);
    for (int64_t p : positions) {
      if (fast) {
        acc[olin] = simple->swapped ? Combine(simple->opcode, x[p], acc[olin]) : Combine(simple->opcode, acc[olin], x[p]);
        continue;
      }
      status = Accumulate(ctx, simple, inst.to_apply(), accs, olin, ops.subspan(0, n), p);
      if (!status.ok()) return;
    }
  });
  if (!status.ok()) return status;
  if (fast) FromDoubles(acc, outs[0]);
  return Pack(std::move(outs), inst.shape());
}

absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  Literal out = Filled(inst.shape(), *ops[2]);
  const Window& w = inst.window();
  const Shape& in = operand.shape();
  if (static_cast<int64_t>(w.dimensions.size()) != in.rank()) {
    return absl::InvalidArgumentError("select-and-scatter needs one window dimension per operand dimension");
  }
  std::optional<SimpleBinary> select = RecognizeSimpleBinary(inst.select());
  std::optional<SimpleBinary> scatter = RecognizeSimpleBinary(inst.scatter());
  Literal keep_lit(Shape::Scalar(PrimitiveType::kPred));
  Literal* out_ptr = &out;
  const Literal* src_ptr = &source;
  std::vector<int64_t> positions;
  absl::Status status;
  ForEachIndex(source.shape().dimensions(), [&](const Index& sidx, int64_t slin) {
    if (!status.ok()) return;
    WindowPositions(w, in, sidx, /*dilated=*/false, positions);
    int64_t best = -1;
    for (int64_t cand : positions) {
      if (best < 0) {
        best = cand;
        continue;
      }
      // Keep `best` when select(best, cand) is true.
      if (select.has_value() && select->opcode == HloOpcode::kCompare) {
        int64_t a = select->swapped ? cand : best, b = select->swapped ? best : cand;
        status = BinaryElement(HloOpcode::kCompare, select->direction, select->type, operand, a, operand, b, keep_lit, 0);
        if (!status.ok()) return;
        if (!keep_lit.GetBits(0)) best = cand;
        continue;
      }
      Literal x = Element(operand, best), y = Element(operand, cand);
      const Literal* args[] = {&x, &y};
      absl::StatusOr<Literal> r = ctx.Call(*inst.select(), args);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      if (!r->GetBits(0)) best = cand;
    }
    if (best >= 0) status = Accumulate(ctx, scatter, inst.scatter(), {&out_ptr, 1}, best, {&src_ptr, 1}, slin);
  });
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<Literal> EvalBatchNorm(const HloInstruction& inst, Operands ops) {
  const Shape& xs = ops[0]->shape();
  const Shape& shape = inst.shape();
  int64_t f = inst.attrs().feature_index;
  if (f < 0 || f >= xs.rank()) return absl::InvalidArgumentError(StrCat("feature_index ", f, " is out of range"));
  int64_t nf = xs.dimensions(f);
  int64_t inner = 1;
  for (int64_t d = f + 1; d < xs.rank(); ++d) inner *= xs.dimensions(d);
  double eps = inst.attrs().epsilon;
  std::vector<double> x = ToDoubles(*ops[0]);
  int64_t total = static_cast<int64_t>(x.size());
  double count = nf == 0 ? 0 : static_cast<double>(total / nf);
  auto feature_of = [&](int64_t linear) { return (linear / inner) % nf; };
  std::vector<double> scale = ToDoubles(*ops[1]);
  if (inst.opcode() == HloOpcode::kBatchNormInference) {
    std::vector<double> offset = ToDoubles(*ops[2]), mean = ToDoubles(*ops[3]), var = ToDoubles(*ops[4]);
    std::vector<double> y(total);
    for (int64_t i = 0; i < total; ++i) {
      int64_t c = feature_of(i);
      y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
    }
    Literal out(shape);
    FromDoubles(y, out);
    return out;
  }
  if (inst.opcode() == HloOpcode::kBatchNormTraining) {
    std::vector<double> offset = ToDoubles(*ops[2]), mean(nf, 0), var(nf, 0);
    for (int64_t i = 0; i < total; ++i) mean[feature_of(i)] += x[i];
    for (double& m : mean) m /= std::max(count, 1.0);
    for (int64_t i = 0; i < total; ++i) {
      double d = x[i] - mean[feature_of(i)];
      var[feature_of(i)] += d * d;
    }
    for (double& v : var) v /= std::max(count, 1.0);
    std::vector<double> y(total);
    for (int64_t i = 0; i < total; ++i) {
      int64_t c = feature_of(i);
      y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
    }
    Literal yl(shape.tuple_shapes(0)), ml(shape.tuple_shapes(1)), vl(shape.tuple_shapes(2));
    FromDoubles(y, yl);
    FromDoubles(mean, ml);
    FromDoubles(var, vl);
    return Literal::Tuple({std::move(yl), std::move(ml), std::move(vl)});
  }
  // batch-norm-grad(operand, scale, mean, variance, grad_output).
  std::vector<double> mean = ToDoubles(*ops[2]), var = ToDoubles(*ops[3]), dy = ToDoubles(*ops[4]);
  std::vector<double> sum_dy(nf, 0), sum_dy_xmu(nf, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = feature_of(i);
    sum_dy[c] += dy[i];
    sum_dy_xmu[c] += dy[i] * (x[i] - mean[c]);
  }
  std::vector<double> dx(total), dscale(nf), doffset(nf);
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = feature_of(i);
    double inv = 1.0 / std::sqrt(var[c] + eps);
    double xmu = x[i] - mean[c];
    dx[i] = scale[c] * inv * (dy[i] - sum_dy[c] / count - xmu * inv * inv * sum_dy_xmu[c] / count);
  }
  for (int64_t c = 0; c < nf; ++c) {
    dscale[c] = sum_dy_xmu[c] / std::sqrt(var[c] + eps);
    doffset[c] = sum_dy[c];
  }
  Literal dxl(shape.tuple_shapes(0)), dsl(shape.tuple_shapes(1)), dol(shape.tuple_shapes(2));
  FromDoubles(dx, dxl);
  FromDoubles(dscale, dsl);
  FromDoubles(doffset, dol);
  return Literal::Tuple({std::move(dxl), std::move(dsl), std::move(dol)});
}

}  // namespace passlab::eval
