// backend::Compiler: the one way from an HloModule to a timed run, for
// every front end (`passlab run`, the GUI, the ablation worker), as XLA's
// Compiler (RunHloPasses, then RunBackend -> Executable):
//   Optimize  runs a named pipeline (passes/pipelines) with a pass filter,
//             the session's pass options and the caller's observers, with
//             the session's autotuning settings (cache, timer) in force;
//   Compile   turns the optimized module into a backend::Executable for the
//             session's device: the CPU (the CPU code generator's kernels on
//             core/runtime's Executable) or a CUDA device (the NVPTX code
//             generator's kernels on core/runtime's CudaExecutable; an op it
//             cannot compile runs on the host, shown as a "host: ..."
//             routine).
// CreateCompiler picks the backend by the session's device name.
//
// core/backend sits above passes/ (Optimize builds the named pipelines), the
// only core folder that does; its CUDA part (cuda_backend.cc) is built only
// with the CUDA runtime, and no header here includes a CUDA header.
#ifndef PASSLAB_CORE_BACKEND_COMPILER_H_
#define PASSLAB_CORE_BACKEND_COMPILER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/backend/executable.h"
#include "core/backend/session.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/pass/pass_observer.h"

namespace passlab::backend {

struct OptimizeOptions {
  // A pipeline name of passes/pipelines/pipelines.h ("gpu", "gpu-2021", a
  // sub-pipeline); "none" runs nothing.
  std::string pipeline = "gpu";
  std::string disable;      // pass filters to skip (--disable)
  std::string enable_only;  // XLA's --xla_enable_hlo_passes_only
  std::vector<std::string> removed;  // passes taken out first (--xla_disable_hlo_passes)
  std::vector<PassObserver*> observers;  // attached in this order, after the filter
};

// The session's --pass-option overrides with the device's defaults under
// them, for pipeline `pipeline_name`: on "cuda", layout-assignment's
// xla_filter_layout (XLA:GPU's OHWI filters for cuDNN) unless the user set
// it or the pipeline runs no layout assignment; elsewhere the overrides as
// they are.
absl::StatusOr<PassOptionOverrides> PassOptionsWithDeviceDefaults(const Session& session,
                                                                  std::string_view pipeline_name);

class Compiler {
 public:
  explicit Compiler(Session session) : session_(std::move(session)) {}
  virtual ~Compiler() = default;

  const Session& session() const { return session_; }

  // Errors are the pipeline's (a pass's failure, a bad filter or option).
  absl::Status Optimize(HloModule& module, const OptimizeOptions& options) const;
  // The module must outlive the executable.
  virtual absl::StatusOr<std::unique_ptr<Executable>> Compile(const HloModule& module) = 0;

 protected:
  Session session_;
};

// The compiler for session.device: "cpu", "cuda" or "cuda:N". Any other
// name is an InvalidArgument error. A CUDA compiler is created without
// looking for a device; Compile reports a missing driver or device ("no
// CUDA driver (libcuda.so.1 not found)", "no CUDA device"), and in a build
// without the CUDA runtime, that the cuda backend was not built.
absl::StatusOr<std::unique_ptr<Compiler>> CreateCompiler(Session session);

// Compile, then Executable::Profile: what `passlab run` and the GUI's
// Kernels panel do with an optimized module. Errors say which phase failed
// ("compile: ...", "run: ...").
absl::StatusOr<ProfileResult> CompileAndProfile(Compiler& compiler, const HloModule& module,
                                                absl::Span<const Literal> args, const ProfileOptions& options);

}  // namespace passlab::backend

#endif  // PASSLAB_CORE_BACKEND_COMPILER_H_
