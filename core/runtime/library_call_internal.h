// Internals of library_call_runner.cc, one factory per library.
#ifndef PASSLAB_CORE_RUNTIME_LIBRARY_CALL_INTERNAL_H_
#define PASSLAB_CORE_RUNTIME_LIBRARY_CALL_INTERNAL_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/libcall/library_call.h"
#include "core/runtime/library_call_runner.h"

namespace passlab::runtime_internal {

// gemm_runner.cc: OpenBLAS (f32/f64 compute; bf16/f16 through f32).
bool BlasSupports(const HloInstruction& inst, const GemmCall& call);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateBlasGemmRunner(const HloInstruction& inst, GemmCall call);

// conv_runner.cc: oneDNN; `algorithm` is kAuto, kDirect or kWinograd.
bool DnnAccepts(const HloInstruction& inst, const ConvCall& call, ConvAlgorithm algorithm);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateDnnConvRunner(const HloInstruction& inst, ConvCall call,
                                                                       ConvAlgorithm algorithm);

// solver_runner.cc: ?potrf (LAPACK) and ?trsm (BLAS) on OpenBLAS, for f32/f64
// row-major matrices.
bool SolverLibrarySupports(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateSolverLibraryRunner(const HloInstruction& inst);

// library_call_runner.cc: the evaluator's semantics on the buffers.
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceRunner(const HloInstruction& inst,
                                                                         LibraryAlgorithm algorithm);

}  // namespace passlab::runtime_internal

#endif  // PASSLAB_CORE_RUNTIME_LIBRARY_CALL_INTERNAL_H_
