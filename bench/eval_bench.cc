// The reference evaluator on a real training graph: one ResNet-18 SGD step
// (batch 2, 32x32; test/eval_fixtures/resnet18_train_step.hlo). Issue 3's
// target: seconds, not minutes.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

void BM_EvaluateResNet18TrainingStep(benchmark::State& state) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/eval_fixtures/resnet18_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), 7);
  state.counters["instructions"] = static_cast<double>((*module)->instruction_count());
  for (auto _ : state) {
    HloEvaluator evaluator;
    auto result = evaluator.Evaluate(**module, args);
    if (!result.ok()) state.SkipWithError(std::string(result.status().message()).c_str());
    benchmark::DoNotOptimize(result);
  }
}

BENCHMARK(BM_EvaluateResNet18TrainingStep)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace passlab

BENCHMARK_MAIN();
