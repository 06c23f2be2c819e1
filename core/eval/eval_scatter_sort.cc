// scatter, sort and topk: data movement driven by computed positions.
#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A comparator whose root is compare(param0, param1) (or swapped), whatever
// other parameters it has: sort by the first operand only.
std::optional<SimpleBinary> RecognizeKeyCompare(const HloComputation* c) {
  if (c == nullptr || c->num_parameters() < 2) return std::nullopt;
  const HloInstruction* r = c->root_instruction();
  if (r->opcode() != HloOpcode::kCompare) return std::nullopt;
  const HloInstruction* p0 = c->parameter_instruction(0);
  const HloInstruction* p1 = c->parameter_instruction(1);
  SimpleBinary s{HloOpcode::kCompare, r->attrs().comparison_direction, r->attrs().comparison_type};
  if (r->operand(0) == p0 && r->operand(1) == p1) return s;
  if (r->operand(0) == p1 && r->operand(1) == p0) {
    s.swapped = true;
    return s;
  }
  return std::nullopt;
}

// Total-order key of a float (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
int64_t TotalOrderKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof(v));
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}

}  // namespace

absl::StatusOr<Literal> EvalScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = (static_cast<int64_t>(ops.size()) - 1) / 2;
  const Literal& indices = *ops[n];
  const ScatterDimensionNumbers& sd = inst.attrs().scatter_dnums;
  std::vector<Literal> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(*ops[k]);
  const Shape& os = outs[0].shape();
  const Shape& us = ops[n + 1]->shape();
  const Shape& is = indices.shape();
  std::vector<int64_t> window_operand_dims, update_scatter_dims, window_size(os.rank(), 1);
  for (int64_t i = 0; i < os.rank(); ++i) {
    if (!Contains(sd.inserted_window_dims, i) && !Contains(sd.input_batching_dims, i)) window_operand_dims.push_back(i);
  }
  for (int64_t d = 0; d < us.rank(); ++d) {
    if (!Contains(sd.update_window_dims, d)) update_scatter_dims.push_back(d);
  }
  if (window_operand_dims.size() != sd.update_window_dims.size()) {
    return absl::InvalidArgumentError("scatter dimension numbers do not match the shapes");
  }
  for (size_t k = 0; k < window_operand_dims.size(); ++k) {
    window_size[window_operand_dims[k]] = us.dimensions(sd.update_window_dims[k]);
  }
  std::vector<int64_t> index_dims;
  for (int64_t d = 0; d < is.rank(); ++d) {
    if (d != sd.index_vector_dim) index_dims.push_back(d);
  }
  std::optional<SimpleBinary> simple = RecognizeSimpleBinary(inst.to_apply());
  std::vector<Literal*> accs;
  for (Literal& o : outs) accs.push_back(&o);
  std::vector<const Literal*> xs(ops.begin() + n + 1, ops.end());
  absl::Status status;
  Index sidx(is.rank()), start(os.rank()), dst(os.rank());
  ForEachIndex(us.dimensions(), [&](const Index& uidx, int64_t ulin) {
    if (!status.ok()) return;
    for (size_t j = 0; j < index_dims.size(); ++j) sidx[index_dims[j]] = uidx[update_scatter_dims[j]];
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < sd.scatter_dims_to_operand_dims.size(); ++k) {
      if (sd.index_vector_dim < is.rank()) sidx[sd.index_vector_dim] = static_cast<int64_t>(k);
      start[sd.scatter_dims_to_operand_dims[k]] = indices.GetInt(Linear(sidx, is.dimensions()));
    }
    for (size_t k = 0; k < sd.input_batching_dims.size(); ++k) {
      start[sd.input_batching_dims[k]] = sidx[sd.scatter_indices_batching_dims[k]];
    }
    // An update window that does not fit entirely is skipped (XLA).
    for (int64_t d = 0; d < os.rank(); ++d) {
      if (start[d] < 0 || start[d] > os.dimensions(d) - window_size[d]) return;
    }
    dst = start;
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      dst[window_operand_dims[k]] += uidx[sd.update_window_dims[k]];
    }
    status = Accumulate(ctx, simple, inst.to_apply(), accs, Linear(dst, os.dimensions()), xs, ulin);
  });
  if (!status.ok()) return status;
  if (!inst.shape().IsTuple()) return std::move(outs[0]);
  return Literal::Tuple(std::move(outs));
}

