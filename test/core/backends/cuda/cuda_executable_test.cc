// CudaExecutable on a device: every model after the full pipeline, library
// calls on cuBLASLt/cuDNN, control flow, async ops on the second stream and
// host fallbacks, each compared with the evaluator; PTX kernels from a
// provider; event and CUPTI timing. Every test skips with a message when no
// CUDA driver or device is present (CI), and runs as is on a GPU machine.
//
// No GPU code generator is linked here (core/codegen's NVPTX target plugs in
// as the GpuKernelProvider): fusions and other emitted ops run through the
// host fallback, except in the hand-written PTX tests below.
#include "core/backends/cuda/cuda_executable.h"
#include "core/backends/cuda/cuda_library_plan.h"

#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "test/instruction_evaluator.h"
#include "models/model_registry.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

#define REQUIRE_CUDA_DEVICE()                                                       \
  do {                                                                              \
    absl::StatusOr<std::string> device = DescribeCudaDevice(0);                     \
    if (!device.ok()) GTEST_SKIP() << "needs a CUDA device: " << device.status().message(); \
  } while (0)

struct Outcome {
  std::string error;  // "" when the outputs match the evaluator
  std::vector<KernelRecord> records;
  std::string program;
};

// The device tests compare with the evaluator's f32 at 1e-3, so their
// library calls compute in full f32 (TF32 has its own test below). Without
// a GPU code generator (kernels = nullptr) every kernel op runs on the
// host, as a host kernel: here the evaluator's (this binary links no LLVM;
// the CUDA backend injects the CPU code generator's,
// core/backends/cpu/host_kernel_factory.h, tested on its own).
const CudaExecutableOptions kFullF32{.allow_tf32 = false, .host_kernels = EvaluatingKernels()};

Outcome RunOnDevice(const HloModule& module, const Literal& expected, const std::vector<Literal>& args,
                    const GpuKernelProvider& kernels = nullptr, CudaExecutableOptions options = kFullF32,
                    double tol = 1e-3) {
  Outcome out;
  absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(module, kernels, options);
  if (!exe.ok()) {
    out.error = StrCat("create: ", exe.status().message());
    return out;
  }
  out.program = (*exe)->ToString();
  absl::StatusOr<Literal> got = (*exe)->Run(args, &out.records);
  if (!got.ok()) {
    out.error = StrCat("run: ", got.status().message());
    return out;
  }
  absl::Status same = CompareLiterals(expected, *got, {.abs = tol, .rel = tol});
  if (!same.ok()) out.error = StrCat("wrong result: ", same.message(), "\n", out.program);
  // A second run on the same executable (buffers, events and library state
  // are reused) gives the same answer.
  absl::StatusOr<Literal> again = (*exe)->Run(args);
  if (out.error.empty() && (!again.ok() || !CompareLiterals(*got, *again, {.abs = 0, .rel = 0}).ok())) {
    out.error = "second run differs";
  }
  return out;
}

Outcome RunText(const std::string& text, double tol = 1e-3, const GpuKernelProvider& kernels = nullptr,
                CudaExecutableOptions options = kFullF32) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return Outcome{StrCat("parse: ", m.status().message())};
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
  if (!expected.ok()) return Outcome{StrCat("evaluate: ", expected.status().message())};
  return RunOnDevice(**m, *expected, args, kernels, options, tol);
}

