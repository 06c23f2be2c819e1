// The opcodes XLA added since the seed (acos, acosh, asin, asinh, atanh,
// cosh, sinh, mulhi, ragged-dot, scaled-dot, scan) on the evaluator, with
// hand-computed values, and their shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/eval/hlo_evaluator.h"
#include "core/text/hlo_parser.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

absl::StatusOr<Literal> TryEval(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  if (absl::Status s = VerifyModule(**m); !s.ok()) return s;
  return HloEvaluator().Evaluate(**m, {});
}

std::string EvalText(const std::string& text) {
  absl::StatusOr<Literal> r = TryEval(text);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->ToString() : "<error>";
}

std::string Entry(const std::string& body) { return "ENTRY e {\n" + body + "\n}\n"; }

// The unary ops are the C library's functions (XLA's evaluator uses std::
// too: hlo_evaluator_test.cc DoesAcos... tests).
TEST(Xla2026OpsTest, InverseAndHyperbolicFunctions) {
  struct Case {
    const char* op;
    double x;
    double expected;
  } cases[] = {{"acos", 0.5, std::acos(0.5)},   {"acosh", 2.0, std::acosh(2.0)}, {"asin", 0.5, std::asin(0.5)},
               {"asinh", 1.5, std::asinh(1.5)}, {"atanh", 0.25, std::atanh(0.25)}, {"cosh", 1.0, std::cosh(1.0)},
               {"sinh", -1.0, std::sinh(-1.0)}};
  for (const Case& c : cases) {
    std::string text = Entry("x = f64[] constant(" + std::to_string(c.x) + ")\n  ROOT r = f64[] " + c.op + "(x)");
    absl::StatusOr<Literal> r = TryEval(text);
    ASSERT_TRUE(r.ok()) << c.op << ": " << r.status().message();
    EXPECT_DOUBLE_EQ(r->GetDouble(0), c.expected) << c.op;
  }
  // Outside the domain: NaN, as in C.
  absl::StatusOr<Literal> nan = TryEval(Entry("x = f32[] constant(2)\n  ROOT r = f32[] acos(x)"));
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(nan->GetDouble(0)));
}

