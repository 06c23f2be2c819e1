// Sweeps side by side (`passlab ablate --compare DIR1 DIR2 [DIR3 ...]`):
// another model, pipeline (gpu beside gpu-2021), machine or passlab build.
// Per variant ("disable algsimp"), each sweep's ratio, CI and outcome; per
// sweep against the first: how many passes significant in either agree in
// the sign of their effect, and the Spearman rank correlation of the
// ratios over the variants both measured; and what differed in the
// manifests (pipeline, model, device, threads, ...).
#ifndef PASSLAB_ANALYSIS_ABLATION_COMPARE_H_
#define PASSLAB_ANALYSIS_ABLATION_COMPARE_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "analysis/ablation/ablation_report.h"
#include "analysis/ablation/stats.h"  // SpearmanCorrelation

namespace passlab {

// Reads DIR/report.json of each directory; an error names the directory
// and what is wrong (missing, not a report, fewer than two).
absl::StatusOr<nlohmann::ordered_json> CompareAblationSweeps(const std::vector<std::string>& dirs);

// The same from reports in memory (labels: how each sweep is named).
nlohmann::ordered_json CompareAblationReports(const std::vector<AblationReport>& reports,
                                              const std::vector<std::string>& labels);

// The comparison as Markdown: one table, then the agreement and the
// manifest differences.
std::string RenderComparisonMarkdown(const nlohmann::ordered_json& comparison);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_COMPARE_H_
