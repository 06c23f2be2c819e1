// SliceSinker ("slice-sinker"): sinks slices below elementwise ops when the
// ops together cover their sources. If elementwise ops of one kind each read
// the same slice of every operand (op_k(slice_k(a), slice_k(b), ...)) from
// the same sources a, b, ..., and their results hold at least as many
// elements as a source, they become one op on the whole sources followed by
// the slices: op(a, b, ...) then slice_k(op(a, b, ...)). The work does not
// grow, several small kernels become one, and the slices often fold away or
// fuse. Runs in the simplification loop.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_SLICE_SINKER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_SLICE_SINKER_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class SliceSinker : public HloModulePass {
 public:
  std::string_view name() const override { return "slice-sinker"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_SLICE_SINKER_H_
