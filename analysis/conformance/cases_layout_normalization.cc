// Pass options and C++-matcher expectations of XLA's layout-normalization
// pass tests: xla/service/layout_normalization_test.cc,
// xla/hlo/transforms/expanders/reshape_decomposer_test.cc,
// xla/hlo/transforms/expanders/reduce_decomposer_test.cc,
// xla/backends/gpu/transforms/move_copy_to_users_test.cc and
// xla/hlo/transforms/simplifiers/broadcast_canonicalizer_test.cc. Their
// tests construct the passes with default options and check with FileCheck,
// so nothing needs transcribing; the one exception,
// LayoutNormalizationTest.CustomCallTransformerModifiesInPlaceAndReturnsNullopt,
// passes a test-only C++ lambda as custom-call transformer that no option
// can express.
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

std::vector<CaseSpec> LayoutNormalizationCases() { return {}; }

}  // namespace passlab::conformance
