// Model construction cost: building (builder + autodiff) and printing the
// ResNet-50 training step at batch 256, 224x224 (target: under a second for
// both), and the Laplace PINN at the seed's 101 x 101 grid. Counters report
// the instruction count.
#include <benchmark/benchmark.h>

#include "core/text/hlo_printer.h"
#include "models/laplace_pinn.h"
#include "models/resnet.h"

namespace passlab {
namespace {

ResNetConfig ResNet50Full() {
  ResNetConfig c;
  c.depth = 50;
  c.batch = 256;
  c.image_size = 224;
  c.classes = 1000;
  return c;
}

void BM_BuildResNet50(benchmark::State& state) {
  int64_t instructions = 0;
  for (auto _ : state) {
    auto m = BuildResNet(ResNet50Full());
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    instructions = (*m)->instruction_count();
  }
  state.counters["instructions"] = static_cast<double>(instructions);
}
BENCHMARK(BM_BuildResNet50)->Unit(benchmark::kMillisecond);

void BM_PrintResNet50(benchmark::State& state) {
  auto m = BuildResNet(ResNet50Full());
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = PrintModule(**m);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_PrintResNet50)->Unit(benchmark::kMillisecond);

void BM_BuildAndPrintResNet50(benchmark::State& state) {
  for (auto _ : state) {
    auto m = BuildResNet(ResNet50Full());
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    std::string text = PrintModule(**m);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_BuildAndPrintResNet50)->Unit(benchmark::kMillisecond);

void BM_BuildLaplacePinn(benchmark::State& state) {
  int64_t instructions = 0;
  for (auto _ : state) {
    auto m = BuildLaplacePinn({});
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    instructions = (*m)->instruction_count();
  }
  state.counters["instructions"] = static_cast<double>(instructions);
}
BENCHMARK(BM_BuildLaplacePinn)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace passlab

BENCHMARK_MAIN();
