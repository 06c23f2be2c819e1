// Pass options and C++-matcher expectations of xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc.
// The fixture runs AlgebraicSimplifier with run_to_fixed_point=false; tests
// that wrap it in HloPassFix<AlgebraicSimplifier> run it to a fixed point,
// which is run_to_fixed_point=true here. Where a matcher takes either
// operand order (MaximumAnyOrder, ...), the directives give the order XLA
// produces. Parameters are found by number after "ENTRY", so that reducer
// computations' parameters do not match.
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

std::vector<CaseSpec> AlgebraicSimplifierCases() {
  return {
      {"AlgebraicSimplifierTest.", {"run_to_fixed_point=false"}},
      // xla/backends/gpu/transforms/algebraic_simplifier_test.cc: every test
      // runs GpuAlgebraicSimplifier(options, Ampere()).
      {"GpuAlgebraicSimplifierTest.", {"gpu_compute_capability=8.0"}},
      // SimplifyNoOpBitcastConvertTest sets is_layout_sensitive and
      // rewrite_no_op_bitcast_convert_to_bitcast in SetUp.
      {"SimplifyNoOpBitcastConvertTest.",
       {"run_to_fixed_point=false", "is_layout_sensitive=true", "rewrite_no_op_bitcast_convert_to_bitcast=true"}},
      {"DotOfConcatSimplificationTest.", {"run_to_fixed_point=false"}},
      {"AlgebraicSimplifierTest.BitcastTransposeChainReshapeIsBitcast", {"is_layout_sensitive=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: ROOT {{.*}} bitcast([[P]])\n"},
      {"AlgebraicSimplifierTest.ReduceOfMergeNoncontractingDims",
       {"unconditionally_simplify_reduce_of_transpose_or_reshape=true"},
       "CHECK: [[R:%[^ ]+]] = f32[3,5]{{[^ ]*}} reduce({{.*}}), dimensions={2}\n"
       "CHECK: ROOT {{.*}} = f32[15]{{[^ ]*}} reshape([[R]])\n"},
      {"AlgebraicSimplifierTest.ReduceOfSplitNoncontractingDims",
       {"unconditionally_simplify_reduce_of_transpose_or_reshape=true"},
       "CHECK: [[R:%[^ ]+]] = f32[35]{{[^ ]*}} reduce({{.*}}), dimensions={0}\n"
       "CHECK: ROOT {{.*}} = f32[5,7]{{[^ ]*}} reshape([[R]])\n"},
      {"AlgebraicSimplifierTest.ReduceArgMaxBroadcastOfScalarConstant", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[C:%[^ ]+]] = bf16[] constant(42)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = bf16[10]{{[^ ]*}} broadcast([[C]])\n"
       "CHECK-DAG: [[Z:%[^ ]+]] = s32[] constant(0)\n"
       "CHECK-DAG: [[I:%[^ ]+]] = s32[10]{{[^ ]*}} broadcast([[Z]])\n"
       "CHECK: ROOT {{.*}} tuple([[B]], [[I]])\n"},
      {"AlgebraicSimplifierTest.DoNotSimplifyReduceOfConcatBecauseShapesDiffer",
       {"enable_unconditional_reduce_of_concat_replacement=false"}},
      {"AlgebraicSimplifierTest.ReduceWindowCumSumBroadcastOfConstantWithConvertAndReshape", {},
       "CHECK: ROOT {{.*}} multiply(\n"},
      {"AlgebraicSimplifierTest.ReduceWindowCumSumBroadcastOfConstantWithSlice", {}, "CHECK: ROOT {{.*}} multiply(\n"},
      {"AlgebraicSimplifierTest.ReduceWindowCumSumBroadcastOfConstantWithComplexScalarChain", {},
       "CHECK: ROOT {{.*}} multiply(\n"},
      {"AlgebraicSimplifierTest.ReduceWindowCumSumBroadcastOfConstant_Size1DimPadding", {},
       "CHECK: ROOT {{.*}} reduce-window(\n"},
      {"AlgebraicSimplifierTest.ZeroSizedVariadicReduceWindow", {"run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[B0:%[^ ]+]] = {{.*}} broadcast([[C]])\n"
       "CHECK-DAG: [[B1:%[^ ]+]] = {{.*}} broadcast([[C]])\n"
       "CHECK: ROOT {{.*}} tuple({{%[^ ]+}}, {{%[^ ]+}})\n"},
      {"AlgebraicSimplifierTest.MinimumWithInfinityLhs", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.MinimumWithInfinityRhs", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.MaximumWithNegativeInfinityRhs", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.MinimumOfMinimum2", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[X:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[Y:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: ROOT {{.*}} minimum([[X]], [[Y]])\n"},
      {"AlgebraicSimplifierTest.MaximumOfMaximum2", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[X:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[Y:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: ROOT {{.*}} maximum([[X]], [[Y]])\n"},
      {"AlgebraicSimplifierTest.MaximumOfMaximum3", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[X:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[Y:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: ROOT {{.*}} maximum([[Y]], [[X]])\n"},
      {"AlgebraicSimplifierTest.TrivialReduceWindow_Max", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(-inf)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} broadcast([[C]])\n"
       "CHECK: ROOT {{.*}} maximum([[P]], [[B]])\n"},
      {"AlgebraicSimplifierTest.TrivialReduceWindowWithPad", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(-inf)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} broadcast([[C]])\n"
       "CHECK-DAG: [[M:%[^ ]+]] = {{.*}} maximum([[P]], [[B]])\n"
       "CHECK: ROOT {{.*}} pad([[M]], [[C]])\n"},
      {"AlgebraicSimplifierTest.SliceReverse", {},
       "CHECK: [[PAD:%[^ ]+]] = {{.*}} pad(\n"
       "CHECK: [[S:%[^ ]+]] = f32[1,7,32]{{[^ ]*}} slice([[PAD]]), slice={[5:6], [0:7], [0:32]}\n"
       "CHECK: [[R:%[^ ]+]] = {{.*}} reverse([[S]])\n"
       "CHECK: ROOT {{.*}} tuple([[R]])\n"},
      {"AlgebraicSimplifierTest.SliceReverseNonUnitEvenOddStrides", {},
       "CHECK: [[PAD:%[^ ]+]] = {{.*}} pad(\n"
       "CHECK: [[S:%[^ ]+]] = f32[1,2,7]{{[^ ]*}} slice([[PAD]]), slice={[5:6:2], [2:7:4], [1:32:5]}\n"
       "CHECK: [[R:%[^ ]+]] = {{.*}} reverse([[S]])\n"
       "CHECK: ROOT {{.*}} tuple([[R]])\n"},
      {"AlgebraicSimplifierTest.SliceOfBroadcastPreserveLayout", {"run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[S:%[^ ]+]] = {{.*}} slice([[P]])\n"
       "CHECK: ROOT {{.*}} = f32[5,5,5]{2,0,1:T(256)} broadcast([[S]])\n"},
      {"AlgebraicSimplifierTest.DynamicSliceOfBroadcast", {"run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[P3:%[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK: [[D:%[^ ]+]] = {{.*}} dynamic-slice([[P0]], [[P1]], [[P3]])\n"
       "CHECK: ROOT {{.*}} broadcast([[D]])\n"},
      {"AlgebraicSimplifierTest.FoldingConvertedPadIntoReduceWindowDisableRewriter", {},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[C:%[^ ]+]] = {{.*}} convert([[P]])\n"
       "CHECK: ROOT {{.*}} reduce-window([[C]], {{%[^ ]+}})\n"},
      {"AlgebraicSimplifierTest.DotRightDotContractBatchReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.5"}},
      {"AlgebraicSimplifierTest.DotAssociativeReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.5"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: [[I:%[^ ]+]] = {{.*}} dot([[B]], [[C]])\n"
       "CHECK: ROOT {{.*}} dot([[A]], [[I]])\n"},
      {"AlgebraicSimplifierTest.DotRightDotSharedBatchReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.5"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: [[I:%[^ ]+]] = {{.*}} dot([[A]], [[B]])\n"
       "CHECK: ROOT {{.*}} dot([[I]], [[C]])\n"},
      {"AlgebraicSimplifierTest.DotReverseRightReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"},
       "CHECK: ROOT {{.*}} dot({{%[^ ]+}}, {{%[^ ]+}})\n"
       "CHECK-NOT: dot(\n"},
      {"AlgebraicSimplifierTest.DotPadRightReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[S:%[^ ]+]] = {{.*}} slice([[A]])\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[PAD:%[^ ]+]] = {{.*}} pad([[B]], {{%[^ ]+}})\n"
       "CHECK: ROOT {{.*}} dot([[S]], [[PAD]])\n"},
      {"AlgebraicSimplifierTest.DotBroadcastLeftReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[BA:%[^ ]+]] = {{.*}} broadcast([[A]])\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} reduce([[B]], {{%[^ ]+}})\n"
       "CHECK: ROOT {{.*}} dot([[BA]], [[R]])\n"},
      {"AlgebraicSimplifierTest.ReduceDotReorder", {"raise_slice_and_reduce_through_dot=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[RA:%[^ ]+]] = {{.*}} reduce([[A]], {{%[^ ]+}})\n"
       "CHECK-DAG: [[RB:%[^ ]+]] = {{.*}} reduce([[B]], {{%[^ ]+}})\n"
       "CHECK: ROOT {{.*}} dot([[RA]], [[RB]])\n"},
      {"AlgebraicSimplifierTest.SliceDotReorderWithStrides", {"raise_slice_and_reduce_through_dot=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[B:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[SA:%[^ ]+]] = {{.*}} slice([[A]])\n"
       "CHECK-DAG: [[SB:%[^ ]+]] = {{.*}} slice([[B]])\n"
       "CHECK: ROOT {{.*}} dot([[SA]], [[SB]])\n"},
      {"AlgebraicSimplifierTest.SliceOfPadLow", {},
       "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: ROOT {{.*}} broadcast([[C]])\n"},
      {"AlgebraicSimplifierTest.SliceOfPadMidScalarConstant", {},
       "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: ROOT {{.*}} broadcast([[C]])\n"},
      {"AlgebraicSimplifierTest.SliceOfPad", {},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: ROOT {{.*}} slice([[P]]), slice={[1:3], [1:4]}\n"},
      {"AlgebraicSimplifierTest.SliceOfReduceWindowTwoReduceDims", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: [[R:%[^ ]+]] = s32[3]{{[^ ]*}} reduce([[P]], [[C]]), dimensions={1,2}\n"
       "CHECK: ROOT {{.*}} = s32[3,1,1]{{[^ ]*}} reshape([[R]])\n"},
      {"AlgebraicSimplifierTest.NegateNegate", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.NotNot", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.BatchDotTransposeOperands", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[L:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: [[D:%[^ ]+]] = {{.*}} dot([[R]], [[L]]){{.*}}operand_precision={high,default}\n"
       "CHECK: ROOT {{.*}} transpose([[D]])\n"},
      {"AlgebraicSimplifierTest.BatchDotTransposeBatchDims", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[L:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: [[D:%[^ ]+]] = {{.*}} dot([[L]], [[R]]){{.*}}operand_precision={default,high}\n"
       "CHECK: ROOT {{.*}} transpose([[D]])\n"},
      {"AlgebraicSimplifierTest.AddDynamicUpdateSliceToAddSliceOnLhs", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[P2:%[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = s32[] constant(0)\n"
       "CHECK-DAG: [[DS:%[^ ]+]] = {{.*}} dynamic-slice([[P0]], [[P2]], [[C]], [[C]])\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} add([[DS]], [[P1]])\n"
       "CHECK: ROOT {{.*}} dynamic-update-slice([[P0]], [[A]], [[P2]], [[C]], [[C]])\n"},
      {"AlgebraicSimplifierTest.ScalarMultiplyReduction", {"enable_scalar_multiply_reduction=true"},
       "CHECK: [[C:%[^ ]+]] = f32[] constant(0.5545{{[0-9]*}})\n"
       "CHECK: [[B:%[^ ]+]] = {{.*}} broadcast([[C]])\n"
       "CHECK: ROOT {{.*}} multiply({{%[^ ]+}}, [[B]])\n"},
      {"AlgebraicSimplifierTest.ScalarMultiplyReductionMultiUser", {"enable_scalar_multiply_reduction=true"}},
      {"DotOfConcatSimplificationTest.DotOfConcatRank3LhsRank1Rhs", {"enable_dot_strength_reduction=false"}},
      {"AlgebraicSimplifierTest.GatherOfPad", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(0)\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[P0]], [[P1]]){{.*}}slice_sizes={1,32}\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]])\n"},
      {"AlgebraicSimplifierTest.GatherOfPadWithBatchDims", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[I:%[^ ]+]] = {{.*}} iota()\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = s32[] constant(0)\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[I]], [[P0]]){{.*}}operand_batching_dims={0}{{.*}}start_indices_batching_dims={0}{{.*}}slice_sizes={1,1}\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]])\n"},
      {"AlgebraicSimplifierTest.GatherOfPadWithPaddedBatchDims", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(0)\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[P0]], [[P1]]){{.*}}operand_batching_dims={0,3,4}{{.*}}start_indices_batching_dims={1,3,0}{{.*}}slice_sizes={1,1,38,1,1}\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]]), padding=2_1x0_2x2_0x0_0x0_0\n"},
      {"AlgebraicSimplifierTest.GatherOfReshapeOfPad", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(0)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} reshape([[P0]])\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[R]], [[P1]])\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]])\n"},
      {"AlgebraicSimplifierTest.GatherOfReshapeOfPad2", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[I:%[^ ]+]] = {{.*}} iota()\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = s32[] constant(0)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} reshape([[I]])\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[R]], [[P0]])\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]])\n"},
      {"AlgebraicSimplifierTest.GatherOfReshapeOfPad4", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = bf16[] constant(0)\n"
       "CHECK-DAG: [[R:%[^ ]+]] = {{.*}} reshape(\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} gather([[R]], [[P1]])\n"
       "CHECK: ROOT {{.*}} pad([[G]], [[C]]), padding=0_2048x0_0x0_0\n"},
      {"AlgebraicSimplifierTest.MultipleDotStrengthReductions", {},
       "CHECK-COUNT-3: {{^[^ ].*}} {\n"
       "CHECK-NOT: {{^[^ ].*}} {\n"},
      {"AlgebraicSimplifierTest.ReplaceReduceSumOfConstantBroadcast", {"run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: reduce(\n"},
      {"AlgebraicSimplifierTest.ReplaceReduceMaxWithReduceArgMax", {},
       "CHECK: ENTRY\n"
       "CHECK: [[R:%[^ ]+]] = ({{.*}}) reduce(\n"
       "CHECK-NOT: reduce(\n"
       "CHECK-DAG: [[G0:%[^ ]+]] = {{.*}} get-tuple-element([[R]]), index=0\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = {{.*}} get-tuple-element([[R]]), index=1\n"
       "CHECK: ROOT {{.*}} tuple([[G0]], [[G1]])\n"},
      {"AlgebraicSimplifierTest.ReplaceReduceMinWithReduceArgMin", {},
       "CHECK: ENTRY\n"
       "CHECK: [[R:%[^ ]+]] = ({{.*}}) reduce(\n"
       "CHECK-NOT: reduce(\n"
       "CHECK-DAG: [[G0:%[^ ]+]] = {{.*}} get-tuple-element([[R]]), index=0\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = {{.*}} get-tuple-element([[R]]), index=1\n"
       "CHECK: ROOT {{.*}} tuple([[G0]], [[G1]])\n"},
      {"AlgebraicSimplifierTest.DynamicUpdateSliceOfBroadcastToPadOob", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(0)\n"
       "CHECK: ROOT {{.*}} pad([[P]], [[C]]), padding=1_0\n"},
      {"AlgebraicSimplifierTest.DynamicSliceOfIota", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[L:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[H:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: [[CL:%[^ ]+]] = {{.*}} clamp({{%[^ ]+}}, [[P]], {{%[^ ]+}})\n"
       "CHECK: [[CV:%[^ ]+]] = {{.*}} convert([[CL]])\n"
       "CHECK: ROOT {{.*}} reshape([[CV]])\n"},
      {"AlgebraicSimplifierTest.DynamicSliceTrivialIndices", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[P1:%[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: ROOT {{.*}} dynamic-slice([[P0]], [[C]], [[P1]])\n"},
      // ParseAndReturnVerifiedModule(hlo_string, /*replica_count=*/1, /*num_partitions=*/6).
      {.test = "AlgebraicSimplifierTest.ClampOfPartitionId",
       .expect = "CHECK: ROOT {{.*}} partition-id()\n",
       .num_partitions = 6},
      {"AlgebraicSimplifierTest.DoesNotFoldSignedIntegerSquareAbsSelect", {},
       "CHECK: [[M:%[^ ]+]] = {{.*}} multiply(\n"
       "CHECK: [[CMP:%[^ ]+]] = {{.*}} compare([[M]],\n"
       "CHECK: [[A:%[^ ]+]] = {{.*}} abs([[M]])\n"
       "CHECK: ROOT {{.*}} select([[CMP]], [[A]], [[M]])\n"},
      {"AlgebraicSimplifierTest.SimplifyTautologicalBitcastConvert", {}, "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.SimplifyBitcastConvertChain", {},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: ROOT {{.*}} bitcast-convert([[P]])\n"},
      {"AlgebraicSimplifierTest.DynamicSliceShapeLayout", {},
       "CHECK: [[S:%[^ ]+]] = s32[1]{0:T(128)} {{.*}}\n"
       "CHECK: ROOT {{.*}} tuple([[S]])\n"},
      {"AlgebraicSimplifierTest.CopyBitcastCopyDimSize1", {"is_layout_sensitive=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[C:%[^ ]+]] = {{.*}} copy([[P]])\n"
       "CHECK: [[B:%[^ ]+]] = {{.*}} bitcast([[C]])\n"
       "CHECK: ROOT {{.*}} bitcast([[B]])\n"},
      {"AlgebraicSimplifierTest.CopyReshapeCopy3", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.CopyReshapeCopy4", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastElementwiseFusionBitcast", {"is_layout_sensitive=false"}},
      {"AlgebraicSimplifierTest.LayoutConstraintToNoop", {"is_layout_sensitive=true"},
       "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.LayoutConstraintToCopy", {"is_layout_sensitive=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: ROOT {{.*}} copy([[P]])\n"},
      {"AlgebraicSimplifierTest.PreserveSdySharding", {},
       "CHECK: ENTRY\n"
       "CHECK: parameter(0), {{.*}}xla.sdy.sharding\n"},
      {"AlgebraicSimplifierTest.SwapDotOperands", {"enable_move_dot_param_to_rhs=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[C:%[^ ]+]] = {{.*}} convert([[P]])\n"
       "CHECK: [[D:%[^ ]+]] = {{.*}} dot({{%[^ ]+}}, [[C]])\n"
       "CHECK: ROOT {{.*}} transpose([[D]])\n"},
      {"AlgebraicSimplifierTest.TrivialReduce", {"is_layout_sensitive=false", "run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: reduce(\n"},
      {"AlgebraicSimplifierTest.ReduceOfNonScalarBroadcast", {"run_to_fixed_point=true"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: reduce(\n"
       "CHECK: [[M:%[^ ]+]] = {{.*}} multiply(\n"
       "CHECK: ROOT {{.*}} broadcast([[M]])\n"},
      {"AlgebraicSimplifierTest.RemoveConvertConstant", {"use_convert_constant_folding=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = f32[] constant(\n"
       "CHECK: ROOT {{.*}} reduce([[P]], [[C]])\n"},
      {"AlgebraicSimplifierTest.ReduceBroadcastScalarToBroadcastMultiply", {"run_to_fixed_point=true"},
       "CHECK: [[M:%[^ ]+]] = {{.*}} multiply(\n"
       "CHECK: ROOT {{.*}} broadcast([[M]])\n"},
      {"AlgebraicSimplifierTest.DynamicSlicePreservedWithTrivialConstantIndices",
       {"disable_dynamic_slice_to_slice_conversion=true"}},
      {"AlgebraicSimplifierTest.BitcastBroadcastDifferentLayout", {"is_layout_sensitive=true"}},
      // ParseAndReturnUnverifiedModule: the input is not verified.
      {.test = "AlgebraicSimplifierTest.RespectHostOffloadingcopies", .options = {"is_layout_sensitive=true"},
       .unverified = true},
      {"AlgebraicSimplifierTest.ReducePrecisionWithSamePrecisionAsOperandIsRemovedIfRemoveNoOpIsSet",
       {"enable_remove_no_op_reduce_precision=true"},
       "CHECK: ENTRY\n"
       "CHECK: ROOT {{.*}} parameter(0)\n"},
      {"AlgebraicSimplifierTest.ReducePrecisionWithDifferentPrecisionFromOperandIsNotModifiedByDefault",
       {"enable_remove_no_op_reduce_precision=true"}},
      {"AlgebraicSimplifierTest.CopyReshapeToReshapeCopyWithHostCopies",
       {"enable_floats_are_real=true", "is_layout_sensitive=true"}},
      // The test builds its options from scratch (run_to_fixed_point=true).
      {"AlgebraicSimplifierTest.ImagWithDynamicNonComplexInput", {"run_to_fixed_point=true"},
       "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: ROOT {{.*}} = f32[<=8]{{[^ ]*}} broadcast([[C]])\n"},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshape", {"enable_hoist_transpose_of_reshape=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[R:%[^ ]+]] = f32[10,20,1200]{{[^ ]*}} reshape([[P]])\n"
       "CHECK: ROOT {{.*}} transpose([[R]]), dimensions={0,2,1}\n"},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeReorderChunks", {"enable_hoist_transpose_of_reshape=true"},
       "CHECK: ENTRY\n"
       "CHECK: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK: [[R:%[^ ]+]] = f32[200,1200]{{[^ ]*}} reshape([[P]])\n"
       "CHECK: ROOT {{.*}} transpose([[R]]), dimensions={1,0}\n"},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeDisabled", {"enable_hoist_transpose_of_reshape=false"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeLayoutSensitive",
       {"is_layout_sensitive=true", "enable_hoist_transpose_of_reshape=true"}},
      {"AlgebraicSimplifierTest.CommuteReduceAndBroadcast", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: [[R:%[^ ]+]] = {{.*}} reduce([[P]], [[C]])\n"
       "CHECK: ROOT {{.*}} broadcast([[R]])\n"},
      {"AlgebraicSimplifierTest.CommuteReduceAndBroadcastUnsorted", {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: [[R:%[^ ]+]] = {{.*}} reduce([[P]], [[C]])\n"
       "CHECK: ROOT {{.*}} broadcast([[R]])\n"},
      // Options of the file's other HLO-text tests (options only; their
      // C++ matchers are not transcribed yet).
      {"AlgebraicSimplifierTest.SliceDotReorder", {"raise_slice_and_reduce_through_dot=true"}},
      {"AlgebraicSimplifierTest.DivideByBroadcast", {"executing_on_cpu=true"}},
      {"AlgebraicSimplifierTest.AbsEliminationBatchnormTraining",
       {"cudnn_batchnorm_forward_training_metadata=__cudnn$batchNormalizationForwardTraining"}},
      {"AlgebraicSimplifierTest.AbsEliminationBatchnormTraining_NegativeTestCase",
       {"cudnn_batchnorm_forward_training_metadata=__cudnn$batchNormalizationForwardInference"}},
      {"AlgebraicSimplifierTest.ReduceOfBatchDotToContractingDimensionDisabled", {"supports_non_canonical_dots=false"}},
      {"AlgebraicSimplifierTest.DisabledTransposeReshapeToConcatSlice",
       {"rewrite_reshape_transpose_as_slice_concatenate=false"}},
      {"AlgebraicSimplifierTest.DotLeftDotSharedBatchReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.5"}},
      {"AlgebraicSimplifierTest.DotReverseLeftReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"}},
      {"AlgebraicSimplifierTest.DotPadLeftReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"}},
      {"AlgebraicSimplifierTest.DotBroadcastRightReorder",
       {"use_associative_reordering=true", "associative_reordering_threshold=1.1"}},
      {"AlgebraicSimplifierTest.AddSubSameCommutative", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.SubSubSame", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.SubAddSame", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.AddSubSame2", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.EliminateBitcastTransposeChain", {"is_layout_sensitive=false"}},
      {"AlgebraicSimplifierTest.EliminateBitcastTransposeChain_DifferentTypes", {"is_layout_sensitive=false"}},
      {"AlgebraicSimplifierTest.LayoutSensitive_EqualShapes_StartTranspose", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.ReduceOfReshapeOfContractingAndNoncontractingDims", {"unconditionally_simplify_reduce_of_transpose_or_reshape=true"}},
      {"AlgebraicSimplifierTest.ReduceOfNegate", {"unconditionally_simplify_reduce_of_transpose_or_reshape=true"}},
      {"AlgebraicSimplifierTest.ReplaceSubtractOfEqualOperandsWithZero", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.ReplaceSubtractOfEqualOperandsWithBroadcastZero", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.ExpOfZero", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.ArrayOvershootTest", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.SliceOfBroadcast", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.DynamicSliceOfBroadcastPreserveLayout", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.TransposeIsReshape", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.DynamicSliceOfTrivialReshape", {"is_layout_sensitive=false"}},
      {"DotOfConcatSimplificationTest.ConcatIntoScalarDot", {"enable_dot_strength_reduction=false"}},
      {"AlgebraicSimplifierTest.DynamicUpdateSliceOfBroadcastToPadHostOffloadMultiLevel", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.CopyReshape", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.DotContractingReorder_NegLayout", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.SlicePadLayout", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.SqrtOfSelfMultiply", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.CopyBitcastCopy", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.CopyBitcastCopy2", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastCopyChain", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastCopyChainSmall", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastUndoesBitcast", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastUnaryBitcast", {"is_layout_sensitive=false"}},
      {"AlgebraicSimplifierTest.BitcastUnaryBitcast_TilingChange", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.SquaredComplexSqrtIsFloat", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.SquaredSqrtIsAbsUnderFastMath", {"enable_fast_math=true"}},
      {"AlgebraicSimplifierTest.TransposeBitcastOfBroadcast", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.TransposeOfBroadcastWithLayoutCheckSkipped", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.KeepLayoutConstraint", {"is_layout_sensitive=false"}},
      {"AlgebraicSimplifierTest.ReduceOfConstantBroadcastS32", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.ReduceOfConstantBroadcastBF16", {"run_to_fixed_point=true"}},
      {"AlgebraicSimplifierTest.KeepInt4ConvertConstant", {"use_convert_constant_folding=true"}},
      {"AlgebraicSimplifierTest.TestWithControlDependencies", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.BitcastTransposeChain_InvalidBitcastLayoutChange", {"is_layout_sensitive=true"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeNonContiguous", {"enable_hoist_transpose_of_reshape=true"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeSplitDimension", {"enable_hoist_transpose_of_reshape=true"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeInsertOne", {"enable_hoist_transpose_of_reshape=true"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeLeftoverDims", {"enable_hoist_transpose_of_reshape=true"}},
      {"AlgebraicSimplifierTest.HoistTransposeOfReshapeLeftoverDimsNonIdentity", {"enable_hoist_transpose_of_reshape=true"}},
  };
}

}  // namespace passlab::conformance
