// GPU autotuning of library calls: what TimeAlgorithms (library_call_runner.h)
// does on the CPU, on the device — every algorithm cuBLASLt's heuristics or
// cuDNN offer for the call (ListCudaAlgorithms), run on device buffers with
// red zones, timed with CUDA events, checked against the first algorithm
// that ran — at XLA's autotune levels (seed 003; passes/autotune uses the
// same levels):
//   1  zero-initialised buffers          3  ... outputs re-randomised per algorithm
//   2  random operands                   4  ... results compared with the reference
//                                           algorithm and red zones checked
// Results are AlgorithmTiming rows, so FastestAlgorithm picks the winner and
// the chosen id goes into the backend_config (selected_algorithm / algo_id)
// and the autotune cache as on the CPU path.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_AUTOTUNER_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_AUTOTUNER_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {

class HloInstruction;

struct CudaAutotuneOptions {
  int level = 4;
  int repeats = 3;             // timed runs per algorithm, after a warm-up
  double tolerance = 1e-2;     // level 4: relative difference from the reference
  std::vector<int64_t> denied; // algorithm ids never to run
  int device_ordinal = 0;
};

// Guard bytes on each side of every buffer, and their value.
inline constexpr int64_t kCudaRedZoneBytes = 128;
inline constexpr uint8_t kCudaRedZoneByte = 0xA5;

// Whether the `red_zone_bytes` guard bytes on both sides of a buffer (the
// bytes of a guarded allocation) still hold kCudaRedZoneByte; the error
// names the first overwritten offset. Pure: tests feed host bytes.
absl::Status CheckRedZones(const std::vector<uint8_t>& guarded, int64_t red_zone_bytes, std::string_view what);

// Every algorithm's timing (denied ones left out); level 0 returns nothing.
absl::StatusOr<std::vector<AlgorithmTiming>> TimeCudaAlgorithms(const HloInstruction& inst,
                                                                 const CudaAutotuneOptions& options = {});

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_AUTOTUNER_H_
