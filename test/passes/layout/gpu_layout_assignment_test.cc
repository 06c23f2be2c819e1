#include "passes/layout/gpu_layout_assignment.h"

#include "passes/libcall/conv_rewriter.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

// Runs the pass; a changed module must pass the layout-sensitive verifier
// (elementwise operands share their result's layout) and round-trip.
PassResult RunLayoutAssignment(const std::string& hlo, GpuLayoutAssignmentOptions options = {}) {
  PassResult r = RunPass(std::make_unique<GpuLayoutAssignment>(options), hlo);
  if (r.module != nullptr) {
    absl::Status s = VerifyModule(*r.module, {.layout_sensitive = true});
    EXPECT_TRUE(s.ok()) << s.message() << "\n" << r.text;
  }
  if (r.changed) ExpectModuleVerifies(r);
  return r;
}

constexpr char kConvForwardB01f[] = R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = (f32[2,8,8,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT g = f32[2,8,8,4] get-tuple-element(c), index=0
})";

TEST(GpuLayoutAssignmentTest, NchwConvCallGetsFeatureMajorActivationsAndCopiesBack) {
  // NCHW for b01f: physical [b, f, 0, 1] = minor_to_major {2,1,3,0};
  // filter 01io as [o, i, 0, 1] = {1,0,2,3}.
  PassResult r = RunLayoutAssignment(kConvForwardB01f, {.conv_layout = ConvLayout::kNchw, .filter_layout_as_is = false});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,8,8,3]{2,1,3,0} copy(%x)", "f32[3,3,3,4]{1,0,2,3} copy(%w)",
                               "(f32[2,8,8,4]{2,1,3,0}, u8[0]{0}) custom-call(", "f32[2,8,8,4]{2,1,3,0} get-tuple-element",
                               "ROOT", "f32[2,8,8,4]{3,2,1,0} copy(%g)"}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment.cc,
// HeuristicLayoutAssignment: NHWC activations pair with kOutputYXInput
// (OHWI, cuDNN's KRSC) filters, so an 01io filter [0, 1, i, o] is read as
// [o, 0, 1, i] = {2,1,0,3} (XLA's dump of the ResNet-50 step on an H200,
// step 31, copies every weight so); the b01f activations stay.
// By default passlab keeps an NHWC convolution's filter in the model's
// [spatial..., i, o] order (no per-step weight transposes on the CPU
// backend); `xla_filter_layout` gives XLA:GPU's OHWI (the tests below).
TEST(GpuLayoutAssignmentTest, NhwcConvCallKeepsTheModelsFilterOrderByDefault) {
  PassResult r = RunLayoutAssignment(kConvForwardB01f);
  EXPECT_FALSE(r.changed) << r.text;
  EXPECT_TRUE(Matches(r.text, {"(f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(%x, %w)", "NOT:copy("})) << r.text;
}

// By default a convolution call reads its filter in its producer's layout
// (oneDNN reorders every filter into its blocked format; the CUDA runtime
// packs a strided one): the 01oi filter of a 1x1 backward-input
// convolution written as a forward one stays the weight itself instead of
// a per-step transposed copy. With filter_layout_as_is off, the HWIO copy.
TEST(GpuLayoutAssignmentTest, FilterKeepsItsProducersLayoutByDefault) {
  constexpr char kHlo[] = R"(
ENTRY e {
  x = f32[8,2,2,512] parameter(0)
  w = f32[1,1,2048,512] parameter(1)
  c = (f32[8,2,2,2048], u8[0]) custom-call(x, w), window={size=1x1}, dim_labels=b01f_01oi->b01f, custom_call_target="__dnn$convForward"
  ROOT g = f32[8,2,2,2048] get-tuple-element(c), index=0
})";
  PassResult r = RunLayoutAssignment(kHlo);
  EXPECT_TRUE(Matches(r.text, {"custom-call(%x, %w)", "NOT:copy("})) << r.text;
  PassResult hwio = RunLayoutAssignment(kHlo, {.filter_layout_as_is = false});
  EXPECT_TRUE(hwio.changed);
  EXPECT_TRUE(Matches(hwio.text, {"f32[1,1,2048,512]{2,3,1,0} copy(%w)", "custom-call(%x, %copy)"})) << hwio.text;
}

