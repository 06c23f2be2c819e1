// The CPU code generator: a fused elementwise kernel over 64 MiB against a
// plain memcpy of 64 MiB in the same run (the kernel should reach at least
// half the copy's bandwidth), a max-pool gradient's select-and-scatter, and
// compile time per kernel. Inputs are built
// outside the timed regions; compile and run are timed separately.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

constexpr int64_t kRows = 4096, kCols = 4096;  // f32: 64 MiB
constexpr int64_t kBytes = kRows * kCols * 4;

const char* kScaleBiasRelu = R"(HloModule m
fused {
  a = f32[4096,4096] parameter(0)
  two = f32[] constant(2)
  one = f32[] constant(1)
  zero = f32[] constant(0)
  b2 = f32[4096,4096] broadcast(two), dimensions={}
  b1 = f32[4096,4096] broadcast(one), dimensions={}
  b0 = f32[4096,4096] broadcast(zero), dimensions={}
  m = f32[4096,4096] multiply(a, b2)
  s = f32[4096,4096] add(m, b1)
  ROOT r = f32[4096,4096] maximum(s, b0)
}
ENTRY e {
  p = f32[4096,4096] parameter(0)
  ROOT f = f32[4096,4096] fusion(p), kind=kLoop, calls=fused
})";

const char* kGelu = R"(HloModule m
gelu {
  param = f32[4096,4096] parameter(0)
  c0 = f32[] constant(0.5)
  b0 = f32[4096,4096] broadcast(c0), dimensions={}
  c1 = f32[] constant(1)
  b1 = f32[4096,4096] broadcast(c1), dimensions={}
  c2 = f32[] constant(0.79785)
  b2 = f32[4096,4096] broadcast(c2), dimensions={}
  c3 = f32[] constant(0.044708)
  b3 = f32[4096,4096] broadcast(c3), dimensions={}
  sq = f32[4096,4096] multiply(param, param)
  cube = f32[4096,4096] multiply(sq, param)
  m3 = f32[4096,4096] multiply(cube, b3)
  a1 = f32[4096,4096] add(param, m3)
  m2 = f32[4096,4096] multiply(a1, b2)
  t = f32[4096,4096] tanh(m2)
  a0 = f32[4096,4096] add(t, b1)
  m1 = f32[4096,4096] multiply(a0, b0)
  ROOT r = f32[4096,4096] multiply(param, m1)
}
ENTRY main {
  p = f32[4096,4096] parameter(0)
  ROOT fusion = f32[4096,4096] fusion(p), kind=kLoop, calls=gelu
})";

const char* kTranspose = R"(HloModule m
fused {
  a = f32[4096,4096] parameter(0)
  ROOT t = f32[4096,4096] transpose(a), dimensions={1,0}
}
ENTRY e {
  p = f32[4096,4096] parameter(0)
  ROOT f = f32[4096,4096] fusion(p), kind=kLoop, calls=fused
})";

const char* kRowReduce = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  a = f32[4096,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4096] reduce(a, z), dimensions={1}, to_apply=add
}
ENTRY e {
  p = f32[4096,4096] parameter(0)
  ROOT f = f32[4096] fusion(p), kind=kInput, calls=fused
})";

void BM_Memcpy64MiB(benchmark::State& state) {
  std::vector<float> src(kRows * kCols, 1.5f), dst(kRows * kCols, 0.f);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kBytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kBytes);
}

void RunKernel(benchmark::State& state, const char* text, int64_t out_bytes, bool parallel) {
  auto module = ParseHloModule(text, "bench");
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  CpuCompileOptions options;
  if (!parallel) options.parallel_threshold_elements = int64_t{1} << 62;
  auto kernel = CpuKernelCompiler(options).Compile(*(*module)->entry_computation()->root_instruction());
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  std::vector<float> in(kRows * kCols, 0.25f), out(out_bytes / 4, 0.f);
  std::vector<void*> buffers = {in.data(), out.data()};
  for (auto _ : state) {
    (*kernel)->Run(buffers);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * (kBytes + out_bytes));
}

