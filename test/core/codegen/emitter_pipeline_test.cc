// The emitter pipeline as named, observable, disableable passes; the
// process-wide kernel cache; clear errors for what cannot be compiled.
#include <gtest/gtest.h>

#include <set>

#include "core/codegen/cpu_kernel_compiler.h"
#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

const char* kFusion = R"(HloModule m
fused {
  a = f32[6,70] parameter(0)
  b = f32[70] parameter(1)
  bb = f32[6,70] broadcast(b), dimensions={1}
  l = f32[6,70] tanh(a)
  t = f32[70,6] transpose(l), dimensions={1,0}
  tt = f32[6,70] transpose(t), dimensions={1,0}
  m = f32[6,70] multiply(l, bb)
  ROOT s = f32[6,70] add(m, tt)
}
ENTRY e {
  p0 = f32[6,70] parameter(0)
  p1 = f32[70] parameter(1)
  ROOT f = f32[6,70] fusion(p0, p1), kind=kLoop, calls=fused
})";

TEST(EmitterPipelineTest, ObserverSeesEveryPassWithTextAndTime) {
  std::vector<EmitterPassSnapshot> seen;
  CpuCompileOptions options;
  options.use_cache = false;
  options.unroll = 2;
  options.observer = [&](const EmitterPassSnapshot& s) { seen.push_back(s); };
  testing::ExpectMatchesEvaluator(kFusion, {1e-5, 1e-5, 8}, options);
  std::set<std::string> names;
  for (const auto& s : seen) names.insert(s.pass_name);
  for (const char* expected : {"inline", "canonicalize", "cse", "unroll", "expand-math", "convert-scf-to-cf",
                               "convert-func-to-llvm", "reconcile-unrealized-casts"}) {
    EXPECT_TRUE(names.contains(expected)) << expected;
  }
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().pass_name, "inline");
  EXPECT_NE(seen.front().before.find("call @"), std::string::npos);
  EXPECT_EQ(seen.front().after.find("call @fused"), std::string::npos);  // inlined
  EXPECT_NE(seen.back().after.find("llvm.func"), std::string::npos);
  for (const auto& s : seen) EXPECT_GE(s.seconds, 0);
}

TEST(EmitterPipelineTest, EveryOptionalPassCanBeDisabled) {
  for (const EmitterPassInfo& pass : EmitterPipelinePasses()) {
    if (!pass.optional) continue;
    SCOPED_TRACE(pass.name);
    CpuCompileOptions options;
    options.use_cache = false;
    options.disabled_passes = {pass.name};
    std::vector<std::string> ran;
    options.observer = [&](const EmitterPassSnapshot& s) { ran.push_back(s.pass_name); };
    options.observer_wants_text = false;
    testing::ExpectMatchesEvaluator(kFusion, {1e-5, 1e-5, 8}, options);
    EXPECT_EQ(std::find(ran.begin(), ran.end(), pass.name), ran.end());
  }
}

TEST(EmitterPipelineTest, NoVectorizeNoUnrollAndAllOptionalPassesOff) {
  CpuCompileOptions options;
  options.use_cache = false;
  options.vectorize = false;
  options.unroll = 1;
  options.llvm_opt_level = 0;
  for (const EmitterPassInfo& pass : EmitterPipelinePasses()) {
    if (pass.optional) options.disabled_passes.push_back(pass.name);
  }
  testing::ExpectMatchesEvaluator(kFusion, {1e-5, 1e-5, 8}, options);
}

TEST(EmitterPipelineTest, RejectsUnknownAndRequiredPasses) {
  auto m = ParseHloModule(kFusion, "t");
  ASSERT_TRUE(m.ok());
  const HloInstruction& root = *(*m)->entry_computation()->root_instruction();
  CpuCompileOptions options;
  options.use_cache = false;
  options.disabled_passes = {"no-such-pass"};
  auto k = CpuKernelCompiler(options).Compile(root);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("unknown emitter pass 'no-such-pass'"), std::string::npos);
  options.disabled_passes = {"convert-func-to-llvm"};
  k = CpuKernelCompiler(options).Compile(root);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.status().message().find("required"), std::string::npos);
}

TEST(EmitterPipelineTest, IdenticalKernelsAreCompiledOnce) {
  auto m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[13,3] parameter(0)
  b = f32[13,3] parameter(1)
  x = f32[13,3] subtract(a, b)
  ROOT y = f32[13,3] subtract(b, a)
})", "t");
  ASSERT_TRUE(m.ok());
  const HloComputation& c = *(*m)->entry_computation();
  CpuKernelCompiler compiler;
  int64_t misses = CpuKernelCompiler::CacheMisses(), hits = CpuKernelCompiler::CacheHits();
  auto k1 = compiler.Compile(*c.GetInstructionWithName("x"));
  auto k2 = compiler.Compile(*c.GetInstructionWithName("y"));
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(CpuKernelCompiler::CacheMisses() - misses, 1);
  EXPECT_EQ(CpuKernelCompiler::CacheHits() - hits, 1);
  EXPECT_EQ((*k1)->name(), "x");
  EXPECT_EQ((*k2)->name(), "y");
  EXPECT_EQ((*k1)->bytes_read(), 2 * 13 * 3 * 4);
  EXPECT_EQ((*k1)->flops(), 13 * 3);
}

TEST(EmitterPipelineTest, UncompilableOpsGiveClearErrors) {
  auto m = ParseHloModule(R"(HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[8] parameter(0)
  c = c64[8] parameter(1)
  s = f32[8] sort(a), dimensions={0}, to_apply=lt
  n = c64[8] negate(c)
  ROOT t = (f32[8], c64[8]) tuple(s, n)
})", "t");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloComputation& c = *(*m)->entry_computation();
  absl::Status s = CpuKernelCompiler::CheckCompilable(*c.GetInstructionWithName("s"));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'sort'"), std::string::npos) << s.message();
  EXPECT_FALSE(CpuKernelCompiler::CanCompile(*c.GetInstructionWithName("n")));
  EXPECT_FALSE(CpuKernelCompiler::CanCompile(*c.root_instruction()));
  EXPECT_FALSE(CpuKernelCompiler().Compile(*c.GetInstructionWithName("n")).ok());
}

}  // namespace
}  // namespace passlab
