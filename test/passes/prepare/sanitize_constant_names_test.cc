#include "passes/prepare/sanitize_constant_names.h"

#include <regex>

#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

PassResult RunSanitize(const std::string& hlo) {
  PassResult r = RunPass(std::make_unique<SanitizeConstantNames>(), hlo);
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

TEST(SanitizeConstantNamesTest, ReplacesDotsAndDashesInConstantNames) {
  PassResult r = RunSanitize(R"(
ENTRY e {
  p = f32[4] parameter(0)
  constant.1 = f32[4] constant({1, 2, 3, 4})
  c-2 = f32[] constant(2)
  b = f32[4] broadcast(c-2), dimensions={}
  a.1 = f32[4] add(p, constant.1)
  ROOT m = f32[4] multiply(a.1, b)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%constant_1 = f32[4]{0} constant({1, 2, 3, 4})", "add(%p, %constant_1)",
                               "%c_2 = f32[] constant(2)", "broadcast(%c_2)", "NOT:%a_1"}))
      << r.text;
}

TEST(SanitizeConstantNamesTest, KeepsLegalNames) {
  EXPECT_FALSE(RunSanitize(R"(
ENTRY e {
  p = f32[4] parameter(0)
  constant_1 = f32[4] constant({1, 2, 3, 4})
  ROOT a.1 = f32[4] add(p, constant_1)
})").changed);
}

TEST(SanitizeConstantNamesTest, EdgeCaseConstantNamesBecomeUniqueAcrossComputations) {
  PassResult r = RunSanitize(R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(1)
  s = f32[] add(a, b)
  ROOT t = f32[] multiply(s, c)
}

ENTRY e {
  p = f32[4] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%c = f32[] constant(1)", "%c_1 = f32[] constant(0)", "reduce(%p, %c_1)"})) << r.text;
}

TEST(SanitizeConstantNamesTest, EdgeCaseUniquifiesAgainstEveryInstructionName) {
  // As XLA's NameUniquer (separator "_"): "k.1" becomes "k_1", which a
  // non-constant already has (root "k", id 1), so it takes k's first free
  // id, 0; a leading digit is replaced by '_'.
  PassResult r = RunSanitize(R"(
ENTRY e {
  p = f32[] parameter(0)
  k.1 = f32[] constant(1)
  k_1 = f32[] add(p, k.1)
  1x = f32[] constant(3)
  ROOT r = f32[] multiply(k_1, 1x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%k_0 = f32[] constant(1)", "%k_1 = f32[] add(%p, %k_0)", "%_x = f32[] constant(3)",
                               "multiply(%k_1, %_x)"}))
      << r.text;
}

// XLA's sanitize_constant_names_test.cc, BufferSanitizedNameCollisionResolved:
// two constants sanitizing to the name of a non-constant get _1 and _2.
TEST(SanitizeConstantNamesTest, CollisionWithNonConstantResolvedInOrder) {
  PassResult r = RunSanitize(R"(
ENTRY kernelEntry {
  equal.to = s32[2]{0} constant({42, 73})
  equal-to = s32[2]{0} constant({67, 3})
  ROOT equal_to = s32[2]{0} add(equal.to, equal-to)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%equal_to_1 = s32[2]{0} constant({42, 73})", "%equal_to_2 = s32[2]{0} constant({67, 3})",
                               "ROOT %equal_to = s32[2]{0} add(%equal_to_1, %equal_to_2)"}))
      << r.text;
}

// XLA's NameUniquer: a "__" prefix (backends reserve it) becomes "a_".
TEST(SanitizeConstantNamesTest, EdgeCaseReservedPrefix) {
  PassResult r = RunSanitize(R"(
ENTRY e {
  p = f32[] parameter(0)
  __k = f32[] constant(2)
  ROOT m = f32[] multiply(p, __k)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%a_k = f32[] constant(2)", "multiply(%p, %a_k)"})) << r.text;
}

// Corpus: afterwards every constant name is a legal symbol, unique in the
// module; the modules verify and compute the same (CheckPassOnCorpus).
TEST(SanitizeConstantNamesTest, CorpusConstantNamesBecomeLegalSymbols) {
  CorpusPassStats stats = CheckPassOnCorpus(" constant(", [] { return std::make_unique<SanitizeConstantNames>(); });
  if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(stats.changed, 100);
  const std::regex symbol("[A-Za-z_][A-Za-z0-9_]*");
  int checked = 0;
  for (const auto& [name, text] : CorpusTextsWith(" constant(")) {
    if (++checked > 300) break;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name);
    if (!m.ok()) continue;
    HloPassPipeline pipeline("sanitize");
    pipeline.AddPass<SanitizeConstantNames>();
    ASSERT_TRUE(pipeline.Run(**m).ok()) << name;
    absl::flat_hash_set<std::string> constants;
    for (const HloComputation* c : (*m)->computations()) {
      for (const HloInstruction* inst : c->instructions()) {
        if (inst->opcode() != HloOpcode::kConstant) continue;
        EXPECT_TRUE(constants.insert(inst->name()).second) << name << ": constant " << inst->name() << " twice";
        EXPECT_TRUE(std::regex_match(inst->name(), symbol)) << name << ": " << inst->name();
      }
    }
  }
}

}  // namespace
}  // namespace passlab
