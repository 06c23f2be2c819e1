// CUPTI activity records -> KernelRecords, on synthetic records (no GPU):
// zero timestamps dropped and counted, kernel fields carried over, external
// correlation tagging per run and per operation, kernel time as the sum of
// durations and the min(start)-max(end) envelope.
#include <gtest/gtest.h>

#include "core/backends/cuda/cupti_tracer.h"

namespace passlab {
namespace {

CuptiActivity Kernel(const char* name, uint64_t start, uint64_t end, uint32_t correlation, uint32_t stream = 7) {
  CuptiActivity a;
  a.kind = CuptiActivityKind::kKernel;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation_id = correlation;
  a.stream = stream;
  a.grid_x = 128, a.grid_y = 2, a.grid_z = 1;
  a.block_x = 256, a.block_y = 1, a.block_z = 1;
  a.registers_per_thread = 32;
  a.static_shared_bytes = 4224;
  a.dynamic_shared_bytes = 1024;
  return a;
}

CuptiActivity External(CuptiExternalKind kind, uint32_t correlation, uint64_t id) {
  CuptiActivity a;
  a.kind = CuptiActivityKind::kExternalCorrelation;
  a.external_kind = kind;
  a.correlation_id = correlation;
  a.external_id = id;
  return a;
}

CuptiActivity Memcpy(uint64_t start, uint64_t end, uint32_t correlation, uint64_t bytes, CuptiMemcpyKind kind) {
  CuptiActivity a;
  a.kind = CuptiActivityKind::kMemcpy;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation_id = correlation;
  a.bytes = bytes;
  a.memcpy_kind = kind;
  return a;
}

TEST(CuptiConversionTest, KernelFieldsBecomeAKernelRecord) {
  CuptiConversion c = ConvertCuptiActivities({Kernel("fusion_3_kernel", 1'000'500, 1'002'500, 41)}, {.origin_ns = 1'000'000});
  ASSERT_EQ(c.records.size(), 1u);
  const KernelRecord& r = c.records[0];
  EXPECT_EQ(r.name, "fusion_3_kernel");  // untagged: the device function's name
  EXPECT_EQ(r.detail, "fusion_3_kernel");
  EXPECT_EQ(r.kind, KernelKind::kEmitted);
  EXPECT_EQ(r.device, "cuda:0");
  EXPECT_EQ(r.start_ns, 500);
  EXPECT_EQ(r.end_ns, 2500);
  EXPECT_EQ(r.launch.grid_x, 128);
  EXPECT_EQ(r.launch.grid_y, 2);
  EXPECT_EQ(r.launch.block_x, 256);
  EXPECT_EQ(r.registers, 32);
  EXPECT_EQ(r.shared_memory_bytes, 4224 + 1024);
  EXPECT_EQ(r.thread, 7);
  EXPECT_EQ(r.correlation_id, 41);
  EXPECT_EQ(c.total.kernels, 1);
  EXPECT_EQ(c.total.sum_ns, 2000);
  EXPECT_EQ(c.total.envelope_ns, 2000);
}

TEST(CuptiConversionTest, ZeroTimestampsAreDroppedAndCounted) {
  std::vector<CuptiActivity> in = {
      Kernel("a", 100, 200, 1),
      Kernel("b", 0, 300, 2),    // no start
      Kernel("c", 400, 0, 3),    // no end
      Kernel("d", 500, 450, 4),  // inverted
      Memcpy(0, 0, 5, 64, CuptiMemcpyKind::kHostToDevice),
      Kernel("e", 600, 900, 6),
  };
  CuptiConversion c = ConvertCuptiActivities(in);
  EXPECT_EQ(c.dropped_zero_timestamp, 4);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[0].name, "a");
  EXPECT_EQ(c.records[1].name, "e");
  // Kernel time: sum of durations and the envelope over the kept kernels.
  EXPECT_EQ(c.total.sum_ns, 100 + 300);
  EXPECT_EQ(c.total.envelope_ns, 900 - 100);
}

TEST(CuptiConversionTest, OverlappingKernelsOnTwoStreams) {
  // Concurrent kernels: the sum exceeds the envelope.
  CuptiConversion c = ConvertCuptiActivities({Kernel("x", 1000, 5000, 1, 7), Kernel("y", 2000, 3000, 2, 8),
                                              Kernel("z", 4500, 6000, 3, 7)});
  EXPECT_EQ(c.total.kernels, 3);
  EXPECT_EQ(c.total.sum_ns, 4000 + 1000 + 1500);
  EXPECT_EQ(c.total.envelope_ns, 5000);
  // Records come out by start time whatever the input order.
  c = ConvertCuptiActivities({Kernel("late", 9000, 9100, 9), Kernel("early", 10, 20, 8)});
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[0].name, "early");
}