absl::StatusOr<Literal> EvalSort(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = static_cast<int64_t>(ops.size());
  const Shape& s = ops[0]->shape();
  int64_t dim = inst.dimensions(0);
  std::vector<Literal> outs;
  for (int64_t k = 0; k < n; ++k) outs.push_back(Literal(ops[k]->shape()));
  if (s.element_count() == 0) {
    if (!inst.shape().IsTuple()) return std::move(outs[0]);
    return Literal::Tuple(std::move(outs));
  }
  std::vector<int64_t> outer = s.dimensions();
  outer[dim] = 1;
  int64_t stride = RowMajorStrides(s.dimensions())[dim];
  std::optional<SimpleBinary> key = RecognizeKeyCompare(inst.to_apply());
  Literal r(Shape::Scalar(PrimitiveType::kPred));
  absl::Status status;
  std::vector<int64_t> order(s.dimensions(dim));
  ForEachIndex(outer, [&](const Index& base, int64_t) {
    if (!status.ok()) return;
    int64_t start = Linear(base, s.dimensions());
    std::iota(order.begin(), order.end(), 0);
    auto less = [&](int64_t a, int64_t b) -> bool {
      if (!status.ok()) return false;
      int64_t ia = start + a * stride, ib = start + b * stride;
      if (key.has_value()) {
        if (key->swapped) std::swap(ia, ib);
        status = BinaryElement(HloOpcode::kCompare, key->direction, key->type, *ops[0], ia, *ops[0], ib, r, 0);
        return r.GetBits(0) != 0;
      }
      std::vector<Literal> scalars;
      for (int64_t k = 0; k < n; ++k) {
        scalars.push_back(Element(*ops[k], ia));
        scalars.push_back(Element(*ops[k], ib));
      }
      std::vector<const Literal*> ptrs;
      for (const Literal& l : scalars) ptrs.push_back(&l);
      absl::StatusOr<Literal> c = ctx.Call(*inst.to_apply(), ptrs);
      if (!c.ok()) {
        status = c.status();
        return false;
      }
      return c->GetBits(0) != 0;
    };
    // Stable for every comparator: a valid result for is_stable=false too.
    std::stable_sort(order.begin(), order.end(), less);
    for (int64_t k = 0; k < n; ++k) {
      for (size_t p = 0; p < order.size(); ++p) {
        CopyElement(outs[k], start + static_cast<int64_t>(p) * stride, *ops[k], start + order[p] * stride);
      }
    }
  });
  if (!status.ok()) return status;
  if (!inst.shape().IsTuple()) return std::move(outs[0]);
  return Literal::Tuple(std::move(outs));
}

absl::StatusOr<Literal> EvalTopK(const HloInstruction& inst, Operands ops) {
  const Literal& x = *ops[0];
  const Shape& s = x.shape();
  if (s.rank() < 1) return absl::InvalidArgumentError("topk needs an operand of rank >= 1");
  int64_t n = s.dimensions(s.rank() - 1), k = inst.attrs().k;
  bool largest = inst.attrs().largest;
  if (k > n || k < 0) return absl::InvalidArgumentError(StrCat("topk k=", k, " exceeds the last dimension ", n));
  Literal values(inst.shape().tuple_shapes(0)), indices(inst.shape().tuple_shapes(1));
  int64_t rows = n == 0 ? 0 : s.element_count() / n;
  Kind kind = KindOf(s.element_type());
  std::vector<int64_t> order(n);
  for (int64_t row = 0; row < rows; ++row) {
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t i) -> std::pair<int64_t, uint64_t> {
      int64_t at = row * n + i;
      if (kind == Kind::kFloat) return {TotalOrderKey(x.GetDouble(at)), 0};
      if (kind == Kind::kSigned) return {x.GetInt(at), 0};
      return {0, x.GetUint(at)};
    };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key(a) > key(b) : key(a) < key(b);
    });
    for (int64_t j = 0; j < k; ++j) {
      CopyElement(values, row * k + j, x, row * n + order[j]);
      indices.SetInt(row * k + j, order[j]);
    }
  }
  return Literal::Tuple({std::move(values), std::move(indices)});
}

}  // namespace passlab::eval