TEST(GpuLayoutAssignmentTest, NhwcConvCallGetsOhwiFilter) {
  PassResult r = RunLayoutAssignment(kConvForwardB01f, {.xla_filter_layout = true});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,3,3,4]{2,1,0,3} copy(%w)", "(f32[2,8,8,4]{3,2,1,0}, u8[0]{0}) custom-call(%x, %copy)",
                               "NOT:copy(%x)", "NOT:copy(%g)"}))
      << r.text;
}

// A reverse is layout-preserving (xla/service/layout_assignment.cc,
// InstructionCanChangeLayout is false for kReverse): the filter layout the
// convolution needs is pulled through it onto its operand, and the
// parameter is copied before the reverse, not the reverse after it (XLA's
// dump of the ResNet-50 step on an H200, step 31: 01fb_o01i->f01b
// convolutions of reversed weights). 01fb under NHWC is [b, 0, 1, f] =
// {2,1,0,3}; the f01b result [b, 0, 1, f] = {0,2,1,3}.
TEST(GpuLayoutAssignmentTest, ReverseTakesTheLayoutItsConvolutionNeeds) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  w = f32[3,3,8,4] parameter(0)
  rv = f32[3,3,8,4] reverse(w), dimensions={0,1}
  k = f32[5,2,2,8] parameter(1)
  c = (f32[5,2,2,4], u8[0]) custom-call(rv, k), window={size=2x2}, dim_labels=01fb_o01i->f01b, custom_call_target="__dnn$convForward"
  ROOT g = f32[5,2,2,4] get-tuple-element(c), index=0
})",
                                     {.xla_filter_layout = true});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,3,8,4]{2,1,0,3} copy(%w)", "f32[3,3,8,4]{2,1,0,3} reverse(%copy)",
                               "(f32[5,2,2,4]{0,2,1,3}, u8[0]{0}) custom-call(%rv, %k)", "NOT:copy(%rv)"}))
      << r.text;
}

// XLA's dump of the ResNet-50 step on an H200, step 31 (the weight update):
// the convolution calls' layouts spread before the parameters' (XLA adds
// the calls' constraints last and propagates depth-first from the front of
// its worklist, xla/service/layout_assignment.cc PropagateConstraints), so
// the update takes the OHWI layout of the filter gradient, pulled back
// through the multiply onto a copy of the weight; the root tuple keeps that
// layout and is copied element-wise into the result layout after it
// (LayoutAssignment::CreateCopyWithNewLayout: get-tuple-element, copy,
// tuple).
TEST(GpuLayoutAssignmentTest, FilterGradientLayoutWinsOverParameterLayout) {
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f32[2,8,8,3]{3,2,1,0}, f32[2,8,8,4]{3,2,1,0}, f32[3,3,3,4]{3,2,1,0})->(f32[3,3,3,4]{3,2,1,0}, f32[])}

ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  dy = f32[2,8,8,4] parameter(1)
  w = f32[3,3,3,4] parameter(2)
  c = (f32[3,3,3,4], u8[0]) custom-call(x, dy), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardFilter"
  g = f32[3,3,3,4] get-tuple-element(c), index=0
  k = f32[] constant(0.1)
  kb = f32[3,3,3,4] broadcast(k), dimensions={}
  m = f32[3,3,3,4] multiply(w, kb)
  s = f32[3,3,3,4] subtract(m, g)
  ROOT t = (f32[3,3,3,4], f32[]) tuple(s, k)
})",
                                     {.xla_filter_layout = true});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,3,3,4]{2,1,0,3} copy(%w)", "f32[3,3,3,4]{2,1,0,3} broadcast(%k)",
                               "f32[3,3,3,4]{2,1,0,3} multiply(%copy, %kb)", "f32[3,3,3,4]{2,1,0,3} subtract(%m, %g)",
                               "(f32[3,3,3,4]{2,1,0,3}, f32[]) tuple(%s, %k)", "f32[3,3,3,4]{3,2,1,0} copy(",
                               "ROOT", "(f32[3,3,3,4]{3,2,1,0}, f32[]) tuple(", "NOT:copy(%g)", "NOT:copy(%s)"}))
      << r.text;
}

