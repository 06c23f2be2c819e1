// Compile-time cost of the gather/scatter/rng/reduction passes and what their
// output costs the reference evaluator, against the op they replace:
//   BM_PassTime/<pass>/<size>: one run of the pass (parse outside the timer);
//     counters: instructions before and after.
//   BM_Evaluate/<original|expanded>/<case>/<size>: evaluating the module
//     before and after the pass (inputs built outside the timer).
#include <benchmark/benchmark.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "passes/expanders/gather_expander.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/scatter_expander.h"
#include "passes/gpu/tree_reduction_rewriter.h"
#include "passes/simplifiers/dot_merger.h"

namespace passlab {
namespace {

std::string ScatterModule(int64_t n) {
  return StrCat(R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  op = f32[1024,16] parameter(0)
  idx = s32[)", n, R"(] parameter(1)
  upd = f32[)", n, R"(,16] parameter(2)
  ROOT s = f32[1024,16] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})");
}

std::string GatherModule(int64_t n) {
  return StrCat(R"(
ENTRY e {
  table = f32[1024,16] parameter(0)
  idx = s32[)", n, R"(] parameter(1)
  ROOT g = f32[)", n, R"(,16] gather(table, idx), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
})");
}

std::string RngModule(int64_t n) {
  return StrCat("ENTRY e {\n  s = u64[2] parameter(0)\n  ROOT r = (u64[2], u32[", n,
                "]) rng-bit-generator(s), algorithm=rng_philox\n}");
}

std::string ReduceModule(int64_t n) {
  return StrCat(R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4,)", n, R"(] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
})");
}

std::string DotsModule(int64_t n) {
  std::string t = "ENTRY e {\n  x = f32[64,64] parameter(0)\n";
  std::string tuple;
  for (int64_t i = 0; i < n; ++i) {
    StrAppend(&t, "  w", i, " = f32[64,32] parameter(", i + 1, ")\n");
    StrAppend(&t, "  d", i, " = f32[64,32] dot(x, w", i, "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n");
    StrAppend(&tuple, i == 0 ? "" : ", ", "d", i);
  }
  std::string shapes;
  for (int64_t i = 0; i < n; ++i) StrAppend(&shapes, i == 0 ? "" : ", ", "f32[64,32]");
  StrAppend(&t, "  ROOT t = (", shapes, ") tuple(", tuple, ")\n}\n");
  return t;
}

struct Case {
  std::string (*module)(int64_t);
  std::unique_ptr<HloPassInterface> (*pass)();
};

Case GetCase(const std::string& name) {
  if (name == "scatter_expander") {
    return {ScatterModule, [] { return std::unique_ptr<HloPassInterface>(std::make_unique<ScatterExpander>()); }};
  }
  if (name == "gather_expander") {
    return {GatherModule, [] { return std::unique_ptr<HloPassInterface>(std::make_unique<GatherExpander>()); }};
  }
  if (name == "rng-bit-generator-expander") {
    return {RngModule, [] { return std::unique_ptr<HloPassInterface>(std::make_unique<RngBitGeneratorExpander>()); }};
  }
  if (name == "dot-merger") {
    return {DotsModule, [] { return std::unique_ptr<HloPassInterface>(std::make_unique<DotMerger>()); }};
  }
  return {ReduceModule, [] { return std::unique_ptr<HloPassInterface>(std::make_unique<TreeReductionRewriter>()); }};
}

void BM_PassTime(benchmark::State& state, std::string name) {
  Case c = GetCase(name);
  std::string text = c.module(state.range(0));
  int64_t before = 0, after = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto m = ParseHloModule(text, "bench.hlo");
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    std::unique_ptr<HloPassInterface> pass = c.pass();
    before = (*m)->instruction_count();
    state.ResumeTiming();
    benchmark::DoNotOptimize(pass->Run(**m));
    state.PauseTiming();
    after = (*m)->instruction_count();
    state.ResumeTiming();
  }
  state.counters["instructions_before"] = static_cast<double>(before);
  state.counters["instructions_after"] = static_cast<double>(after);
}

void BM_Evaluate(benchmark::State& state, std::string name, bool expanded) {
  Case c = GetCase(name);
  auto m = ParseHloModule(c.module(state.range(0)), "bench.hlo");
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  if (expanded && !c.pass()->Run(**m).ok()) {
    state.SkipWithError("pass failed");
    return;
  }
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 1);
  for (auto _ : state) benchmark::DoNotOptimize(HloEvaluator().Evaluate(**m, args));
}

void Register() {
  for (std::string name : {"scatter_expander", "gather_expander", "rng-bit-generator-expander",
                           "tree-reduction-rewriter", "dot-merger"}) {
    std::vector<int64_t> sizes = name == "tree-reduction-rewriter" ? std::vector<int64_t>{20000, 1 << 20}
                                 : name == "dot-merger"           ? std::vector<int64_t>{2, 8, 32}
                                                                  : std::vector<int64_t>{16, 256, 4096};
    auto* p = benchmark::RegisterBenchmark(StrCat("BM_PassTime/", name).c_str(), BM_PassTime, name);
    for (int64_t s : sizes) p->Arg(s);
    p->Unit(benchmark::kMicrosecond);
    for (bool expanded : {false, true}) {
      auto* e = benchmark::RegisterBenchmark(
          StrCat("BM_Evaluate/", expanded ? "expanded/" : "original/", name).c_str(), BM_Evaluate, name, expanded);
      for (int64_t s : sizes) e->Arg(s);
      e->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace passlab

int main(int argc, char** argv) {
  passlab::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
