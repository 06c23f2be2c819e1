// QrExpander ("qr_expander"): expands XLA's Householder QR custom calls into
// plain HLO (XLA's client library emits them; the evaluator and the runtime
// run them as reference routines when this pass is off):
//   "Qr"(a[..., m, n]) => (a', taus[..., min(m, n)]), LAPACK geqrf's form:
//     R on and above the diagonal of a', the Householder vectors v_j (v_j[j]
//     = 1 implied) below it; H_j = I - taus[j] v_j v_j^T.
//     A while loop over the columns j: the reflector of column j (dlarfg:
//     beta = -sign(alpha) ||a[j:, j]||, tau = (beta - alpha) / beta, v =
//     a[j+1:, j] / (alpha - beta); identity when the column below the
//     diagonal is zero), applied to the trailing columns with one batched
//     dot and an outer product.
//   "ProductOfElementaryHouseholderReflectors"(a[..., m, n], taus[..., k])
//     => Q[..., m, n] = (H_0 ... H_{k-1})[:, :n] (orgqr's form), m >= n:
//     a while loop applying H_{k-1} first to the first columns of the
//     identity.
// This is the unblocked form of XLA's expansion (XLA blocks the columns
// and applies each block's reflectors in compact WY form); the values are
// the same up to rounding.
//
// Matches real floating-point operands with static shapes (complex calls
// stay for the runtime). Runs among XLA:GPU's first expanders, so the
// simplification loop cleans up the loops' index arithmetic.
#ifndef PASSLAB_PASSES_EXPANDERS_QR_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_QR_EXPANDER_H_

#include "core/pass/op_expander_pass.h"

namespace passlab {

class QrExpander : public OpExpanderPass {
 public:
  std::string_view name() const override { return "qr_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
  absl::StatusOr<HloInstruction*> ExpandInstruction(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_QR_EXPANDER_H_