TEST(CuptiConversionTest, ExternalCorrelationTagsRunsAndOperations) {
  CuptiConversionOptions options;
  options.operations[11] = CuptiOperation{"fusion.3", "main", KernelKind::kEmitted, "loop"};
  options.operations[12] = CuptiOperation{"custom-call.1", "main", KernelKind::kLibraryCall, "__blas$gemm/cublasLt#0"};
  std::vector<CuptiActivity> in = {
      // Run 1: fusion.3's kernel, the gemm's two library kernels, a memcpy.
      External(CuptiExternalKind::kRun, 100, 1), External(CuptiExternalKind::kOperation, 100, 11),
      Kernel("fusion_3", 1000, 1400, 100),
      External(CuptiExternalKind::kRun, 101, 1), External(CuptiExternalKind::kOperation, 101, 12),
      Kernel("sm90_xmma_gemm_f32", 1500, 2500, 101),
      External(CuptiExternalKind::kRun, 102, 1), External(CuptiExternalKind::kOperation, 102, 12),
      Kernel("splitKreduce_kernel", 2600, 2700, 102),
      External(CuptiExternalKind::kRun, 103, 1),
      Memcpy(2800, 3000, 103, 4096, CuptiMemcpyKind::kDeviceToHost),
      // Run 2: one kernel.
      External(CuptiExternalKind::kRun, 200, 2), External(CuptiExternalKind::kOperation, 200, 11),
      Kernel("fusion_3", 9000, 9300, 200),
      // A kernel nobody tagged (another library's warm-up, say).
      Kernel("stray", 5000, 5050, 300),
  };
  CuptiConversion c = ConvertCuptiActivities(in, options);
  ASSERT_EQ(c.records.size(), 6u);
  EXPECT_EQ(c.records[0].name, "fusion.3");
  EXPECT_EQ(c.records[0].hlo_instruction, "fusion.3");
  EXPECT_EQ(c.records[0].hlo_computation, "main");
  EXPECT_EQ(c.records[0].kind, KernelKind::kEmitted);
  EXPECT_EQ(c.records[1].name, "custom-call.1");
  EXPECT_EQ(c.records[1].kind, KernelKind::kLibraryCall);
  EXPECT_EQ(c.records[1].detail, "sm90_xmma_gemm_f32");  // which library kernel ran
  EXPECT_EQ(c.records[2].name, "custom-call.1");
  EXPECT_EQ(c.records[3].kind, KernelKind::kCopy);
  EXPECT_EQ(c.records[3].detail, "DtoH");
  EXPECT_EQ(c.records[3].bytes_written, 4096);
  EXPECT_EQ(c.records[4].name, "stray");
  EXPECT_EQ(c.record_runs, (std::vector<uint64_t>{1, 1, 1, 1, 0, 2}));
  ASSERT_TRUE(c.runs.count(1));
  EXPECT_EQ(c.runs[1].kernels, 3);
  EXPECT_EQ(c.runs[1].sum_ns, 400 + 1000 + 100);
  EXPECT_EQ(c.runs[1].envelope_ns, 2700 - 1000);
  EXPECT_EQ(c.runs[1].memcpy_ns, 200);
  EXPECT_EQ(c.runs[1].memcpy_bytes, 4096);
  EXPECT_EQ(c.runs[2].sum_ns, 300);
  EXPECT_EQ(c.runs[2].envelope_ns, 300);
  EXPECT_EQ(c.runs[0].kernels, 1);
  EXPECT_EQ(c.total.kernels, 5);
  EXPECT_EQ(c.total.envelope_ns, 9300 - 1000);
}

TEST(CuptiConversionTest, ApiAndOverheadRecordsAreCountedNotListed) {
  CuptiActivity api;
  api.kind = CuptiActivityKind::kDriverApi;
  api.start_ns = 10, api.end_ns = 20;
  CuptiActivity runtime = api;
  runtime.kind = CuptiActivityKind::kRuntimeApi;
  CuptiActivity overhead;
  overhead.kind = CuptiActivityKind::kOverhead;
  overhead.start_ns = 100, overhead.end_ns = 350;
  CuptiActivity memset;
  memset.kind = CuptiActivityKind::kMemset;
  memset.start_ns = 30, memset.end_ns = 40;
  memset.bytes = 256;
  CuptiConversion c = ConvertCuptiActivities({api, runtime, overhead, memset});
  EXPECT_EQ(c.api_records, 2);
  EXPECT_EQ(c.overhead_records, 1);
  EXPECT_EQ(c.overhead_ns, 250);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].kind, KernelKind::kMemset);
  EXPECT_EQ(c.total.kernels, 0);
  EXPECT_EQ(c.total.envelope_ns, 0);
  EXPECT_EQ(c.total.memcpy_ns, 10);
}

TEST(CuptiConversionTest, KernelTimeOfRecordsCountsDeviceKernelsOnly) {
  std::vector<KernelRecord> records(4);
  records[0].kind = KernelKind::kEmitted, records[0].start_ns = 0, records[0].end_ns = 10;
  records[1].kind = KernelKind::kLibraryCall, records[1].start_ns = 20, records[1].end_ns = 50;
  records[2].kind = KernelKind::kCopy, records[2].start_ns = 50, records[2].end_ns = 80, records[2].bytes_read = 8;
  records[3].kind = KernelKind::kControlFlow, records[3].start_ns = 0, records[3].end_ns = 100;
  GpuKernelTime t = KernelTimeOf(records);
  EXPECT_EQ(t.kernels, 2);
  EXPECT_EQ(t.sum_ns, 40);
  EXPECT_EQ(t.envelope_ns, 50);
  EXPECT_EQ(t.memcpy_ns, 30);
  EXPECT_EQ(KernelTimeOf({}).envelope_ns, 0);
}

}  // namespace
}  // namespace passlab
