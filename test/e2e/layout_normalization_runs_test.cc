// Layout normalization end to end: layout assignment, then XLA:GPU's
// "layout normalization" group (ReshapeDecomposer, MoveCopyToUsers,
// LayoutNormalization, the layout-sensitive algebraic simplifier,
// BroadcastCanonicalizer) on modules with non-default layouts; the result
// (physical transposes, bitcasts between normalized shapes) compiles and
// runs on the CPU backend and matches the evaluator on the original module.
#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/verify/hlo_verifier.h"
#include "passes/layout/broadcast_canonicalizer.h"
#include "passes/layout/gpu_layout_assignment.h"
#include "passes/layout/layout_normalization.h"
#include "passes/layout/move_copy_to_users.h"
#include "passes/layout/reduce_decomposer.h"
#include "passes/layout/reshape_decomposer.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "passes/simplifiers/hlo_dce.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

struct Outcome {
  std::string error;  // "" when the result matches the evaluator
  std::string optimized;
  std::string unnormalized;  // ops left computing on non-descending layouts
};

// The ops that compute on a layout other than the descending one after the
// passes: only bitcasts, parameters, tuples and reduces (which
// LayoutNormalization leaves to the reduction emitter) may, and broadcasts
// that keep their operand's dimensions in the operand's minor-to-major order:
// the layout-sensitive algsimp after LayoutNormalization folds a bitcast that
// transposes a broadcast into a broadcast with the bitcast's layout (XLA's
// algebraic_simplifier.cc HandleBitcast -> SimplifyTransposeOfBroadcast;
// algebraic_simplifier_test.cc TransposeBitcastOfBroadcast), which is no
// implicit transpose.
bool BroadcastKeepsOperandOrder(const HloInstruction& b) {
  if (b.opcode() != HloOpcode::kBroadcast) return false;
  const std::vector<int64_t>& out = b.shape().layout().minor_to_major();
  const std::vector<int64_t>& in = b.operand(0)->shape().layout().minor_to_major();
  std::vector<int64_t> seen;  // operand dimensions in the result's minor-to-major order
  for (int64_t d : out) {
    for (size_t k = 0; k < b.dimensions().size(); ++k) {
      if (b.dimensions()[k] == d) seen.push_back(static_cast<int64_t>(k));
    }
  }
  return seen == in;
}

std::string UnnormalizedOps(const HloModule& m) {
  std::string out;
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    const HloOpcode op = i->opcode();
    if (op == HloOpcode::kBitcast || op == HloOpcode::kParameter || op == HloOpcode::kTuple ||
        op == HloOpcode::kGetTupleElement || op == HloOpcode::kReduce || !i->shape().IsArray() ||
        BroadcastKeepsOperandOrder(*i)) {
      continue;
    }
    const std::vector<int64_t>& m2m = i->shape().layout().minor_to_major();
    for (size_t k = 0; k < m2m.size(); ++k) {
      if (m2m[k] != static_cast<int64_t>(m2m.size() - 1 - k)) {
        out += i->name() + " ";
        break;
      }
    }
  }
  return out;
}

Outcome NormalizeRunAndCompare(const std::string& text) {
  Outcome out;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return {std::string(m.status().message()), ""};
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  if (!expected.ok()) return {StrCat("evaluator: ", expected.status().message()), ""};
  HloPassPipeline pipeline("layout normalization e2e");
  pipeline.AddPass<GpuLayoutAssignment>();
  pipeline.AddPass<ReshapeDecomposer>();
  pipeline.AddPass<ReduceDecomposer>();
  pipeline.AddPass<HloPassFix<MoveCopyToUsers>>();
  pipeline.AddPass<LayoutNormalization>();
  pipeline.AddPass<HloPassFix<AlgebraicSimplifier>>(AlgebraicSimplifierOptions{.is_layout_sensitive = true});
  pipeline.AddPass<BroadcastCanonicalizer>();
  pipeline.AddPass<HloDCE>();
  if (absl::Status s = pipeline.Run(**m).status(); !s.ok()) return {StrCat("pipeline: ", s.message()), ""};
  out.optimized = PrintModule(**m);
  out.unnormalized = UnnormalizedOps(**m);
  if (absl::Status s = VerifyModule(**m); !s.ok()) return {StrCat("verifier: ", s.message()), out.optimized};
  absl::StatusOr<Literal> actual = RunOnCpu(**m, args);
  if (!actual.ok()) {
    out.error = std::string(actual.status().message());
    return out;
  }
  absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-3, .rel = 1e-3});
  if (!same.ok()) out.error = StrCat("wrong result: ", same.message());
  return out;
}