constexpr char kGemmBiasRelu[] = R"(HloModule m
ENTRY e {
  a = f32[64,48] parameter(0)
  b = f32[48,32] parameter(1)
  bias = f32[32] parameter(2)
  ROOT g = f32[64,32] custom-call(a, b, bias), custom_call_target="__blas$gemm",
    backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"alpha_real":0.5,"epilogue":"BIAS_RELU"}}
}
)";
constexpr char kBatchedColumnMajorGemm[] = R"(HloModule m
ENTRY e {
  a = f32[3,13,7]{1,2,0} parameter(0)
  b = f32[3,13,9] parameter(1)
  ROOT g = f32[3,7,9]{1,2,0} custom-call(a, b), custom_call_target="__blas$gemm",
    backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"]}}}
}
)";
constexpr char kFusedConv[] = R"(HloModule m
ENTRY e {
  a = f32[2,4,6,6] parameter(0)
  b = f32[8,4,3,3] parameter(1)
  bias = f32[8] parameter(2)
  c = (f32[2,8,6,6], u8[0]) custom-call(a, b, bias), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01,
    custom_call_target="__dnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu"}}
  ROOT r = f32[2,8,6,6] get-tuple-element(c), index=0
}
)";
constexpr char kHostFallback[] = R"(HloModule m
ENTRY e {
  a = f32[1,6,11,10] parameter(0)
  b = f32[4,6,3,2] parameter(1)
  c = (f32[1,4,5,5], u8[0]) custom-call(a, b), window={size=3x2 stride=2x2 pad=1_0x0_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__dnn$convForward"
  g = f32[1,4,5,5] get-tuple-element(c), index=0
  ROOT s = f32[1,4,5,5] sort(g), dimensions={3}, to_apply={ x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT lt = pred[] compare(x, y), direction=LT }
}
)";
// A max-pool gradient (atomic adds on every thread) and an integer
// select-and-scatter with another combiner (one thread, in order).
constexpr char kSelectAndScatter[] = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
max {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] maximum(x, y)
}
ENTRY e {
  x = f32[2,9,9,8] parameter(0)
  g = f32[2,5,5,8] parameter(1)
  z = f32[] constant(0)
  f = f32[2,9,9,8] select-and-scatter(x, g, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, select=ge, scatter=add
  xi = s32[7,6]{0,1} parameter(2)
  gi = s32[4,3] parameter(3)
  zi = s32[] constant(-5)
  i = s32[7,6]{0,1} select-and-scatter(xi, gi, zi), window={size=2x3 stride=2x2 pad=0_1x1_1}, select=lt, scatter=max
  ROOT t = (f32[2,9,9,8], s32[7,6]{0,1}) tuple(f, i)
}
)";
constexpr char kWhileLoop[] = R"(HloModule m
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[16] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  y = f32[16] add(x, x)
  ROOT t = (s32[], f32[16]) tuple(j, y)
}
ENTRY e {
  p = f32[16] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[16]) tuple(z, p)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
}
)";
constexpr char kAsyncOps[] = R"(HloModule m
wrapped {
  a = f32[64] parameter(0)
  ROOT n = f32[64] negate(a)
}
ENTRY e {
  p = f32[64] parameter(0)
  cs = (f32[64], f32[64], u32[]) copy-start(p)
  s = ((f32[64]), f32[64], s32[]) async-start(p), calls=wrapped
  d = f32[64] async-done(s)
  c = f32[64] copy-done(cs)
  ROOT r = f32[64] add(d, c)
}
)";
constexpr char kZeroBroadcast[] = R"(HloModule m
ENTRY e {
  p = f32[1000] parameter(0)
  z = f32[] constant(0)
  b = f32[1000] broadcast(z), dimensions={}
  ROOT t = (f32[1000], f32[1000]) tuple(b, p)
}
)";

// target, a, b, result of one convolution call (forward and both gradients).
constexpr const char* kConvKinds[][4] = {
    {"__dnn$convForward", "f32[2,9,9,3]", "f32[3,3,3,8]", "f32[2,5,5,8]"},
    {"__dnn$convBackwardInput", "f32[2,5,5,8]", "f32[3,3,3,8]", "f32[2,9,9,3]"},
    {"__dnn$convBackwardFilter", "f32[2,9,9,3]", "f32[2,5,5,8]", "f32[3,3,3,8]"},
};

std::string ConvModule(const char* const (&k)[4]) {
  return StrCat("HloModule m\nENTRY e {\n  a = ", k[1], " parameter(0)\n  b = ", k[2], " parameter(1)\n  c = (", k[3],
                ", u8[0]) custom-call(a, b), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                "custom_call_target=\"",
                k[0], "\"\n  ROOT r = ", k[3], " get-tuple-element(c), index=0\n}\n");
}

bool HasRecord(const std::vector<KernelRecord>& records, KernelKind kind, const std::string& detail_prefix) {
  for (const KernelRecord& r : records) {
    if (r.kind == kind && r.detail.rfind(detail_prefix, 0) == 0 && r.device == "cuda:0") return true;
  }
  return false;
}

TEST(CudaExecutableTest, GemmsRunOnCublasLt) {
  REQUIRE_CUDA_DEVICE();
  Outcome o = RunText(kGemmBiasRelu);
  EXPECT_EQ(o.error, "");
  EXPECT_TRUE(HasRecord(o.records, KernelKind::kLibraryCall, "__blas$gemm/cublasLt#")) << o.program;
  o = RunText(kBatchedColumnMajorGemm);
  EXPECT_EQ(o.error, "");
}

