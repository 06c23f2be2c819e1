// The Ablation panel's compile cost against run-time benefit
// (analysis/ablation/compile_cost.h, the numbers and the plot report.html
// has): a scatter of each pass's own compile time in the baseline (log
// scale) against the run-time change without it, significant points filled,
// the "cheap and useless" and "expensive and essential" corners named; a
// table below with the variant's compile-time difference. Clicking a point
// or a row selects the variant.
#ifndef PASSLAB_GUI_ABLATION_COMPILE_COST_H_
#define PASSLAB_GUI_ABLATION_COMPILE_COST_H_

#include "gui/state/app_state.h"

namespace passlab::gui {

void DrawAblationCompileCost(AppState& state, const AblationReport& report);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_ABLATION_COMPILE_COST_H_
