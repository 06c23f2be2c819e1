// The GPU code generator without a GPU: seed 000's emitters produce PTX with
// the expected instructions (vector global loads, shared-memory tiles and
// barriers, warp shuffles) and launch dimensions; ptxas accepts it when the
// CUDA toolkit is installed; the loop emitter's grid covers every output
// element exactly once.
#include "core/codegen/gpu_kernel_compiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

// ptxas's verdict on `ptx` ("" when accepted), or nullopt without ptxas.
std::optional<std::string> Ptxas(const GpuKernel& kernel) {
  if (!std::filesystem::exists(kPtxas)) return std::nullopt;
  std::filesystem::path dir = std::filesystem::temp_directory_path();
  std::string base = (dir / ("passlab_ptxas_" + std::to_string(::getpid()) + "_" + kernel.entry)).string();
  {
    std::ofstream out(base + ".ptx");
    out << kernel.ptx;
  }
  std::string command = std::string(kPtxas) + " -arch=" + kernel.target + " " + base + ".ptx -o " + base +
                        ".cubin > " + base + ".log 2>&1";
  int rc = std::system(command.c_str());
  std::ifstream log(base + ".log");
  std::string message((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::filesystem::remove(base + ".ptx");
  std::filesystem::remove(base + ".cubin");
  std::filesystem::remove(base + ".log");
  return rc == 0 ? "" : "ptxas failed: " + message;
}

void ExpectPtxasAccepts(const GpuKernel& kernel) {
  std::optional<std::string> verdict = Ptxas(kernel);
  if (!verdict.has_value()) {
    std::printf("(ptxas not found at %s: PTX not validated)\n", kPtxas);
    return;
  }
  EXPECT_EQ(*verdict, "") << kernel.ptx;
}

// Compiles the entry's root instruction.
GpuKernel CompileRoot(const std::string& text, GpuCompileOptions options = {}) {
  auto module = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return {};
  const HloInstruction* root = (*module)->entry_computation()->root_instruction();
  absl::StatusOr<GpuKernel> kernel = GpuKernelCompiler(std::move(options)).Compile(*root);
  EXPECT_TRUE(kernel.ok()) << kernel.status().message();
  if (!kernel.ok()) return {};
  return *kernel;
}

bool Contains(const std::string& ptx, const std::string& pattern) {
  return std::regex_search(ptx, std::regex(pattern));
}

// Seed 000's GELU example.
const char* kGelu = R"(HloModule m
gelu {
  param = bf16[6,512,4096] parameter(0)
  constant_0 = bf16[] constant(0.5)
  bcast_0 = bf16[6,512,4096] broadcast(constant_0), dimensions={}
  constant_1 = bf16[] constant(1)
  bcast_1 = bf16[6,512,4096] broadcast(constant_1), dimensions={}
  constant_2 = bf16[] constant(0.79785)
  bcast_2 = bf16[6,512,4096] broadcast(constant_2), dimensions={}
  constant_3 = bf16[] constant(0.044708)
  bcast_3 = bf16[6,512,4096] broadcast(constant_3), dimensions={}
  square = bf16[6,512,4096] multiply(param, param)
  cube = bf16[6,512,4096] multiply(square, param)
  multiply_3 = bf16[6,512,4096] multiply(cube, bcast_3)
  add_1 = bf16[6,512,4096] add(param, multiply_3)
  multiply_2 = bf16[6,512,4096] multiply(add_1, bcast_2)
  tanh_0 = bf16[6,512,4096] tanh(multiply_2)
  add_0 = bf16[6,512,4096] add(tanh_0, bcast_1)
  multiply_1 = bf16[6,512,4096] multiply(add_0, bcast_0)
  ROOT multiply_0 = bf16[6,512,4096] multiply(param, multiply_1)
}
ENTRY main {
  param = bf16[6,512,4096] parameter(0)
  ROOT fusion = bf16[6,512,4096] fusion(param), kind=kLoop, calls=gelu
})";

TEST(GpuKernelCompilerTest, GeluLoopFusionUsesVectorGlobalLoads) {
  GpuKernel k = CompileRoot(kGelu);
  EXPECT_EQ(k.emitter_kind, EmitterKind::kLoop);
  EXPECT_EQ(k.entry, "kernel_fusion");
  EXPECT_EQ(k.target, "sm_90");
  EXPECT_EQ(k.num_buffers, 2);
  // Seed 000: 128 threads x 4 elements, 24576 blocks.
  EXPECT_EQ(k.launch.block_x, 128);
  EXPECT_EQ(k.launch.grid_x, 24576);
  EXPECT_EQ(k.launch.grid_y * k.launch.grid_z * k.launch.block_y * k.launch.block_z, 1);
  EXPECT_TRUE(Contains(k.ptx, R"(\.target sm_90)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(\.entry kernel_fusion)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(\.maxntid 128, 1, 1)")) << k.ptx;
  // Four bf16 in one vector load and one vector store.
  EXPECT_TRUE(Contains(k.ptx, R"(ld\.global(\.nc)?\.v[24]\.)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(st\.global\.v[24]\.)")) << k.ptx;
  EXPECT_EQ(k.bytes_read, 6 * 512 * 4096 * 2);
  EXPECT_EQ(k.bytes_written, 6 * 512 * 4096 * 2);
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, TanhThroughLibdeviceWhenNotExpanded) {
  GpuCompileOptions options;
  options.disabled_passes = {"expand-math"};
  GpuKernel k = CompileRoot(kGelu, options);
  ASSERT_FALSE(k.ptx.empty());
  // libdevice's tanhf is linked and inlined: no call remains.
  EXPECT_FALSE(Contains(k.ptx, R"(call.*__nv_tanhf)")) << k.ptx;
  ExpectPtxasAccepts(k);
  options.libdevice_path = "/nonexistent/libdevice.bc";
  auto module = ParseHloModule(kGelu, "gelu.hlo");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<GpuKernel> failed =
      GpuKernelCompiler(options).Compile(*(*module)->entry_computation()->root_instruction());
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("libdevice"), std::string::npos) << failed.status().message();
}

