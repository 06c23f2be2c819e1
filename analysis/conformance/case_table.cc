#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

const std::vector<CaseSpec>& AllCaseSpecs() {
  static const auto* all = [] {
    auto* v = new std::vector<CaseSpec>();
    for (auto list : {AlgebraicSimplifierCases, ControlFlowCases, LayoutAndFusionCases, ExpanderAndCollectiveCases,
                      LayoutNormalizationCases, DotNormalizationCases, PriorityFusionCases}) {
      std::vector<CaseSpec> part = list();
      v->insert(v->end(), part.begin(), part.end());
    }
    return v;
  }();
  return *all;
}

}  // namespace passlab::conformance
