#include "core/backend/compiler.h"

#include <chrono>

#include "core/ir/str_util.h"
#include "passes/autotune/autotune_scope.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

namespace passlab::backend {

// The session's pass options with the device's defaults under them. On the
// CUDA backend layout assignment gives cuDNN convolutions XLA:GPU's OHWI
// filters (layout-assignment.xla_filter_layout, XLA's
// gpu_layout_assignment.cc): measured on an H200, the ResNet-50 step took
// 4.72 ms of kernel time and 5.45 ms wall against 4.86 and 5.79 with the
// filters as they lie (docs/gpu-results.md, fifth session). The CPU keeps
// filters as they lie (oneDNN reorders every filter itself; OHWI copies
// cost it 20-40 ms per ResNet-50 step). A user's --pass-option wins.
absl::StatusOr<PassOptionOverrides> PassOptionsWithDeviceDefaults(const Session& session,
                                                                  std::string_view pipeline_name) {
  PassOptionOverrides overrides = session.pass_options;
  if (session.device != "cuda") return overrides;
  absl::StatusOr<std::unique_ptr<HloPassPipeline>> named = BuildNamedPipeline(pipeline_name);
  if (!named.ok()) return overrides;  // BuildFilteredPipeline reports it
  bool has_layout_assignment = false;
  for (const PassOccurrence& o : (*named)->Occurrences()) has_layout_assignment |= o.pass_name == "layout-assignment";
  const PassRegistryEntry* entry = FindRegisteredPass("layout-assignment");
  if (!has_layout_assignment || entry == nullptr) return overrides;
  PassOptionValues& values = overrides.try_emplace("layout-assignment", entry->NewOptions()).first->second;
  if (!values.IsSet("xla_filter_layout")) {
    if (absl::Status s = values.Set("layout-assignment", "xla_filter_layout", "true"); !s.ok()) return s;
  }
  return overrides;
}

absl::Status Compiler::Optimize(HloModule& module, const OptimizeOptions& options) const {
  if (options.pipeline == "none") return absl::OkStatus();
  absl::StatusOr<PassOptionOverrides> overrides = PassOptionsWithDeviceDefaults(session_, options.pipeline);
  if (!overrides.ok()) return overrides.status();
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(
      options.pipeline, options.disable, options.enable_only, false, *overrides, options.removed);
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
