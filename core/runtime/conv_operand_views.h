// Convolution library calls whose operands are read in place through views
// of other buffers: the CPU backend elides a fusion that only moves one
// array's elements (transpose, reverse, reshape/bitcast) when every user is
// a `__dnn$conv*` call, and those calls read the fusion's operand directly
// (core/backends/cpu/fusion_views.h). This is how XLA's swapped
// convolutions (SwapConvolutionOperandsIfBeneficial: a reversed, transposed
// weight as the input) run without materializing the weight each step.
//
// A permutation of dimensions is a change of strides, which oneDNN takes in
// its memory descriptors. A reversal is not; the runner rewrites it instead:
//  - the filter's spatial dimensions reversed = the window reversal toggled
//    (the filter is already read through a flipped f32 image then);
//  - the input's spatial dimension s reversed (forward convolutions): with
//    x'(q) = x(S-1-q), y(p) = sum_k x'(p*st + k*dl - pl) w(k) equals
//    y(P-1-p') = sum_k' x(p'*st + k'*dl - pl') w(K-1-k'), so the convolution
//    of the unreversed input with the filter reversed in s and padding
//    pl' = ph - r, ph' = pl + r (r = S + pl + ph - (K-1)*dl - 1 - (P-1)*st,
//    the high padding the window never reaches: 0 without a stride) gives
//    the result reversed in s, which is written out through a flipped f32
//    image (small for the swapped convolutions: f32[512,2,2,8]).
// The tap-gemm algorithm (one matmul per output position and filter tap)
// needs none of this: positions are pointer offsets, so it reads reversed
// spatial dimensions as negative strides. Other reversals (batch or feature
// dimensions, backward convolutions) are not taken: the caller keeps the
// fusion.
#ifndef PASSLAB_CORE_RUNTIME_CONV_OPERAND_VIEWS_H_
#define PASSLAB_CORE_RUNTIME_CONV_OPERAND_VIEWS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {

class HloInstruction;

// An array read through another array's buffer: the element at logical
// index idx is element offset + sum_k idx[k] * strides[k] of the buffer (in
// elements of the common type; a negative stride is a reversed dimension).
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> strides;
  // Zeros around the source (empty: none): dimension k of the view has
  // pad_low[k] zeros before the source's elements and pad_high[k] after,
  // and index idx inside them reads the element at idx[k] - pad_low[k].
  // Only a forward convolution's input takes them (as more padding of its
  // window: the zero-padded, transposed weight XLA's operand swap makes of
  // a strided layer's backward-input convolution).
  std::vector<int64_t> pad_low, pad_high;
  bool operator==(const StridedView&) const = default;
};

// Prepares the convolution call `inst` with operand i read through
// `views[i]` when that is set (from the buffer the caller then passes for
// operand i, which holds the viewed array's source). `views` has one entry
// per operand or is shorter. `algorithm`: as LibraryCallRunner::Create
// (nullopt: the recorded one). Unimplemented when the algorithm cannot read
// these views (the reference reads none; see above for reversals), so that
// the caller materializes the operands instead.
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateConvRunnerWithViews(
    const HloInstruction& inst, absl::Span<const std::optional<StridedView>> views,
    std::optional<int64_t> algorithm = std::nullopt);

// Writes zeros into `data` (an array of `op`'s shape and layout) where
// `op`'s producer makes them whatever its operands hold: a zero pad's edge
// and interior padding, under transposes (the stride holes of XLA's
// swapped backward-input convolutions, which tap-gemm skips). An autotuner
// filling operands with random values calls it so that every algorithm
// sees operands the program can produce.
void ZeroStructuralZeros(const HloInstruction& op, void* data);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_CONV_OPERAND_VIEWS_H_
