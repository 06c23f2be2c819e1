// The Ablation panel's passes x kernels heatmap (analysis/ablation/heatmap.h,
// the same one report.html draws): rows the variants, columns the baseline's
// kernels by hero kind, cells the kernel's time change (blue faster, red
// slower, capped at ±100%), removed kernels crossed out, added ones in a
// purple strip at the right. The wheel zooms; a click selects the cell's
// variant and kernel, and below the heatmap shows the kernel's HLO in the
// baseline and in the variant (both modules compiled again from the sweep's
// manifest on a job, "computing…" meanwhile) beside the disabled pass's IR
// diff.
#ifndef PASSLAB_GUI_ABLATION_HEATMAP_H_
#define PASSLAB_GUI_ABLATION_HEATMAP_H_

#include "gui/state/app_state.h"

namespace passlab::gui {

void DrawAblationHeatmap(AppState& state, const AblationReport& report);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_ABLATION_HEATMAP_H_
