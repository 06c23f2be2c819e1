// FusionWrapper. Ports of xla/backends/gpu/transforms/fusion_wrapper_test.cc
// (names as there) and passlab's own cases, each checked on the evaluator
// by RunPass.
#include "passes/fusion/fusion_wrapper.h"

#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

// XLA: FusionWrapperTest.ControlDependency.
TEST(FusionWrapperTest, ControlDependency) {
  PassResult r = RunPass(std::make_unique<FusionWrapper>(), R"(
HloModule TestModule
fusion {
  ROOT param = f32[] parameter(0)
}
ENTRY main {
  param = f32[] parameter(0)
  fusion = f32[] fusion(param), kind=kLoop, calls=fusion
  constant_one = f32[] constant(1)
  ROOT add = f32[] add(param, constant_one), control-predecessors={fusion}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%wrapped_add_computation", "add(%param_0, %param_1)", "ENTRY",
                               "ROOT %wrapped_add = f32[] fusion(%param, %constant_one), kind=kLoop, "
                               "calls=%wrapped_add_computation, control-predecessors={%fusion}"}))
      << r.text;
}

// XLA: FusionWrapperTest.Copy — copies are the runtime's.
TEST(FusionWrapperTest, Copy) {
  PassResult r = RunPass(std::make_unique<FusionWrapper>(), R"(
HloModule Copy
ENTRY main {
  parameter.1 = f32[5]{0} parameter(0)
  ROOT copy.3 = f32[5]{0} copy(parameter.1)
})");
  EXPECT_FALSE(r.changed);
}

// XLA: FusionWrapperTest.WhileInFusion — fused computations are not
// entered.
TEST(FusionWrapperTest, WhileInFusion) {
  PassResult r = RunPass(std::make_unique<FusionWrapper>(), R"(
HloModule While
body {
  parameter.5 = (f32[5]{0}) parameter(0)
  constant_8 = f32[] constant(0)
  broadcast.9 = f32[5]{0} broadcast(constant_8), dimensions={}
  ROOT tuple.2 = (f32[5]{0}) tuple(broadcast.9)
}
cond {
  parameter.12 = (f32[5]{0}) parameter(0)
  ROOT constant_1 = pred[] constant(false)
}
fusion {
  parameter.1 = f32[5]{0} parameter(0)
  copy.3 = f32[5]{0} copy(parameter.1)
  tuple = (f32[5]{0}) tuple(copy.3)
  ROOT while.19 = (f32[5]{0}) while(tuple), condition=cond, body=body
}
ENTRY main {
  parameter.1 = f32[5]{0} parameter(0)
  ROOT fusion = (f32[5]{0}) fusion(parameter.1), kind=kLoop, calls=fusion
})");
  EXPECT_FALSE(r.changed);
}

// A while body's ops are wrapped; a reduce becomes a kInput fusion with
// both operands as parameters; a custom call stays.
TEST(FusionWrapperTest, WrapsWhileBodyAndReduceButNotCustomCall) {
  PassResult r = RunPass(std::make_unique<FusionWrapper>(), R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
body {
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4]{0} get-tuple-element(p), index=1
  one = s32[] constant(1)
  n = s32[] add(i, one)
  e = f32[4]{0} exponential(v)
  ROOT t = (s32[], f32[4]{0}) tuple(n, e)
}
cond {
  p = (s32[], f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
ENTRY main {
  x = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(zero, x)
  w = (s32[], f32[4]{0}) while(init), condition=cond, body=body
  y = f32[4]{0} get-tuple-element(w), index=1
  z = f32[] constant(0)
  ROOT r = f32[] reduce(y, z), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%wrapped_add = s32[] fusion(%i, %one), kind=kLoop",
                               "%wrapped_exponential = f32[4]{0} fusion(%v), kind=kLoop",
                               "%wrapped_compare = pred[] fusion(%i",
                               "ROOT %wrapped_reduce = f32[] fusion(%y, %z), kind=kInput"}))
      << r.text;
}

// XLA's FusionWrapper picks the kind by ChooseFusionKind(op, op)
// (fusion_wrapper_base.cc, gpu_fusible.cc): kInput for a transpose the
// tiled transpose emitter takes (GetDescriptionForTiledTransposeEmitter,
// ir_emission_utils.cc: [147,64] -> [64,147] after normalization), kLoop
// for one keeping a 512-float minor dimension. As XLA wraps the ResNet-50
// step's weight transposes (step 77 of
// test/conformance/data/xla_resnet50_step_h200.tar.xz).
TEST(FusionWrapperTest, TiledTransposeIsAnInputFusion) {
  PassResult r = RunPass(std::make_unique<FusionWrapper>(), R"(
HloModule m
ENTRY main {
  w = f32[7,7,3,64]{3,2,1,0} parameter(0)
  v = f32[3,3,512,512]{3,2,1,0} parameter(1)
  t = f32[64,7,7,3]{3,2,1,0} transpose(w), dimensions={3,0,1,2}
  u = f32[512,3,3,512]{3,2,1,0} transpose(v), dimensions={2,0,1,3}
  ROOT r = (f32[64,7,7,3]{3,2,1,0}, f32[512,3,3,512]{3,2,1,0}) tuple(t, u)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ENTRY", "%wrapped_transpose = f32[64,7,7,3]{3,2,1,0} fusion(%w), kind=kInput",
                               "%wrapped_transpose.1 = f32[512,3,3,512]{3,2,1,0} fusion(%v), kind=kLoop"}))
      << r.text;
}

}  // namespace
}  // namespace passlab
