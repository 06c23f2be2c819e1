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

namespace {

// The layout's order (minor to major) of `shape`; the default without one.
std::vector<int64_t> MinorToMajor(const Shape& shape) {
  std::vector<int64_t> order = MajorToMinor(shape);
  std::reverse(order.begin(), order.end());
  return order;
}

// Whether `dims` sit next to each other in the layout (XLA's
// LayoutUtil::AreDimensionsConsecutive).
bool AreDimensionsConsecutive(const Shape& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> order = MinorToMajor(shape);
  std::vector<int64_t> positions;
  for (int64_t d : dims) positions.push_back(std::find(order.begin(), order.end(), d) - order.begin());
  std::sort(positions.begin(), positions.end());
  for (size_t i = 1; i < positions.size(); ++i) {
    if (positions[i] - positions[i - 1] != 1) return false;
  }
  return true;
}

// {major, middle, minor}: the products of the dimensions more major than
// `middle` (consecutive in the layout), of `middle`, and more minor.
std::array<int64_t, 3> PartitionShapeByMiddleDimensions(const Shape& shape, const std::vector<int64_t>& middle) {
  std::array<int64_t, 3> values = {1, 1, 1};
  int segment = 2;  // minor, then middle (1), then major (0)
  for (int64_t d : MinorToMajor(shape)) {
    bool in_middle = std::find(middle.begin(), middle.end(), d) != middle.end();
    if (segment == 2 && in_middle) segment = 1;
    if (segment == 1 && !in_middle) segment = 0;
    values[segment] *= shape.dimensions(d);
  }
  return values;
}

std::vector<int64_t> KeptDimensions(const HloInstruction& reduce) {
  std::vector<int64_t> kept;
  const std::vector<int64_t>& reduced = reduce.dimensions();
  for (int64_t d = 0; d < reduce.operand(0)->shape().rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) kept.push_back(d);
  }
  return kept;
}

// Whether the reduction emitter beats the elemental one (XLA's
// IsUnnestedReductionFasterThanElemental, warp size 32).
bool IsUnnestedReductionFasterThanElemental(const ReductionDimensions& r) {
  constexpr int64_t kWarpSize = 32;
  if (r.is_row_reduction) return r.dims[2] >= kWarpSize || kWarpSize % r.dims[2] == 0;
  int64_t major = r.dims[1];
  int64_t minor = r.dims[2];
  bool prefer_elemental = major < kWarpSize || (major < 2 * kWarpSize && minor < kWarpSize) ||
                          (major < 4 * kWarpSize && minor < 8) || (major < 8 * kWarpSize && minor < 3);
  return !prefer_elemental;
}

}  // namespace

ReductionDimensions GetReductionKindAndContiguousComponents(const HloInstruction& reduce) {
  const Shape& in = reduce.operand(0)->shape();
  std::vector<int64_t> kept = KeptDimensions(reduce);
  if (kept.empty()) return {true, {1, 1, in.element_count()}};
  if (AreDimensionsConsecutive(in, kept)) {
    std::array<int64_t, 3> p = PartitionShapeByMiddleDimensions(in, kept);
    if (p[1] == 1) return {true, {1, 1, p[0] * p[2]}};
    if (p[2] == 1) return {false, {1, p[0], p[1]}};
    return {true, p};
  }
  std::array<int64_t, 3> p = PartitionShapeByMiddleDimensions(in, reduce.dimensions());
  if (p[2] == 1) return {true, {1, p[0], p[1]}};
  return {false, p};
}

bool IsReductionFromOrToContiguousDimensions(const HloInstruction& reduce) {
  if (reduce.opcode() != HloOpcode::kReduce || !IsRewritableReduce(reduce)) return false;
  const Shape& in = reduce.operand(0)->shape();
  if (!AreDimensionsConsecutive(in, KeptDimensions(reduce)) && !AreDimensionsConsecutive(in, reduce.dimensions())) {
    return false;
  }
  return IsUnnestedReductionFasterThanElemental(GetReductionKindAndContiguousComponents(reduce));
}

int64_t ReductionDimensionRaceFreeBound(const ReductionDimensions& r) {
  std::array<int64_t, 3> tile = GetReductionTiling(r);
  return r.is_row_reduction ? 1024 * tile[2] : 32 * tile[1];
}

std::array<int64_t, 3> GetReductionTiling(const ReductionDimensions& r) {
  if (r.is_row_reduction) return {std::min<int64_t>(r.dims[0], 8), 1, 16};
  return {1, 128, 1};
}

bool IsReductionRaceFree(const ReductionDimensions& r) {
  if (r.is_row_reduction) {
    return r.dims[2] <= ReductionDimensionRaceFreeBound(r) && r.dims[0] <= kBatchedReductionRaceFreeBound;
  }
  return r.dims[1] <= ReductionDimensionRaceFreeBound(r);
}

}  // namespace passlab
