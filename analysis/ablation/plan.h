// Sweep plans: which pipeline variants an ablation runs. Each variant is the
// default pipeline with a pass filter (core/pass/pass_filter.h) applied:
//   disable-one         every occurrence of one pass disabled ("disable fusion")
//   disable-occurrence  one occurrence disabled (--per-occurrence)
//   add-one             only the required passes plus one pass enabled
//   pair                two passes disabled together (interactions; planned
//                       by the runner from the disable-one results)
//   file                a filter list per line of a user's file
//   aa                  copies of the baseline itself (A/A calibration: what
//                       a variant whose program is the baseline's measures)
// Variants filter by occurrence id ("@12,@31"), so a pass never matches a
// sub-pipeline of the same name (XLA's "fusion" pass vs "fusion" pipeline).
#ifndef PASSLAB_ANALYSIS_ABLATION_PLAN_H_
#define PASSLAB_ANALYSIS_ABLATION_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/hlo_pass_interface.h"
#include "nlohmann/json.hpp"

namespace passlab {

struct AblationVariant {
  std::string name;  // unique in a sweep: "disable fusion", "add cse", "disable fusion+dce"
  std::string kind;  // "disable-one", "disable-occurrence", "add-one", "pair", "file"
  std::vector<std::string> passes;  // the passes the variant is about
  std::string disable;              // filter list handed to the pipeline
  std::string enable_only;
  bool required = false;  // not run: the program cannot be compiled without it
  std::string required_reason;

  nlohmann::json ToJson() const;
  static absl::StatusOr<AblationVariant> FromJson(const nlohmann::json& j);
};

// Distinct leaf pass names of a pipeline, in order of first occurrence.
std::vector<std::string> LeafPassNames(const std::vector<PassOccurrence>& occurrences);

// One variant per leaf pass (all its occurrences disabled), or per
// occurrence when `per_occurrence`. Passes the registry marks required come
// out as required variants (reported, never run).
std::vector<AblationVariant> PlanDisableOne(const std::vector<PassOccurrence>& occurrences, bool per_occurrence);

// One variant per optional pass: the required passes plus that pass.
std::vector<AblationVariant> PlanAddOne(const std::vector<PassOccurrence>& occurrences);

// `copies` A/A variants ("aa-copy-1", ...): the unfiltered pipeline, each
// run exactly as a real variant (its own workers, timed beside its control),
// so the spread of their ratios is what this machine's measurement gives a
// variant that changes nothing (report: the A/A band).
inline constexpr const char* kAaVariantKind = "aa";
std::vector<AblationVariant> PlanAaCopies(int copies);

// A variant file: one variant per line, "NAME: FILTERS" (filters disabled)
// or "NAME: enable-only FILTERS"; '#' starts a comment. Every filter is
// checked against the pipeline; errors name file:line.
absl::StatusOr<std::vector<AblationVariant>> ReadVariantFile(const std::string& path,
                                                             const std::vector<PassOccurrence>& occurrences);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_PLAN_H_
