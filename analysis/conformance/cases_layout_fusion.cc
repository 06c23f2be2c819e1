// Pass options and C++-matcher expectations of the layout-assignment,
// fusion, rematerialization, transpose-folding, convert-mover and gemm
// rewriter tests (the XLA test files are named above each group).
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {
namespace {

// xla/hlo/transforms/simplifiers/convert_mover_test.cc
void AddConvertMoverCases(std::vector<CaseSpec>& r) {
  r.push_back({"ConvertMoverTest.MoveDownThroughConcat", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
               "CHECK: [[C:%[^ ]+]] = {{.*}} concatenate([[P0]], [[P1]])\n"
               "CHECK: ROOT {{.*}} = f32[{{.*}} convert([[C]])\n"});
  r.push_back({"ConvertMoverTest.MoveUpReshape", {},
               "CHECK: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK: [[C:%[^ ]+]] = f16[{{.*}} convert([[P0]])\n"
               "CHECK: ROOT {{.*}} reshape([[C]])\n"});
  r.push_back({"ConvertMoverTest.MoveUpTwoTransposes", {},
               "CHECK: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK: [[C:%[^ ]+]] = f16[{{.*}} convert([[P0]])\n"
               "CHECK: [[T:%[^ ]+]] = {{.*}} transpose([[C]])\n"
               "CHECK: ROOT {{.*}} transpose([[T]])\n"});
  r.push_back({"ConvertMoverTest.MoveDownTwoSlices", {},
               "CHECK: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK: [[S1:%[^ ]+]] = {{.*}} slice([[P0]])\n"
               "CHECK: [[S2:%[^ ]+]] = {{.*}} slice([[S1]])\n"
               "CHECK: ROOT {{.*}} = f32[{{.*}} convert([[S2]])\n"});
  r.push_back({"ConvertMoverTest.MoveDownC64", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
               "CHECK: [[C:%[^ ]+]] = {{.*}} concatenate([[P0]], [[P1]])\n"
               "CHECK: ROOT {{.*}} = c64[{{.*}} convert([[C]])\n"});
  r.push_back({"ConvertMoverTest.MoveUpPad", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[K:%[^ ]+]] = {{.*}} constant(0)\n"
               "CHECK-DAG: [[CP:%[^ ]+]] = f16[{{.*}} convert([[P0]])\n"
               "CHECK-DAG: [[CK:%[^ ]+]] = f16[] convert([[K]])\n"
               "CHECK: ROOT {{.*}} pad([[CP]], [[CK]])\n"});
  r.push_back({"ConvertMoverTest.MoveUpPadWithOutOfRangeConstant", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[K:%[^ ]+]] = {{.*}} constant(1000)\n"
               "CHECK-DAG: [[CP:%[^ ]+]] = s8[{{.*}} convert([[P0]])\n"
               "CHECK-DAG: [[CK:%[^ ]+]] = s8[] convert([[K]])\n"
               "CHECK: ROOT {{.*}} pad([[CP]], [[CK]])\n"});
  r.push_back({"ConvertMoverTest.MoveDownPad", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[K:%[^ ]+]] = {{.*}} constant(0)\n"
               "CHECK-DAG: [[CK:%[^ ]+]] = f16[] convert([[K]])\n"
               "CHECK: [[PAD:%[^ ]+]] = {{.*}} pad([[P0]], [[CK]])\n"
               "CHECK: ROOT {{.*}} = f32[{{.*}} convert([[PAD]])\n"});
}

