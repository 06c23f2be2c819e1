// core/backend: one compiler and executable interface over both runtimes,
// chosen by device name, with every setting in an explicit Session.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "core/backend/compiler.h"
#include "core/backend/executable.h"
#include "core/backend/session.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/runtime/library_threads.h"
#include "core/text/hlo_parser.h"
#include "passes/autotune/autotune_cache.h"
#include "passes/pipelines/pipelines.h"

namespace passlab::backend {
namespace {

// A gemm (a library call after the pipeline, so the algorithm pickers tune
// it), an elementwise op and a reduction (emitted kernels), a tuple result.
constexpr char kModule[] = R"(HloModule m
ENTRY e {
  a = f32[17,33] parameter(0)
  b = f32[33,5] parameter(1)
  d = f32[17,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[17,5] tanh(d)
  z = f32[] constant(0)
  s = f32[17] reduce(t, z), dimensions={1}, to_apply={ x = f32[] parameter(0) y = f32[] parameter(1) ROOT r = f32[] add(x, y) }
  ROOT o = (f32[17,5], f32[17]) tuple(t, s)
})";

std::unique_ptr<HloModule> Parse() {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule, "backend_test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<Literal> Arguments(const HloModule& module) {
  std::vector<Literal> args;
  uint64_t seed = 7;
  for (const HloInstruction* p : module.entry_computation()->parameter_instructions()) {
    args.push_back(MakeRandomLiteral(p->shape(), seed++));
  }
  return args;
}

std::unique_ptr<Compiler> MustCreate(Session session) {
  absl::StatusOr<std::unique_ptr<Compiler>> c = CreateCompiler(std::move(session));
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(*c) : nullptr;
}

TEST(BackendTest, DeviceNamesChooseTheBackend) {
  absl::StatusOr<DeviceName> cuda1 = ParseDeviceName("cuda:1");
  ASSERT_TRUE(cuda1.ok());
  EXPECT_EQ(cuda1->platform, "cuda");
  EXPECT_EQ(cuda1->ordinal, 1);
  EXPECT_EQ(ParseDeviceName("cpu")->platform, "cpu");
  EXPECT_EQ(ParseDeviceName("cuda")->ordinal, 0);
  for (const char* bad : {"tpu", "cuda:", "cuda:x", "CPU", "cuda:1:2", ""}) {
    absl::StatusOr<std::unique_ptr<Compiler>> c = CreateCompiler(Session{.device = bad});
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(c.status().message()),
                ::testing::HasSubstr(std::string("unknown device '") + bad + "' (expected cpu, cuda or cuda:N)"));
  }
}

// Kernel time is defined once: kernels, library calls and routines; not
// copies, memsets, control flow or a device's host fallbacks.
TEST(BackendTest, KernelTimeCountsTheProgramsOperationsOnly) {
  auto record = [](KernelKind kind, int64_t ns, std::string detail = "") {
    KernelRecord r;
    r.kind = kind;
    r.detail = std::move(detail);
    r.end_ns = ns;
    return r;
  };
  std::vector<KernelRecord> records = {
      record(KernelKind::kEmitted, 10),          record(KernelKind::kLibraryCall, 20),
      record(KernelKind::kRuntimeRoutine, 30),   record(KernelKind::kRuntimeRoutine, 40, "host: sort"),
      record(KernelKind::kCopy, 50),             record(KernelKind::kMemset, 60),
      record(KernelKind::kControlFlow, 1000)};
  EXPECT_EQ(KernelTimeNs(records), 60);
  EXPECT_EQ(CopyTimeNs(records), 110);
}

TEST(BackendTest, CpuOptimizesCompilesRunsAndProfiles) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(*module, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();

  std::unique_ptr<Compiler> compiler = MustCreate(Session{.device = "cpu", .threads = 1});
  ASSERT_NE(compiler, nullptr);
  ASSERT_TRUE(compiler->Optimize(*module, {.pipeline = "gpu"}).ok());
  absl::StatusOr<std::unique_ptr<Executable>> exe = compiler->Compile(*module);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  EXPECT_EQ((*exe)->DeviceDescription(), "cpu");
  absl::StatusOr<Literal> result = (*exe)->Run(args);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(CompareLiterals(*expected, *result, ErrorSpec{.abs = 1e-4, .rel = 1e-4}).ok());

  absl::StatusOr<ProfileResult> profile = (*exe)->Profile(args, {.warmup = 1, .steps = 3, .want_result = true});
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  ASSERT_EQ(profile->wall_ms.size(), 3u);
  ASSERT_EQ(profile->kernel_ms.size(), 3u);
  EXPECT_FALSE(profile->last_step.empty());
  EXPECT_FALSE(profile->summary.rows.empty());
  EXPECT_GT(profile->memory.peak_bytes(), 0);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(profile->kernel_ms[i], 0);
    // One thread runs the records one after another inside the step.
    EXPECT_LE(profile->kernel_ms[i], profile->wall_ms[i]);
  }
  EXPECT_DOUBLE_EQ(profile->kernel_ms.back(), KernelTimeNs(profile->last_step) / 1e6);
  EXPECT_TRUE(CompareLiterals(*expected, profile->result, ErrorSpec{.abs = 1e-4, .rel = 1e-4}).ok());
}

