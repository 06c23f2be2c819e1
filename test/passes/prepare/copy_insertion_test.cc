#include "passes/prepare/copy_insertion.h"

#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunCopyInsertion(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<CopyInsertion>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

constexpr char kLoop[] = R"(
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  n = f32[4] add(a, b)
  ROOT next = (s32[], f32[4], f32[4]) tuple(s32[] add(i, s32[] constant(1)), n, a)
}
ENTRY e {
  p = f32[4] parameter(0)
  z = s32[] constant(0)
  x = f32[4] exponential(p)
  init = (s32[], f32[4], f32[4]) tuple(z, p, x)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})";

TEST(CopyInsertionTest, CopiesConstantAndParameterLoopInitAndSwappedBodyElement) {
  // z and p get copies (a loop may not write a constant's or parameter's
  // buffer); x is the init's own value; the body's a moves from index 1 to
  // index 2 and is copied.
  PassResult r = RunCopyInsertion(kLoop);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"copy(%a)", "tuple(%add.2, %n, %copy.2)", "%copy = s32[] copy(%z)",
                               "%copy.1 = f32[4]{0} copy(%p)", "tuple(%copy, %copy.1, %x)", "while(%tuple)",
                               "NOT:copy(%x)", "NOT:copy(%n)", "NOT:%init"}))
      << r.text;
}

TEST(CopyInsertionTest, KeepsLoopWhoseStateIsItsOwn) {
  EXPECT_FALSE(RunCopyInsertion(R"(
cond {
  s = (f32[4]) parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = (f32[4]) parameter(0)
  a = f32[4] get-tuple-element(s), index=0
  ROOT next = (f32[4]) tuple(f32[4] negate(a))
}
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  w = (f32[4]) while((f32[4]) tuple(x)), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=0
})").changed);
}

TEST(CopyInsertionTest, EdgeCaseRepeatedAndSharedInitElements) {
  // x twice in the init, and read again after the loop: both uses need
  // their own buffer.
  PassResult r = RunCopyInsertion(R"(
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT t = pred[] constant(false)
}
body {
  s = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(s), index=0
  b = f32[4] get-tuple-element(s), index=1
  ROOT next = (f32[4], f32[4]) tuple(b, a)
}
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  w = (f32[4], f32[4]) while((f32[4], f32[4]) tuple(x, x)), condition=cond, body=body
  g = f32[4] get-tuple-element(w), index=0
  ROOT r = f32[4] add(g, x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"copy(%x)", "copy(%x)", "while("})) << r.text;
}

TEST(CopyInsertionTest, EdgeCaseEntryResultsOwnTheirBuffers) {
  // A parameter and a constant in the entry result are copied; the
  // parameter the module aliases to output {1} is left alone.
  PassResult r = RunCopyInsertion(R"(
HloModule m, input_output_alias={ {1}: (1, {}, may-alias) }

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  c = f32[4] constant({1, 2, 3, 4})
  ROOT t = (f32[4], f32[4], f32[4]) tuple(p0, p1, c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"copy(%p0)", "copy(%c)", "NOT:copy(%p1)"})) << r.text;
}

TEST(CopyInsertionTest, ConditionalBranchReturningItsParameterGetsACopy) {
  PassResult r = RunCopyInsertion(R"(
t {
  a = f32[4] parameter(0)
  ROOT n = f32[4] negate(a)
}
f {
  ROOT a = f32[4] parameter(0)
}
ENTRY e {
  b = pred[] parameter(0)
  p = f32[4] parameter(1)
  x = f32[4] exponential(p)
  ROOT c = f32[4] conditional(b, x, x), true_computation=t, false_computation=f
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"ROOT %copy = f32[4]{0} copy(%a)", "NOT:copy(%n)"})) << r.text;
}

