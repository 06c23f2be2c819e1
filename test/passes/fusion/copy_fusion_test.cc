// CopyFusion follows XLA's xla/backends/gpu/transforms/copy_fusion_test.cc
// (test names cited on each test), with smaller shapes so that the
// evaluator's before/after check stays fast. XLA's budget tests use
// MaxOperandsAndOutputsPerFusion(); passlab's limit is
// kMaxOperandsAndOutputsPerFusion (passes/fusion/gpu_fusible.h).
#include "passes/fusion/copy_fusion.h"

#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

constexpr char kPrefix[] = R"(
HloModule test_module
scalar_add_computation {
  scalar_lhs.0 = f32[] parameter(0)
  scalar_rhs.0 = f32[] parameter(1)
  ROOT add.0 = f32[] add(scalar_lhs.0, scalar_rhs.0)
}
)";

PassResult RunCopyFusion(const std::string& body) { return RunPass(std::make_unique<CopyFusion>(), StrCat(kPrefix, body)); }

const HloInstruction* FusionIn(const HloModule& m) {
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kFusion) return i;
  }
  return nullptr;
}

// The fused root's operand opcodes, e.g. "transpose,copy,copy".
std::string FusedRootOperands(const HloModule& m) {
  const HloInstruction* fusion = FusionIn(m);
  if (fusion == nullptr) return "no fusion";
  const HloInstruction* root = fusion->fused_expression_root();
  if (root->opcode() != HloOpcode::kTuple) return std::string(HloOpcodeString(root->opcode()));
  std::vector<std::string> names;
  for (const HloInstruction* o : root->operands()) names.push_back(std::string(HloOpcodeString(o->opcode())));
  return Join(names, ",");
}

// The entry root's operand opcodes.
std::string EntryRootOperands(const HloModule& m) {
  const HloInstruction* root = m.entry_computation()->root_instruction();
  std::vector<std::string> names;
  for (const HloInstruction* o : root->operands()) names.push_back(std::string(HloOpcodeString(o->opcode())));
  return Join(names, ",");
}

constexpr char kBroadcastTranspose[] = R"(
fused_computation {
  two = f32[] constant(2.0)
  broadcast = f32[16,32]{1,0} broadcast(two), dimensions={}
  s.1 = f32[16,32]{1,0} sqrt(broadcast)
  ROOT c.1 = f32[32,16]{1,0} transpose(s.1), dimensions={1,0}
}
)";

