// Shape inference: dots (plain, ragged, scaled) and convolutions.
#include "core/verify/shape_inference_internal.h"

#include <algorithm>
#include <set>

#include "core/ir/str_util.h"

namespace passlab {
namespace shape_inference_internal {

// ragged-dot(lhs, rhs, group_sizes), XLA's InferRaggedDotOpShape: exactly one
// lhs ragged dim; its kind picks the mode (non-contracting: one rhs group dim
// of size g, dropped from the result; contracting: the result leads with g;
// batch: a plain dot); group_sizes is [g] or [prefix..., g].
absl::StatusOr<Shape> InferRaggedDot(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  const DotDimensionNumbers& d = a.dot_dnums;
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& sizes = inst.operand(2)->shape();
  if (!sizes.IsArray() || sizes.rank() < 1 || !IsIntegralType(sizes.element_type())) {
    return Err(inst, "group_sizes must be an integer array of rank >= 1");
  }
  if (a.lhs_ragged_dims.size() != 1) return Err(inst, "needs exactly one lhs ragged dimension (lhs_ragged_dims)");
  const int64_t ragged = a.lhs_ragged_dims[0];
  if (ragged < 0 || ragged >= lhs.rank()) {
    return Err(inst, StrCat("lhs ragged dimension ", ragged, " is out of range [0, ", lhs.rank(), ")"));
  }
  const bool batch = absl::c_linear_search(d.lhs_batch_dimensions, ragged);
  const bool contracting = absl::c_linear_search(d.lhs_contracting_dimensions, ragged);
  const int64_t groups = sizes.dimensions(sizes.rank() - 1);
  for (int64_t g : a.rhs_group_dims) {
    if (g < 0 || g >= rhs.rank()) return Err(inst, StrCat("rhs group dimension ", g, " is out of range"));
    if (absl::c_linear_search(d.rhs_batch_dimensions, g) || absl::c_linear_search(d.rhs_contracting_dimensions, g)) {
      return Err(inst, "the rhs group dimension cannot be a batch or contracting dimension");
    }
  }
  if ((batch || contracting) && !a.rhs_group_dims.empty()) {
    return Err(inst, "there must be no rhs group dimension when the ragged dimension is batch or contracting");
  }
  if (!batch && !contracting) {
    if (a.rhs_group_dims.size() != 1) {
      return Err(inst, "needs exactly one rhs group dimension when the lhs ragged dimension is non-contracting");
    }
    if (rhs.dimensions(a.rhs_group_dims[0]) != groups) {
      return Err(inst, StrCat("the rhs group dimension has size ", rhs.dimensions(a.rhs_group_dims[0]),
                              " but group_sizes has ", groups, " groups"));
    }
  }
  // The dot without the rhs group dim: check dims as a dot does.
  Shape rhs_no_group = rhs;
  DotDimensionNumbers dd = d;
  if (!a.rhs_group_dims.empty()) {
    const int64_t g = a.rhs_group_dims[0];
    std::vector<int64_t> dims = rhs.dimensions();
    dims.erase(dims.begin() + g);
    rhs_no_group = Shape(rhs.element_type(), dims);
    for (auto* v : {&dd.rhs_batch_dimensions, &dd.rhs_contracting_dimensions}) {
      for (int64_t& x : *v) x -= x > g ? 1 : 0;
    }
  }
  PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : lhs.element_type();
  absl::StatusOr<Shape> dot = InferDotShape(lhs, rhs_no_group, dd, t);
  if (!dot.ok()) return Err(inst, std::string(dot.status().message()));
  if (!contracting) return *dot;
  std::vector<int64_t> dims = dot->dimensions();
  dims.insert(dims.begin(), groups);
  return Shape(t, dims);
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale), XLA's ShapeVerifier::
// HandleScaledDot: each scale is a scalar (no scaling) or has its operand's
// rank with every operand dim a multiple of the scale's; not both scalars;
// the result is the dot's.
absl::StatusOr<Shape> InferScaledDot(const HloInstruction& inst) {
  for (int64_t i : {0, 1}) {
    const Shape& x = inst.operand(i)->shape();
    const Shape& scale = inst.operand(i + 2)->shape();
    if (!scale.IsArray()) return Err(inst, "scales must be arrays");
    if (scale.rank() == 0) continue;
    if (scale.rank() != x.rank()) {
      return Err(inst, StrCat("scale operand ", i + 2, " has rank ", scale.rank(), " but operand ", i, " has rank ",
                              x.rank()));
    }
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (scale.dimensions(d) == 0 || x.dimensions(d) % scale.dimensions(d) != 0) {
        return Err(inst, StrCat("dimension ", d, " of operand ", i, " (", x.dimensions(d),
                                ") is not a multiple of the scale's (", scale.dimensions(d), ")"));
      }
    }
  }
  if (inst.operand(2)->shape().rank() == 0 && inst.operand(3)->shape().rank() == 0) {
    return Err(inst, "at least one of the scales must not be a scalar");
  }
  PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : inst.operand(0)->shape().element_type();
  absl::StatusOr<Shape> dot = InferDotShape(inst.operand(0)->shape(), inst.operand(1)->shape(), inst.attrs().dot_dnums, t);
  if (!dot.ok()) return Err(inst, std::string(dot.status().message()));
  return *dot;
}

}  // namespace shape_inference_internal

