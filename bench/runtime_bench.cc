// The CPU runtime's library calls: sgemm on OpenBLAS and on oneDNN side by
// side (n^3 squares, and the ResNet fc layer's backward-data shape
// [8,1000]x[1000,512]; GFLOP/s), and a
// ResNet-like 3x3 convolution (NHWC, 64 -> 64 channels, stride 1, pad 1)
// forward, backward-input and backward-filter on each oneDNN algorithm this
// CPU offers; buffer assignment of the ResNet-18 training step. Preparation
// (primitive creation) is outside the timed loop; inputs are built once.
#include <benchmark/benchmark.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/buffer_assignment.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

// A library call ready to run: its module, buffers filled with values.
struct Prepared {
  std::unique_ptr<HloModule> module;
  const HloInstruction* call = nullptr;
  std::vector<std::vector<float>> storage;
  std::vector<void*> buffers;
};

absl::StatusOr<Prepared> Prepare(const std::string& text) {
  Prepared p;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  p.module = std::move(*m);
  p.call = p.module->entry_computation()->root_instruction();
  std::vector<Shape> shapes;
  for (const HloInstruction* op : p.call->operands()) shapes.push_back(op->shape());
  for (const Shape& s : LeafShapes(p.call->shape())) shapes.push_back(s);
  uint32_t seed = 1;
  for (const Shape& s : shapes) {
    p.storage.emplace_back(s.byte_size() / 4 + 1);
    for (float& v : p.storage.back()) {
      seed = seed * 1664525u + 1013904223u;
      v = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
    }
    p.buffers.push_back(p.storage.back().data());
  }
  return p;
}

void RunCall(benchmark::State& state, const std::string& text, int64_t algorithm) {
  absl::StatusOr<Prepared> p = Prepare(text);
  if (!p.ok()) {
    state.SkipWithError(std::string(p.status().message()).c_str());
    return;
  }
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(*p->call, algorithm);
  if (!runner.ok()) {
    state.SkipWithError(std::string(runner.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status s = (*runner)->Run(p->buffers);
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>((*runner)->flops()) * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
  state.SetLabel((*runner)->algorithm().name);
}

std::string GemmText(int64_t n) {
  return StrCat("HloModule g\nENTRY e {\n  a = f32[", n, ",", n, "] parameter(0)\n  b = f32[", n, ",", n,
                "] parameter(1)\n  ROOT c = f32[", n, ",", n,
                "] custom-call(a, b), custom_call_target=\"__blas$gemm\", backend_config={\"gemm_backend_config\":"
                "{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]}}}\n}\n");
}

// [m,k] x [n,k]^T, as the fc layer's backward-data gemm reads its weight.
std::string GemmTransposedText(int64_t m, int64_t n, int64_t k) {
  return StrCat("HloModule g\nENTRY e {\n  a = f32[", m, ",", k, "] parameter(0)\n  b = f32[", n, ",", k,
                "] parameter(1)\n  ROOT c = f32[", m, ",", n,
                "] custom-call(a, b), custom_call_target=\"__blas$gemm\", backend_config={\"gemm_backend_config\":"
                "{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"1\"]}}}\n}\n");
}

void BM_SgemmOpenBlas(benchmark::State& state) { RunCall(state, GemmText(state.range(0)), kGemmBlas); }
BENCHMARK(BM_SgemmOpenBlas)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SgemmOneDnn(benchmark::State& state) { RunCall(state, GemmText(state.range(0)), kGemmDnn); }
BENCHMARK(BM_SgemmOneDnn)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_FcBackwardDataOpenBlas(benchmark::State& state) {
  RunCall(state, GemmTransposedText(8, 512, 1000), kGemmBlas);
}
BENCHMARK(BM_FcBackwardDataOpenBlas)->Unit(benchmark::kMicrosecond)->UseRealTime();
void BM_FcBackwardDataOneDnn(benchmark::State& state) { RunCall(state, GemmTransposedText(8, 512, 1000), kGemmDnn); }
BENCHMARK(BM_FcBackwardDataOneDnn)->Unit(benchmark::kMicrosecond)->UseRealTime();

// Batch 8, 16x16 (ResNet's 64-channel stage on 64x64 images), NHWC/HWIO.
std::string ConvText(std::string_view target) {
  std::string x = "f32[8,16,16,64]", w = "f32[3,3,64,64]";
  std::string a = x, b = w, r = x;
  if (target == kConvBackwardInputCallTarget) a = x;  // output_grad has the input's shape here
  if (target == kConvBackwardFilterCallTarget) {
    b = x;
    r = w;
  }
  return StrCat("HloModule c\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n  ROOT c = (", r,
                ", u8[0]) custom-call(a, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
                "custom_call_target=\"",
                target, "\"\n}\n");
}

void BM_Conv(benchmark::State& state, std::string_view target, ConvAlgorithm algorithm) {
  RunCall(state, ConvText(target), static_cast<int64_t>(algorithm));
}

void RegisterConvBenchmarks() {
  for (std::string_view target : {kConvForwardCallTarget, kConvBackwardInputCallTarget, kConvBackwardFilterCallTarget}) {
    absl::StatusOr<Prepared> p = Prepare(ConvText(target));
    if (!p.ok()) continue;
    absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*p->call);
    if (!algos.ok()) continue;
    for (const LibraryAlgorithm& a : *algos) {
      // The reference (the evaluator, f64) once, for the forward only: the
      // loop nest the library calls replace.
      bool reference = a.name == "reference";
      if (reference && target != kConvForwardCallTarget) continue;
      ConvAlgorithm algo = static_cast<ConvAlgorithm>(a.id);
      benchmark::internal::Benchmark* b =
          benchmark::RegisterBenchmark(
              StrCat("BM_Conv3x3_8x16x16x64/", std::string(target.substr(6)), "/", a.name).c_str(),
              [target, algo](benchmark::State& s) { BM_Conv(s, target, algo); })
              ->Unit(benchmark::kMillisecond)
              ->UseRealTime();
      if (reference) b->Iterations(2);
    }
  }
}

// Buffer assignment of the ResNet-18 training step (batch 2, 32x32; ~700
// instructions): its cost, and arena vs. no-reuse bytes as counters.
void BM_BufferAssignmentResNet18(benchmark::State& state) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/eval_fixtures/resnet18_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<BufferAssignment>> a = BufferAssignment::ForEntry(**module);
    if (!a.ok()) {
      state.SkipWithError(std::string(a.status().message()).c_str());
      return;
    }
    state.counters["arena_MiB"] = (*a)->arena_bytes() / 1048576.0;
    state.counters["peak_live_MiB"] = (*a)->peak_live_bytes() / 1048576.0;
    state.counters["no_reuse_MiB"] = (*a)->total_bytes() / 1048576.0;
    benchmark::DoNotOptimize(a);
  }
}
BENCHMARK(BM_BufferAssignmentResNet18)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace passlab

int main(int argc, char** argv) {
  passlab::RegisterConvBenchmarks();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
