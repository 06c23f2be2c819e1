// layout-assignment end to end: whatever layouts the pass chooses (and the
// copies it inserts) compile and run on the CPU backend and match the
// evaluator, with the full gpu pipeline and with the pass disabled.
#include <gtest/gtest.h>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/str_util.h"
#include "core/backends/cpu/executable.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

struct Outcome {
  std::string error;  // "" when the result matches the evaluator
  std::string optimized;
};

Outcome OptimizeRunAndCompare(const std::string& text, const std::string& disabled) {
  Outcome out;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return {std::string(m.status().message()), ""};
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  if (!expected.ok()) return {StrCat("evaluator: ", expected.status().message()), ""};
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline("gpu", disabled);
  if (!pipeline.ok()) return {std::string(pipeline.status().message()), ""};
  if (absl::Status s = pipeline->pipeline->Run(**m).status(); !s.ok()) return {StrCat("pipeline: ", s.message()), ""};
  out.optimized = PrintModule(**m);
  absl::StatusOr<Literal> actual = RunOnCpu(**m, args);
  if (!actual.ok()) {
    out.error = std::string(actual.status().message());
    return out;
  }
  absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-3, .rel = 1e-3});
  if (!same.ok()) out.error = StrCat("wrong result: ", same.message());
  return out;
}

// Feature-major (bf01) convolutions, a relu and a dense layer: NHWC
// layouts for the convolution calls, propagated through the relu, copies
// where the dot and the result need other layouts.
constexpr char kFeatureMajorConvNet[] = R"(HloModule convnet
ENTRY e {
  x = f32[2,3,8,8] parameter(0)
  w1 = f32[4,3,3,3] parameter(1)
  w2 = f32[4,4,3,3] parameter(2)
  d = f32[256,5] parameter(3)
  c1 = f32[2,4,8,8] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  z = f32[] constant(0)
  zb = f32[2,4,8,8] broadcast(z), dimensions={}
  r1 = f32[2,4,8,8] maximum(c1, zb)
  c2 = f32[2,4,8,8] convolution(r1, w2), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  flat = f32[2,256] reshape(c2)
  ROOT y = f32[2,5] dot(flat, d), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(LayoutAssignmentRunsTest, FeatureMajorConvNetRunsWithChosenLayouts) {
  Outcome full = OptimizeRunAndCompare(kFeatureMajorConvNet, "");
  EXPECT_EQ(full.error, "");
  // The convolution calls compute in NHWC ([b, 0, 1, f] = {1,3,2,0}), which
  // layout_normalization then writes as descending [b, 0, 1, f] shapes
  // (XLA:GPU's NormalizeLayoutForGpuCustomCalls), the filters read as
  // the parameters lie, [o, i, 0, 1] (passlab's default
  // filter_layout_as_is; the [0, 1, i, o] copy without it, XLA's OHWI
  // with xla_filter_layout).
  EXPECT_NE(full.optimized.find("(f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call("), std::string::npos)
      << full.optimized;
  EXPECT_NE(full.optimized.find("dim_labels=b01f_oi01->b01f"), std::string::npos) << full.optimized;
  Outcome disabled = OptimizeRunAndCompare(kFeatureMajorConvNet, "layout-assignment");
  EXPECT_EQ(disabled.error, "");
  EXPECT_EQ(disabled.optimized.find("{1,3,2,0}"), std::string::npos) << disabled.optimized;
}

// Seed 002's tiled layout on the entry: kernels read untiled copies.
constexpr char kTiledEntry[] = R"(HloModule tiled, entry_computation_layout={(f32[3,5]{1,0:T(2,2)}, f32[3,5]{1,0})->f32[3,5]{1,0:T(2,2)}}
ENTRY e {
  p = f32[3,5]{1,0:T(2,2)} parameter(0)
  q = f32[3,5]{1,0} parameter(1)
  ROOT s = f32[3,5]{1,0:T(2,2)} add(p, q)
})";

TEST(LayoutAssignmentRunsTest, TiledEntryLayoutsRunThroughTheCopiesItInserts) {
  Outcome full = OptimizeRunAndCompare(kTiledEntry, "");
  EXPECT_EQ(full.error, "");
  EXPECT_NE(full.optimized.find("f32[3,5]{1,0:T(2,2)} copy("), std::string::npos) << full.optimized;
  // Without the pass a kernel would have to read the tiled buffer: the
  // backend refuses cleanly, naming the instruction, instead of computing
  // garbage.
  Outcome disabled = OptimizeRunAndCompare(kTiledEntry, "layout-assignment");
  EXPECT_NE(disabled.error.find("tiled layout"), std::string::npos) << disabled.error;
}

}  // namespace
}  // namespace passlab
