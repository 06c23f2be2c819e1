// passlab conform --xla-dump: XLA's per-pass dumps as test cases. The file
// names follow XLA's dump.cc (DumpHloModuleBetweenPassesIfEnabled:
// "%04d.%s.after_%s.before_%s" after "module_%04d.<name>.") and
// hlo_pass_pipeline.cc (RunPassesInternal: "pipeline-start" at every
// pipeline's start; after a pass only when it changed the module if the pass
// regex is exactly ".*", after every matching pass otherwise).
#include "analysis/conformance/xla_dump.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"

namespace passlab::conformance {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<HloModule> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

constexpr std::string_view kAddZero = R"(HloModule jit_f
ENTRY main {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  zeros = f32[4] broadcast(zero), dimensions={}
  ROOT sum = f32[4] add(x, zeros)
}
)";
constexpr std::string_view kJustX = R"(HloModule jit_f
ENTRY main {
  ROOT x = f32[4] parameter(0)
}
)";
constexpr std::string_view kNegated = R"(HloModule jit_f
ENTRY main {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)";

class DumpDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("passlab_xla_dump_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, std::string_view text) {
    std::ofstream(dir_ / name) << text;
  }
  fs::path dir_;
};

TEST(CanonicalStructure, IgnoresNamesMetadataAndBackendConfig) {
  auto a = Parse(R"(HloModule a
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] exponential(p), metadata={op_name="jit(f)/exp"}
  ROOT r = f32[4] add(p, c)
}
)");
  auto b = Parse(R"(HloModule something_else
ENTRY main.7 {
  Arg_0.1 = f32[4] parameter(0)
  exponential.2 = f32[4] exponential(Arg_0.1)
  ROOT add.3 = f32[4] add(Arg_0.1, exponential.2)
}
)");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(CanonicalStructure(*a), CanonicalStructure(*b));
}

TEST(CanonicalStructure, IgnoresTheOrderComputationsAreListedIn) {
  // A pass appends the fusion computations it creates; XLA's dump lists
  // them callees-first in its own order.
  constexpr std::string_view kEntry = R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] fusion(p), kind=kLoop, calls=f_exp
  ROOT b = f32[4] fusion(a), kind=kLoop, calls=f_neg
}
)";
  constexpr std::string_view kExp = "f_exp {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] exponential(x)\n}\n";
  constexpr std::string_view kNeg = "f_neg {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] negate(x)\n}\n";
  auto a = Parse(StrCat("HloModule a\n", kExp, kNeg, kEntry));
  auto b = Parse(StrCat("HloModule a\n", kNeg, kExp, kEntry));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(CanonicalStructure(*a), CanonicalStructure(*b));
}

TEST(CanonicalStructure, IgnoresTheOrderOfFusionOperands) {
  // The same fusion, its operands (and fused parameters) numbered the other
  // way round; a fusion computing p1 - p0 instead is another structure.
  auto a = Parse(R"(HloModule a
f {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] subtract(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] fusion(p, q), kind=kLoop, calls=f
}
)");
  auto b = Parse(R"(HloModule a
f {
  y = f32[4] parameter(0)
  x = f32[4] parameter(1)
  ROOT s = f32[4] subtract(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] fusion(q, p), kind=kLoop, calls=f
}
)");
  auto c = Parse(R"(HloModule a
f {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] subtract(y, x)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] fusion(p, q), kind=kLoop, calls=f
}
)");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(CanonicalStructure(*a), CanonicalStructure(*b));
  EXPECT_NE(CanonicalStructure(*a), CanonicalStructure(*c));
}

TEST(CanonicalStructure, OrdersUnreachableComputationsByTheirStructure) {
  // CSE leaves computations nothing calls any more; XLA's dump and passlab's
  // output list them in different orders (found replaying real XLA's dump
  // of the ResNet-50 step, cse at step 14).
  constexpr std::string_view kHead = R"(HloModule m
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";
  constexpr std::string_view kCompare = R"(%cmp (x: f32[], y: f32[]) -> pred[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %g = pred[] compare(%x, %y), direction=GT
}
)";
  constexpr std::string_view kMax = R"(%max (u: f32[], v: f32[]) -> f32[] {
  %u = f32[] parameter(0)
  %v = f32[] parameter(1)
  ROOT %m = f32[] maximum(%u, %v)
}
)";
  constexpr std::string_view kEntry = R"(ENTRY %e {
  %p = f32[8] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %z), dimensions={0}, to_apply=%add
}
)";
  auto a = Parse(StrCat(kHead, kCompare, kMax, kEntry));
  auto b = Parse(StrCat(kHead, kMax, kCompare, kEntry));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(CanonicalStructure(*a), CanonicalStructure(*b));
}

