#include "analysis/ir_diff.h"

#include <gtest/gtest.h>

#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

std::unique_ptr<HloModule> Parse(const char* text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

TEST(IrDiffTest, UnifiedDiffHasHunksWithContext) {
  std::string a = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\n";
  std::string b = "l1\nl2\nl3\nl4\nX5\nl6\nl7\nl8\nl9\n";
  std::string d = UnifiedDiff(a, b, {.context = 2});
  EXPECT_EQ(d, "--- before\n+++ after\n@@ -3,5 +3,5 @@\n l3\n l4\n-l5\n+X5\n l6\n l7\n");
  EXPECT_EQ(UnifiedDiff(a, a), "");
}

TEST(IrDiffTest, SideBySideMarksChangedRows) {
  std::string d = SideBySideDiff("a\nb\nc\n", "a\nB\nc\nd\n", 4, 1);
  EXPECT_NE(d.find("b    | B   "), std::string::npos) << d;
  EXPECT_NE(d.find("     > d   "), std::string::npos) << d;
}

TEST(IrDiffTest, StructuralDiffMatchesInstructionsByName) {
  auto before = Parse(R"(
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  a = f32[4] add(n, p)
  ROOT r = f32[4] multiply(a, a)
})");
  auto after = Parse(R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] subtract(p, p)
  e2 = f32[4] exponential(a)
  ROOT r = f32[4] multiply(e2, a)
})");
  StructuralDiff d = DiffModules(*before, *after);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_NE(d.removed[0].second.find("%n = "), std::string::npos);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_NE(d.added[0].second.find("%e2 = "), std::string::npos);
  ASSERT_EQ(d.changed.size(), 2u);
  EXPECT_EQ(d.changed[0].name, "a");
  EXPECT_EQ(d.changed[0].what, (std::vector<std::string>{"opcode", "operands"}));
  EXPECT_EQ(d.changed[1].name, "r");
  EXPECT_EQ(d.changed[1].what, (std::vector<std::string>{"operands"}));
  EXPECT_EQ(d.Summary(),
            "+1 -1 ~2 instructions; add -1, exponential +1, negate -1, subtract +1");
  EXPECT_TRUE(DiffModules(*before, *before).empty());
}

}  // namespace
}  // namespace passlab
