#include "gui/state/text_model.h"

#include <gtest/gtest.h>

namespace passlab::gui {
namespace {

std::string Kinds(std::string_view line) {
  std::string out;
  for (const Token& t : TokenizeLine(line)) {
    if (t.kind == TokenKind::kPlain) continue;
    const char* k = "";
    switch (t.kind) {
      case TokenKind::kName: k = "N"; break;
      case TokenKind::kOpcode: k = "O"; break;
      case TokenKind::kType: k = "T"; break;
      case TokenKind::kNumber: k = "#"; break;
      case TokenKind::kKeyword: k = "K"; break;
      case TokenKind::kAttribute: k = "A"; break;
      case TokenKind::kString: k = "S"; break;
      case TokenKind::kPlain: break;
    }
    out += std::string(k) + "[" + std::string(line.substr(t.begin, t.end - t.begin)) + "] ";
  }
  return out;
}

TEST(TokenizeLineTest, ColoursHloNamesTypesOpcodesAndAttributes) {
  EXPECT_EQ(Kinds("  ROOT %add.3 = f32[2,3]{1,0} add(f32[2,3]{1,0} %x, f32[2,3]{1,0} %y), metadata={op_name=\"a\"}"),
            "K[ROOT] N[%add.3] T[f32[2,3]{1,0}] O[add] T[f32[2,3]{1,0}] N[%x] T[f32[2,3]{1,0}] N[%y] A[metadata] "
            "A[op_name] S[\"a\"] ");
  EXPECT_EQ(Kinds("%c = s32[] constant(-7), sharding={replicated}"), "N[%c] T[s32[]] O[constant] #[-7] A[sharding] ");
}

TEST(TokenizeLineTest, ColoursMlir) {
  EXPECT_EQ(Kinds("    %0 = arith.addf %a, %b : f32"), "N[%0] O[arith.addf] N[%a] N[%b] T[f32] ");
  EXPECT_EQ(Kinds("func.func @f(%arg0: tensor<8xf32>)"), "K[func.func] N[@f] N[%arg0] T[tensor<8xf32>] ");
}

TEST(TokenizeLineTest, TokensCoverTheLine) {
  std::string line = "  %fusion = (f32[4]{0}, s8[]) fusion(%p), kind=kLoop, calls=%fused_computation -> x";
  int32_t at = 0;
  for (const Token& t : TokenizeLine(line)) {
    EXPECT_EQ(t.begin, at);
    at = t.end;
  }
  EXPECT_EQ(at, static_cast<int32_t>(line.size()));
}

TEST(TextModelTest, IndexesDefinitionsOfInstructionsAndComputations) {
  auto text = std::make_shared<const std::string>(
      "HloModule m\n\n%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\nENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(1)\n}\n");
  std::shared_ptr<const TextModel> m = BuildTextModel(text);
  EXPECT_EQ(m->lines.size(), 11u);
  EXPECT_EQ(m->FindDefinition("%add"), 2);
  EXPECT_EQ(m->FindDefinition("%a"), 3);
  EXPECT_EQ(m->FindDefinition("%s"), 5);
  EXPECT_EQ(m->FindDefinition("%main"), 8);
  EXPECT_EQ(m->FindDefinition("%c"), 9);
  EXPECT_EQ(m->FindDefinition("%nope"), -1);
  EXPECT_EQ(SearchLines(*m, "PARAMETER"), (std::vector<int64_t>{3, 4}));
}

TEST(DiffModelTest, PairsRemovedAndAddedRunsSideBySide) {
  auto a = std::make_shared<const std::string>("l1\nl2\nl3\nl4\nl5\n");
  auto b = std::make_shared<const std::string>("l1\nX2\nY2\nl3\nl4\nZ\n");
  std::shared_ptr<const DiffModel> d = BuildDiffModel(a, b, /*parse_hlo=*/false);
  EXPECT_EQ(d->added, 3);
  EXPECT_EQ(d->removed, 2);
  ASSERT_EQ(d->line_change_starts.size(), 2u);
  ASSERT_EQ(d->row_change_starts.size(), 2u);
  // Row 1: l2 | X2, row 2: (blank) | Y2.
  const DiffModel::Row& r1 = d->rows[d->row_change_starts[0]];
  ASSERT_GE(r1.left, 0);
  ASSERT_GE(r1.right, 0);
  EXPECT_EQ(d->lines[r1.left].text, "l2");
  EXPECT_EQ(d->lines[r1.right].text, "X2");
  const DiffModel::Row& r2 = d->rows[d->row_change_starts[0] + 1];
  EXPECT_EQ(r2.left, -1);
  EXPECT_EQ(d->lines[r2.right].text, "Y2");
  EXPECT_EQ(d->summary, "+3 -2 lines");
}

TEST(DiffModelTest, NextChangeWrapsAround) {
  std::vector<int64_t> starts = {3, 10, 20};
  EXPECT_EQ(NextChange(starts, -1, true), 3);
  EXPECT_EQ(NextChange(starts, 3, true), 10);
  EXPECT_EQ(NextChange(starts, 20, true), 3);
  EXPECT_EQ(NextChange(starts, 10, false), 3);
  EXPECT_EQ(NextChange(starts, 3, false), 20);
  EXPECT_EQ(NextChange({}, 0, true), -1);
}

}  // namespace
}  // namespace passlab::gui