// A pad is layout-preserving (xla/service/layout_assignment.cc,
// InstructionCanChangeLayout is false for kPad): an operand laid out
// otherwise (here by the convolution's f01b result) is copied into the
// pad's layout, never read across layouts (layout_normalization renumbers
// the padding config by the pad's own layout).
TEST(GpuLayoutAssignmentTest, PadOperandTakesThePadLayout) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  x = f32[3,3,8,4] parameter(0)
  k = f32[5,2,2,8] parameter(1)
  c = (f32[5,2,2,4], u8[0]) custom-call(x, k), window={size=2x2}, dim_labels=01fb_o01i->f01b, custom_call_target="__dnn$convForward"
  g = f32[5,2,2,4] get-tuple-element(c), index=0
  m = f32[5,2,2,4] multiply(g, g)
  z = f32[] constant(0)
  ROOT p = f32[5,3,3,4] pad(m, z), padding=0_0x0_0_1x0_0_1x0_0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[5,2,2,4]{0,2,1,3} multiply(%g, %g)", "f32[5,2,2,4]{3,2,1,0} copy(%m)",
                               "f32[5,3,3,4]{3,2,1,0} pad(%copy"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, PropagatesConvLayoutThroughElementwiseUsers) {
  // bf01 convolution under NHWC: activations [b, 0, 1, f] = {1,3,2,0}, the
  // filter [o, 0, 1, i] = {1,3,2,0}. The
  // relu and its broadcast zero follow the conv result; only the entry
  // result is copied back.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  x = f32[2,3,8,8] parameter(0)
  w = f32[4,3,3,3] parameter(1)
  c = (f32[2,4,8,8], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__dnn$convForward"
  g = f32[2,4,8,8] get-tuple-element(c), index=0
  z = f32[] constant(0)
  zb = f32[2,4,8,8] broadcast(z), dimensions={}
  ROOT r = f32[2,4,8,8] maximum(g, zb)
})",
                                     {.xla_filter_layout = true});
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,3,8,8]{1,3,2,0} copy(%x)", "f32[4,3,3,3]{1,3,2,0} copy(%w)",
                               "f32[2,4,8,8]{1,3,2,0} broadcast(%z)", "f32[2,4,8,8]{1,3,2,0} maximum(%g, %zb)",
                               "ROOT", "f32[2,4,8,8]{3,2,1,0} copy(%r)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, CopiesBatchDotOperandIntoBatchMajorLayout) {
  // lhs physical [m, batch, k]: the batch is not most major, so the gemm
  // could not read it directly; rhs physical [batch, n, k] it can.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  a = f32[2,4,8]{2,0,1} parameter(0)
  b = f32[2,8,5]{1,2,0} parameter(1)
  ROOT d = f32[2,4,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,4,8]{2,1,0} copy(%a)", "dot(%copy, %b)", "NOT:copy(%b)"})) << r.text;
}

TEST(GpuLayoutAssignmentTest, KeepsColumnMajorDotOperand) {
  EXPECT_FALSE(RunLayoutAssignment(R"(
ENTRY e {
  a = f32[4,8]{0,1} parameter(0)
  b = f32[8,5] parameter(1)
  ROOT d = f32[4,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})").changed);
}

TEST(GpuLayoutAssignmentTest, ElementwiseOperandsGetTheResultLayout) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  p1 = f32[4,8]{0,1} parameter(1)
  ROOT s = f32[4,8]{1,0} add(p0, p1)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{1,0} copy(%p1)", "add(%p0, %copy)"})) << r.text;
}

TEST(GpuLayoutAssignmentTest, HonoursEntryComputationLayout) {
  // The parameter takes the entry layout; exp follows it and the result is
  // already in the entry's result layout, so no copy is needed.
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f32[4,8]{0,1})->f32[4,8]{0,1}}

ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  ROOT x = f32[4,8]{1,0} exponential(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} parameter(0)", "ROOT %x = f32[4,8]{0,1} exponential(%p)", "NOT:copy("}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, TiledEntryLayoutsStayAtTheBoundary) {
  // Kernels read and write plain layouts: a copy untiles the parameter and
  // another tiles the result.
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f32[8,128]{1,0:T(8,128)})->f32[8,128]{1,0:T(8,128)}}