TEST(CanonicalStructure, SeesOperandOrderAndOpcodes) {
  auto a = Parse("HloModule a\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                 "  ROOT r = f32[4] subtract(p, q)\n}\n");
  auto b = Parse("HloModule a\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                 "  ROOT r = f32[4] subtract(q, p)\n}\n");
  auto c = Parse("HloModule a\nENTRY e {\n  p = f32[4] parameter(0)\n  q = f32[4] parameter(1)\n"
                 "  ROOT r = f32[4] add(p, q)\n}\n");
  ASSERT_TRUE(a && b && c);
  EXPECT_NE(CanonicalStructure(*a), CanonicalStructure(*b));
  EXPECT_NE(CanonicalStructure(*a), CanonicalStructure(*c));
}

TEST_F(DumpDir, PairsConsecutiveStepsIntoPassRuns) {
  // XLA's sequence inside the "simplification" fixed point: its start,
  // then one dump after each pass (as with a regex other than ".*", or when
  // every pass changed the module).
  Write("module_0001.jit_f.0003.simplification.after_pipeline-start.before_algsimp.txt", kAddZero);
  Write("module_0001.jit_f.0004.simplification.after_algsimp.before_simplify-sorts.txt", kJustX);
  Write("module_0001.jit_f.0005.simplification.after_simplify-sorts.before_pipeline-end.txt", kJustX);
  // A gap in the steps brackets nothing.
  Write("module_0001.jit_f.0009.optimization.after_simplification.before_dce.txt", kJustX);
  Write("module_0001.jit_f.before_optimizations.txt", kAddZero);  // not a pass run
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(dir_.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].module, "module_0001.jit_f");
  EXPECT_EQ((*runs)[0].pipeline, "simplification");
  EXPECT_EQ((*runs)[0].pass, "algsimp");
  EXPECT_EQ((*runs)[0].step, 4);
  EXPECT_EQ((*runs)[1].pass, "simplify-sorts");
}

TEST_F(DumpDir, AChangedOnlyDumpBracketsThePassAfterUnchangedOnes) {
  // With --xla_dump_hlo_pass_re=.* XLA skips the passes that changed nothing
  // (algsimp and cse here): the module dce saw is the pipeline's start.
  Write("module_0001.jit_f.0003.simplification.after_pipeline-start.before_algsimp.txt", kAddZero);
  Write("module_0001.jit_f.0004.simplification.after_dce.before_pipeline-end.txt", kJustX);
  // A nested pipeline's start and the outer pipeline's next dump: no pass
  // of one pipeline lies between them.
  Write("module_0001.jit_f.0005.fusion.after_pipeline-start.before_priority-fusion.txt", kJustX);
  Write("module_0001.jit_f.0006.optimization.after_fusion.before_dce.txt", kNegated);
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(dir_.string(), DumpPassFilter::kChangedOnly);
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].pass, "dce");
  EXPECT_EQ((*runs)[0].pipeline, "simplification");
  EXPECT_EQ((*runs)[0].step, 4);
  EXPECT_NE((*runs)[0].before_file.find(".0003."), std::string::npos);
  // Made with another regex, the same files bracket nothing: passes that
  // the regex did not match may have changed the module in between.
  absl::StatusOr<std::vector<DumpPassRun>> strict = FindDumpPassRuns(dir_.string(), DumpPassFilter::kNeighboursOnly);
  ASSERT_TRUE(strict.ok()) << strict.status();
  EXPECT_TRUE(strict->empty());
}

TEST_F(DumpDir, FindsXlaGpusTargetNamedFinalModule) {
  // XLA:GPU names the optimized module with its target.
  Write("module_0001.jit_f.0003.simplification.after_pipeline-start.before_algsimp.txt", kAddZero);
  Write("module_0001.jit_f.before_optimizations.txt", kAddZero);
  Write("module_0001.jit_f.sm_9.0a_gpu_after_optimizations.txt", kJustX);
  Write("module_0001.jit_f.sm_9.0a_gpu_after_optimizations-buffer-assignment.txt", "not HLO");
  absl::StatusOr<std::vector<FinalFusionComparison>> finals = CompareFinalFusions(dir_.string(), "gpu");
  ASSERT_TRUE(finals.ok()) << finals.status();
  ASSERT_EQ(finals->size(), 1u);
  EXPECT_EQ((*finals)[0].module, "module_0001.jit_f");
}