TEST(CudaExecutableTest, ConvolutionsRunOnCudnn) {
  REQUIRE_CUDA_DEVICE();
  for (const auto& k : kConvKinds) {
    Outcome o = RunText(ConvModule(k));
    EXPECT_EQ(o.error, "") << k[0];
    EXPECT_TRUE(HasRecord(o.records, KernelKind::kLibraryCall, StrCat(k[0], "/cudnn#"))) << k[0] << "\n" << o.program;
  }
  Outcome o = RunText(kFusedConv);
  EXPECT_EQ(o.error, "");
}

TEST(CudaExecutableTest, UnplannableCallsAndRoutinesRunOnTheHost) {
  REQUIRE_CUDA_DEVICE();
  // Asymmetric padding: cuDNN cannot take it; oneDNN on the host does.
  Outcome o = RunText(kHostFallback);
  EXPECT_EQ(o.error, "");
  EXPECT_TRUE(HasRecord(o.records, KernelKind::kRuntimeRoutine, "host: __dnn$convForward")) << o.program;
  // The sort after it runs on the device's sort kernel (cuda_routine_thunk.cc).
  EXPECT_TRUE(HasRecord(o.records, KernelKind::kRuntimeRoutine, "bitonic sort")) << o.program;
  // Without host fallback, an op without a kernel is an error naming it.
  CudaExecutableOptions strict = kFullF32;
  strict.host_fallback = false;
  o = RunText("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n", 0, nullptr, strict);
  EXPECT_NE(o.error.find("n: no GPU implementation"), std::string::npos) << o.error;
}

// The native select-and-scatter kernel needs the GPU code generator, which
// this binary does not link (no LLVM): scripts/gpu-check.sh and
// scripts/gpu-parity.sh run ResNet-18 with select_and_scatter_expander
// disabled through `passlab run --device cuda --check` instead, and
// test/core/codegen checks its PTX without a GPU.

TEST(CudaExecutableTest, ControlFlowReadsPredicatesBack) {
  REQUIRE_CUDA_DEVICE();
  Outcome o = RunText(kWhileLoop);
  EXPECT_EQ(o.error, "");
  EXPECT_TRUE(HasRecord(o.records, KernelKind::kControlFlow, "while (5 iterations)")) << o.program;
}

TEST(CudaExecutableTest, AsyncOpsRunOnTheSecondStream) {
  REQUIRE_CUDA_DEVICE();
  Outcome o = RunText(kAsyncOps);
  EXPECT_EQ(o.error, "");
  bool second_stream = false;
  for (const KernelRecord& r : o.records) second_stream |= r.thread == 1;
  EXPECT_TRUE(second_stream) << o.program;
}

TEST(CudaExecutableTest, ZeroBroadcastIsAMemset) {
  REQUIRE_CUDA_DEVICE();
  Outcome o = RunText(kZeroBroadcast);
  EXPECT_EQ(o.error, "");
  EXPECT_TRUE(HasRecord(o.records, KernelKind::kMemset, "memset")) << o.program;
}

// A hand-written PTX kernel for `negate` over f32[1000] (the provider's ABI:
// one .u64 pointer per operand, then per result leaf).
constexpr char kNegatePtx[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry negate_kernel(.param .u64 in, .param .u64 out) {
  .reg .b32 %r<5>;
  .reg .b64 %rd<8>;
  .reg .f32 %f<3>;
  .reg .pred %p;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.s32 %r4, %r1, %r2, %r3;
  setp.ge.s32 %p, %r4, 1000;
  @%p bra DONE;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd3, %rd1;
  cvta.to.global.u64 %rd4, %rd2;
  mul.wide.s32 %rd5, %r4, 4;
  add.s64 %rd6, %rd3, %rd5;
  add.s64 %rd7, %rd4, %rd5;
  ld.global.f32 %f1, [%rd6];
  neg.f32 %f2, %f1;
  st.global.f32 [%rd7], %f2;
DONE:
  ret;
}
)";

constexpr char kNegateModule[] =
    "HloModule m\nENTRY e {\n  p = f32[1000] parameter(0)\n  ROOT n = f32[1000] negate(p)\n}\n";

