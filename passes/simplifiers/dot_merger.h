// DotMerger ("dot-merger"): merges two dots that share an operand into one
// bigger dot over the concatenation of their other operands, and slices the
// two results back out (after XLA's DotMerger):
//
//   d0 = dot(x, w0)  [m, n0]          w = concatenate(w0, w1)  [k, n0+n1]
//   d1 = dot(x, w1)  [m, n1]    =>    d = dot(x, w)            [m, n0+n1]
//                                     d0 = slice(d), d1 = slice(d)
//
// One launch of a bigger gemm is cheaper than two small ones. XLA's rules:
// same dimension numbers, element types, precision config and layouts; the
// differing operands have exactly one non-contracting dimension (the one
// concatenated); neither dot depends on the other; no control edges; and at
// least one of the two is small (its operands plus result at most
// max_size_to_merge bytes). Also XLA's newer variant for canonical rank-2
// dots whose shared operand is the lhs of one and, transposed, the rhs of
// the other. Sparse dots are left alone.
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_MERGER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_MERGER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct DotMergerOptions {
  // A pair is merged only if one of the dots has operands + result of at
  // most this many bytes (XLA:GPU passes 16 MiB).
  int64_t max_size_to_merge = int64_t{16} << 20;
};

class DotMerger : public HloModulePass {
 public:
  explicit DotMerger(DotMergerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "dot-merger"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  DotMergerOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_SIMPLIFIERS_DOT_MERGER_H_
