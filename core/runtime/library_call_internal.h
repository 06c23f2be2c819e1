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
// oneDNN's sgemm: f32 compute (bf16/f16 through f32), plain layouts.
bool DnnGemmSupports(const HloInstruction& inst, const GemmCall& call);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateDnnGemmRunner(const HloInstruction& inst, GemmCall call);

// conv_runner.cc: oneDNN; `algorithm` is any but kReference.
bool DnnAccepts(const HloInstruction& inst, const ConvCall& call, ConvAlgorithm algorithm);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateDnnConvRunner(const HloInstruction& inst, ConvCall call,
                                                                       ConvAlgorithm algorithm);

// solver_runner.cc: ?potrf (LAPACK) and ?trsm (BLAS) on OpenBLAS, for f32/f64
// row-major matrices.
bool SolverLibrarySupports(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateSolverLibraryRunner(const HloInstruction& inst);

// The "reference" algorithm of every call: plain loops in the runtime,
// independent of the libraries and of the evaluator (which tests use as the
// oracle), accumulating in f64. library_call_runner.cc picks by kind among
// reference_gemm.cc (a batched triple loop), reference_conv.cc (the
// convolution's defining sum, reference_conv.h) and reference_solver.cc
// (Cholesky-Banachiewicz and substitution, not LAPACK).
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceRunner(const HloInstruction& inst,
                                                                         LibraryAlgorithm algorithm);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceGemmRunner(const HloInstruction& inst,
                                                                             LibraryAlgorithm algorithm);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceConvRunner(const HloInstruction& inst,
                                                                             LibraryAlgorithm algorithm);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceSolverRunner(const HloInstruction& inst,
                                                                               LibraryAlgorithm algorithm);

// 2 per multiply-add of the call's product (0 when it does not analyze).
int64_t LibraryCallFlops(const HloInstruction& inst);

// A reference runner's name, algorithm and work estimates, from `inst`.
class ReferenceRunnerBase : public LibraryCallRunner {
 protected:
  ReferenceRunnerBase(const HloInstruction& inst, LibraryAlgorithm algorithm);
  // The buffer count Run expects: operands, then the result leaves.
  absl::Status CheckBuffers(absl::Span<void* const> buffers) const;
  int64_t operand_count_ = 0;
  int64_t result_leaves_ = 0;
};

// An array buffer of a plain layout as doubles in physical order (f16, bf16,
// f32, f64), and back (rounding to the type).
std::vector<double> ReadBufferValues(const Shape& shape, const void* buffer);
void WriteBufferValues(const Shape& shape, const std::vector<double>& values, void* buffer);

}  // namespace passlab::runtime_internal

#endif  // PASSLAB_CORE_RUNTIME_LIBRARY_CALL_INTERNAL_H_