TEST(CudaExecutableTest, ProviderKernelsAreLoadedOnceAndLaunched) {
  REQUIRE_CUDA_DEVICE();
  int compiled = 0;
  GpuKernelProvider provider = [&](const HloInstruction& inst) -> absl::StatusOr<GpuKernel> {
    if (inst.opcode() != HloOpcode::kNegate) return absl::UnimplementedError("only negate");
    ++compiled;
    GpuKernel k;
    k.name = inst.name();
    k.entry = "negate_kernel";
    k.ptx = kNegatePtx;
    k.target = "sm_90";
    k.launch.grid_x = 4;
    k.launch.block_x = 256;
    k.num_buffers = 2;
    return k;
  };
  for (CudaTiming timing : {CudaTiming::kEvents, CudaTiming::kCupti}) {
    CudaExecutableOptions options = kFullF32;
    options.timing = timing;
    Outcome o = RunText(kNegateModule, 0, provider, options);
    EXPECT_EQ(o.error, "");
    bool launched = false;
    for (const KernelRecord& r : o.records) {
      if (r.name != "n" || r.kind != KernelKind::kEmitted) continue;
      launched = true;
      EXPECT_EQ(r.launch.grid_x, 4);
      EXPECT_EQ(r.launch.block_x, 256);
      EXPECT_GT(r.registers, 0);
      EXPECT_GT(r.end_ns, r.start_ns);
    }
    EXPECT_TRUE(launched) << o.program;
  }
  EXPECT_EQ(compiled, 2);  // once per executable, not per run
}

TEST(CudaExecutableTest, BadPtxIsReportedWithTheKernelName) {
  REQUIRE_CUDA_DEVICE();
  GpuKernelProvider provider = [](const HloInstruction& inst) -> absl::StatusOr<GpuKernel> {
    GpuKernel k;
    k.name = inst.name();
    k.entry = "negate_kernel";
    k.ptx = ".version 8.0\n.target sm_90\nthis is not ptx\n";
    k.num_buffers = 2;
    return k;
  };
  Outcome o = RunText(kNegateModule, 0, provider);
  EXPECT_EQ(o.error.rfind("create: cuModuleLoadData(n): CUDA_ERROR_INVALID_PTX", 0), 0u) << o.error;
}

// Runs without a device: every module above parses and evaluates, so the
// device tests exercise what they claim when a GPU session runs them.
TEST(CudaExecutableTest, DeviceTestModulesParseAndEvaluate) {
  std::vector<std::string> modules = {kGemmBiasRelu, kBatchedColumnMajorGemm, kFusedConv,    kHostFallback,
                                      kWhileLoop,    kAsyncOps,               kZeroBroadcast, kNegateModule,
                                      kSelectAndScatter};
  for (const auto& k : kConvKinds) modules.push_back(ConvModule(k));
  for (const std::string& text : modules) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message() << "\n" << text;
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
    absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(expected.ok()) << expected.status().message() << "\n" << text;
  }
}

struct TinyModel {
  const char* name;
  ModelOptions options;
};

std::vector<TinyModel> TinyModels() {
  std::vector<TinyModel> models;
  auto add = [&](const char* name, auto set) {
    TinyModel m{name, {}};
    set(m.options);
    models.push_back(m);
  };
  add("mlp", [](ModelOptions& o) { o.batch = 4, o.depth = 2, o.width = 16; });
  add("embedding", [](ModelOptions& o) { o.batch = 4, o.seq_len = 8, o.vocab = 50, o.width = 8; });
  add("laplace_pinn", [](ModelOptions& o) { o.image_size = 6, o.depth = 2, o.width = 8; });
  add("transformer_block", [](ModelOptions& o) { o.batch = 2, o.seq_len = 4, o.width = 16, o.heads = 2; });
  add("gelu", [](ModelOptions& o) { o.batch = 2, o.seq_len = 3, o.width = 40; });
  add("resnet18", [](ModelOptions& o) { o.batch = 2, o.image_size = 64, o.classes = 10, o.width = 8; });
  return models;
}

