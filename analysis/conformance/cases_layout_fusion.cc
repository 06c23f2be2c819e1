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
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotContractingMinorLhs",
               {"xla_gpu_experimental_pack_dot_operands_along_k_dimension=true"},
               "CHECK-DAG: = s4[5120,128]{0,1{{[^}]*}}} parameter(0)\n"
               "CHECK-DAG: = bf16[5120,10240]{1,0} parameter(1)\n"
               "CHECK-DAG: ROOT {{.*}} = bf16[128,10240]{1,0} dot(\n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotContractingMinorRhs",
               {"xla_gpu_experimental_pack_dot_operands_along_k_dimension=true"},
               "CHECK-DAG: = bf16[5120,128]{1,0} parameter(0)\n"
               "CHECK-DAG: = s4[5120,10240]{0,1{{[^}]*}}} parameter(1)\n"
               "CHECK-DAG: ROOT {{.*}} = bf16[128,10240]{1,0} dot(\n"});
  r.push_back({"LayoutAssignmentTest.AutoLayoutS4DotFollowingTheChain",
               {"xla_gpu_experimental_pack_dot_operands_along_k_dimension=true"},
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

// xla/backends/gpu/transforms/gemm_rewriter_test.cc. DotWithBias and
// DotWithoutBias construct the pass with se::CudaComputeCapability{} (0.0:
// the pre-Hopper workspace their directives check), DotWithoutBias with
// BiasMode::kNoBias. The parameterized fixture runs with cuBLASLt, so XLA's
// call is `__cublas$lt$matmul` (`__cublas$gemm` without it); passlab spells
// the same cuBLAS gemm call `__blas$gemm` (core/libcall/library_call.h: the
// `__cublas$` spelling marks a call from an XLA:GPU dump, whose recorded
// algorithm the runtime ignores), so the target may be any of the three.
void AddGemmRewriterCases(std::vector<CaseSpec>& r) {
  r.push_back({"GemmRewriteTest.DotWithBias", {"compute_capability=0.0"}});
  r.push_back({"GemmRewriteTest.DotWithoutBias", {"compute_capability=0.0", "bias_mode=kNoBias"}});
  for (std::string_view test : {"ParameterizedGemmRewriteTest.DoNotUpconvertOutput",
                                "ParameterizedGemmRewriteTest.UnsupportedMixTypeGemm"}) {
    r.push_back({test, {},
                 "CHECK-DAG: ROOT {{.*}} convert(" OPERAND("G") ")\n"
                 "CHECK-DAG: [[G]] = {{.*}} get-tuple-element(" OPERAND("C") "), index=0\n"
                 "CHECK-DAG: [[C]] = {{.*}} custom-call({{.*}}custom_call_target=\"{{__cublas\\$gemm|__cublas\\$lt\\$matmul|__blas\\$gemm}}\"\n"});
  }
}

// xla/backends/gpu/transforms/gemm_broadcast_folding_rewriter_test.cc: the
// tests that run the pass alone run GemmRewriter (default options) on the
// module first; the pass matches the gemm calls it makes.
void AddGemmBroadcastFoldingCases(std::vector<CaseSpec>& r) {
  for (std::string_view test : {"GemmBroadcastFoldingRewriteTest.BroadcastedStridedRewriteRhsPassChanged",
                                "GemmBroadcastFoldingRewriteTest.BroadcastedStridedRewriteLhsPassChanged",
                                "GemmBroadcastFoldingRewriteTest.LHSBatchDimNonZero",
                                "GemmBroadcastFoldingRewriteTest.RHSBatchDimNonZero"}) {
    r.push_back({test, {}, "", {"cublas-gemm-rewriter"}});
  }
}
#undef OPERAND

}  // namespace

// xla/hlo/transforms/simplifiers/hlo_rematerialization_test.cc: the
// fixtures' RunHloRematerialization (sizes by ByteSizeOf with 8-byte
// pointers; block_size_limit 1, block_rematerialization_factor 1,
// min_remat_size 0 unless a test passes others) and each test's memory
// limit. New instructions must carry ".remat" (CheckForRematInInstructionNames),
// which the patterns use to tell a rematerialized fusion from the original.
void AddRematerializationCases(std::vector<CaseSpec>& r) {
  r.push_back({"RecomputeAndCompressHloRematerializationTest.",
               {"recompute=true", "compress=true", "host_offload=false", "block_size_limit=1",
                "block_rematerialization_factor=1", "min_remat_size=0", "remat_algorithm=always_remat",
                "shape_size_function=byte_size_of", "compact_shape_function=identity"}});
  // add(multiply, fusion != fus): the test's matcher wants the fusion as
  // the root's operand itself (op::Add(op::Multiply(), AllOf(op::Fusion(),
  // Ne(fusion)))).
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematTupleShape",
               {"memory_limit_bytes=11264"},
               "CHECK-LABEL: ENTRY\n"
               "CHECK-DAG: ROOT {{%[^ ]+}} = f32[1024]{0} add([[M:%[^ ,]+]], [[F:%[^ )]*[.]remat[^ )]*]])\n"
               "CHECK-DAG: [[M]] = f32[1024]{0} multiply(\n"
               "CHECK-DAG: [[F]] = {{.*}} fusion(\n"});
  // multiply(add(multiply, gte(F)), gte(F)): one fusion F != fus for both.
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematTupleShapeDoubleUse",
               {"memory_limit_bytes=11264"},
               "CHECK-LABEL: ENTRY\n"
               "CHECK-DAG: ROOT {{%[^ ]+}} = f32[1024]{0} multiply([[A:%[^ ,]+]], [[G0:%[^ )]+]])\n"
               "CHECK-DAG: [[A]] = f32[1024]{0} add([[M:%[^ ,]+]], [[G1:%[^ )]+]])\n"
               "CHECK-DAG: [[M]] = f32[1024]{0} multiply(\n"
               "CHECK-DAG: [[G1]] = f32[1024]{0} get-tuple-element([[F:%[^ )]*[.]remat[^ )]*]])\n"
               "CHECK-DAG: [[G0]] = f32[1024]{0} get-tuple-element([[F]])\n"
               "CHECK-DAG: [[F]] = (f32[1024]{0}, f32[1024]{0}) fusion(\n"});
  // add(fusion != tuple, != fus; add).
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematThroughTuple",
               {"memory_limit_bytes=11264"},
               "CHECK-LABEL: ENTRY\n"
               "CHECK-DAG: ROOT {{%[^ ]+}} = f32[1024]{0} add([[F:%[^ ,]*[.]remat[^ ,]*]], [[A:%[^ )]+]])\n"
               "CHECK-DAG: [[F]] = {{.*}} fusion(\n"
               "CHECK-DAG: [[A]] = f32[1024]{0} add(\n"});
  // The root stays; ag.remat takes the next channel id.
  r.push_back({"RecomputeAndCompressHloRematerializationTest.AllGatherChannelId",
               {"memory_limit_bytes=14336"},
               "CHECK-DAG: %ag = f32[1024,1]{1,0} all-gather({{.*}}channel_id=1\n"
               "CHECK-DAG: %ag.remat = f32[1024,1]{1,0} all-gather({{.*}}channel_id=2\n"
               "CHECK-DAG: ROOT %slice.1 = f32[1]{0} slice(\n"});
  // tuple(reduce, fusion(fusion != fus)).
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematTupleArgFusion",
               {"memory_limit_bytes=11264"},
               "CHECK-LABEL: ENTRY\n"
               "CHECK-DAG: ROOT {{%[^ ]+}} = {{.*}} tuple([[R:%[^ ,]+]], [[F1:%[^ )]+]])\n"
               "CHECK-DAG: [[R]] = f32[] reduce(\n"
               "CHECK-DAG: [[F1]] = f32[1024]{0} fusion([[F0:%[^ )]*[.]remat[^ )]*]])\n"
               "CHECK-DAG: [[F0]] = (f32[1024]{0}, f32[1024]{0}) fusion(\n"});
  // As RematTupleShapeDoubleUse; the clone's fused custom-call keeps its
  // (scheduled) called computation.
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematFusionUpdateSchedule",
               {"memory_limit_bytes=11264"},
               "CHECK-LABEL: ENTRY\n"
               "CHECK-DAG: ROOT {{%[^ ]+}} = f32[1024]{0} multiply([[A:%[^ ,]+]], [[G0:%[^ )]+]])\n"
               "CHECK-DAG: [[A]] = f32[1024]{0} add([[M:%[^ ,]+]], [[G1:%[^ )]+]])\n"
               "CHECK-DAG: [[M]] = f32[1024]{0} multiply(\n"
               "CHECK-DAG: [[G1]] = f32[1024]{0} get-tuple-element([[F:%[^ )]*[.]remat[^ )]*]])\n"
               "CHECK-DAG: [[G0]] = f32[1024]{0} get-tuple-element([[F]])\n"
               "CHECK-DAG: [[F]] = (f32[1024]{0}, f32[1024]{0}) fusion(\n"});
  // Only changed is checked.
  r.push_back({"RecomputeAndCompressHloRematerializationTest.PeakFirstRematerializesSmallValuesAndSubComputations",
               {"memory_limit_bytes=0", "remat_algorithm=peak_priority"}});
  // The callback pairs each original with its remats: these groups.
  r.push_back({"RecomputeAndCompressHloRematerializationTest.RematCallbackIsCalled",
               {"memory_limit_bytes=14336"},
               "CHECK-DAG: %constant_x.remat{{[.0-9]*}} = \n"
               "CHECK-DAG: %constant_source_8_user.remat{{[.0-9]*}} = \n"
               "CHECK-DAG: %res_param_add.remat{{[.0-9]*}} = \n"
               "CHECK-DAG: %res_param_add.remat{{[.0-9]*}} = \n"
               "CHECK-DAG: %p1_bcast.remat{{[.0-9]*}} = \n"
               "CHECK-DAG: %p0_bcast.remat{{[.0-9]*}} = \n"});
  // f4653.remat after f4651.remat, bitcast.remat.2 right after it reading it
  // (the presence of tan_f4653, op_1.remat, op_6.remat is not transcribed).
  r.push_back({"RecomputeAndCompressHloRematerializationTest.PeakPriorityRematIgnoresDeadInstructionsInPlaceBefore",
               {"memory_limit_bytes=25600", "remat_algorithm=peak_priority", "block_size_limit=32"},
               "CHECK: %f4651.remat = \n"
               "CHECK: %f4653.remat = \n"
               "CHECK-NEXT: %bitcast.remat.2 = {{.*}} bitcast(%f4653.remat)\n"});

  // CompressingRematerializationTest: compress only, ShapeSizePadMinorTo64,
  // ChooseCompactLayoutForShape.
  r.push_back({"CompressingRematerializationTest.",
               {"recompute=false", "compress=true", "host_offload=false", "block_size_limit=1",
                "block_rematerialization_factor=1", "min_remat_size=0", "remat_algorithm=always_remat",
                "shape_size_function=pad_minor_to_64", "compact_shape_function=swap_two_minor_dims"}});
  r.push_back({"CompressingRematerializationTest.OnlyRematBigBuffer",
               {"memory_limit_bytes=30720", "min_remat_size=10240"},
               "CHECK-DAG: %reduce.1 = f32[] reduce([[U:%[^ ,]+]], %constant)\n"
               "CHECK-DAG: [[U]] = {{.*}} copy([[C:%[^ )]+]])\n"
               "CHECK-DAG: [[C]] = {{.*}} copy(%broadcast.0)\n"
               "CHECK-DAG: %reduce.2 = f32[] reduce(%broadcast.1, %constant)\n"});
  r.push_back({"CompressingRematerializationTest.SingleRemat",
               {"memory_limit_bytes=30720"},
               "CHECK-DAG: %reduce.1 = f32[] reduce([[U:%[^ ,]+]], %constant)\n"
               "CHECK-DAG: [[U]] = {{.*}} copy([[C:%[^ )]+]])\n"
               "CHECK-DAG: [[C]] = {{.*}} copy(%broadcast.0)\n"});

  // OffloadingRematerializationTest: host offload only (to memory space 5;
  // the test's bandwidths and flop rates are not options: offload is not
  // modelled). res_4 goes to the host and back before res_9; res_3, read
  // through a bitcast, stays.
  r.push_back({"OffloadingRematerializationTest.",
               {"recompute=false", "compress=false", "host_offload=true", "block_size_limit=1",
                "block_rematerialization_factor=1", "min_remat_size=0", "shape_size_function=byte_size_of"}});
  r.push_back({"OffloadingRematerializationTest.SkipOffloadWhenBitcastIsInvolved",
               {"memory_limit_bytes=10240"},
               "CHECK-DAG: %res_9 = f32[1024]{0} add(%res_8, [[D:%[^ )]+]])\n"
               "CHECK-DAG: [[D]] = {{.*}} copy-done(\n"
               "CHECK-DAG: ROOT %res_11 = f32[1024]{0} tanh(%res_10)\n"
               "CHECK-DAG: %res_10 = f32[1024]{0} add(%res_9, %bitcast)\n"});
}

std::vector<CaseSpec> LayoutAndFusionCases() {
  std::vector<CaseSpec> r;
  AddConvertMoverCases(r);
  AddTransposeFoldingCases(r);
  AddLayoutAssignmentCases(r);
  AddGemmRewriterCases(r);
  AddGemmBroadcastFoldingCases(r);
  AddRematerializationCases(r);
  return r;
}

}  // namespace passlab::conformance
