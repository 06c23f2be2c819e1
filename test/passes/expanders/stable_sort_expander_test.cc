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
  // As XLA's stable_sort_expander.cc: the comparator c (cloned with the
  // iota's two parameters) becomes select(c(a,b) == c(b,a), iota_a < iota_b,
  // c(a,b)).
  EXPECT_TRUE(Matches(r.text, {"%less.clone", "compare(%a.1, %b.1), direction=LT", "compare(%b.1, %a.1), direction=LT",
                               "direction=EQ", "%p.2.lhs = s32[] parameter(4)", "%p.2.rhs = s32[] parameter(5)",
                               "compare(%p.2.lhs, %p.2.rhs), direction=LT", "ROOT", "pred[] select(", "iota()",
                               "iota_dimension=0", "(s32[8]{0}, f32[8]{0}, s32[8]{0}) sort(", "NOT:is_stable=true"}))
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

// XLA's MultipleSortsSingleComputationWithIota: two sorts share a
// comparator and reuse an iota; the comparator edited in place must not
// change the other sort's, so the first one gets its own copy.
TEST(StableSortExpanderTest, SharedComparatorIsClonedBeforeEditing) {
  PassResult r = RunPass(std::make_unique<StableSortExpander>(), R"(
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k0 = f32[4,6] parameter(0)
  k1 = f32[4,6] parameter(1)
  i = s32[4,6] iota(), iota_dimension=1
  s0 = (f32[4,6], s32[4,6]) sort(k0, i), dimensions={1}, is_stable=true, to_apply=less
  s1 = (f32[4,6], s32[4,6]) sort(k1, i), dimensions={1}, is_stable=true, to_apply=less
  g0 = f32[4,6] get-tuple-element(s0), index=0
  g1 = f32[4,6] get-tuple-element(s1), index=0
  ROOT add = f32[4,6] add(g0, g1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  const HloComputation* c0 = nullptr;
  const HloComputation* c1 = nullptr;
  for (HloInstruction* inst : r.module->entry_computation()->instructions()) {
    if (inst->opcode() != HloOpcode::kSort) continue;
    (c0 == nullptr ? c0 : c1) = inst->to_apply();
    EXPECT_FALSE(inst->attrs().is_stable);
    EXPECT_EQ(inst->to_apply()->root_instruction()->opcode(), HloOpcode::kSelect);
  }
  EXPECT_NE(c0, c1) << r.text;
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