// keep_arguments: the same literals are uploaded once; other literals, or a
// program that overwrites a parameter's buffer, are uploaded every run.
TEST(CudaExecutableTest, KeptArgumentsAreUploadedOnce) {
  REQUIRE_CUDA_DEVICE();
  auto run_twice = [](const std::string& text, std::vector<int64_t>& uploaded_bytes) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
    absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    CudaExecutableOptions options = kFullF32;
    options.keep_arguments = true;
    absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(**m, nullptr, options);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<Literal> got = (*exe)->Run(args);
      ASSERT_TRUE(got.ok()) << got.status().message();
      EXPECT_TRUE(CompareLiterals(*expected, *got, {.abs = 1e-4, .rel = 1e-4}).ok()) << "run " << i;
      uploaded_bytes.push_back((*exe)->last_run().host_to_device_bytes);
    }
    // Other literals (equal values, other objects) are uploaded again.
    std::vector<Literal> copies;
    for (const Literal& a : args) copies.push_back(a);
    absl::StatusOr<Literal> got = (*exe)->Run(copies);
    ASSERT_TRUE(got.ok()) << got.status().message();
    uploaded_bytes.push_back((*exe)->last_run().host_to_device_bytes);
  };
  std::vector<int64_t> bytes;
  run_twice(kGemmBiasRelu, bytes);
  EXPECT_EQ(bytes, (std::vector<int64_t>{(64 * 48 + 48 * 32 + 32) * 4, 0, (64 * 48 + 48 * 32 + 32) * 4}));
  // A donated parameter that the program updates in place (the buffer
  // assignment says so): uploaded every run.
  bytes.clear();
  run_twice(R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(p, u, i)
}
)",
            bytes);
  ASSERT_EQ(bytes.size(), 3u);
  EXPECT_GE(bytes[0], 64 + 16);
  EXPECT_EQ(bytes[1], bytes[0]);
  EXPECT_EQ(bytes[2], bytes[0]);
  // A donor the program leaves alone (p is read by the op that would write
  // the output, so the output gets its own buffer): uploaded once.
  bytes.clear();
  run_twice(R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[16] parameter(0)
  ROOT n = f32[16] negate(p)
}
)",
            bytes);
  EXPECT_EQ(bytes, (std::vector<int64_t>{64, 0, 64}));
}

// Without a device too: every gemm and convolution the full pipeline leaves
// in the models has a cuBLASLt or cuDNN plan, so none falls back to the host
// (as the transformer's attention gemms did before batch dimensions could be
// split into several calls).
TEST(CudaExecutableTest, EveryLibraryCallOfTheModelsHasADevicePlan) {
  for (const TinyModel& model : TinyModels()) {
    SCOPED_TRACE(model.name);
    absl::StatusOr<std::unique_ptr<HloModule>> module = BuildModel(model.name, model.options);
    ASSERT_TRUE(module.ok()) << module.status().message();
    absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline("default", "");
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
    ASSERT_TRUE(pipeline->pipeline->Run(**module).ok());
    int calls = 0;
    for (const HloComputation* c : (*module)->computations()) {
      for (const HloInstruction* inst : c->instructions()) {
        std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*inst);
        if (!kind.has_value()) continue;
        if (*kind == LibraryCallKind::kGemm) {
          absl::StatusOr<BlasLtGemmPlan> plan = PlanBlasLtGemm(*inst);
          EXPECT_TRUE(plan.ok()) << plan.status().message();
          ++calls;
        } else if (*kind != LibraryCallKind::kCholesky && *kind != LibraryCallKind::kTriangularSolve) {
          absl::StatusOr<DnnConvPlan> plan = PlanDnnConvolution(*inst);
          EXPECT_TRUE(plan.ok()) << plan.status().message();
          ++calls;
        }
      }
    }
    if (std::string(model.name) != "gelu" && std::string(model.name) != "laplace_pinn") {
      EXPECT_GT(calls, 0);
    }
  }
}

// Every model, optimized by the full pipeline, computes on the device what
// the evaluator computes on the unoptimized module.
TEST(CudaExecutableTest, EveryModelMatchesTheEvaluator) {
  REQUIRE_CUDA_DEVICE();
  for (const TinyModel& model : TinyModels()) {
    SCOPED_TRACE(model.name);
    absl::StatusOr<std::unique_ptr<HloModule>> module = BuildModel(model.name, model.options);
    ASSERT_TRUE(module.ok()) << module.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), 11);
    absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**module, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline("default", "");
    ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
    ASSERT_TRUE(pipeline->pipeline->Run(**module).ok());
    Outcome o = RunOnDevice(**module, *expected, args);
    EXPECT_EQ(o.error, "");
    EXPECT_FALSE(o.records.empty());
  }
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