using namespace shape_inference_internal;

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                                    PrimitiveType result_type) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("dot: ", m)); };
  if (!lhs.IsArray() || !rhs.IsArray()) return fail("operands must be arrays");
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) return fail("batch dimension counts differ");
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return fail("contracting dimension counts differ");
  }
  auto in_range = [](const std::vector<int64_t>& v, int64_t rank) {
    std::set<int64_t> seen;
    for (int64_t x : v) {
      if (x < 0 || x >= rank || !seen.insert(x).second) return false;
    }
    return true;
  };
  std::vector<int64_t> lhs_all = d.lhs_batch_dimensions, rhs_all = d.rhs_batch_dimensions;
  lhs_all.insert(lhs_all.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  rhs_all.insert(rhs_all.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  if (!in_range(lhs_all, lhs.rank())) return fail("lhs batch/contracting dimensions are out of range or repeated");
  if (!in_range(rhs_all, rhs.rank())) return fail("rhs batch/contracting dimensions are out of range or repeated");
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_batch_dimensions[i]), b = rhs.dimensions(d.rhs_batch_dimensions[i]);
    if (a != b) {
      return fail(StrCat("lhs batch dimension ", d.lhs_batch_dimensions[i], " has size ", a,
                         " but rhs batch dimension ", d.rhs_batch_dimensions[i], " has size ", b));
    }
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_contracting_dimensions[i]), b = rhs.dimensions(d.rhs_contracting_dimensions[i]);
    if (a != b) {
      return fail(StrCat("lhs contracting dimension ", d.lhs_contracting_dimensions[i], " has size ", a,
                         " but rhs contracting dimension ", d.rhs_contracting_dimensions[i], " has size ", b));
    }
  }
  Shape r = Shape::ArrayWithoutLayout(result_type, {});
  for (int64_t b : d.lhs_batch_dimensions) r.add_dimension(lhs.dimensions(b));
  for (int64_t i : FreeDims(lhs.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions)) r.add_dimension(lhs.dimensions(i));
  for (int64_t i : FreeDims(rhs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions)) r.add_dimension(rhs.dimensions(i));
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferConvolveShape(const Shape& lhs, const Shape& rhs, int64_t fgc, int64_t bgc,
                                         const Window& window, const ConvolutionDimensionNumbers& d,
                                         PrimitiveType result_type) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("convolution: ", m)); };
  if (lhs.rank() != rhs.rank() || lhs.rank() < 2) return fail("input and kernel need the same rank (at least 2)");
  int64_t spatial = lhs.rank() - 2;
  if (static_cast<int64_t>(d.input_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.output_spatial_dimensions.size()) != spatial) {
    return fail("dim_labels do not match the rank");
  }
  if (static_cast<int64_t>(window.dimensions.size()) != spatial) {
    return fail(StrCat("window has ", window.dimensions.size(), " dimensions for ", spatial, " spatial dimensions"));
  }
  if (fgc <= 0 || bgc <= 0) return fail("group counts must be positive");
  int64_t in_batch = lhs.dimensions(d.input_batch_dimension);
  int64_t in_feature = lhs.dimensions(d.input_feature_dimension);
  int64_t k_in = rhs.dimensions(d.kernel_input_feature_dimension);
  int64_t k_out = rhs.dimensions(d.kernel_output_feature_dimension);
  if (in_feature % fgc != 0 || in_feature / fgc != k_in) {
    return fail(StrCat("input features (", in_feature, ") / feature_group_count (", fgc,
                       ") must equal the kernel's input features (", k_in, ")"));
  }
  if (k_out % fgc != 0) return fail("kernel output features must be divisible by feature_group_count");
  if (in_batch % bgc != 0 || k_out % bgc != 0) return fail("batch_group_count must divide the batch and output features");
  std::vector<int64_t> out(lhs.rank(), 0);
  out[d.output_batch_dimension] = in_batch / bgc;
  out[d.output_feature_dimension] = k_out;
  for (int64_t i = 0; i < spatial; ++i) {
    WindowDimension w = window.dimensions[i];
    if (w.size != rhs.dimensions(d.kernel_spatial_dimensions[i])) {
      return fail(StrCat("window size ", w.size, " != kernel spatial size ", rhs.dimensions(d.kernel_spatial_dimensions[i])));
    }
    if (w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) return fail("window strides and dilations must be positive");
    out[d.output_spatial_dimensions[i]] = WindowOutputSize(lhs.dimensions(d.input_spatial_dimensions[i]), w);
  }
  return Shape(result_type, out);
}

}  // namespace passlab
