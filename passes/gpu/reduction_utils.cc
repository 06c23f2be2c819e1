#include "passes/gpu/reduction_utils.h"

#include <algorithm>

namespace passlab {

bool IsRewritableReduce(const HloInstruction& reduce) {
  const int64_t n = reduce.operand_count() / 2;
  if (n == 0 || reduce.operand_count() % 2 != 0 || reduce.to_apply() == nullptr) return false;
  const Shape& first = reduce.operand(0)->shape();
  for (int64_t k = 0; k < n; ++k) {
    if (!reduce.operand(k)->shape().IsArray() || !reduce.operand(k)->shape().SameDimensions(first)) return false;
    if (!reduce.operand(n + k)->shape().IsScalar()) return false;
  }
  std::vector<int64_t> dims = reduce.dimensions();
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) return false;
  return dims.empty() || (dims.front() >= 0 && dims.back() < first.rank());
}

std::vector<HloInstruction*> ReduceInputs(const HloInstruction& reduce) {
  const std::vector<HloInstruction*>& ops = reduce.operands();
  return std::vector<HloInstruction*>(ops.begin(), ops.begin() + ops.size() / 2);
}

std::vector<HloInstruction*> ReduceInits(const HloInstruction& reduce) {
  const std::vector<HloInstruction*>& ops = reduce.operands();
  return std::vector<HloInstruction*>(ops.begin() + ops.size() / 2, ops.end());
}

HloInstruction* AddReduce(ExpansionBuilder& b, const std::vector<HloInstruction*>& inputs,
                          const std::vector<HloInstruction*>& inits, std::vector<int64_t> dims,
                          HloComputation* reducer) {
  std::vector<Shape> shapes;
  for (HloInstruction* in : inputs) {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < in->shape().rank(); ++d) {
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(in->shape().dimensions(d));
    }
    shapes.emplace_back(in->shape().element_type(), kept);
  }
  Shape shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  return b.Add(HloInstruction::CreateReduce(shape, inputs, inits, std::move(dims), reducer));
}

std::vector<int64_t> MajorToMinor(const Shape& shape) {
  std::vector<int64_t> order;
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major().size()) == shape.rank()) {
    order.assign(shape.layout().minor_to_major().rbegin(), shape.layout().minor_to_major().rend());
    return order;
  }
  for (int64_t d = 0; d < shape.rank(); ++d) order.push_back(d);
  return order;
}

bool HasDefaultLayout(const Shape& shape) {
  std::vector<int64_t> order = MajorToMinor(shape);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::optional<ReductionDimensions> GetReductionKind(const HloInstruction& reduce) {
  if (!IsRewritableReduce(reduce)) return std::nullopt;
  const Shape& in = reduce.operand(0)->shape();
  const std::vector<int64_t>& reduced = reduce.dimensions();
  // Runs of (reduced?, product) in memory order, size-1 dims skipped.
  std::vector<std::pair<bool, int64_t>> runs;
  for (int64_t d : MajorToMinor(in)) {
    if (in.dimensions(d) == 1) continue;
    bool r = std::find(reduced.begin(), reduced.end(), d) != reduced.end();
    if (!runs.empty() && runs.back().first == r) {
      runs.back().second *= in.dimensions(d);
    } else {
      runs.push_back({r, in.dimensions(d)});
    }
  }
  bool any_reduced = std::any_of(runs.begin(), runs.end(), [](const auto& run) { return run.first; });
  if (!any_reduced || runs.size() > 3) return std::nullopt;
  ReductionDimensions r;
  if (runs.back().first) {  // the minor-most dims are reduced: row
    r.is_row_reduction = true;
    if (runs.size() == 3) r.dims = {runs[0].second, runs[1].second, runs[2].second};
    if (runs.size() == 2) r.dims = {1, runs[0].second, runs[1].second};
    if (runs.size() == 1) r.dims = {1, 1, runs[0].second};
    return r;
  }
  r.is_row_reduction = false;
  if (runs.size() == 3) r.dims = {runs[0].second, runs[1].second, runs[2].second};
  if (runs.size() == 2) r.dims = {1, runs[0].second, runs[1].second};
  return r;
}

std::array<int64_t, 3> GetReductionTiling(const ReductionDimensions& r) {
  if (r.is_row_reduction) return {std::min<int64_t>(r.dims[0], 8), 1, 16};
  return {1, 128, 1};
}

bool IsReductionRaceFree(const ReductionDimensions& r) {
  std::array<int64_t, 3> tile = GetReductionTiling(r);
  if (r.is_row_reduction) return r.dims[2] <= 1024 * tile[2] && r.dims[0] <= 8;
  return r.dims[1] <= 32 * tile[1];
}

}  // namespace passlab
