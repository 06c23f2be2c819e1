#include "passes/fusion/fusion_merger.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

// A loop fusion `f` (negate(p) + 1 over f32[64]) used by two loop fusions.
constexpr char kProducerWithTwoUsers[] = R"(
fp {
  a = f32[64] parameter(0)
  n = f32[64] negate(a)
  one = f32[] constant(1)
  b = f32[64] broadcast(one), dimensions={}
  ROOT s = f32[64] add(n, b)
}
fu1 {
  x = f32[64] parameter(0)
  y = f32[64] parameter(1)
  ROOT m = f32[64] multiply(x, y)
}
fu2 {
  x = f32[64] parameter(0)
  ROOT e = f32[64] exponential(x)
}
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  f = f32[64] fusion(p), kind=kLoop, calls=fp
  u1 = f32[64] fusion(f, q), kind=kLoop, calls=fu1
  u2 = f32[64] fusion(f), kind=kLoop, calls=fu2
  ROOT t = (f32[64], f32[64]) tuple(u1, u2)
})";

TEST(FusionMergerTest, MergesLoopFusionIntoAllItsUsers) {
  // Today: read p, write f, read f twice (4 arrays); merged: u2 reads p
  // (u1 reads p as well: 2 arrays).
  PassResult r = RunPass(std::make_unique<FusionMerger>(), kProducerWithTwoUsers);
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(CountFusions(*r.module), 2) << r.text;
  EXPECT_EQ(r.module->GetComputationWithName("fp"), nullptr) << r.text;
  for (const char* user : {"u1", "u2"}) {
    const HloInstruction* u = r.module->entry_computation()->GetInstructionWithName(user);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(CountOpcode(*u->fused_instructions_computation(), HloOpcode::kNegate), 1) << r.text;
  }
}

TEST(FusionMergerTest, KeepsProducerWhoseValueIsAnOutput) {
  std::string hlo = kProducerWithTwoUsers;
  hlo.replace(hlo.find("ROOT t = (f32[64], f32[64]) tuple(u1, u2)"), 42,
              "ROOT t = (f32[64], f32[64], f32[64]) tuple(u1, u2, f)");
  EXPECT_FALSE(RunPass(std::make_unique<FusionMerger>(), hlo).changed);
}

TEST(FusionMergerTest, KeepsProducerWhenBytesWouldGrow) {
  // The producer reads three arrays and writes one; five users would each
  // read the three: 15 arrays instead of 3 + 1 + 5.
  PassResult r = RunPass(std::make_unique<FusionMerger>(), R"(
fp {
  a = f32[256] parameter(0)
  b = f32[256] parameter(1)
  c = f32[256] parameter(2)
  s = f32[256] add(a, b)
  ROOT m = f32[256] multiply(s, c)
}
fn1 {
  x = f32[256] parameter(0)
  ROOT n = f32[256] negate(x)
}
fn2 {
  x = f32[256] parameter(0)
  ROOT n = f32[256] negate(x)
}
fn3 {
  x = f32[256] parameter(0)
  ROOT n = f32[256] negate(x)
}
fn4 {
  x = f32[256] parameter(0)
  ROOT n = f32[256] negate(x)
}
fn5 {
  x = f32[256] parameter(0)
  ROOT n = f32[256] negate(x)
}
ENTRY e {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  r = f32[256] parameter(2)
  f = f32[256] fusion(p, q, r), kind=kLoop, calls=fp
  u1 = f32[256] fusion(f), kind=kLoop, calls=fn1
  u2 = f32[256] fusion(f), kind=kLoop, calls=fn2
  u3 = f32[256] fusion(f), kind=kLoop, calls=fn3
  u4 = f32[256] fusion(f), kind=kLoop, calls=fn4
  u5 = f32[256] fusion(f), kind=kLoop, calls=fn5
  ROOT t = (f32[256], f32[256], f32[256], f32[256], f32[256]) tuple(u1, u2, u3, u4, u5)
})");
  EXPECT_FALSE(r.changed) << r.text;
}

TEST(FusionMergerTest, KeepsReductionFusionsAndUnfusedUsers) {
  PassResult r = RunPass(std::make_unique<FusionMerger>(), std::string(kAddF32Reducer) + R"(
fr {
  a = f32[8,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(a, z), dimensions={1}, to_apply=add
}
fl {
  a = f32[8] parameter(0)
  ROOT n = f32[8] negate(a)
}
fn1 {
  x = f32[8] parameter(0)
  ROOT e = f32[8] exponential(x)
}
fn2 {
  x = f32[8] parameter(0)
  ROOT e = f32[8] exponential(x)
}
ENTRY e {
  p = f32[8,64] parameter(0)
  f = f32[8] fusion(p), kind=kInput, calls=fr
  u1 = f32[8] fusion(f), kind=kLoop, calls=fn1
  u2 = f32[8] fusion(f), kind=kLoop, calls=fn2
  g = f32[8] fusion(u2), kind=kLoop, calls=fl
  d = f32[8] sort(g), dimensions={0}, to_apply=lt
  ROOT t = (f32[8], f32[8], f32[8]) tuple(u1, g, d)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
})");
  // The input fusion f stays (a reduction); g's user is a sort; u2 merges
  // into its only user g.
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_NE(r.module->entry_computation()->GetInstructionWithName("f"), nullptr) << r.text;
  EXPECT_NE(r.module->entry_computation()->GetInstructionWithName("g"), nullptr) << r.text;
  EXPECT_EQ(r.module->entry_computation()->GetInstructionWithName("u2"), nullptr) << r.text;
  EXPECT_EQ(CountFusions(*r.module), 3) << r.text;
}

TEST(FusionMergerTest, CorpusModulesStayValidAndComputeTheSame) {
  CorpusRunStats stats = RunOnCorpus([] { return std::make_unique<FusionMerger>(); });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("fusion_merger on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules, stats.changed,
              stats.evaluated);
  EXPECT_GT(stats.changed, 5);
}

}  // namespace
}  // namespace passlab
