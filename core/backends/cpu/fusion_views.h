// Fusions the CPU program does not run: a fusion that only moves the
// elements of its one operand (transpose, reverse, reshape, bitcast, copy,
// in any order, and zero edge padding before any reverse or reshape) and
// whose users are all `__dnn$conv*` library calls, as their input or filter
// operand, is elided, and those calls read the fusion's operand in place
// through a strided view (core/runtime/conv_operand_views.h: permutations
// become oneDNN strides, spatial reversals a rewritten convolution, zero
// padding of a forward convolution's input more window padding). The
// strided layers' swapped backward-input convolutions read their padded,
// transposed weight so: ResNet-18's fusion.80 (1.1-1.4 ms per step at 2
// threads) and ResNet-50's fusion.211 (2.1-2.3 ms) run no kernel.
//
// This is what XLA's swapped convolutions leave: algsimp's
// SwapConvolutionOperandsIfBeneficial turns ResNet-18's layer4
// backward-input convolutions (2x2 images, 3x3 filters) into convolutions
// of the reversed, transposed weight, f32[3,3,512,512] ->
// f32[512,3,3,512], which a kernel would copy (9.4 MB, ~1.9 ms at 2
// threads) every step only for the convolution to read once.
//
// Runs after buffer assignment: the fusion keeps its (unused) buffer, and
// a fusion is elided only where its operand's buffer holds the same value
// until the last call has read it (nothing in between writes storage
// overlapping it: arena reuse, in-place updates, donated outputs).
#ifndef PASSLAB_CORE_BACKENDS_CPU_FUSION_VIEWS_H_
#define PASSLAB_CORE_BACKENDS_CPU_FUSION_VIEWS_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/runtime/buffer_assignment.h"
#include "core/runtime/conv_operand_views.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {

class HloInstruction;

// The fusion's result as a view of its operand's buffer (strides of the
// operand's layout moved through the fused ops), or nullopt when the fusion
// is not pure data movement of one operand or a reshape in it is no view.
std::optional<StridedView> DataMovementView(const HloInstruction& fusion);

struct FusionViewPlan {
  // The fusions that get no thunk.
  absl::flat_hash_set<const HloInstruction*> elided;
  // Their users' runners, prepared with the views.
  absl::flat_hash_map<const HloInstruction*, std::unique_ptr<LibraryCallRunner>> runners;
};

// The elided fusions of the computation `assignment` covers, with runners
// for every call that reads one. A call whose algorithm cannot read a view
// keeps its operands materialized (their fusions run).
FusionViewPlan PlanFusionViews(const BufferAssignment& assignment);

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CPU_FUSION_VIEWS_H_
