// Pass options and C++-matcher / RunFileCheck expectations of the dot
// normalization tests (dot strength reduction, dimension normalizer,
// gemv rewriter) and the scatter-slice simplifier (the XLA test files are
// named above each group).
#include <string>

#include "analysis/conformance/case_table.h"

namespace passlab::conformance {
namespace {

// xla/backends/gpu/transforms/dot_strength_reduction_test.cc: the pass is
// built with Hopper (9.0) or Ampere (8.0); the tests check the module with
// RunFileCheck patterns kept apart from the HLO text, transcribed here.
void AddDotStrengthReductionCases(std::vector<CaseSpec>& r) {
  r.push_back({"DotStrengthReductionTest.MultipleContractingDimensions", {"compute_capability=9.0"},
               "CHECK: f32[256,4]{0,1} transpose\n"
               "CHECK: f32[4096,256,4]{1,0,2} broadcast\n"
               "CHECK: f32[4096,256,4]{1,2,0} transpose\n"
               "CHECK: f32[4096,256,4]{1,0,2} multiply\n"
               "CHECK: f32[4096]{0} reduce\n"});
  r.push_back({"DotStrengthReductionTest.UpcastInReduction", {"compute_capability=9.0"},
               "CHECK: bf16[256,6144]{1,0} multiply\n"
               "CHECK: f32[256,6144]{1,0} convert\n"
               "CHECK: f32[] constant(0)\n"
               "CHECK: f32[256]{0} reduce\n"
               "CHECK: bf16[256]{0} convert\n"});
  r.push_back({"DotStrengthReductionTest.MaintainsMetadata", {"compute_capability=9.0"},
               "CHECK: bf16[256,6144]{1,0} multiply{{.*}}, metadata={op_name=\"test\"}\n"
               "CHECK: f32[256,6144]{1,0} convert{{.*}}, metadata={op_name=\"test\"}\n"
               "CHECK: f32[256]{0} reduce{{.*}}, metadata={op_name=\"test\"}\n"
               "CHECK: bf16[256]{0} convert{{.*}}, metadata={op_name=\"test\"}\n"});
  r.push_back({"DotStrengthReductionTest.UpcastInReductionF8E4M3FN", {"compute_capability=9.0"},
               "CHECK: f8e4m3fn[8,32,16]{2,1,0} multiply\n"
               "CHECK: f32[8,32,16]{2,1,0} convert\n"
               "CHECK: f32[] constant(0)\n"
               "CHECK: f32[8,32]{1,0} reduce\n"
               "CHECK: f8e4m3fn[8,32]{1,0} convert\n"});
  r.push_back({"DotStrengthReductionTest.VectorVectorDotShouldBeStrengthReduced", {"compute_capability=8.0"},
               "CHECK: f32[32,500]{1,0} multiply\n"
               "CHECK: f32[32]{0} reduce\n"});
  r.push_back({"DotStrengthReductionTest.MatrixVectorDotShouldNotBeStrengthReduced", {"compute_capability=8.0"}});
  r.push_back({"DotStrengthReductionTest.DotWithTypeUnsupportedByGemmFusionShouldBeStrengthReduced",
               {"compute_capability=8.0"},
               "CHECK: c64[32,7000,5000]{{[^ ]*}} multiply\n"
               "CHECK: c64[32,7000]{{[^ ]*}} reduce\n"});
  const char* kSixBf16Multiplies =
      "CHECK: bf16{{[^ ]*}} multiply\n"
      "CHECK: bf16{{[^ ]*}} multiply\n"
      "CHECK: bf16{{[^ ]*}} multiply\n"
      "CHECK: bf16{{[^ ]*}} multiply\n"
      "CHECK: bf16{{[^ ]*}} multiply\n"
      "CHECK: bf16{{[^ ]*}} multiply\n";
  static const std::string kSmall = std::string(kSixBf16Multiplies) + "CHECK: f32[32,70]{{[^ ]*}} reduce\n";
  static const std::string kSmall2 = std::string(kSixBf16Multiplies) + "CHECK: f32[3000]{0} reduce\n";
  r.push_back({"DotStrengthReductionTest.SmallDotShouldBeStrengthReduced", {"compute_capability=8.0"}, kSmall});
  r.push_back({"DotStrengthReductionTest.SmallDotShouldBeStrengthReduced2", {"compute_capability=8.0"}, kSmall2});
  r.push_back({"DotStrengthReductionTest.DotStrengthReductionWith_F32_F32_F32_Algorithm", {"compute_capability=8.0"},
               "CHECK: f32[128,2]{{[^ ]*}} multiply\n"
               "CHECK: f32[128]{0} reduce\n"});
  r.push_back({"DotStrengthReductionTest.DotStrengthReductionMixedOperandTypes", {"compute_capability=8.0"},
               "CHECK: s32[2]{0} convert\n"
               "CHECK: s32[128,2]{{[^ ]*}} multiply\n"
               "CHECK: s32[128]{0} reduce\n"});
  r.push_back({"DotStrengthReductionTest.S32MatrixMatrixDotShouldBeStrengthReduced", {"compute_capability=8.0"},
               "CHECK: s32[32,70,50]{{[^ ]*}} multiply\n"
               "CHECK: s32[32,70]{{[^ ]*}} reduce\n"});
  r.push_back({"DotStrengthReductionTest.F32MatrixMatrixDotShouldNotBeStrengthReduced", {"compute_capability=8.0"}});
}

// xla/hlo/transforms/dot_dimension_normalizer_test.cc: the tests named
// *NonContracting* (but NoChangeWhenFlagIsFalse) build the pass with
// normalize_noncontracting_dimensions=true.
void AddDotDimensionNormalizerCases(std::vector<CaseSpec>& r) {
  for (const char* test : {"DotDimensionNormalizerTest.NormalizeNonContractingDimsLhs",
                           "DotDimensionNormalizerTest.NormalizeNonContractingDimsRhs",
                           "DotDimensionNormalizerTest.NormalizeManyNonContractingDims",
                           "DotDimensionNormalizerTest.NormalizeBothContractingAndNonContracting",
                           "DotDimensionNormalizerTest.NormalizeNonConsecutiveNonContractingDims",
                           "DotDimensionNormalizerTest.NormalizeNonContractingDimsWithBatchDims"}) {
    r.push_back({test, {"normalize_noncontracting_dimensions=true"}});
  }
}

// xla/hlo/transforms/simplifiers/gemv_rewriter_test.cc: a parameterized
// test (LayoutSensitive / NotLayoutSensitive); the corpus keeps the
// default, layout-sensitive instance.

// xla/backends/gpu/transforms/scatter_slice_simplifier_test.cc:
// m::Scatter(m::Slice(m::Constant()), m::Parameter(0), m::Parameter(1)).
void AddScatterSliceSimplifierCases(std::vector<CaseSpec>& r) {
  r.push_back({"ScatterSliceSimplifierTest.Scatter1D", {},
               "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
               "CHECK: [[S:%[^ ]+]] = f32[8]{0} slice({{.*}}[[C]])\n"
               "CHECK: ROOT {{.*}} = f32[8]{0} scatter({{.*}}[[S]], {{.*}}%indices, {{.*}}%updates)\n"});
  r.push_back({"ScatterSliceSimplifierTest.Scatter3D", {},
               "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
               "CHECK: [[S:%[^ ]+]] = f32[4,4,4]{2,1,0} slice({{.*}}[[C]])\n"
               "CHECK: ROOT {{.*}} = f32[4,4,4]{2,1,0} scatter({{.*}}[[S]], {{.*}}%indices, {{.*}}%updates)\n"});
  // m::Tuple(m::Abs(scatter), m::Maximum(scatter, m::Slice(m::Constant())))
  r.push_back({"ScatterSliceSimplifierTest.IntermediaryUsers", {},
               "CHECK-DAG: [[SC:%[^ ]+]] = f32[8]{0} scatter({{.*}}%slice{{.*}}, {{.*}}%indices, {{.*}}%updates)\n"
               "CHECK-DAG: [[A:%[^ ]+]] = f32[8]{0} abs({{.*}}[[SC]])\n"
               "CHECK-DAG: [[M:%[^ ]+]] = f32[8]{0} maximum({{.*}}[[SC]], {{.*}}%slice{{.*}})\n"
               "CHECK: ROOT {{.*}} = (f32[8]{0}, f32[8]{0}) tuple({{.*}}[[A]], {{.*}}[[M]])\n"});
}

}  // namespace

std::vector<CaseSpec> DotNormalizationCases() {
  std::vector<CaseSpec> r;
  AddDotStrengthReductionCases(r);
  AddDotDimensionNormalizerCases(r);
  AddScatterSliceSimplifierCases(r);
  return r;
}

}  // namespace passlab::conformance