// Seed 000's transpose example.
const char* kTranspose = R"(HloModule m
fused {
  p = f32[20,160,170] parameter(0)
  e = f32[20,160,170] exponential(p)
  t = f32[170,160,20] transpose(e), dimensions={2,1,0}
  ROOT a = f32[170,160,20] abs(t)
}
ENTRY main {
  p = f32[20,160,170] parameter(0)
  ROOT fusion = f32[170,160,20] fusion(p), kind=kInput, calls=fused
})";

TEST(GpuKernelCompilerTest, TransposeUsesSharedTileAndBarrier) {
  GpuKernel k = CompileRoot(kTranspose);
  EXPECT_EQ(k.emitter_kind, EmitterKind::kTranspose);
  // 160 x ceil(170 / 32) x ceil(20 / 32) tiles of 32x32, 128 threads each.
  EXPECT_EQ(k.launch.grid_x, 960);
  EXPECT_EQ(k.launch.block_x, 128);
  // A 32 x 33 f32 tile.
  EXPECT_TRUE(Contains(k.ptx, R"(\.shared \.align 16 \.b8 transpose_tile\[4224\])")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(st\.shared)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(ld\.shared)")) << k.ptx;
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, TransposeWithoutMovingTheMinorDimIsALoop) {
  GpuKernel k = CompileRoot(R"(HloModule m
ENTRY main {
  p = f32[8,16,32] parameter(0)
  ROOT t = f32[16,8,32] transpose(p), dimensions={1,0,2}
})");
  EXPECT_EQ(k.emitter_kind, EmitterKind::kLoop);
  EXPECT_FALSE(Contains(k.ptx, R"(bar\.sync)"));
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, RowReductionUsesWarpShufflesAndSharedMemory) {
  GpuKernel k = CompileRoot(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[1024,4096] parameter(0)
  e = f32[1024,4096] exponential(p)
  z = f32[] constant(0)
  r = f32[1024] reduce(e, z), dimensions={1}, to_apply=add
  ROOT l = f32[1024] log(r)
}
ENTRY main {
  p = f32[1024,4096] parameter(0)
  ROOT fusion = f32[1024] fusion(p), kind=kInput, calls=fused
})");
  EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
  // A block of 8 warps per long row.
  EXPECT_EQ(k.launch.grid_x, 1024);
  EXPECT_EQ(k.launch.block_x, 256);
  EXPECT_TRUE(Contains(k.ptx, R"(shfl\.sync\.bfly\.b32)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(\.shared)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, ShortRowsGetAWarpEach) {
  GpuKernel k = CompileRoot(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY main {
  p = f32[1000,100] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[1000] reduce(p, z), dimensions={1}, to_apply=max
})");
  EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
  EXPECT_EQ(k.launch.grid_x, 125);  // 8 rows (warps) per block
  EXPECT_EQ(k.launch.block_x, 256);
  EXPECT_TRUE(Contains(k.ptx, R"(shfl\.sync\.bfly\.b32)")) << k.ptx;
  EXPECT_FALSE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, ColumnReductionUsesSharedTileAndShuffles) {
  GpuKernel k = CompileRoot(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[4,4096,1000] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4,1000] reduce(p, z), dimensions={1}, to_apply=add
}
ENTRY main {
  p = f32[4,4096,1000] parameter(0)
  ROOT fusion = f32[4,1000] fusion(p), kind=kInput, calls=fused
})");
  EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
  // 4 x ceil(1000 / 32) blocks of 32 columns, 32 warps each (XLA's
  // ColumnReductionFusion); a 32 x 33 f32 tile.
  EXPECT_EQ(k.launch.grid_x, 4 * 32);
  EXPECT_EQ(k.launch.block_x, 1024);
  EXPECT_TRUE(Contains(k.ptx, R"(shfl\.sync\.bfly\.b32)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(\.shared \.align 16 \.b8 reduction_tile\[4224\])")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, MultiOutputRowReduction) {
  // Sum and sum of squares (a norm's statistics) in one pass; an s32 count
  // beside them needs a second partials buffer: the loop emitter then.
  GpuKernel k = CompileRoot(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[128,1024] parameter(0)
  z = f32[] constant(0)
  s = f32[128] reduce(p, z), dimensions={1}, to_apply=add
  q = f32[128,1024] multiply(p, p)
  ss = f32[128] reduce(q, z), dimensions={1}, to_apply=add
  ROOT t = (f32[128], f32[128]) tuple(s, ss)
}
ENTRY main {
  p = f32[128,1024] parameter(0)
  ROOT fusion = (f32[128], f32[128]) fusion(p), kind=kInput, calls=fused
})");
  EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
  EXPECT_EQ(k.num_buffers, 3);
  EXPECT_EQ(k.launch.grid_x, 128);
  // Two accumulators, shuffled 5 + 3 times each.
  const std::regex shuffle(R"(shfl\.sync\.bfly\.b32)");
  EXPECT_EQ(std::distance(std::sregex_iterator(k.ptx.begin(), k.ptx.end(), shuffle), std::sregex_iterator()), 16);
  ExpectPtxasAccepts(k);
  GpuKernel mixed = CompileRoot(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
addi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
fused {
  p = f32[128,1024] parameter(0)
  z = f32[] constant(0)
  s = f32[128] reduce(p, z), dimensions={1}, to_apply=add
  c = s32[128,1024] convert(p)
  zi = s32[] constant(0)
  n = s32[128] reduce(c, zi), dimensions={1}, to_apply=addi
  ROOT t = (f32[128], s32[128]) tuple(s, n)
}
ENTRY main {
  p = f32[128,1024] parameter(0)
  ROOT fusion = (f32[128], s32[128]) fusion(p), kind=kInput, calls=fused
})");
  EXPECT_EQ(mixed.emitter_kind, EmitterKind::kLoop);
  ExpectPtxasAccepts(mixed);
}

