// GPU autotuning: red-zone checks (pure, no GPU) and, on a device, every
// cuBLASLt/cuDNN algorithm timed and checked against the reference.
#include "core/backends/cuda/cuda_autotuner.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/ir/hlo_computation.h"
#include "core/backends/cuda/cuda_executable.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

TEST(CudaRedZoneTest, IntactGuardsPassAndOverwritesAreLocated) {
  std::vector<uint8_t> guarded(2 * 16 + 40, kCudaRedZoneByte);
  for (int i = 16; i < 56; ++i) guarded[i] = 0;  // the buffer itself may hold anything
  EXPECT_TRUE(CheckRedZones(guarded, 16, "gemm buffer 2").ok());
  guarded[57] = 0;  // one byte past the end
  absl::Status s = CheckRedZones(guarded, 16, "gemm buffer 2");
  EXPECT_TRUE(absl::IsDataLoss(s));
  EXPECT_EQ(s.message(), "gemm buffer 2: red zone overwritten at byte 1 after the buffer");
  guarded[57] = kCudaRedZoneByte;
  guarded[15] = 1;  // the byte just before the buffer
  EXPECT_EQ(CheckRedZones(guarded, 16, "x").message(), "x: red zone overwritten at byte -1 before the buffer");
}

TEST(CudaAutotunerTest, EveryAlgorithmRunsAndAgrees) {
  absl::StatusOr<std::string> device = DescribeCudaDevice(0);
  if (!device.ok()) GTEST_SKIP() << "needs a CUDA device: " << device.status().message();
  const char* calls[] = {
      R"(HloModule m
ENTRY e {
  a = f32[128,64] parameter(0)
  b = f32[64,96] parameter(1)
  ROOT g = f32[128,96] custom-call(a, b), custom_call_target="__blas$gemm",
    backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})",
      R"(HloModule m
ENTRY e {
  a = f32[4,16,16,8] parameter(0)
  b = f32[3,3,8,16] parameter(1)
  ROOT c = (f32[4,16,16,16], u8[0]) custom-call(a, b), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
})",
  };
  for (const char* text : calls) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const HloInstruction& call = *(*m)->entry_computation()->root_instruction();
    absl::StatusOr<std::vector<AlgorithmTiming>> timings = TimeCudaAlgorithms(call);
    ASSERT_TRUE(timings.ok()) << timings.status().message();
    ASSERT_FALSE(timings->empty());
    int ok = 0;
    for (const AlgorithmTiming& t : *timings) {
      if (!t.status.ok()) continue;
      ++ok;
      EXPECT_GT(t.median_ns, 0) << t.algorithm.name;
      EXPECT_LE(t.max_rel_error, 1e-2) << t.algorithm.name;
    }
    EXPECT_GT(ok, 0);
    absl::StatusOr<LibraryAlgorithm> best = FastestAlgorithm(*timings);
    EXPECT_TRUE(best.ok()) << best.status().message();
    // Denying the winner leaves it out.
    CudaAutotuneOptions options;
    options.denied = {best->id};
    absl::StatusOr<std::vector<AlgorithmTiming>> again = TimeCudaAlgorithms(call, options);
    ASSERT_TRUE(again.ok());
    for (const AlgorithmTiming& t : *again) EXPECT_NE(t.algorithm.id, best->id);
  }
}

