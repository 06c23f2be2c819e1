// The library-call passes in the registry and in the gpu pipeline, in
// XLA:GPU's order, and the whole pipeline turning a small network's dots and
// convolutions into calls that compute what the module computed.
#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/libcall/library_call.h"
#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace {

constexpr std::string_view kLibraryCallPasses[] = {
    "conv-rewriter",         "cudnn-fused-convolution-rewriter", "conv-padding-legalization", "cublas-pad-for-gemms",
    "cublas-gemm-rewriter",  "gpu-conv-algorithm-picker",        "gemm-algorithm-picker",     "config-assigner"};

int64_t FirstOccurrence(const std::vector<PassOccurrence>& occ, std::string_view name) {
  for (const PassOccurrence& o : occ) {
    if (o.pass_name == name) return o.id;
  }
  ADD_FAILURE() << name << " is not in the pipeline";
  return -1;
}

TEST(LibcallPipelineTest, RegistryEntriesCreatePassesWithTheirNames) {
  for (std::string_view name : kLibraryCallPasses) {
    const PassRegistryEntry* e = FindRegisteredPass(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->factory()->name(), name);
    EXPECT_FALSE(e->required) << name;
  }
}

// The seed era (seed 003's table 1): convolution algorithms picked before
// fusion, gemm algorithms right after the gemm rewriter.
TEST(LibcallPipelineTest, Gpu2021PipelineRunsThemInSeedOrder) {
  std::vector<PassOccurrence> occ;
  gpu2021::BuildGpuPipeline()->EnumerateOccurrences("", false, occ);
  auto first = [&](std::string_view name) { return FirstOccurrence(occ, name); };
  EXPECT_LT(first("dot_decomposer"), first("conv-rewriter"));  // optimization first
  EXPECT_LT(first("conv-rewriter"), first("cudnn-fused-convolution-rewriter"));
  EXPECT_LT(first("cudnn-fused-convolution-rewriter"), first("conv-padding-legalization"));
  EXPECT_LT(first("conv-padding-legalization"), first("cublas-pad-for-gemms"));
  EXPECT_LT(first("cublas-pad-for-gemms"), first("transpose-folding"));
  EXPECT_LT(first("transpose-folding"), first("cublas-gemm-rewriter"));
  EXPECT_LT(first("cublas-gemm-rewriter"), first("gpu-conv-algorithm-picker"));
  EXPECT_LT(first("gpu-conv-algorithm-picker"), first("gemm-algorithm-picker"));
  EXPECT_LT(first("gemm-algorithm-picker"), first("fusion"));
  for (const PassOccurrence& o : occ) {
    if (o.pass_name == "conv-rewriter") {
      EXPECT_EQ(o.pipeline_path, "gpu-2021/conv_canonicalization");
    }
    EXPECT_NE(o.pass_name, "config-assigner");
  }
}

// Today's XLA:GPU (gpu_compiler.cc, nvptx_compiler.cc): convolutions in
// conv_canonicalization, gemm padding then the gemm rewriter in hlo
// normalization, and one config assigner after fusion (in the "autotuner"
// pipeline) instead of the two pickers.
TEST(LibcallPipelineTest, GpuPipelineRunsThemInTodaysXlaOrder) {
  std::vector<PassOccurrence> occ;
  BuildGpuPipeline()->EnumerateOccurrences("", false, occ);
  auto first = [&](std::string_view name) { return FirstOccurrence(occ, name); };
  EXPECT_LT(first("dot_decomposer"), first("conv-rewriter"));
  EXPECT_LT(first("conv-rewriter"), first("cudnn-fused-convolution-rewriter"));
  EXPECT_LT(first("cudnn-fused-convolution-rewriter"), first("conv-padding-legalization"));
  EXPECT_LT(first("conv-padding-legalization"), first("cudnn_pad_for_convolutions"));
  EXPECT_LT(first("cudnn_pad_for_convolutions"), first("layout-assignment"));
  EXPECT_LT(first("layout-assignment"), first("cublas-pad-for-gemms"));
  EXPECT_LT(first("cublas-pad-for-gemms"), first("cublas-gemm-rewriter"));
  EXPECT_LT(first("cublas-gemm-rewriter"), first("multi_output_fusion"));
  EXPECT_LT(first("multi_output_fusion"), first("config-assigner"));
  for (const PassOccurrence& o : occ) {
    if (o.pass_name == "conv-rewriter") EXPECT_EQ(o.pipeline_path, "gpu/conv_canonicalization");
    if (o.pass_name == "cublas-gemm-rewriter") EXPECT_EQ(o.pipeline_path, "gpu/hlo normalization");
    if (o.pass_name == "config-assigner") EXPECT_EQ(o.pipeline_path, "gpu/autotuner");
    EXPECT_NE(o.pass_name, "gpu-conv-algorithm-picker");
    EXPECT_NE(o.pass_name, "gemm-algorithm-picker");
  }
}

TEST(LibcallPipelineTest, BothPipelinesLeaveCallsThatComputeTheSame) {
  for (auto build : {BuildGpuPipeline, gpu2021::BuildGpuPipeline}) {
  SCOPED_TRACE(build()->name());
  // conv + bias + relu, its gradients, and a dense layer with bias.
  auto m = ParseHloModule(R"(
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  b = f32[4] parameter(2)
  dy = f32[2,4,4,4] parameter(3)
  fc = f32[64,5] parameter(4)
  fb = f32[5] parameter(5)
  c = f32[2,4,4,4] convolution(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  bb = f32[2,4,4,4] broadcast(b), dimensions={3}
  cb = f32[2,4,4,4] add(c, bb)
  z = f32[] constant(0)
  bz = f32[2,4,4,4] broadcast(z), dimensions={}
  r = f32[2,4,4,4] maximum(cb, bz)
  rw = f32[3,3,3,4] reverse(w), dimensions={0,1}
  dx = f32[2,8,8,3] convolution(dy, rw), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
  dw = f32[3,3,3,4] convolution(x, dy), window={size=4x4 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=f01b_i01o->01bf
  flat = f32[2,64] reshape(r)
  d = f32[2,5] dot(flat, fc), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bf = f32[2,5] broadcast(fb), dimensions={1}
  logits = f32[2,5] add(d, bf)
  ROOT t = (f32[2,5], f32[2,8,8,3], f32[3,3,3,4]) tuple(logits, dx, dw)
})", "net.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  absl::StatusOr<Literal> before = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = build()->Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  std::map<std::string, int> targets;
  for (HloInstruction* i : (*m)->entry_computation()->instructions()) {
    if (ClassifyLibraryCall(*i)) ++targets[i->custom_call_target()];
    EXPECT_NE(i->opcode(), HloOpcode::kConvolution) << i->name();
    EXPECT_NE(i->opcode(), HloOpcode::kDot) << i->name();
  }
  EXPECT_EQ(targets[std::string(kConvBiasActivationForwardCallTarget)], 1);
  EXPECT_EQ(targets[std::string(kConvBackwardInputCallTarget)], 1);
  EXPECT_EQ(targets[std::string(kConvBackwardFilterCallTarget)], 1);
  EXPECT_EQ(targets[std::string(kGemmCallTarget)], 1);
  absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(CompareLiterals(*before, *after, {.abs = 1e-4, .rel = 1e-4}).ok());
  }
}

}  // namespace
}  // namespace passlab
