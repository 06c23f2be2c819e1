// What XLA's pass tests set and check beyond their HLO text, transcribed by
// hand from XLA's test sources (the `test` and `xla_file` fields of a case
// say where): the pass options a test constructs its pass with, and, where
// the test checks the result with C++ matchers (GmockMatch(m::...),
// op::...) instead of FileCheck directives, the same structure written as
// FileCheck directives over XLA's printed module, and the passes a test runs
// before the one it tests. The conformance runner
// applies a fixture's entry (test "Fixture.") to every test of the fixture,
// then the test's own entry.
#ifndef PASSLAB_ANALYSIS_CONFORMANCE_CASE_TABLE_H_
#define PASSLAB_ANALYSIS_CONFORMANCE_CASE_TABLE_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace passlab::conformance {

struct CaseSpec {
  // "AlgebraicSimplifierTest.ExpOfZero", or "AlgebraicSimplifierTest." for
  // every test of the fixture.
  std::string_view test;
  // "option=value" for the case's pass, by XLA's option names.
  std::vector<std::string_view> options = {};
  // FileCheck directives for the module after the pass, transcribed from the
  // test's C++ matchers ("" when the test has none or checks with FileCheck).
  std::string_view expect = {};
  // Passes (by XLA's names, default options) the test runs on the module
  // before the pass under test, e.g. GemmRewriter before the gemm broadcast
  // folding rewriter that needs its calls.
  std::vector<std::string_view> run_first = {};
  // The module config XLA's ParseAndReturnVerifiedModule(text, replica_count,
  // num_partitions) gives the test's module (0: the default, 1).
  int64_t replica_count = 0;
  int64_t num_partitions = 0;
  // The test parses with ParseAndReturnUnverifiedModule: the input is not
  // verified (the output still is).
  bool unverified = false;
};

// One list per area, so that concurrent edits merge cleanly.
std::vector<CaseSpec> AlgebraicSimplifierCases();    // cases_algsimp.cc
std::vector<CaseSpec> ControlFlowCases();            // cases_control_flow.cc: while/conditional/call/cse/dce/dot-merger
std::vector<CaseSpec> LayoutAndFusionCases();        // cases_layout_fusion.cc: layout, fusion, remat, transpose folding
std::vector<CaseSpec> ExpanderAndCollectiveCases();  // cases_expanders.cc: expanders, collectives, reductions
std::vector<CaseSpec> LayoutNormalizationCases();    // cases_layout_normalization.cc: layout normalization group
std::vector<CaseSpec> DotNormalizationCases();       // cases_dot_normalization.cc: dot normalization, scatter slices
std::vector<CaseSpec> PriorityFusionCases();         // cases_priority_fusion.cc: priority-fusion, fusion-wrapper

// Every entry of the lists above.
const std::vector<CaseSpec>& AllCaseSpecs();

}  // namespace passlab::conformance

#endif  // PASSLAB_ANALYSIS_CONFORMANCE_CASE_TABLE_H_
