// AlgebraicSimplifier ("algsimp"): local algebraic rewrites after XLA's
// AlgebraicSimplifier (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc),
// each a named rule ("A+0 => A") so the workbench can count which fired.
// Like XLA it visits every non-fusion computation in post order and rewrites
// each instruction at most once per sweep; with run_to_fixed_point it repeats
// the sweep until nothing changes (at most kMaxSweeps times). Rules never
// produce worse code. Constant sub-expressions it creates ((A+C1)+C2 =>
// A+(C1+C2)) are left for constant folding, dead code for DCE.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/pass/hlo_pass_interface.h"
#include "core/pass/pass_options.h"

namespace passlab {

// XLA's AlgebraicSimplifierOptions, by XLA's names and with XLA's defaults.
// Options passlab does not consult yet are left out rather than ignored.
struct AlgebraicSimplifierOptions {
  // Rewrites keep layouts exactly (shapes compare with layouts), and rules
  // that cannot keep them stay off.
  bool is_layout_sensitive = false;
  // Repeat sweeps over a computation until nothing changes.
  bool run_to_fixed_point = true;
  // Rewrites that are exact only without NaN/Inf (A*0 => 0, A-A => 0 for
  // floats, (A+B)-A => B).
  bool enable_fast_math = false;
  // Floats may be reassociated as if they were reals (A*C+B*C => (A+B)*C for
  // any C).
  bool enable_floats_are_real = false;
  // max(x, -inf) => x and min(x, inf) => x for floats (NaN propagates).
  bool minmax_propagate_nan = true;
  // dot with a degenerate or vector operand => multiply/reduce.
  bool enable_dot_strength_reduction = true;
  bool enable_dot_to_multiply_rewrite = true;
  // broadcast(x) feeding an elementwise op => the op on x, broadcast.
  bool enable_sink_broadcast = true;
  // A broadcast of an operand with degenerate dims drops them first.
  bool enable_broadcast_degenerate_dimension = true;
  // reduce-window that is a plain reduce => reduce.
  bool enable_window_reduce_to_reduce_replacement = true;
  // reduce(reshape(x)) => reshape(reduce(x)) where dims line up.
  bool enable_reduce_of_reshape = true;
  bool unconditionally_simplify_reduce_of_transpose_or_reshape = false;
  // reduce(concatenate) => map of reduces even when the operands' shapes differ.
  bool enable_unconditional_reduce_of_concat_replacement = true;
  // dynamic-update-slice(broadcast(c), u, constant starts) => pad(u, c).
  bool enable_dynamic_update_slice_to_pad_replacement = true;
  // dynamic-slice with constant starts => slice.
  bool disable_dynamic_slice_to_slice_conversion = false;
  // convert(constant) => constant of the converted type.
  bool use_convert_constant_folding = false;
  // (layout sensitive) a bitcast-convert that moves no bits => bitcast.
  bool rewrite_no_op_bitcast_convert_to_bitcast = false;
  // reduce-precision to the operand's own precision => operand.
  bool enable_remove_no_op_reduce_precision = false;
  // reshape(transpose(reshape(x))) acting as depth-to-space => reshape of a
  // concatenate of slices of x.
  bool rewrite_reshape_transpose_as_slice_concatenate = true;
  // reshape(transpose(reshape(x))) => transpose(reshape(x)).
  bool enable_hoist_transpose_of_reshape = false;
  // The backend takes dots in any dimension order (enables rewrites that
  // produce non-canonical dots).
  bool supports_non_canonical_dots = true;
  // dot(parameter-like, other) => transpose(dot(other, parameter-like)).
  bool enable_move_dot_param_to_rhs = false;
  // Reorder chains of dots (and dots of reverse/pad/broadcast operands) when
  // that divides the flops by more than associative_reordering_threshold.
  bool use_associative_reordering = false;
  double associative_reordering_threshold = 2.0;
  // Move slices and reduces of dots onto the dot's operands when that cuts
  // the flops by more than raise_slice_and_reduce_through_dot_threshold.
  bool raise_slice_and_reduce_through_dot = false;
  double raise_slice_and_reduce_through_dot_threshold = 2.0;
  // conv(A*c1, B*c2) => conv(A, B)*(c1*c2) with the multiply on the smallest
  // of the conv's operands and result (f32 and bf16 convs; scalar constant
  // multipliers on either side, and one above the conv).
  bool enable_scalar_multiply_reduction = false;
  // conv(x, w) => conv(reverse(w), x) with the window reversed, when the
  // kernel is larger than the input (XLA's SwapConvolutionOperandsIfBeneficial,
  // conv_operand_swapper.cc); never when layout sensitive.
  bool enable_conv_operand_swap = true;
  // XLA's conv_is_lowerable_callback, by name: empty (none: every beneficial
  // swap is made) or "conv-rewriter" (ConvRewriter::ConvIsLowerable: only a
  // swapped convolution the GPU conv rewriter turns into a library call).
  std::string conv_is_lowerable_callback;
  // Target CPU: A / broadcast(B) => A * broadcast(1 / B), and dot strength
  // reduction only for dots of batch and contracting dims alone.
  bool executing_on_cpu = false;
  // The custom-call target of cuDNN's batch-norm training, whose output 2 is
  // positive (empty: none).
  std::string cudnn_batchnorm_forward_training_metadata;
  // Non-empty ("8.0"): XLA's GpuAlgebraicSimplifier for that CUDA compute
  // capability (xla/backends/gpu/transforms/algebraic_simplifier.cc): dots
  // with a bf16/tf32 precision algorithm are strength-reduced with the
  // algorithm's split products. Empty: the generic AlgebraicSimplifier.
  std::string gpu_compute_capability;
  // Passlab's sweep limit when running to a fixed point (XLA's
  // kAlgSimpRerunLimit is 50).
  static constexpr int kMaxSweeps = 50;
};

class AlgebraicSimplifier : public HloModulePass {
 public:
  explicit AlgebraicSimplifier(AlgebraicSimplifierOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "algsimp"; }

  // The names of every rule, in the order they are tried.
  static std::vector<std::string_view> RuleNames();
  // The options above as the registry declares them, and their values.
  static std::vector<PassOptionSpec> OptionSpecs();
  static AlgebraicSimplifierOptions OptionsFrom(const PassOptionValues& values);

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  AlgebraicSimplifierOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_ALGEBRAIC_SIMPLIFIER_H_