// Two sessions in one process: each optimize fills its own autotune cache
// (never the process-wide one) and times where its own timer says; each run
// applies its own library thread count.
TEST(BackendTest, TwoSessionsKeepTheirOwnThreadsCachesAndTimers) {
  const size_t global_before = AutotuneCache::Global().size();
  int device_timings = 0;
  AlgorithmTimer timer;
  timer.device = "fake:0 (test device)";
  timer.time = [&](const HloInstruction&, const AutotuneOptions&, const std::vector<int64_t>&) {
    ++device_timings;
    std::vector<AlgorithmTiming> t(1);
    t[0].algorithm = {0, "dev#0"};
    t[0].median_ns = 100;
    return absl::StatusOr<std::vector<AlgorithmTiming>>(t);
  };
  Session a{.device = "cpu", .threads = 1};
  Session b{.device = "cpu", .threads = 2};
  Session on_device{.device = "cpu", .threads = 1, .autotune_timer = timer};
  ASSERT_NE(a.autotune_cache, b.autotune_cache);
  std::unique_ptr<Compiler> ca = MustCreate(a), cb = MustCreate(b), cd = MustCreate(on_device);
  ASSERT_TRUE(ca && cb && cd);

  std::unique_ptr<HloModule> ma = Parse(), mb = Parse(), md = Parse();
  ASSERT_TRUE(ca->Optimize(*ma, {}).ok());
  EXPECT_GT(a.autotune_cache->misses(), 0);  // the gemm was tuned, in a's cache
  EXPECT_GT(a.autotune_cache->size(), 0u);
  EXPECT_EQ(b.autotune_cache->size(), 0u);
  const int64_t a_misses = a.autotune_cache->misses();
  ASSERT_TRUE(cb->Optimize(*mb, {}).ok());
  EXPECT_EQ(b.autotune_cache->misses(), a_misses);  // tuned again: b does not see a's entries
  EXPECT_EQ(a.autotune_cache->misses(), a_misses);
  EXPECT_EQ(b.autotune_cache->hits(), 0);
  EXPECT_EQ(device_timings, 0);
  ASSERT_TRUE(cd->Optimize(*md, {}).ok());
  EXPECT_GT(device_timings, 0);  // only the session with the timer timed on its "device"
  EXPECT_FALSE(CurrentAlgorithmTimer().has_value());  // no process-wide timer was set
  EXPECT_EQ(AutotuneCache::Global().size(), global_before);

  // Runs interleaved: each applies its session's thread count.
  absl::StatusOr<std::unique_ptr<Executable>> ea = ca->Compile(*ma), eb = cb->Compile(*mb);
  ASSERT_TRUE(ea.ok() && eb.ok());
  std::vector<Literal> args = Arguments(*ma);
  ASSERT_TRUE((*ea)->Execute(args, nullptr).ok());
  EXPECT_EQ(LibraryCallThreads(), 1);
  ASSERT_TRUE((*eb)->Execute(args, nullptr).ok());
  EXPECT_EQ(LibraryCallThreads(), 2);
  absl::StatusOr<Literal> ra = (*ea)->Run(args);
  ASSERT_TRUE(ra.ok());
  EXPECT_EQ(LibraryCallThreads(), 1);
  absl::StatusOr<Literal> rb = (*eb)->Run(args);
  ASSERT_TRUE(rb.ok());
  EXPECT_TRUE(CompareLiterals(*ra, *rb, ErrorSpec{.abs = 1e-5, .rel = 1e-5}).ok());
}

