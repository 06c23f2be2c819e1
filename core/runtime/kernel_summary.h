// The per-kernel table `passlab run` prints: KernelRecords of one or more
// steps grouped by kernel (instruction and computation), with calls, total
// and median time and share of the kernel time. Control-flow records wrap
// other records, so they get rows but count neither in the kernel time nor
// in shares.
#ifndef PASSLAB_CORE_RUNTIME_KERNEL_SUMMARY_H_
#define PASSLAB_CORE_RUNTIME_KERNEL_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/runtime/kernel_record.h"

namespace passlab {

struct KernelSummaryRow {
  std::string name;
  std::string computation;
  KernelKind kind = KernelKind::kEmitted;
  std::string detail;  // of the first call
  int64_t calls = 0;
  int64_t total_ns = 0;
  int64_t median_ns = 0;
  double share = 0;  // of kernel_ns; 0 for control flow
  int64_t bytes = 0;  // read + written, all calls
  int64_t flops = 0;  // all calls
  // A cost model's estimate of one call (-1: none), shown beside the
  // measured median so a user sees where the model is wrong.
  int64_t estimate_ns = -1;
};

struct KernelSummary {
  std::vector<KernelSummaryRow> rows;  // by total time, descending (then name)
  int64_t kernel_ns = 0;               // sum over non-control-flow records
  int64_t steps = 1;
};

KernelSummary SummarizeRecords(absl::Span<const KernelRecord> records, int64_t steps = 1);

// A fixed-width text table ("name kind calls total median share"; with an
// "estimate" column after the median when any row has one), at most
// `max_rows` rows (0: all) and a totals line.
std::string FormatKernelTable(const KernelSummary& summary, int64_t max_rows = 0);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_KERNEL_SUMMARY_H_