ENTRY e {
  p = f32[8,128]{1,0:T(8,128)} parameter(0)
  ROOT n = f32[8,128]{1,0:T(8,128)} negate(p)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[8,128]{1,0} copy(%p)", "f32[8,128]{1,0} negate(%copy)",
                               "ROOT %copy.1 = f32[8,128]{1,0:T(8,128)} copy(%n)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, EdgeCaseTupleUserKeepsTheOriginalLayout) {
  // exp follows its column-major parameter, but the tuple (a layout-
  // sensitive user) gets the layout exp had before, through a copy.
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p = f32[4,8]{0,1} parameter(0)
  x = f32[4,8]{1,0} exponential(p)
  ROOT t = (f32[4,8]{1,0}) tuple(x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} exponential(%p)", "f32[4,8]{1,0} copy(%x)", "tuple(%copy)"}))
      << r.text;
}

TEST(GpuLayoutAssignmentTest, EdgeCaseBitcastOperandKeepsItsLayout) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p = f32[4,8]{0,1} parameter(0)
  x = f32[4,8]{1,0} exponential(p)
  ROOT b = f32[32]{0} bitcast(x)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,8]{0,1} exponential(%p)", "f32[4,8]{1,0} copy(%x)", "bitcast(%copy)"}))
      << r.text;
}

// xla/service/layout_assignment.cc: no shape is left without a layout
// (XLA's pass reassigns every layout and always answers changed).
TEST(GpuLayoutAssignmentTest, GivesEveryShapeWithoutALayoutTheDefaultOne) {
  // The parser gives every instruction a layout; a module built in code
  // may have none.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(
ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  i = s32[3]{0} parameter(1)
  n = f32[4,8]{1,0} negate(p)
  ROOT t = (f32[4,8]{1,0}, s32[3]{0}) tuple(n, i)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* entry = (*m)->entry_computation();
  for (HloInstruction* inst : entry->instructions()) {
    if (inst->opcode() == HloOpcode::kNegate) inst->mutable_shape()->clear_layout();
    if (inst->opcode() == HloOpcode::kTuple) inst->mutable_shape()->ClearLayoutRecursively();
  }
  absl::StatusOr<bool> changed = GpuLayoutAssignment().Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  std::string text = PrintModule(**m);
  EXPECT_TRUE(Matches(text, {"f32[4,8]{1,0} negate(", "(f32[4,8]{1,0}, s32[3]{0}) tuple("})) << text;
}

TEST(GpuLayoutAssignmentTest, KeepsAModuleWhoseLayoutsAreAllWrittenAndAgree) {
  EXPECT_FALSE(RunLayoutAssignment(R"(
ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  ROOT n = f32[4,8]{1,0} negate(p)
})").changed);
}

// xla/backends/gpu/transforms/layout_assignment_test.cc, FftLayout: cuFFT
// reads and writes dim-0-major arrays; the transpose after it becomes a
// bitcast and the root a copy into the result layout.
TEST(GpuLayoutAssignmentTest, FftReadsAndWritesDimZeroMajor) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  input = c64[8,32]{0,1} parameter(0)
  fft = c64[8,32] fft(input), fft_type=FFT, fft_length={32}
  ROOT transpose = c64[32,8] transpose(fft), dimensions={1,0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"c64[8,32]{1,0} copy(%input)", "c64[8,32]{1,0} fft(%copy)",
                               "c64[32,8]{0,1} transpose(%fft)", "ROOT", "c64[32,8]{1,0} copy(%transpose)"}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// CustomCallConstrainedAlias: operand_layout_constraints are mandatory.
