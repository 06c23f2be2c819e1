#include "core/backends/cuda/cuda_autotuner.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/backends/cuda/cuda_driver.h"
#include "core/backends/cuda/cuda_library_call.h"
#include "core/runtime/host_buffer.h"

namespace passlab {

absl::Status CheckRedZones(const std::vector<uint8_t>& guarded, int64_t red_zone_bytes, std::string_view what) {
  int64_t n = static_cast<int64_t>(guarded.size());
  for (int64_t i = 0; i < n; ++i) {
    bool guard = i < red_zone_bytes || i >= n - red_zone_bytes;
    if (guard && guarded[i] != kCudaRedZoneByte) {
      int64_t offset = i < red_zone_bytes ? i - red_zone_bytes : i - (n - red_zone_bytes);
      return absl::DataLossError(StrCat(what, ": red zone overwritten at byte ", offset,
                                        i < red_zone_bytes ? " before the buffer" : " after the buffer"));
    }
  }
  return absl::OkStatus();
}

namespace {

// One device buffer with red zones on both sides.
struct GuardedDeviceBuffer {
  Shape shape;
  int64_t bytes = 0;
  DeviceBuffer storage;
  CUdeviceptr data() const { return storage.ptr() + kCudaRedZoneBytes; }
};

absl::StatusOr<GuardedDeviceBuffer> Guarded(const CudaDevice& device, const Shape& shape, std::string_view what) {
  GuardedDeviceBuffer b;
  b.shape = shape;
  b.bytes = shape.IsArray() ? BufferBytes(shape) : 0;
  ASSIGN_OR_RETURN(DeviceBuffer s, DeviceBuffer::Allocate(device, b.bytes + 2 * kCudaRedZoneBytes, what));
  b.storage = std::move(s);
  RETURN_IF_ERROR(
      device.Check(device.api().cuMemsetD8Async(b.storage.ptr(), kCudaRedZoneByte, b.storage.bytes(), nullptr),
                   StrCat("cuMemsetD8(", what, " red zones)")));
  if (b.bytes > 0) {
    RETURN_IF_ERROR(device.Check(device.api().cuMemsetD8Async(b.data(), 0, b.bytes, nullptr), "cuMemsetD8"));
  }
  return b;
}

absl::Status Upload(const CudaDevice& device, const GuardedDeviceBuffer& b, const std::vector<uint8_t>& host) {
  if (b.bytes == 0) return absl::OkStatus();
  return device.Check(device.api().cuMemcpyHtoD(b.data(), host.data(), b.bytes), "cuMemcpyHtoD(autotune)");
}

std::vector<uint8_t> RandomBytes(const Shape& shape, std::mt19937_64& rng) {
  std::vector<uint8_t> host(shape.IsArray() ? BufferBytes(shape) : 0, 0);
  if (host.empty() || !IsFloatingPointType(shape.element_type())) return host;
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int64_t i = 0; i < shape.element_count(); ++i) WriteFloat(shape.element_type(), host.data(), i, dist(rng));
  return host;
}

absl::StatusOr<std::vector<double>> Download(const CudaDevice& device, const GuardedDeviceBuffer& b) {
  std::vector<uint8_t> host(b.bytes);
  if (b.bytes > 0) {
    RETURN_IF_ERROR(device.Check(device.api().cuMemcpyDtoH(host.data(), b.data(), b.bytes), "cuMemcpyDtoH"));
  }
  std::vector<double> v;
  if (!IsFloatingPointType(b.shape.element_type())) return v;
  for (int64_t i = 0; i < b.shape.element_count(); ++i) v.push_back(ReadFloat(b.shape.element_type(), host.data(), i));
  return v;
}

absl::Status CheckDeviceRedZones(const CudaDevice& device, const GuardedDeviceBuffer& b, std::string_view what) {
  std::vector<uint8_t> host(b.storage.bytes());
  RETURN_IF_ERROR(device.Check(device.api().cuMemcpyDtoH(host.data(), b.storage.ptr(), host.size()),
                               "cuMemcpyDtoH(red zones)"));
  return CheckRedZones(host, kCudaRedZoneBytes, what);
}

double MaxRelativeError(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    double err = std::abs(got[i] - want[i]) / (1 + std::abs(want[i]));
    if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
  }
  return worst;
}

}  // namespace