// Reductions with side outputs: XLA's reduction emitter writes the roots
// that are not reductions ("side outputs", of the reduce input's shape or a
// reshape/transpose bitcast of it: ShapesCompatibleForMultiOutputFusion in
// xla/service/gpu/gpu_fusible.cc) while it walks the input
// (xla/backends/gpu/codegen/emitters/reduction.cc). ResNet-50's batch-norm
// statistics fusion (fusion.203 of `passlab opt --model resnet50 --batch 8
// --image-size 64`) was the loop emitter's before: 1024 x 128 threads, 128
// us on an H100.
constexpr char kStatisticsWithSquares[] = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[8,16,16,256] parameter(0)
  flat = f32[2048,256] bitcast(p)
  z = f32[] constant(0)
  sum = f32[256] reduce(flat, z), dimensions={0}, to_apply=add
  square = f32[8,16,16,256] multiply(p, p)
  ROOT t = (f32[256], f32[8,16,16,256]) tuple(sum, square)
}
ENTRY main {
  p = f32[8,16,16,256] parameter(0)
  ROOT fusion = (f32[256], f32[8,16,16,256]) fusion(p), kind=kInput, calls=fused
})";

// The global stores of a kernel's PTX.
int64_t CountMatches(const std::string& ptx, const std::string& pattern) {
  const std::regex re(pattern);
  return std::distance(std::sregex_iterator(ptx.begin(), ptx.end(), re), std::sregex_iterator());
}

