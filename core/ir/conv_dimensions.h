// The dimension arithmetic of a convolution's two gradients, each written as
// a convolution itself: the form frameworks hand XLA (JAX's
// _conv_general_dilated_transpose_lhs / _rhs in jax/_src/lax/convolution.py),
// the form the evaluator runs the `__dnn$convBackward*` library calls in, and
// the form XLA's conv_rewriter.cc (gpu/transforms/conv_rewriter.cc,
// MatchBackwardInput / MatchBackwardFilter) recognises and maps back to the
// forward window.
//
// Per spatial dimension, a forward convolution reads input x[0, X) with a
// kernel of K taps, stride s, window dilation d and padding (pl, ph); no base
// (lhs) dilation. Its extent is E = (K - 1) d + 1 and output o, tap t reads
// input o s + t d - pl, for Y = floor((X + pl + ph - E) / s) + 1 outputs.
//
//   backward data:   dx = conv(dy dilated by s, w reversed, in/out features
//                    swapped), window K taps, stride 1, window dilation d,
//                    padding (E - 1 - pl, X - 1 - (Y - 1) s + pl);
//                    the result has X elements;
//   backward filter: dw = conv(x with batch and feature swapped, dy as the
//                    kernel), window Y taps, stride d, window dilation s,
//                    padding (pl, MinForwardHighPadding); the result has K
//                    elements.
//
// Grouping (regrouping the kernel for backward data, feature groups becoming
// batch groups for backward filter) is the caller's: it moves data, not
// window arithmetic.
#ifndef PASSLAB_CORE_IR_CONV_DIMENSIONS_H_
#define PASSLAB_CORE_IR_CONV_DIMENSIONS_H_

#include <cstdint>

#include "core/ir/hlo_attributes.h"
#include "core/ir/shape.h"

namespace passlab {

// The backward-data convolution's dimension numbers: the output gradient is
// its input, the kernel's input and output features trade places, the
// forward input is its output. Its own inverse: applied to a backward-data
// convolution's numbers it gives the forward ones.
ConvolutionDimensionNumbers BackwardDataDimensionNumbers(const ConvolutionDimensionNumbers& forward);

// The backward-filter convolution's dimension numbers: the forward input with
// batch and feature swapped is its input, the output gradient (batch as
// input feature) its kernel, the filter its output. Its own inverse.
ConvolutionDimensionNumbers BackwardFilterDimensionNumbers(const ConvolutionDimensionNumbers& forward);

// The least high padding with which the forward window `forward` (its size,
// stride, window dilation and low padding; its high padding is not read)
// gives `output_size` outputs over `input_size` elements. Every high padding
// in [least, least + stride - 1] gives the same outputs: the rest of the
// input is never read.
int64_t MinForwardHighPadding(const WindowDimension& forward, int64_t input_size, int64_t output_size);

// One spatial dimension of the backward-data / backward-filter window of a
// forward window dimension over `input_size` elements giving `output_size`.
WindowDimension BackwardDataWindowDimension(const WindowDimension& forward, int64_t input_size, int64_t output_size);
WindowDimension BackwardFilterWindowDimension(const WindowDimension& forward, int64_t input_size,
                                              int64_t output_size);

// The whole windows of a forward convolution with window `forward` and
// dimension numbers `dnums`, reading the spatial sizes from its input and
// output shapes; window dimension j belongs to spatial dimension j.
Window BackwardDataWindow(const Window& forward, const ConvolutionDimensionNumbers& dnums, const Shape& input,
                          const Shape& output);
Window BackwardFilterWindow(const Window& forward, const ConvolutionDimensionNumbers& dnums, const Shape& input,
                            const Shape& output);

// The inverses, for recognising a backward convolution: the forward window
// dimension of a backward-data window dimension (`input_size` and
// `output_size` are the forward convolution's, i.e. the backward one's output
// and input), and of a backward-filter window dimension whose result has
// `kernel_size` elements. The high padding returned is the least one
// (MinForwardHighPadding); the low padding may come out negative, which no
// forward convolution has.
WindowDimension ForwardOfBackwardDataWindowDimension(const WindowDimension& backward, int64_t input_size,
                                                     int64_t output_size);
WindowDimension ForwardOfBackwardFilterWindowDimension(const WindowDimension& backward, int64_t kernel_size);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_CONV_DIMENSIONS_H_
