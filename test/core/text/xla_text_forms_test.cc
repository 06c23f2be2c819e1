// Forms of XLA's current HLO text that passlab's parser takes and its
// printer gives back: buffer shapes, composite calls, an inline computation
// followed by more attributes, compact get-tuple-element operands, blanks
// before a shape's '[' and sparse convolutions. Each text comes from the XLA
// test named in its comment.
#include <gtest/gtest.h>

#include <string>

#include "core/ir/hlo_equal.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

// Parses `text`, checks print(parse(print(m))) == print(m) and structural
// equality, and returns the printed text.
std::string RoundTrip(const std::string& text) {
  auto m = ParseHloModule(text, "t.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  std::string once = PrintModule(**m);
  auto again = ParseHloModule(once, "printed.hlo");
  EXPECT_TRUE(again.ok()) << once << "\n" << again.status().message();
  if (!again.ok()) return once;
  EXPECT_EQ(PrintModule(**again), once);
  std::string difference;
  EXPECT_TRUE(StructurallyEqual(**m, **again, &difference)) << difference;
  return once;
}

bool Contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

// xla/service/copy_insertion_test.cc (the "Pin"/"Unpin" tests) and
// HloParserTest.ParseBufferScalar / ParseBufferArray.
TEST(XlaTextFormsTest, BufferShapesEverywhereAShapeGoes) {
  const std::string text = R"(HloModule test, entry_computation_layout={(b(f32[16]{0}), f32[16]{0})->f32[16]{0}}

while_body {
  param = (b(f32[16]), f32[16]) parameter(0)
  pw0 = b(f32[16]) get-tuple-element(param), index=0
  call0 = b(f32[16]) custom-call(pw0), custom_call_target="update0", output_to_operand_aliasing={{}: (0, {})}
  pw1 = f32[16] get-tuple-element(param), index=1
  ROOT tuple = (b(f32[16]), f32[16]) tuple(call0, pw1)
}

while_cond {
  param = (b(f32[16]), f32[16]) parameter(0)
  ROOT c = pred[] constant(true)
}

ENTRY main {
  p0 = b(f32[16]) parameter(0)
  p1 = f32[16] parameter(1)
  t = (b(f32[16]), f32[16]) tuple(p0, p1)
  w = (b(f32[16]), f32[16]) while(t), condition=while_cond, body=while_body
  w0 = b(f32[16]) get-tuple-element(w), index=0
  ROOT d = f32[16] custom-call(w0), custom_call_target="Unpin", output_to_operand_aliasing={{}: (0, {})}
}
)";
  std::string printed = RoundTrip(text);
  EXPECT_TRUE(Contains(printed, "entry_computation_layout={(b(f32[16]{0}), f32[16]{0})->f32[16]{0}}"))
      << printed;
  EXPECT_TRUE(Contains(printed, "%pw0 = b(f32[16]{0}) get-tuple-element(")) << printed;
  EXPECT_TRUE(Contains(printed, "(b(f32[16]{0}), f32[16]{0}) parameter(0)")) << printed;

  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Shape& p0 = (*m)->entry_computation()->parameter_instruction(0)->shape();
  EXPECT_TRUE(p0.IsBuffer());
  EXPECT_EQ(p0.element_type(), PrimitiveType::kF32);
  EXPECT_EQ(p0.dimensions(), (std::vector<int64_t>{16}));
}

TEST(XlaTextFormsTest, BufferShapeStandalone) {
  // HloParserTest.ParseBufferScalar, ParseBufferArray.
  absl::StatusOr<Shape> scalar = ParseShape("b(s32[])");
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_TRUE(scalar->IsBuffer());
  EXPECT_EQ(scalar->ToString(), "b(s32[])");
  absl::StatusOr<Shape> array = ParseShape("b(f32[8,16]{1,0})");
  ASSERT_TRUE(array.ok()) << array.status().message();
  EXPECT_EQ(array->ToString(), "b(f32[8,16]{1,0})");
  // HloParserTest.ParseBufferMoreThanOneElement: a buffer holds one array.
  absl::StatusOr<Shape> two = ParseShape("b(s32[], f32[])");
  ASSERT_FALSE(two.ok());
  EXPECT_TRUE(Contains(std::string(two.status().message()), "expected ')' closing a buffer shape"))
      << two.status().message();
  absl::StatusOr<Shape> tuple = ParseShape("b((s32[]))");
  ASSERT_FALSE(tuple.ok());
  EXPECT_TRUE(Contains(std::string(tuple.status().message()), "must hold an array shape"))
      << tuple.status().message();
}