TEST(GpuKernelCompilerTest, ColumnReductionWritesSideOutputsWhileReading) {
  GpuKernel k = CompileRoot(kStatisticsWithSquares);
  EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
  // The column reduction's launch: 256 / 32 blocks of 32 columns.
  EXPECT_EQ(k.launch.grid_x, 8);
  EXPECT_EQ(k.launch.block_x, 1024);
  EXPECT_EQ(k.num_buffers, 3);
  EXPECT_TRUE(Contains(k.ptx, R"(\.shared \.align 16 \.b8 reduction_tile\[4224\])")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(shfl\.sync\.bfly\.b32)")) << k.ptx;
  // One store of the side output inside the walk (before the barrier), one
  // of the reduced value after it.
  EXPECT_EQ(CountMatches(k.ptx, R"(st\.global)"), 2) << k.ptx;
  size_t barrier = k.ptx.find("bar.sync");
  ASSERT_NE(barrier, std::string::npos);
  EXPECT_LT(k.ptx.find("mul.rn.f32"), barrier) << k.ptx;
  EXPECT_LT(k.ptx.find("st.global"), barrier) << k.ptx;
  ExpectPtxasAccepts(k);
}

TEST(GpuKernelCompilerTest, RowReductionWritesSideOutputsWhileReading) {
  // A block per long row and a warp per short row; a narrower side output
  // (bf16) and a unary epilogue on the reduced value.
  for (const auto& [rows, columns, grid] :
       std::vector<std::tuple<int, int, int>>{{96, 1000, 96}, {300, 37, (300 + 7) / 8}}) {
    SCOPED_TRACE(columns);
    std::string text = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[NROWS,NCOLS] parameter(0)
  e = f32[NROWS,NCOLS] exponential(p)
  z = f32[] constant(0)
  sum = f32[NROWS] reduce(e, z), dimensions={1}, to_apply=add
  root = f32[NROWS] sqrt(sum)
  narrow = bf16[NROWS,NCOLS] convert(e)
  ROOT t = (f32[NROWS], bf16[NROWS,NCOLS]) tuple(root, narrow)
}
ENTRY main {
  p = f32[NROWS,NCOLS] parameter(0)
  ROOT fusion = (f32[NROWS], bf16[NROWS,NCOLS]) fusion(p), kind=kInput, calls=fused
})";
    text = std::regex_replace(text, std::regex("NROWS"), std::to_string(rows));
    text = std::regex_replace(text, std::regex("NCOLS"), std::to_string(columns));
    GpuKernel k = CompileRoot(text);
    EXPECT_EQ(k.emitter_kind, EmitterKind::kReduction);
    EXPECT_EQ(k.launch.grid_x, grid);
    EXPECT_EQ(k.launch.block_x, 256);
    EXPECT_TRUE(Contains(k.ptx, R"(shfl\.sync\.bfly\.b32)")) << k.ptx;
    EXPECT_TRUE(Contains(k.ptx, R"(st\.global\.b16)")) << k.ptx;  // the bf16 side output
    ExpectPtxasAccepts(k);
  }
}

TEST(GpuKernelCompilerTest, SideOutputsTheReductionEmitterDoesNotTakeUseTheLoopEmitter) {
  // Side outputs of another element count than the reduce input (the
  // reduce output's shape), and one that reads the reduced value.
  for (const char* side : {R"(other = f32[256] negate(m)
  ROOT t = (f32[256], f32[256]) tuple(sum, other))",
                           R"(sum_b = f32[8,16,16,256] broadcast(sum), dimensions={3}
  other = f32[8,16,16,256] subtract(p, sum_b)
  ROOT t = (f32[256], f32[8,16,16,256]) tuple(sum, other))"}) {
    SCOPED_TRACE(side);
    std::string shape = std::string(side).find("f32[256] negate") != std::string::npos ? "f32[256]" : "f32[8,16,16,256]";
    std::string text = std::string(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p = f32[8,16,16,256] parameter(0)
  m = f32[256] parameter(1)
  flat = f32[2048,256] bitcast(p)
  z = f32[] constant(0)
  sum = f32[256] reduce(flat, z), dimensions={0}, to_apply=add
  )") + side + R"(
}
ENTRY main {
  p = f32[8,16,16,256] parameter(0)
  m = f32[256] parameter(1)
  ROOT fusion = (f32[256], SHAPE) fusion(p, m), kind=kInput, calls=fused
})";
    text = std::regex_replace(text, std::regex("SHAPE"), shape);
    GpuKernel k = CompileRoot(text);
    EXPECT_EQ(k.emitter_kind, EmitterKind::kLoop);
    EXPECT_FALSE(Contains(k.ptx, R"(shfl\.sync)"));
    ExpectPtxasAccepts(k);
  }
}

