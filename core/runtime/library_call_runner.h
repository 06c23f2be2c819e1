// Library calls on the CPU: `__blas$gemm` on OpenBLAS, the `__dnn$conv*`
// targets on oneDNN and the solver calls (`__lapack$potrf`, `__blas$trsm`)
// on OpenBLAS's LAPACK/BLAS (core/libcall describes the targets and configs),
// with passlab's own reference (plain loops in the runtime, accumulating in
// f64; not the evaluator, so --check compares them with something else) as
// a fallback algorithm for every call. This is also the autotuning API the
// algorithm-picker pass uses: ListAlgorithms, then RunLibraryCall with each.
//
// Buffers follow core/codegen/compiled_kernel.h: one pointer per operand,
// then one per leaf of the result shape (a tuple (result, scratch) has two;
// the scratch buffer may be null).
#ifndef PASSLAB_CORE_RUNTIME_LIBRARY_CALL_RUNNER_H_
#define PASSLAB_CORE_RUNTIME_LIBRARY_CALL_RUNNER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace passlab {

class HloInstruction;

// Algorithm ids. Gemm: kGemmBlas (OpenBLAS), kGemmDnn (oneDNN's sgemm, f32
// compute) or kGemmReference. Convolution:
// the ConvAlgorithm values of core/libcall (auto, direct, winograd and
// as-backward-filter on oneDNN; reference).
inline constexpr int64_t kGemmBlas = 0;
inline constexpr int64_t kGemmReference = 1;
inline constexpr int64_t kGemmDnn = 2;
// Solver calls: kSolverLibrary (OpenBLAS's ?potrf / ?trsm) or kSolverReference.
inline constexpr int64_t kSolverLibrary = 0;
inline constexpr int64_t kSolverReference = 1;

struct LibraryAlgorithm {
  int64_t id = 0;
  std::string name;  // "blas", "onednn", "reference", "auto", "direct", "winograd"
  bool operator==(const LibraryAlgorithm&) const = default;
};

// The algorithms that can run `inst` here (a library call): the libraries'
// in id order, then the reference.
// oneDNN algorithms are listed only where oneDNN accepts the problem on this
// CPU (e.g. winograd needs 3x3, stride 1, f32 and an implementation for the
// host ISA); the reference is always listed.
absl::StatusOr<std::vector<LibraryAlgorithm>> ListAlgorithms(const HloInstruction& inst);

// A library call prepared once (configs parsed, library primitives created,
// scratch allocated) and run many times.
class LibraryCallRunner {
 public:
  // `algorithm`: an id from ListAlgorithms, or nullopt for the one recorded
  // in the instruction's backend_config (unset, or an id passlab does not
  // know such as a cuDNN/cuBLAS one from an XLA:GPU dump: the library's
  // default — OpenBLAS, oneDNN's auto where it takes the problem, else the
  // reference). An explicit id that cannot run the call is an error.
  static absl::StatusOr<std::unique_ptr<LibraryCallRunner>> Create(const HloInstruction& inst,
                                                                    std::optional<int64_t> algorithm = std::nullopt);
  virtual ~LibraryCallRunner() = default;

  // Runs the call once. Not thread-safe (library primitives hold scratch).
  virtual absl::Status Run(absl::Span<void* const> buffers) = 0;

  const LibraryAlgorithm& algorithm() const { return algorithm_; }
  const std::string& name() const { return name_; }
  // Work estimates for KernelRecords.
  int64_t flops() const { return flops_; }
  int64_t bytes_read() const { return bytes_read_; }
  int64_t bytes_written() const { return bytes_written_; }

 protected:
  LibraryAlgorithm algorithm_;
  std::string name_;
  int64_t flops_ = 0;
  int64_t bytes_read_ = 0;
  int64_t bytes_written_ = 0;
};

// The autotuning entry point: prepares `inst` with `algorithm`, runs it once
// on `buffers` (outputs written there) and returns the run's wall time in
// nanoseconds, preparation excluded. An algorithm that cannot run the call
// returns its error.
absl::StatusOr<int64_t> RunLibraryCall(const HloInstruction& inst, int64_t algorithm,
                                       absl::Span<void* const> buffers);

// One algorithm's result in TimeAlgorithms.
struct AlgorithmTiming {
  LibraryAlgorithm algorithm;
  absl::Status status;     // why it could not run, or disagreed with the others
  int64_t median_ns = 0;   // of the timed runs (after one warm-up run)
  double max_rel_error = 0;  // of result leaf 0 against the first algorithm that ran
};

// What the algorithm picker needs: every listed algorithm (the reference only
// when `include_reference`) run on `buffers`, one warm-up and `repeats` timed
// runs each, its result compared with the first algorithm's (an algorithm
// whose result differs by more than `tolerance`, relative, gets an error
// status). `buffers` hold the last algorithm's outputs afterwards.
absl::StatusOr<std::vector<AlgorithmTiming>> TimeAlgorithms(const HloInstruction& inst,
                                                            absl::Span<void* const> buffers, int repeats = 3,
                                                            bool include_reference = false, double tolerance = 1e-2);

// The fastest algorithm that ran and agreed, or an error when none did.
absl::StatusOr<LibraryAlgorithm> FastestAlgorithm(absl::Span<const AlgorithmTiming> timings);

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_LIBRARY_CALL_RUNNER_H_
