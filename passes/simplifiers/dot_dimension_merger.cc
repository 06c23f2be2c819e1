#include "passes/simplifiers/dot_dimension_merger.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/simplifiers/dot_operand_dims.h"

namespace passlab {
namespace {

// Distinct numbers that, sorted, form a run.
bool ConsecutiveIfSorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] != v[i - 1] + 1) return false;
  }
  return true;
}

// XLA's LayoutUtil::AreDimensionsConsecutive: the dimensions' positions in
// the layout form a run.
bool ConsecutiveInLayout(const Shape& shape, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> m2m = LayoutOrDefault(shape).minor_to_major();
  std::vector<int64_t> positions;
  for (int64_t d : dims) positions.push_back(std::find(m2m.begin(), m2m.end(), d) - m2m.begin());
  return ConsecutiveIfSorted(positions);
}

// Dimension numbers at or past `start` moved down by `shift`.
std::vector<int64_t> Shift(const std::vector<int64_t>& dims, int64_t start, int64_t shift) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d < start ? d : d - shift);
  return out;
}

// `shape` with dimensions batch_dim+1 .. batch_dim+count-1 deleted (from the
// layout too) and batch_dim of size `batch_size`.
Shape MergeBatchDims(const Shape& shape, int64_t batch_dim, int64_t count, int64_t batch_size) {
  std::vector<int64_t> dims = shape.dimensions();
  dims.erase(dims.begin() + batch_dim + 1, dims.begin() + batch_dim + count);
  dims[batch_dim] = batch_size;
  Shape out(shape.element_type(), dims);
  if (!shape.has_layout()) return out;
  std::vector<int64_t> m2m;
  for (int64_t d : shape.layout().minor_to_major()) {
    if (d > batch_dim && d < batch_dim + count) continue;
    m2m.push_back(d >= batch_dim + count ? d - (count - 1) : d);
  }
  Layout layout = shape.layout();
  layout.mutable_minor_to_major() = m2m;
  out.set_layout(layout);
  return out;
}

class BatchDimensionMerger : public HloRewriteVisitor {
 public:
  // dot(a[.., B1, B2, ..], b[.., B1, B2, ..]) =>
  //   reshape(dot(reshape(a)[.., B1*B2, ..], reshape(b)[.., B1*B2, ..]))
  absl::Status HandleDot(HloInstruction* dot) override {
    const DotDimensionNumbers& d = dot->attrs().dot_dnums;
    const Shape& lhs = dot->operand(0)->shape();
    const Shape& rhs = dot->operand(1)->shape();
    const int64_t count = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    if (count < 2 || d.rhs_batch_dimensions.size() != d.lhs_batch_dimensions.size() ||
        !ConsecutiveIfSorted(d.lhs_batch_dimensions) || !ConsecutiveIfSorted(d.rhs_batch_dimensions) ||
        !std::is_sorted(d.lhs_batch_dimensions.begin(), d.lhs_batch_dimensions.end()) ||
        !std::is_sorted(d.rhs_batch_dimensions.begin(), d.rhs_batch_dimensions.end()) ||
        !ConsecutiveInLayout(lhs, d.lhs_batch_dimensions) || !ConsecutiveInLayout(rhs, d.rhs_batch_dimensions)) {
      return absl::OkStatus();
    }
    const int64_t lhs_batch = d.lhs_batch_dimensions.front();
    const int64_t rhs_batch = d.rhs_batch_dimensions.front();
    int64_t batch_size = 1;
    for (int64_t b : d.lhs_batch_dimensions) batch_size *= lhs.dimensions(b);

    DotDimensionNumbers merged;
    merged.lhs_batch_dimensions = {lhs_batch};
    merged.rhs_batch_dimensions = {rhs_batch};
    merged.lhs_contracting_dimensions = Shift(d.lhs_contracting_dimensions, lhs_batch, count - 1);
    merged.rhs_contracting_dimensions = Shift(d.rhs_contracting_dimensions, rhs_batch, count - 1);

    HloInstruction* new_lhs = AddInstruction(
        dot, HloInstruction::CreateReshape(MergeBatchDims(lhs, lhs_batch, count, batch_size), dot->mutable_operand(0)));
    HloInstruction* new_rhs = AddInstruction(
        dot, HloInstruction::CreateReshape(MergeBatchDims(rhs, rhs_batch, count, batch_size), dot->mutable_operand(1)));
    auto new_dot = HloInstruction::CreateDot(MergeBatchDims(dot->shape(), 0, count, batch_size), new_lhs, new_rhs,
                                             merged, dot->attrs().precision_config);
    new_dot->set_metadata(dot->metadata());
    HloInstruction* added = AddInstruction(dot, std::move(new_dot));
    return ReplaceWithNewInstruction(dot, HloInstruction::CreateReshape(dot->shape(), added));
  }
};

}  // namespace

absl::StatusOr<bool> DotDimensionMerger::RunImpl(HloModule& module, PassRunContext*) {
  BatchDimensionMerger visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