TEST(GpuKernelCompilerTest, ReductionsTheTiledEmittersDoNotTakeUseTheLoopEmitter) {
  // A 64-bit accumulator (shuffles move 32 bits) and interleaved reduced
  // dims.
  for (const char* text : {R"(HloModule m
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY main {
  p = f64[64,64] parameter(0)
  z = f64[] constant(0)
  ROOT r = f64[64] reduce(p, z), dimensions={1}, to_apply=add
})",
                           R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[8,9,10,11] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[9,11] reduce(p, z), dimensions={0,2}, to_apply=add
})"}) {
    GpuKernel k = CompileRoot(text);
    EXPECT_EQ(k.emitter_kind, EmitterKind::kLoop);
    EXPECT_FALSE(Contains(k.ptx, R"(shfl\.sync)"));
    ExpectPtxasAccepts(k);
  }
}

TEST(GpuKernelCompilerTest, OpsWithDependentNestsRunInOneBlock) {
  GpuKernel k = CompileRoot(R"(HloModule m
ENTRY main {
  x = f32[2,3,4,5] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  ROOT bn = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
})");
  EXPECT_EQ(k.launch.grid_x, 1);
  EXPECT_EQ(k.num_buffers, 6);
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;
  ExpectPtxasAccepts(k);
}

// A scatter-add (the max-pool gradient, an embedding's table gradient): the
// grid's threads share the updates, each added atomically; another
// combiner keeps one thread walking the updates in order.
TEST(GpuKernelCompilerTest, ScatterAddUpdatesAreAtomicAddsOnEveryThread) {
  const char* scatter = R"(HloModule m
%s {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] OP(%a, %b)
}
ENTRY main {
  %operand = f32[64,8] parameter(0)
  %indices = s32[500,1] parameter(1)
  %updates = f32[500,8] parameter(2)
  ROOT %scatter = f32[64,8] scatter(%operand, %indices, %updates), update_window_dims={1},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s
})";
  std::string add = std::regex_replace(scatter, std::regex("OP"), "add");
  GpuKernel k = CompileRoot(add);
  EXPECT_EQ(k.emitter_kind, EmitterKind::kScatter);
  // A grid over the 4000 update elements (XLA's scatter emitter,
  // ScatterWithDistributedUpdates): in place, every thread adds its own; not
  // in place, block 0 copies the operand first (EmitGridScatter).
  EXPECT_EQ(k.launch.grid_x, 4);
  EXPECT_EQ(k.launch.block_x, 1024);
  EXPECT_TRUE(Contains(k.ptx, R"(%ctaid\.x)")) << k.ptx;
  EXPECT_EQ(CountMatches(k.ptx, R"((red|atom)\.global\.add\.f32)"), 2) << k.ptx;  // one per path
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;  // the copy finishes before the updates
  ExpectPtxasAccepts(k);
  // ResNet-50's max-pool gradient (scatter.1 of `passlab opt --model resnet50
  // --batch 8 --image-size 64`: 131072 single-element updates), one block of
  // 1024 threads before (271 us on an H100).
  GpuKernel pool = CompileRoot(R"(HloModule m
%add {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(%a, %b)
}
ENTRY main {
  %operand = f32[8,32,32,64] parameter(0)
  %indices = s32[131072,4] parameter(1)
  %updates = f32[131072,1,1,1,1] parameter(2)
  ROOT %scatter = f32[8,32,32,64] scatter(%operand, %indices, %updates), update_window_dims={1,2,3,4},
      inserted_window_dims={}, scatter_dims_to_operand_dims={0,1,2,3}, index_vector_dim=1, to_apply=%add
})");
  EXPECT_EQ(pool.launch.grid_x, 128);
  EXPECT_EQ(pool.launch.block_x, 1024);
  ExpectPtxasAccepts(pool);
  // f64 and integer adds are atomic too (atom.global.add.f64 needs sm_60).
  for (const char* type : {"f64", "s32", "u64"}) {
    SCOPED_TRACE(type);
    std::string typed = std::regex_replace(add, std::regex("f32"), type);
    GpuKernel t = CompileRoot(typed);
    EXPECT_EQ(t.launch.block_x, 1024);
    EXPECT_TRUE(Contains(t.ptx, R"((red|atom)\.global\.add\.)")) << t.ptx;
    ExpectPtxasAccepts(t);
  }
  GpuKernel m = CompileRoot(std::regex_replace(scatter, std::regex("OP"), "multiply"));
  EXPECT_EQ(m.launch.grid_x, 1);
  EXPECT_EQ(m.launch.block_x, 256);
  EXPECT_FALSE(Contains(m.ptx, R"(atom\.|red\.)")) << m.ptx;
  ExpectPtxasAccepts(m);
}

