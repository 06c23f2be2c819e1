// Priority fusion's kernels must compile on the CPU backend and compute
// what the evaluator computes: hand-written modules (elementwise chains,
// reductions with elementwise producers and an epilogue, transposes,
// multi-user producers, an MLP layer and a softmax) go through
// priority-fusion (each device of the performance model) and then
// fusion-wrapper, are compiled by CpuKernelCompiler (and each kernel by
// GpuKernelCompiler, to PTX) and run; and on XLA's
// test corpus every fusion priority fusion creates passes
// CpuKernelCompiler::CheckCompilable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "passes/fusion/fusion_wrapper.h"
#include "passes/fusion/priority_fusion.h"
#include "test/corpus_util.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

struct Case {
  const char* name;
  const char* hlo;
};

const Case kCases[] = {
    {"elementwise_chain", R"(
HloModule chain
ENTRY main {
  a = f32[64,33]{1,0} parameter(0)
  b = f32[64,33]{1,0} parameter(1)
  s = f32[64,33]{1,0} add(a, b)
  e = f32[64,33]{1,0} exponential(s)
  n = f32[64,33]{1,0} negate(e)
  m = f32[64,33]{1,0} multiply(n, a)
  ROOT t = f32[64,33]{1,0} tanh(m)
})"},
    {"reduce_with_producers_and_epilogue", R"(
HloModule reduce
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  v = f32[96]{0} parameter(0)
  m = bf16[40,96]{1,0} parameter(1)
  e = f32[96]{0} exponential(v)
  b = f32[40,96]{1,0} broadcast(e), dimensions={1}
  c = f32[40,96]{1,0} convert(m)
  mul = f32[40,96]{1,0} multiply(b, c)
  zero = f32[] constant(0)
  r = f32[40]{0} reduce(mul, zero), dimensions={1}, to_apply=add
  cv = bf16[40]{0} convert(r)
  ROOT bc = bf16[1,40]{1,0} bitcast(cv)
})"},
    {"column_reduce_epilogue", R"(
HloModule column
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[128,24]{1,0} parameter(0)
  sq = f32[128,24]{1,0} multiply(a, a)
  zero = f32[] constant(0)
  r = f32[24]{0} reduce(sq, zero), dimensions={0}, to_apply=add
  ROOT s = f32[24]{0} sqrt(r)
})"},
    {"transposes", R"(
HloModule transposes
ENTRY main {
  a = f32[48,64]{1,0} parameter(0)
  b = f32[64,48]{1,0} parameter(1)
  t = f32[64,48]{1,0} transpose(a), dimensions={1,0}
  s = f32[64,48]{1,0} add(t, b)
  e = f32[64,48]{1,0} exponential(s)
  t2 = f32[48,64]{1,0} transpose(e), dimensions={1,0}
  ROOT n = f32[48,64]{1,0} negate(t2)
})"},
    {"multi_user_producers", R"(
HloModule multi
ENTRY main {
  x = f32[1000]{0} parameter(0)
  y = f32[1000]{0} parameter(1)
  p = f32[1000]{0} power(x, y)
  l = f32[1000]{0} log(x)
  a = f32[1000]{0} add(p, l)
  m = f32[1000]{0} multiply(p, l)
  s = f32[1000]{0} subtract(a, m)
  c = f32[1000]{0} cosine(p)
  ROOT t = (f32[1000]{0}, f32[1000]{0}) tuple(s, c)
})"},
    {"mlp_layer", R"(
HloModule mlp
ENTRY main {
  x = f32[16,32]{1,0} parameter(0)
  w = f32[32,24]{1,0} parameter(1)
  bias = f32[24]{0} parameter(2)
  d = f32[16,24]{1,0} dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[16,24]{1,0} broadcast(bias), dimensions={1}
  s = f32[16,24]{1,0} add(d, bb)
  zero = f32[] constant(0)
  zb = f32[16,24]{1,0} broadcast(zero), dimensions={}
  ROOT r = f32[16,24]{1,0} maximum(s, zb)
})"},
    {"softmax", R"(
HloModule softmax
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[32,100]{1,0} parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[32]{0} reduce(x, ninf), dimensions={1}, to_apply=max
  mb = f32[32,100]{1,0} broadcast(mx), dimensions={0}
  sh = f32[32,100]{1,0} subtract(x, mb)
  ex = f32[32,100]{1,0} exponential(sh)
  zero = f32[] constant(0)
  sm = f32[32]{0} reduce(ex, zero), dimensions={1}, to_apply=add
  sb = f32[32,100]{1,0} broadcast(sm), dimensions={0}
  ROOT d = f32[32,100]{1,0} divide(ex, sb)
})"},
    // XLA: PriorityFusionTest.FuseProducerConsumerMergedNotTooLarge (a
    // reduce inside the consumer, not at its root).
    {"reduce_inside_consumer", R"(
HloModule module
fused_computation.1 {
  iota.9.7 = s32[3,1,1]{2,1,0} iota(), iota_dimension=0
  param_3.29 = s32[] parameter(2)
  pad.2.7 = s32[3,1,2]{2,1,0} pad(iota.9.7, param_3.29), padding=0_0x0_0x0_1
  param_2.39 = s32[] parameter(1)
  broadcast.76.1 = s32[3,1,2]{2,1,0} broadcast(param_2.39), dimensions={}
  compare.9.1 = pred[3,1,2]{2,1,0} compare(pad.2.7, broadcast.76.1), direction=GE
  param_1.73 = s32[2]{0} parameter(0)
  broadcast.78.1 = s32[3,2]{1,0} broadcast(param_1.73), dimensions={1}
  bitcast.1 = s32[3,2]{1,0} bitcast(pad.2.7)
  compare.10.1 = pred[3,2]{1,0} compare(bitcast.1, broadcast.78.1), direction=LE
  bitcast.2 = pred[3,1,2]{2,1,0} bitcast(compare.10.1)
  ROOT and.3.1 = pred[3,1,2]{2,1,0} and(compare.9.1, bitcast.2)
}
and {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT and = pred[] and(x, y)
}
fused_computation.2 {
  param0 = pred[3,1,2]{2,1,0} parameter(0)
  slice = pred[1,1,2]{2,1,0} slice(param0), slice={[0:1], [0:1], [0:2]}
  bitcast = pred[2]{0} bitcast(slice)
  init = pred[] constant(true)
  reduce = pred[2]{0} reduce(param0, init), dimensions={0,1}, to_apply=and
  and = pred[2]{0} and(bitcast, reduce)
  pad = pred[3]{0} pad(and, init), padding=0_1
  broadcast = pred[3,2]{1,0} broadcast(pad), dimensions={0}
  bitcast2 = pred[6]{0} bitcast(broadcast)
  broadcast2 = pred[2,3]{1,0} broadcast(pad), dimensions={1}
  bitcast3 = pred[6]{0} bitcast(broadcast2)
  ROOT and2 = pred[6]{0} and(bitcast2, bitcast3)
}
ENTRY main {
  p0 = s32[2]{0} parameter(0)
  p1 = s32[] parameter(1)
  p2 = s32[] parameter(2)
  fusion1 = pred[3,1,2]{2,1,0} fusion(p0, p1, p2), kind=kLoop, calls=fused_computation.1
  ROOT fusion2 = pred[6]{0} fusion(fusion1), kind=kInput, calls=fused_computation.2
})"},
};