// Command buffer (XLA's command buffers; CUDA graphs): the first run
// without records is eager, the second is captured and launched, later ones
// launch the graph; every run gives the eager run's bits, and a traced run
// in between stays eager (its records name every thunk).
TEST(CudaExecutableTest, StepsWithoutRecordsReplayOneCudaGraph) {
  REQUIRE_CUDA_DEVICE();
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kFusedConv);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
  CudaExecutableOptions options = kFullF32;
  options.keep_arguments = true;
  absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(**m, nullptr, options);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  EXPECT_EQ((*exe)->CommandBufferStatus().rfind("not captured yet", 0), 0u) << (*exe)->CommandBufferStatus();
  absl::StatusOr<Literal> eager = (*exe)->Run(args);
  ASSERT_TRUE(eager.ok()) << eager.status().message();
  EXPECT_FALSE((*exe)->last_run().graph_launched);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<Literal> got = (*exe)->Run(args);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE((*exe)->last_run().graph_launched) << "run " << i << ": " << (*exe)->CommandBufferStatus();
    EXPECT_TRUE(CompareLiterals(*eager, *got, {.abs = 0, .rel = 0}).ok()) << "run " << i;
    std::vector<KernelRecord> records;
    ASSERT_TRUE((*exe)->Execute(args, &records).ok());
    EXPECT_FALSE((*exe)->last_run().graph_launched);
    EXPECT_TRUE(HasRecord(records, KernelKind::kLibraryCall, "__dnn$convBiasActivationForward/cudnn#"))
        << (*exe)->ToString();
  }
  EXPECT_EQ((*exe)->CommandBufferStatus().rfind("CUDA graph of ", 0), 0u) << (*exe)->CommandBufferStatus();
  // Off: every run eager.
  options.command_buffer = false;
  exe = CudaExecutable::Create(**m, nullptr, options);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*exe)->Execute(args).ok());
    EXPECT_FALSE((*exe)->last_run().graph_launched);
  }
  EXPECT_EQ((*exe)->CommandBufferStatus(), "off");
}

// Host work in the middle of a step keeps it eager, and says why.
TEST(CudaExecutableTest, HostWorkInAStepKeepsItEager) {
  REQUIRE_CUDA_DEVICE();
  for (const char* text : {kWhileLoop, kHostFallback}) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 3);
    absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(**m, nullptr, kFullF32);
    ASSERT_TRUE(exe.ok()) << exe.status().message();
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE((*exe)->Execute(args).ok());
      EXPECT_FALSE((*exe)->last_run().graph_launched);
    }
    std::string status = (*exe)->CommandBufferStatus();
    EXPECT_EQ(status.rfind("eager: ", 0), 0u) << status;
    EXPECT_TRUE(status.find("on the host") != std::string::npos) << status;
  }
}

// TF32 as XLA allows it: an f32 gemm with DEFAULT precision runs on TF32
// (xla/service/gpu/matmul_utils.cc IsTf32Allowed: precision <= HIGH), one
// with HIGHEST in full f32. TF32 keeps 10 mantissa bits, so the DEFAULT
// result is near the evaluator but not at f32's 1e-5.
TEST(CudaExecutableTest, Tf32WhereXlaAllowsIt) {
  REQUIRE_CUDA_DEVICE();
  auto gemm = [](const char* precision) {
    return StrCat(R"(HloModule m
ENTRY e {
  a = f32[128,256] parameter(0)
  b = f32[256,64] parameter(1)
  ROOT g = f32[128,64] custom-call(a, b), custom_call_target="__blas$gemm",
    backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"precision_config":{"operand_precision":[")",
                  precision, R"(",")", precision, R"("]}}}
}
)");
  };
  CudaExecutableOptions options;  // allow_tf32 by default, as XLA
  Outcome tf32 = RunText(gemm("DEFAULT"), 2e-2, nullptr, options);
  EXPECT_EQ(tf32.error, "");
  EXPECT_NE(tf32.program.find("(tf32)"), std::string::npos) << tf32.program;
  Outcome full = RunText(gemm("HIGHEST"), 1e-4, nullptr, options);
  EXPECT_EQ(full.error, "");
  EXPECT_EQ(full.program.find("(tf32)"), std::string::npos) << full.program;
  Outcome off = RunText(gemm("DEFAULT"), 1e-4, nullptr, kFullF32);
  EXPECT_EQ(off.error, "");
  EXPECT_EQ(off.program.find("(tf32)"), std::string::npos) << off.program;
}

}  // namespace
}  // namespace passlab