// The modules scripts/gpu-check.sh runs on a device against the evaluator
// (test/hlo/gpu/) take the paths they are there for: every fusion of
// reduce_side_outputs.hlo is a reduction with side outputs, every scatter of
// scatter_add.hlo a grid of atomic adds.
TEST(GpuKernelCompilerTest, DeviceCheckModulesTakeTheNewPaths) {
  for (const auto& [file, opcode, kind, count] :
       std::vector<std::tuple<const char*, HloOpcode, EmitterKind, int>>{
           {"reduce_side_outputs.hlo", HloOpcode::kFusion, EmitterKind::kReduction, 4},
           {"scatter_add.hlo", HloOpcode::kScatter, EmitterKind::kScatter, 3}}) {
    SCOPED_TRACE(file);
    std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/hlo/gpu/" + file);
    ASSERT_TRUE(in.good());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto module = ParseHloModule(text, file);
    ASSERT_TRUE(module.ok()) << module.status().message();
    int compiled = 0;
    for (const HloInstruction* h : (*module)->entry_computation()->instructions()) {
      if (h->opcode() != opcode) continue;
      absl::StatusOr<GpuKernel> k = GpuKernelCompiler().Compile(*h);
      ASSERT_TRUE(k.ok()) << h->name() << ": " << k.status().message();
      EXPECT_EQ(k->emitter_kind, kind) << h->name();
      if (opcode == HloOpcode::kScatter) EXPECT_GT(k->launch.grid_x, 1) << h->name();
      ExpectPtxasAccepts(*k);
      ++compiled;
    }
    EXPECT_EQ(compiled, count);
  }
}

// The max-pool gradient's select-and-scatter: one block fills the output
// with the init value, then its threads share the source elements, each
// selecting in its window and adding atomically; another combiner keeps one
// thread walking the source in order.
TEST(GpuKernelCompilerTest, SelectAndScatterAddsAtomicallyOnEveryThread) {
  const char* text = R"(HloModule m
%ge {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=GE
}
%s {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %r = f32[] OP(%x, %y)
}
ENTRY main {
  %x = f32[8,32,32,64] parameter(0)
  %g = f32[8,16,16,64] parameter(1)
  %z = f32[] constant(0)
  ROOT %sas = f32[8,32,32,64] select-and-scatter(%x, %g, %z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0},
      select=%ge, scatter=%s
})";
  GpuKernel k = CompileRoot(std::regex_replace(text, std::regex("OP"), "add"));
  EXPECT_EQ(k.emitter_kind, EmitterKind::kSelectAndScatter);
  EXPECT_EQ(k.launch.grid_x, 1);
  EXPECT_EQ(k.launch.block_x, 1024);
  EXPECT_TRUE(Contains(k.ptx, R"((red|atom)\.global\.add\.f32)")) << k.ptx;
  EXPECT_TRUE(Contains(k.ptx, R"(bar\.sync)")) << k.ptx;  // the fill finishes before the scatter
  ExpectPtxasAccepts(k);
  GpuKernel m = CompileRoot(std::regex_replace(text, std::regex("OP"), "multiply"));
  EXPECT_EQ(m.launch.block_x, 256);
  EXPECT_FALSE(Contains(m.ptx, R"(atom\.|red\.)")) << m.ptx;
  ExpectPtxasAccepts(m);
  // Integers in a column-major layout, with padding on both sides.
  GpuKernel i = CompileRoot(R"(HloModule m
%lt {
  %a = s32[] parameter(0)
  %b = s32[] parameter(1)
  ROOT %c = pred[] compare(%a, %b), direction=LT
}
%max {
  %x = s32[] parameter(0)
  %y = s32[] parameter(1)
  ROOT %r = s32[] maximum(%x, %y)
}
ENTRY main {
  %x = s32[7,6]{0,1} parameter(0)
  %g = s32[4,3] parameter(1)
  %z = s32[] constant(-5)
  ROOT %sas = s32[7,6]{0,1} select-and-scatter(%x, %g, %z), window={size=2x3 stride=2x2 pad=0_1x1_1}, select=%lt,
      scatter=%max
})");
  EXPECT_EQ(i.launch.block_x, 256);
  ExpectPtxasAccepts(i);
}

