#include "passes/simplifiers/dot_operand_dims.h"

#include <algorithm>
#include <numeric>

namespace passlab {

DotOperandDims DotOperandDims::FromDotOperand(const HloInstruction& dot, int operand) {
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  DotOperandDims r;
  r.shape_ = dot.operand(operand)->shape().dimensions();
  r.dims_[kBatch] = operand == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  r.dims_[kContracting] = operand == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  for (int64_t i = 0; i < static_cast<int64_t>(r.shape_.size()); ++i) {
    auto listed = [&](Category c) { return std::count(r.dims_[c].begin(), r.dims_[c].end(), i) > 0; };
    if (!listed(kBatch) && !listed(kContracting)) r.dims_[kNonContracting].push_back(i);
  }
  return r;
}

std::vector<int64_t> DotOperandDims::Sizes(Category c) const {
  std::vector<int64_t> sizes;
  for (int64_t d : dims_[c]) sizes.push_back(shape_[d]);
  return sizes;
}

bool DotOperandDims::IsConsecutive(Category c) const {
  const std::vector<int64_t>& d = dims_[c];
  return std::adjacent_find(d.begin(), d.end(), [](int64_t a, int64_t b) { return a + 1 != b; }) == d.end();
}

void DotOperandDims::ApplyPermutation(const std::vector<int64_t>& permutation) {
  std::vector<int64_t> inverse(permutation.size());
  std::vector<int64_t> shape(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    inverse[permutation[i]] = static_cast<int64_t>(i);
    shape[i] = shape_[permutation[i]];
  }
  shape_ = std::move(shape);
  for (std::vector<int64_t>& dims : dims_) {
    for (int64_t& d : dims) d = inverse[d];
  }
}

std::optional<std::vector<int64_t>> DotOperandDims::PermuteToConsecutive(Category c) {
  if (IsConsecutive(c)) return std::nullopt;
  const std::vector<int64_t>& dims = dims_[c];
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < static_cast<int64_t>(shape_.size()); ++i) {
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) permutation.push_back(i);
  }
  permutation.insert(permutation.end(), dims.begin(), dims.end());
  ApplyPermutation(permutation);
  return permutation;
}

void DotOperandDims::CollapseCategory(Category c) {
  const std::vector<int64_t>& dims = dims_[c];
  if (dims.empty()) return;
  const int64_t first = dims.front(), last = dims.back();
  int64_t total = 1;
  for (int64_t s : Sizes(c)) total *= s;
  shape_[first] = total;
  EraseDimensions(first + 1, last + 1);
}

void DotOperandDims::EraseDimensions(int64_t start, int64_t end) {
  for (std::vector<int64_t>& dims : dims_) {
    std::vector<int64_t> kept;
    for (int64_t d : dims) {
      if (d < start) kept.push_back(d);
      if (d >= end) kept.push_back(d - (end - start));
    }
    dims = std::move(kept);
  }
  shape_.erase(shape_.begin() + start, shape_.begin() + end);
}

DotDimensionNumbers DotOperandDims::MakeDotDimensionNumbers(const DotOperandDims& lhs, const DotOperandDims& rhs) {
  DotDimensionNumbers d;
  d.lhs_batch_dimensions = lhs.dims_[kBatch];
  d.rhs_batch_dimensions = rhs.dims_[kBatch];
  d.lhs_contracting_dimensions = lhs.dims_[kContracting];
  d.rhs_contracting_dimensions = rhs.dims_[kContracting];
  return d;
}

Shape DotOperandDims::OutputShape(PrimitiveType type, const DotOperandDims& lhs, const DotOperandDims& rhs) {
  std::vector<int64_t> dims = lhs.Sizes(kBatch);
  for (const DotOperandDims* side : {&lhs, &rhs}) {
    for (int64_t s : side->Sizes(kNonContracting)) dims.push_back(s);
  }
  return Shape(type, dims);
}

Layout LayoutOrDefault(const Shape& shape) {
  return shape.has_layout() ? shape.layout() : Layout::Default(shape.rank());
}

Shape PermuteShapeDimensions(const std::vector<int64_t>& permutation, const Shape& shape) {
  Shape result = shape;
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    inverse[permutation[i]] = static_cast<int64_t>(i);
    result.set_dimensions(static_cast<int64_t>(i), shape.dimensions(permutation[i]));
    result.set_dynamic_dimension(static_cast<int64_t>(i), shape.is_dynamic_dimension(permutation[i]));
  }
  if (shape.has_layout()) {
    std::vector<int64_t>& m2m = result.mutable_layout().mutable_minor_to_major();
    for (size_t i = 0; i < m2m.size(); ++i) m2m[i] = inverse[shape.layout().minor_to_major()[i]];
  }
  return result;
}

}  // namespace passlab