// Corpus: loops, conditionals and tuple results get their copies; the
// modules still verify and compute the same.
TEST(CopyInsertionTest, CorpusLoopsAndResultsGetCopiesThatComputeTheSame) {
  CorpusPassStats stats = CheckPassOnCorpus(" while(", [] { return std::make_unique<CopyInsertion>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(stats.changed, 10);
  CorpusPassStats results = CheckPassOnCorpus(" tuple(", [] { return std::make_unique<CopyInsertion>(); });
  EXPECT_GT(results.evaluated, 10);
}

// In-place operations, XLA's cases (xla/service/copy_insertion_test.cc):
// DynamicUpdateSliceNoCopy, DynamicUpdateSliceCopy,
// DynamicUpdateSliceParameterShareCopy and ScatterSharedOperand.
int CountCopies(const PassResult& r) {
  int n = 0;
  for (const HloInstruction* inst : r.module->entry_computation()->instructions()) n += inst->opcode() == HloOpcode::kCopy;
  return n;
}

TEST(CopyInsertionTest, DynamicUpdateSliceNoCopy) {
  PassResult r = RunCopyInsertion(R"(HloModule Module
ENTRY main {
  param = f32[1280,1,128] parameter(0)
  negate = f32[1280,1,128] negate(param)
  constant.1 = f32[] constant(0)
  broadcast.6 = f32[128,1,128] broadcast(constant.1), dimensions={}
  constant.3 = s32[] constant(0)
  ROOT dynamic-update-slice.5 = f32[1280,1,128] dynamic-update-slice(negate, broadcast.6, constant.3, constant.3, constant.3)
})");
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(CountCopies(r), 0);
}

TEST(CopyInsertionTest, DynamicUpdateSliceCopy) {
  // `negate` is read again by `add`, which need not run before the update.
  PassResult r = RunCopyInsertion(R"(HloModule Module
ENTRY main {
  param = f32[1280,1,128] parameter(0)
  negate = f32[1280,1,128] negate(param)
  constant.1 = f32[] constant(0)
  broadcast.6 = f32[128,1,128] broadcast(constant.1), dimensions={}
  constant.3 = s32[] constant(0)
  add = f32[1280,1,128] add(negate, negate)
  dynamic-update-slice.5 = f32[1280,1,128] dynamic-update-slice(negate, broadcast.6, constant.3, constant.3, constant.3)
  ROOT tuple = (f32[1280,1,128], f32[1280,1,128]) tuple(add, dynamic-update-slice.5)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(CountCopies(r), 1);
  const HloInstruction* dus = r.module->entry_computation()->root_instruction()->operand(1);
  EXPECT_EQ(dus->operand(0)->opcode(), HloOpcode::kCopy);
}

TEST(CopyInsertionTest, DynamicUpdateSliceParameterShareCopy) {
  PassResult r = RunCopyInsertion(R"(HloModule Module
ENTRY main {
  param = f32[1280,1,128] parameter(0)
  constant.1 = f32[] constant(0)
  broadcast.6 = f32[128,1,128] broadcast(constant.1), dimensions={}
  constant.3 = s32[] constant(0)
  ROOT dynamic-update-slice.5 = f32[1280,1,128] dynamic-update-slice(param, broadcast.6, constant.3, constant.3, constant.3)
})");
  EXPECT_EQ(CountCopies(r), 1);
  // Donated (input_output_alias): the update may overwrite it.
  PassResult donated = RunCopyInsertion(R"(HloModule Module, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  param = f32[1280,1,128] parameter(0)
  constant.1 = f32[] constant(0)
  broadcast.6 = f32[128,1,128] broadcast(constant.1), dimensions={}
  constant.3 = s32[] constant(0)
  ROOT dynamic-update-slice.5 = f32[1280,1,128] dynamic-update-slice(param, broadcast.6, constant.3, constant.3, constant.3)
})");
  EXPECT_EQ(CountCopies(donated), 0);
}

TEST(CopyInsertionTest, ScatterSharedOperand) {
  PassResult r = RunCopyInsertion(R"(HloModule Module
update_s32 {
  lhs = s32[] parameter(0)
  ROOT rhs = s32[] parameter(1)
}
fused_computation {
  iota.1 = s32[73729] iota(), iota_dimension=0
  ROOT indices.1 = s32[73729] reverse(iota.1), dimensions={0}
}
ENTRY main {
  iota.2 = s32[73729] iota(), iota_dimension=0
  fusion = s32[73729] fusion(), kind=kLoop, calls=fused_computation
  ROOT scatter = s32[73729] scatter(iota.2, fusion, iota.2), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=update_s32
})");
  EXPECT_EQ(CountCopies(r), 1);
  const HloInstruction* scatter = r.module->entry_computation()->root_instruction();
  EXPECT_EQ(scatter->operand(0)->opcode(), HloOpcode::kCopy);
  EXPECT_EQ(scatter->operand(2)->opcode(), HloOpcode::kIota);
}

// The ResNet max-pool gradient's shape of it: the scatter's zeros are read
// again after it (by the ReLU gradient), so they are copied; a reader that
// runs before the scatter (its updates depend on it) needs no copy.
TEST(CopyInsertionTest, ScatterOperandReadAfterIsCopiedReadBeforeIsNot) {
  // A scatter of `upd` into eight zeros, then `rest`.
  auto module = [](const std::string& upd, const std::string& rest) {
    return R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  zero = f32[] constant(0)
  z = f32[8] broadcast(zero), dimensions={}
  idx = s32[3,1] parameter(0)
  )" + upd + R"(
  s = f32[8] scatter(z, idx, upd), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT r = )" + rest + "\n}";
  };
  // Read after: maximum(s, z) needs the zeros the scatter would overwrite.
  PassResult r = RunCopyInsertion(module("upd = f32[3] parameter(1)", "f32[8] maximum(s, z)"));
  EXPECT_EQ(CountCopies(r), 1);
  // Read before: the updates themselves are computed from the zeros.
  PassResult r2 = RunCopyInsertion(module(
      "zs = f32[3] slice(z), slice={[0:3]}\n  upd = f32[3] add(zs, f32[3] parameter(1))", "f32[8] negate(s)"));
  EXPECT_EQ(CountCopies(r2), 0);
}

}  // namespace
}  // namespace passlab
