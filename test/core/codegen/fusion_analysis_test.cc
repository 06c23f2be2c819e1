// Hero detection, emitter choice and the computation partitioner.
#include "core/codegen/fusion_analysis.h"

#include <gtest/gtest.h>

#include "core/codegen/computation_partitioner.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text, "test");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

const HloInstruction& Root(const HloModule& m) { return *m.entry_computation()->root_instruction(); }

std::string Fusion(const std::string& body, const std::string& params, const std::string& shape) {
  return "HloModule m\nfused {\n" + body + "\n}\nENTRY e {\n" + params + "\n  ROOT f = " + shape +
         " fusion(p0), kind=kLoop, calls=fused\n}\n";
}

TEST(FusionAnalysisTest, ElementwiseFusionUsesLoopEmitter) {
  auto m = Parse(Fusion("  a = f32[4,8] parameter(0)\n  e = f32[4,8] exponential(a)\n  ROOT n = f32[4,8] negate(e)",
                        "  p0 = f32[4,8] parameter(0)", "f32[4,8]"));
  FusionAnalysis a = AnalyzeFusion(Root(*m));
  EXPECT_EQ(a.kind, EmitterKind::kLoop);
  ASSERT_EQ(a.heroes.size(), 1u);
  EXPECT_EQ(a.heroes[0]->name(), "e");  // walks up through negate
}

TEST(FusionAnalysisTest, TransposeHeroBehindElementwise) {
  auto m = Parse(Fusion(
      "  a = f32[16,32] parameter(0)\n  t = f32[32,16] transpose(a), dimensions={1,0}\n  ROOT n = f32[32,16] negate(t)",
      "  p0 = f32[16,32] parameter(0)", "f32[32,16]"));
  FusionAnalysis a = AnalyzeFusion(Root(*m));
  EXPECT_EQ(a.kind, EmitterKind::kTranspose);
  EXPECT_EQ(a.heroes[0]->name(), "t");
}

// ResNet's flipped conv filters (algsimp's operand swap): the reverse is on
// the read side of the transpose, so the transpose stays the hero, as in
// XLA's FindNonTrivialHero (xla/service/gpu/ir_emission_utils.cc), which
// only walks up from the root.
TEST(FusionAnalysisTest, ReverseBeforeTransposeKeepsTransposeHero) {
  auto m = Parse(Fusion("  a = f32[3,3,16,32] parameter(0)\n"
                        "  r = f32[3,3,16,32] reverse(a), dimensions={0,1}\n"
                        "  ROOT t = f32[32,3,3,16] transpose(r), dimensions={3,0,1,2}",
                        "  p0 = f32[3,3,16,32] parameter(0)", "f32[32,3,3,16]"));
  FusionAnalysis a = AnalyzeFusion(Root(*m));
  EXPECT_EQ(a.kind, EmitterKind::kTranspose);
  ASSERT_EQ(a.heroes.size(), 1u);
  EXPECT_EQ(a.heroes[0]->name(), "t");
}

TEST(FusionAnalysisTest, UnitDimTransposeIsNotATransposeHero) {
  auto m = Parse(Fusion(
      "  a = f32[1,32] parameter(0)\n  ROOT t = f32[32,1] transpose(a), dimensions={1,0}",
      "  p0 = f32[1,32] parameter(0)", "f32[32,1]"));
  EXPECT_EQ(AnalyzeFusion(Root(*m)).kind, EmitterKind::kLoop);
}

TEST(FusionAnalysisTest, RowAndColumnReductions) {
  const char* add = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n";
  auto row = Parse(std::string("HloModule m\n") + add + R"(fused {
  a = f32[8,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(a, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p0 = f32[8,64] parameter(0)
  ROOT f = f32[8] fusion(p0), kind=kInput, calls=fused
})");
  FusionAnalysis a = AnalyzeFusion(Root(*row));
  EXPECT_EQ(a.kind, EmitterKind::kReduction);
  EXPECT_TRUE(a.row_reduction);
  auto column = Parse(std::string("HloModule m\n") + add + R"(fused {
  a = f32[8,64] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64] reduce(a, z), dimensions={0}, to_apply=add
}
ENTRY e {
  p0 = f32[8,64] parameter(0)
  ROOT f = f32[64] fusion(p0), kind=kInput, calls=fused
})");
  a = AnalyzeFusion(Root(*column));
  EXPECT_EQ(a.kind, EmitterKind::kReduction);
  EXPECT_FALSE(a.row_reduction);
}