// Column-major entry layouts: elementwise ops, a transpose and a copy
// between layouts become ops on normalized shapes and physical transposes.
TEST(LayoutNormalizationRunsTest, ColumnMajorElementwiseAndTranspose) {
  Outcome r = NormalizeRunAndCompare(R"(HloModule m, entry_computation_layout={(f32[6,5]{0,1}, f32[5,6]{1,0})->f32[6,5]{0,1}}
ENTRY e {
  a = f32[6,5]{0,1} parameter(0)
  b = f32[5,6]{1,0} parameter(1)
  t = f32[6,5]{0,1} transpose(b), dimensions={1,0}
  x = f32[6,5]{0,1} exponential(a)
  ROOT s = f32[6,5]{0,1} add(x, t)
})");
  EXPECT_EQ(r.error, "") << r.optimized;
  EXPECT_EQ(r.unnormalized, "") << r.optimized;
}

// A reduce over the minor dimension of a column-major array (the reduced
// dimension 0 is most minor), then a broadcast back to the input layout.
TEST(LayoutNormalizationRunsTest, ReduceOverMinorDimensionOfColumnMajorAndBroadcast) {
  Outcome r = NormalizeRunAndCompare(R"(HloModule m, entry_computation_layout={(f32[16,12]{0,1})->f32[16,12]{0,1}}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,12]{0,1} parameter(0)
  z = f32[] constant(0)
  r = f32[12]{0} reduce(a, z), dimensions={0}, to_apply=add
  b = f32[16,12]{0,1} broadcast(r), dimensions={1}
  ROOT d = f32[16,12]{0,1} subtract(a, b)
})");
  EXPECT_EQ(r.error, "") << r.optimized;
  EXPECT_EQ(r.unnormalized, "") << r.optimized;
}

// A 3-d transpose between two non-default layouts, a reshape that is no
// bitcast, a slice and a pad, and a broadcast with unsorted dimensions.
TEST(LayoutNormalizationRunsTest, TransposeReshapeSlicePadAndUnsortedBroadcast) {
  Outcome r = NormalizeRunAndCompare(R"(HloModule m, entry_computation_layout={(f32[4,6,8]{0,2,1}, f32[3,4]{0,1})->(f32[8,4,6]{1,0,2}, f32[24,8]{0,1}, f32[4,5,3]{2,0,1}, f32[4,5,8]{0,2,1})}
ENTRY e {
  a = f32[4,6,8]{0,2,1} parameter(0)
  c = f32[3,4]{0,1} parameter(1)
  t = f32[8,4,6]{1,0,2} transpose(a), dimensions={2,0,1}
  r = f32[24,8]{0,1} reshape(a)
  s = f32[4,3,8]{0,2,1} slice(a), slice={[0:4], [1:4], [0:8]}
  z = f32[] constant(0.5)
  p = f32[4,5,8]{0,2,1} pad(s, z), padding=0_0x1_1x0_0
  b = f32[4,5,3]{2,0,1} broadcast(c), dimensions={2,0}
  n = f32[4,5,3]{2,0,1} negate(b)
  ROOT o = (f32[8,4,6]{1,0,2}, f32[24,8]{0,1}, f32[4,5,3]{2,0,1}, f32[4,5,8]{0,2,1}) tuple(t, r, n, p)
})");
  EXPECT_EQ(r.error, "") << r.optimized;
  EXPECT_EQ(r.unnormalized, "") << r.optimized;
}

}  // namespace
}  // namespace passlab