TEST(GpuKernelCompilerTest, LoopGridCoversEveryElementExactlyOnce) {
  for (int64_t elements : {1, 5, 31, 32, 128, 1000, 4096, 65537, 1 << 20, 3 << 20}) {
    for (int width : {0, 1, 2, 4}) {
      SCOPED_TRACE(elements);
      SCOPED_TRACE(width);
      GpuLoopLaunch l = LoopLaunch({elements}, 16, width);
      ASSERT_EQ(elements % l.vector_width, 0);
      EXPECT_LE(l.block, 128);
      EXPECT_EQ(l.block % 32, 0);
      std::vector<int> hits(elements, 0);
      for (int64_t b = 0; b < l.grid; ++b) {
        for (int64_t t = 0; t < l.block; ++t) {
          int64_t first = l.FirstElement(b, t);
          if (first >= elements) continue;  // the emitted bounds check
          for (int64_t v = 0; v < l.vector_width; ++v) ++hits[first + v];
        }
      }
      EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), elements);
      // No block is idle.
      EXPECT_LT(l.FirstElement(l.grid - 1, 0), elements);
    }
  }
  // Multi-output loops: the width divides every output, the grid covers the
  // largest.
  GpuLoopLaunch l = LoopLaunch({1 << 20, 6}, 32, 4);
  EXPECT_EQ(l.vector_width, 2);
  EXPECT_EQ(l.elements, 1 << 20);
  // 128-bit limit: f64 goes 2-wide.
  EXPECT_EQ(LoopLaunch({1 << 24}, 64).vector_width, 2);
  EXPECT_EQ(LoopLaunch({1 << 24}, 32).vector_width, 4);
}

TEST(GpuKernelCompilerTest, KernelLaunchIsTheLoopLaunch) {
  // What the compiled kernel reports is what the emitted indexing assumes
  // (the same LoopLaunch); a forced width changes both.
  for (int width : {1, 2}) {
    GpuCompileOptions options;
    options.vector_width = width;
    GpuKernel k = CompileRoot(R"(HloModule m
ENTRY main {
  a = f32[100,1000] parameter(0)
  b = f32[100,1000] parameter(1)
  ROOT s = f32[100,1000] add(a, b)
})",
                              options);
    GpuLoopLaunch l = LoopLaunch({100000}, 32, width);
    EXPECT_EQ(k.launch.grid_x, l.grid);
    EXPECT_EQ(k.launch.block_x, l.block);
    EXPECT_EQ(l.grid * l.block * width, 100096);
    ExpectPtxasAccepts(k);
  }
}

TEST(GpuKernelCompilerTest, ObserverDisableAndTarget) {
  std::vector<std::string> ran;
  GpuCompileOptions options;
  absl::StatusOr<std::string> target = GpuTargetForComputeCapability(8, 0);
  ASSERT_TRUE(target.ok()) << target.status().message();
  options.target = *target;
  EXPECT_EQ(options.target, "sm_80");
  options.observer = [&](const EmitterPassSnapshot& s) { ran.push_back(s.pass_name); };
  options.disabled_passes = {"cse"};
  GpuKernel k = CompileRoot(kTranspose, options);
  EXPECT_TRUE(Contains(k.ptx, R"(\.target sm_80)"));
  std::set<std::string> names(ran.begin(), ran.end());
  EXPECT_TRUE(names.contains("convert-gpu-to-nvvm"));
  EXPECT_TRUE(names.contains("inline"));
  EXPECT_FALSE(names.contains("cse"));
  std::set<std::string> known;
  for (const EmitterPassInfo& p : GpuEmitterPipelinePasses()) known.insert(p.name);
  for (const std::string& n : names) EXPECT_TRUE(known.contains(n)) << n;

  auto module = ParseHloModule(kTranspose, "t.hlo");
  ASSERT_TRUE(module.ok());
  const HloInstruction& root = *(*module)->entry_computation()->root_instruction();
  GpuCompileOptions required;
  required.disabled_passes = {"convert-gpu-to-nvvm"};
  absl::StatusOr<GpuKernel> r = GpuKernelCompiler(required).Compile(root);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("required"), std::string::npos);
  absl::StatusOr<std::string> mlir = GpuKernelCompiler().EmitMlir(root);
  ASSERT_TRUE(mlir.ok()) << mlir.status().message();
  EXPECT_NE(mlir->find("gpu.thread_id"), std::string::npos) << *mlir;
  EXPECT_NE(mlir->find("gpu.barrier"), std::string::npos) << *mlir;
  EXPECT_NE(mlir->find("memref.global \"private\" @transpose_tile : memref<1056xf32, 3>"), std::string::npos)
      << *mlir;
}

