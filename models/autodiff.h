// Reverse-mode automatic differentiation over HLO. Gradients() walks the
// instructions between the inputs and a scalar output backwards and emits,
// into the same computation, one gradient rule per opcode (autodiff.cc lists
// them rule by rule). The rules emit the HLO a framework hands XLA:
//   - dot: two dots (and a transpose where the dimension order needs one);
//   - convolution: backward-data as a convolution of the output gradient with
//     the kernel under window reversal (rhs_reversal; lhs dilation = stride,
//     swapped kernel feature dimensions, padding K-1-pad_low), as JAX emits
//     it; backward-filter as a
//     convolution of the input with the output gradient (window dilation =
//     stride); grouped convolutions as JAX transposes them: feature groups
//     regroup the kernel for backward-data and become batch groups for
//     backward-filter (depthwise convolutions included), batch groups the
//     other way round; dilated forward convolutions are rejected with an
//     error;
//   - max pooling (reduce-window with a max reducer): select-and-scatter;
//   - batch-norm-training: batch-norm-grad;
//   - gather: scatter-add into zeros.
// Every rule emits only ops that have rules themselves (except
// batch-norm-grad, select-and-scatter and scatter), so gradients can be taken
// again: the Laplace PINN takes second derivatives reverse-over-reverse.
//
// Ops with non-floating results (compare, iota, integer ops) carry no
// gradient. An op on the path without a rule is an error naming it.
#ifndef PASSLAB_MODELS_AUTODIFF_H_
#define PASSLAB_MODELS_AUTODIFF_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "models/hlo_builder.h"

namespace passlab {

// d(y)/d(x) for each x in xs, emitted into b's computation. y must be a
// floating-point scalar (or, with `seed`, any array: the vector-Jacobian
// product with `seed`, which must have y's shape). An x that y does not
// depend on gets a zero gradient.
absl::StatusOr<std::vector<Op>> Gradients(HloBuilder& b, Op y, const std::vector<Op>& xs,
                                          Op seed = nullptr);

// The gradient computation of a scalar-loss module: a new module whose entry
// takes the same parameters and returns (loss, d loss / d p for every
// floating-point parameter p, in parameter order).
absl::StatusOr<std::unique_ptr<HloModule>> BuildGradientModule(const HloModule& loss_module);

}  // namespace passlab

#endif  // PASSLAB_MODELS_AUTODIFF_H_