TEST(GpuLayoutAssignmentTest, CustomCallOperandLayoutConstraintsAreMandatory) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  a = f32[2,5,5]{2,1,0} parameter(0)
  b = f32[2,5,5]{1,2,0} parameter(1)
  c = (f32[2,5,5]{1,2,0}, s8[16]{0}) custom-call(a, b), custom_call_target="dummy_call", operand_layout_constraints={f32[2,5,5]{1,2,0}, f32[2,5,5]{1,2,0}}, output_to_operand_aliasing={{0}: (1, {})}, custom_call_has_side_effect=true
  ROOT g = f32[2,5,5]{1,2,0} get-tuple-element(c), index=0
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[2,5,5]{1,2,0} copy(%a)", "custom-call(%copy, %b)", "NOT:copy(%b)"})) << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// ReduceOperandLayout: the elementwise producer of a reduce over >= 32
// elements takes the row-reduction layout (reduced dimensions most minor).
TEST(GpuLayoutAssignmentTest, ReduceInputGetsRowReductionLayout) {
  PassResult r = RunLayoutAssignment(std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,8,2,4,5]{4,3,2,1,0} parameter(0)
  n = f32[3,8,2,4,5]{4,3,2,1,0} negate(p)
  z = f32[] constant(0)
  ROOT r = f32[3,2,5]{2,1,0} reduce(n, z), dimensions={1,3}, to_apply=add
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[3,8,2,4,5]{3,1,4,2,0} copy(%p)", "f32[3,8,2,4,5]{3,1,4,2,0} negate(%copy)",
                               "reduce(%n, %z)"}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// ReduceOperandLayoutSmallReductionDimension: below 32 reduced elements the
// input keeps its layout.
TEST(GpuLayoutAssignmentTest, KeepsSmallReductionInputLayout) {
  EXPECT_FALSE(RunLayoutAssignment(std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[3,16,2,5]{3,2,1,0} parameter(0)
  n = f32[3,16,2,5]{3,2,1,0} negate(p)
  z = f32[] constant(0)
  ROOT r = f32[3,2,5]{2,1,0} reduce(n, z), dimensions={1}, to_apply=add
})").changed);
}

