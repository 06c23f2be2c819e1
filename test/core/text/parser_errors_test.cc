// Malformed HLO gets a clear "FILE:LINE:COL: error: ..." naming the place.
#include <gtest/gtest.h>

#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

struct BadInput {
  const char* name;
  const char* text;
  const char* location;  // "f.hlo:LINE:COL"
  const char* message;   // a substring of the error
};

class ParserErrorTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(ParserErrorTest, ReportsLocationAndCause) {
  const BadInput& in = GetParam();
  auto m = ParseHloModule(in.text, "f.hlo");
  ASSERT_FALSE(m.ok()) << in.name << " parsed";
  std::string message(m.status().message());
  EXPECT_EQ(message.rfind(std::string(in.location) + ": error: ", 0), 0u) << message;
  EXPECT_NE(message.find(in.message), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Parser, ParserErrorTest,
    ::testing::Values(
        BadInput{"UnknownOpcode", "HloModule m\nENTRY e {\n  ROOT x = f32[] frobnicate()\n}\n",
                 "f.hlo:3:18", "unknown opcode 'frobnicate'"},
        BadInput{"UnknownType", "ENTRY e {\n  ROOT p = f33[2] parameter(0)\n}", "f.hlo:2:12",
                 "unknown element type 'f33'"},
        BadInput{"UndefinedOperand", "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(q)\n}",
                 "f.hlo:3:25", "uses 'q', which is not defined"},
        BadInput{"UndefinedComputation",
                 "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=nope\n}",
                 "f.hlo:3:36", "computation 'nope' is not defined"},
        BadInput{"WrongOperandCount", "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] add(p)\n}",
                 "f.hlo:3:3", "'add' takes 2 operand(s)"},
        BadInput{"DuplicateName",
                 "ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n  ROOT t = () tuple()\n}",
                 "f.hlo:3:3", "defined twice"},
        BadInput{"DuplicateParameterNumber",
                 "ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n  ROOT t = () tuple()\n}",
                 "f.hlo:1:1", "two parameters numbered 0"},
        BadInput{"MissingParameterNumber",
                 "ENTRY e {\n  a = f32[] parameter(1)\n  ROOT t = () tuple()\n}", "f.hlo:1:1",
                 "has no parameter 0"},
        BadInput{"TwoRoots", "ENTRY e {\n  ROOT a = f32[] constant(1)\n  ROOT b = f32[] constant(2)\n}",
                 "f.hlo:3:3", "two ROOT instructions"},
        BadInput{"ConstantTooManyElements", "ENTRY e {\n  ROOT c = f32[2] constant({1, 2, 3})\n}",
                 "f.hlo:2:28", "too many elements"},
        BadInput{"ConstantOutOfRange", "ENTRY e {\n  ROOT c = s8[] constant(300)\n}", "f.hlo:2:26",
                 "out of range for s8"},
        BadInput{"NanPayloadTooWide", "ENTRY e {\n  ROOT c = bf16[] constant(nan(0x3ff))\n}",
                 "f.hlo:2:34", "does not fit"},
        BadInput{"MissingRequiredAttribute",
                 "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[2] slice(p)\n}", "f.hlo:3:3",
                 "missing the required attribute 'slice'"},
        BadInput{"UnknownAttribute",
                 "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT n = f32[] negate(p), colour=blue\n}",
                 "f.hlo:3:29", "unknown attribute 'colour' for 'negate'"},
        BadInput{"DuplicateAttribute",
                 "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] reverse(p), dimensions={0}, dimensions={0}\n}",
                 "f.hlo:3:47", "given twice"},
        BadInput{"BadDimLabels",
                 "ENTRY e {\n  a = f32[1,2,2,1] parameter(0)\n  b = f32[1,1,1,1] parameter(1)\n"
                 "  ROOT c = f32[1,2,2,1] convolution(a, b), window={size=1x1}, dim_labels=bxyf_01io->b01f\n}",
                 "f.hlo:4:74", "invalid dim_labels"},
        BadInput{"UnterminatedString",
                 "ENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"abc\n}", "f.hlo:2:52",
                 "unterminated string"},
        BadInput{"Cycle",
                 "ENTRY e {\n  a = f32[] negate(b)\n  b = f32[] negate(a)\n  ROOT t = f32[] add(a, b)\n}",
                 "f.hlo:2:3", "depends on itself"},
        BadInput{"WrapsOpWithOwnAsyncOpcodes",
                 "ENTRY e {\n  p = f32[] parameter(0)\n  s = ((f32[]), f32[], u32[]) recv-start(p)\n}",
                 "f.hlo:3:31", "has its own async opcodes"},
        BadInput{"SelfCall",
                 "c {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}\n"
                 "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c\n}",
                 "f.hlo:1:1", "calls itself"},
        BadInput{"Empty", "", "f.hlo:1:1", "expected at least one computation"},
        BadInput{"UnclosedComputation", "ENTRY e {\n  ROOT c = f32[] constant(1)\n", "f.hlo:1:1",
                 "is not closed"}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return std::string(info.param.name); });

TEST(ParserErrorTest, DeepNestingIsAnErrorNotACrash) {
  std::string shape(5000, '(');
  std::string text = "ENTRY e {\n  ROOT p = " + shape + "f32[]" + std::string(5000, ')') + " parameter(0)\n}";
  auto m = ParseHloModule(text, "f.hlo");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("too deep"), std::string::npos);
}

}  // namespace
}  // namespace passlab
