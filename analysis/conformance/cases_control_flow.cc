// Pass options and C++-matcher expectations of the while-loop, conditional, call-graph, CSE, DCE and dot-merger tests.
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

std::vector<CaseSpec> ControlFlowCases() {
  return {
      // xla/hlo/transforms/simplifiers/hlo_dce_test.cc: the test sets
      // remove_dead_parameters_from_entry_computation and checks two
      // f32[2,3] parameters left, in the computation and its layout.
      {"HloDceTest.RemoveDeadEntryParametersAndLayout",
       {"remove_dead_parameters_from_entry_computation=true"},
       "CHECK: entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->f32[2,3]{1,0}}\n"
       "CHECK-DAG: = f32[2,3]{1,0} parameter(0)\n"
       "CHECK-DAG: = f32[2,3]{1,0} parameter(1)\n"
       "CHECK-NOT: parameter(2)\n"},
      // hlo_dce_test.cc: HloDCE(remove_cross_partition_collective_ops=false,
      // use_call_analysis=true); the start keeps one operand, parameter(0),
      // and the wrapped and called computations one parameter each.
      {"HloDceTest.UnusedAsyncParameter", {"use_call_analysis=true"},
       "CHECK: %[[INNER:[^ ]+]] ({{[^,]*}}) -> (s32[]) {\n"
       "CHECK-NOT: parameter(1)\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: [[P0:%[^ ]+]] = s32[] parameter(0)\n"
       "CHECK-DAG: parameter(1)\n"
       "CHECK: = ((s32[]), (s32[]), s32[]) call-start([[P0]]), to_apply=%[[INNER]]\n"
       "CHECK: ROOT {{.*}} = (s32[]) call-done(\n"},
      // xla/hlo/transforms/simplifiers/dot_merger_test.cc: every test builds
      // DotMerger(max_size_to_merge=INT64_MAX) unless it says otherwise.
      // Where a matcher takes either operand order, the directives give the
      // order XLA produces (by decreasing power of two dividing n, then n).
      {"DotMergerTest.", {"max_size_to_merge=9223372036854775807"}},
      {"DotMergerTest.MergeRHS", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%rhs1, %rhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%lhs, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[200,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[200,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], %lhs)\n"},
      {"DotMergerTest.MergeRHSSortedByPowerOfTwo", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%rhs2, %rhs3, %rhs1, %rhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%lhs, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[200,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[200,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S2:%[^ ]+]] = f32[200,64]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S3:%[^ ]+]] = f32[200,24]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], [[S2]], [[S3]])\n"},
      {"DotMergerTest.MergeRHSWithLayouts", {},
       "CHECK-DAG: [[C:%[^ ]+]] = f32[100,60]{{[^ ]*}} concatenate(%rhs1, %rhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%lhs, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[200,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[200,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeRHSWithIdenticalCustomLayout", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%rhs1, %rhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%lhs, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[200,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[200,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeLHSWithRHS", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %{{[^ ]+}})\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = bf16[8,4]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[T0:%[^ ]+]] = {{.*}} transpose([[S0]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = bf16[2,4]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[T0]], [[S1]])\n"},
      {"DotMergerTest.MergeDifferentDotLayout", {},
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[300,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeThree", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs2, %lhs1, %lhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[300,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S2:%[^ ]+]] = f32[500,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], [[S2]])\n"},
      {"DotMergerTest.NoMergeThreeDueToCycle", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs1, %lhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[300,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[D2:%[^ ]+]] = f32[500,50]{{[^ ]*}} dot(%{{[^ ]+}}, %rhs)\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], [[D2]])\n"},
      {"DotMergerTest.MergeWithBatchDims", {},
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[2,4,100,50]{{[^ ]*}} slice(\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[2,4,300,50]{{[^ ]*}} slice(\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeLHSWithRHSWithBatchDims", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %common)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]])\n"
       "CHECK-DAG: [[T0:%[^ ]+]] = bf16[16,4,8]{{[^ ]*}} transpose([[S0]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = bf16[16,2,4]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[T0]], [[S1]])\n"},
      {"DotMergerTest.MergeWithUnsortedBatchDims", {},
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[2,4,100,50]{{[^ ]*}} slice(\n"
       "CHECK-DAG: [[T0:%[^ ]+]] = {{.*}} transpose([[S0]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[2,4,300,50]{{[^ ]*}} slice(\n"
       "CHECK-DAG: [[T1:%[^ ]+]] = {{.*}} transpose([[S1]])\n"
       "CHECK: ROOT {{.*}} tuple([[T0]], [[T1]])\n"},
      {"DotMergerTest.MergeWithMultipleNonCandidates", {"max_size_to_merge=140000"},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs1, %lhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[300,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[D2:%[^ ]+]] = {{.*}} dot(%lhs2, %rhs)\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], [[D2]])\n"},
      {"DotMergerTest.MergeWithOneNonCandidate", {"max_size_to_merge=140000"},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs1, %lhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[300,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.NoMergeWithOnlyNonCandidates", {"max_size_to_merge=140000"}},
      {"DotMergerTest.MergeMultipleCandidatesWithOneNonCandidate", {"max_size_to_merge=200000"},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs2, %lhs0, %lhs1)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]]), slice={[300:400], [0:50]}\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = {{.*}} slice([[D]]), slice={[400:500], [0:50]}\n"
       "CHECK-DAG: [[S2:%[^ ]+]] = {{.*}} slice([[D]]), slice={[0:300], [0:50]}\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]], [[S2]])\n"},
      {"DotMergerTest.MergeDifferentLhsContractingDims", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[C]], %{{[^ ]+}})\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]]), slice={[0:10], [0:10]}\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = {{.*}} slice([[D]]), slice={[10:20], [0:10]}\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeWithTypeUpgrade", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%lhs0, %lhs1)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = f32[20,10]{{[^ ]*}} dot([[C]], %rhs)\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]]), slice={[0:10], [0:10]}\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = {{.*}} slice([[D]]), slice={[10:20], [0:10]}\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeMultiRound", {},
       "CHECK-COUNT-2: {{ dot\\(}}\n"
       "CHECK-NOT: {{ dot\\(}}\n"},
      {"DotMergerTest.MergeLHSBatchDimsMissingOnAllDots", {},
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%{{[^ ]+}}, %{{[^ ]+}}), lhs_contracting_dims={{[{][0-9,]*[}]}}, "
       "rhs_contracting_dims\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[2,10,30]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[2,10,40]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeNoContractingDimsPreserveLayout", {},
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[100,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[100,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeMismatchedBatchDimsOrder", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%{{[^ ]+}}, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[3,4,5]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[3,4,6]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], [[S1]])\n"},
      {"DotMergerTest.MergeWithMultipleConsumerChains", {},
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = f32[200,10]{{[^ ]*}} slice([[D]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[200,50]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[S0]], %{{[^ ]+}}, [[S1]])\n"},
      {"DotMergerTest.UserExampleMerge", {},
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot(%{{[^ ]+}}, [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]]), slice={[0:10], [40:70]}\n"
       "CHECK-DAG: [[R0:%[^ ]+]] = f32[1,10,30]{{[^ ]*}} reshape([[S0]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = f32[10,40]{{[^ ]*}} slice([[D]])\n"
       "CHECK: ROOT {{.*}} tuple([[R0]], [[S1]])\n"},
      {"DotMergerTest.MergeWithDegenerateNonContractingDimsInSharedOperand", {},
       "CHECK-DAG: [[L:%[^ ]+]] = {{.*}} reshape(%lhs)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} concatenate(%rhs1, %rhs0)\n"
       "CHECK-DAG: [[D:%[^ ]+]] = {{.*}} dot([[L]], [[C]])\n"
       "CHECK-DAG: [[S0:%[^ ]+]] = {{.*}} slice([[D]]), slice={[50:60]}\n"
       "CHECK-DAG: [[R0:%[^ ]+]] = {{.*}} reshape([[S0]])\n"
       "CHECK-DAG: [[S1:%[^ ]+]] = {{.*}} slice([[D]]), slice={[0:50]}\n"
       "CHECK-DAG: [[R1:%[^ ]+]] = {{.*}} reshape([[S1]])\n"
       "CHECK: ROOT {{.*}} tuple([[R0]], [[R1]])\n"},
      // xla/service/hlo_cse_test.cc: HloCSE(is_layout_sensitive=false)
      // unless a test says otherwise.
      {"HloCseTest.", {"is_layout_sensitive=false"}},
      {"HloCseTest.CombineTwoConstantsDifferentLayouts", {"is_layout_sensitive=true"}},
      {"HloCseTest.IdenticalInstructions", {"is_layout_sensitive=true"}},
      {"HloCseTest.IdenticalInstructionsDifferentLayoutsSensitive", {"is_layout_sensitive=true"}},
      {"HloCseTest.WhileLoopsIdenticalConditionsAndBodiesSameInput", {"is_layout_sensitive=true"},
       // The entry keeps 5 of its 6 instructions: one while goes.
       "CHECK-LABEL: ENTRY\n"
       "CHECK-COUNT-1: {{ while\\(}}\n"
       "CHECK-NOT: {{ while\\(}}\n"},
      {"HloCseTest.WhileLoopsIdenticalConditionsSameInputAndDifferentBodies", {"is_layout_sensitive=true"}},
      {"HloCseTest.WhileLoopsIdenticalBodiesAndInputDifferentConditions", {"is_layout_sensitive=true"}},
      {"HloCseTest.IgnoreControlDependencies", {"ignore_control_dependencies=true"}},
      {"HloCseTest.Domain", {},
       "CHECK: [[A:%[^ ]+]] = f32[] add([[D:%[^ ]+]], [[D]])\n"
       "CHECK: ROOT {{.*}} subtract([[A]], %domain.5)\n"},
      // xla/service/call_inliner_test.cc. XLA reads use_shardy_partitioner
      // from the module config the test sets.
      {"CallInlinerTest.InlineSingleUseCalleesOnly", {"single_call_site=true"}},
      {"CallInlinerTest.InlineCompositeCall", {"single_call_site=true"}},
      {"CallInlinerTest.InlineDiamondCallGraphSingleCallSite", {"single_call_site=true"}},
      {"CallInlinerTest.InlineDoubleDiamondSingleCallSite", {"single_call_site=true"}},
      {"CallInlinerTest.DontInlineCallWithAttributeInlineableFalse", {"use_shardy_partitioner=true"}},
      {"CallInlinerTest.DontInlineCallWithAttributeInlineableXlaLate", {"use_shardy_partitioner=true"}},
      {"CallInlinerTest.InlineCallWithAttributeInlineableXlaEarly", {"use_shardy_partitioner=true"},
       "CHECK-NOT: {{ call\\(}}\n"},
      {"CallInlinerTest.InlineCallWithAttributeInlineableAuto", {"use_shardy_partitioner=true"},
       "CHECK-NOT: {{ call\\(}}\n"},
      {"CallInlinerTest.InlineCallWithOverriddenAttributeInlineableFalse", {"use_shardy_partitioner=true"}},
      {"CallInlinerTest.UseShardyMhloToHloShmapBodyNotInlined", {"use_shardy_partitioner=true"},
       "CHECK: {{ call\\(}}{{.*}}, to_apply=%prefix_shmap_body_suffix.4\n"},
      {"CallInlinerTest.UseShardManualComputationBodyNotInlined", {"use_shardy_partitioner=true"},
       "CHECK: {{ call\\(}}{{.*}}, to_apply=%my_model.___call__.fwd.xla.sdy.manual_computation_body_14.1234\n"},
      {"CallInlinerTest.UseShardManualComputationBodySurroundedNotInlined", {"use_shardy_partitioner=true"},
       "CHECK: {{ call\\(}}{{.*}}, to_apply=%my_model.___call__.fwd.xla.sdy.manual_computation_body_14.1234\n"},
      {"CallInlinerTest.InliningMergesOpMetadataRecursively", {},
       "CHECK-DAG: {{.*}} = {{.*}} convert({{.*}}), metadata={op_name=\"x/while/body\"}\n"
       "CHECK-DAG: {{.*}} = pred[] constant(false), metadata={op_name=\"x/while/cond\"}\n"
       "CHECK: ROOT {{.*}} while({{.*}}), condition={{.*}}, body={{.*}}, metadata={op_name=\"x/while\"}\n"},
      // xla/service/conditional_simplifier_test.cc.
      {"ConditionalSimplifierTest.RespectsUninlineableAttribute", {},
       "CHECK: ROOT {{.*}} call({{.*}}), to_apply=%on_true\n"},
      {"ConditionalSimplifierTest.TrivalOperandsRemoved", {},
       // The conditional passes 2-tuples; the call still passes 4.
       "CHECK: {{.*}} call(%t), to_apply=%on_true\n"
       "CHECK: [[T1:%[^ ]+]] = (f32[{{[0-9,]+}}]{{[^ ]*}}, f32[{{[0-9,]+}}]{{[^ ]*}}) tuple(\n"
       "CHECK: [[T2:%[^ ]+]] = (f32[{{[0-9,]+}}]{{[^ ]*}}, f32[{{[0-9,]+}}]{{[^ ]*}}) tuple(\n"
       "CHECK: ROOT {{.*}} conditional(%p, [[T1]], [[T2]])\n"},
      {"ConditionalSimplifierTest.RemoveDeadRoots", {},
       "CHECK: %conditional = () conditional(\n"},
      {"ConditionalSimplifierTest.SecondTupleElementUnusedAndRemoved", {},
       "CHECK: %conditional = (f32[{{[0-9,]+}}]{{[^ ]*}}) conditional(\n"},
      {"ConditionalSimplifierTest.FirstTupleElementUnusedAndRemoved", {},
       "CHECK: %conditional = (f32[{{[0-9,]+}}]{{[^ ]*}}) conditional(\n"},
      {"ConditionalSimplifierTest.SimplifyConditionalWithTokens", {},
       "CHECK-DAG: [[A1:%[^ ]+]] = token[] after-all(\n"
       "CHECK-DAG: [[T1:%[^ ]+]] = (token[]) tuple([[A1]])\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = token[] get-tuple-element([[T1]]), index=0\n"
       "CHECK-DAG: [[A2:%[^ ]+]] = token[] after-all(\n"
       "CHECK-DAG: [[T2:%[^ ]+]] = (token[]) tuple([[A2]])\n"
       "CHECK-DAG: [[G2:%[^ ]+]] = token[] get-tuple-element([[T2]]), index=0\n"
       "CHECK-DAG: [[AA:%[^ ]+]] = token[] after-all([[G1]], [[G2]])\n"
       "CHECK: ROOT {{.*}} tuple([[AA]])\n"},
      {"ConditionalSimplifierTest.RemoveUnusedConditionalOperandsWithOriginalValue", {},
       "CHECK-LABEL: %on_false.clone\n"
       "CHECK: parameter(0), origin={({\"t\" {0}}, {\"t\" {1}})}\n"},
      // xla/service/while_loop_simplifier_test.cc. Several tests run
      // TupleSimplifier and HloDCE before checking; the directives check what
      // holds right after this pass (the new loop's state shape).
      {"WhileLoopSimplifierTest.LoopWithUnusedOutsideLoopButModifiedTupleElementSimplified", {},
       "CHECK: {{.*}} = (s32[]) while(\n"},
      {"WhileLoopSimplifierTest.LoopWithUnusedGroupSimplified", {},
       "CHECK: {{.*}} = (s32[]) while(\n"},
      {"WhileLoopSimplifierTest.LoopWithUnusedNonPassthroughElementSimplified", {},
       "CHECK: {{.*}} = (s32[], s32[]) while(\n"},
      {"WhileLoopSimplifierTest.RemoveUnusedLoopOperandsCheckMetadata", {},
       "CHECK: %while.1 = {{.*}} while({{.*}}), condition={{.*}}, body={{.*}}, metadata={op_name=\"while\"}\n"
       "CHECK: ROOT {{.*}} tuple({{.*}}), metadata={op_name=\"while\"}\n"},
      {"WhileLoopSimplifierTest.OnlyConstantsInLoopCarry", {},
       "CHECK: %a = s32[1]{0} constant({0})\n"
       "CHECK: ROOT {{.*}} tuple(%a)\n"},
      {"WhileLoopSimplifierTest.RemoveConstantFromLoopCarry", {},
       "CHECK: {{.*}} = (s32[1]{0}, s32[3]{0}) while(\n"
       "CHECK: ROOT {{.*}} = (s32[1]{0}, s32[2]{0}, s32[3]{0}) tuple(%{{[^ ,]+}}, %b, %{{[^ ,]+}})\n"},
      {"WhileLoopSimplifierTest.FlattenNestedTuple", {},
       "CHECK: {{.*}} = (s32[1]{0}, s32[2]{0}, s32[3]{0}, s32[4]{0}) while(\n"
       "CHECK: ROOT {{.*}} = ((s32[1]{0}), (s32[2]{0}, s32[3]{0}, (s32[4]{0}))) \n"},
      {"WhileLoopSimplifierTest.RemoveDynUpdSliceTwoPairs", {},
       "CHECK: {{.*}} = (f32[3]{0}, f32[3]{0}, s32[]) while(\n"},
      // xla/service/while_loop_constant_sinking_test.cc (tests that build
      // the pass with XLA's defaults set nothing).
      {"WhileLoopConstantSinkingTest.KeepConstantsLoopInvariant", {},
       "CHECK-LABEL: %body.sunk\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C0:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[C1:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} add([[C0]], [[C1]])\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = {{.*}} get-tuple-element([[P]]), index=1\n"
       "CHECK-DAG: [[G2:%[^ ]+]] = {{.*}} get-tuple-element([[P]]), index=2\n"
       "CHECK: ROOT {{.*}} tuple([[A]], [[G1]], [[G2]])\n"},
      {"WhileLoopConstantSinkingTest.DuplicateGTEs", {},
       "CHECK-LABEL: %body.sunk\n"
       "CHECK-DAG: [[P:%[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[G:%[^ ]+]] = {{.*}} get-tuple-element([[P]]), index=2\n"
       "CHECK-DAG: [[A:%[^ ]+]] = {{.*}} add([[C]], [[G]])\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = {{.*}} get-tuple-element([[P]]), index=1\n"
       "CHECK-DAG: [[G2:%[^ ]+]] = {{.*}} get-tuple-element([[P]]), index=2\n"
       "CHECK: ROOT {{.*}} tuple([[A]], [[G1]], [[G2]])\n"},
      {"WhileLoopConstantSinkingTest.SinkWithSharedBody", {},
       "CHECK-LABEL: %body.sunk \n"
       "CHECK: [[C:%[^ ]+]] = f32[2]{0} constant({2, 1})\n"
       "CHECK: [[A:%[^ ]+]] = {{.*}} add(%{{[^ ,]+}}, [[C]])\n"
       "CHECK: ROOT {{.*}} tuple([[A]], %{{[^ ]+}})\n"
       "CHECK-LABEL: %body.sunk.1 \n"
       "CHECK: [[C1:%[^ ]+]] = f32[2]{0} constant({1, 2})\n"
       "CHECK: [[A1:%[^ ]+]] = {{.*}} add(%{{[^ ,]+}}, [[C1]])\n"
       "CHECK: ROOT {{.*}} tuple([[A1]], %{{[^ ]+}})\n"},
      {"WhileLoopConstantSinkingTest.ConditionalTupleShapedConstants", {},
       "CHECK-LABEL: %condition.sunk\n"
       "CHECK: [[C:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK: [[G:%[^ ]+]] = {{.*}} get-tuple-element([[C]])\n"
       "CHECK: ROOT {{.*}} compare(%{{[^ ,]+}}, [[G]]), direction=LT\n"},
      {"WhileLoopConstantSinkingTest.ConditionalMultipleSameIndexGTEs", {},
       "CHECK-LABEL: %condition.sunk\n"
       "CHECK-DAG: [[C0:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[L0:%[^ ]+]] = pred[] compare(%{{[^ ,]+}}, [[C0]]), direction=LT\n"
       "CHECK-DAG: [[C1:%[^ ]+]] = {{.*}} constant(\n"
       "CHECK-DAG: [[L1:%[^ ]+]] = pred[] compare(%{{[^ ,]+}}, [[C1]]), direction=LT\n"
       "CHECK: ROOT {{.*}} and([[L0]], [[L1]])\n"},
      {"WhileLoopConstantSinkingTest.SinkBroadcastOfConstantWithOriginalValue", {"sink_broadcast_of_constants=true"}},
      // xla/hlo/transforms/simplifiers/flatten_call_graph_test.cc: the
      // tests below build FlattenCallGraph(SkipCloningForCalls).
      {"FlattenCallGraphTest.SkipCloningForCalls_NoCloningAllCallersAreKCalls", {"skip_cloning_for_calls=true"}},
      {"FlattenCallGraphTest.SkipCloningForCalls_MixedCallAndWhileCallers", {"skip_cloning_for_calls=true"}},
      {"FlattenCallGraphTest.SkipCloningForCalls_WhileHasSameCondAndBody", {"skip_cloning_for_calls=true"}},
      {"FlattenCallGraphTest.SkipCloningForCalls_NonFlatChainOneWhile", {"skip_cloning_for_calls=true"}},
      {"FlattenCallGraphTest.SkipCloningForCalls_NonFlatChainTwoWhiles", {"skip_cloning_for_calls=true"}},
      {"FlattenCallGraphTest.SkipCloningForCalls_NonFlatChainTwoSuccessiveWhiles", {"skip_cloning_for_calls=true"}},
      // xla/hlo/transforms/simplifiers/sort_simplifier_test.cc.
      {"SortSimplifierTest.RemoveUnusedSortOperandTuple", {},
       "CHECK: [[S:%[^ ]+]] = {{.*}} sort(%keys, %values.1)\n"
       "CHECK-DAG: [[G0:%[^ ]+]] = {{.*}} get-tuple-element([[S]]), index=0\n"
       "CHECK-DAG: [[G1:%[^ ]+]] = {{.*}} get-tuple-element([[S]]), index=1\n"
       "CHECK: ROOT {{.*}} tuple([[G0]], [[G1]])\n"},
  };
}

}  // namespace passlab::conformance
