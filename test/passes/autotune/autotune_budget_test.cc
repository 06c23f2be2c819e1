// The autotuning budget on the CPU (AutotuneBudget in
// passes/autotune/library_call_autotuner.h): a call over a per-call limit,
// or any call once the module's limits are spent, is not timed and keeps
// the runtime's default algorithm (backend_config unset), as XLA's
// autotuners leave the library default when autotuning is off
// (--xla_gpu_autotune_level=0: xla/service/gpu/autotuning/
// gemm_algorithm_picker.cc returns early and the gemm keeps
// selected_algorithm unset); small calls are still tuned; the choice is
// counted.
#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "passes/autotune/config_assigner.h"
#include "passes/autotune/gemm_algorithm_picker.h"
#include "passes/registry.h"

namespace passlab {
namespace {

// f32[4,6] x f32[6,5]: 296 bytes of buffers, 240 FLOPs.
constexpr char kSmallGemm[] = R"(
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,5] parameter(1)
  ROOT g = f32[4,5] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})";

// Three 1 GiB buffers (operands and result) and 8.8 TFLOPs: tuning it would
// allocate 3 GiB and run for minutes on two cores. Nothing here allocates
// them: the module is only parsed and the pass decides from the shapes.
constexpr char kHugeGemm[] = R"(
ENTRY e {
  a = f32[16384,16384] parameter(0)
  b = f32[16384,16384] parameter(1)
  ROOT g = f32[16384,16384] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})";

// Two independent small gemms (296 bytes each).
constexpr char kTwoGemms[] = R"(
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,5] parameter(1)
  g = f32[4,5] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  c = f32[6,4] parameter(2)
  h = f32[6,5] custom-call(c, g), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  ROOT t = (f32[4,5], f32[6,5]) tuple(g, h)
})";

class CounterObserver : public PassObserver {
 public:
  absl::Status AfterPass(const PassRunInfo&, const HloModule&, bool, uint64_t, uint64_t,
                         const PassCounters& counters) override {
    for (const auto& [name, n] : counters) totals[name] += n;
    return absl::OkStatus();
  }
  PassCounters totals;
};

struct BudgetRun {
  bool changed = false;
  std::unique_ptr<HloModule> module;
  PassCounters counters;
};

BudgetRun RunBudgeted(std::unique_ptr<HloPassInterface> pass, const std::string& hlo) {
  BudgetRun r;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  HloPassPipeline pipeline("autotune");
  pipeline.AddPass<HloPassFixBase>(std::move(pass), 1);  // one run, as opt --passes does
  CounterObserver counters;
  pipeline.AddObserver(&counters);
  absl::StatusOr<bool> changed = pipeline.Run(*r.module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  r.changed = changed.ok() && *changed;
  r.counters = counters.totals;
  return r;
}

// The selected_algorithm of each gemm call in order (-1: unset, the
// runtime's default).
std::vector<int64_t> SelectedAlgorithms(const HloModule& m) {
  std::vector<int64_t> out;
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (!ClassifyLibraryCall(*i).has_value()) continue;
    absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(*i);
    EXPECT_TRUE(c.ok());
    out.push_back(c.ok() ? c->selected_algorithm : -2);
  }
  return out;
}

TEST(AutotuneBudgetTest, HugeGemmIsNotTimedAndKeepsTheDefaultAlgorithm) {
  AutotuneCache cache;
  BudgetRun r = RunBudgeted(std::make_unique<ConfigAssigner>(AutotuneOptions{.cache = &cache}), kHugeGemm);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(SelectedAlgorithms(*r.module), std::vector<int64_t>{-1});
  EXPECT_EQ(r.counters["heuristic (over the per-call bytes budget)"], 1);
  EXPECT_EQ(r.counters.count("tuned"), 0u);
  EXPECT_EQ(r.counters.count("tuning bytes"), 0u);  // nothing was allocated
  EXPECT_EQ(cache.size(), 0u);                      // a heuristic choice is not cached
}

TEST(AutotuneBudgetTest, SmallGemmIsStillTuned) {
  AutotuneCache cache;
  BudgetRun r = RunBudgeted(std::make_unique<GemmAlgorithmPicker>(AutotuneOptions{.cache = &cache}), kSmallGemm);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(SelectedAlgorithms(*r.module), std::vector<int64_t>{kGemmBlas});
  EXPECT_EQ(r.counters["tuned"], 1);
  EXPECT_EQ(r.counters["tuning bytes"], (4 * 6 + 6 * 5 + 4 * 5) * 4);  // f32[4,6], f32[6,5], f32[4,5]
  EXPECT_EQ(r.counters.count("heuristic (over the per-call bytes budget)"), 0u);
}

TEST(AutotuneBudgetTest, CallOverTheTimeEstimateIsNotTimed) {
  // 240 FLOPs x 4 runs of the one BLAS algorithm at 100 FLOP/s: 9.6 s > 2 s.
  AutotuneCache cache;
  AutotuneOptions options{.cache = &cache};
  options.budget.flops_per_second = 100;
  BudgetRun r = RunBudgeted(std::make_unique<ConfigAssigner>(options), kSmallGemm);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(SelectedAlgorithms(*r.module), std::vector<int64_t>{-1});
  EXPECT_EQ(r.counters["heuristic (over the per-call time budget)"], 1);
}

TEST(AutotuneBudgetTest, ModuleByteBudgetStopsTuningAfterTheFirstCall) {
  AutotuneCache cache;
  AutotuneOptions options{.cache = &cache};
  options.budget.max_module_bytes = 300;  // one 296-byte call fits, not two
  BudgetRun r = RunBudgeted(std::make_unique<ConfigAssigner>(options), kTwoGemms);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.counters["tuned"], 1);
  EXPECT_EQ(r.counters["heuristic (over the module budget)"], 1);
  std::vector<int64_t> chosen = SelectedAlgorithms(*r.module);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0] == -1, chosen[1] != -1);  // exactly one tuned
}

TEST(AutotuneBudgetTest, CacheHitIsUsedWhateverTheBudget) {
  AutotuneCache cache;
  ASSERT_TRUE(RunBudgeted(std::make_unique<ConfigAssigner>(AutotuneOptions{.cache = &cache}), kSmallGemm).changed);
  AutotuneOptions options{.cache = &cache};
  options.budget.max_call_bytes = 1;
  BudgetRun r = RunBudgeted(std::make_unique<ConfigAssigner>(options), kSmallGemm);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(r.counters["cache hits"], 1);
  EXPECT_EQ(SelectedAlgorithms(*r.module), std::vector<int64_t>{kGemmBlas});
}

TEST(AutotuneBudgetTest, PassOptionsSetTheBudget) {
  const PassRegistryEntry* e = FindRegisteredPass("config-assigner");
  ASSERT_NE(e, nullptr);
  PassOptionValues values = e->NewOptions();
  ASSERT_TRUE(values.Set("config-assigner", "max_call_bytes", "100").ok());
  EXPECT_FALSE(values.Set("config-assigner", "max_call_seconds", "soon").ok());
  BudgetRun r = RunBudgeted(e->Create(values), kSmallGemm);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.counters["heuristic (over the per-call bytes budget)"], 1);
  values = e->NewOptions();
  ASSERT_TRUE(values.Set("config-assigner", "level", "0").ok());
  r = RunBudgeted(e->Create(values), kSmallGemm);
  EXPECT_FALSE(r.changed);
  EXPECT_TRUE(r.counters.empty());
}

}  // namespace
}  // namespace passlab