// XLA: CopyFusionTransposeOfBroadcastedConstantTwoCopies.
TEST(CopyFusionTest, FusesTwoCopiesOfAParameterlessFusion) {
  PassResult r = RunCopyFusion(StrCat(kBroadcastTranspose, R"(
ENTRY main {
  fusion = f32[32,16]{1,0} fusion(), kind=kInput, calls=fused_computation
  copy.1 = f32[32,16]{1,0} copy(fusion)
  copy.2 = f32[32,16]{1,0} copy(fusion)
  ROOT t = (f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(copy.2, copy.1)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "transpose,copy,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,get-tuple-element");
  EXPECT_TRUE(Matches(r.text, {"NOT:copy(%fusion"})) << r.text;
}

// XLA: CopyFusionTransposeOfBroadcastedTwoCopiesWithSharding.
TEST(CopyFusionTest, DropsTheFusionsSharding) {
  PassResult r = RunCopyFusion(StrCat(kBroadcastTranspose, R"(
ENTRY main {
  fusion = f32[32,16]{1,0} fusion(), kind=kInput, calls=fused_computation, sharding={replicated}
  copy.1 = f32[32,16]{1,0} copy(fusion)
  copy.2 = f32[32,16]{1,0} copy(fusion)
  ROOT t = (f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(copy.2, copy.1)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(FusedRootOperands(*r.module), "transpose,copy,copy");
  ASSERT_NE(FusionIn(*r.module), nullptr);
  EXPECT_FALSE(FusionIn(*r.module)->has_sharding());
}

// XLA: CopyFusionTransposeTwoCopies (a transpose reads the parameter).
TEST(CopyFusionTest, KeepsFusionThatIsNotElementwiseInItsParameters) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  param_0.1 = f32[16,32]{1,0} parameter(0)
  s.1 = f32[16,32]{1,0} sqrt(param_0.1)
  ROOT c.1 = f32[32,16]{1,0} transpose(s.1), dimensions={1,0}
}
ENTRY main {
  p = f32[16,32]{1,0} parameter(0)
  fusion = f32[32,16]{1,0} fusion(p), kind=kInput, calls=fused_computation
  copy.1 = f32[32,16]{1,0} copy(fusion)
  copy.2 = f32[32,16]{1,0} copy(fusion)
  ROOT t = (f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(copy.2, copy.1)
})").changed);
}

constexpr char kNegate[] = R"(
fused_computation {
  p1.1 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  mul = f32[4,8,2,2]{3,2,1,0} multiply(p1.1, p1.1)
  ROOT neg = f32[4,8,2,2]{3,2,1,0} negate(mul)
}
)";

// XLA: CopyFusionNegateAndTwoCopies.
TEST(CopyFusionTest, FusesCopiesOfAnElementwiseFusion) {
  PassResult r = RunCopyFusion(StrCat(kNegate, R"(
ENTRY entry {
  p0 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  fusion = f32[4,8,2,2]{3,2,1,0} fusion(p0), kind=kInput, calls=fused_computation
  copy.1 = f32[4,8,2,2]{3,2,1,0} copy(fusion)
  copy.2 = f32[4,8,2,2]{3,2,1,0} copy(fusion)
  ROOT root = (f32[4,8,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) tuple(copy.1, copy.2)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "negate,copy,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,get-tuple-element");
}

// XLA: CopyFusionShouldNotRunWithReduce.
TEST(CopyFusionTest, KeepsReductionFusion) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  p1.1 = f32[8,64]{1,0} parameter(1)
  mul = f32[8,64]{1,0} multiply(p1.1, p1.1)
  const.1 = f32[] parameter(0)
  ROOT reduce.1 = f32[8]{0} reduce(mul, const.1), dimensions={1}, to_apply=scalar_add_computation
}
ENTRY entry {
  p0 = f32[] parameter(0)
  p1 = f32[8,64]{1,0} parameter(1)
  fusion = f32[8] fusion(p0, p1), kind=kInput, calls=fused_computation
  copy.1 = f32[8]{0} copy(fusion)
  copy.2 = f32[8]{0} copy(fusion)
  ROOT root = (f32[8]{0}, f32[8]{0}) tuple(copy.1, copy.2)
})").changed);
  // A parameterless row reduction root is refused by the root check.
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  two = f32[] constant(2.0)
  b = f32[8,64]{1,0} broadcast(two), dimensions={}
  zero = f32[] constant(0)
  ROOT reduce.1 = f32[8]{0} reduce(b, zero), dimensions={1}, to_apply=scalar_add_computation
}
ENTRY entry {
  fusion = f32[8] fusion(), kind=kInput, calls=fused_computation
  ROOT copy.1 = f32[8]{0} copy(fusion)
})").changed);
}

// XLA: CopyFusionShouldRunWithUncopiedReduce.
TEST(CopyFusionTest, FusesCopyOfTheNonReductionOutput) {
  PassResult r = RunCopyFusion(R"(
fused_computation {
  two = f32[] constant(2.0)
  broadcast = f32[8,64]{1,0} broadcast(two), dimensions={}
  mul = f32[8,64]{1,0} multiply(broadcast, broadcast)
  const = f32[] constant(0.0)
  reduce = f32[8]{0} reduce(mul, const), dimensions={1}, to_apply=scalar_add_computation
  ROOT tuple = (f32[8,64]{1,0}, f32[8]{0}) tuple(mul, reduce)
}
ENTRY entry {
  fusion = (f32[8,64]{1,0}, f32[8]) fusion(), kind=kInput, calls=fused_computation
  gte = f32[8,64]{1,0} get-tuple-element(fusion), index=0
  gte.2 = f32[8]{0} get-tuple-element(fusion), index=1
  copy.1 = f32[8,64]{1,0} copy(gte)
  copy.2 = f32[8]{0} copy(gte.2)
  ROOT root = (f32[8,64]{1,0}, f32[8]{0}, f32[8]{0}) tuple(copy.1, gte.2, copy.2)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // The reduction output's copy stays outside.
  EXPECT_EQ(FusedRootOperands(*r.module), "multiply,reduce,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,get-tuple-element,copy");
}

// XLA: CopyFusionShouldNotFuseForSliceMultioutputFusion.
TEST(CopyFusionTest, KeepsSliceMultiOutputFusion) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  two = f32[] constant(2.0)
  mul = f32[4,16]{1,0} broadcast(two), dimensions={}
  slice1 = f32[4,5]{1,0} slice(mul), slice={[0:4],[0:5]}
  slice2 = f32[4,10]{1,0} slice(mul), slice={[0:4],[3:13]}
  ROOT tuple = (f32[4,5]{1,0}, f32[4,10]{1,0}) tuple(slice1, slice2)
}
ENTRY entry {
  fusion = (f32[4,5]{1,0}, f32[4,10]{1,0}) fusion(), kind=kInput, calls=fused_computation
  gte = f32[4,5]{1,0} get-tuple-element(fusion), index=0
  ROOT copy = f32[4,5]{1,0} copy(gte)
})").changed);
}

// XLA: CopyFusionShouldNotRunWithScatter.
TEST(CopyFusionTest, KeepsScatterFusion) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  one = f32[] constant(1)
  input = f32[6,3]{1,0} broadcast(one), dimensions={}
  indices = s32[2,1]{1,0} constant({{1}, {4}})
  updates = f32[2,3]{1,0} broadcast(one), dimensions={}
  ROOT scatter = f32[6,3]{1,0} scatter(input, indices, updates), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=scalar_add_computation
}
ENTRY entry {
  fusion = f32[6,3]{1,0} fusion(), kind=kInput, calls=fused_computation
  ROOT copy = f32[6,3]{1,0} copy(fusion)
})").changed);
}

