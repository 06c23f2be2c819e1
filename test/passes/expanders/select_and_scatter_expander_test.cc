#include "core/ir/str_util.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

constexpr char kGeAdd[] = R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(SelectAndScatterExpanderTest, MaxPoolGradientUnrollsTheWindow) {
  PassResult r = RunPass(std::make_unique<SelectAndScatterExpander>(), StrCat(kGeAdd, R"(
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  dy = f32[2,3,3,3] parameter(1)
  zero = f32[] constant(0)
  ROOT dx = f32[2,6,6,3] select-and-scatter(x, dy, zero), window={size=1x2x2x1 stride=1x2x2x1}, select=ge, scatter=add
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // Four strided slices (one per window element), GE chains, then a scatter
  // at the chosen coordinates; no routine-only variadic reduce-window.
  EXPECT_TRUE(Matches(r.text, {"f32[2,3,3,3]{3,2,1,0} slice(", "slice={[0:2], [0:5:2], [0:5:2], [0:3]}",
                               "slice={[0:2], [1:6:2], [1:6:2], [0:3]}", "compare(", "direction=GE",
                               "s32[2,3,3,3,4]{4,3,2,1,0} concatenate(", "ROOT", "scatter(",
                               "inserted_window_dims={0,1,2,3}", "index_vector_dim=4", "to_apply=%add",
                               "NOT:reduce-window(", "NOT:select-and-scatter("}))
      << r.text;
}

TEST(SelectAndScatterExpanderTest, EdgeCaseLargeWindowUsesVariadicReduceWindow) {
  // 9x8 = 72 window elements: one reduce-window over (operand, position)
  // whose reducer applies select, instead of 72 slices.
  PassResult r = RunPass(std::make_unique<SelectAndScatterExpander>(), StrCat(kGeAdd, R"(
ENTRY e {
  x = f32[1,9,16,2] parameter(0)
  dy = f32[1,1,2,2] parameter(1)
  zero = f32[] constant(0)
  ROOT dx = f32[1,9,16,2] select-and-scatter(x, dy, zero), window={size=1x9x8x1 stride=1x9x8x1}, select=ge, scatter=add
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  EXPECT_TRUE(Matches(r.text, {"ge.selecting_reducer", "compare(", "direction=GE", "ENTRY", "s32[288]{0} iota()",
                               "(f32[1,1,2,2]{3,2,1,0}, s32[1,1,2,2]{3,2,1,0}) reduce-window(", "ROOT", "scatter(",
                               "NOT:select-and-scatter("}))
      << r.text;
}

TEST(SelectAndScatterExpanderTest, EdgeCaseOverlappingPaddedWindowsAndTies) {
  // Windows overlap (stride 1 < size 3), padding makes border windows part
  // empty, and integer values tie often: the first element of a window must
  // win ties, as in select-and-scatter's definition.
  PassResult r = RunPass(std::make_unique<SelectAndScatterExpander>(), R"(
ge {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT g = pred[] compare(a, b), direction=GE
}
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[7] constant({1, 3, 3, 0, 2, 2, 3})
  dy = s32[7] constant({1, 10, 100, 1000, 10000, 100000, 1000000})
  init = s32[] constant(5)
  ROOT dx = s32[7] select-and-scatter(x, dy, init), window={size=3 pad=1_1}, select=ge, scatter=add
})");
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*r.module, {});
  ASSERT_TRUE(out.ok()) << out.status().message();
  std::vector<int64_t> got;
  for (int64_t i = 0; i < out->element_count(); ++i) got.push_back(out->GetInt(i));
  // Windows (padded): [_,1,3] [1,3,3] [3,3,0] [3,0,2] [0,2,2] [2,2,3] [2,3,_]
  // select positions 1, 1, 1, 2, 4, 6, 6.
  EXPECT_EQ(got, (std::vector<int64_t>{5, 5 + 1 + 10 + 100, 5 + 1000, 5, 5 + 10000, 5, 5 + 100000 + 1000000}));
}

TEST(SelectAndScatterExpanderTest, EdgeCaseAllPaddingWindowScattersNothing) {
  PassResult r = RunPass(std::make_unique<SelectAndScatterExpander>(), StrCat(kGeAdd, R"(
ENTRY e {
  x = f32[3] parameter(0)
  dy = f32[5] parameter(1)
  init = f32[] constant(0.5)
  ROOT dx = f32[3] select-and-scatter(x, dy, init), window={size=1 pad=1_1}, select=ge, scatter=add
})"));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
}

TEST(SelectAndScatterExpanderTest, LeavesScalarSelectAndScatter) {
  EXPECT_FALSE(RunPass(std::make_unique<SelectAndScatterExpander>(), StrCat(kGeAdd, R"(
ENTRY e {
  x = f32[] parameter(0)
  dy = f32[] parameter(1)
  init = f32[] constant(0)
  ROOT dx = f32[] select-and-scatter(x, dy, init), window={}, select=ge, scatter=add
})")).changed);
}

TEST(SelectAndScatterExpanderTest, CorpusSelectAndScattersComputeTheSame) {
  CorpusPassStats stats =
      CheckPassOnCorpus("select-and-scatter(", [] { return std::make_unique<SelectAndScatterExpander>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "no corpus at " << CorpusPath();
  EXPECT_GT(stats.changed, 0);
  EXPECT_GT(stats.evaluated, 0);
}

}  // namespace
}  // namespace passlab
