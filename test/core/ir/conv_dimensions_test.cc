// The backward-convolution arithmetic of core/ir/conv_dimensions.h: dimension
// numbers against the forms JAX emits (models/README.md), windows checked by
// brute force as the adjoints of every small 1-D forward convolution (stride,
// window dilation, uneven padding), the inverses against XLA's
// conv_rewriter_test.cc (backends/gpu/transforms), and the whole-window form
// on an NHWC shape.
#include "core/ir/conv_dimensions.h"

#include <gtest/gtest.h>

#include <vector>

namespace passlab {
namespace {

using Vec = std::vector<int64_t>;

WindowDimension Forward(int64_t size, int64_t stride, int64_t dilation, int64_t low, int64_t high) {
  WindowDimension w;
  w.size = size;
  w.stride = stride;
  w.window_dilation = dilation;
  w.padding_low = low;
  w.padding_high = high;
  return w;
}

// NHWC input, HWIO kernel, NHWC output: b01f_01io->b01f.
ConvolutionDimensionNumbers Nhwc() {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_feature_dimension = 3;
  d.input_spatial_dimensions = {1, 2};
  d.kernel_spatial_dimensions = {0, 1};
  d.kernel_input_feature_dimension = 2;
  d.kernel_output_feature_dimension = 3;
  d.output_batch_dimension = 0;
  d.output_feature_dimension = 3;
  d.output_spatial_dimensions = {1, 2};
  return d;
}

// A 1-D convolution read straight from the window's definition: lhs dilated
// by base_dilation and padded (negative padding trims), the kernel read
// backwards under window_reversal.
Vec Convolve(const Vec& lhs, const Vec& kernel, const WindowDimension& w) {
  int64_t n = static_cast<int64_t>(lhs.size());
  int64_t span = (n - 1) * w.base_dilation + 1 + w.padding_low + w.padding_high;
  int64_t extent = (w.size - 1) * w.window_dilation + 1;
  Vec out;
  if (span < extent) return out;
  for (int64_t o = 0; o <= (span - extent) / w.stride; ++o) {
    int64_t sum = 0;
    for (int64_t t = 0; t < w.size; ++t) {
      int64_t p = o * w.stride + t * w.window_dilation - w.padding_low;
      if (p < 0 || p % w.base_dilation != 0 || p / w.base_dilation >= n) continue;
      sum += lhs[p / w.base_dilation] * kernel[w.window_reversal ? w.size - 1 - t : t];
    }
    out.push_back(sum);
  }
  return out;
}

Vec Ramp(int64_t n, int64_t start) {
  Vec v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + 3 * i % 7 - 2);
  return v;
}

// For every forward window over X <= 7 inputs: the backward-data convolution
// of dy with w gives X elements equal to sum dy[o] w[t] over o s + t d - pl
// = i, the backward-filter convolution of x with dy gives K elements equal
// to sum x[o s + t d - pl] dy[o], and the inverses give the forward window
// back with the least high padding.
TEST(ConvDimensionsTest, BackwardWindowsAreTheForwardAdjoints) {
  int checked = 0;
  for (int64_t x_size = 1; x_size <= 7; ++x_size) {
    for (int64_t k = 1; k <= 3; ++k) {
      for (int64_t s = 1; s <= 3; ++s) {
        for (int64_t d = 1; d <= 2; ++d) {
          for (int64_t pl = 0; pl <= 2; ++pl) {
            for (int64_t ph = 0; ph <= 3; ++ph) {
              WindowDimension f = Forward(k, s, d, pl, ph);
              Vec x = Ramp(x_size, 1), w = Ramp(k, 4);
              Vec y = Convolve(x, w, f);
              if (y.empty()) continue;
              int64_t y_size = static_cast<int64_t>(y.size());
              Vec dy = Ramp(y_size, 2);
              Vec dx(x_size, 0), dw(k, 0);
              for (int64_t o = 0; o < y_size; ++o) {
                for (int64_t t = 0; t < k; ++t) {
                  int64_t i = o * s + t * d - pl;
                  if (i < 0 || i >= x_size) continue;
                  dx[i] += dy[o] * w[t];
                  dw[t] += x[i] * dy[o];
                }
              }
              SCOPED_TRACE(testing::Message() << "X=" << x_size << " K=" << k << " s=" << s << " d=" << d
                                              << " pad=" << pl << "_" << ph);
              WindowDimension bd = BackwardDataWindowDimension(f, x_size, y_size);
              WindowDimension bf = BackwardFilterWindowDimension(f, x_size, y_size);
              EXPECT_EQ(Convolve(dy, w, bd), dx);
              EXPECT_EQ(Convolve(x, dy, bf), dw);

              int64_t least = MinForwardHighPadding(f, x_size, y_size);
              EXPECT_LE(least, ph);
              EXPECT_GT(least + s, ph);  // [least, least + s - 1] all give Y outputs
              WindowDimension expected = f;
              expected.padding_high = least;
              EXPECT_EQ(ForwardOfBackwardDataWindowDimension(bd, x_size, y_size), expected);
              EXPECT_EQ(ForwardOfBackwardFilterWindowDimension(bf, k), expected);
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// The forms JAX emits for an NHWC / HWIO forward convolution
// (b01f_01io->b01f): backward data b01f_01oi->b01f, backward filter
// f01b_i01o->01bf; both maps are their own inverses.
TEST(ConvDimensionsTest, DimensionNumbersSwapRolesAndAreInvolutions) {
  ConvolutionDimensionNumbers nhwc = Nhwc();
  ASSERT_EQ(nhwc.ToString(), "b01f_01io->b01f");
  EXPECT_EQ(BackwardDataDimensionNumbers(nhwc).ToString(), "b01f_01oi->b01f");
  EXPECT_EQ(BackwardFilterDimensionNumbers(nhwc).ToString(), "f01b_i01o->01bf");

  ConvolutionDimensionNumbers odd;  // every dimension in a different place
  odd.input_batch_dimension = 2;
  odd.input_feature_dimension = 0;
  odd.input_spatial_dimensions = {3, 1};
  odd.kernel_input_feature_dimension = 3;
  odd.kernel_output_feature_dimension = 1;
  odd.kernel_spatial_dimensions = {2, 0};
  odd.output_batch_dimension = 1;
  odd.output_feature_dimension = 2;
  odd.output_spatial_dimensions = {0, 3};
  EXPECT_EQ(BackwardDataDimensionNumbers(BackwardDataDimensionNumbers(odd)), odd);
  EXPECT_EQ(BackwardFilterDimensionNumbers(BackwardFilterDimensionNumbers(odd)), odd);
  ConvolutionDimensionNumbers data = BackwardDataDimensionNumbers(odd);
  EXPECT_EQ(data.input_batch_dimension, odd.output_batch_dimension);
  EXPECT_EQ(data.kernel_input_feature_dimension, odd.kernel_output_feature_dimension);
  EXPECT_EQ(data.output_spatial_dimensions, odd.input_spatial_dimensions);
  ConvolutionDimensionNumbers filter = BackwardFilterDimensionNumbers(odd);
  EXPECT_EQ(filter.input_batch_dimension, odd.input_feature_dimension);
  EXPECT_EQ(filter.kernel_input_feature_dimension, odd.output_batch_dimension);
  EXPECT_EQ(filter.kernel_spatial_dimensions, odd.output_spatial_dimensions);
  EXPECT_EQ(filter.output_feature_dimension, odd.kernel_output_feature_dimension);
}

// XLA conv_rewriter_test.cc, BackwardInputConvolveEvenPadding: a backward
// convolution with a 7x7 reversed kernel, padding 3_3, over 16x16 gradients
// giving 16x16 is the forward window 7x7, stride 1, padding 3_3.
TEST(ConvDimensionsTest, XlaBackwardInputConvolveEvenPadding) {
  WindowDimension backward = Forward(7, 1, 1, 3, 3);
  backward.window_reversal = true;
  EXPECT_EQ(ForwardOfBackwardDataWindowDimension(backward, 16, 16), Forward(7, 1, 1, 3, 3));
}

// XLA conv_rewriter_test.cc, BackwardInputConvolveUnevenPaddingOnGradients
// (Inception V3): 3x3 window, padding 2_3, lhs dilation 2, 4 gradients to 10
// inputs is the forward window 3, stride 2, padding 0 low and at least -1
// high; XLA's rewriter picks 0 from [-1, 0].
TEST(ConvDimensionsTest, XlaBackwardInputConvolveUnevenPaddingOnGradients) {
  WindowDimension backward = Forward(3, 1, 1, 2, 3);
  backward.base_dilation = 2;
  EXPECT_EQ(ForwardOfBackwardDataWindowDimension(backward, 10, 4), Forward(3, 2, 1, 0, -1));
}

// XLA conv_rewriter_test.cc, BackwardFilterConvolve: activations of 3, a
// window of 2 gradients with window dilation 2, one filter tap: the forward
// convolution has stride 2 and no padding.
TEST(ConvDimensionsTest, XlaBackwardFilterConvolve) {
  WindowDimension backward = Forward(2, 1, 2, 0, 0);
  EXPECT_EQ(ForwardOfBackwardFilterWindowDimension(backward, 1), Forward(1, 2, 1, 0, 0));
  EXPECT_EQ(BackwardFilterWindowDimension(Forward(1, 2, 1, 0, 0), 3, 2), backward);
}

// Whole windows read the spatial sizes through the dimension numbers: NHWC
// [2, 9, 8, 3] through a 3x3 window, stride 2, padding 1 -> [2, 5, 4, 4].
TEST(ConvDimensionsTest, WholeWindowsReadSpatialSizesThroughDimensionNumbers) {
  ConvolutionDimensionNumbers d = Nhwc();
  Window forward;
  forward.dimensions = {Forward(3, 2, 1, 1, 1), Forward(3, 2, 1, 1, 1)};
  Shape input(PrimitiveType::kF32, {2, 9, 8, 3}), output(PrimitiveType::kF32, {2, 5, 4, 4});
  // Rows: the last window reads the high padding (least high padding 1);
  // columns: 8 + 2 - 3 = 7 is odd, the high padding is never read (least 0),
  // and the backward-data window pads the gradient 2 on the high side to
  // reach all 8 columns.
  EXPECT_EQ(BackwardDataWindow(forward, d, input, output).ToString(),
            "{size=3x3 pad=1_1x1_2 lhs_dilate=2x2 rhs_reversal=1x1}");
  EXPECT_EQ(BackwardFilterWindow(forward, d, input, output).ToString(),
            "{size=5x4 pad=1_1x1_0 rhs_dilate=2x2}");
}

}  // namespace
}  // namespace passlab
