#include "core/runtime/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "absl/strings/str_format.h"
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
  if (absl::Status s = driver->Check(init, "cuInit"); !s.ok()) return s;
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
  absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
  if (!driver.ok()) return driver.status();
  const CudaDriverApi& api = (*driver)->api();
  int count = 0;
  if (absl::Status s = (*driver)->Check(api.cuDeviceGetCount(&count), "cuDeviceGetCount"); !s.ok()) return s;
  if (count == 0) return absl::UnavailableError("no CUDA device");
  if (ordinal < 0 || ordinal >= count) {
    return absl::UnavailableError(StrCat("no CUDA device ", ordinal, " (", count, " present)"));
  }
  std::unique_ptr<CudaDevice> d(new CudaDevice());
  d->driver_ = *driver;
  d->ordinal_ = ordinal;
  if (absl::Status s = d->Check(api.cuDeviceGet(&d->device_, ordinal), "cuDeviceGet"); !s.ok()) return s;
  char name[256] = {};
  if (absl::Status s = d->Check(api.cuDeviceGetName(name, sizeof(name), d->device_), "cuDeviceGetName"); !s.ok()) {
    return s;
  }
  d->name_ = name;
  auto attribute = [&](CUdevice_attribute a, int& out, const char* what) {
    return d->Check(api.cuDeviceGetAttribute(&out, a, d->device_), StrCat("cuDeviceGetAttribute(", what, ")"));
  };
  if (absl::Status s = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->cc_major_, "cc major"); !s.ok()) {
    return s;
  }
  if (absl::Status s = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->cc_minor_, "cc minor"); !s.ok()) {
    return s;
  }
  if (absl::Status s = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->multiprocessors_, "SMs"); !s.ok()) {
    return s;
  }
  size_t bytes = 0;
  if (absl::Status s = d->Check(api.cuDeviceTotalMem(&bytes, d->device_), "cuDeviceTotalMem"); !s.ok()) return s;
  d->total_memory_ = static_cast<int64_t>(bytes);
  if (absl::Status s = d->Check(api.cuDevicePrimaryCtxRetain(&d->context_, d->device_), "cuDevicePrimaryCtxRetain");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = d->Activate(); !s.ok()) return s;
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
