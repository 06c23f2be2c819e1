// GpuLayoutAssignment ("layout-assignment"): chooses the memory layout of
// every array value of rank >= 2 and inserts the layout-changing copies the
// choice needs, as XLA:GPU's layout assignment does.
//
//  - Entry layouts are honoured: parameters take the layouts of the
//    module's entry_computation_layout (when it has one) and the root is
//    copied into the result layout. An entry parameter written without a
//    layout (in the entry_computation_layout, or on the parameter of a
//    module built without one) is XLA's AUTO layout: it takes what its users want (through
//    elementwise ops, transposes and reshapes), and the choice is recorded
//    in the entry_computation_layout. Every array left without a layout
//    gets the default one. Tiled entry layouts (seed 002) stay on
//    the parameters and the result; kernels only ever read and write plain
//    (untiled) layouts, reached through copies.
//  - Library-call constraints: convolution calls get NHWC- or NCHW-style
//    physical layouts for their activations (from dim_labels: feature most
//    minor, or spatial most minor) and OHWI / OIHW filters; dots get
//    operand layouts the BLAS gemm reads without packing (batch dimensions
//    most major, the free and contracting groups contiguous) and a
//    batch-major row-major result; s8->s32 and fp8 gemms (and, with the
//    option, packed sub-byte operands) read their contracting dimensions
//    most minor. cuFFT reads and writes dim-0-major arrays; custom calls'
//    operand_layout_constraints are mandatory; ragged-all-to-all has its
//    ragged dimension most major, its input and output buffer laid out as
//    its result; a variadic reduce reads all inputs in one layout.
//  - Propagation: the convolution calls' layouts go first (XLA adds them
//    last to its depth-first worklist), earliest call first: each spreads
//    through layout-preserving ops (elementwise, reverse) forward and back
//    until it meets a layout already chosen. Then elementwise ops take the
//    layout of their first operand whose layout is decided (forward),
//    unless they only feed reduces (to rank >= 2) over at least 32
//    elements, which want a row-reduction input; broadcasts,
//    constants, iotas, AUTO parameters and elementwise ops of only such
//    values take the layout their users need (backward). Transposes, and
//    reshapes whose layout would move elements, become bitcasts of their operand (a reshape's size-1
//    dimensions stay where they were). Everything else keeps its layout.
//  - Copies: an operand whose layout differs from what its user needs
//    (elementwise ops, reverse, pad, concatenate and reduce-window need
//    their own layout, library calls their
//    constraint, layout-sensitive users — tuples, control flow, bitcasts,
//    in-place ops — the layout the value had before the pass) is read
//    through a copy with the needed layout. The entry's root tuple keeps
//    its elements' layouts and is copied element-wise into the result
//    layout (get-tuple-element, copy, tuple), as XLA does.
//
// Run after conv-canonicalization (the convolution calls exist) and before
// GemmRewriter (dots still visible). Guarantees the layout-sensitive
// verifier's rule that elementwise operands share their result's layout.
#ifndef PASSLAB_PASSES_LAYOUT_GPU_LAYOUT_ASSIGNMENT_H_
#define PASSLAB_PASSES_LAYOUT_GPU_LAYOUT_ASSIGNMENT_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

// The physical order of convolution activations: batch, spatial..., feature
// (NHWC; filters spatial...,I,O, or O,spatial...,I as XLA) or batch, feature, spatial... (NCHW;
// filters O,I,spatial...).
enum class ConvLayout { kNhwc, kNchw };

struct GpuLayoutAssignmentOptions {
  // oneDNN reorders either into its blocked format; feature-minor reads
  // contiguous channel vectors and matches b01f models without copies.
  ConvLayout conv_layout = ConvLayout::kNhwc;
  // XLA's xla_gpu_experimental_pack_dot_operands_along_k_dimension: dot
  // operands computed from sub-byte (packed) values get their contracting
  // dimensions most minor, so the packed elements of one row sit together.
  bool pack_dot_operands_along_k_dimension = false;
  // XLA:GPU's filter layout for NHWC activations: [o, spatial..., i]
  // (kOutputYXInput, cuDNN's KRSC; HeuristicLayoutAssignment in
  // xla/backends/gpu/transforms/layout_assignment.cc), which copies every
  // [spatial..., i, o] weight each step. Off: the model's own order, which
  // oneDNN reads as well and passlab's CPU backend runs much faster (the
  // weights' transposes cost more than the convolutions there).
  bool xla_filter_layout = false;
  // Without xla_filter_layout: a convolution call reads its filter operand
  // in whatever plain layout its producer gives it, as oneDNN (which
  // reorders every filter into its blocked format) and the CUDA runtime
  // (which packs a strided filter with cudnnTransformTensor) can; the
  // weights' transposes for swapped-dimension filters (01oi backward-input
  // convolutions of 1x1 layers: one [spatial..., o, i] -> [spatial..., i, o]
  // copy per weight and step in the ResNet-50 step) disappear. False: the
  // [spatial..., i, o] order above is required and copied to.
  bool filter_layout_as_is = true;
};

class GpuLayoutAssignment : public HloModulePass {
 public:
  explicit GpuLayoutAssignment(GpuLayoutAssignmentOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "layout-assignment"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  GpuLayoutAssignmentOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_LAYOUT_GPU_LAYOUT_ASSIGNMENT_H_
