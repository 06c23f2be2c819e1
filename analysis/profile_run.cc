#include "analysis/profile_run.h"

#include <algorithm>
#include <chrono>

#include "core/ir/str_util.h"
#include "core/runtime/library_threads.h"

namespace passlab {

int64_t KernelNs(absl::Span<const KernelRecord> records) {
  int64_t ns = 0;
  for (const KernelRecord& r : records) {
    if (r.kind != KernelKind::kControlFlow) ns += r.duration_ns();
  }
  return ns;
}

absl::StatusOr<ProfileResult> CompileAndProfile(const HloModule& module, absl::Span<const Literal> args,
                                                const ProfileOptions& options) {
  ProfileResult out;
  auto t0 = std::chrono::steady_clock::now();
  CpuKernelCompiler compiler(options.compile);
  SetLibraryCallThreads(options.compile.num_threads);  // library calls obey --threads too
  absl::StatusOr<std::unique_ptr<Executable>> exe =
      Executable::Create(module, [&](const HloInstruction& inst) { return compiler.Compile(inst); });
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile: ", exe.status().message()));
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  for (int i = 0; i < options.warmup; ++i) {
    if (absl::Status s = (*exe)->Execute(args); !s.ok()) {
      return absl::Status(s.code(), StrCat("run: ", s.message()));
    }
  }
  std::vector<KernelRecord> step;
  for (int i = 0; i < options.repeats; ++i) {
    step.clear();
    auto s = std::chrono::steady_clock::now();
    absl::Status st = (*exe)->Execute(args, &step);
    auto e = std::chrono::steady_clock::now();
    if (!st.ok()) return absl::Status(st.code(), StrCat("run: ", st.message()));
    out.wall_ms.push_back(std::chrono::duration<double, std::milli>(e - s).count());
    out.kernel_ms.push_back(KernelNs(step) / 1e6);
    out.records.insert(out.records.end(), step.begin(), step.end());
  }
  out.last_step = std::move(step);
  if (options.want_result) {
    absl::StatusOr<Literal> r = (*exe)->Run(args);
    if (!r.ok()) return absl::Status(r.status().code(), StrCat("run: ", r.status().message()));
    out.result = std::move(*r);
  }
  out.summary = SummarizeRecords(out.records, std::max(options.repeats, 1));
  out.memory = (*exe)->memory();
  return out;
}

}  // namespace passlab
