// GpuScatterExpander ("gpu_scatter_expander"): ScatterExpander restricted to
// the scatters XLA:GPU's scatter emitter cannot handle (XLA's condition):
// elements wider than 64 bits (c128), and variadic scatters unless their
// indices are unique (then no two updates race on one element).
#ifndef PASSLAB_PASSES_EXPANDERS_GPU_SCATTER_EXPANDER_H_
#define PASSLAB_PASSES_EXPANDERS_GPU_SCATTER_EXPANDER_H_

#include "passes/expanders/scatter_expander.h"

namespace passlab {

class GpuScatterExpander : public ScatterExpander {
 public:
  GpuScatterExpander() : ScatterExpander(Mode::kEliminateAllScatters) {}
  std::string_view name() const override { return "gpu_scatter_expander"; }

 protected:
  bool InstructionMatchesPattern(HloInstruction* inst) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_GPU_SCATTER_EXPANDER_H_
