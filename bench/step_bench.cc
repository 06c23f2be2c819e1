// Whole training steps on the CPU backend: the ResNet-18, ResNet-50 and
// MobileNetV2 training steps at batch 8, 64x64, f32 (issue 6's and issue 25's
// comparison points; the PyTorch side is bench/pytorch/resnet_step.py and
// bench/pytorch/mobilenet_step.py with the same sizes), after
// the full `gpu` pipeline, kernels on every core. Counters: compile time
// (pipeline + kernels, once), kernel count and peak memory. A separate
// benchmark times the ResNet-50 pipeline + compile alone.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/random_inputs.h"
#include "core/backends/cpu/executable.h"
#include "core/runtime/library_threads.h"
#include "models/mobilenet_v2.h"
#include "models/resnet.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

struct Compiled {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<CpuKernelCompiler> compiler;
  std::unique_ptr<Executable> executable;
  double optimize_s = 0, compile_s = 0;
  int64_t library_calls = 0;
};

absl::StatusOr<Compiled> BuildAndCompile(absl::StatusOr<std::unique_ptr<HloModule>> module) {
  using Clock = std::chrono::steady_clock;
  Compiled c;
  if (!module.ok()) return module.status();
  c.module = std::move(*module);
  SetLibraryCallThreads(0);
  auto t0 = Clock::now();
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline("gpu");
  if (!pipeline.ok()) return pipeline.status();
  if (absl::Status s = (*pipeline)->Run(*c.module).status(); !s.ok()) return s;
  auto t1 = Clock::now();
  c.compiler = std::make_unique<CpuKernelCompiler>(CpuCompileOptions{});
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      Executable::Create(*c.module, [&](const HloInstruction& i) { return c.compiler->Compile(i); });
  if (!exe.ok()) return exe.status();
  c.executable = std::move(*exe);
  c.optimize_s = std::chrono::duration<double>(t1 - t0).count();
  for (const HloComputation* computation : c.module->computations()) {
    for (const HloInstruction* inst : computation->instructions()) {
      c.library_calls += inst->opcode() == HloOpcode::kCustomCall;
    }
  }
  c.compile_s = std::chrono::duration<double>(Clock::now() - t1).count();
  return c;
}

absl::StatusOr<std::unique_ptr<HloModule>> ResNetStep(int depth) {
  ResNetConfig config;
  config.depth = depth;
  config.batch = 8;
  config.image_size = 64;
  return BuildResNet(config);
}

absl::StatusOr<std::unique_ptr<HloModule>> MobileNetV2Step() {
  MobileNetV2Config config;
  config.batch = 8;
  config.image_size = 64;
  return BuildMobileNetV2(config);
}

void TimeTrainingStep(benchmark::State& state, absl::StatusOr<std::unique_ptr<HloModule>> module) {
  absl::StatusOr<Compiled> c = BuildAndCompile(std::move(module));
  if (!c.ok()) {
    state.SkipWithError(std::string(c.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = MakeRandomArguments(*c->module->entry_computation(), 1);
  std::vector<KernelRecord> records;
  // The first step includes whatever the JIT defers to first use.
  auto t0 = std::chrono::steady_clock::now();
  if (absl::Status s = c->executable->Execute(args); !s.ok()) {
    state.SkipWithError(std::string(s.message()).c_str());
    return;
  }
  state.counters["first_step_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto _ : state) {
    records.clear();
    if (absl::Status s = c->executable->Execute(args, &records); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.counters["optimize_s"] = c->optimize_s;
  state.counters["compile_s"] = c->compile_s;
  state.counters["thunks"] = static_cast<double>(records.size());
  state.counters["library_calls"] = static_cast<double>(c->library_calls);
  state.counters["peak_MiB"] = static_cast<double>(c->executable->memory().peak_bytes()) / (1 << 20);
}

void BM_ResNetTrainingStep(benchmark::State& state) {
  TimeTrainingStep(state, ResNetStep(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_ResNetTrainingStep)->ArgName("depth")->Arg(18)->Arg(50)->Unit(benchmark::kMillisecond)
    ->UseRealTime()->MinTime(5.0);

// MobileNetV2, width multiplier 1: 17 depthwise convolutions forward and
// backward (their backward-filter convolutions are batch-grouped).
void BM_MobileNetV2TrainingStep(benchmark::State& state) { TimeTrainingStep(state, MobileNetV2Step()); }
BENCHMARK(BM_MobileNetV2TrainingStep)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);

// Pipeline + kernel compilation of the ResNet-50 training step (a fresh
// compiler each time: no kernel cache carried over).
void BM_CompileResNet50TrainingStep(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<Compiled> c = BuildAndCompile(ResNetStep(50));
    if (!c.ok()) {
      state.SkipWithError(std::string(c.status().message()).c_str());
      return;
    }
    state.counters["optimize_s"] = c->optimize_s;
    state.counters["compile_s"] = c->compile_s;
  }
}
BENCHMARK(BM_CompileResNet50TrainingStep)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
}  // namespace passlab
BENCHMARK_MAIN();
