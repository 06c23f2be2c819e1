// Compiled kernels against the evaluator.
#include "core/codegen/cpu_kernel_compiler.h"

#include <gtest/gtest.h>

#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

using testing::ExpectMatchesEvaluator;

TEST(CpuKernelCompilerTest, GeluFusionMatchesEvaluator) {
  EmitterKind kind;
  ExpectMatchesEvaluator(R"(HloModule m
gelu {
  param = f32[3,37,65] parameter(0)
  c0 = f32[] constant(0.5)
  b0 = f32[3,37,65] broadcast(c0), dimensions={}
  c1 = f32[] constant(1)
  b1 = f32[3,37,65] broadcast(c1), dimensions={}
  c2 = f32[] constant(0.79785)
  b2 = f32[3,37,65] broadcast(c2), dimensions={}
  c3 = f32[] constant(0.044708)
  b3 = f32[3,37,65] broadcast(c3), dimensions={}
  sq = f32[3,37,65] multiply(param, param)
  cube = f32[3,37,65] multiply(sq, param)
  m3 = f32[3,37,65] multiply(cube, b3)
  a1 = f32[3,37,65] add(param, m3)
  m2 = f32[3,37,65] multiply(a1, b2)
  t = f32[3,37,65] tanh(m2)
  a0 = f32[3,37,65] add(t, b1)
  m1 = f32[3,37,65] multiply(a0, b0)
  ROOT r = f32[3,37,65] multiply(param, m1)
}
ENTRY main {
  p = f32[3,37,65] parameter(0)
  ROOT fusion = f32[3,37,65] fusion(p), kind=kLoop, calls=gelu
})", {1e-5, 1e-5, 8}, {}, &kind);
  EXPECT_EQ(kind, EmitterKind::kLoop);
}

TEST(CpuKernelCompilerTest, Bf16GeluFromFixtureMatchesEvaluator) {
  // seed 000's GELU at a small shape, in bf16 (every op rounds to bf16).
  ExpectMatchesEvaluator(R"(HloModule m
gelu {
  param = bf16[2,5,130] parameter(0)
  c0 = bf16[] constant(0.5)
  b0 = bf16[2,5,130] broadcast(c0), dimensions={}
  c1 = bf16[] constant(1)
  b1 = bf16[2,5,130] broadcast(c1), dimensions={}
  c2 = bf16[] constant(0.79785)
  b2 = bf16[2,5,130] broadcast(c2), dimensions={}
  c3 = bf16[] constant(0.044708)
  b3 = bf16[2,5,130] broadcast(c3), dimensions={}
  sq = bf16[2,5,130] multiply(param, param)
  cube = bf16[2,5,130] multiply(sq, param)
  m3 = bf16[2,5,130] multiply(cube, b3)
  a1 = bf16[2,5,130] add(param, m3)
  m2 = bf16[2,5,130] multiply(a1, b2)
  t = bf16[2,5,130] tanh(m2)
  a0 = bf16[2,5,130] add(t, b1)
  m1 = bf16[2,5,130] multiply(a0, b0)
  ROOT r = bf16[2,5,130] multiply(param, m1)
}
ENTRY main {
  p = bf16[2,5,130] parameter(0)
  ROOT fusion = bf16[2,5,130] fusion(p), kind=kLoop, calls=gelu
})", {1e-2, 1e-2, 2});
}

}  // namespace
}  // namespace passlab
