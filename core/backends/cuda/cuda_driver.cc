#include "core/backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "absl/strings/str_format.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

constexpr char kDriverLibrary[] = "libcuda.so.1";

#define PASSLAB_STRINGIFY_INNER(x) #x
// The symbol <cuda.h> maps a name to (cuMemAlloc -> "cuMemAlloc_v2").
#define PASSLAB_STRINGIFY(x) PASSLAB_STRINGIFY_INNER(x)

absl::StatusOr<const CudaDriver*> Load(const std::string& library, CudaDriverApi& api, void*& handle) {
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return absl::UnavailableError(StrCat("no CUDA driver (", library, " not found)"));
#define PASSLAB_RESOLVE(name)                                                                          \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, PASSLAB_STRINGIFY(name)));              \
  if (api.name == nullptr) {                                                                           \
    return absl::UnavailableError(                                                                     \
        StrCat("CUDA driver ", library, " lacks ", PASSLAB_STRINGIFY(name), " (driver older than CUDA 13?)")); \
  }
  PASSLAB_CUDA_DRIVER_FUNCTIONS(PASSLAB_RESOLVE)
#undef PASSLAB_RESOLVE
  return nullptr;
}

}  // namespace

absl::StatusCode CudaStatusCode(CUresult result) {
  switch (result) {
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return absl::StatusCode::kUnavailable;
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_HANDLE:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::StatusOr<const CudaDriver*> CudaDriver::LoadFrom(const std::string& library) {
  std::unique_ptr<CudaDriver> driver(new CudaDriver());
  absl::StatusOr<const CudaDriver*> loaded = Load(library, driver->api_, driver->handle_);
  if (!loaded.ok()) {
    if (driver->handle_ != nullptr) dlclose(driver->handle_);
    return loaded.status();
  }
  CUresult init = driver->api_.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) return absl::UnavailableError("no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
  RETURN_IF_ERROR(driver->Check(init, "cuInit"));
  // Drivers stay loaded for the process's lifetime (contexts, modules and
  // library handles may refer to them until exit).
  return driver.release();
}

absl::StatusOr<const CudaDriver*> CudaDriver::Get() {
  static absl::StatusOr<const CudaDriver*>* driver = new absl::StatusOr<const CudaDriver*>(LoadFrom(kDriverLibrary));
  return *driver;
}

absl::Status CudaDriver::Check(CUresult result, std::string_view call) const {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  const char* name = nullptr;
  if (api_.cuGetErrorName == nullptr || api_.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return absl::Status(CudaStatusCode(result), StrCat(call, ": CUDA error ", static_cast<int>(result)));
  }
  return absl::Status(CudaStatusCode(result), StrCat(call, ": ", name));
}

// ---------------------------------------------------------------- CudaDevice

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  ASSIGN_OR_RETURN(const CudaDriver* driver, CudaDriver::Get());
  const CudaDriverApi& api = driver->api();
  int count = 0;
  RETURN_IF_ERROR(driver->Check(api.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (count == 0) return absl::UnavailableError("no CUDA device");
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError(StrCat("no CUDA device ", ordinal, " (", count, " present)"));
  }
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  d->driver_ = driver;
  d->ordinal_ = ordinal;
  RETURN_IF_ERROR(d->Check(api.cuDeviceGet(&d->device_, ordinal), "cuDeviceGet"));
  char name[256] = {};
  RETURN_IF_ERROR(d->Check(api.cuDeviceGetName(name, sizeof(name), d->device_), "cuDeviceGetName"));
  d->name_ = name;
  auto attribute = [&](CUdevice_attribute a, int& out, const char* what) {
    return d->Check(api.cuDeviceGetAttribute(&out, a, d->device_), StrCat("cuDeviceGetAttribute(", what, ")"));
  };
  RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->cc_major_, "cc major"));
  RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->cc_minor_, "cc minor"));
  RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->multiprocessors_, "SMs"));
  size_t bytes = 0;
  RETURN_IF_ERROR(d->Check(api.cuDeviceTotalMem(&bytes, d->device_), "cuDeviceTotalMem"));
  d->total_memory_ = static_cast<int64_t>(bytes);
  RETURN_IF_ERROR(d->Check(api.cuDevicePrimaryCtxRetain(&d->context_, d->device_), "cuDevicePrimaryCtxRetain"));
  RETURN_IF_ERROR(d->Activate());
  return d;
}

CudaDevice::~CudaDevice() {
  if (context_ != nullptr) api().cuDevicePrimaryCtxRelease(device_);
}

absl::Status CudaDevice::Activate() const { return Check(api().cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

std::string CudaDevice::Describe() const {
  return StrCat("cuda:", ordinal_, " (", name_, ", sm_", cc_major_, cc_minor_, ", ", multiprocessors_, " SMs, ",
                absl::StrFormat("%.1f", total_memory_ / double(int64_t{1} << 30)), " GiB)");
}

}  // namespace passlab
