// Shapes, layouts, literals and the graph-editing API of core/ir.
#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

TEST(ShapeTest, PrintsLikeXla) {
  EXPECT_EQ(Shape(PrimitiveType::kF32, {3, 5}).ToString(), "f32[3,5]{1,0}");
  EXPECT_EQ(Shape::Scalar(PrimitiveType::kS32).ToString(), "s32[]");
  EXPECT_EQ(Shape::Tuple({Shape::Scalar(PrimitiveType::kF32), Shape::Token()}).ToString(),
            "(f32[], token[])");
  Shape dynamic(PrimitiveType::kBF16, {4, Shape::kUnboundedSize});
  dynamic.set_dynamic_dimension(0, true);
  dynamic.set_dynamic_dimension(1, true);
  EXPECT_EQ(dynamic.ToString(), "bf16[<=4,?]{1,0}");
  EXPECT_EQ(Shape(PrimitiveType::kF32, {3, 5}).ToString(/*print_layout=*/false), "f32[3,5]");
}

TEST(ShapeTest, SizesAndSubshapes) {
  Shape t = Shape::Tuple({Shape(PrimitiveType::kF32, {2, 3}), Shape::Tuple({Shape(PrimitiveType::kS8, {7})})});
  EXPECT_EQ(t.subshape({1, 0}).ToString(), "s8[7]{0}");
  EXPECT_TRUE(t.IsValidIndex({1, 0}));
  EXPECT_FALSE(t.IsValidIndex({2}));
  EXPECT_EQ(t.total_leaf_bytes(), 2 * 3 * 4 + 7);
  EXPECT_EQ(Shape(PrimitiveType::kF32, {0, 4}).element_count(), 0);
}

TEST(LayoutTest, PrintsEveryField) {
  Layout l({1, 0});
  l.mutable_tiles().push_back(Tile{{8, 128}});
  l.mutable_tiles().push_back(Tile{{2, 1}});
  l.set_element_size_in_bits(4);
  l.set_memory_space(1);
  EXPECT_EQ(l.ToString(), "{1,0:T(8,128)(2,1)E(4)S(1)}");
  EXPECT_EQ((Tile{{Tile::kCombineDimension, 2, Tile::kCombineDimension, 3}}).ToString(), "(*,2,*,3)");
  EXPECT_TRUE(Layout::Default(3).IsDefault());
  EXPECT_FALSE(l.IsPlain());
}

TEST(LiteralTest, RoundsSmallFloatsToNearestEven) {
  Literal l(Shape(PrimitiveType::kBF16, {3}));
  l.SetDouble(0, 1.0 + std::ldexp(1.0, -8));      // tie -> even (1.0)
  l.SetDouble(1, 1.0 + 3 * std::ldexp(1.0, -8));  // tie -> even (1 + 2^-6)
  l.SetDouble(2, 3.0e38 * 10);                    // overflow -> inf
  EXPECT_EQ(l.GetDouble(0), 1.0);
  EXPECT_EQ(l.GetDouble(1), 1.0 + std::ldexp(1.0, -6));
  EXPECT_TRUE(std::isinf(l.GetDouble(2)));
  EXPECT_EQ(l.ToString(), "{1, 1.016, inf}");  // shortest text that reads back
}

TEST(LiteralTest, ConvertFollowsXlaRules) {
  Literal f = Literal::Vector<float>({1e10f, -1e10f, std::nanf(""), -3.7f, 250.5f});
  auto s8 = f.Convert(PrimitiveType::kS8);
  ASSERT_TRUE(s8.ok());
  EXPECT_EQ(s8->ToString(), "{127, -128, 0, -3, 127}");
  auto u8 = f.Convert(PrimitiveType::kU8);
  ASSERT_TRUE(u8.ok());
  EXPECT_EQ(u8->ToString(), "{255, 0, 0, 0, 250}");
  Literal i = Literal::Vector<int32_t>({-1, 300});
  auto wrapped = i.Convert(PrimitiveType::kU8);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->ToString(), "{255, 44}");
}

TEST(LiteralTest, SubByteIntegersSignExtend) {
  Literal l(Shape(PrimitiveType::kS4, {2}));
  l.SetInt(0, -8);
  l.SetInt(1, 7);
  EXPECT_EQ(l.GetInt(0), -8);
  EXPECT_EQ(l.GetInt(1), 7);
  EXPECT_EQ(l.ToString(), "{-8, 7}");
}

TEST(LiteralTest, EqualityIgnoresLayout) {
  Literal a = Literal::Vector<float>({1, 2});
  Literal b = a;
  Shape s = b.shape();
  s.mutable_layout().set_memory_space(1);
  b.set_shape_layout(s);
  EXPECT_EQ(a, b);
}

std::unique_ptr<HloModule> Parse(const char* text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

TEST(GraphTest, ReplaceAndRemoveKeepUsersConsistent) {
  auto m = Parse(R"(
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  a = f32[4] add(n, n)
  ROOT r = f32[4] multiply(a, p)
})");
  HloComputation* c = m->entry_computation();
  HloInstruction* n = c->GetInstructionWithName("n");
  HloInstruction* p = c->GetInstructionWithName("p");
  HloInstruction* a = c->GetInstructionWithName("a");
  ASSERT_EQ(n->users().size(), 1u);  // a uses n twice but is one user
  ASSERT_TRUE(c->ReplaceInstruction(n, p).ok());
  EXPECT_EQ(c->GetInstructionWithName("n"), nullptr);  // dead, removed
  EXPECT_EQ(a->operand(0), p);
  EXPECT_EQ(a->operand(1), p);
  EXPECT_EQ(p->user_count(), 2);  // a and r
  // Replacing the root updates the root.
  HloInstruction* r = c->root_instruction();
  HloInstruction* copy = c->AddInstruction(HloInstruction::CreateUnary(r->shape(), HloOpcode::kCopy, a));
  ASSERT_TRUE(c->ReplaceInstruction(r, copy).ok());
  EXPECT_EQ(c->root_instruction(), copy);
  EXPECT_FALSE(c->RemoveInstruction(a).ok());  // still used
}

