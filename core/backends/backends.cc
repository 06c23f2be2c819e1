// The backends behind the interface of core/backend: CreateCompiler and
// UseDeviceAutotuning choose the CPU backend (core/backends/cpu) or, in a
// build with the CUDA toolkit, the CUDA one (core/backends/cuda) by device
// name.
#include <memory>
#include <utility>

#include "core/backend/compiler.h"
#include "core/backend/session.h"
#include "core/backends/backend_internal.h"

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

absl::Status UseDeviceAutotuning(Session& session) {
  absl::StatusOr<DeviceName> device = ParseDeviceName(session.device);
  if (!device.ok()) return device.status();
  if (device->platform == "cpu") {
    session.autotune_timer.reset();
    return absl::OkStatus();
  }
#ifdef PASSLAB_HAVE_CUDA
  absl::StatusOr<AlgorithmTimer> timer = CudaAlgorithmTimer(device->ordinal);
  if (!timer.ok()) return timer.status();
  session.autotune_timer = std::move(*timer);
  return absl::OkStatus();
#else
  return absl::UnavailableError("the cuda backend was not built (no CUDA toolkit at configure time)");
#endif
}

}  // namespace passlab::backend