// xla/service/transpose_folding_test.cc. op::Dot(lhs, rhs, lhs_contracting,
// rhs_contracting) checks the operands and the one contracting dimension of
// each side.
void AddTransposeFoldingCases(std::vector<CaseSpec>& r) {
  r.push_back({"TransposeFoldingTest.FoldDotTranspose", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
               "CHECK: ROOT {{.*}} dot([[P0]], [[P1]]), {{.*}}lhs_contracting_dims={1}{{.*}}"
               "rhs_contracting_dims={1}\n"});
  r.push_back({"TransposeFoldingTest.FoldTransposeOfBatchWhenPermitted",
               {"dot_can_fold_transpose_operand=always"},
               "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
               "CHECK: ROOT {{.*}} dot([[P0]], [[P1]]), {{.*}}lhs_contracting_dims={2}{{.*}}"
               "rhs_contracting_dims={0}\n"});
  r.push_back({"TransposeFoldingTest.FoldDotTransposeConstant", {},
               "CHECK-DAG: [[C0:%[^ ]+]] = {{.*}} constant(\n"
               "CHECK-DAG: [[C1:%[^ ]+]] = {{.*}} constant(\n"
               "CHECK: ROOT {{.*}} dot([[C0]], [[C1]]), {{.*}}lhs_contracting_dims={0}{{.*}}"
               "rhs_contracting_dims={1}\n"});
  r.push_back({"TransposeFoldingTest.FoldDotTransposeInCall", {},
               "CHECK-DAG: [[N0:%[^ ]+]] = {{.*}} parameter(0)\n"
               "CHECK-DAG: [[N1:%[^ ]+]] = {{.*}} parameter(1)\n"
               "CHECK: ROOT {{.*}} dot([[N1]], [[N0]]), {{.*}}lhs_contracting_dims={1}{{.*}}"
               "rhs_contracting_dims={1}\n"
               "CHECK: ENTRY\n"});
  for (std::string_view test : {"TransposeFoldingTest.FoldBatchDotTranspose",
                                "TransposeFoldingTest.FoldBatchDotTransposeNonContiguousBatch"}) {
    r.push_back({test, {},
                 "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
                 "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
                 "CHECK: ROOT {{.*}} dot([[P0]], [[P1]]), {{.*}}lhs_contracting_dims={3}{{.*}}"
                 "rhs_contracting_dims={3}\n"});
  }
  r.push_back({"TransposeFoldingTest.FoldTransposeWithBackendConfig", {},
               "CHECK: ROOT {{.*}} dot({{.*}}backend_config=\n"});
}


