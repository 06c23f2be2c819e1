// The linear-algebra, topk, stochastic-convert, bitcast and rng expanders
// end to end: modules with cholesky, the Householder QR calls, topk,
// stochastic-convert, width-changing bitcast-convert and rng compile and
// run on the CPU backend with the full gpu pipeline and with each expander
// (and the solver rewriter in front of cholesky_expander) disabled. What an
// expander leaves behind runs where the runtime implements it (cholesky,
// topk, rng-bit-generator: host routines); the rest (the QR calls,
// stochastic-convert, width-changing bitcast-convert, rng) has no emitter
// or routine, and the executable is refused with an error naming the
// instruction and its opcode. All but rng match the evaluator; rng is
// checked for its distribution (the expanded draw is another stream than
// the evaluator's).
#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "test/e2e/e2e_util.h"

namespace passlab {
namespace {

// Runs `text` with each of `disabled` and compares with the evaluator; the
// optimized text of the first (full pipeline) variant is returned.
std::string ExpectMatchesEvaluator(const std::string& text, const std::vector<std::string>& disabled,
                                   const std::string& pipeline = "gpu") {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  EXPECT_TRUE(expected.ok()) << expected.status().message();
  if (!expected.ok()) return "";
  std::string first;
  for (const std::string& d : disabled) {
    VariantRun r = OptimizeAndRun(text, d, args, pipeline);
    EXPECT_EQ(r.error, "") << pipeline << ", disabled: '" << d << "'";
    if (!r.error.empty()) continue;
    absl::Status same = CompareLiterals(*expected, r.result, {.abs = 1e-3, .rel = 1e-3});
    EXPECT_TRUE(same.ok()) << "disabled: '" << d << "': " << same.message();
    if (first.empty()) first = r.optimized;
  }
  return first;
}

// With `disabled`, the module keeps an op the CPU backend cannot run: the
// executable is not created, and the error names `what` ("name (opcode)").
void ExpectUnimplementedWithout(const std::string& text, const std::string& disabled, const std::string& what,
                                const std::string& pipeline = "gpu") {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  VariantRun r = OptimizeAndRun(text, disabled, MakeRandomArguments(*(*m)->entry_computation(), 3), pipeline);
  EXPECT_EQ(r.error.rfind("compile: ", 0), 0u) << "disabled: '" << disabled << "': " << r.error;
  EXPECT_NE(r.error.find(what), std::string::npos) << "disabled: '" << disabled << "': " << r.error;
}

// x x^T + 6 I per batch member: positive definite for every x.
constexpr char kCholesky[] = R"(HloModule cholesky
ENTRY e {
  x = f32[2,6,6] parameter(0)
  xxt = f32[2,6,6] dot(x, x), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}
  i0 = s32[2,6,6] iota(), iota_dimension=1
  i1 = s32[2,6,6] iota(), iota_dimension=2
  eq = pred[2,6,6] compare(i0, i1), direction=EQ
  eye = f32[2,6,6] convert(eq)
  c = f32[] constant(6)
  cs = f32[2,6,6] broadcast(c), dimensions={}
  shift = f32[2,6,6] multiply(eye, cs)
  a = f32[2,6,6] add(xxt, shift)
  ROOT l = f32[2,6,6] cholesky(a), lower=true
})";

TEST(LinalgRngExpandersTest, CholeskyRunsWhicheverPassTakesIt) {
  // Today's XLA:GPU expands every cholesky in optimization (gpu_compiler.cc:
  // CholeskyExpander; no cuSOLVER potrf call).
  std::string today = ExpectMatchesEvaluator(kCholesky, {"", "cholesky_expander"});
  EXPECT_EQ(today.find("__lapack$potrf"), std::string::npos) << today;
  EXPECT_EQ(today.find(" cholesky("), std::string::npos) << today;
  // The seed era's: with the solver rewriter on, the potrf call takes the
  // f32 cholesky.
  std::string old = ExpectMatchesEvaluator(
      kCholesky, {"", "cholesky_expander", "gpusolver-rewriter", "gpusolver-rewriter,cholesky_expander"}, "gpu-2021");
  EXPECT_NE(old.find("__lapack$potrf"), std::string::npos) << old;
}

TEST(LinalgRngExpandersTest, QrCallsRunExpandedOnly) {
  const std::string text = R"(HloModule qr
ENTRY e {
  a = f32[2,5,3] parameter(0)
  qr = (f32[2,5,3], f32[2,3]) custom-call(a), custom_call_target="Qr"
  r = f32[2,5,3] get-tuple-element(qr), index=0
  taus = f32[2,3] get-tuple-element(qr), index=1
  q = f32[2,5,3] custom-call(r, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  ROOT t = (f32[2,5,3], f32[2,5,3]) tuple(q, r)
})";
  std::string optimized = ExpectMatchesEvaluator(text, {""});
  EXPECT_EQ(optimized.find("custom_call_target=\"Qr\""), std::string::npos) << optimized;
  ExpectUnimplementedWithout(text, "qr_expander", "qr (custom-call)");
}

