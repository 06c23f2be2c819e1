// Every pass of today's gpu pipeline is near-linear in module size (issue 25
// item 6: XLA's benchmark modules have 2K-30K instructions; a quadratic pass
// took 10 s on them). A generated chain of N layers (dot, tanh, reduce,
// broadcast, all-reduce, add; every reduce and all-reduce calling one shared
// reducer; a while loop carrying one element per layer) is optimized at N
// and 4N, and each pass's CPU time at 4N must stay far below the 16x of a
// quadratic pass. Generous bounds keep it from being timing-flaky: thread
// CPU time (not wall time, so other processes do not count), each pass's
// best of two runs, and only passes that take a measurable time at 4N.
#include <gtest/gtest.h>

#include <time.h>

#include <map>
#include <string>

#include "core/ir/str_util.h"
#include "core/pass/pass_observer.h"
#include "core/text/hlo_parser.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

std::string ChainModule(int layers) {
  std::string hlo = StrCat("HloModule chain_", layers, ", replica_count=2\n\n",
                           "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                           "  ROOT s = f32[] add(a, b)\n}\n\n");
  // The loop: a counter and one f32[8] per layer, each doubled per trip.
  std::string state = "s32[]";
  for (int i = 0; i < layers; ++i) StrAppend(&state, ", f32[8]");
  StrAppend(&hlo, "cond {\n  p = (", state, ") parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n",
            "  n = s32[] constant(3)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\n");
  StrAppend(&hlo, "body {\n  p = (", state, ") parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n",
            "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n");
  std::string next = "j";
  for (int i = 1; i <= layers; ++i) {
    StrAppend(&hlo, "  g", i, " = f32[8] get-tuple-element(p), index=", i, "\n  h", i, " = f32[8] add(g", i, ", g", i,
              ")\n");
    StrAppend(&next, ", h", i);
  }
  StrAppend(&hlo, "  ROOT t = (", state, ") tuple(", next, ")\n}\n\n");
  StrAppend(&hlo, "ENTRY main {\n  x0 = f32[8,16] parameter(0)\n  w = f32[16,16] parameter(1)\n",
            "  zero = f32[] constant(0)\n  start = s32[] constant(0)\n");
  std::string init = "start";
  for (int i = 1; i <= layers; ++i) {
    StrAppend(&hlo, "  d", i, " = f32[8,16] dot(x", i - 1, ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
              "  e", i, " = f32[8,16] tanh(d", i, ")\n",
              "  r", i, " = f32[8] reduce(e", i, ", zero), dimensions={1}, to_apply=add\n",
              "  b", i, " = f32[8,16] broadcast(r", i, "), dimensions={0}\n",
              "  a", i, " = f32[8,16] all-reduce(b", i, "), replica_groups={}, to_apply=add\n",
              "  x", i, " = f32[8,16] add(e", i, ", a", i, ")\n");
    StrAppend(&init, ", r", i);
  }
  StrAppend(&hlo, "  init = (", state, ") tuple(", init, ")\n  loop = (", state, ") while(init), condition=cond, body=body\n",
            "  ROOT out = ((", state, "), f32[8,16]) tuple(loop, x", layers, ")\n}\n");
  return hlo;
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Each leaf pass's CPU time, summed over its runs.
class CpuTimeObserver : public PassObserver {
 public:
  absl::Status BeforePass(const PassRunInfo&, const HloModule&) override {
    start_ = ThreadCpuSeconds();
    return absl::OkStatus();
  }
  absl::Status AfterPass(const PassRunInfo& info, const HloModule&, bool, uint64_t, uint64_t,
                         const PassCounters&) override {
    seconds[info.pass_name] += ThreadCpuSeconds() - start_;
    return absl::OkStatus();
  }
  std::map<std::string, double> seconds;

 private:
  double start_ = 0;
};

// Per pass, the smaller CPU time of two optimizations of the module.
std::map<std::string, double> PassSeconds(int layers, int64_t* instructions) {
  std::map<std::string, double> best;
  for (int round = 0; round < 2; ++round) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(ChainModule(layers), "chain.hlo");
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return best;
    *instructions = (*m)->instruction_count();
    std::unique_ptr<HloPassPipeline> pipeline = BuildGpuPipeline();
    CpuTimeObserver observer;
    pipeline->AddObserver(&observer);
    absl::StatusOr<bool> changed = pipeline->Run(**m);
    EXPECT_TRUE(changed.ok()) << changed.status().message();
    for (const auto& [pass, s] : observer.seconds) {
      auto it = best.find(pass);
      if (it == best.end() || s < it->second) best[pass] = s;
    }
  }
  return best;
}

TEST(PipelineScalingTest, EveryGpuPassIsNearLinearInModuleSize) {
  constexpr int kLayers = 100;
  int64_t small_size = 0, large_size = 0;
  std::map<std::string, double> small = PassSeconds(kLayers, &small_size);
  std::map<std::string, double> large = PassSeconds(4 * kLayers, &large_size);
  ASSERT_GT(large_size, 3000);  // thousands of instructions
  ASSERT_GT(large_size, 3 * small_size);
  for (const auto& [pass, t4] : large) {
    const double t1 = small.count(pass) ? small[pass] : 0.0;
    // Linear: 4x; n log n: ~5x; quadratic: 16x. Passes under 30 ms at 4N
    // are below what the clock tells apart reliably.
    if (t4 < 0.03) continue;
    EXPECT_LE(t4, 10 * t1 + 0.02) << pass << ": " << t1 * 1e3 << " ms at " << small_size << " instructions, "
                                  << t4 * 1e3 << " ms at " << large_size;
  }
}

}  // namespace
}  // namespace passlab