// xla/backends/gpu/transforms/layout_assignment_test.cc. Operand checks use
// CHECK-DAG: the user's line binds the operand's name, a later DAG line
// finds the operand's definition wherever it is printed.
#define OPERAND(var) "[[" var ":%[^ ,)]+]]"
void AddLayoutAssignmentCases(std::vector<CaseSpec>& r) {
  r.push_back({"LayoutAssignmentTest.DotLayoutUnchangedIfValid", {},
               "CHECK-DAG: ROOT {{.*}} = f32[5,2,4]{2,1,0} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[5,2,3]{1,2,0} \n"
               "CHECK-DAG: [[B]] = f32[5,3,4]{1,2,0} \n"});
  r.push_back({"LayoutAssignmentTest.DotLayoutSetToDefaultIfDefaultValid", {},
               "CHECK-DAG: ROOT {{.*}} = f32[5,2,4]{2,1,0} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[5,3,2]{2,1,0} \n"
               "CHECK-DAG: [[B]] = f32[5,4,3]{2,1,0} \n"});
  r.push_back({"LayoutAssignmentTest.BitcastConvertKeepsCompatibleLayouts", {},
               "CHECK-DAG: ROOT {{.*}} copy(" OPERAND("T") ")\n"
               "CHECK-DAG: [[T]] = {{.*}} transpose(" OPERAND("B") ")\n"
               "CHECK-DAG: [[B]] = u8[5,4,3]{2,1,0} bitcast-convert(" OPERAND("P") ")\n"
               "CHECK-DAG: [[P]] = u4[5,4,3,2]{3,2,1,0{{[^}]*}}} parameter(\n"});
  r.push_back({"LayoutAssignmentTest.DotOperandLayoutSetToBatchRowsColsOtherwise", {},
               "CHECK-DAG: ROOT {{.*}} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[2,3,5]{0,1,2} \n"
               "CHECK-DAG: [[B]] = f32[3,4,5]{1,0,2} \n"});
  r.push_back({"LayoutAssignmentTest.DotOperandInconsistentDimLayouts", {},
               "CHECK-DAG: ROOT {{.*}} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[5,6,2,3]{3,2,1,0} \n"
               "CHECK-DAG: [[B]] = f32[6,5,3,4]{3,2,0,1} \n"});
  r.push_back({"LayoutAssignmentTest.TransposedDotLayout", {},
               "CHECK-DAG: ROOT {{.*}} = f32[2,5,4,6]{3,2,1,0} transpose(" OPERAND("D") ")\n"
               "CHECK-DAG: [[D]] = f32[5,2,4,6]{3,2,0,1} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[5,2,3]{2,1,0} \n"
               "CHECK-DAG: [[B]] = f32[5,3,4,6]{3,2,1,0} \n"});
  r.push_back({"LayoutAssignmentTest.TransposedDotOfDotLayout", {},
               "CHECK-DAG: ROOT {{.*}} = f32[2,50,38,4]{2,3,0,1} transpose(" OPERAND("D2") ")\n"
               "CHECK-DAG: [[D2]] = f32[50,2,4,38]{3,2,1,0} dot(" OPERAND("C") ", " OPERAND("P2") ")\n"
               "CHECK-DAG: [[C]] = f32[50,2,4,4]{3,1,0,2} copy(" OPERAND("D1") ")\n"
               "CHECK-DAG: [[D1]] = f32[50,2,4,4]{3,2,1,0} dot(" OPERAND("P0") ", " OPERAND("P1") ")\n"
               "CHECK-DAG: [[P0]] = f32[8,50]{1,0} \n"
               "CHECK-DAG: [[P1]] = f32[2,8,4,4]{3,2,0,1} \n"
               "CHECK-DAG: [[P2]] = f32[4,38]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.DotLayoutS8", {},
               "CHECK-DAG: ROOT {{.*}} dot(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = s8[32,64]{1,0} \n"
               "CHECK-DAG: [[B]] = s8[64,96]{0,1} \n"});
  r.push_back({"LayoutAssignmentTest.SameLayoutOnOperandsAndOutputsOfSort", {},
               "CHECK-DAG: ROOT {{.*}} sort(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[3,2]{1,0} \n"
               "CHECK-DAG: [[B]] = f32[3,2]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.SameLayoutOnOperandsAndOutputsOfCubDeviceRadixSort", {},
               "CHECK-DAG: ROOT {{.*}} custom-call(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[3,2]{1,0} \n"
               "CHECK-DAG: [[B]] = f32[3,2]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.TopKLayout", {},
               "CHECK-DAG: ROOT {{.*}} custom-call(" OPERAND("T") ")\n"
               "CHECK-DAG: [[T]] = f32[6,2048]{1,0} transpose(" OPERAND("C") ")\n"
               "CHECK-DAG: [[C]] = f32[2048,6]{0,1} copy(\n"});
  r.push_back({"LayoutAssignmentTest.BitcastConvertFromNarrowerTypeGetsOptimalInputLayout", {},
               "CHECK-DAG: ROOT {{.*}} bitcast-convert(" OPERAND("C") ")\n"
               "CHECK-DAG: [[C]] = s4[3,5,2]{2,0,1{{[^}]*}}} copy(" OPERAND("P") ")\n"
               "CHECK-DAG: [[P]] = {{.*}} parameter(\n"});
  r.push_back({"LayoutAssignmentTest.BitcastConvertToNarrowerTypeGetsOptimalOutputLayout", {},
               "CHECK-DAG: ROOT {{.*}} copy(" OPERAND("B") ")\n"
               "CHECK-DAG: [[B]] = s4[3,5,2]{2,0,1{{[^}]*}}} bitcast-convert(" OPERAND("C") ")\n"
               "CHECK-DAG: [[C]] = s8[3,5]{0,1} copy(" OPERAND("P") ")\n"
               "CHECK-DAG: [[P]] = {{.*}} parameter(\n"});
  r.push_back({"LayoutAssignmentTest.FftLayout", {},
               "CHECK-DAG: ROOT {{.*}} copy(" OPERAND("T") ")\n"
               "CHECK-DAG: [[T]] = {{.*}} transpose(" OPERAND("F") ")\n"
               "CHECK-DAG: [[F]] = c64[8,32]{1,0} fft(" OPERAND("I") ")\n"
               "CHECK-DAG: [[I]] = c64[8,32]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.CustomCallConstrainedAlias", {},
               "CHECK-DAG: = (f32[2,5,5]{1,2,0}, s8[16]{0}, s8[16]{0}) custom-call(" OPERAND("A") ", " OPERAND("B") ")\n"
               "CHECK-DAG: [[A]] = f32[2,5,5]{1,2,0} \n"
               "CHECK-DAG: [[B]] = f32[2,5,5]{1,2,0} \n"});
  for (std::string_view test : {"LayoutAssignmentTest.MoveToHostCustomCallConstrained",
                                "LayoutAssignmentTest.MoveToDeviceCustomCallConstrained"}) {
    r.push_back({test, {},
                 "CHECK-DAG: %custom-call.0 = f32[2,5,5]{2,1,0} custom-call(" OPERAND("A") ")\n"
                 "CHECK-DAG: [[A]] = f32[2,5,5]{2,1,0} \n"});
  }
  r.push_back({"LayoutAssignmentTest.ReduceOperandLayout", {},
               "CHECK-DAG: ROOT {{.*}} reduce(" OPERAND("A") ", \n"
               "CHECK-DAG: [[A]] = c64[512,64,1024,32,128]{3,1,4,2,0} \n"});
  r.push_back({"LayoutAssignmentTest.ReduceOperandLayoutSmallReductionDimension", {},
               "CHECK-DAG: ROOT {{.*}} reduce(" OPERAND("A") ", \n"
               "CHECK-DAG: [[A]] = c64[512,16,1024,128]{3,2,1,0} \n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutE4M3ContractingMinorFirst", {},
               "CHECK-DAG: [[P0:%[^ ]+]] = f8e4m3fn[128,5120]{1,0} parameter(0)\n"
               "CHECK-DAG: [[P1:%[^ ]+]] = f8e4m3fn[5120,10240]{0,1} parameter(1)\n"
               "CHECK-DAG: ROOT {{.*}} = f32[128,10240]{1,0} dot([[P0]], [[P1]])\n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotContractingMinorLhs", {},
               "CHECK-DAG: = s4[5120,128]{0,1{{[^}]*}}} parameter(0)\n"
               "CHECK-DAG: = bf16[5120,10240]{1,0} parameter(1)\n"
               "CHECK-DAG: ROOT {{.*}} = bf16[128,10240]{1,0} dot(\n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotContractingMinorRhs", {},
               "CHECK-DAG: = bf16[5120,128]{1,0} parameter(0)\n"
               "CHECK-DAG: = s4[5120,10240]{0,1{{[^}]*}}} parameter(1)\n"
               "CHECK-DAG: ROOT {{.*}} = bf16[128,10240]{1,0} dot(\n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotFollowingTheChain", {},
               "CHECK-DAG: = s4[3072,128]{0,1{{[^}]*}}} parameter(0)\n"
               "CHECK-DAG: = bf16[3072,128]{0,1} parameter(1)\n"
               "CHECK-DAG: = bf16[3072,9216]{1,0} parameter(2)\n"
               "CHECK-DAG: ROOT {{.*}} = bf16[128,9216]{1,0} dot(\n"});
  r.push_back({"LayoutAssignmentTest.DotSetsNonMandatoryConstraintIfAutoLayout", {},
               "CHECK: p1 = f16[40,20,50]{1,2,0} parameter(1)\n"});
  r.push_back({"LayoutAssignmentTest.VariadicReduceSameOperandLayout", {},
               "CHECK-DAG: ROOT {{.*}} reduce(" OPERAND("A") ", " OPERAND("B") ", \n"
               "CHECK-DAG: [[A]] = s32[512,16,1024,128]{[[L:[0-9,]+]]} \n"
               "CHECK-DAG: [[B]] = f32[512,16,1024,128]{[[L]]} \n"});
  // Operands 0 and 1 share a layout, operand 1 has the result's shape, and
  // the ragged dimension 0 is the most major.
  r.push_back({"LayoutAssignmentTest.RaggedAllToAllLayoutSetRaggedDimToMajor", {},
               "CHECK-DAG: = f32[32,4,8]{[[L:[0-9,]+,0]]} ragged-all-to-all(" OPERAND("IN") ", " OPERAND("OUT") ",\n"
               "CHECK-DAG: [[IN]] = f32[16,4,8]{[[L]]} \n"
               "CHECK-DAG: [[OUT]] = f32[32,4,8]{[[L]]} \n"});
  r.push_back({"LayoutAssignmentTest.ReshapeBitcastMinimizeChanges", {},
               "CHECK-DAG: ROOT {{.*}} = f32[1,10,20]{0,2,1} reshape(" OPERAND("A") ")\n"
               "CHECK-DAG: [[A]] = f32[10,20]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.ReshapeBitcastMinimizeChangesMultipleOnes", {},
               "CHECK-DAG: ROOT {{.*}} = f32[1,10,1,20]{0,2,3,1} reshape(" OPERAND("A") ")\n"
               "CHECK-DAG: [[A]] = f32[10,20]{1,0} \n"});
  r.push_back({"LayoutAssignmentTest.ReshapeBitcastMinimizeChangesAdjustNonDegenerate", {},
               "CHECK: = f32[1,10,20]{0,2,1} reshape(\n"});
}

// xla/backends/gpu/transforms/gemm_rewriter_test.cc. The parameterized
// fixture runs with and without cuBLASLt, so the call's target is either.
void AddGemmRewriterCases(std::vector<CaseSpec>& r) {
  for (std::string_view test : {"ParameterizedGemmRewriteTest.DoNotUpconvertOutput",
                                "ParameterizedGemmRewriteTest.UnsupportedMixTypeGemm"}) {
    r.push_back({test, {},
                 "CHECK-DAG: ROOT {{.*}} convert(" OPERAND("G") ")\n"
                 "CHECK-DAG: [[G]] = {{.*}} get-tuple-element(" OPERAND("C") "), index=0\n"
                 "CHECK-DAG: [[C]] = {{.*}} custom-call({{.*}}custom_call_target=\"__cublas${{(gemm|lt\\$matmul)}}\"\n"});
  }
}
#undef OPERAND

}  // namespace

std::vector<CaseSpec> LayoutAndFusionCases() {
  std::vector<CaseSpec> r;
  AddConvertMoverCases(r);
  AddTransposeFoldingCases(r);
  AddLayoutAssignmentCases(r);
  AddGemmRewriterCases(r);
  return r;
}

}  // namespace passlab::conformance
