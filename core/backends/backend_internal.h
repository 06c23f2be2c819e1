// The backends behind CreateCompiler and UseDeviceAutotuning
// (backends.cc): the CPU's (cpu/cpu_backend.cc) and, in a build with the
// CUDA toolkit, the CUDA one's (cuda/cuda_backend.cc).
#ifndef PASSLAB_CORE_BACKENDS_BACKEND_INTERNAL_H_
#define PASSLAB_CORE_BACKENDS_BACKEND_INTERNAL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "core/backend/compiler.h"
#include "core/backend/session.h"

namespace passlab::backend {

std::unique_ptr<Compiler> CreateCpuCompiler(Session session);

#ifdef PASSLAB_HAVE_CUDA
std::unique_ptr<Compiler> CreateCudaCompiler(Session session, int ordinal);
// The algorithm pickers' timer on CUDA device `ordinal`, or why there is
// none.
absl::StatusOr<AlgorithmTimer> CudaAlgorithmTimer(int ordinal);
#endif

}  // namespace passlab::backend

#endif  // PASSLAB_CORE_BACKENDS_BACKEND_INTERNAL_H_
