// The runtime's own convolution, written as the plain sum that defines it:
// every term in[n, c, x] * w[c, o, k] of the forward convolution (dimension
// numbers, window stride / padding / lhs (base) and rhs (window) dilation /
// reversal, feature_group_count, batch_group_count as XLA's operation
// semantics define them) is enumerated once, and whichever of the three
// arrays is unknown accumulates it:
//   output        = conv(input, filter)            (forward)
//   input_grad   += output_grad * filter           (backward input, the
//                                                   forward's adjoint in x)
//   filter_grad  += input * output_grad            (backward filter, its
//                                                   adjoint in w)
// Values are doubles in each buffer's physical order (PhysicalStrides of its
// shape), so any plain layout works. It is the library calls' "reference"
// algorithm (CreateReferenceConvRunner, reference_conv.cc): slow, independent of oneDNN and of
// the evaluator, and what --check compares the others with.
#ifndef PASSLAB_CORE_RUNTIME_REFERENCE_CONV_H_
#define PASSLAB_CORE_RUNTIME_REFERENCE_CONV_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/hlo_attributes.h"
#include "core/ir/shape.h"

namespace passlab {

// One convolution relation: the forward convolution's operands and result.
struct ConvGeometry {
  Shape input, filter, output;
  ConvolutionDimensionNumbers dnums;
  Window window;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
};

// Whether the shapes, window and group counts form a convolution (the
// output's spatial sizes follow from the window); the error says what does
// not fit.
absl::Status CheckConvGeometry(const ConvGeometry& g);

// Which array ReferenceConvolution computes from the other two.
enum class ConvUnknown {
  kOutput,  // a = input, b = filter
  kInput,   // a = output, b = filter
  kFilter,  // a = input, b = output
};

// Computes the `unknown` array of `g` into `result` (overwritten) from `a`
// and `b` (see ConvUnknown). Each span holds one double per element of its
// shape, at the element's physical offset.
absl::Status ReferenceConvolution(const ConvGeometry& g, ConvUnknown unknown, absl::Span<const double> a,
                                  absl::Span<const double> b, absl::Span<double> result);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_REFERENCE_CONV_H_