// XLA's hlo_evaluator_test.cc DoesMulhiU32, DoesMulhiS32, DoesMulhiS32Min.
TEST(Xla2026OpsTest, MulhiIsTheHighHalfOfTheWideProduct) {
  EXPECT_EQ(EvalText(Entry(R"(a = u32[2] constant({4294967295, 65536})
    b = u32[2] constant({4294967295, 65536})
    ROOT r = u32[2] mulhi(a, b))")),
            "{4294967294, 1}");
  EXPECT_EQ(EvalText(Entry(R"(a = s32[3] constant({-1, -2147483648, 3})
    b = s32[3] constant({-1, 2, -5})
    ROOT r = s32[3] mulhi(a, b))")),
            "{0, -1, -1}");
  EXPECT_EQ(EvalText(Entry(R"(a = s64[1] constant({-9223372036854775808})
    b = s64[1] constant({4})
    ROOT r = s64[1] mulhi(a, b))")),
            "{-2}");
  absl::StatusOr<Literal> floats = TryEval(Entry("a = f32[] constant(1)\n  ROOT r = f32[] mulhi(a, a)"));
  EXPECT_FALSE(floats.ok());
}

// Ragged non-contracting (XLA's InferRaggedDotOpShape mode 1): rows 0-1 use
// rhs group 0 (the identity), row 2 group 1 (twice the identity), row 3 is
// past the groups (2+1 rows) and gives zeros.
TEST(Xla2026OpsTest, RaggedDotNonContracting) {
  EXPECT_EQ(EvalText(Entry(R"(lhs = f32[4,2] constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}})
    rhs = f32[2,2,2] constant({{{1, 0}, {0, 1}}, {{2, 0}, {0, 2}}})
    sizes = s32[2] constant({2, 1})
    ROOT r = f32[4,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})")),
            "{ {1, 2}, {3, 4}, {10, 12}, {0, 0} }");
}

// Ragged contracting (mode 2): the result leads with the group; group 0 sums
// k in [0, 1), group 1 k in [1, 3).
TEST(Xla2026OpsTest, RaggedDotContracting) {
  EXPECT_EQ(EvalText(Entry(R"(lhs = f32[1,3] constant({{1, 2, 3}})
    rhs = f32[3,1] constant({{10}, {100}, {1000}})
    sizes = s32[2] constant({1, 2})
    ROOT r = f32[2,1,1] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1})")),
            "{ { {10} }, { {3200} } }");
}

TEST(Xla2026OpsTest, RaggedDotShapeErrors) {
  absl::StatusOr<Literal> no_group = TryEval(Entry(R"(lhs = f32[4,2] parameter(0)
    rhs = f32[2,2,2] parameter(1)
    sizes = s32[2] parameter(2)
    ROOT r = f32[4,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0})"));
  ASSERT_FALSE(no_group.ok());
  EXPECT_NE(std::string(no_group.status().message()).find("rhs group dimension"), std::string::npos)
      << no_group.status().message();
  absl::StatusOr<Literal> groups = TryEval(Entry(R"(lhs = f32[4,2] parameter(0)
    rhs = f32[3,2,2] parameter(1)
    sizes = s32[2] parameter(2)
    ROOT r = f32[4,2] ragged-dot(lhs, rhs, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0})"));
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(std::string(groups.status().message()).find("2 groups"), std::string::npos) << groups.status().message();
}

// Each lhs scale covers 2 consecutive k; the rhs scale is a scalar (no scale,
// as XLA's ScaledDotRewriter treats it): (1*2 + 2*2 + 3*4 + 4*4) * 1.
TEST(Xla2026OpsTest, ScaledDotAppliesBlockScales) {
  EXPECT_EQ(EvalText(Entry(R"(lhs = f32[1,4] constant({{1, 2, 3, 4}})
    rhs = f32[4,1] constant({{1}, {1}, {1}, {1}})
    ls = f32[1,2] constant({{2, 4}})
    rs = f32[] constant(7)
    ROOT r = f32[1,1] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0})")),
            "{ {34} }");
  absl::StatusOr<Literal> bad = TryEval(Entry(R"(lhs = f32[1,4] parameter(0)
    rhs = f32[4,1] parameter(1)
    ls = f32[1,3] parameter(2)
    rs = f32[] parameter(3)
    ROOT r = f32[1,1] scaled-dot(lhs, rhs, ls, rs), lhs_contracting_dims={1}, rhs_contracting_dims={0})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("not a multiple"), std::string::npos) << bad.status().message();
}

constexpr char kPrefixSum[] = R"(add {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  s = f32[] add(x, acc)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
)";

// A prefix sum, forward and reversed (XLA's scan_expander_test.cc shapes).
TEST(Xla2026OpsTest, ScanIsAPrefixSum) {
  EXPECT_EQ(EvalText(std::string(kPrefixSum) + Entry(R"(xs = f32[4] constant({1, 2, 3, 4})
    init = f32[] constant(10)
    ROOT s = (f32[4], f32[]) scan(xs, init), dimensions={0}, num_carries=1, to_apply=add)")),
            "({11, 13, 16, 20}, 20)");
  EXPECT_EQ(EvalText(std::string(kPrefixSum) + Entry(R"(xs = f32[4] constant({1, 2, 3, 4})
    init = f32[] constant(0)
    ROOT s = (f32[4], f32[]) scan(xs, init), dimensions={0}, num_carries=1, is_reverse=true, to_apply=add)")),
            "({10, 9, 7, 4}, 10)");
}

TEST(Xla2026OpsTest, ScanShapeErrors) {
  absl::StatusOr<Literal> carries = TryEval(std::string(kPrefixSum) + Entry(R"(xs = f32[4] parameter(0)
    init = s32[] parameter(1)
    ROOT s = (f32[4], f32[]) scan(xs, init), dimensions={0}, num_carries=1, to_apply=add)"));
  ASSERT_FALSE(carries.ok());
  absl::StatusOr<Literal> missing = TryEval(std::string(kPrefixSum) + Entry(R"(xs = f32[4] parameter(0)
    init = f32[] parameter(1)
    ROOT s = (f32[4], f32[]) scan(xs, init), dimensions={0}, to_apply=add)"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("num_carries"), std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace passlab
