#include "core/backend/compiler.h"

#include <chrono>

#include "core/backend/backend_internal.h"
#include "core/ir/str_util.h"
#include "passes/autotune/autotune_scope.h"
#include "passes/pipelines/pipelines.h"

namespace passlab::backend {
#ifndef PASSLAB_HAVE_CUDA
namespace {

// A build without the CUDA runtime still names its devices: compiling for
// one says why it cannot.
class UnbuiltCudaCompiler : public Compiler {
 public:
  using Compiler::Compiler;
  absl::StatusOr<std::unique_ptr<Executable>> Compile(const HloModule&) override {
    return absl::UnavailableError("the cuda backend was not built (no CUDA toolkit at configure time)");
  }
};

}  // namespace
#endif

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

absl::StatusOr<std::unique_ptr<Compiler>> CreateCompiler(Session session) {
  absl::StatusOr<DeviceName> device = ParseDeviceName(session.device);
  if (!device.ok()) return device.status();
  if (session.autotune_cache == nullptr) session.autotune_cache = std::make_shared<AutotuneCache>();
  if (device->platform == "cpu") return CreateCpuCompiler(std::move(session));
#ifdef PASSLAB_HAVE_CUDA
  return CreateCudaCompiler(std::move(session), device->ordinal);
#else
  return std::unique_ptr<Compiler>(new UnbuiltCudaCompiler(std::move(session)));
#endif
}

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
