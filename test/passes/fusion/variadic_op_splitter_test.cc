#include "passes/fusion/variadic_op_splitter.h"
#include "test/passes/fusion_test_util.h"

namespace passlab {
namespace {

// concatenate of `n` f32[2] parameters along dimension 0.
std::string ConcatOf(int n) {
  std::string params, names;
  for (int i = 0; i < n; ++i) {
    params += "  p" + std::to_string(i) + " = f32[2] parameter(" + std::to_string(i) + ")\n";
    names += (i ? ", p" : "p") + std::to_string(i);
  }
  return "ENTRY e {\n" + params + "  ROOT c = f32[" + std::to_string(2 * n) + "] concatenate(" + names +
         "), dimensions={0}\n}\n";
}

TEST(VariadicOpSplitterTest, SplitsConcatenatesWithTooManyOperands) {
  PassResult r = RunPass(std::make_unique<VariadicOpSplitter>(), ConcatOf(300));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  // 300 = 128 + 128 + 44: three pieces and the concatenate of them.
  EXPECT_EQ(CountOpcode(*r.module->entry_computation(), HloOpcode::kConcatenate), 4) << r.text;
  for (const HloInstruction* i : r.module->entry_computation()->instructions()) {
    if (i->opcode() == HloOpcode::kConcatenate) {
      EXPECT_LE(i->operand_count(), 128) << i->name();
    }
  }
  EXPECT_TRUE(Matches(r.text, {"f32[256]{0} concatenate(", "f32[256]{0} concatenate(", "f32[88]{0} concatenate(",
                               "ROOT", "f32[600]{0} concatenate("}))
      << r.text;
}

TEST(VariadicOpSplitterTest, KeepsConcatenatesWithinTheLimit) {
  EXPECT_FALSE(RunPass(std::make_unique<VariadicOpSplitter>(), ConcatOf(128)).changed);
}

TEST(VariadicOpSplitterTest, EdgeCaseSplitsRecursivelyAndKeepsSingleLeftovers) {
  // Limit 3, 10 operands: pieces of 3,3,3 and a single x9 -> 4 operands,
  // still over the limit: (3-piece concat, x9) -> 2.
  PassResult r = RunPass(std::make_unique<VariadicOpSplitter>(VariadicOpSplitterOptions{.max_operands = 3}),
                         ConcatOf(10));
  EXPECT_TRUE(r.changed);
  ExpectModuleVerifies(r);
  const HloInstruction* root = r.module->entry_computation()->root_instruction();
  EXPECT_EQ(root->operand_count(), 2) << r.text;
  EXPECT_EQ(root->operand(1)->name(), "p9") << r.text;
}

TEST(VariadicOpSplitterTest, CorpusModulesStayValidAndComputeTheSame) {
  // A limit of 2 splits every concatenate of three or more operands.
  CorpusRunStats stats = RunOnCorpus(
      [] { return std::make_unique<VariadicOpSplitter>(VariadicOpSplitterOptions{.max_operands = 2}); });
  if (stats.modules == 0) GTEST_SKIP() << "no corpus at ../shared/corpus";
  std::printf("variadic-op-splitter (limit 2) on the corpus: %d modules, %d changed, %d evaluated\n", stats.modules,
              stats.changed, stats.evaluated);
  EXPECT_GT(stats.changed, 10);
}

}  // namespace
}  // namespace passlab
