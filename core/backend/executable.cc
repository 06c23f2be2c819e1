#include "core/backend/executable.h"

#include <algorithm>
#include <chrono>
#include <climits>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::backend {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

absl::Status WithPhase(const absl::Status& s, std::string_view phase) {
  return s.ok() ? s : absl::Status(s.code(), StrCat(phase, ": ", s.message()));
}

}  // namespace

bool IsKernelTime(const KernelRecord& record) {
  switch (record.kind) {
    case KernelKind::kEmitted:
    case KernelKind::kLibraryCall:
      return true;
    case KernelKind::kRuntimeRoutine:
      return !record.detail.starts_with(kHostFallbackPrefix);
    case KernelKind::kCopy:
    case KernelKind::kMemset:
    case KernelKind::kControlFlow:
      return false;
  }
  return false;
}

int64_t KernelTimeNs(absl::Span<const KernelRecord> records) {
  int64_t ns = 0;
  for (const KernelRecord& r : records) {
    if (IsKernelTime(r)) ns += r.duration_ns();
  }
  return ns;
}

int64_t CopyTimeNs(absl::Span<const KernelRecord> records) {
  int64_t ns = 0;
  for (const KernelRecord& r : records) {
    if (r.kind == KernelKind::kCopy || r.kind == KernelKind::kMemset) ns += r.duration_ns();
  }
  return ns;
}

absl::StatusOr<StepTiming> Executable::TimedStep(absl::Span<const Literal> args, const StepHooks& hooks) {
  auto run = [&](std::vector<KernelRecord>* records, int64_t* wall_ns) -> absl::Status {
    if (hooks.before) hooks.before();
    Clock::time_point t = Clock::now();
    absl::Status s = Execute(args, records);
    if (s.ok() && hooks.after) hooks.after(records);
    *wall_ns = NsSince(t);
    return s;
  };
  StepTiming step;
  const bool untraced_wall = TracingTakesHostTime();
  if (untraced_wall) RETURN_IF_ERROR(run(nullptr, &step.wall_ns));
  RETURN_IF_ERROR(run(&step.records, &step.traced_wall_ns));
  if (!untraced_wall) step.wall_ns = step.traced_wall_ns;
  step.kernel_ns = KernelTimeNs(step.records);
  step.copy_ns = CopyTimeNs(step.records);
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const KernelRecord& r : step.records) {
    if (!IsKernelTime(r)) continue;
    first = std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
  }
  if (first <= last) step.envelope_ns = last - first;
  return step;
}

absl::StatusOr<ProfileResult> Executable::Profile(absl::Span<const Literal> args, const ProfileOptions& options) {
  ProfileResult out;
  out.device = DeviceDescription();
  out.host_fallbacks = HostFallbacks();
  for (int i = 0; i < options.warmup; ++i) RETURN_IF_ERROR(WithPhase(Execute(args, nullptr), "run"));
  for (int i = 0; i < options.steps; ++i) {
    absl::StatusOr<StepTiming> step = TimedStep(args);
    if (!step.ok()) return WithPhase(step.status(), "run");
    out.wall_ms.push_back(step->wall_ns / 1e6);
    out.traced_wall_ms.push_back(step->traced_wall_ns / 1e6);
    out.kernel_ms.push_back(step->kernel_ns / 1e6);
    out.copy_ms.push_back(step->copy_ns / 1e6);
    out.envelope_ms.push_back(step->envelope_ns / 1e6);
    out.records.insert(out.records.end(), step->records.begin(), step->records.end());
    out.last_step = std::move(step->records);
  }
  if (options.want_result) {
    absl::StatusOr<Literal> r = Run(args);
    if (!r.ok()) return WithPhase(r.status(), "run");
    out.result = std::move(*r);
  }
  out.summary = SummarizeRecords(out.records, std::max(options.steps, 1));
  out.memory = Memory();
  out.command_buffer = CommandBufferStatus();
  out.tf32_library_calls = Tf32LibraryCalls();
  return out;
}

}  // namespace passlab::backend
