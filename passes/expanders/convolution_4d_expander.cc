#include "passes/expanders/convolution_4d_expander.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace {

constexpr int64_t kSpatialDims = 4;

// Spatial dimension i is removable: one input element and no padding, so
// one output element whatever the window (XLA's condition; the kernel's
// size there is 1 for any valid convolution).
bool IsTrivialSpatialDim(const HloInstruction& conv, int64_t i) {
  const ConvolutionDimensionNumbers& d = *conv.attrs().conv_dnums;
  const WindowDimension& w = conv.window().dimensions[i];
  return conv.operand(0)->shape().dimensions(d.input_spatial_dimensions[i]) == 1 && w.padding_low == 0 &&
         w.padding_high == 0;
}

// `shape` without the dimensions in `removed`.
std::vector<int64_t> DimsWithout(const Shape& shape, const std::vector<int64_t>& removed) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(removed.begin(), removed.end(), d) == removed.end()) dims.push_back(shape.dimensions(d));
  }
  return dims;
}

// Dimension number `d` after the dimensions in `removed` are dropped.
int64_t Renumber(int64_t d, const std::vector<int64_t>& removed) {
  return d - std::count_if(removed.begin(), removed.end(), [d](int64_t r) { return r < d; });
}

}  // namespace

bool Convolution4DExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kConvolution || !inst->attrs().conv_dnums.has_value()) return false;
  if (inst->attrs().conv_dnums->input_spatial_dimensions.size() != kSpatialDims) return false;
  for (int64_t i = 0; i < kSpatialDims; ++i) {
    if (IsTrivialSpatialDim(*inst, i)) return true;
  }
  return false;
}

absl::StatusOr<HloInstruction*> Convolution4DExpander::ExpandInstruction(HloInstruction* conv) {
  HloComputation* c = conv->parent();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  std::vector<int64_t> input_removed, kernel_removed, output_removed;
  ConvolutionDimensionNumbers nd;
  Window window;
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < kSpatialDims; ++i) {
    if (IsTrivialSpatialDim(*conv, i)) {
      input_removed.push_back(d.input_spatial_dimensions[i]);
      kernel_removed.push_back(d.kernel_spatial_dimensions[i]);
      output_removed.push_back(d.output_spatial_dimensions[i]);
    } else {
      kept.push_back(i);
      window.dimensions.push_back(conv->window().dimensions[i]);
    }
  }
  nd.input_batch_dimension = Renumber(d.input_batch_dimension, input_removed);
  nd.input_feature_dimension = Renumber(d.input_feature_dimension, input_removed);
  nd.kernel_input_feature_dimension = Renumber(d.kernel_input_feature_dimension, kernel_removed);
  nd.kernel_output_feature_dimension = Renumber(d.kernel_output_feature_dimension, kernel_removed);
  nd.output_batch_dimension = Renumber(d.output_batch_dimension, output_removed);
  nd.output_feature_dimension = Renumber(d.output_feature_dimension, output_removed);
  for (int64_t i : kept) {
    nd.input_spatial_dimensions.push_back(Renumber(d.input_spatial_dimensions[i], input_removed));
    nd.kernel_spatial_dimensions.push_back(Renumber(d.kernel_spatial_dimensions[i], kernel_removed));
    nd.output_spatial_dimensions.push_back(Renumber(d.output_spatial_dimensions[i], output_removed));
  }
  const Shape& input = conv->operand(0)->shape();
  const Shape& kernel = conv->operand(1)->shape();
  HloInstruction* new_input = c->AddInstruction(HloInstruction::CreateReshape(
      Shape(input.element_type(), DimsWithout(input, input_removed)), conv->mutable_operand(0)));
  HloInstruction* new_kernel = c->AddInstruction(HloInstruction::CreateReshape(
      Shape(kernel.element_type(), DimsWithout(kernel, kernel_removed)), conv->mutable_operand(1)));
  Shape out(conv->shape().element_type(), DimsWithout(conv->shape(), output_removed));
  auto reduced = HloInstruction::CreateConvolve(out, new_input, new_kernel, conv->attrs().feature_group_count,
                                                conv->attrs().batch_group_count, window, nd,
                                                conv->attrs().precision_config);
  reduced->set_metadata(conv->metadata());
  HloInstruction* added = c->AddInstruction(std::move(reduced));
  ASSIGN_OR_RETURN(Shape inferred, InferInstructionShape(*added));
  return c->AddInstruction(HloInstruction::CreateReshape(conv->shape(), added));
}

}  // namespace passlab
