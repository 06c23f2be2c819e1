// OptimizeInputOutputBufferAlias follows XLA's
// xla/hlo/transforms/simplifiers/optimize_input_output_buffer_alias_test.cc
// (AllDifferentBufferSizes, OrderedNonNestedTuple,
// PartialReuseNonNestedTuple, UnorderedNonNestedTuple, UnorderedNestedTuple,
// MultipleParameters, BufferDonorOnly, DynamicShapeWithTuple,
// DynamicShapeNoTuple, DynamicShapeBufferOutput, DynamicShapeBufferInput,
// AllDifferentMemorySpaces). XLA's tests call the pass's Build on bare
// shapes; these give entry computations those parameter and result shapes
// and check the module's input_output_alias config.
#include "passes/prepare/optimize_input_output_buffer_alias.h"

#include "core/runtime/buffer_assignment.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloPassInterface> Pass(bool registered_only = false) {
  return std::make_unique<OptimizeInputOutputBufferAlias>(
      OptimizeInputOutputBufferAliasOptions{.registered_buffer_donor_only = registered_only});
}

// The output index `parameter`/`index` is aliased with, or nullopt.
std::optional<ShapeIndex> AliasedOutput(const HloModule& m, int64_t parameter, const ShapeIndex& index) {
  for (const InputOutputAlias& a : m.config().input_output_alias) {
    if (a.parameter_number == parameter && a.parameter_index == index) return a.output_index;
  }
  return std::nullopt;
}

// Shapes used by XLA's test: r1 = f32[4], r2 = f32[4,5], r3 = f32[4,5,6],
// r4 = f32[4,5,6,7].

// XLA: AllDifferentBufferSizes.
TEST(OptimizeInputOutputBufferAliasTest, KeepsBuffersOfDifferentSizes) {
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4,5]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4,5] get-tuple-element(p), index=1
  ba = f32[4,5,6] broadcast(a), dimensions={0}
  bb = f32[4,5,6,7] broadcast(b), dimensions={0,1}
  ROOT t = (f32[4,5,6], f32[4,5,6,7]) tuple(ba, bb)
})");
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.module->config().input_output_alias.empty());
}

// XLA: OrderedNonNestedTuple.
TEST(OptimizeInputOutputBufferAliasTest, AliasesEqualShapesAtTheSameIndex) {
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4,5], f32[4,5,6], f32[4,5,6,7]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4,5] get-tuple-element(p), index=1
  c = f32[4,5,6] get-tuple-element(p), index=2
  d = f32[4,5,6,7] get-tuple-element(p), index=3
  na = f32[4] negate(a)
  nb = f32[4,5] negate(b)
  nc = f32[4,5,6] negate(c)
  nd = f32[4,5,6,7] negate(d)
  ROOT t = (f32[4], f32[4,5], f32[4,5,6], f32[4,5,6,7]) tuple(na, nb, nc, nd)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(r.module->config().input_output_alias.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(AliasedOutput(*r.module, 0, {i}), ShapeIndex{i});
  EXPECT_TRUE(Matches(r.text, {"input_output_alias={ {0}: (0, {0}, may-alias), {1}: (0, {1}, may-alias), "
                               "{2}: (0, {2}, may-alias), {3}: (0, {3}, may-alias) }"}))
      << r.text;
}

// XLA: PartialReuseNonNestedTuple.
TEST(OptimizeInputOutputBufferAliasTest, AliasesOnlyTheMatchingSubset) {
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4], f32[4,5], f32[4,5]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  c = f32[4,5] get-tuple-element(p), index=2
  bc = f32[4,5,6] broadcast(c), dimensions={0,1}
  bd = f32[4,5,6,7] broadcast(c), dimensions={0,1}
  ROOT t = (f32[4], f32[4,5], f32[4,5,6], f32[4,5,6,7]) tuple(a, c, bc, bd)
})");
  EXPECT_TRUE(r.changed);
  const std::vector<InputOutputAlias>& aliases = r.module->config().input_output_alias;
  ASSERT_EQ(aliases.size(), 2u);
  EXPECT_EQ(aliases[0].output_index, ShapeIndex{0});
  EXPECT_EQ(aliases[1].output_index, ShapeIndex{1});
  // Ties go to the earlier leaf.
  EXPECT_EQ(AliasedOutput(*r.module, 0, {0}), ShapeIndex{0});
  EXPECT_EQ(AliasedOutput(*r.module, 0, {2}), ShapeIndex{1});
}