// XLA: CopyFusionShouldNotRunOutsideEntryComputation.
TEST(CopyFusionTest, KeepsCopiesOutsideTheEntry) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_neg {
  fp = f32[4,8]{1,0} parameter(0)
  ROOT n = f32[4,8]{1,0} negate(fp)
}
condition {
  param = (f32[4,8]{1,0}, s32[]) parameter(0)
  i = s32[] get-tuple-element(param), index=1
  limit = s32[] constant(3)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  tuple_param = (f32[4,8]{1,0}, s32[]) parameter(0)
  x = f32[4,8]{1,0} get-tuple-element(tuple_param), index=0
  i = s32[] get-tuple-element(tuple_param), index=1
  fusion = f32[4,8]{1,0} fusion(x), kind=kLoop, calls=fused_neg
  copy = f32[4,8]{1,0} copy(fusion)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT tuple = (f32[4,8]{1,0}, s32[]) tuple(copy, next)
}
ENTRY main {
  p = f32[4,8]{1,0} parameter(0)
  zero = s32[] constant(0)
  init = (f32[4,8]{1,0}, s32[]) tuple(p, zero)
  ROOT while = (f32[4,8]{1,0}, s32[]) while(init), condition=condition, body=body
})").changed);
}

// XLA: CopyFusionShouldNotRunWithDynamicUpdateSliceInplace (here without
// parameters, so only the in-place rule refuses it).
TEST(CopyFusionTest, KeepsInPlaceDynamicUpdateSliceFusion) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  one = f16[] constant(1)
  zero = f16[] constant(0)
  p.0 = f16[5,4,8]{2,1,0} broadcast(one), dimensions={}
  p.1 = f16[1,4,8]{2,1,0} broadcast(zero), dimensions={}
  c.0 = s32[] constant(2)
  c.1 = s32[] constant(0)
  ROOT dus = f16[5,4,8]{2,1,0} dynamic-update-slice(p.0, p.1, c.0, c.1, c.1)
}
ENTRY entry {
  fusion = f16[5,4,8]{2,1,0} fusion(), kind=kLoop, calls=fused_computation
  copy.1 = f16[5,4,8]{2,1,0} copy(fusion)
  copy.2 = f16[5,4,8]{2,1,0} copy(fusion)
  ROOT root = (f16[5,4,8]{2,1,0}, f16[5,4,8]{2,1,0}) tuple(copy.1, copy.2)
})").changed);
}

