// A depthwise convolution training step through the `gpu` pipeline: every
// convolution — forward (feature_group_count = channels), input gradient
// (grouped, kernel reversed) and filter gradient (batch_group_count =
// channels, as JAX and PyTorch/XLA write it) — becomes a oneDNN library call
// on the CPU backend (XLA:GPU makes them cuDNN calls the same way, in
// conv_rewriter.cc, with no group-conversion pass before it), and the step
// matches the evaluator.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/backends/cpu/executable.h"
#include "core/runtime/kernel_record.h"
#include "core/text/hlo_parser.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

// Two depthwise 3x3 layers (stride 1, then stride 2) over 8 channels and
// their gradients given dy2: the filter gradients batch-grouped, the input
// gradients with the kernel reshaped to [3,3,8,1] and reversed (once as a
// reverse op, once as rhs_reversal).
constexpr char kDepthwiseStep[] = R"(HloModule depthwise_step
ENTRY step {
  x = f32[4,12,12,8] parameter(0)
  w1 = f32[3,3,1,8] parameter(1)
  w2 = f32[3,3,1,8] parameter(2)
  dy2 = f32[4,6,6,8] parameter(3)
  y1 = f32[4,12,12,8] convolution(x, w1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8
  y2 = f32[4,6,6,8] convolution(y1, w2), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8
  dw2 = f32[3,3,1,8] convolution(y1, dy2), window={size=6x6 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf, batch_group_count=8
  k2 = f32[3,3,8,1] reshape(w2)
  rk2 = f32[3,3,8,1] reverse(k2), dimensions={0,1}
  dy1 = f32[4,12,12,8] convolution(dy2, rk2), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f, feature_group_count=8
  dw1 = f32[3,3,1,8] convolution(x, dy1), window={size=12x12 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, batch_group_count=8
  k1 = f32[3,3,8,1] reshape(w1)
  dx = f32[4,12,12,8] convolution(dy1, k1), window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f, feature_group_count=8
  ROOT out = (f32[4,6,6,8], f32[3,3,1,8], f32[3,3,1,8], f32[4,12,12,8]) tuple(y2, dw2, dw1, dx)
})";

TEST(DepthwiseConvLibraryCallsTest, GpuPipelineRunsEveryDepthwiseConvolutionAsALibraryCall) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kDepthwiseStep);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();

  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline("gpu", "");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  absl::Status optimized = pipeline->pipeline->Run(**m).status();
  ASSERT_TRUE(optimized.ok()) << optimized.message();

  // In the optimized module: six grouped convolution calls, no convolution.
  std::map<std::string, int> calls;
  int convolutions = 0;
  for (const HloComputation* c : (*m)->computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kConvolution) ++convolutions;
      if (i->opcode() != HloOpcode::kCustomCall) continue;
      if (i->custom_call_target().rfind("__dnn$conv", 0) != 0) continue;
      ++calls[i->custom_call_target()];
      EXPECT_EQ(i->attrs().feature_group_count, 8) << i->name();
      EXPECT_EQ(i->attrs().batch_group_count, 1) << i->name();
    }
  }
  EXPECT_EQ(convolutions, 0);
  EXPECT_EQ(calls["__dnn$convForward"] + calls["__dnn$convBiasActivationForward"], 2);
  EXPECT_EQ(calls["__dnn$convBackwardInput"], 2);
  EXPECT_EQ(calls["__dnn$convBackwardFilter"], 2);

  CpuCompileOptions copts;
  copts.num_threads = 1;
  CpuKernelCompiler compiler(copts);
  auto exe = Executable::Create(**m, [&](const HloInstruction& i) { return compiler.Compile(i); });
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  std::vector<KernelRecord> records;
  absl::StatusOr<Literal> actual = (*exe)->Run(args, &records);
  ASSERT_TRUE(actual.ok()) << actual.status().message();
  int library_calls = 0;
  for (const KernelRecord& r : records) library_calls += r.kind == KernelKind::kLibraryCall;
  EXPECT_EQ(library_calls, 6);
  absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-4, .rel = 1e-4});
  EXPECT_TRUE(same.ok()) << same.message();
}

}  // namespace
}  // namespace passlab
