// VariadicOpSplitter ("variadic-op-splitter", XLA:GPU): splits a
// concatenate of more than 128 operands (XLA:GPU's kernel parameter limit)
// into concatenates of at most 128 operands each, concatenated again, until
// none has more. The result is the same array; every kernel then stays
// within the parameter limit.
//
// Runs first in the fusion sub-pipeline, so that the fusion passes see
// concatenates they may fuse.
#ifndef PASSLAB_PASSES_FUSION_VARIADIC_OP_SPLITTER_H_
#define PASSLAB_PASSES_FUSION_VARIADIC_OP_SPLITTER_H_

#include <cstdint>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct VariadicOpSplitterOptions {
  int64_t max_operands = 128;
};

class VariadicOpSplitter : public HloModulePass {
 public:
  explicit VariadicOpSplitter(VariadicOpSplitterOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "variadic-op-splitter"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  VariadicOpSplitterOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_FUSION_VARIADIC_OP_SPLITTER_H_
