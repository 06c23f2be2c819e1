#include "core/ir/str_util.h"
#include "passes/expanders/bitcast_dtypes_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// RunPass compares every result with the evaluator's bitcast-convert on
// random inputs, bit for bit (a float compares equal only to itself).
TEST(BitcastDtypesExpanderTest, WideToNarrowShiftsMasksAndConverts) {
  PassResult r = RunPass(std::make_unique<BitcastDtypesExpander>(), R"(
ENTRY e {
  x = f32[3] parameter(0)
  ROOT b = u8[3,4] bitcast-convert(x)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"u32[3]{0} bitcast-convert(", "u32[3,4]{1,0} broadcast(", "dimensions={0}",
                               "iota(), iota_dimension=1", "shift-right-logical(", "and(", "u8[3,4]{1,0} convert(",
                               "NOT:u8[3,4]{1,0} bitcast-convert("}))
      << r.text;
}

TEST(BitcastDtypesExpanderTest, NarrowToWideShiftsAndOrReduces) {
  PassResult r = RunPass(std::make_unique<BitcastDtypesExpander>(), R"(
ENTRY e {
  x = u8[2,4] parameter(0)
  ROOT b = f32[2] bitcast-convert(x)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%bitcast_or_u32", "or(", "ENTRY", "u32[2,4]{1,0} convert(", "shift-left(",
                               "u32[2]{0} reduce(", "dimensions={1}", "to_apply=%bitcast_or_u32",
                               "f32[2]{0} bitcast-convert("}))
      << r.text;
}

// The byte order spelled out: 0x3f800000 (1.0f) is {0x00, 0x00, 0x80, 0x3f}.
TEST(BitcastDtypesExpanderTest, LeastSignificantPartComesFirst) {
  PassResult r = RunPass(std::make_unique<BitcastDtypesExpander>(), R"(
ENTRY e {
  x = f32[1] constant({1})
  bytes = u8[1,4] bitcast-convert(x)
  back = f32[1] bitcast-convert(bytes)
  ROOT t = (u8[1,4], f32[1]) tuple(bytes, back)
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  const uint64_t want[] = {0x00, 0x00, 0x80, 0x3f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out->tuple_elements()[0].GetBits(i), want[i]) << i;
  EXPECT_EQ(out->tuple_elements()[1].GetDouble(0), 1.0);
}

TEST(BitcastDtypesExpanderTest, EdgeCasesSignedFloatsAndSixtyFourBits) {
  PassResult r = RunPass(std::make_unique<BitcastDtypesExpander>(), R"(
ENTRY e {
  a = s16[5,4] parameter(0)
  wide = f64[5] bitcast-convert(a)
  narrow = s16[5,4] bitcast-convert(wide)
  h = bf16[3,2] parameter(1)
  w = s32[3] bitcast-convert(h)
  d = f64[2] parameter(2)
  parts = s32[2,2] bitcast-convert(d)
  ROOT t = (f64[5], s16[5,4], s32[3], s32[2,2]) tuple(wide, narrow, w, parts)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"%bitcast_or_u64", "%bitcast_or_u32", "ENTRY"})) << r.text;
  ASSERT_NE(r.module, nullptr);
  for (HloInstruction* i : r.module->entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kBitcastConvert) continue;
    EXPECT_EQ(PrimitiveBitWidth(i->shape().element_type()), PrimitiveBitWidth(i->operand(0)->shape().element_type()))
        << i->name();
  }
}

TEST(BitcastDtypesExpanderTest, LeavesSameWidthBitcasts) {
  EXPECT_FALSE(RunPass(std::make_unique<BitcastDtypesExpander>(), R"(
ENTRY e {
  x = f32[4] parameter(0)
  ROOT b = s32[4] bitcast-convert(x)
})").changed);
}

TEST(BitcastDtypesExpanderTest, CorpusModulesStillVerifyAndCompute) {
  CorpusPassStats stats =
      CheckPassOnCorpus("bitcast-convert(", [] { return std::make_unique<BitcastDtypesExpander>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
  EXPECT_GT(stats.evaluated, 0);
}

}  // namespace
}  // namespace passlab
