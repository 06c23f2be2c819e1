#include "core/ir/str_util.h"
#include "core/verify/hlo_verifier.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

// Runs the expander on one rng-bit-generator and checks, beyond RunPass's
// evaluator comparison on random states, that the expansion reproduces the
// evaluator's bits exactly on a few chosen states (carries included).
PassResult ExpandAndCompareBits(const std::string& algorithm, const std::string& state, const std::string& data,
                                const std::vector<std::vector<uint64_t>>& states) {
  std::string hlo = StrCat("ENTRY e {\n  s = ", state, " parameter(0)\n  ROOT r = (", state, ", ", data,
                           ") rng-bit-generator(s), algorithm=", algorithm, "\n}");
  auto original = ParseHloModule(hlo, "rng.hlo");
  EXPECT_TRUE(original.ok()) << original.status().message();
  PassResult r = RunPass(std::make_unique<RngBitGeneratorExpander>(), hlo);
  EXPECT_TRUE(r.changed);
  if (r.module == nullptr || !original.ok()) return r;
  absl::Status verified = VerifyModule(*r.module);
  EXPECT_TRUE(verified.ok()) << verified.message();
  for (const std::vector<uint64_t>& words : states) {
    Literal st(Shape(PrimitiveType::kU64, {static_cast<int64_t>(words.size())}));
    for (size_t i = 0; i < words.size(); ++i) st.SetBits(static_cast<int64_t>(i), words[i]);
    std::vector<Literal> args;
    args.push_back(st);
    absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**original, args);
    absl::StatusOr<Literal> got = HloEvaluator().Evaluate(*r.module, args);
    EXPECT_TRUE(want.ok() && got.ok());
    if (!want.ok() || !got.ok()) continue;
    for (int part = 0; part < 2; ++part) {
      const Literal& w = want->tuple_elements()[part];
      const Literal& g = got->tuple_elements()[part];
      EXPECT_EQ(w.element_count(), g.element_count());
      int64_t mismatches = 0;
      for (int64_t i = 0; i < std::min(w.element_count(), g.element_count()); ++i) {
        if (w.GetBits(i) != g.GetBits(i) && mismatches++ < 3) {
          ADD_FAILURE() << algorithm << " " << data << " part " << part << " element " << i << ": want "
                        << w.GetBits(i) << " got " << g.GetBits(i);
        }
      }
    }
  }
  return r;
}

const std::vector<std::vector<uint64_t>> kStates2 = {
    {0, 0}, {0x0123456789abcdefull, 42}, {7, 0xfffffffffffffffeull}, {0xdeadbeefcafef00dull, 0xffffffffull}};
const std::vector<std::vector<uint64_t>> kStates3 = {
    {1, 2, 3}, {0xffffffffffffffffull, 0xfffffffffffffffdull, 5}, {9, 0xffffffffffffffffull, 0xffffffffffffffffull}};

TEST(RngBitGeneratorExpanderTest, PhiloxU32MatchesEvaluatorBits) {
  PassResult r = ExpandAndCompareBits("rng_philox", "u64[2]", "u32[3,5]", kStates2);
  EXPECT_TRUE(Matches(r.text, {"%rng_philox_u64_2_to_u32_3x5", "ROOT %call", "NOT:rng-bit-generator("})) << r.text;
}

TEST(RngBitGeneratorExpanderTest, PhiloxThreeWordStateAndU64) {
  ExpandAndCompareBits("rng_philox", "u64[3]", "u64[7]", kStates3);
  ExpandAndCompareBits("rng_philox", "u64[3]", "f32[2,3]", kStates3);
}

TEST(RngBitGeneratorExpanderTest, ThreeFryMatchesEvaluatorBits) {
  ExpandAndCompareBits("rng_three_fry", "u64[2]", "u32[4,3]", kStates2);   // split along dim 0
  ExpandAndCompareBits("rng_three_fry", "u64[2]", "u32[3,5]", kStates2);   // no even dim: largest, odd
  ExpandAndCompareBits("rng_three_fry", "u64[2]", "u64[5]", kStates2);
  ExpandAndCompareBits("rng_three_fry", "u64[3]", "s16[3,2]", kStates3);  // narrow type, extra state word
}

TEST(RngBitGeneratorExpanderTest, DefaultIsPhilox) {
  PassResult r = ExpandAndCompareBits("rng_default", "u64[2]", "u8[9]", kStates2);
  EXPECT_TRUE(Matches(r.text, {"%rng_philox_u64_2_to_u8_9"})) << r.text;
}

TEST(RngBitGeneratorExpanderTest, EdgeCaseScalarAndSharedGenerator) {
  PassResult r = RunPass(std::make_unique<RngBitGeneratorExpander>(), R"(
ENTRY e {
  s = u64[2] parameter(0)
  a = (u64[2], f64[]) rng-bit-generator(s), algorithm=rng_three_fry
  s1 = u64[2] get-tuple-element(a), index=0
  b = (u64[2], f64[]) rng-bit-generator(s1), algorithm=rng_three_fry
  x = f64[] get-tuple-element(a), index=1
  y = f64[] get-tuple-element(b), index=1
  ROOT t = (f64[], f64[]) tuple(x, y)
})");
  EXPECT_TRUE(r.changed);
  // One generator computation serves both calls.
  EXPECT_TRUE(Matches(r.text, {"%rng_three_fry_u64_2_to_f64 ", "NOT:rng_three_fry_u64_2_to_f64.1",
                               "NOT:rng-bit-generator("}))
      << r.text;
}

TEST(RngBitGeneratorExpanderTest, EdgeCaseZeroElementsStillAdvanceNothing) {
  ExpandAndCompareBits("rng_philox", "u64[2]", "u32[0]", kStates2);
  ExpandAndCompareBits("rng_three_fry", "u64[2]", "u32[3,0]", kStates2);
}

TEST(RngBitGeneratorExpanderTest, LeavesPredOutput) {
  EXPECT_FALSE(RunPass(std::make_unique<RngBitGeneratorExpander>(), R"(
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], pred[4]) rng-bit-generator(s), algorithm=rng_philox
})").changed);
}

}  // namespace
}  // namespace passlab
