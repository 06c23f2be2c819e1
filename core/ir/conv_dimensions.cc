#include "core/ir/conv_dimensions.h"

namespace passlab {
namespace {

// The span of a window: (size - 1) * dilation + 1 elements.
int64_t Extent(const WindowDimension& w) { return (w.size - 1) * w.window_dilation + 1; }

// `map` applied to every window dimension j with the forward convolution's
// input and output sizes of spatial dimension j.
Window MapSpatialDimensions(const Window& forward, const ConvolutionDimensionNumbers& dnums, const Shape& input,
                            const Shape& output, WindowDimension (*map)(const WindowDimension&, int64_t, int64_t)) {
  Window w;
  for (size_t j = 0; j < forward.dimensions.size(); ++j) {
    w.dimensions.push_back(map(forward.dimensions[j], input.dimensions(dnums.input_spatial_dimensions[j]),
                               output.dimensions(dnums.output_spatial_dimensions[j])));
  }
  return w;
}

}  // namespace

ConvolutionDimensionNumbers BackwardDataDimensionNumbers(const ConvolutionDimensionNumbers& forward) {
  ConvolutionDimensionNumbers b;
  b.input_batch_dimension = forward.output_batch_dimension;
  b.input_feature_dimension = forward.output_feature_dimension;
  b.input_spatial_dimensions = forward.output_spatial_dimensions;
  b.kernel_input_feature_dimension = forward.kernel_output_feature_dimension;
  b.kernel_output_feature_dimension = forward.kernel_input_feature_dimension;
  b.kernel_spatial_dimensions = forward.kernel_spatial_dimensions;
  b.output_batch_dimension = forward.input_batch_dimension;
  b.output_feature_dimension = forward.input_feature_dimension;
  b.output_spatial_dimensions = forward.input_spatial_dimensions;
  return b;
}

ConvolutionDimensionNumbers BackwardFilterDimensionNumbers(const ConvolutionDimensionNumbers& forward) {
  ConvolutionDimensionNumbers b;
  b.input_batch_dimension = forward.input_feature_dimension;
  b.input_feature_dimension = forward.input_batch_dimension;
  b.input_spatial_dimensions = forward.input_spatial_dimensions;
  b.kernel_input_feature_dimension = forward.output_batch_dimension;
  b.kernel_output_feature_dimension = forward.output_feature_dimension;
  b.kernel_spatial_dimensions = forward.output_spatial_dimensions;
  b.output_batch_dimension = forward.kernel_input_feature_dimension;
  b.output_feature_dimension = forward.kernel_output_feature_dimension;
  b.output_spatial_dimensions = forward.kernel_spatial_dimensions;
  return b;
}

int64_t MinForwardHighPadding(const WindowDimension& forward, int64_t input_size, int64_t output_size) {
  // The last output's last tap, (Y - 1) s + E - 1 - pl, is the last element
  // of the padded input, X + ph - 1.
  return Extent(forward) + (output_size - 1) * forward.stride - input_size - forward.padding_low;
}

WindowDimension BackwardDataWindowDimension(const WindowDimension& forward, int64_t input_size, int64_t output_size) {
  // dx[i] = sum dy[o] w[t] over o s + t d - pl = i: dy dilated by s, read
  // by the reversed kernel from E - 1 - pl before its first element.
  WindowDimension b;
  b.size = forward.size;
  b.stride = 1;
  b.base_dilation = forward.stride;
  b.window_dilation = forward.window_dilation;
  b.padding_low = Extent(forward) - 1 - forward.padding_low;
  b.padding_high = input_size - 1 - (output_size - 1) * forward.stride + forward.padding_low;
  b.window_reversal = true;
  return b;
}

WindowDimension BackwardFilterWindowDimension(const WindowDimension& forward, int64_t input_size,
                                              int64_t output_size) {
  // dw[t] = sum x[o s + t d - pl] dy[o]: dy is a window of Y taps s apart,
  // moved d at a time over the forward input's padded span.
  WindowDimension b;
  b.size = output_size;
  b.stride = forward.window_dilation;
  b.window_dilation = forward.stride;
  b.padding_low = forward.padding_low;
  b.padding_high = MinForwardHighPadding(forward, input_size, output_size);
  return b;
}

Window BackwardDataWindow(const Window& forward, const ConvolutionDimensionNumbers& dnums, const Shape& input,
                          const Shape& output) {
  return MapSpatialDimensions(forward, dnums, input, output, BackwardDataWindowDimension);
}

Window BackwardFilterWindow(const Window& forward, const ConvolutionDimensionNumbers& dnums, const Shape& input,
                            const Shape& output) {
  return MapSpatialDimensions(forward, dnums, input, output, BackwardFilterWindowDimension);
}

WindowDimension ForwardOfBackwardDataWindowDimension(const WindowDimension& backward, int64_t input_size,
                                                     int64_t output_size) {
  WindowDimension f;
  f.size = backward.size;
  f.stride = backward.base_dilation;
  f.window_dilation = backward.window_dilation;
  f.padding_low = Extent(backward) - 1 - backward.padding_low;
  f.padding_high = MinForwardHighPadding(f, input_size, output_size);
  return f;
}

WindowDimension ForwardOfBackwardFilterWindowDimension(const WindowDimension& backward, int64_t kernel_size) {
  WindowDimension f;
  f.size = kernel_size;
  f.stride = backward.window_dilation;
  f.window_dilation = backward.stride;
  f.padding_low = backward.padding_low;
  f.padding_high = backward.padding_high;
  return f;
}

}  // namespace passlab
