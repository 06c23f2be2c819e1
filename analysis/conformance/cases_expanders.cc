// Pass options and C++-matcher expectations of the expander, collective and reduction-rewriter tests.
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

std::vector<CaseSpec> ExpanderAndCollectiveCases() {
  return {
      // xla/hlo/transforms/collectives/all_gather_combiner_test.cc: every
      // test builds AllGatherCombiner(1024 * 1024, kMaxCombineCount = 256,
      // combine_by_dim, ...).
      {"AllGatherCombinerTest.", {"combine_threshold_in_bytes=1048576", "combine_threshold_count=256"}},
      {"AllGatherCombinerTest.CombineAllGathers",
       {"combine_by_dim=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[P1]])\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]])\n"},
      {"AllGatherCombinerTest.CombineDifferentDtypes",
       {"combine_by_dim=true", "combine_different_dtypes=false"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[A0:[^ ]+]] = {{.*}} all-gather(%[[P0]])\n"
       "CHECK-DAG: %[[A1:[^ ]+]] = {{.*}} all-gather(%[[P1]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[A0]], %[[A1]])\n"},
      {"AllGatherCombinerTest.DoNotCombineInWhileLoop",
       {"combine_by_dim=true", "combine_different_dtypes=true", "combine_while_loops=false"}},
      {"AllGatherCombinerTest.CombineAllGathersByAllGatherDimension",
       {"combine_by_dim=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: %[[P3:[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK-DAG: %[[P4:[^ ]+]] = {{.*}} parameter(4)\n"
       "CHECK-DAG: %[[A0:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[P1]], %[[P4]])\n"
       "CHECK-DAG: %[[A1:[^ ]+]] = {{.*}} all-gather(%[[P2]], %[[P3]])\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=1\n"
       "CHECK-DAG: %[[G2:[^ ]+]] = {{.*}} get-tuple-element(%[[A1]]), index=0\n"
       "CHECK-DAG: %[[G3:[^ ]+]] = {{.*}} get-tuple-element(%[[A1]]), index=1\n"
       "CHECK-DAG: %[[G4:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=2\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]], %[[G2]], %[[G3]], %[[G4]])\n"},
      {"AllGatherCombinerTest.DoNotCombineOverThreshold",
       {"combine_threshold_in_bytes=255", "combine_by_dim=true"},
       "CHECK-COUNT-2: all-gather(\n"
       "CHECK-NOT: all-gather(\n"},
      {"AllGatherCombinerTest.CombineUpToThreshold",
       {"combine_threshold_in_bytes=256", "combine_by_dim=true"},
       "CHECK: all-gather(\n"
       "CHECK-NOT: all-gather(\n"},
      {"AllGatherCombinerTest.NoDependentCombination", {"combine_by_dim=true"}},
      {"AllGatherCombinerTest.NoDifferentReplicaGroupsCombination", {"combine_by_dim=true"}},
      {"AllGatherCombinerTest.DomainPreventsCombining",
       {"combine_by_dim=true"},
       "CHECK-COUNT-2: all-gather(\n"
       "CHECK-NOT: all-gather(\n"},
      // The combined all-gather is param0's only user, with the sharding of
      // the two members it combines.
      {"AllGatherCombinerTest.CombineFromTwoDomainsWithSameMetadata",
       {"combine_by_dim=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK: all-gather(%[[P0]], %[[P2]]){{.*}}, sharding={{.}}{maximal device=0}, {maximal device=0}{{.}}\n"},
      {"AllGatherCombinerTest.CombineAllGathersDifferentDims",
       {"combine_by_dim=false"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[B1:[^ ]+]] = {{.*}} bitcast(%[[P1]])\n"
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[B1]])\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK-DAG: %[[R1:[^ ]+]] = {{.*}} bitcast(%[[G1]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[R1]])\n"},
      {"AllGatherCombinerTest.CombineManyAllGathersDifferentDims",
       {"combine_by_dim=false"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: %[[P3:[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK-DAG: %[[P4:[^ ]+]] = {{.*}} parameter(4)\n"
       "CHECK-DAG: %[[B2:[^ ]+]] = {{.*}} bitcast(%[[P2]])\n"
       "CHECK-DAG: %[[B3:[^ ]+]] = {{.*}} bitcast(%[[P3]])\n"
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[P1]], %[[B2]], %[[B3]], %[[P4]]){{.*}}, "
       "dimensions={0}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK-DAG: %[[G2:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=2\n"
       "CHECK-DAG: %[[G3:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=3\n"
       "CHECK-DAG: %[[G4:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=4\n"
       "CHECK-DAG: %[[R2:[^ ]+]] = {{.*}} bitcast(%[[G2]])\n"
       "CHECK-DAG: %[[R3:[^ ]+]] = {{.*}} bitcast(%[[G3]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]], %[[R2]], %[[R3]], %[[G4]])\n"},
      {"AllGatherCombinerTest.CombineManyAllGathersDifferentDimsRank4",
       {"combine_by_dim=false"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: %[[P3:[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK-DAG: %[[P4:[^ ]+]] = {{.*}} parameter(4)\n"
       "CHECK-DAG: %[[B2:[^ ]+]] = {{.*}} bitcast(%[[P2]])\n"
       "CHECK-DAG: %[[B3:[^ ]+]] = {{.*}} bitcast(%[[P3]])\n"
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[P1]], %[[B2]], %[[B3]], %[[P4]]){{.*}}, "
       "dimensions={0}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK-DAG: %[[G2:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=2\n"
       "CHECK-DAG: %[[G3:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=3\n"
       "CHECK-DAG: %[[G4:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=4\n"
       "CHECK-DAG: %[[R2:[^ ]+]] = {{.*}} bitcast(%[[G2]])\n"
       "CHECK-DAG: %[[R3:[^ ]+]] = {{.*}} bitcast(%[[G3]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]], %[[R2]], %[[R3]], %[[G4]])\n"},
      // The most frequent dimension (1) is not valid for the rank-1 member,
      // so the combined op gathers along 0.
      {"AllGatherCombinerTest.CombineManyAllGathersDifferentDimsMixedRanks",
       {"combine_by_dim=false"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: %[[P3:[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK-DAG: %[[P4:[^ ]+]] = {{.*}} parameter(4)\n"
       "CHECK-DAG: %[[B0:[^ ]+]] = {{.*}} bitcast(%[[P0]])\n"
       "CHECK-DAG: %[[B1:[^ ]+]] = {{.*}} bitcast(%[[P1]])\n"
       "CHECK-DAG: %[[B2:[^ ]+]] = {{.*}} bitcast(%[[P2]])\n"
       "CHECK-DAG: %[[B3:[^ ]+]] = {{.*}} bitcast(%[[P3]])\n"
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather(%[[B0]], %[[B1]], %[[B2]], %[[B3]], %[[P4]]){{.*}}, "
       "dimensions={0}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK-DAG: %[[G2:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=2\n"
       "CHECK-DAG: %[[G3:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=3\n"
       "CHECK-DAG: %[[G4:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=4\n"
       "CHECK-DAG: %[[R0:[^ ]+]] = {{.*}} bitcast(%[[G0]])\n"
       "CHECK-DAG: %[[R1:[^ ]+]] = {{.*}} bitcast(%[[G1]])\n"
       "CHECK-DAG: %[[R2:[^ ]+]] = {{.*}} bitcast(%[[G2]])\n"
       "CHECK-DAG: %[[R3:[^ ]+]] = {{.*}} bitcast(%[[G3]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[G4]])\n"},
      {"AllGatherCombinerTest.CombineAllGathersByDim",
       {"combine_by_dim=true"},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK-DAG: %[[P3:[^ ]+]] = {{.*}} parameter(3)\n"
       "CHECK-DAG: %[[P4:[^ ]+]] = {{.*}} parameter(4)\n"
       "CHECK-DAG: %[[A0:[^ ]+]] = {{.*}} all-gather(%[[P0]], %[[P1]], %[[P4]]){{.*}}, dimensions={0}\n"
       "CHECK-DAG: %[[A1:[^ ]+]] = {{.*}} all-gather(%[[P2]], %[[P3]]){{.*}}, dimensions={1}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=1\n"
       "CHECK-DAG: %[[G2:[^ ]+]] = {{.*}} get-tuple-element(%[[A1]]), index=0\n"
       "CHECK-DAG: %[[G3:[^ ]+]] = {{.*}} get-tuple-element(%[[A1]]), index=1\n"
       "CHECK-DAG: %[[G4:[^ ]+]] = {{.*}} get-tuple-element(%[[A0]]), index=2\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]], %[[G2]], %[[G3]], %[[G4]])\n"},
      {"AllGatherCombinerTest.PreservesMetadata",
       {"combine_by_dim=true"},
       "CHECK: %[[AG:[^ ]+]] = {{.*}} all-gather({{.*}}metadata={op_type=\"test_type0\" "
       "op_name=\"(test_name0:test_name1)\"}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AG]]), index=1\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]])\n"},
      {"AllGatherCombinerTest.PreservesFrontendAttributesAndMergedMetadata",
       {"combine_by_dim=true"},
       "CHECK: all-gather({{.*}}frontend_attributes={color=\"blue,red\",is_pipelineable=\"true\"}\n"
       "CHECK-SAME: metadata={op_type=\"ag\" op_name=\"model/layer/(ag_0:ag_1)\"}\n"
       "CHECK-NOT: all-gather(\n"},

      // xla/hlo/transforms/collectives/all_reduce_combiner_test.cc: every
      // test builds AllReduceCombiner(1024 * 1024, kMaxCombineCount = 256).
      {"AllReduceCombinerTest.", {"combine_threshold_in_bytes=1048576", "combine_threshold_count=256"}},
      {"AllReduceCombinerTest.CombineFromTwoDomainsWithSameMetadata",
       {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P2:[^ ]+]] = {{.*}} parameter(2)\n"
       "CHECK: all-reduce(%[[P0]], %[[P2]]){{.*}}, sharding={{.}}{maximal device=0}, {maximal device=0}{{.}}\n"},
      // crs00 and crs11 (add) combine first; crs01 and crs10 (max) then
      // cannot without a cycle; crs02 and crs12 combine.
      {"AllReduceCombinerTest.CrossCombineGroupCycle",
       {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[P0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[P1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[M1:[^ ]+]] = {{.*}} all-reduce(%[[P1]])\n"
       "CHECK-DAG: %[[C0:[^ ]+]] = {{.*}} all-reduce(%[[P0]], %[[M1]])\n"
       "CHECK-DAG: %[[C0G0:[^ ]+]] = {{.*}} get-tuple-element(%[[C0]]), index=0\n"
       "CHECK-DAG: %[[C0G1:[^ ]+]] = {{.*}} get-tuple-element(%[[C0]]), index=1\n"
       "CHECK-DAG: %[[M0:[^ ]+]] = {{.*}} all-reduce(%[[C0G0]])\n"
       "CHECK-DAG: %[[ADD:[^ ]+]] = {{.*}} add(%[[M0]], %[[C0G1]])\n"
       "CHECK-DAG: %[[C1:[^ ]+]] = {{.*}} all-reduce(%[[ADD]], %[[C0G1]])\n"
       "CHECK-DAG: %[[C1G0:[^ ]+]] = {{.*}} get-tuple-element(%[[C1]]), index=0\n"
       "CHECK-DAG: %[[C1G1:[^ ]+]] = {{.*}} get-tuple-element(%[[C1]]), index=1\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[C1G0]], %[[C1G1]])\n"},
      {"AllReduceCombinerTest.PreservesMetadata",
       {},
       "CHECK: %[[AR:[^ ]+]] = {{.*}} all-reduce({{.*}}metadata={op_type=\"test_type0\" "
       "op_name=\"(test_name0:test_name1)\"}\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[AR]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[AR]]), index=1\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]])\n"},

      // xla/service/gather_expander_test.cc.
      {"GatherExpanderTest.AvoidDegenerateDims",
       {"mode=kEliminateAllGathers"},
       "CHECK: ENTRY\n"
       "CHECK: = ({{s[0-9]+}}[], s32[3,3]{1,0}, s32[2]{0}, s32[2,3]{1,0}) while(\n"
       "CHECK-NOT: {{ }}while(\n"},
      {"GatherExpanderTest.EliminateSimpleGathersRewritesTrivialGather",
       {"mode=kEliminateAllGathers"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: {{ }}gather(\n"},
      {"GatherExpanderTest.GatherIsBroadcast",
       {"mode=kEliminateSimpleGathers"},
       "CHECK-NOT: {{ }}gather(\n"
       "CHECK: {{ }}broadcast(\n"
       "CHECK-NOT: {{ }}gather(\n"},
      {"GatherExpanderTest.GatherIsBroadcastBatchDim",
       {"mode=kEliminateSimpleGathers"},
       "CHECK-NOT: {{ }}gather(\n"
       "CHECK: {{ }}broadcast(\n"
       "CHECK-NOT: {{ }}gather(\n"},
      {"GatherExpanderTest.EliminateSimpleGathersSkipsNontrivialGather", {"mode=kEliminateSimpleGathers"}},
      {"GatherExpanderTest.CheckOpMetadata",
       {"mode=kEliminateAllGathers"}},
      {"GatherExpanderTest.GatherToLoopWithBatchDims",
       {"mode=kEliminateAllGathers"},
       "CHECK: (s32[], s32[5,2], s64[5,1], s32[5,1])) -> (s32[], s32[5,2], s64[5,1], s32[5,1]) {\n"
       "CHECK: %[[PARAM:.*]] = (s32[], s32[5,2]{1,0}, s64[5,1]{1,0}, s32[5,1]{1,0}) parameter(0)\n"
       "CHECK: %[[I_0:.*]] = s32[] get-tuple-element(%[[PARAM]]), index=0\n"
       "CHECK: %[[CONSTANT1:.*]] = s32[] constant(1)\n"
       "CHECK: %[[I_PLUS_1:.*]] = s32[] add(%[[I_0]], %[[CONSTANT1]])\n"
       "CHECK: %[[OPERAND:.*]] = s32[5,2]{1,0} get-tuple-element(%[[PARAM]]), index=1\n"
       "CHECK: %[[START_INDICES:.*]] = s64[5,1]{1,0} get-tuple-element(%[[PARAM]]), index=2\n"
       "CHECK: %[[RESULT:.*]] = s32[5,1]{1,0} get-tuple-element(%[[PARAM]]), index=3\n"
       "CHECK: %[[CONVERT:.*]] = s64[] convert(%[[I_0]])\n"
       "CHECK: %[[I_1D_1:.*]] = s64[1]{0} broadcast(%[[CONVERT]])\n"
       "CHECK: %[[I_1D_2:.*]] = s32[1]{0} broadcast(%[[I_0]])\n\n"
       "CHECK: %[[START_INDICES_INDEX_D1_PAD:.*]] = s32[] constant(0)\n"
       "CHECK: %[[START_INDICES_INDEX_VECTOR:.*]] = s32[2]{0} pad(%[[I_1D_2]],"
       " %[[START_INDICES_INDEX_D1_PAD]]), padding=0_1\n"
       "CHECK: %[[START_INDICES_INDEX_D0_SLICE:.*]] = s32[1]{0} slice(%[[START_INDICES_INDEX_VECTOR]]), slice={[0:1]}\n"
       "CHECK: %[[START_INDICES_INDEX_D0:.*]] = s32[] reshape(%[[START_INDICES_INDEX_D0_SLICE]])\n"
       "CHECK: %[[START_INDICES_INDEX_D1_SLICE:.*]] = s32[1]{0} slice(%[[START_INDICES_INDEX_VECTOR]]), slice={[1:2]}\n"
       "CHECK: %[[START_INDICES_INDEX_D1:.*]] = s32[] reshape(%[[START_INDICES_INDEX_D1_SLICE]])\n"
       "CHECK: %[[INDEX_VECTOR:.*]] = s64[1,1]{1,0} dynamic-slice(%[[START_INDICES]],"
       " %[[START_INDICES_INDEX_D0]], %[[START_INDICES_INDEX_D1]])\n\n"
       "CHECK: %[[OFFSET_RAW:.*]] = s64[1]{0} reshape(%[[INDEX_VECTOR]])\n"
       "CHECK: %[[OFFSET:.*]] = s64[1]{0} slice(%[[OFFSET_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX:.*]] = s64[2]{0} concatenate(%[[I_1D_1]], %[[OFFSET]])\n"
       "CHECK: %[[OPERAND_INDEX_D0_RAW:.*]] = s64[1]{0} slice(%[[OPERAND_INDEX]]), slice={[0:1]}\n"
       "CHECK: %[[OPERAND_INDEX_D0:.*]] = s64[] reshape(%[[OPERAND_INDEX_D0_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX_D1_RAW:.*]] = s64[1]{0} slice(%[[OPERAND_INDEX]]), slice={[1:2]}\n"
       "CHECK: %[[OPERAND_INDEX_D1:.*]] = s64[] reshape(%[[OPERAND_INDEX_D1_RAW]])\n"
       "CHECK: %[[RESULT_SLICE_RAW0:.*]] = s32[1,1]{1,0} dynamic-slice(%[[OPERAND]], %[[OPERAND_INDEX_D0]],"
       " %[[OPERAND_INDEX_D1]])\n\n"
       "CHECK: %[[RESULT_SLICE_RAW1:.*]] = s32[1]{0} reshape(%[[RESULT_SLICE_RAW0]])\n"
       "CHECK: %[[RESULT_SLICE:.*]] = s32[1,1]{1,0} reshape(%[[RESULT_SLICE_RAW1]])\n"
       "CHECK: %[[RESULT_INDEX_D1_PAD:.*]] = s32[] constant(0)\n"
       "CHECK: %[[RESULT_INDEX_VECTOR:.*]] = s32[2]{0} pad(%[[I_1D_2]], %[[RESULT_INDEX_D1_PAD]]), padding=0_1\n"
       "CHECK: %[[RESULT_INDEX_D0_SLICE:.*]] = s32[1]{0} slice(%[[RESULT_INDEX_VECTOR]]), slice={[0:1]}\n"
       "CHECK: %[[RESULT_INDEX_D0:.*]] = s32[] reshape(%[[RESULT_INDEX_D0_SLICE]])\n"
       "CHECK: %[[RESULT_INDEX_D1_SLICE:.*]] = s32[1]{0} slice(%[[RESULT_INDEX_VECTOR]]), slice={[1:2]}\n"
       "CHECK: %[[RESULT_INDEX_D1:.*]] = s32[] reshape(%[[RESULT_INDEX_D1_SLICE]])\n"
       "CHECK: %[[UPDATED_RESULT:.*]] = s32[5,1]{1,0} dynamic-update-slice(%[[RESULT]], %[[RESULT_SLICE]],"
       " %[[RESULT_INDEX_D0]], %[[RESULT_INDEX_D1]])\n\n"
       "CHECK: ROOT %{{.*}} = (s32[], s32[5,2]{1,0}, s64[5,1]{1,0}, s32[5,1]{1,0}) tuple(%[[I_PLUS_1]],"
       " %[[OPERAND]], %[[START_INDICES]], %[[UPDATED_RESULT]])\n"},
      {"GatherExpanderTest.GatherToLoopWithBatchDimsAndCollapsedDims",
       {"mode=kEliminateAllGathers"},
       "CHECK: (s32[], s32[7,3,4,5], s32[70], s32[70,3])) -> (s32[], s32[7,3,4,5], s32[70], s32[70,3]) {\n"
       "CHECK: %[[PARAM:.*]] = (s32[], s32[7,3,4,5]{3,2,1,0}, s32[70]{0}, s32[70,3]{1,0}) parameter(0)\n"
       "CHECK: %[[I:.*]] = s32[] get-tuple-element(%[[PARAM]]), index=0\n\n"
       "CHECK: %[[CONSTANT1:.*]] = s32[] constant(1)\n"
       "CHECK: %[[I_PLUS_1:.*]] = s32[] add(%[[I]], %[[CONSTANT1]])\n"
       "CHECK: %[[OPERAND:.*]] = s32[7,3,4,5]{3,2,1,0} get-tuple-element(%[[PARAM]]), index=1\n"
       "CHECK: %[[START_INDICES:.*]] = s32[70]{0} get-tuple-element(%[[PARAM]]), index=2\n\n"
       "CHECK: %[[CONSTANT7:.*]] = s32[] constant(7)\n"
       "CHECK: %[[BD0_RAW:.*]] = s32[] remainder(%[[I]], %[[CONSTANT7]])\n"
       "CHECK: %[[BD0:.*]] = s32[1]{0} broadcast(%[[BD0_RAW]])\n"
       "CHECK: %[[CONSTANT0:.*]] = s32[1]{0} constant({0})\n"
       "CHECK: %[[I_1D_1:.*]] = s32[1]{0} broadcast(%[[I]])\n"
       "CHECK: %[[START_INDICES_INDEX_RAW:.*]] = s32[1]{0} slice(%[[I_1D_1]])\n"
       "CHECK: %[[START_INDICES_INDEX:.*]] = s32[] reshape(%[[START_INDICES_INDEX_RAW]])\n"
       "CHECK: %[[INDEX_VECTOR:.*]] = s32[1]{0} dynamic-slice(%[[START_INDICES]], %[[START_INDICES_INDEX]])\n\n"
       "CHECK: %[[OFFSET:.*]] = s32[1]{0} slice(%[[INDEX_VECTOR]])\n"
       "CHECK: %[[BD1:.*]] = s32[] divide(%[[I]], %[[CONSTANT7]])\n"
       "CHECK: %[[CONSTANT2:.*]] = s32[] constant(2)\n"
       "CHECK: %[[BD2_RAW:.*]] = s32[] divide(%[[BD1]], %[[CONSTANT2]])\n"
       "CHECK: %[[BD2:.*]] = s32[1]{0} broadcast(%[[BD2_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX:.*]] = s32[4]{0} concatenate(%[[BD0]], %[[CONSTANT0]], %[[OFFSET]], %[[BD2]])\n\n"
       "CHECK: %[[OPERAND_INDEX_D0_RAW:.*]] = s32[1]{0} slice(%[[OPERAND_INDEX]]), slice={[0:1]}\n"
       "CHECK: %[[OPERAND_INDEX_D0:.*]] = s32[] reshape(%[[OPERAND_INDEX_D0_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX_D1_RAW:.*]] = s32[1]{0} slice(%[[OPERAND_INDEX]]), slice={[1:2]}\n"
       "CHECK: %[[OPERAND_INDEX_D1:.*]] = s32[] reshape(%[[OPERAND_INDEX_D1_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX_D2_RAW:.*]] = s32[1]{0} slice(%[[OPERAND_INDEX]]), slice={[2:3]}\n"
       "CHECK: %[[OPERAND_INDEX_D2:.*]] = s32[] reshape(%[[OPERAND_INDEX_D2_RAW]])\n"
       "CHECK: %[[OPERAND_INDEX_D3_RAW:.*]] = s32[1]{0} slice(%[[OPERAND_INDEX]]), slice={[3:4]}\n"
       "CHECK: %[[OPERAND_INDEX_D3:.*]] = s32[] reshape(%[[OPERAND_INDEX_D3_RAW]])\n"
       "CHECK: %{{.*}} = s32[1,3,1,1]{3,2,1,0} dynamic-slice(%[[OPERAND]], %[[OPERAND_INDEX_D0]],"
       " %[[OPERAND_INDEX_D1]], %[[OPERAND_INDEX_D2]], %[[OPERAND_INDEX_D3]])\n"},

      // xla/hlo/transforms/expanders/stable_sort_expander_test.cc. The
      // comparator checks transcribe CheckComputationHasTieBreaker: the root
      // is select(compare(c, c', EQ), compare(iota lhs, iota rhs, LT), c).
      {"StableSortExpanderTest.StabilizeSortReuseIotaOperand",
       {},
       "CHECK-NOT: is_stable=true\n"
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(2)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(3)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK: %[[S:[^ ]+]] = {{.*}} sort(%[[K]], %[[I]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} get-tuple-element(%[[S]]), index=0\n"},
      {"StableSortExpanderTest.StabilizeSortReuseIotaOperandComplicatedComparison",
       {},
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(2)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(3)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK: %[[S:[^ ]+]] = {{.*}} sort(%[[K]], %[[I]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} get-tuple-element(%[[S]]), index=0\n"},
      {"StableSortExpanderTest.StabilizeSortAddIotaOperandAndChangeRoot",
       {},
       "CHECK-NOT: is_stable=true\n"
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(4)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(5)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[V:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK-DAG: %[[S:[^ ]+]] = {{.*}} sort(%[[K]], %[[V]], %[[I]])\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[S]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[S]]), index=1\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} tuple(%[[G0]], %[[G1]])\n"},
      // The XLA test runs AlgebraicSimplifier after the pass to fold the
      // wrapper tuple; only the sort and its comparator are checked here.
      {"StableSortExpanderTest.StabilizeSortDontReuseIotaOperandWrongDimension",
       {},
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(4)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(5)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I0:[^ ]+]] = {{.*}} iota(), iota_dimension=0\n"
       "CHECK-DAG: %[[I1:[^ ]+]] = {{.*}} iota(), iota_dimension=1\n"
       "CHECK: sort(%[[K]], %[[I0]], %[[I1]])\n"},
      {"StableSortExpanderTest.StabilizeSortDontReuseIotaOperandWrongType",
       {},
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(4)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(5)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I0:[^ ]+]] = {{.*}} iota()\n"
       "CHECK-DAG: %[[I1:[^ ]+]] = {{.*}} iota()\n"
       "CHECK: sort(%[[K]], %[[I0]], %[[I1]])\n"},
      {"StableSortExpanderTest.StabilizeSortR1",
       {},
       "CHECK-NOT: is_stable=true\n"
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(2)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(3)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK: %[[S:[^ ]+]] = {{.*}} sort(%[[K]], %[[I]])\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} get-tuple-element(%[[S]]), index=0\n"},
      {"StableSortExpanderTest.StabilizeSortR1NoRoot",
       {},
       "CHECK-DAG: %[[IL:[^ ]+]] = s32[] parameter(2)\n"
       "CHECK-DAG: %[[IR:[^ ]+]] = s32[] parameter(3)\n"
       "CHECK-DAG: %[[LT:[^ ]+]] = pred[] compare(%[[IL]], %[[IR]]), direction=LT\n"
       "CHECK-DAG: %[[EQ:[^ ]+]] = pred[] compare(%[[X:[^ ,]+]], %{{[^ ,]+}}), direction=EQ\n"
       "CHECK: ROOT %{{[^ ]+}} = pred[] select(%[[EQ]], %[[LT]], %[[X]])\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK: %[[S:[^ ]+]] = {{.*}} sort(%[[K]], %[[I]])\n"
       "CHECK: %[[G:[^ ]+]] = {{.*}} get-tuple-element(%[[S]]), index=0\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} negate(%[[G]])\n"},
      // Each sort gets its own comparator (the XLA test compares their ids).
      {"StableSortExpanderTest.MultipleSortsSingleComputationNoIota",
       {},
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[K1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[S0:[^ ]+]] = {{.*}} sort(%[[K0]], %{{[^ ]+}}){{.*}}, to_apply=%[[C0:[^ ,]+]]\n"
       "CHECK-DAG: %[[S1:[^ ]+]] = {{.*}} sort(%[[K1]], %{{[^ ]+}}){{.*}}, to_apply=%[[C1:[^ ,]+]]\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[S0]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[S1]]), index=0\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} add(%[[G0]], %[[G1]])\n"},
      {"StableSortExpanderTest.MultipleSortsSingleComputationWithIota",
       {},
       "CHECK-NOT: is_stable=true\n"
       "CHECK: ENTRY\n"
       "CHECK-DAG: %[[K0:[^ ]+]] = {{.*}} parameter(0)\n"
       "CHECK-DAG: %[[K1:[^ ]+]] = {{.*}} parameter(1)\n"
       "CHECK-DAG: %[[I:[^ ]+]] = {{.*}} iota()\n"
       "CHECK-DAG: %[[S0:[^ ]+]] = {{.*}} sort(%[[K0]], %[[I]]){{.*}}, to_apply=%[[C0:[^ ,]+]]\n"
       "CHECK-DAG: %[[S1:[^ ]+]] = {{.*}} sort(%[[K1]], %[[I]]){{.*}}, to_apply=%[[C1:[^ ,]+]]\n"
       "CHECK-DAG: %[[G0:[^ ]+]] = {{.*}} get-tuple-element(%[[S0]]), index=0\n"
       "CHECK-DAG: %[[G1:[^ ]+]] = {{.*}} get-tuple-element(%[[S1]]), index=0\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} add(%[[G0]], %[[G1]])\n"},

      // xla/hlo/transforms/expanders/convolution_4d_expander_test.cc: the
      // root is a reshape of a convolution with 2, 3 or 0 spatial dimensions.
      {"Convolution4DExpanderTest.ConvertTo2DConvolution",
       {},
       "CHECK: %[[CONV:[^ ]+]] = {{.*}} convolution(%{{[^ ]+}}, %{{[^ ]+}}), window={size={{[0-9]+x[0-9]+[ }]}}\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} reshape(%[[CONV]])\n"},
      {"Convolution4DExpanderTest.ConvertTo3DConvolution",
       {},
       "CHECK: %[[CONV:[^ ]+]] = {{.*}} convolution(%{{[^ ]+}}, %{{[^ ]+}}), "
       "window={size={{[0-9]+x[0-9]+x[0-9]+[ }]}}\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} reshape(%[[CONV]])\n"},
      {"Convolution4DExpanderTest.ConvertTo0DConvolution",
       {},
       "CHECK: %[[CONV:[^ ]+]] = {{.*}} convolution(%{{[^ ]+}}, %{{[^ ]+}}), dim_labels=\n"
       "CHECK: ROOT %{{[^ ]+}} = {{.*}} reshape(%[[CONV]])\n"},

      // xla/service/batchnorm_expander_test.cc. The sharding tests check that
      // every instruction but the parameters has device 1 as its unique
      // device: here, that no non-parameter line of the entry ends in
      // anything but a device-1 sharding (the ops have no metadata).
      {"BatchNormExpanderTest.BatchNormInference",
       {"rewrite_training_op=false", "rewrite_inference_op=true", "rewrite_grad_op=false"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: batch-norm-inference(\n"},
      {"BatchNormExpanderTest.BatchNormInferenceSharding",
       {"rewrite_training_op=false", "rewrite_inference_op=true", "rewrite_grad_op=false"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: {{^ +(ROOT )?%[^ ]+ = .*"
       " ((p[b-z]|pa[a-qs-z]|[a-oq-z])[-a-z0-9]*)\\(.*([^}]|[^1}]\\}|[^1]\\}\\})$}}\n"},
      {"BatchNormExpanderTest.BatchNormTrainingSharding",
       {"rewrite_training_op=true", "rewrite_inference_op=true", "rewrite_grad_op=true"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: {{^ +(ROOT )?%[^ ]+ = .*"
       " ((p[b-z]|pa[a-qs-z]|[a-oq-z])[-a-z0-9]*)\\(.*([^}]|[^1}]\\}|[^1]\\}\\})$}}\n"},
      {"BatchNormExpanderTest.BatchNormGradSharding",
       {"rewrite_training_op=false", "rewrite_inference_op=false", "rewrite_grad_op=true"},
       "CHECK: ENTRY\n"
       "CHECK-NOT: {{^ +(ROOT )?%[^ ]+ = .*"
       " ((p[b-z]|pa[a-qs-z]|[a-oq-z])[-a-z0-9]*)\\(.*([^}]|[^1}]\\}|[^1]\\}\\})$}}\n"},
      {"BatchNormExpanderTest.DisabledFlagsAreNoop",
       {"rewrite_training_op=false", "rewrite_inference_op=false", "rewrite_grad_op=false"}},

      // xla/hlo/transforms/collectives/async_collective_creator_test.cc: XLA's
      // CollectiveCreatorConfig converts nothing unless a test says so.
      {"AsyncCollectiveCreatorTest.",
       {"convert_all_reduce=false", "convert_all_gather=false", "convert_collective_permute=false",
        "convert_reduce_scatter=false", "convert_all_to_all=false", "convert_collective_broadcast=false"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleAllReduce",
       {"convert_all_reduce=true", "use_generic_async_start_done=true", "all_reduce_min_threshold_in_bytes=4096"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleAllReduceBelowThresholdWhenShouldIgnoreSizeCheck",
       {"convert_all_reduce=true", "use_generic_async_start_done=true", "all_reduce_min_threshold_in_bytes=4096",
        "should_ignore_size_check=true"}},
      {"AsyncCollectiveCreatorTest.DoesNotSplitSingleAllReduceBelowThresholdWhenShouldNotIgnoreSizeCheck",
       {"convert_all_reduce=true", "use_generic_async_start_done=true", "all_reduce_min_threshold_in_bytes=4096",
        "should_ignore_size_check=false"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleAllGather",
       {"convert_all_gather=true", "use_generic_async_start_done=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleCollectivePermute", {"convert_collective_permute=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleInPlaceCollectivePermute", {"convert_collective_permute=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleCollectivePermuteScheduled", {"convert_collective_permute=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleCollectiveBroadcast", {"convert_collective_broadcast=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleAllToAll", {"convert_all_to_all=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleReduceScatter", {"convert_reduce_scatter=true"}},
      {"AsyncCollectiveCreatorTest.SplitsSingleRaggedAllToAll", {}},
      {"AsyncCollectiveCreatorTest.ControlPredecessor",
       {"convert_all_gather=true", "use_generic_async_start_done=true", "all_gather_min_threshold_in_bytes=4096"}},
      {"AsyncCollectiveCreatorTest.PreserveFrontendAttributesAllGather",
       {"convert_all_gather=true", "use_generic_async_start_done=true"}},
      {"AsyncCollectiveCreatorTest.PreserveFrontendAttributesAllReduce", {"convert_all_reduce=true"}},
      {"AsyncCollectiveCreatorTest.PreserveFrontendAttributesCollectivePermute", {"convert_collective_permute=true"}},
      {"AsyncCollectiveCreatorTest.PreserveFrontendAttributesAllToAll", {"convert_all_to_all=true"}},
      {"AsyncCollectiveCreatorTest.SplitsMultiOperandAllGather",
       {"convert_all_gather=true", "use_generic_async_start_done=true"}},

      // xla/backends/gpu/transforms/reduction_splitter_test.cc.
      {"ReductionSplitterTest.SplitReductionAtDimensionTwo",
       {"ignore_small_dims=true"},
       "CHECK: %[[C:[^ ]+]] = f32[] constant(\n"
       "CHECK: %[[PRE:[^ ]+]] = f32[6,16,64]{2,1,0} reduce(\n"
       "CHECK-SAME: dimensions={2}\n"
       "CHECK: ROOT %{{[^ ]+}} = f32[16,64]{1,0} reduce(%[[PRE]], %[[C]]), dimensions={0}\n"},
      {"ReductionSplitterTest.SplitReductionAtDimensionZero",
       {"ignore_small_dims=false"},
       "CHECK: %[[C:[^ ]+]] = f32[] constant(\n"
       "CHECK: %[[PRE:[^ ]+]] = f32[16,512,64,128]{3,2,1,0} reduce(\n"
       "CHECK-SAME: dimensions={0}\n"
       "CHECK: ROOT %{{[^ ]+}} = f32[16,64]{1,0} reduce(%[[PRE]], %[[C]]), dimensions={1,3}\n"},
      {"ReductionSplitterTest.DontSplitReductionWithSmallDimensions", {"ignore_small_dims=true"}},
      {"ReductionSplitterTest.DontSplitReductionsWithContiguousDimensions", {"ignore_small_dims=false"}},
  };
}

}  // namespace passlab::conformance
