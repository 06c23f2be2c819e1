// The Ablation panel's side-by-side view: the open report and the ones
// opened beside it ("Open another...", --report DIR --report DIR2), as
// `passlab ablate --compare` puts them (analysis/ablation/compare.h): per
// variant each report's change and CI, whether the significant ones agree in
// sign; each report against the first: sign agreement and Spearman's rank
// correlation; what differs in their manifests.
#ifndef PASSLAB_GUI_ABLATION_COMPARE_H_
#define PASSLAB_GUI_ABLATION_COMPARE_H_

#include "gui/panels.h"

namespace passlab::gui {

void DrawAblationComparison(AppState& state, UiState& ui);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_ABLATION_COMPARE_H_
