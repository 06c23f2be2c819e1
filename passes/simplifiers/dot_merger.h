// DotMerger ("dot-merger"): merges dots that share an operand into one bigger
// dot over the concatenation of their other operands, and slices the results
// back out (XLA's xla/hlo/transforms/simplifiers/dot_merger.cc):
//
//   d0 = dot(x, w0)  [m, n0]          w = concatenate(w0, w1)  [k, n0+n1]
//   d1 = dot(x, w1)  [m, n1]    =>    d = dot(x, w)            [m, n0+n1]
//                                     d0 = slice(d), d1 = slice(d)
//
// "Shared" is seen through transposes and reshapes: two dots whose operands
// are transposed or reshaped views of one instruction (the source) share it
// when their batch, contracting and non-contracting dimensions fall on the
// same dimensions of the source (size-1 dimensions aside). The merged dot
// reads the source directly (reshaped to drop size-1 dimensions and to
// collapse adjacent contracting dimensions); each other operand is brought
// to [batch, n, contracting] (or [batch, contracting, n] when its last
// dimension is a free one) with its free dimensions flattened into n, and
// each result is sliced out and reshaped/transposed back. A group of dots
// merges at once (concatenated by decreasing power of two dividing n, then
// decreasing n), under XLA's rules: equal element types, precision config
// and queue id; no control edges; no sub-byte upcast feeding an operand;
// members independent of each other; n within a factor of 20 of the
// smallest; and the merged concatenated operand plus result at most
// max_size_to_merge bytes. Layouts are ignored (run before layout
// assignment).
#ifndef PASSLAB_PASSES_SIMPLIFIERS_DOT_MERGER_H_
#define PASSLAB_PASSES_SIMPLIFIERS_DOT_MERGER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct DotMergerOptions {
  // XLA's max_size_to_merge: a group grows only while its concatenated
  // operand plus merged result stay within this many bytes (XLA:GPU passes
  // 16 MiB).
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
