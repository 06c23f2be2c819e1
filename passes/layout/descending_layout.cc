#include "passes/layout/descending_layout.h"

#include <algorithm>

namespace passlab {

bool HasDescendingLayout(const Shape& shape) {
  if (!shape.IsArray()) return false;
  if (!shape.has_layout()) return true;
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

std::vector<int64_t> MajorToMinorDims(const Shape& shape) {
  std::vector<int64_t> out;
  if (!shape.has_layout() || static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    for (int64_t d = 0; d < shape.rank(); ++d) out.push_back(d);
    return out;
  }
  out.assign(shape.layout().minor_to_major().rbegin(), shape.layout().minor_to_major().rend());
  return out;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& p) {
  std::vector<int64_t> out(p.size());
  for (size_t i = 0; i < p.size(); ++i) out[p[i]] = static_cast<int64_t>(i);
  return out;
}

std::vector<int64_t> ComposePermutations(const std::vector<int64_t>& p1, const std::vector<int64_t>& p2) {
  std::vector<int64_t> out;
  out.reserve(p2.size());
  for (int64_t i : p2) out.push_back(p1[i]);
  return out;
}

bool IsIdentityPermutation(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Shape DescendingShapeWithSamePhysicalLayout(const Shape& shape) {
  if (!shape.IsArray()) return shape;
  std::vector<int64_t> order = MajorToMinorDims(shape);
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(shape.dimensions(d));
  Shape out(shape.element_type(), dims);
  for (size_t i = 0; i < order.size(); ++i) out.set_dynamic_dimension(i, shape.is_dynamic_dimension(order[i]));
  if (shape.has_layout()) {
    Layout layout = shape.layout();
    layout.mutable_minor_to_major() = Layout::Default(shape.rank()).minor_to_major();
    out.set_layout(std::move(layout));
  }
  return out;
}

Shape WithDescendingLayout(const Shape& shape) {
  Shape out(shape.element_type(), shape.dimensions());
  for (int64_t d = 0; d < shape.rank(); ++d) out.set_dynamic_dimension(d, shape.is_dynamic_dimension(d));
  return out;
}

Shape DeleteDimensions(const Shape& shape, std::vector<int64_t> dims) {
  std::sort(dims.begin(), dims.end());
  auto deleted = [&](int64_t d) { return std::binary_search(dims.begin(), dims.end(), d); };
  // New number of each kept dimension.
  std::vector<int64_t> renumber(shape.rank(), -1);
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (deleted(d)) continue;
    renumber[d] = static_cast<int64_t>(kept.size());
    kept.push_back(shape.dimensions(d));
  }
  Shape out(shape.element_type(), kept);
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (renumber[d] >= 0) out.set_dynamic_dimension(renumber[d], shape.is_dynamic_dimension(d));
  }
  if (shape.has_layout()) {
    Layout layout = shape.layout();
    std::vector<int64_t> m2m;
    for (int64_t d : shape.layout().minor_to_major()) {
      if (renumber[d] >= 0) m2m.push_back(renumber[d]);
    }
    layout.mutable_minor_to_major() = m2m;
    out.set_layout(std::move(layout));
  }
  return out;
}

}  // namespace passlab