TEST(LinalgRngExpandersTest, TopkRunsAsSortOrRoutine) {
  std::string optimized = ExpectMatchesEvaluator(R"(HloModule topk
ENTRY e {
  x = f32[4,16] parameter(0)
  ROOT t = (f32[4,5], s32[4,5]) topk(x), k=5, largest=true
})", {"", "topk-decomposer"});
  EXPECT_EQ(optimized.find(" topk("), std::string::npos) << optimized;
}

TEST(LinalgRngExpandersTest, StochasticConvertRunsDecomposedOnly) {
  const std::string text = R"(HloModule stochastic
ENTRY e {
  x = f32[8,16] parameter(0)
  random = u32[8,16] parameter(1)
  ROOT c = s32[8,16] stochastic-convert(x, random)
})";
  std::string optimized = ExpectMatchesEvaluator(text, {""});
  EXPECT_EQ(optimized.find("stochastic-convert("), std::string::npos) << optimized;
  ExpectUnimplementedWithout(text, "stochastic_convert_decomposer", "c (stochastic-convert)");
}

TEST(LinalgRngExpandersTest, WidthChangingBitcastConvertRunsExpandedOnly) {
  const std::string text = R"(HloModule bitcast
ENTRY e {
  x = f32[4,8] parameter(0)
  bytes = u8[4,8,4] bitcast-convert(x)
  one = u8[] constant(1)
  ones = u8[4,8,4] broadcast(one), dimensions={}
  bumped = u8[4,8,4] xor(bytes, ones)
  ROOT y = f32[4,8] bitcast-convert(bumped)
})";
  // Today's XLA:GPU: the layout-sensitive algsimp of hlo normalization
  // turns the contiguous width-changing bitcast-converts into bitcasts
  // (algebraic_simplifier.cc, rewrite_no_op_bitcast_convert_to_bitcast)
  // before BitcastDtypesExpander, and the emitters read the bytes of the
  // wide elements; with or without the expander it runs.
  std::string optimized = ExpectMatchesEvaluator(text, {"", "bitcast_dtypes_expander"});
  EXPECT_EQ(optimized.find("u8[4,8,4]{2,1,0} bitcast-convert("), std::string::npos) << optimized;
  // The seed era's: the expander runs first, in the simplification loop,
  // and without it the backend cannot run the width-changing convert.
  std::string old = ExpectMatchesEvaluator(text, {""}, "gpu-2021");
  EXPECT_EQ(old.find("u8[4,8,4]{2,1,0} bitcast-convert("), std::string::npos) << old;
  ExpectUnimplementedWithout(text, "bitcast_dtypes_expander", "bytes (bitcast-convert)", "gpu-2021");
}

TEST(LinalgRngExpandersTest, RngRunsWithAndWithoutTheExpanders) {
  const std::string text = R"(HloModule rng
ENTRY e {
  a = f32[] constant(-1)
  b = f32[] constant(2)
  u = f32[32,32] rng(a, b), distribution=rng_uniform
  mu = f32[] constant(0.5)
  sigma = f32[] constant(1.5)
  n = f32[32,32] rng(mu, sigma), distribution=rng_normal
  ROOT t = (f32[32,32], f32[32,32]) tuple(u, n)
})";
  // Without RngExpander the rng ops stay, and rng has no CPU implementation.
  ExpectUnimplementedWithout(text, "rng-expander", " (rng): no emitter and no runtime routine");
  for (const std::string d : {"", "rng-bit-generator-expander"}) {
    VariantRun r = OptimizeAndRun(text, d, {});
    ASSERT_EQ(r.error, "") << "disabled: '" << d << "'";
    if (d.empty()) {
      EXPECT_EQ(r.optimized.find(" rng("), std::string::npos) << r.optimized;
    }
    const Literal& u = r.result.tuple_elements()[0];
    const Literal& n = r.result.tuple_elements()[1];
    double u_mean = 0, n_mean = 0, n_var = 0;
    const int64_t count = u.element_count();
    for (int64_t i = 0; i < count; ++i) {
      EXPECT_GE(u.GetDouble(i), -1.0) << d;
      EXPECT_LT(u.GetDouble(i), 2.0) << d;
      u_mean += u.GetDouble(i) / count;
      n_mean += n.GetDouble(i) / count;
    }
    for (int64_t i = 0; i < count; ++i) n_var += (n.GetDouble(i) - n_mean) * (n.GetDouble(i) - n_mean) / count;
    EXPECT_NEAR(u_mean, 0.5, 0.15) << d;   // sd of the mean: 0.027
    EXPECT_NEAR(n_mean, 0.5, 0.25) << d;   // sd of the mean: 0.047
    EXPECT_NEAR(n_var, 2.25, 0.4) << d;    // sd: 0.1
  }
}

}  // namespace
}  // namespace passlab
