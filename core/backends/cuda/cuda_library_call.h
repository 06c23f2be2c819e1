// Library calls on the GPU: `__blas$gemm` on cuBLASLt and the `__dnn$conv*`
// targets on cuDNN 9 (legacy API), from the plans of cuda_library_plan.h.
// This is also the GPU half of the autotuning API (the CPU's is
// library_call_runner.h): ListCudaAlgorithms, then a CudaLibraryCall per
// algorithm run on given device buffers.
//
// Algorithm ids: gemm — the index into cuBLASLt's heuristic list for the
// problem (kCudaGemmHeuristics entries requested); convolution — cuDNN's
// legacy algorithm enum value (cudnnConvolutionFwdAlgo_t / BwdData /
// BwdFilter), or from kDnnEngineIdBase on an engine config of cuDNN's graph
// API (cudnn_engines.h), as XLA's algo_id names an engine. Internal to
// core/runtime's CUDA parts.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_CALL_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_CALL_H_

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/backends/cuda/cuda_driver.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {

class HloInstruction;

inline constexpr int kCudaGemmHeuristics = 8;

// A device allocation, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static absl::StatusOr<DeviceBuffer> Allocate(const CudaDevice& device, int64_t bytes, std::string_view what);
  DeviceBuffer(DeviceBuffer&& o) noexcept { *this = std::move(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  ~DeviceBuffer();
  CUdeviceptr ptr() const { return ptr_; }
  int64_t bytes() const { return bytes_; }

 private:
  const CudaDevice* device_ = nullptr;
  CUdeviceptr ptr_ = 0;
  int64_t bytes_ = 0;
};

// The library handles of one device and a workspace shared by the calls of
// one stream (calls on a stream run one after another).
class CudaLibraries {
 public:
  static absl::StatusOr<std::unique_ptr<CudaLibraries>> Create(const CudaDevice& device);
  ~CudaLibraries();
  const CudaDevice& device() const { return device_; }
  void* blas_lt() const { return blas_lt_; }  // cublasLtHandle_t
  void* dnn() const { return dnn_; }          // cudnnHandle_t
  // Grows the workspace to at least `bytes` (only between runs).
  absl::Status ReserveWorkspace(int64_t bytes);
  CUdeviceptr workspace() const { return workspace_.ptr(); }
  int64_t workspace_bytes() const { return workspace_.bytes(); }
  // Whether calls created from now on may use TF32 where their plan allows
  // it (CudaExecutableOptions::allow_tf32; false from the start when the
  // environment sets NVIDIA_TF32_OVERRIDE=0).
  bool allow_tf32() const { return allow_tf32_; }
  void set_allow_tf32(bool allow) { allow_tf32_ = allow; }

 private:
  explicit CudaLibraries(const CudaDevice& d) : device_(d) {}
  const CudaDevice& device_;
  void* blas_lt_ = nullptr;
  void* dnn_ = nullptr;
  bool allow_tf32_ = true;
  DeviceBuffer workspace_;
};

class CudaLibraryCall {
 public:
  // `algorithm`: an id from ListCudaAlgorithms, or nullopt for the one in
  // the backend_config when the library offers it for this problem, else
  // the library's first (heuristic) choice. Errors are kUnimplemented when
  // the library cannot take the call as laid out (the executor then runs it
  // on the host).
  static absl::StatusOr<std::unique_ptr<CudaLibraryCall>> Create(const HloInstruction& inst, CudaLibraries& libraries,
                                                                 std::optional<int64_t> algorithm = std::nullopt);
  virtual ~CudaLibraryCall() = default;
  // Enqueues the call on `stream`; buffers follow compiled_kernel.h (operands,
  // then result leaves).
  virtual absl::Status Run(absl::Span<const CUdeviceptr> buffers, CUstream stream) = 0;

  const LibraryAlgorithm& algorithm() const { return algorithm_; }
  int64_t workspace_bytes() const { return workspace_bytes_; }
  int64_t flops() const { return flops_; }
  const std::string& plan() const { return plan_; }  // the plan's text (for ToString)
  bool tf32() const { return tf32_; }  // f32 computed on TF32 tensor cores

 protected:
  LibraryAlgorithm algorithm_;
  int64_t workspace_bytes_ = 0;
  int64_t flops_ = 0;
  std::string plan_;
  bool tf32_ = false;
};

// The algorithms the library offers for `inst`, in the library's order
// (heuristics first).
absl::StatusOr<std::vector<LibraryAlgorithm>> ListCudaAlgorithms(const HloInstruction& inst,
                                                                 CudaLibraries& libraries);

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_CALL_H_