TEST(GpuKernelCompilerTest, TargetFollowsTheComputeCapability) {
  auto target = [](int major, int minor) {
    absl::StatusOr<std::string> t = GpuTargetForComputeCapability(major, minor);
    return t.ok() ? *t : "error: " + std::string(t.status().message());
  };
  EXPECT_EQ(target(9, 0), "sm_90");   // H100
  EXPECT_EQ(target(8, 0), "sm_80");   // A100
  EXPECT_EQ(target(8, 6), "sm_86");
  EXPECT_EQ(target(7, 0), "sm_70");
  // A capability LLVM has no target of: the newest older one (PTX runs on
  // newer devices).
  EXPECT_EQ(target(9, 7), "sm_90");
  EXPECT_EQ(target(8, 4), "sm_80");
  const std::string future = target(99, 0);
  EXPECT_TRUE(future.starts_with("sm_") && future != "sm_90") << future;
  EXPECT_THAT(target(1, 0), ::testing::HasSubstr("no target for compute capability 1.0"));
  EXPECT_THAT(target(0, 0), ::testing::HasSubstr("no PTX target for compute capability 0.0"));
  // The target reaches the PTX.
  GpuCompileOptions options;
  options.target = target(8, 6);
  EXPECT_TRUE(Contains(CompileRoot(kTranspose, options).ptx, R"(\.target sm_86)"));
}

TEST(GpuKernelCompilerTest, IdenticalKernelsCompileOnce) {
  // The same transpose under another name, in another module: one compile,
  // then the cache (per target); an observer always compiles.
  std::string renamed = kTranspose;
  renamed.replace(renamed.find("ROOT fusion"), 11, "ROOT other_fusion");
  GpuCompileOptions options;
  options.target = "sm_89";
  const int64_t hits = GpuKernelCompiler::CacheHits(), misses = GpuKernelCompiler::CacheMisses();
  GpuKernel first = CompileRoot(kTranspose, options);
  GpuKernel second = CompileRoot(renamed, options);
  EXPECT_EQ(GpuKernelCompiler::CacheMisses() - misses, 1);
  EXPECT_EQ(GpuKernelCompiler::CacheHits() - hits, 1);
  EXPECT_EQ(first.ptx, second.ptx);
  EXPECT_EQ(first.entry, second.entry);  // one PTX, one entry
  EXPECT_NE(first.name, second.name);    // the kernel is each instruction's
  options.target = "sm_87";
  EXPECT_TRUE(Contains(CompileRoot(renamed, options).ptx, R"(\.target sm_87)"));
  EXPECT_EQ(GpuKernelCompiler::CacheMisses() - misses, 2);
  options.observer = [](const EmitterPassSnapshot&) {};
  CompileRoot(renamed, options);
  EXPECT_EQ(GpuKernelCompiler::CacheMisses() - misses, 3);
  EXPECT_EQ(GpuKernelCompiler::CacheHits() - hits, 1);
}

TEST(GpuKernelCompilerTest, WhatTheCpuBackendRejectsIsRejectedByName) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  ROOT s = f32[8] sort(p), dimensions={0}, to_apply=lt
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
})",
                               "sort.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloInstruction& root = *(*module)->entry_computation()->root_instruction();
  EXPECT_FALSE(GpuKernelCompiler::CanCompile(root));
  absl::StatusOr<GpuKernel> r = GpuKernelCompiler().Compile(root);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sort"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace passlab
