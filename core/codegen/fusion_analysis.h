// Fusion analysis (seed 000's hero-based codegen): finds each output's
// "hero" — the op that decides how the kernel must iterate — and picks the
// emitter kind for the kernel.
//
// The hero of an output is found by walking up from the output through
// elementwise ops with one operand of the same dimensions (and bitcasts);
// the first non-elementwise op reached is the hero. Emitter choice, in order:
// any reduce hero -> reduction; a transpose hero -> transpose; a scatter root
// -> scatter; a dynamic-update-slice root -> in-place DUS; a concatenate
// root -> concatenate; every root a slice -> input slices; otherwise loop.
#ifndef PASSLAB_CORE_CODEGEN_FUSION_ANALYSIS_H_
#define PASSLAB_CORE_CODEGEN_FUSION_ANALYSIS_H_

#include <vector>

#include "core/codegen/compiled_kernel.h"

namespace passlab {

class HloInstruction;

struct FusionAnalysis {
  EmitterKind kind = EmitterKind::kLoop;
  // The output leaves of the kernel (a tuple root is flattened) and, per
  // leaf, its hero.
  std::vector<const HloInstruction*> roots;
  std::vector<const HloInstruction*> heroes;
  // Whether a reduction hero reduces the operand's most minor dimension
  // (a "row" reduction) rather than a major one ("column").
  bool row_reduction = false;
};

// `instruction` is a fusion (analysed over its fused computation) or an
// unfused op (which is its own root and hero).
FusionAnalysis AnalyzeFusion(const HloInstruction& instruction);

// The hero of one output leaf.
const HloInstruction* FindHero(const HloInstruction* root);

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_FUSION_ANALYSIS_H_