// The same on two threads at once: each compile sees only its session's
// timer and cache (the scope is per thread).
TEST(BackendTest, SessionsOnTwoThreadsDoNotSeeEachOther) {
  std::atomic<int> timings[2] = {0, 0};
  auto timer_for = [&](int i) {
    AlgorithmTimer timer;
    timer.device = "fake:" + std::to_string(i);
    timer.time = [&timings, i](const HloInstruction&, const AutotuneOptions&, const std::vector<int64_t>&) {
      ++timings[i];
      std::vector<AlgorithmTiming> t(1);
      t[0].algorithm = {0, "dev#0"};
      t[0].median_ns = 100;
      return absl::StatusOr<std::vector<AlgorithmTiming>>(t);
    };
    return timer;
  };
  Session sessions[2] = {{.device = "cpu", .threads = 1, .autotune_timer = timer_for(0)},
                         {.device = "cpu", .threads = 1, .autotune_timer = timer_for(1)}};
  absl::Status results[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      std::unique_ptr<HloModule> module = Parse();
      absl::StatusOr<std::unique_ptr<Compiler>> compiler = CreateCompiler(sessions[i]);
      results[i] = compiler.ok() ? (*compiler)->Optimize(*module, {}) : compiler.status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].message();
    EXPECT_GT(timings[i].load(), 0) << i;
    // Each call tuned once, on its own session's timer, into its own cache.
    EXPECT_EQ(sessions[i].autotune_cache->misses(), timings[i].load()) << i;
    EXPECT_EQ(sessions[i].autotune_cache->hits(), 0) << i;
  }
  EXPECT_FALSE(CurrentAlgorithmTimer().has_value());
}

// Without a GPU (or a CUDA build) the CUDA compiler exists but its compile
// says why it cannot run; with one, it runs and matches the evaluator.
TEST(BackendTest, CudaCompilesWhereThereIsADevice) {
  std::unique_ptr<HloModule> module = Parse();
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(*module, args);
  ASSERT_TRUE(expected.ok());
  Session session{.device = "cuda"};
  if (absl::Status s = UseDeviceAutotuning(session); !s.ok()) {
    EXPECT_TRUE(std::regex_search(std::string(s.message()),
                                  std::regex("no CUDA driver|no CUDA device|the cuda backend was not built")))
        << s.message();
    std::unique_ptr<Compiler> compiler = MustCreate(session);
    ASSERT_NE(compiler, nullptr);
    absl::StatusOr<ProfileResult> profile = CompileAndProfile(*compiler, *module, args, {});
    ASSERT_FALSE(profile.ok());
    EXPECT_THAT(std::string(profile.status().message()), ::testing::StartsWith("compile: "));
    GTEST_SKIP() << "needs a CUDA device: " << s.message();
  }
  ASSERT_TRUE(session.autotune_timer.has_value());
  std::unique_ptr<Compiler> compiler = MustCreate(session);
  ASSERT_NE(compiler, nullptr);
  ASSERT_TRUE(compiler->Optimize(*module, {}).ok());
  absl::StatusOr<ProfileResult> profile =
      CompileAndProfile(*compiler, *module, args, {.warmup = 1, .steps = 2, .want_result = true});
  ASSERT_TRUE(profile.ok()) << profile.status().message();
  EXPECT_THAT(profile->device, ::testing::StartsWith("cuda:0"));
  EXPECT_EQ(profile->wall_ms.size(), 2u);
  EXPECT_EQ(profile->traced_wall_ms.size(), 2u);
  EXPECT_GT(profile->kernel_ms.back(), 0);
  EXPECT_TRUE(CompareLiterals(*expected, profile->result, ErrorSpec{.abs = 1e-2, .rel = 1e-2}).ok());
}

}  // namespace
}  // namespace passlab::backend

namespace passlab::backend {
namespace {

// The CUDA backend's layout assignment gives cuDNN convolutions XLA:GPU's
// OHWI filters (xla/service/gpu/transforms/layout_assignment.cc, the
// filter layout of its NHWC convolutions); the CPU keeps filters as they
// lie; a user's --pass-option wins; a pipeline without layout assignment
// gets no override (which would be an error there).
TEST(BackendTest, CudaDefaultsToXlaFilterLayout) {
  Session cuda;
  cuda.device = "cuda";
  absl::StatusOr<PassOptionOverrides> o = PassOptionsWithDeviceDefaults(cuda, "gpu");
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_TRUE(o->count("layout-assignment"));
  EXPECT_TRUE(o->at("layout-assignment").GetBool("xla_filter_layout"));
  absl::StatusOr<FilteredPipeline> built = BuildFilteredPipeline("gpu", "", "", false, *o);
  EXPECT_TRUE(built.ok()) << built.status().message();

  Session cpu;
  cpu.device = "cpu";
  o = PassOptionsWithDeviceDefaults(cpu, "gpu");
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->empty());

  absl::StatusOr<PassOptionOverrides> user =
      ParsePassOptionOverrides({"layout-assignment.xla_filter_layout=false"});
  ASSERT_TRUE(user.ok());
  cuda.pass_options = *user;
  o = PassOptionsWithDeviceDefaults(cuda, "gpu");
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->at("layout-assignment").GetBool("xla_filter_layout"));

  cuda.pass_options.clear();
  o = PassOptionsWithDeviceDefaults(cuda, "fusion");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_TRUE(o->empty());
}

}  // namespace
}  // namespace passlab::backend
