#include "core/ir/str_util.h"
#include "passes/expanders/stable_sort_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

constexpr char kCompareKeys[] = R"(
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)";

TEST(StableSortExpanderTest, AddsIotaOperandAndTieBreak) {
  PassResult r = RunPass(std::make_unique<StableSortExpander>(), StrCat(kCompareKeys, R"(
ENTRY e {
  k = s32[8] parameter(0)
  v = f32[8] parameter(1)
  ROOT s = (s32[8], f32[8]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%less.stable", "compare(", "direction=LT", "not(", "or(", "iota()", "iota_dimension=0",
                               "(s32[8]{0}, f32[8]{0}, s32[8]{0}) sort(", "NOT:is_stable=true"}))
      << r.text;
}

// The evaluator sorts stably whatever is_stable says, so the tie-break is
// checked by sorting keys with many ties and looking at the payload order.
TEST(StableSortExpanderTest, TiesKeepTheirOriginalOrder) {
  PassResult r = RunPass(std::make_unique<StableSortExpander>(), StrCat(kCompareKeys, R"(
ENTRY e {
  k = s32[8] constant({3, 1, 3, 1, 2, 3, 1, 2})
  v = f32[8] constant({0, 1, 2, 3, 4, 5, 6, 7})
  ROOT s = (s32[8], f32[8]) sort(k, v), dimensions={0}, is_stable=true, to_apply=less
})"));
  ASSERT_TRUE(r.changed);
  // Reverse the iota the expander added: a comparator that ignored it (or
  // broke ties the wrong way) would now put the ties in reverse order.
  for (HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() != HloOpcode::kIota) continue;
    HloInstruction* reversed = r.module->entry_computation()->AddInstruction(
        HloInstruction::CreateReverse(inst->shape(), inst, {0}));
    std::vector<HloInstruction*> users = inst->users();
    for (HloInstruction* u : users) {
      if (u != reversed) u->ReplaceUsesOfOperand(inst, reversed);
    }
  }
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& payload = out->tuple_elements()[1];
  std::vector<double> got;
  for (int64_t i = 0; i < payload.element_count(); ++i) got.push_back(payload.GetDouble(i));
  // With the reversed iota the comparator's tie-break reverses each run of
  // equal keys: proof that ties are decided by the iota operand.
  EXPECT_EQ(got, (std::vector<double>{6, 3, 1, 7, 4, 5, 2, 0}));
}

TEST(StableSortExpanderTest, ReusesAnExistingIotaOperand) {
  PassResult r = RunPass(std::make_unique<StableSortExpander>(), R"(
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = f32[4,6] parameter(0)
  i = s32[4,6] iota(), iota_dimension=1
  ROOT s = (f32[4,6], s32[4,6]) sort(k, i), dimensions={1}, is_stable=true, to_apply=less
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // No second iota; the sort keeps its two operands.
  EXPECT_TRUE(Matches(r.text, {"(f32[4,6]{1,0}, s32[4,6]{1,0}) sort(", "NOT:iota.1"})) << r.text;
}

TEST(StableSortExpanderTest, EdgeCaseSingleOperandSortReturnsArray) {
  PassResult r = RunPass(std::make_unique<StableSortExpander>(), R"(
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GT
}
ENTRY e {
  k = f32[3,5] parameter(0)
  ROOT s = f32[3,5] sort(k), dimensions={0}, is_stable=true, to_apply=gt
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"s32[3,5]{1,0} iota(), iota_dimension=0", "sort(", "ROOT", "get-tuple-element(",
                               "index=0"}))
      << r.text;
}

TEST(StableSortExpanderTest, LeavesUnstableSorts) {
  EXPECT_FALSE(RunPass(std::make_unique<StableSortExpander>(), StrCat(kCompareKeys, R"(
ENTRY e {
  k = s32[8] parameter(0)
  v = f32[8] parameter(1)
  ROOT s = (s32[8], f32[8]) sort(k, v), dimensions={0}, to_apply=less
})")).changed);
}

TEST(StableSortExpanderTest, CorpusStableSortsStayValid) {
  CorpusPassStats stats = CheckPassOnCorpus("is_stable=true", [] { return std::make_unique<StableSortExpander>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
}

}  // namespace
}  // namespace passlab
