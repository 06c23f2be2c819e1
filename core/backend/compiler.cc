#include "core/backend/compiler.h"

#include <chrono>

#include "core/ir/str_util.h"
#include "passes/autotune/autotune_scope.h"
#include "passes/pipelines/pipelines.h"

namespace passlab::backend {

absl::Status Compiler::Optimize(HloModule& module, const OptimizeOptions& options) const {
  if (options.pipeline == "none") return absl::OkStatus();
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(
      options.pipeline, options.disable, options.enable_only, false, session_.pass_options, options.removed);
  if (!pipeline.ok()) return pipeline.status();
  for (PassObserver* observer : options.observers) pipeline->pipeline->AddObserver(observer);
  // The algorithm pickers time library calls while the pipeline runs.
  session_.ApplyLibrarySettings();
  ScopedAutotuneSettings autotune(*session_.autotune_cache, session_.autotune_timer);
  return pipeline->pipeline->Run(module).status();
}

// CreateCompiler: core/backends/backends.cc (it chooses among the backends).

absl::StatusOr<ProfileResult> CompileAndProfile(Compiler& compiler, const HloModule& module,
                                                absl::Span<const Literal> args, const ProfileOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<Executable>> exe = compiler.Compile(module);
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile: ", exe.status().message()));
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  absl::StatusOr<ProfileResult> profile = (*exe)->Profile(args, options);
  if (!profile.ok()) return profile.status();
  profile->compile_ms = compile_ms;
  return profile;
}

}  // namespace passlab::backend