TEST(XlaTextFormsTest, CompositeCall) {
  // HloParserTest round-trip case "CompositeCall".
  const std::string text = R"(HloModule CompositeCall, entry_computation_layout={()->f32[]}

%add (x: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %constant = f32[] constant(2)
  ROOT %z = f32[] add(f32[] %x, f32[] %constant)
}

ENTRY %CompositeCall.v2 () -> f32[] {
  %constant.1 = f32[] constant(42)
  ROOT %call = f32[] call(f32[] %constant.1), to_apply=%add, is_composite=true, frontend_attributes={composite.attributes={n = 1 : i32, tensor = dense<1> : tensor<i32>},composite.name="foo.bar",composite.version="1"}
}
)";
  std::string printed = RoundTrip(text);
  EXPECT_TRUE(Contains(printed, "to_apply=%add, is_composite=true, frontend_attributes={")) << printed;
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_TRUE((*m)->entry_computation()->root_instruction()->attrs().is_composite);
}

TEST(XlaTextFormsTest, AsyncExecutionThreadAfterInlineComputation) {
  // xla/hlo/transforms/simplifiers/hlo_dce_test.cc, HloDceTest.UnusedAsyncParameter.
  const std::string text = R"(HloModule main

ENTRY main {
  arg.0 = s32[] parameter(0)
  arg.1 = s32[] parameter(1)
  call-start.0 = ((s32[], s32[]), (s32[]), s32[]) call-start(arg.0, arg.1), to_apply={
    arg.0 = s32[] parameter(0)
    arg.1 = s32[] parameter(1)
    ROOT tuple.0 = (s32[]) tuple(arg.0)
  }, async_execution_thread="thread"
  ROOT call-done.0 = (s32[]) call-done(call-start.0)
}
)";
  std::string printed = RoundTrip(text);
  EXPECT_TRUE(Contains(printed, "async_execution_thread=\"thread\"")) << printed;
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* done = (*m)->entry_computation()->root_instruction();
  const HloInstruction* start = done->operand(0);
  EXPECT_EQ(start->async_execution_thread(), "thread");
  EXPECT_EQ(done->async_execution_thread(), "thread");
  // The inline to_apply computation belongs to the wrapped call, not to the
  // async computation's thread.
  EXPECT_EQ(start->async_wrapped_instruction()->opcode(), HloOpcode::kCall);
}

TEST(XlaTextFormsTest, InlineWhileComputationsFollowedByBody) {
  // xla/service/while_loop_pipeline_unroller_test.cc: "condition={...}, body=...".
  const std::string text = R"(HloModule m

ENTRY main {
  p = (s32[]) parameter(0)
  ROOT w = (s32[]) while(p), condition={
    c = (s32[]) parameter(0)
    ROOT t = pred[] constant(true)
  }, body={
    b = (s32[]) parameter(0)
    ROOT r = (s32[]) tuple(s32[] get-tuple-element(b), index=0)
  }
}
)";
  RoundTrip(text);
}