// cuDNN's graph API engines are candidates beside the legacy algorithms, for
// the forward convolution and both gradients, with a packed (KRSC) and a
// strided (HWIO) filter, and each agrees with the legacy algorithm timed
// first. XLA autotunes these engines (xla/stream_executor/cuda/cuda_dnn.cc,
// CreateOpRunners: heuristics mode B then A, GenericEngineFilter); its
// dumps name them by engine index (algo_id 28, 70, ... with tuning_knobs).
TEST(CudaAutotunerTest, CudnnGraphEnginesAreTimedAndAgree) {
  absl::StatusOr<std::string> device = DescribeCudaDevice(0);
  if (!device.ok()) GTEST_SKIP() << "needs a CUDA device: " << device.status().message();
  struct Case {
    const char* target;
    const char* a;
    const char* b;
    const char* result;
    const char* labels;
  };
  const Case cases[] = {
      {"__dnn$convForward", "f32[4,16,16,32]", "f32[64,3,3,32]", "f32[4,16,16,64]", "b01f_o01i->b01f"},
      {"__dnn$convBackwardInput", "f32[4,16,16,64]", "f32[64,3,3,32]", "f32[4,16,16,32]", "b01f_o01i->b01f"},
      {"__dnn$convBackwardFilter", "f32[4,16,16,32]", "f32[4,16,16,64]", "f32[64,3,3,32]", "b01f_o01i->b01f"},
      {"__dnn$convForward", "f32[4,16,16,32]", "f32[3,3,32,64]", "f32[4,16,16,64]", "b01f_01io->b01f"},
      {"__dnn$convBackwardFilter", "f32[4,16,16,32]", "f32[4,16,16,64]", "f32[3,3,32,64]", "b01f_01io->b01f"},
  };
  for (const Case& c : cases) {
    std::string text = StrCat("HloModule m\nENTRY e {\n  a = ", c.a, " parameter(0)\n  b = ", c.b,
                              " parameter(1)\n  ROOT c = (", c.result, ", u8[0]) custom-call(a, b), "
                              "window={size=3x3 pad=1_1x1_1}, dim_labels=", c.labels, ", custom_call_target=\"",
                              c.target, "\"\n}\n");
    SCOPED_TRACE(text);
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const HloInstruction& call = *(*m)->entry_computation()->root_instruction();
    absl::StatusOr<std::vector<AlgorithmTiming>> timings = TimeCudaAlgorithms(call);
    ASSERT_TRUE(timings.ok()) << timings.status().message();
    ASSERT_FALSE(timings->empty());
    EXPECT_EQ(timings->front().algorithm.name.rfind("cudnn#", 0), 0u) << "legacy algorithms first (the reference)";
    int engines = 0;
    std::string failures;
    for (const AlgorithmTiming& t : *timings) {
      if (t.algorithm.name.rfind("cudnn-engine#", 0) != 0) continue;
      EXPECT_GE(t.algorithm.id, 1000) << t.algorithm.name;
      if (!t.status.ok()) {
        failures += StrCat(t.algorithm.name, ": ", t.status.message(), "\n");
        continue;
      }
      ++engines;
      EXPECT_LE(t.max_rel_error, 1e-2) << t.algorithm.name;
    }
    EXPECT_GT(engines, 0) << "no cuDNN engine ran\n" << failures;
    // Off: only the legacy algorithms.
    setenv("PASSLAB_CUDNN_ENGINES", "0", 1);
    absl::StatusOr<std::vector<AlgorithmTiming>> legacy = TimeCudaAlgorithms(call);
    unsetenv("PASSLAB_CUDNN_ENGINES");
    ASSERT_TRUE(legacy.ok()) << legacy.status().message();
    for (const AlgorithmTiming& t : *legacy) EXPECT_EQ(t.algorithm.name.rfind("cudnn#", 0), 0u) << t.algorithm.name;
  }
}

TEST(CudaAutotunerTest, LevelZeroTunesNothing) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(
      "HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n  b = f32[4,4] parameter(1)\n  ROOT g = f32[4,4] "
      "custom-call(a, b), custom_call_target=\"__blas$gemm\", backend_config={\"gemm_backend_config\":"
      "{\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"]}}}\n}\n");
  ASSERT_TRUE(m.ok()) << m.status().message();
  CudaAutotuneOptions options;
  options.level = 0;
  absl::StatusOr<std::vector<AlgorithmTiming>> t = TimeCudaAlgorithms(*(*m)->entry_computation()->root_instruction(), options);
  ASSERT_TRUE(t.ok());  // no device needed to do nothing
  EXPECT_TRUE(t->empty());
}

}  // namespace
}  // namespace passlab
