#include "passes/expanders/operand_upcaster.h"

#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(OperandUpcasterTest, ConvertsNarrowOperands) {
  PassResult r = RunPass(std::make_unique<OperandUpcaster>(), R"(
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3]{1,0} convert(%a)", "f32[3,4]{1,0} convert(%b)", "f32[2,4]{1,0} dot("})) << r.text;
}

TEST(OperandUpcasterTest, LeavesSameTypeDots) {
  EXPECT_FALSE(RunPass(std::make_unique<OperandUpcaster>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

TEST(ResultCasterTest, ComputesWideAndConverts) {
  PassResult r = RunPass(std::make_unique<ResultCaster>(), R"(
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT d = bf16[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,4]{1,0} dot(%a, %b)", "ROOT %convert = bf16[2,4]{1,0} convert("})) << r.text;
}

}  // namespace
}  // namespace passlab