TEST(XlaTextFormsTest, CompactGetTupleElementOperands) {
  // HloParserTest round-trip cases "CompactGte": "%p0#0" is a
  // get-tuple-element named "p0_0", shared by both uses.
  std::string printed = RoundTrip(R"(HloModule test

ENTRY test {
  p0 = (f32[10], f16[10]) parameter(0)
  ROOT root = f32[10] add(f32[10] %p0#0, f32[10] %p0#0)
})");
  EXPECT_TRUE(Contains(printed, "%p0_0 = f32[10]{0} get-tuple-element((f32[10]{0}, f16[10]{0}) %p0), index=0"))
      << printed;
  EXPECT_TRUE(Contains(printed, "add(f32[10]{0} %p0_0, f32[10]{0} %p0_0)")) << printed;
  // HloParserTest.CompactGteMixedNestingRoundTrip: "#1#0" nests.
  printed = RoundTrip(R"(HloModule test

ENTRY %test {
  %p0 = (f32[10]{0}, (f32[20]{0}, f32[30]{0})) parameter(0)
  ROOT %root = ((f32[20]{0}, f32[30]{0}), f32[20]{0}) tuple((f32[20]{0}, f32[30]{0}) %p0#1, f32[20]{0} %p0#1#0)
})");
  EXPECT_TRUE(Contains(printed, "%p0_1_0 = f32[20]{0} get-tuple-element((f32[20]{0}, f32[30]{0}) %p0_1), index=0"))
      << printed;
}

TEST(XlaTextFormsTest, CompactGetTupleElementErrors) {
  // HloParserTest.CompactGteNonTuple, CompactGteIndexOutOfBounds,
  // CompactGteNegativeIndex.
  struct Bad {
    const char* text;
    const char* message;
  };
  for (const Bad& bad : {
           Bad{"ENTRY test {\n  p0 = f32[10] parameter(0)\n  ROOT root = f32[10] add(p0#0, p0#0)\n}",
               "t.hlo:3:27: error: GTE operand must be tuple"},
           Bad{"ENTRY test {\n  p0 = (f32[10], f16[10]) parameter(0)\n  ROOT root = f32[10] add(p0#2, p0#2)\n}",
               "t.hlo:3:27: error: GTE index 2 out of bounds"},
           Bad{"ENTRY test {\n  p0 = (f32[10], f16[10]) parameter(0)\n  ROOT root = f32[10] add(p0#-1, p0#-1)\n}",
               "t.hlo:3:27: error: GTE index -1 out of bounds"},
       }) {
    auto m = ParseHloModule(bad.text, "t.hlo");
    ASSERT_FALSE(m.ok()) << bad.text;
    EXPECT_TRUE(Contains(std::string(m.status().message()), bad.message)) << m.status().message();
  }
}

TEST(XlaTextFormsTest, BlanksBeforeTheDimensions) {
  // xla/service/gpu/model/coalescing_analysis_test.cc writes "s32 [5696,10,4]".
  std::string printed = RoundTrip(R"(HloModule m

ENTRY e {
  p0 = s32 [6,10,4] parameter(0)
  ROOT n = s32[6,10,4] negate(s32 [6,10,4] p0)
})");
  EXPECT_TRUE(Contains(printed, "%p0 = s32[6,10,4]{2,1,0} parameter(0)")) << printed;
}

TEST(XlaTextFormsTest, SingleBoolShardingPropagationFlags) {
  // HloParserTest.CheckAllowSpmdShardingPropagationToParameters / ToOutput.
  auto m = ParseHloModule(R"(HloModule TestModule, allow_spmd_sharding_propagation_to_parameters=true, allow_spmd_sharding_propagation_to_output=true

ENTRY TestComputation {
  p0 = f16[2048,1024] parameter(0)
  p1 = f16[2048,1024] parameter(1)
  ROOT root = (f16[2048,1024], f16[2048,1024]) tuple(p0, p1)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->config().allow_spmd_sharding_propagation_to_parameters, std::vector<bool>{true});
  EXPECT_EQ((*m)->config().allow_spmd_sharding_propagation_to_output, std::vector<bool>{true});
}

TEST(XlaTextFormsTest, SparseConvolutionTakesItsMetadataOperand) {
  // xla/hlo/evaluator/hlo_evaluator_sparsity_test.cc: XLA's parser wants at
  // least two convolution operands.
  std::string printed = RoundTrip(R"(HloModule sparse_conv_module

ENTRY %entry (p0: f32[1, 4], p1: f32[1, 1], p2: s32[1, 1]) -> f32[1, 1] {
  %p0 = f32[1, 4] parameter(0)
  %p1 = f32[1, 1] parameter(1)
  %p2 = s32[1, 1] parameter(2)
  ROOT %convolution.1 = f32[1, 1] convolution(%p0, %p1, %p2), dim_labels=bf_io->bf,
      sparsity_config={
        rhs={sparsity=1x4 dimension=0 stride=1 idx=2}
      }
})");
  EXPECT_TRUE(Contains(printed, "convolution(f32[1,4]{1,0} %p0, f32[1,1]{1,0} %p1, s32[1,1]{1,0} %p2)"))
      << printed;
}

}  // namespace
}  // namespace passlab