// A column reduction (the batch-norm statistics' shape: the minor
// dimension kept): 64 MiB of f32[65536,256] summed over the rows.
const char* kColumnReduce = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
fused {
  a = f32[65536,256] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(a, z), dimensions={0}, to_apply=add
}
ENTRY e {
  p = f32[65536,256] parameter(0)
  ROOT f = f32[256] fusion(p), kind=kInput, calls=fused
})";

void BM_FusedScaleBiasRelu64MiB(benchmark::State& state) { RunKernel(state, kScaleBiasRelu, kBytes, true); }
void BM_FusedScaleBiasRelu64MiBOneThread(benchmark::State& state) {
  RunKernel(state, kScaleBiasRelu, kBytes, false);
}
void BM_FusedGelu64MiB(benchmark::State& state) { RunKernel(state, kGelu, kBytes, true); }
void BM_Transpose64MiB(benchmark::State& state) { RunKernel(state, kTranspose, kBytes, true); }
void BM_RowReduce64MiB(benchmark::State& state) { RunKernel(state, kRowReduce, kRows * 4, true); }
void BM_ColumnReduce64MiB(benchmark::State& state) { RunKernel(state, kColumnReduce, 256 * 4, true); }

// The max-pool gradient of a ResNet stem (3x3 windows, stride 2): the
// native select-and-scatter kernel, which walks the source elements in order
// on one thread (overlapping windows may select the same position).
const char* kMaxPoolGradient = R"(HloModule m
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
ENTRY e {
  x = f32[8,32,32,64] parameter(0)
  g = f32[8,16,16,64] parameter(1)
  z = f32[] parameter(2)
  ROOT s = f32[8,32,32,64] select-and-scatter(x, g, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
})";

void BM_SelectAndScatterMaxPoolGradient(benchmark::State& state) {
  auto module = ParseHloModule(kMaxPoolGradient, "bench");
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  auto kernel = CpuKernelCompiler().Compile(*(*module)->entry_computation()->root_instruction());
  if (!kernel.ok()) {
    state.SkipWithError(std::string(kernel.status().message()).c_str());
    return;
  }
  constexpr int64_t kOperand = 8 * 32 * 32 * 64, kSource = 8 * 16 * 16 * 64;
  std::vector<float> x(kOperand), g(kSource, 1.f), out(kOperand);
  for (int64_t i = 0; i < kOperand; ++i) x[i] = static_cast<float>((i * 7919) % 1021);
  float zero = 0;
  std::vector<void*> buffers = {x.data(), g.data(), &zero, out.data()};
  for (auto _ : state) {
    (*kernel)->Run(buffers);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * (2 * kOperand + kSource) * 4);
}

void Compile(benchmark::State& state, const char* text) {
  auto module = ParseHloModule(text, "bench");
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  CpuCompileOptions options;
  options.use_cache = false;
  for (auto _ : state) {
    auto kernel = CpuKernelCompiler(options).Compile(*(*module)->entry_computation()->root_instruction());
    if (!kernel.ok()) state.SkipWithError(std::string(kernel.status().message()).c_str());
    benchmark::DoNotOptimize(kernel);
  }
}
void BM_CompileGeluFusion(benchmark::State& state) { Compile(state, kGelu); }
void BM_CompileRowReduceFusion(benchmark::State& state) { Compile(state, kRowReduce); }

BENCHMARK(BM_Memcpy64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FusedScaleBiasRelu64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FusedScaleBiasRelu64MiBOneThread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FusedGelu64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Transpose64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RowReduce64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ColumnReduce64MiB)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SelectAndScatterMaxPoolGradient)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CompileGeluFusion)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileRowReduceFusion)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace passlab

BENCHMARK_MAIN();