// XLA: UnorderedNonNestedTuple and MultipleParameters.
TEST(OptimizeInputOutputBufferAliasTest, MatchesBySizeWhateverTheOrder) {
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = (f32[4], f32[4,5], f32[4,5,6], f32[4,5,6,7]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4,5] get-tuple-element(p), index=1
  c = f32[4,5,6] get-tuple-element(p), index=2
  d = f32[4,5,6,7] get-tuple-element(p), index=3
  ROOT t = (f32[4,5,6,7], f32[4,5,6], f32[4,5], f32[4]) tuple(d, c, b, a)
})");
  EXPECT_TRUE(r.changed);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(AliasedOutput(*r.module, 0, {i}), ShapeIndex{3 - i});

  PassResult multi = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4,5] parameter(1)
  c = f32[4,5,6] parameter(2)
  d = f32[4,5,6,7] parameter(3)
  ROOT t = (f32[4,5,6,7], f32[4,5,6], f32[4,5], f32[4]) tuple(d, c, b, a)
})");
  EXPECT_TRUE(multi.changed);
  EXPECT_EQ(multi.module->config().input_output_alias.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(AliasedOutput(*multi.module, i, {}), ShapeIndex{3 - i});
}

// XLA: UnorderedNestedTuple.
TEST(OptimizeInputOutputBufferAliasTest, EdgeCaseNestedTuples) {
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = ((f32[4]), f32[4,5], f32[4,5,6], f32[4,5,6,7]) parameter(0)
  i = (f32[4]) get-tuple-element(p), index=0
  a = f32[4] get-tuple-element(i), index=0
  b = f32[4,5] get-tuple-element(p), index=1
  c = f32[4,5,6] get-tuple-element(p), index=2
  inner = (f32[4,5,6], f32[4,5]) tuple(c, b)
  ROOT t = (f32[4], (f32[4,5,6], f32[4,5]), f32[4,5]) tuple(a, inner, b)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(r.module->config().input_output_alias.size(), 3u);
  EXPECT_EQ(AliasedOutput(*r.module, 0, {0, 0}), ShapeIndex{0});
  EXPECT_EQ(AliasedOutput(*r.module, 0, {1}), (ShapeIndex{1, 1}));
  EXPECT_EQ(AliasedOutput(*r.module, 0, {2}), (ShapeIndex{1, 0}));
  EXPECT_FALSE(AliasedOutput(*r.module, 0, {3}).has_value());
}