TEST(PriorityFusionRunsTest, FusedModulesCompileAndMatchTheEvaluator) {
  for (const Case& c : kCases) {
    for (const char* device : {"H100", "cpu", "A100"}) {
      SCOPED_TRACE(StrCat(c.name, " on ", device));
      absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(c.hlo);
      ASSERT_TRUE(m.ok()) << m.status().message();
      std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
      absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
      ASSERT_TRUE(expected.ok()) << expected.status().message();
      HloPassPipeline pipeline("priority-fusion-e2e");
      PriorityFusionOptions options;
      options.device = device;
      pipeline.AddPass<PriorityFusion>(options);
      pipeline.AddPass<FusionWrapper>();
      absl::StatusOr<bool> changed = pipeline.Run(**m);
      ASSERT_TRUE(changed.ok()) << changed.status().message();
      ASSERT_TRUE(VerifyModule(**m).ok());
      for (const HloInstruction* h : (*m)->entry_computation()->instructions()) {
        if (h->opcode() != HloOpcode::kFusion) continue;
        absl::Status s = CpuKernelCompiler::CheckCompilable(*h);
        EXPECT_TRUE(s.ok()) << s.message() << "\n" << PrintModule(**m);
        // The GPU backend compiles the same kernels (to PTX; no device needed).
        absl::StatusOr<GpuKernel> g = GpuKernelCompiler().Compile(*h);
        EXPECT_TRUE(g.ok()) << h->name() << ": " << g.status().message() << "\n" << PrintModule(**m);
      }
      absl::StatusOr<Literal> actual = RunOnCpu(**m, args);
      ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << PrintModule(**m);
      absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-4, .rel = 1e-4});
      EXPECT_TRUE(same.ok()) << same.message() << "\n" << PrintModule(**m);
    }
  }
}

TEST(PriorityFusionRunsTest, EveryFusionItBuildsOnTheCorpusIsCompilable) {
  std::vector<std::string> texts = ReadCorpusTexts();
  if (texts.empty()) GTEST_SKIP() << "no corpus at ../shared/corpus";
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int modules = 0, fusions = 0;
  for (const std::string& text : texts) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "corpus.hlo", options);
    if (!m.ok() || (*m)->instruction_count() > 2000 || !VerifyModule(**m).ok()) continue;
    absl::flat_hash_set<const HloInstruction*> old;
    for (const HloComputation* c : (*m)->computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (i->opcode() == HloOpcode::kFusion) old.insert(i);
      }
    }
    HloPassPipeline pipeline("priority-fusion-corpus");
    pipeline.AddPass<PriorityFusion>();
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    ASSERT_TRUE(changed.ok()) << changed.status().message() << "\n" << text;
    ++modules;
    if (!*changed) continue;
    for (const HloComputation* c : (*m)->computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (i->opcode() != HloOpcode::kFusion || old.contains(i)) continue;
        ++fusions;
        absl::Status s = CpuKernelCompiler::CheckCompilable(*i);
        EXPECT_TRUE(s.ok()) << s.message() << "\n" << text;
      }
    }
  }
  std::printf("priority fusion on the corpus: %d modules, %d new fusions\n", modules, fusions);
  EXPECT_GT(fusions, 500);
}

}  // namespace
}  // namespace passlab