TEST(GraphTest, ManyUsersStayConsistent) {
  // More users than the index threshold: add, remove and check membership.
  auto m = Parse("ENTRY e { ROOT p = f32[] parameter(0) }");
  HloComputation* c = m->entry_computation();
  HloInstruction* p = c->parameter_instruction(0);
  std::vector<HloInstruction*> users;
  for (int i = 0; i < 100; ++i) {
    users.push_back(c->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kNegate, p)));
  }
  EXPECT_EQ(p->user_count(), 100);
  for (int i = 0; i < 100; i += 2) ASSERT_TRUE(c->RemoveInstruction(users[i]).ok());
  EXPECT_EQ(p->user_count(), 50);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(users[i]->IsUserOf(p), i % 2 == 1) << i;
}

TEST(GraphTest, NewInstructionsGetUniqueNames) {
  auto m = Parse("ENTRY e {\n  add = f32[] parameter(0)\n  ROOT add.1 = f32[] negate(add)\n}");
  HloComputation* c = m->entry_computation();
  HloInstruction* x = c->AddInstruction(
      HloInstruction::CreateBinary(Shape::Scalar(PrimitiveType::kF32), HloOpcode::kAdd,
                                   c->parameter_instruction(0), c->parameter_instruction(0)));
  EXPECT_EQ(x->name(), "add.2");
  HloInstruction* y = c->AddInstruction(HloInstruction::CreateUnary(
      Shape::Scalar(PrimitiveType::kF32), HloOpcode::kNegate, x));
  EXPECT_EQ(y->name(), "negate");
}

TEST(GraphTest, PostOrderPutsOperandsFirst) {
  auto m = Parse(R"(
ENTRY e {
  ROOT r = f32[] add(b, a)
  a = f32[] parameter(0)
  b = f32[] negate(a)
})");
  std::vector<HloInstruction*> order = m->entry_computation()->MakeInstructionPostOrder();
  std::vector<std::string> names;
  for (HloInstruction* i : order) names.push_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "r"}));
}

TEST(GraphTest, InstructionSequenceSetsPostOrderAndPrintedOrder) {
  auto m = Parse(R"(
ENTRY e {
  a = f32[] parameter(0)
  x = f32[] negate(a)
  y = f32[] exponential(a)
  ROOT r = f32[] add(x, y)
})");
  HloComputation* c = m->entry_computation();
  auto get = [&](const char* n) { return c->GetInstructionWithName(n); };
  ASSERT_TRUE(c->SetInstructionSequence({get("a"), get("y"), get("x"), get("r")}).ok());
  // The sequence is the post order of a scheduled module (as XLA prints a
  // scheduled module in its sequence; unscheduled, XLA's post order walks
  // from the root).
  m->set_is_scheduled(true);
  std::vector<std::string> names;
  for (HloInstruction* i : c->MakeInstructionPostOrder()) names.push_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "y", "x", "r"}));
  std::string text = PrintModule(*m);
  EXPECT_LT(text.find("exponential"), text.find("negate")) << text;

  // Not topological, incomplete or foreign: refused, nothing changes.
  absl::Status bad = c->SetInstructionSequence({get("x"), get("a"), get("y"), get("r")});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("x is sequenced before its dependency a"), std::string::npos) << bad;
  EXPECT_FALSE(c->SetInstructionSequence({get("a"), get("x"), get("r")}).ok());
  EXPECT_FALSE(c->SetInstructionSequence({get("a"), get("x"), get("x"), get("r")}).ok());
  names.clear();
  for (HloInstruction* i : c->MakeInstructionPostOrder()) names.push_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "y", "x", "r"}));
}

TEST(ModuleTest, PostOrderHasCalleesBeforeCallersAndEntryLast) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=outer
}
outer {
  x = f32[] parameter(0)
  ROOT y = f32[] call(x), to_apply=inner
}
inner {
  ROOT z = f32[] parameter(0)
})");
  std::vector<std::string> names;
  for (HloComputation* c : m->MakeComputationPostOrder()) names.push_back(c->name());
  EXPECT_EQ(names, (std::vector<std::string>{"inner", "outer", "e"}));
  EXPECT_EQ(m->entry_computation()->name(), "e");
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

TEST(LiteralTest, SmallFloatStoresUseTheFormatsRounding) {
  Literal l(Shape(PrimitiveType::kF8E4M3FN, {3}));
  l.SetDouble(0, 1.1875);  // tie between 1.125 and 1.25 -> even (1.25)
  l.SetDouble(1, 500);     // past 448 with no inf -> NaN
  l.SetDouble(2, -0.0);
  EXPECT_EQ(l.ToString(), "{1.2, nan, -0}");
  EXPECT_EQ(l.GetDouble(0), 1.25);
}

}  // namespace
}  // namespace passlab
