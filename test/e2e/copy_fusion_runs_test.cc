// The multi-output fusions CopyFusion forms compile and run on the CPU
// backend with the evaluator's results: a loop fusion that takes in two
// copies, a multi-output fusion that takes in a copy behind a
// get-tuple-element and a bitcast, and a root copy.
#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/verify/hlo_verifier.h"
#include "passes/fusion/copy_fusion.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

void ExpectCopyFusionRuns(const std::string& text, int64_t expected_outputs) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  std::vector<Literal> args = MakeRandomArguments(*module.entry_computation(), 7);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(module, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();

  HloPassPipeline pipeline("copy-fusion");
  pipeline.AddPass<CopyFusion>();
  absl::StatusOr<bool> changed = pipeline.Run(module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  ASSERT_TRUE(*changed);
  ASSERT_TRUE(VerifyModule(module).ok());
  const HloInstruction* fusion = nullptr;
  for (const HloInstruction* i : module.entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kFusion) fusion = i;
  }
  ASSERT_NE(fusion, nullptr);
  ASSERT_TRUE(fusion->shape().IsTuple()) << PrintModule(module);
  EXPECT_EQ(fusion->shape().tuple_shapes_size(), expected_outputs) << PrintModule(module);

  absl::StatusOr<Literal> actual = RunOnCpu(module, args);
  ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << PrintModule(module);
  absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-5, .rel = 1e-5});
  EXPECT_TRUE(same.ok()) << same.message() << "\n" << PrintModule(module);
}

TEST(CopyFusionRunsTest, LoopFusionWithTwoCopies) {
  ExpectCopyFusionRuns(R"(
HloModule m
fused {
  p = f32[16,24]{1,0} parameter(0)
  q = f32[16,24]{1,0} parameter(1)
  mul = f32[16,24]{1,0} multiply(p, q)
  ROOT neg = f32[16,24]{1,0} negate(mul)
}
ENTRY e {
  a = f32[16,24]{1,0} parameter(0)
  b = f32[16,24]{1,0} parameter(1)
  f = f32[16,24]{1,0} fusion(a, b), kind=kLoop, calls=fused
  c1 = f32[16,24]{1,0} copy(f)
  c2 = f32[16,24]{1,0} copy(f)
  s = f32[16,24]{1,0} add(f, c1)
  ROOT t = (f32[16,24]{1,0}, f32[16,24]{1,0}, f32[16,24]{1,0}) tuple(s, c1, c2)
})", 3);
}

TEST(CopyFusionRunsTest, MultiOutputFusionWithBitcastCopy) {
  ExpectCopyFusionRuns(R"(
HloModule m
fused {
  p = f32[8,32]{1,0} parameter(0)
  e = f32[8,32]{1,0} exponential(p)
  n = f32[8,32]{1,0} negate(p)
  ROOT t = (f32[8,32]{1,0}, f32[8,32]{1,0}) tuple(e, n)
}
ENTRY e {
  a = f32[8,32]{1,0} parameter(0)
  f = (f32[8,32]{1,0}, f32[8,32]{1,0}) fusion(a), kind=kLoop, calls=fused
  g0 = f32[8,32]{1,0} get-tuple-element(f), index=0
  g1 = f32[8,32]{1,0} get-tuple-element(f), index=1
  bc = f32[256]{0} bitcast(g1)
  c = f32[256]{0} copy(bc)
  ROOT t = (f32[8,32]{1,0}, f32[256]{0}) tuple(g0, c)
})", 3);
}

TEST(CopyFusionRunsTest, RootCopyOfBroadcastTransposeFusion) {
  ExpectCopyFusionRuns(R"(
HloModule m
fused {
  two = f32[] constant(2)
  b = f32[16,32]{1,0} broadcast(two), dimensions={}
  s = f32[16,32]{1,0} sqrt(b)
  ROOT t = f32[32,16]{1,0} transpose(s), dimensions={1,0}
}
ENTRY e {
  f = f32[32,16]{1,0} fusion(), kind=kInput, calls=fused
  ROOT c = f32[32,16]{1,0} copy(f)
})", 2);
}

}  // namespace
}  // namespace passlab