TEST_F(DumpDir, AgreesWhenPasslabsPassDoesWhatXlasDid) {
  Write("module_0001.jit_f.0003.simplification.after_pipeline-start.before_algsimp.txt", kAddZero);
  Write("module_0001.jit_f.0004.simplification.after_algsimp.before_simplify-sorts.txt", kJustX);
  Write("module_0001.jit_f.0005.simplification.after_simplify-sorts.before_pipeline-end.txt", kJustX);
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(dir_.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  absl::StatusOr<std::vector<DumpRunResult>> results = CheckDumpPassRuns(*runs, {});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].outcome, DumpOutcome::kAgrees) << (*results)[0].detail;
  EXPECT_TRUE((*results)[0].xla_changed);
  EXPECT_TRUE((*results)[0].passlab_changed);
  EXPECT_NE((*results)[0].passlab_place.find("simplification/algsimp"), std::string::npos)
      << (*results)[0].passlab_place;
  EXPECT_EQ((*results)[1].outcome, DumpOutcome::kAgrees) << (*results)[1].detail;
  EXPECT_FALSE((*results)[1].xla_changed);
}

TEST_F(DumpDir, DiffersWhenXlasModuleAfterIsAnother) {
  Write("module_0001.jit_f.0003.simplification.after_pipeline-start.before_algsimp.txt", kAddZero);
  Write("module_0001.jit_f.0004.simplification.after_algsimp.before_pipeline-end.txt", kNegated);
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(dir_.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  absl::StatusOr<std::vector<DumpRunResult>> results = CheckDumpPassRuns(*runs, {});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].outcome, DumpOutcome::kDiffers);
  // The first line that differs, both sides.
  EXPECT_NE((*results)[0].detail.find("XLA: '"), std::string::npos) << (*results)[0].detail;
  std::map<std::string, DumpPassTally> tally = TallyDumpRuns(*results);
  EXPECT_EQ(tally["algsimp"].differs, 1);
}

TEST_F(DumpDir, NamesPassesPasslabDoesNotRunAndBadFiles) {
  Write("module_0002.jit_g.0000.fusion.after_pipeline-start.before_triton-softmax-rewriter.txt", kJustX);
  Write("module_0002.jit_g.0001.fusion.after_triton-softmax-rewriter.before_pipeline-end.txt", kJustX);
  Write("module_0003.jit_h.0000.simplification.after_pipeline-start.before_algsimp.txt", "HloModule broken\nENTRY {");
  Write("module_0003.jit_h.0001.simplification.after_algsimp.before_pipeline-end.txt", kJustX);
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(dir_.string());
  ASSERT_TRUE(runs.ok()) << runs.status();
  absl::StatusOr<std::vector<DumpRunResult>> results = CheckDumpPassRuns(*runs, {});
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].outcome, DumpOutcome::kNotModelled);
  EXPECT_EQ((*results)[1].outcome, DumpOutcome::kInputError);
  EXPECT_NE((*results)[1].detail.find("module_0003"), std::string::npos) << (*results)[1].detail;
}

TEST_F(DumpDir, EmptyOrMissingDirectoryIsAnError) {
  EXPECT_FALSE(FindDumpPassRuns(dir_.string()).ok());
  EXPECT_FALSE(FindDumpPassRuns((dir_ / "nope").string()).ok());
}

TEST(FusionCensus, CountsKindsHeroesAndLibraryCallsUnderOneName) {
  auto m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused_reduce {
  p = f32[8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
}
fused_exp {
  p = f32[8,16] parameter(0)
  e = f32[8,16] exponential(p)
  ROOT b = f32[128] bitcast(e)
}
fused_mean {
  p = f32[8,16] parameter(0)
  z = f32[] constant(0)
  r = f32[8] reduce(p, z), dimensions={1}, to_apply=add
  n = f32[] constant(16)
  nb = f32[8] broadcast(n), dimensions={}
  ROOT d = f32[8] divide(r, nb)
}
ENTRY e {
  x = f32[8,16] parameter(0)
  y = f32[16,16] parameter(1)
  g = f32[8,16] custom-call(x, y), custom_call_target="__cublas$gemm"
  f1 = f32[128] fusion(g), kind=kLoop, calls=fused_exp
  f2 = f32[8] fusion(x), kind=kInput, calls=fused_reduce
  f3 = f32[8] fusion(x), kind=kInput, calls=fused_mean
  ROOT t = (f32[128], f32[8], f32[8]) tuple(f1, f2, f3)
}
)");
  ASSERT_TRUE(m);
  FusionCensus c = TakeFusionCensus(*m);
  EXPECT_EQ(c.fusions, 3);
  // The hero under a bitcast, and under an elementwise epilogue.
  EXPECT_EQ(c.by_kind_hero["kLoop/exponential"], 1);
  EXPECT_EQ(c.by_kind_hero["kInput/reduce"], 2);
  EXPECT_EQ(c.library_calls, 1);
  EXPECT_EQ(c.library_by_target["gemm"], 1);
}

}  // namespace
}  // namespace passlab::conformance
