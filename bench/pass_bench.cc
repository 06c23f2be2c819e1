// Pass run times on a large module, and the cost of full instrumentation
// (fingerprints for the changed audit, timers, size/opcode statistics and
// snapshots) over a bare run of the same pipeline. Target: under 25%.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_recorder.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "models/resnet.h"
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

// The pipeline, bare (no observers, no fingerprints) or instrumented as
// `passlab opt` runs it (fingerprints for the changed audit, timers,
// size/opcode statistics and, optionally, snapshots).
std::unique_ptr<HloPassPipeline> MakePipeline(const std::string& name, bool instrumented, PassRecorder* recorder) {
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> named = BuildNamedPipeline(name);
  if (!named.ok()) return nullptr;
  std::unique_ptr<HloPassPipeline> p = std::move(*named);
  if (instrumented) {
    p->AddObserver(recorder);
    return p;
  }
  // Rebuild with instrumentation off (options are set at construction).
  PipelineOptions o;
  o.instrument = false;
  auto bare = std::make_unique<HloPassPipeline>("bare", o);
  bare->AddPass<HloPassFixBase>(std::move(p), 1);
  return bare;
}

// One timed run; the module, pipeline and recorder are built before and
// destroyed after it. `stats`: the instrumented run's texts.
double TimedRun(const std::string& text, bool instrumented, bool snapshots,
                PipelineRunStats* stats = nullptr, const std::string& pipeline = "optimization") {
  std::unique_ptr<HloModule> m = Parse(text);
  PassRecorderOptions recorder_options;
  recorder_options.snapshots = snapshots;
  PassRecorder recorder(recorder_options);
  std::unique_ptr<HloPassPipeline> p = MakePipeline(pipeline, instrumented, &recorder);
  auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(p->Run(*m));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (stats != nullptr) *stats = p->last_run_stats();
  return seconds;
}

void BM_Pipeline(benchmark::State& state, bool instrumented, bool snapshots = true) {
  std::string text = LargeModule(static_cast<int>(state.range(0)));
  for (auto _ : state) state.SetIterationTime(TimedRun(text, instrumented, snapshots));
  state.counters["instructions"] = static_cast<double>(Parse(text)->instruction_count());
}

void BM_PipelineBare(benchmark::State& state) { BM_Pipeline(state, false); }
void BM_PipelineInstrumented(benchmark::State& state) { BM_Pipeline(state, true); }
void BM_PipelineInstrumentedNoSnapshots(benchmark::State& state) { BM_Pipeline(state, true, false); }

// The instrumentation overhead as a paired measurement: each iteration runs
// the bare and the instrumented pipeline back to back and keeps their ratio,
// so that drift in the machine's speed (a shared VM's steal time) cancels;
// the counter is the median ratio over all iterations, in percent over bare.
// The iteration time reported is the instrumented run's.
void MeasureOverhead(benchmark::State& state, const std::string& text, bool snapshots,
                     const std::string& pipeline = "optimization") {
  std::vector<double> ratios, text_ms;
  PipelineRunStats stats;
  for (auto _ : state) {
    const double bare = TimedRun(text, false, snapshots, nullptr, pipeline);
    const double instrumented = TimedRun(text, true, snapshots, &stats, pipeline);
    ratios.push_back(instrumented / bare);
    text_ms.push_back(stats.seconds * 1e3);
    state.SetIterationTime(instrumented);
  }
  std::sort(ratios.begin(), ratios.end());
  std::sort(text_ms.begin(), text_ms.end());
  if (!ratios.empty()) {
    state.counters["overhead_pct"] = (ratios[ratios.size() / 2] - 1) * 100;
    // Of which: taking the module texts (fingerprints and snapshots).
    state.counters["text_ms"] = text_ms[text_ms.size() / 2];
    state.counters["texts"] = static_cast<double>(stats.texts);
    state.counters["lines_printed"] = static_cast<double>(stats.lines_printed);
  }
}
void BM_InstrumentationOverhead(benchmark::State& state, bool snapshots) {
  MeasureOverhead(state, LargeModule(static_cast<int>(state.range(0))), snapshots);
}
void BM_InstrumentationOverheadFull(benchmark::State& state) { BM_InstrumentationOverhead(state, true); }

// The same on a real model: the ResNet-50 training step (batch 8, 64x64),
// whose passes do more work per change than the synthetic module's.
std::string ResNet50Text() {
  ResNetConfig c;
  c.depth = 50;
  c.batch = 8;
  c.image_size = 64;
  c.classes = 10;
  absl::StatusOr<std::unique_ptr<HloModule>> model = BuildResNet(c);
  return model.ok() ? PrintModule(**model) : std::string();
}
void BM_InstrumentationOverheadResNet50(benchmark::State& state) {
  const std::string text = ResNet50Text();
  MeasureOverhead(state, text, true);
  state.counters["instructions"] = static_cast<double>(Parse(text)->instruction_count());
}

// The whole XLA:GPU pipeline (every sub-pipeline: conv rewriting, layouts,
// fusion, scheduling) on the same step: what `passlab opt --pipeline gpu`
// runs. The algorithm pickers' choices come from the process's autotuning
// cache, filled by an untimed run first, so that the timed runs compare the
// passes and not the timing of library algorithms.
void BM_InstrumentationOverheadResNet50Gpu(benchmark::State& state) {
  const std::string text = ResNet50Text();
  TimedRun(text, false, false, nullptr, "gpu");
  MeasureOverhead(state, text, true, "gpu");
}
void BM_InstrumentationOverheadNoSnapshots(benchmark::State& state) {
  BM_InstrumentationOverhead(state, false);
}

BENCHMARK(BM_PipelineBare)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PipelineInstrumented)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PipelineInstrumentedNoSnapshots)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InstrumentationOverheadFull)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InstrumentationOverheadNoSnapshots)->Arg(300)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InstrumentationOverheadResNet50)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InstrumentationOverheadResNet50Gpu)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(15);

// The per-run costs instrumentation is made of, on the same module.
void BM_ModuleFingerprint(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(ModuleFingerprint(*m));
}
void BM_PrintModule(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) benchmark::DoNotOptimize(PrintModule(*m));
}

// The same after a pass touched every instruction: every line is printed
// and hashed again, and the post order recomputed.
void InvalidateAll(const HloModule& m) {
  for (HloComputation* c : m.computations()) c->ForEachInstruction([](HloInstruction* i) { i->InvalidateCaches(); });
}
void BM_ModuleFingerprintCold(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    InvalidateAll(*m);
    benchmark::DoNotOptimize(ModuleFingerprint(*m));
  }
}
void BM_PrintModuleCold(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    InvalidateAll(*m);
    benchmark::DoNotOptimize(PrintModule(*m));
  }
}
// A snapshot after a fingerprint: lines cached, post order recomputed.
void BM_PrintModuleAfterFingerprint(benchmark::State& state) {
  auto m = Parse(LargeModule(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    state.PauseTiming();
    InvalidateAll(*m);
    ModuleFingerprint(*m);
    state.ResumeTiming();
    benchmark::DoNotOptimize(PrintModule(*m));
  }
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

BENCHMARK(BM_ModuleFingerprint)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrintModule)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ModuleFingerprintCold)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrintModuleCold)->Arg(300)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PrintModuleAfterFingerprint)->Arg(300)->Unit(benchmark::kMillisecond);

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
