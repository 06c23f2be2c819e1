// CopyFusion ("copy_fusion"), as XLA:GPU's
// xla/backends/gpu/transforms/copy_fusion.cc: copies of a fusion's outputs
// become extra outputs of the fusion itself, so one kernel writes the value
// and its copies at once:
//   f = fusion(...); c1 = copy(f); c2 = copy(f)
//   => f' = fusion(...) with root tuple(root, copy(root), copy(root));
//      users of f read gte(f', 0), c1 and c2 become gte(f', 1), gte(f', 2)
// A copy may sit behind a get-tuple-element (a multi-output fusion) and a
// bitcast, each with that one user; both are cloned into the fusion too.
//
// Only in the entry computation (elsewhere, copies inserted by
// CopyInsertion may be there to keep loop state apart from a buffer the
// fusion shares). Only copies that keep the shape and layout (no
// transposing copies), are not tuples and have no control edges, and only
// when the fusion (not a custom fusion) computes elementwise from its
// parameters (bitcasts and tuples allowed, copies not), its root is no
// row/column reduction or scatter, a multi-output fusion's outputs are not
// all slices, its outputs are not all in-place dynamic-update-slices, and
// the outputs plus copies stay within kMaxOperandsAndOutputsPerFusion. An
// output that is a row/column reduction is never copied from inside. The
// fusion loses its sharding. XLA also bounds the shared memory the two
// would use; passlab's fusions use none, so that check always passes.
// XLA:GPU runs it in "pre-scheduling-copy-insertion", right after
// CopyInsertion and before SanitizeConstantNames.
#ifndef PASSLAB_PASSES_FUSION_COPY_FUSION_H_
#define PASSLAB_PASSES_FUSION_COPY_FUSION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class CopyFusion : public HloModulePass {
 public:
  std::string_view name() const override { return "copy_fusion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_COPY_FUSION_H_