// XLA: BufferDonorOnly.
TEST(OptimizeInputOutputBufferAliasTest, RegisteredDonorsOnly) {
  PassResult r = RunPass(Pass(/*registered_only=*/true), R"(
HloModule m, buffer_donor={ (0, {0}) }
ENTRY e {
  p = (f32[4], f32[4,5]) parameter(0)
  a = f32[4] get-tuple-element(p), index=0
  b = f32[4,5] get-tuple-element(p), index=1
  ROOT t = (f32[4,5], f32[4]) tuple(b, a)
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_EQ(r.module->config().input_output_alias.size(), 1u);
  EXPECT_EQ(AliasedOutput(*r.module, 0, {0}), ShapeIndex{1});
  EXPECT_FALSE(AliasedOutput(*r.module, 0, {1}).has_value());
  // The donor is used up.
  EXPECT_TRUE(r.module->config().buffer_donor.empty()) << r.text;
  // Without registered donors nothing may donate.
  EXPECT_FALSE(RunPass(Pass(/*registered_only=*/true), R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
})").changed);
}

// Runs the pass on a module the evaluator need not run (dynamic shapes).
bool ChangedUnchecked(const std::string& hlo) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return false;
  HloPassPipeline pipeline("test");
  pipeline.AddPass<OptimizeInputOutputBufferAlias>();
  absl::StatusOr<bool> changed = pipeline.Run(**m);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE((*m)->config().input_output_alias.empty());
  return changed.ok() && *changed;
}

// XLA: DynamicShapeWithTuple, DynamicShapeNoTuple, DynamicShapeBufferOutput,
// DynamicShapeBufferInput.
TEST(OptimizeInputOutputBufferAliasTest, KeepsDynamicShapes) {
  EXPECT_FALSE(ChangedUnchecked(R"(
HloModule m
ENTRY e {
  p = (f32[<=256], f32[128,<=128]) parameter(0)
  a = f32[<=256] get-tuple-element(p), index=0
  b = f32[128,<=128] get-tuple-element(p), index=1
  ROOT t = (f32[<=256], f32[128,<=128]) tuple(a, b)
})"));
  EXPECT_FALSE(ChangedUnchecked(R"(
HloModule m
ENTRY e {
  a = f32[<=256] parameter(0)
  b = f32[128,<=128] parameter(1)
  ROOT n = f32[<=256] negate(a)
})"));
  // A static result the size of a dynamic parameter's bound.
  EXPECT_FALSE(ChangedUnchecked(R"(
HloModule m
ENTRY e {
  a = f32[<=256] parameter(0)
  b = f32[128,<=128] parameter(1)
  ROOT c = f32[512] constant({...})
})"));
  // A dynamic result the size of a static parameter.
  EXPECT_FALSE(ChangedUnchecked(R"(
HloModule m
ENTRY e {
  a = f32[512] parameter(0)
  s = f32[256] slice(a), slice={[0:256]}
  k = s32[] constant(128)
  ROOT n = f32[<=256] set-dimension-size(s, k), dimensions={0}
})"));
}

// XLA: AllDifferentMemorySpaces.
TEST(OptimizeInputOutputBufferAliasTest, KeepsBuffersInOtherMemorySpaces) {
  EXPECT_FALSE(ChangedUnchecked(R"(
HloModule m, entry_computation_layout={(f32[4]{0}, f32[4,5]{1,0})->(f32[4]{0:S(5)}, f32[4,5]{1,0:S(5)})}
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT t = (f32[4], f32[4,5]) tuple(a, b)
})"));
}

TEST(OptimizeInputOutputBufferAliasTest, EdgeCaseKeepsExistingAliases) {
  // Output {0} and parameter 0 are taken; parameter 1 goes to output {1}.
  PassResult r = RunPass(Pass(), R"(
HloModule m, input_output_alias={ {0}: (0, {}, must-alias) }
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  s = f32[8] add(a, b)
  ROOT t = (f32[8], f32[8]) tuple(s, s)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"input_output_alias={ {0}: (0, {}, must-alias), {1}: (1, {}, may-alias) }"}))
      << r.text;
  // Everything already aliased: nothing to do.
  EXPECT_FALSE(RunPass(Pass(), r.text).changed);
}

TEST(OptimizeInputOutputBufferAliasTest, MatchesByteSizeNotShape) {
  // s32[2,8] and f32[16] are both 64 bytes (XLA compares sizes).
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = s32[2,8] parameter(0)
  c = f32[2,8] convert(p)
  ROOT r = f32[16] reshape(c)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(AliasedOutput(*r.module, 0, {}), ShapeIndex{});
}

TEST(OptimizeInputOutputBufferAliasTest, RuntimeWritesAliasedOutputIntoTheParameter) {
  // The CPU runtime's buffer assignment honours the alias: the result is
  // placed in parameter 0's buffer (which is dead by then).
  PassResult r = RunPass(Pass(), R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  n = f32[16] negate(p)
  ROOT m = f32[16] multiply(n, n)
})");
  ASSERT_TRUE(r.changed);
  absl::StatusOr<std::unique_ptr<BufferAssignment>> a = BufferAssignment::ForEntry(*r.module);
  ASSERT_TRUE(a.ok()) << a.status().message();
  const std::vector<BufferSlice>& slices = (*a)->LeafSlices(r.module->entry_computation()->root_instruction());
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].kind, BufferSlice::Kind::kParameter);
  EXPECT_EQ(slices[0].parameter, 0);
  EXPECT_TRUE((*a)->OverwritesParameters());
}

}  // namespace
}  // namespace passlab
