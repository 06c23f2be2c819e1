// Parse and print throughput of the HLO text format on generated modules of
// 1k to 100k instructions (target: parse + print of 100k under 1 s here).
#include <benchmark/benchmark.h>

#include <string>

#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

// A realistic mix: parameters, constants, elementwise chains, broadcasts,
// reductions and dots with metadata, like a framework-produced module.
std::string GenerateModule(int instructions) {
  std::string text = "HloModule generated\n\n%add (a: f32[], b: f32[]) -> f32[] {\n"
                     "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
                     "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\nENTRY %main {\n"
                     "  %p0 = f32[64,128]{1,0} parameter(0)\n  %w = f32[128,128]{1,0} parameter(1)\n"
                     "  %zero = f32[] constant(0)\n";
  std::string prev = "p0";
  const char* unary[] = {"exponential", "tanh", "negate", "abs", "log", "sqrt"};
  for (int i = 0; i < instructions; ++i) {
    std::string name = StrCat("v", i);
    std::string meta = StrCat(", metadata={op_type=\"Op", i % 17, "\" op_name=\"layer", i / 50,
                              "/op", i, "\" source_file=\"model.py\" source_line=", i % 1000, "}");
    switch (i % 8) {
      case 0: case 1: case 2:
        StrAppend(&text, "  %", name, " = f32[64,128]{1,0} ", unary[i % 6], "(f32[64,128]{1,0} %",
                  prev, ")", meta, "\n");
        break;
      case 3: case 4:
        StrAppend(&text, "  %", name, " = f32[64,128]{1,0} multiply(f32[64,128]{1,0} %", prev,
                  ", f32[64,128]{1,0} %p0)", meta, "\n");
        break;
      case 5:
        StrAppend(&text, "  %", name, " = f32[64,128]{1,0} dot(f32[64,128]{1,0} %", prev,
                  ", f32[128,128]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}", meta,
                  "\n");
        break;
      case 6:
        StrAppend(&text, "  %r", i, " = f32[64]{0} reduce(f32[64,128]{1,0} %", prev,
                  ", f32[] %zero), dimensions={1}, to_apply=%add", meta, "\n");
        StrAppend(&text, "  %", name, " = f32[64,128]{1,0} broadcast(f32[64]{0} %r", i,
                  "), dimensions={0}", meta, "\n");
        ++i;
        break;
      case 7:
        StrAppend(&text, "  %", name, " = f32[64,128]{1,0} add(f32[64,128]{1,0} %", prev,
                  ", f32[64,128]{1,0} %p0)", meta, "\n");
        break;
    }
    prev = name;
  }
  StrAppend(&text, "  ROOT %out = f32[64,128]{1,0} copy(f32[64,128]{1,0} %", prev, ")\n}\n");
  return text;
}

void BM_Parse(benchmark::State& state) {
  std::string text = GenerateModule(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto m = ParseHloModule(text);
    if (!m.ok()) state.SkipWithError(std::string(m.status().message()).c_str());
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * text.size());
  state.counters["instructions"] = static_cast<double>(state.range(0));
}

void BM_Print(benchmark::State& state) {
  std::string text = GenerateModule(static_cast<int>(state.range(0)));
  auto m = ParseHloModule(text);
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    std::string out = PrintModule(**m);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}

void BM_ParseAndPrint(benchmark::State& state) {
  std::string text = GenerateModule(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto m = ParseHloModule(text);
    std::string out = PrintModule(**m);
    benchmark::DoNotOptimize(out);
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}

BENCHMARK(BM_Parse)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Print)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseAndPrint)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace passlab

BENCHMARK_MAIN();