// XLA: CopyFusionWithDynamicUpdateSliceNotInplace (copy behind a bitcast).
TEST(CopyFusionTest, FusesBitcastAndCopyOfDynamicUpdateSliceOutput) {
  PassResult r = RunCopyFusion(R"(
fused_computation {
  one = f16[] constant(1)
  zero = f16[] constant(0)
  p.0 = f16[5,4,8]{2,1,0} broadcast(one), dimensions={}
  p.1 = f16[1,4,8]{2,1,0} broadcast(zero), dimensions={}
  c.0 = s32[] constant(2)
  c.1 = s32[] constant(0)
  dus = f16[5,4,8]{2,1,0} dynamic-update-slice(p.0, p.1, c.0, c.1, c.1)
  neg = f16[5,4,8]{2,1,0} negate(dus)
  ROOT tuple = (f16[5,4,8]{2,1,0}, f16[5,4,8]{2,1,0}) tuple(dus, neg)
}
ENTRY entry {
  fusion = (f16[5,4,8]{2,1,0}, f16[5,4,8]{2,1,0}) fusion(), kind=kInput, calls=fused_computation
  gte.0 = f16[5,4,8]{2,1,0} get-tuple-element(fusion), index=0
  gte.1 = f16[5,4,8]{2,1,0} get-tuple-element(fusion), index=1
  bitcast = f16[1,5,4,8]{3,2,1,0} bitcast(gte.0)
  copy = f16[1,5,4,8]{3,2,1,0} copy(bitcast)
  ROOT root = (f16[1,5,4,8]{3,2,1,0}, f16[5,4,8]{2,1,0}) tuple(copy, gte.1)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "dynamic-update-slice,negate,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,get-tuple-element");
  EXPECT_TRUE(Matches(r.text, {"f16[1,5,4,8]{3,2,1,0} bitcast(%dus)", "NOT:bitcast(%gte"})) << r.text;
}

// XLA: CopyFusionTransposeAndThreeCopies.
TEST(CopyFusionTest, FusesThreeCopies) {
  PassResult r = RunCopyFusion(StrCat(kBroadcastTranspose, R"(
ENTRY entry {
  fusion = f32[32,16]{1,0} fusion(), kind=kInput, calls=fused_computation
  copy.1 = f32[32,16]{1,0} copy(fusion)
  copy.2 = f32[32,16]{1,0} copy(fusion)
  copy.3 = f32[32,16]{1,0} copy(fusion)
  ROOT root = (f32[32,16]{1,0}, f32[32,16]{1,0}, f32[32,16]{1,0}) tuple(copy.1, copy.2, copy.3)
})"));
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(FusedRootOperands(*r.module), "transpose,copy,copy,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,get-tuple-element,get-tuple-element");
}

// XLA: CopyFusionRunWithOnlyOneCopy. The root copy becomes a
// get-tuple-element; no dead get-tuple-element for the old value.
TEST(CopyFusionTest, EdgeCaseRootCopy) {
  PassResult r = RunCopyFusion(StrCat(kNegate, R"(
ENTRY entry {
  p0 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  fusion = f32[4,8,2,2]{3,2,1,0} fusion(p0), kind=kInput, calls=fused_computation
  ROOT copy.1 = f32[4,8,2,2]{3,2,1,0} copy(fusion)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "negate,copy");
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kGetTupleElement);
  EXPECT_EQ(root->tuple_index(), 1);
  EXPECT_EQ(r.module->entry_computation()->instruction_count(), 3) << r.text;
}

// XLA: CopyFusionNegateAndTwoCopiesAndTransposeCopy and
// CopyFusionRunWithOnlyOneNonTransposeCopy: a copy changing the layout
// stays outside.
TEST(CopyFusionTest, KeepsLayoutChangingCopiesOutside) {
  PassResult r = RunCopyFusion(StrCat(kNegate, R"(
ENTRY entry {
  p0 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  fusion = f32[4,8,2,2]{3,2,1,0} fusion(p0), kind=kInput, calls=fused_computation
  copy.1 = f32[4,8,2,2]{3,2,1,0} copy(fusion)
  transpose = f32[4,8,2,2]{2,3,0,1} copy(fusion)
  bitcast = f32[8,4,2,2]{3,2,1,0} bitcast(transpose)
  copy.2 = f32[4,8,2,2]{3,2,1,0} copy(fusion)
  ROOT root = (f32[4,8,2,2]{3,2,1,0}, f32[8,4,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) tuple(copy.1, bitcast, copy.2)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "negate,copy,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "get-tuple-element,bitcast,get-tuple-element");
  // The transposing copy reads the fusion's first output.
  EXPECT_TRUE(Matches(r.text, {"get-tuple-element(%fusion), index=0", "{2,3,0,1} copy(%get-tuple-element"}))
      << r.text;
}

// XLA: CopyFusionSkipTupleCopies.
TEST(CopyFusionTest, KeepsTupleCopies) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  p1.1 = f32[4,8]{1,0} parameter(0)
  mul = f32[4,8]{1,0} multiply(p1.1, p1.1)
  neg.1 = f32[4,8]{1,0} negate(mul)
  neg.2 = f32[4,8]{1,0} negate(mul)
  ROOT tuple = (f32[4,8]{1,0}, f32[4,8]{1,0}) tuple(neg.1, neg.2)
}
ENTRY entry {
  p0 = f32[4,8]{1,0} parameter(0)
  fusion = (f32[4,8]{1,0}, f32[4,8]{1,0}) fusion(p0), kind=kInput, calls=fused_computation
  copy.1 = (f32[4,8]{1,0}, f32[4,8]{1,0}) copy(fusion)
  copy.2 = (f32[4,8]{1,0}, f32[4,8]{1,0}) copy(fusion)
  ROOT root = ((f32[4,8]{1,0}, f32[4,8]{1,0}), (f32[4,8]{1,0}, f32[4,8]{1,0})) tuple(copy.1, copy.2)
})").changed);
}

constexpr char kTwoNegates[] = R"(
fused_computation {
  p1.1 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  mul = f32[4,8,2,2]{3,2,1,0} multiply(p1.1, p1.1)
  neg.1 = f32[4,8,2,2]{3,2,1,0} negate(mul)
  neg.2 = f32[4,8,2,2]{3,2,1,0} negate(mul)
  ROOT tuple = (f32[4,8,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) tuple(neg.1, neg.2)
}
)";

// XLA: CopyFusionTupleAndGetTuple.
TEST(CopyFusionTest, FusesCopiesOfMultiOutputFusionOutputs) {
  PassResult r = RunCopyFusion(StrCat(kTwoNegates, R"(
ENTRY entry {
  p0 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  fusion = (f32[4,8,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) fusion(p0), kind=kInput, calls=fused_computation
  gte.1 = f32[4,8,2,2]{3,2,1,0} get-tuple-element(fusion), index=0
  gte.2 = f32[4,8,2,2]{3,2,1,0} get-tuple-element(fusion), index=1
  copy.1 = f32[4,8,2,2]{3,2,1,0} copy(gte.1)
  copy.2 = f32[4,8,2,2]{3,2,1,0} copy(gte.2)
  ROOT root = (f32[4,8,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) tuple(copy.1, copy.2)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "negate,negate,copy,copy");
  EXPECT_TRUE(Matches(r.text, {"get-tuple-element(%fusion), index=2", "get-tuple-element(%fusion), index=3"}))
      << r.text;
}

// XLA: CopyFusionShouldSkipCustomFusions.
TEST(CopyFusionTest, KeepsCustomFusions) {
  EXPECT_FALSE(RunCopyFusion(R"(
fused_computation {
  param_0 = f32[16,32]{1,0} parameter(0)
  mul = f32[16,32]{1,0} multiply(param_0, param_0)
  ROOT neg = f32[16,32]{1,0} negate(mul)
}
ENTRY entry {
  p0 = f32[16,32]{1,0} parameter(0)
  fusion = f32[16,32]{1,0} fusion(p0), kind=kCustom, calls=fused_computation
  ROOT copy = f32[16,32]{1,0} copy(fusion)
})").changed);
}

// XLA: CopyFusionWithFusionReturningTupleAndOtherUser. gte.1 has two users,
// so its copy stays outside.
TEST(CopyFusionTest, EdgeCaseSharedGetTupleElementStaysOutside) {
  PassResult r = RunCopyFusion(StrCat(kTwoNegates, R"(
ENTRY entry {
  p0 = f32[4,8,2,2]{3,2,1,0} parameter(0)
  fusion = (f32[4,8,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) fusion(p0), kind=kInput, calls=fused_computation
  gte.1 = f32[4,8,2,2]{3,2,1,0} get-tuple-element(fusion), index=0
  gte.2 = f32[4,8,2,2]{3,2,1,0} get-tuple-element(fusion), index=1
  copy.1 = f32[4,8,2,2]{3,2,1,0} copy(gte.1)
  copy.2 = f32[4,8,2,2]{3,2,1,0} copy(gte.2)
  transpose = f32[4,8,2,2]{2,3,0,1} copy(gte.1)
  bitcast = f32[8,4,2,2]{3,2,1,0} bitcast(transpose)
  ROOT root = (f32[4,8,2,2]{3,2,1,0}, f32[8,4,2,2]{3,2,1,0}, f32[4,8,2,2]{3,2,1,0}) tuple(copy.1, bitcast, copy.2)
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(FusedRootOperands(*r.module), "negate,negate,copy");
  EXPECT_EQ(EntryRootOperands(*r.module), "copy,bitcast,get-tuple-element");
}

// XLA's CreateFusionAndRunCopyFusion: a fusion adding `n` scalar
// parameters, copied once.
std::string ManyOperandFusion(int64_t n) {
  std::string fused = "fused_sum {\n  s0 = f32[] constant(0)\n";
  std::string entry = "ENTRY e {\n";
  std::vector<std::string> args;
  for (int64_t i = 0; i < n; ++i) {
    StrAppend(&fused, "  fp", i, " = f32[] parameter(", i, ")\n  ", i + 1 == n ? "ROOT " : "", "s", i + 1,
              " = f32[] add(s", i, ", fp", i, ")\n");
    StrAppend(&entry, "  p", i, " = f32[] parameter(", i, ")\n");
    args.push_back(StrCat("p", i));
  }
  fused += "}\n";
  return StrCat(fused, entry, "  f = f32[] fusion(", Join(args, ", "), "), kind=kLoop, calls=fused_sum\n",
                "  ROOT c = f32[] copy(f)\n}\n");
}

// XLA's CreateFusionWithNumCopies: negate(param) copied `n` times.
std::string ManyCopies(int64_t n) {
  std::string entry = R"(
fused_neg {
  fp = f32[2,4]{1,0} parameter(0)
  ROOT n = f32[2,4]{1,0} negate(fp)
}
ENTRY e {
  p = f32[2,4]{1,0} parameter(0)
  f = f32[2,4]{1,0} fusion(p), kind=kLoop, calls=fused_neg
)";
  std::vector<std::string> copies, shapes;
  for (int64_t i = 0; i < n; ++i) {
    StrAppend(&entry, "  c", i, " = f32[2,4]{1,0} copy(f)\n");
    copies.push_back(StrCat("c", i));
    shapes.push_back("f32[2,4]{1,0}");
  }
  StrAppend(&entry, "  ROOT t = (", Join(shapes, ", "), ") tuple(", Join(copies, ", "), ")\n}\n");
  return entry;
}

// XLA: FusionFitsInBudget, FusionExceedsBudget.
TEST(CopyFusionTest, RespectsTheOperandBudget) {
  EXPECT_TRUE(RunCopyFusion(ManyOperandFusion(kMaxOperandsAndOutputsPerFusion - 2)).changed);
  EXPECT_FALSE(RunCopyFusion(ManyOperandFusion(kMaxOperandsAndOutputsPerFusion - 1)).changed);
}

// XLA: CopyFusionWithFewerThanMaxCopies, CopyFusionWithMoreThanMaxCopies.
TEST(CopyFusionTest, RespectsTheOutputBudget) {
  PassResult r = RunCopyFusion(ManyCopies(kMaxOperandsAndOutputsPerFusion - 1));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_FALSE(RunCopyFusion(ManyCopies(kMaxOperandsAndOutputsPerFusion)).changed);
}

}  // namespace
}  // namespace passlab
