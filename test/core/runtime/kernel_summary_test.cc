// The per-kernel table from KernelRecords: grouping, median, shares, control
// flow excluded from the kernel time, deterministic order.
#include "core/runtime/kernel_summary.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace passlab {
namespace {

KernelRecord Rec(std::string name, KernelKind kind, int64_t start, int64_t end, std::string computation = "e") {
  KernelRecord r;
  r.name = std::move(name);
  r.kind = kind;
  r.hlo_computation = std::move(computation);
  r.start_ns = start;
  r.end_ns = end;
  r.bytes_read = 10;
  r.bytes_written = 5;
  r.flops = 3;
  return r;
}

TEST(KernelSummaryTest, GroupsAndComputesMediansAndShares) {
  std::vector<KernelRecord> records = {
      Rec("gemm", KernelKind::kLibraryCall, 0, 600),   Rec("fusion", KernelKind::kEmitted, 600, 700),
      Rec("w", KernelKind::kControlFlow, 700, 2000),   Rec("add", KernelKind::kEmitted, 800, 900, "body"),
      Rec("gemm", KernelKind::kLibraryCall, 2000, 2200), Rec("gemm", KernelKind::kLibraryCall, 2200, 2500),
  };
  KernelSummary s = SummarizeRecords(records, 2);
  EXPECT_EQ(s.kernel_ns, 600 + 100 + 100 + 200 + 300);
  ASSERT_EQ(s.rows.size(), 4u);
  EXPECT_EQ(s.rows[0].name, "w");  // largest total, but no share
  EXPECT_EQ(s.rows[0].share, 0);
  EXPECT_EQ(s.rows[1].name, "gemm");
  EXPECT_EQ(s.rows[1].calls, 3);
  EXPECT_EQ(s.rows[1].total_ns, 1100);
  EXPECT_EQ(s.rows[1].median_ns, 300);
  EXPECT_DOUBLE_EQ(s.rows[1].share, 1100.0 / 1300.0);
  EXPECT_EQ(s.rows[1].bytes, 45);
  EXPECT_EQ(s.rows[1].flops, 9);
  // Equal totals: ordered by (computation, name).
  EXPECT_EQ(s.rows[2].name, "add");
  EXPECT_EQ(s.rows[2].computation, "body");
  EXPECT_EQ(s.rows[3].name, "fusion");
  std::string table = FormatKernelTable(s, 2);
  EXPECT_NE(table.find("gemm"), std::string::npos) << table;
  EXPECT_NE(table.find("84.6%"), std::string::npos) << table;
  EXPECT_NE(table.find("... 2 more"), std::string::npos) << table;
  EXPECT_NE(table.find("in 2 steps (650 ns per step)"), std::string::npos) << table;
  // Input order does not matter.
  std::reverse(records.begin(), records.end());
  EXPECT_EQ(FormatKernelTable(SummarizeRecords(records, 2)), FormatKernelTable(s));
}

TEST(KernelSummaryTest, EmptyRecords) {
  KernelSummary s = SummarizeRecords({}, 0);
  EXPECT_TRUE(s.rows.empty());
  EXPECT_EQ(s.steps, 1);
  EXPECT_NE(FormatKernelTable(s).find("kernel time 0 ns"), std::string::npos);
}

}  // namespace
}  // namespace passlab
