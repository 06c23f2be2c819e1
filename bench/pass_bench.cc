// Pass run times on a large module, and the cost of full instrumentation
// (fingerprints for the changed audit, timers, size/opcode statistics and
// snapshots) over a bare run of the same pipeline. Target: under 25%.
#include <benchmark/benchmark.h>

#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_recorder.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

namespace passlab {
namespace {

// A module of `blocks` blocks, each giving the passes work: duplicated
// subexpressions (cse), dead code (dce), x*1 and x+0 (algsimp), constant
// arithmetic (constant_folding), tuple round trips (tuple-simplifier),
// transposed dot operands (transpose-folding), logistic (expander).
std::string LargeModule(int blocks) {
  std::string t = "HloModule large\n\nENTRY %main {\n  %p = f32[32,32]{1,0} parameter(0)\n"
                  "  %one = f32[] constant(1)\n  %ones = f32[32,32]{1,0} broadcast(f32[] %one), dimensions={}\n"
                  "  %zero = f32[] constant(0)\n  %zeros = f32[32,32]{1,0} broadcast(f32[] %zero), dimensions={}\n";
  std::string prev = "p";
  for (int i = 0; i < blocks; ++i) {
    StrAppend(&t, "  %a", i, " = f32[32,32]{1,0} multiply(f32[32,32]{1,0} %", prev, ", f32[32,32]{1,0} %ones)\n");
    StrAppend(&t, "  %b", i, " = f32[32,32]{1,0} add(f32[32,32]{1,0} %a", i, ", f32[32,32]{1,0} %zeros)\n");
    StrAppend(&t, "  %e", i, " = f32[32,32]{1,0} exponential(f32[32,32]{1,0} %b", i, ")\n");
    StrAppend(&t, "  %e", i, "x = f32[32,32]{1,0} exponential(f32[32,32]{1,0} %b", i, ")\n");
    StrAppend(&t, "  %dead", i, " = f32[32,32]{1,0} tanh(f32[32,32]{1,0} %e", i, ")\n");
    StrAppend(&t, "  %c", i, " = f32[] constant(", i % 7, ")\n");
    StrAppend(&t, "  %cc", i, " = f32[] add(f32[] %c", i, ", f32[] %one)\n");
    StrAppend(&t, "  %cb", i, " = f32[32,32]{1,0} broadcast(f32[] %cc", i, "), dimensions={}\n");
    StrAppend(&t, "  %tp", i, " = (f32[32,32]{1,0}, f32[32,32]{1,0}) tuple(f32[32,32]{1,0} %e", i, ", f32[32,32]{1,0} %cb", i, ")\n");
    StrAppend(&t, "  %g", i, " = f32[32,32]{1,0} get-tuple-element((f32[32,32]{1,0}, f32[32,32]{1,0}) %tp", i, "), index=1\n");
    StrAppend(&t, "  %t", i, " = f32[32,32]{1,0} transpose(f32[32,32]{1,0} %e", i, "x), dimensions={1,0}\n");
    StrAppend(&t, "  %d", i, " = f32[32,32]{1,0} dot(f32[32,32]{1,0} %t", i, ", f32[32,32]{1,0} %g", i,
              "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
    StrAppend(&t, "  %l", i, " = f32[32,32]{1,0} logistic(f32[32,32]{1,0} %d", i, ")\n");
    prev = StrCat("l", i);
  }
  StrAppend(&t, "  ROOT %out = f32[32,32]{1,0} copy(f32[32,32]{1,0} %", prev, ")\n}\n");
  return t;
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  return m.ok() ? std::move(*m) : nullptr;
}

void BM_Pipeline(benchmark::State& state, bool instrumented, bool snapshots = true) {
  std::string text = LargeModule(static_cast<int>(state.range(0)));
  // Built before and destroyed after the timed region: only the run counts.
  std::unique_ptr<HloModule> m;
  std::unique_ptr<HloPassPipeline> p;
  std::unique_ptr<PassRecorder> recorder;
  for (auto _ : state) {
    state.PauseTiming();
    m = Parse(text);
    p = BuildOptimizationPipeline();
    PassRecorderOptions recorder_options;
    recorder_options.snapshots = snapshots;
    recorder = std::make_unique<PassRecorder>(recorder_options);
    if (instrumented) {
      p->AddObserver(recorder.get());
    } else {
      // Rebuild with instrumentation off (options are set at construction).
      PipelineOptions o;
      o.instrument = false;
      auto bare = std::make_unique<HloPassPipeline>("bare", o);
      bare->AddPass<HloPassFixBase>(std::move(p), 1);
      p = std::move(bare);
    }
    state.ResumeTiming();
    benchmark::DoNotOptimize(p->Run(*m));
  }
  state.counters["instructions"] = static_cast<double>(Parse(text)->instruction_count());
}

void BM_PipelineBare(benchmark::State& state) { BM_Pipeline(state, false); }
void BM_PipelineInstrumented(benchmark::State& state) { BM_Pipeline(state, true); }
void BM_PipelineInstrumentedNoSnapshots(benchmark::State& state) { BM_Pipeline(state, true, false); }

// The per-run costs instrumentation is made of, on the same module.
void BM_ModuleFingerprint(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(ModuleFingerprint(*m));
}
void BM_PrintModule(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(PrintModule(*m));
}

void BM_SinglePass(benchmark::State& state, std::string name) {
  std::string text = LargeModule(static_cast<int>(state.range(0)));
  const PassRegistryEntry* entry = FindRegisteredPass(name);
  for (auto _ : state) {
    state.PauseTiming();
    auto m = Parse(text);
    std::unique_ptr<HloPassInterface> pass = entry->factory();
    state.ResumeTiming();
    benchmark::DoNotOptimize(pass->Run(*m));
  }
}

BENCHMARK(BM_PipelineBare)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PipelineInstrumented)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PipelineInstrumentedNoSnapshots)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ModuleFingerprint)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrintModule)->Arg(300)->Unit(benchmark::kMillisecond);

int RegisterSinglePasses() {
  for (const PassRegistryEntry& e : PassRegistry()) {
    benchmark::RegisterBenchmark(StrCat("BM_Pass/", e.name).c_str(),
                                 [name = std::string(e.name)](benchmark::State& s) { BM_SinglePass(s, name); })
        ->Arg(300)
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}
const int kRegistered = RegisterSinglePasses();

}  // namespace
}  // namespace passlab

BENCHMARK_MAIN();