TEST(FusionAnalysisTest, ConcatenateSlicesAndDynamicUpdateSlice) {
  auto concat = Parse(Fusion(
      "  a = f32[4] parameter(0)\n  ROOT c = f32[8] concatenate(a, a), dimensions={0}",
      "  p0 = f32[4] parameter(0)", "f32[8]"));
  EXPECT_EQ(AnalyzeFusion(Root(*concat)).kind, EmitterKind::kConcatenate);
  auto slices = Parse(Fusion(
      "  a = f32[8] parameter(0)\n  s0 = f32[4] slice(a), slice={[0:4]}\n  s1 = f32[4] slice(a), slice={[4:8]}\n"
      "  ROOT t = (f32[4], f32[4]) tuple(s0, s1)",
      "  p0 = f32[8] parameter(0)", "(f32[4], f32[4])"));
  EXPECT_EQ(AnalyzeFusion(Root(*slices)).kind, EmitterKind::kInputSlices);
  auto dus = Parse(Fusion(
      "  a = f32[8] parameter(0)\n  u = f32[2] constant({1, 2})\n  i = s32[] constant(3)\n"
      "  ROOT d = f32[8] dynamic-update-slice(a, u, i)",
      "  p0 = f32[8] parameter(0)", "f32[8]"));
  EXPECT_EQ(AnalyzeFusion(Root(*dus)).kind, EmitterKind::kInPlaceDynamicUpdateSlice);
  // Every kind compiles and matches the evaluator (all but reduction and
  // transpose are emitted by the loop emitter).
  for (const HloModule* m : {concat.get(), slices.get(), dus.get()}) {
    testing::ExpectMatchesEvaluator(PrintModuleForTest(*m));
  }
}

TEST(PartitionerTest, LogWithTransposeAndAddSplitsAtLog) {
  auto m = Parse(Fusion(
      "  a = f32[8,8] parameter(0)\n  l = f32[8,8] log(a)\n  t = f32[8,8] transpose(l), dimensions={1,0}\n"
      "  ROOT s = f32[8,8] add(l, t)",
      "  p0 = f32[8,8] parameter(0)", "f32[8,8]"));
  const HloComputation& fused = *Root(*m).fused_instructions_computation();
  PartitionedComputation p(fused, {fused.root_instruction()});
  ASSERT_EQ(p.subgraphs().size(), 2u);
  EXPECT_EQ(p.subgraphs()[0].root->name(), "s");
  EXPECT_EQ(p.subgraphs()[0].instructions.size(), 2u);  // t, s
  EXPECT_EQ(p.subgraphs()[1].root->name(), "l");
  EXPECT_TRUE(p.IsSubgraphRoot(fused.GetInstructionWithName("l")));
  EXPECT_FALSE(p.IsSubgraphRoot(fused.GetInstructionWithName("t")));
  EXPECT_EQ(p.SubgraphOf(fused.GetInstructionWithName("a")), nullptr);
  // Emitted: two subgraph functions and the entry loop nest, three in all.
  CpuKernelCompiler compiler;
  auto mlir = compiler.EmitMlir(Root(*m));
  ASSERT_TRUE(mlir.ok()) << mlir.status().message();
  int functions = 0;
  for (size_t pos = mlir->find("func.func"); pos != std::string::npos; pos = mlir->find("func.func", pos + 1)) {
    ++functions;
  }
  EXPECT_EQ(functions, 3) << *mlir;
  EXPECT_NE(mlir->find("call @fused__l"), std::string::npos) << *mlir;
  testing::ExpectMatchesEvaluator(PrintModuleForTest(*m));
}

TEST(PartitionerTest, ElementwiseUsersAtTheSameIndexShareOneFunction) {
  auto m = Parse(Fusion(
      "  a = f32[8,8] parameter(0)\n  l = f32[8,8] log(a)\n  e = f32[8,8] exponential(l)\n"
      "  n = f32[8,8] negate(l)\n  ROOT s = f32[8,8] add(e, n)",
      "  p0 = f32[8,8] parameter(0)", "f32[8,8]"));
  const HloComputation& fused = *Root(*m).fused_instructions_computation();
  PartitionedComputation p(fused, {fused.root_instruction()});
  EXPECT_EQ(p.subgraphs().size(), 1u);
  EXPECT_EQ(p.subgraphs()[0].instructions.size(), 4u);
}

}  // namespace
}  // namespace passlab