// xla/service/layout_assignment.cc, PropagateBufferConstraintToOperands:
// a reduce to a vector (rank <= 1) passes no layout to its input, however
// many elements it reduces, so its elementwise producer keeps the layout
// its own operands give it (XLA's dump of the ResNet-50 step on an H200,
// step 31: batch-norm statistics f32[64] reduce(multiply(...)) stay
// feature-minor).
TEST(GpuLayoutAssignmentTest, ReduceToVectorKeepsItsInputLayout) {
  EXPECT_FALSE(RunLayoutAssignment(std::string(kAddF32Reducer) + R"(
ENTRY e {
  p = f32[8,4,4,16]{3,2,1,0} parameter(0)
  n = f32[8,4,4,16]{3,2,1,0} multiply(p, p)
  z = f32[] constant(0)
  ROOT r = f32[16]{0} reduce(n, z), dimensions={0,1,2}, to_apply=add
})").changed);
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// VariadicReduceSameOperandLayout: all inputs of a variadic reduce share
// one layout.
TEST(GpuLayoutAssignmentTest, VariadicReduceInputsShareOneLayout) {
  PassResult r = RunLayoutAssignment(R"(
reducer {
  a0 = s32[] parameter(0)
  a1 = f32[] parameter(1)
  b0 = s32[] parameter(2)
  b1 = f32[] parameter(3)
  m = s32[] add(a0, b0)
  s = f32[] add(a1, b1)
  ROOT t = (s32[], f32[]) tuple(m, s)
}

ENTRY e {
  p0 = f32[4,3,2]{2,1,0} parameter(0)
  p1 = s32[2,3,4]{2,1,0} parameter(1)
  t = s32[4,3,2]{0,1,2} transpose(p1), dimensions={2,1,0}
  zero = f32[] constant(0)
  one = s32[] constant(1)
  ROOT r = (s32[4,2]{0,1}, f32[4,2]{1,0}) reduce(t, p0, one, zero), dimensions={1}, to_apply=reducer
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[4,3,2]{0,1,2} copy(%p0)", "reduce(%t, %copy, %one, %zero)"})) << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// RaggedAllToAllLayoutSetRaggedDimToMajor: the ragged dimension most
// major; input and output buffer laid out as the result.
TEST(GpuLayoutAssignmentTest, RaggedAllToAllHasRaggedDimensionMostMajor) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  input = f32[16,4,8]{0,2,1} parameter(0)
  output = f32[32,4,8]{0,1,2} parameter(1)
  input_offsets = s32[2]{0} parameter(2)
  send_sizes = s32[2]{0} parameter(3)
  output_offsets = s32[2]{0} parameter(4)
  recv_sizes = s32[2]{0} parameter(5)
  ROOT ra2a = f32[32,4,8]{0,1,2} ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1}}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[16,4,8]{1,2,0} copy(%input)", "f32[32,4,8]{1,2,0} copy(%output)",
                               "f32[32,4,8]{1,2,0} ragged-all-to-all(%copy, %copy.1,", "ROOT",
                               "f32[32,4,8]{0,1,2} copy(%ra2a)"}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// AutoLayoutE4M3ContractingMinorFirst: fp8 gemms read both operands with
// the contracting dimension most minor; AUTO parameters (written without a
// layout in the entry_computation_layout) take those layouts without
// copies.
TEST(GpuLayoutAssignmentTest, Fp8DotAutoParametersGetContractingDimensionMinor) {
  PassResult r = RunLayoutAssignment(R"(
HloModule m, entry_computation_layout={(f8e4m3fn[4,8], f8e4m3fn[8,6])->f32[4,6]{1,0}}

ENTRY e {
  p0 = f8e4m3fn[4,8] parameter(0)
  p1 = f8e4m3fn[8,6] parameter(1)
  ROOT dot = f32[4,6] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"entry_computation_layout={(f8e4m3fn[4,8]{1,0}, f8e4m3fn[8,6]{0,1})->f32[4,6]{1,0}}",
                               "f8e4m3fn[4,8]{1,0} parameter(0)", "f8e4m3fn[8,6]{0,1} parameter(1)",
                               "f32[4,6]{1,0} dot(%p0, %p1)", "NOT:copy("}))
      << r.text;
}

// The same dot with written parameter layouts: the rhs is copied.
TEST(GpuLayoutAssignmentTest, Fp8DotCopiesRowMajorRhs) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p0 = f8e4m3fn[4,8]{1,0} parameter(0)
  p1 = f8e4m3fn[8,6]{1,0} parameter(1)
  ROOT dot = f32[4,6]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f8e4m3fn[8,6]{0,1} copy(%p1)", "dot(%p0, %copy)"})) << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// AutoLayoutS4DotContractingMinorLhs: with
// xla_gpu_experimental_pack_dot_operands_along_k_dimension an operand
// converted from s4 gets its contracting dimension most minor, up the
// chain to its AUTO parameter; without the option it stays row-major.
TEST(GpuLayoutAssignmentTest, PackedDotOperandContractingMinorWithOption) {
  constexpr char kHlo[] = R"(
HloModule m, entry_computation_layout={(s4[8,4], bf16[8,6])->bf16[4,6]{1,0}}

ENTRY e {
  p0 = s4[8,4] parameter(0)
  p0.c = bf16[8,4] convert(p0)
  p1 = bf16[8,6] parameter(1)
  ROOT dot = bf16[4,6] dot(p0.c, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";
  PassResult packed = RunLayoutAssignment(kHlo, {.pack_dot_operands_along_k_dimension = true});
  EXPECT_TRUE(packed.changed);
  EXPECT_TRUE(Matches(packed.text, {"s4[8,4]{0,1", "parameter(0)", "bf16[8,4]{0,1} convert(%p0)",
                                    "bf16[8,6]{1,0} parameter(1)", "bf16[4,6]{1,0} dot(%p0.c, %p1)", "NOT:copy("}))
      << packed.text;
  PassResult plain = RunLayoutAssignment(kHlo);
  EXPECT_TRUE(Matches(plain.text, {"s4[8,4]{1,0", "parameter(0)", "NOT:copy("})) << plain.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// DotSetsNonMandatoryConstraintIfAutoLayout: an AUTO parameter takes the
// layout that makes the transpose and reshape to the dot operand bitcasts.
TEST(GpuLayoutAssignmentTest, AutoParameterFollowsDotThroughTransposeAndReshape) {
  PassResult r = RunLayoutAssignment(R"(
HloModule t, entry_computation_layout={(f16[6,4]{1,0}, f16[2,4,5])->f16[6,10]{1,0}}

ENTRY e {
  p0 = f16[6,4] parameter(0)
  p1 = f16[2,4,5] parameter(1)
  t1 = f16[2,5,4] transpose(p1), dimensions={0,2,1}
  r1 = f16[10,4] reshape(t1)
  ROOT dot = f16[6,10] dot(p0, r1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"entry_computation_layout={(f16[6,4]{1,0}, f16[2,4,5]{1,2,0})->f16[6,10]{1,0}}",
                               "f16[2,4,5]{1,2,0} parameter(1)", "f16[2,5,4]{2,1,0} transpose(%p1)",
                               "f16[10,4]{1,0} reshape(%t1)", "NOT:copy("}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// ReshapeBitcastMinimizeChangesAdjustNonDegenerate: a reshape whose layout
// would move elements becomes a bitcast, its size-1 dimension kept most
// minor as written; the add follows it and no copy is needed.
TEST(GpuLayoutAssignmentTest, ReshapeBecomesBitcastKeepingItsSizeOneDimension) {
  PassResult r = RunLayoutAssignment(R"(
ENTRY e {
  p0 = f32[4,6]{1,0} parameter(0)
  reshape = f32[1,4,6]{0,1,2} reshape(p0)
  ROOT out = f32[1,4,6]{0,2,1} add(reshape, reshape)
})");
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"f32[1,4,6]{0,2,1} reshape(%p0)", "f32[1,4,6]{0,2,1} add(%reshape, %reshape)",
                               "NOT:copy("}))
      << r.text;
}

// xla/backends/gpu/transforms/layout_assignment_test.cc,
// ReshapeBitcastMinimizeChanges: a reshape that already is a bitcast keeps
// its layout.
TEST(GpuLayoutAssignmentTest, KeepsBitcastReshapeLayout) {
  EXPECT_FALSE(RunLayoutAssignment(R"(
ENTRY e {
  p0 = f32[4,6]{1,0} parameter(0)
  ROOT reshape = f32[1,4,1,6]{0,2,3,1} reshape(p0)
})").changed);
}

// Corpus: every module with dots or convolutions (the latter rewritten into
// library calls first) gets layouts that pass the layout-sensitive
// verifier, and small ones compute what they computed before.
TEST(GpuLayoutAssignmentTest, CorpusModulesGetVerifiedLayoutsAndSameValues) {
  int candidates = 0, changed = 0, evaluated = 0;
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  for (const char* needle : {" dot(", " convolution("}) {
    for (const auto& [name, text] : CorpusTextsWith(needle)) {
      absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
      if (!m.ok() || !VerifyModule(**m).ok()) continue;
      ++candidates;
      bool small = SmallModule(**m, 1 << 12) && !HasLowPrecisionFloats(**m);
      std::vector<Literal> args;
      absl::StatusOr<Literal> before = absl::UnimplementedError("not evaluated");
      if (small) {
        args = MakeRandomArguments(*(*m)->entry_computation(), 7);
        before = HloEvaluator().Evaluate(**m, args);
      }
      HloPassPipeline pipeline("corpus");
      pipeline.AddPass<ConvRewriter>();
      pipeline.AddPass<GpuLayoutAssignment>(GpuLayoutAssignmentOptions{.conv_layout = ConvLayout::kNchw});
      absl::StatusOr<bool> ran = pipeline.Run(**m);
      ASSERT_TRUE(ran.ok()) << name << ": " << ran.status().message();
      if (!*ran) continue;
      ++changed;
      absl::Status verified = VerifyModule(**m, {.layout_sensitive = true});
      EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
      if (!before.ok()) continue;
      absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
      ASSERT_TRUE(after.ok()) << name << ": " << after.status().message();
      absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-3, .rel = 1e-3});
      EXPECT_TRUE(same.ok()) << name << ": " << same.message();
      ++evaluated;
    }
  }
  if (candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(changed, 10);
  EXPECT_GT(evaluated, 5);
  std::cout << "layout-assignment corpus: " << candidates << " modules, " << changed << " changed, " << evaluated
            << " evaluated\n";
}

}  // namespace
}  // namespace passlab