absl::StatusOr<std::vector<AlgorithmTiming>> TimeCudaAlgorithms(const HloInstruction& inst,
                                                                 const CudaAutotuneOptions& options) {
  std::vector<AlgorithmTiming> out;
  if (options.level <= 0) return out;
  ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> device, CudaDevice::Open(options.device_ordinal));
  const CudaDevice& d = *device;
  const CudaDriverApi& api = d.api();
  ASSIGN_OR_RETURN(std::unique_ptr<CudaLibraries> libraries, CudaLibraries::Create(d));
  ASSIGN_OR_RETURN(std::vector<LibraryAlgorithm> algorithms, ListCudaAlgorithms(inst, *libraries));

  std::vector<GuardedDeviceBuffer> buffers;
  std::vector<Shape> shapes;
  for (const HloInstruction* op : inst.operands()) shapes.push_back(LeafShapes(op->shape())[0]);
  int64_t operands = static_cast<int64_t>(shapes.size());
  for (const Shape& s : LeafShapes(inst.shape())) shapes.push_back(s);
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < shapes.size(); ++i) {
    ASSIGN_OR_RETURN(GuardedDeviceBuffer b, Guarded(d, shapes[i], StrCat(inst.name(), " buffer ", i)));
    if (options.level >= 2 && static_cast<int64_t>(i) < operands) {
      RETURN_IF_ERROR(Upload(d, b, RandomBytes(shapes[i], rng)));
    }
    buffers.push_back(std::move(b));
  }
  std::vector<CUdeviceptr> ptrs;
  for (const GuardedDeviceBuffer& b : buffers) ptrs.push_back(b.bytes > 0 ? b.data() : 0);
  CUstream stream = nullptr;
  RETURN_IF_ERROR(d.Check(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  CUevent start = nullptr, end = nullptr;
  api.cuEventCreate(&start, CU_EVENT_DEFAULT);
  api.cuEventCreate(&end, CU_EVENT_DEFAULT);
  std::vector<double> reference;
  std::string reference_name;
  bool have_reference = false;
  for (const LibraryAlgorithm& a : algorithms) {
    if (std::find(options.denied.begin(), options.denied.end(), a.id) != options.denied.end()) continue;
    AlgorithmTiming t;
    t.algorithm = a;
    if (options.level >= 3) {
      for (size_t i = operands; i < buffers.size(); ++i) {
        RETURN_IF_ERROR(Upload(d, buffers[i], RandomBytes(shapes[i], rng)));
      }
    }
    absl::StatusOr<std::unique_ptr<CudaLibraryCall>> call = CudaLibraryCall::Create(inst, *libraries, a.id);
    if (!call.ok()) {
      t.status = call.status();
      out.push_back(std::move(t));
      continue;
    }
    std::vector<int64_t> times;
    absl::Status ran = (*call)->Run(ptrs, stream);  // warm-up
    for (int r = 0; ran.ok() && r < options.repeats; ++r) {
      api.cuEventRecord(start, stream);
      ran = (*call)->Run(ptrs, stream);
      api.cuEventRecord(end, stream);
      if (!ran.ok()) break;
      ran = d.Check(api.cuEventSynchronize(end), "cuEventSynchronize");
      float ms = 0;
      if (ran.ok()) ran = d.Check(api.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
      times.push_back(static_cast<int64_t>(ms * 1e6));
    }
    if (ran.ok()) ran = d.Check(api.cuStreamSynchronize(stream), "cuStreamSynchronize");
    if (!ran.ok()) {
      t.status = ran;
      out.push_back(std::move(t));
      continue;
    }
    std::sort(times.begin(), times.end());
    t.median_ns = times.empty() ? 0 : times[times.size() / 2];
    if (options.level >= 4) {
      for (size_t i = 0; i < buffers.size() && t.status.ok(); ++i) {
        t.status = CheckDeviceRedZones(d, buffers[i], StrCat(a.name, " buffer ", i));
      }
      if (t.status.ok() && static_cast<int64_t>(buffers.size()) > operands) {
        ASSIGN_OR_RETURN(std::vector<double> result, Download(d, buffers[operands]));
        if (!have_reference) {
          reference = std::move(result);
          reference_name = a.name;
          have_reference = true;
        } else {
          t.max_rel_error = MaxRelativeError(result, reference);
          if (!(t.max_rel_error <= options.tolerance)) {
            t.status = absl::DataLossError(StrCat(a.name, ": wrong result (max relative error ", t.max_rel_error,
                                                  " against ", reference_name, ")"));
          }
        }
      }
    }
    out.push_back(std::move(t));
  }
  api.cuEventDestroy(start);
  api.cuEventDestroy(end);
  api.cuStreamDestroy(stream);
  return out;
}

}  // namespace passlab
