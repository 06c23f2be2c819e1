#include "passes/simplifiers/dot_dimension_sorter.h"

#include <algorithm>
#include <numeric>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace passlab {
namespace {

// The memory position (0 = most major) of each dimension of `shape`.
std::vector<int64_t> PhysicalPositions(const Shape& shape) {
  std::vector<int64_t> pos(shape.rank());
  if (!shape.has_layout()) {
    std::iota(pos.begin(), pos.end(), 0);
    return pos;
  }
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  for (int64_t i = 0; i < shape.rank(); ++i) pos[m2m[i]] = shape.rank() - 1 - i;
  return pos;
}

// The memory positions of `dims`, in list order.
std::vector<int64_t> PositionsOf(const Shape& shape, const std::vector<int64_t>& dims) {
  std::vector<int64_t> physical = PhysicalPositions(shape);
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(physical[d]);
  return out;
}

// The values, sorted, form a run max - min + 1 long (they are distinct).
bool ConsecutiveIfSorted(std::vector<int64_t> v) {
  if (v.empty()) return false;
  std::sort(v.begin(), v.end());
  return v.back() - v.front() + 1 == static_cast<int64_t>(v.size());
}

}  // namespace

absl::StatusOr<bool> DotDimensionSorter::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* dot : c->MakeInstructionPostOrder()) {
      if (dot->opcode() != HloOpcode::kDot || !dot->attrs().sparsity.empty()) continue;
      const DotDimensionNumbers& d = dot->attrs().dot_dnums;
      if (d.lhs_contracting_dimensions.size() < 2) continue;
      std::vector<int64_t> lhs = PositionsOf(dot->operand(0)->shape(), d.lhs_contracting_dimensions);
      std::vector<int64_t> rhs = PositionsOf(dot->operand(1)->shape(), d.rhs_contracting_dimensions);
      bool cons_lhs = ConsecutiveIfSorted(lhs), cons_rhs = ConsecutiveIfSorted(rhs);
      bool sorted_lhs = std::is_sorted(lhs.begin(), lhs.end()), sorted_rhs = std::is_sorted(rhs.begin(), rhs.end());
      // Sort a consecutive, unsorted side, never at the cost of the other
      // side's consecutive, sorted order.
      bool sort_lhs = cons_lhs && !sorted_lhs && !(cons_rhs && sorted_rhs);
      bool sort_rhs = !sort_lhs && cons_rhs && !sorted_rhs && !(cons_lhs && sorted_lhs);
      if (!sort_lhs && !sort_rhs) continue;
      const std::vector<int64_t>& key = sort_lhs ? lhs : rhs;
      std::vector<int64_t> order(key.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[a] < key[b]; });
      DotDimensionNumbers sorted = d;
      for (size_t i = 0; i < order.size(); ++i) {
        sorted.lhs_contracting_dimensions[i] = d.lhs_contracting_dimensions[order[i]];
        sorted.rhs_contracting_dimensions[i] = d.rhs_contracting_dimensions[order[i]];
      }
      dot->mutable_attrs().dot_dnums = sorted;
      BumpCounter("sorted dot contracting dimensions");
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
