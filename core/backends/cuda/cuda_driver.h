// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and the
// entry points the CUDA runtime uses, resolved once per process. Binaries
// never link the driver (the stub would stop them from starting on machines
// without one); without a driver or device every entry point reports a clean
// Status instead: "no CUDA driver (libcuda.so.1 not found)", "no CUDA device".
//
// Internal to core/runtime's CUDA parts (it includes <cuda.h>); the public
// headers (cuda_executable.h, cupti_tracer.h) keep CUDA types out.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_DRIVER_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <string>
#include <string_view>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace passlab {

// The resolved driver entry points (names as <cuda.h> maps them, e.g.
// cuMemAlloc is cuMemAlloc_v2).
struct CudaDriverApi {
#define PASSLAB_CUDA_DRIVER_FUNCTIONS(X)                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)  \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)     \
  X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)   \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) \
  X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)       \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate)        \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuStreamBeginCapture)   \
  X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)    \
  X(cuGraphGetNodes)
#define PASSLAB_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  PASSLAB_CUDA_DRIVER_FUNCTIONS(PASSLAB_CUDA_DRIVER_MEMBER)
#undef PASSLAB_CUDA_DRIVER_MEMBER
};

class CudaDriver {
 public:
  // The process-wide driver: loads libcuda.so.1 and calls cuInit(0) once.
  // Errors: "no CUDA driver (libcuda.so.1 not found)", a missing entry point,
  // or cuInit's error ("cuInit: CUDA_ERROR_NO_DEVICE").
  static absl::StatusOr<const CudaDriver*> Get();
  // Loads `library` afresh (tests; another driver build). Not cached.
  static absl::StatusOr<const CudaDriver*> LoadFrom(const std::string& library);

  const CudaDriverApi& api() const { return api_; }
  // OK for CUDA_SUCCESS, else an error naming the call and the result:
  // "cuModuleLoadData(fusion.3): CUDA_ERROR_INVALID_PTX".
  absl::Status Check(CUresult result, std::string_view call) const;

 private:
  CudaDriver() = default;
  void* handle_ = nullptr;
  CudaDriverApi api_;
};

// The status code a CUresult maps to (kUnavailable for missing devices and
// drivers, kResourceExhausted for out-of-memory, kInvalidArgument for bad
// PTX or values, kInternal otherwise).
absl::StatusCode CudaStatusCode(CUresult result);

// One device with its primary context (CUDA 13 replaced cuCtxCreate by
// cuCtxCreate_v4; the primary context is the one cuBLAS and cuDNN use too).
class CudaDevice {
 public:
  // "no CUDA device" when the driver sees none, or `ordinal` is out of range.
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal = 0);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // Makes the primary context current on the calling thread.
  absl::Status Activate() const;
  const CudaDriver& driver() const { return *driver_; }
  const CudaDriverApi& api() const { return driver_->api(); }
  absl::Status Check(CUresult r, std::string_view call) const { return driver_->Check(r, call); }

  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  const std::string& name() const { return name_; }
  int compute_capability_major() const { return cc_major_; }
  int compute_capability_minor() const { return cc_minor_; }
  int multiprocessors() const { return multiprocessors_; }
  int64_t total_memory_bytes() const { return total_memory_; }
  // "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.1 GiB)"
  std::string Describe() const;

 private:
  CudaDevice() = default;
  const CudaDriver* driver_ = nullptr;
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int cc_major_ = 0, cc_minor_ = 0, multiprocessors_ = 0;
  int64_t total_memory_ = 0;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_DRIVER_H_
