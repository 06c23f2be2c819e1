// Compile a module for the CPU backend and time it: the compile -> warm-up ->
// timed steps flow that `passlab run`, the GUI's Kernels panel and the
// ablation runner share. Steps run without assembling output literals (only
// the program's own work is timed); `want_result` adds one untimed run that
// returns the output.
#ifndef PASSLAB_ANALYSIS_PROFILE_RUN_H_
#define PASSLAB_ANALYSIS_PROFILE_RUN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "analysis/median.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/runtime/executable.h"
#include "core/runtime/kernel_record.h"
#include "core/runtime/kernel_summary.h"

namespace passlab {

struct ProfileOptions {
  int warmup = 1;
  int repeats = 5;
  bool want_result = false;
  CpuCompileOptions compile;
};

struct ProfileResult {
  double compile_ms = 0;
  std::vector<KernelRecord> records;    // every timed step
  std::vector<KernelRecord> last_step;  // the last timed step (traces, timelines)
  std::vector<double> wall_ms;          // per timed step
  std::vector<double> kernel_ms;        // per timed step (control flow excluded)
  KernelSummary summary;                // of `records` over `repeats` steps
  ExecutableMemory memory;
  Literal result;  // with want_result
};

// Errors say which phase failed ("compile: ...", "run: ...").
absl::StatusOr<ProfileResult> CompileAndProfile(const HloModule& module, absl::Span<const Literal> args,
                                                const ProfileOptions& options);

// Kernel time of a step: every record but control flow (which wraps others).
int64_t KernelNs(absl::Span<const KernelRecord> records);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_PROFILE_RUN_H_
