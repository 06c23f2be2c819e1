#include "core/backends/cuda/cupti_tracer.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/backends/cuda/cuda_driver.h"

namespace passlab {

const char* CuptiMemcpyKindName(CuptiMemcpyKind kind) {
  switch (kind) {
    case CuptiMemcpyKind::kUnknown: return "memcpy";
    case CuptiMemcpyKind::kHostToDevice: return "HtoD";
    case CuptiMemcpyKind::kDeviceToHost: return "DtoH";
    case CuptiMemcpyKind::kDeviceToDevice: return "DtoD";
    case CuptiMemcpyKind::kOther: return "memcpy (other)";
  }
  return "memcpy";
}

namespace {

bool HasTimestamps(const CuptiActivity& a) { return a.start_ns != 0 && a.end_ns != 0 && a.end_ns >= a.start_ns; }

bool IsTimed(CuptiActivityKind kind) { return kind != CuptiActivityKind::kExternalCorrelation; }

void Accumulate(GpuKernelTime& t, const CuptiActivity& a, int64_t& first_start, int64_t& last_end) {
  int64_t duration = static_cast<int64_t>(a.end_ns - a.start_ns);
  if (a.kind == CuptiActivityKind::kKernel) {
    ++t.kernels;
    t.sum_ns += duration;
    first_start = std::min<int64_t>(first_start, a.start_ns);
    last_end = std::max<int64_t>(last_end, a.end_ns);
    t.envelope_ns = last_end - first_start;
    return;
  }
  t.memcpy_ns += duration;
  t.memcpy_bytes += static_cast<int64_t>(a.bytes);
}

KernelRecord ToKernelRecord(const CuptiActivity& a, const CuptiOperation* op, uint64_t origin) {
  KernelRecord r;
  r.device = StrCat("cuda:", a.device);
  r.start_ns = static_cast<int64_t>(a.start_ns) - static_cast<int64_t>(origin);
  r.end_ns = static_cast<int64_t>(a.end_ns) - static_cast<int64_t>(origin);
  r.thread = a.stream;
  r.correlation_id = a.correlation_id;
  switch (a.kind) {
    case CuptiActivityKind::kKernel:
      r.kind = op != nullptr ? op->kind : KernelKind::kEmitted;
      r.detail = a.name;  // the device function: which library kernel ran
      r.launch = LaunchDims{a.grid_x, a.grid_y, a.grid_z, a.block_x, a.block_y, a.block_z};
      r.registers = a.registers_per_thread;
      r.shared_memory_bytes = int64_t{a.static_shared_bytes} + a.dynamic_shared_bytes;
      break;
    case CuptiActivityKind::kMemcpy:
      r.kind = KernelKind::kCopy;
      r.detail = CuptiMemcpyKindName(a.memcpy_kind);
      r.bytes_read = r.bytes_written = static_cast<int64_t>(a.bytes);
      break;
    default:  // kMemset
      r.kind = KernelKind::kMemset;
      r.detail = "memset";
      r.bytes_written = static_cast<int64_t>(a.bytes);
      break;
  }
  if (op != nullptr) {
    r.name = op->hlo_instruction;
    r.hlo_instruction = op->hlo_instruction;
    r.hlo_computation = op->hlo_computation;
  } else {
    r.name = a.kind == CuptiActivityKind::kKernel ? a.name : r.detail;
  }
  return r;
}

}  // namespace

CuptiConversion ConvertCuptiActivities(absl::Span<const CuptiActivity> activities,
                                       const CuptiConversionOptions& options) {
  CuptiConversion out;
  // Launch (correlation id) -> passlab's run and operation ids.
  std::map<uint32_t, uint64_t> run_of, operation_of;
  for (const CuptiActivity& a : activities) {
    if (a.kind != CuptiActivityKind::kExternalCorrelation) continue;
    (a.external_kind == CuptiExternalKind::kRun ? run_of : operation_of)[a.correlation_id] = a.external_id;
  }
  struct Timed {
    const CuptiActivity* activity;
    uint64_t run;
    const CuptiOperation* operation;
  };
  std::vector<Timed> kept;
  for (const CuptiActivity& a : activities) {
    if (!IsTimed(a.kind)) continue;
    if (!HasTimestamps(a)) {
      ++out.dropped_zero_timestamp;
      continue;
    }
    switch (a.kind) {
      case CuptiActivityKind::kDriverApi:
      case CuptiActivityKind::kRuntimeApi:
        ++out.api_records;
        continue;
      case CuptiActivityKind::kOverhead:
        ++out.overhead_records;
        out.overhead_ns += static_cast<int64_t>(a.end_ns - a.start_ns);
        continue;
      default:
        break;
    }
    Timed t{&a, 0, nullptr};
    if (auto it = run_of.find(a.correlation_id); it != run_of.end()) t.run = it->second;
    if (auto it = operation_of.find(a.correlation_id); it != operation_of.end()) {
      if (auto op = options.operations.find(it->second); op != options.operations.end()) t.operation = &op->second;
    }
    kept.push_back(t);
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Timed& x, const Timed& y) {
    if (x.activity->start_ns != y.activity->start_ns) return x.activity->start_ns < y.activity->start_ns;
    return x.activity->correlation_id < y.activity->correlation_id;
  });
  std::map<uint64_t, std::pair<int64_t, int64_t>> spans;  // run -> (first start, last end)
  int64_t first = INT64_MAX, last = 0;
  for (const Timed& t : kept) {
    out.records.push_back(ToKernelRecord(*t.activity, t.operation, options.origin_ns));
    out.record_runs.push_back(t.run);
    auto [it, inserted] = spans.try_emplace(t.run, INT64_MAX, 0);
    Accumulate(out.runs[t.run], *t.activity, it->second.first, it->second.second);
    Accumulate(out.total, *t.activity, first, last);
  }
  return out;
}

GpuKernelTime KernelTimeOf(absl::Span<const KernelRecord> records) {
  GpuKernelTime t;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const KernelRecord& r : records) {
    if (r.kind == KernelKind::kCopy || r.kind == KernelKind::kMemset) {
      t.memcpy_ns += r.duration_ns();
      t.memcpy_bytes += std::max(r.bytes_read, r.bytes_written);
      continue;
    }
    if (r.kind != KernelKind::kEmitted && r.kind != KernelKind::kLibraryCall) continue;
    ++t.kernels;
    t.sum_ns += r.duration_ns();
    first = std::min(first, r.start_ns);
    last = std::max(last, r.end_ns);
  }
  if (t.kernels > 0) t.envelope_ns = last - first;
  return t;
}

// ---------------------------------------------------------------- CuptiTracer

namespace {

constexpr size_t kActivityBufferBytes = size_t{8} << 20;
constexpr size_t kActivityBufferAlign = 8;

constexpr CUpti_ActivityKind kTracedKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,   CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_RUNTIME,  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};

// What the buffer callbacks collect (CUPTI calls them from its own threads).
struct Collected {
  std::mutex mu;
  std::vector<CuptiActivity> activities;
  int64_t dropped = 0;
};
Collected& collected() {
  static Collected* c = new Collected();
  return *c;
}

absl::Status CheckCupti(CUptiResult r, std::string_view call) {
  if (r == CUPTI_SUCCESS) return absl::OkStatus();
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  return absl::InternalError(StrCat(call, ": ", text != nullptr ? text : "CUPTI error"));
}

CuptiMemcpyKind MemcpyKindOf(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return CuptiMemcpyKind::kHostToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return CuptiMemcpyKind::kDeviceToHost;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return CuptiMemcpyKind::kDeviceToDevice;
    case CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN: return CuptiMemcpyKind::kUnknown;
    default: return CuptiMemcpyKind::kOther;
  }
}

// One CUPTI record as plain data; false for kinds passlab does not read.
bool FromCupti(const CUpti_Activity* record, CuptiActivity& a) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      a.kind = CuptiActivityKind::kKernel;
      a.name = k->name != nullptr ? k->name : "";
      a.start_ns = k->start;
      a.end_ns = k->end;
      a.device = k->deviceId;
      a.stream = k->streamId;
      a.correlation_id = k->correlationId;
      a.grid_x = k->gridX, a.grid_y = k->gridY, a.grid_z = k->gridZ;
      a.block_x = k->blockX, a.block_y = k->blockY, a.block_z = k->blockZ;
      a.registers_per_thread = k->registersPerThread;
      a.static_shared_bytes = k->staticSharedMemory;
      a.dynamic_shared_bytes = k->dynamicSharedMemory;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      a.kind = CuptiActivityKind::kMemcpy;
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.device = m->deviceId;
      a.stream = m->streamId;
      a.correlation_id = m->correlationId;
      a.bytes = m->bytes;
      a.memcpy_kind = MemcpyKindOf(m->copyKind);
      return true;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      a.kind = CuptiActivityKind::kMemset;
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.device = m->deviceId;
      a.stream = m->streamId;
      a.correlation_id = m->correlationId;
      a.bytes = m->bytes;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      a.kind = record->kind == CUPTI_ACTIVITY_KIND_DRIVER ? CuptiActivityKind::kDriverApi
                                                          : CuptiActivityKind::kRuntimeApi;
      a.name = StrCat("cbid ", api->cbid);
      a.start_ns = api->start;
      a.end_ns = api->end;
      a.correlation_id = api->correlationId;
      return true;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      a.kind = CuptiActivityKind::kExternalCorrelation;
      a.correlation_id = e->correlationId;
      a.external_id = e->externalId;
      a.external_kind = e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1 ? CuptiExternalKind::kOperation
                                                                                   : CuptiExternalKind::kRun;
      return e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 ||
             e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      a.kind = CuptiActivityKind::kOverhead;
      a.name = StrCat("overhead ", static_cast<int>(o->overheadKind));
      a.start_ns = o->start;
      a.end_ns = o->end;
      a.correlation_id = o->correlationId;
      return true;
    }
    default:
      return false;
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_num_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityBufferAlign, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;
  *max_num_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid_size) {
  std::vector<CuptiActivity> parsed;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    CuptiActivity a;
    if (FromCupti(record, a)) parsed.push_back(std::move(a));
  }
  size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped);
  std::free(buffer);
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mu);
  c.dropped += static_cast<int64_t>(dropped);
  for (CuptiActivity& a : parsed) c.activities.push_back(std::move(a));
}

CUpti_ExternalCorrelationKind CuptiKind(CuptiExternalKind kind) {
  return kind == CuptiExternalKind::kRun ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0
                                         : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
}

}  // namespace

absl::StatusOr<CuptiTracer*> CuptiTracer::Get() {
  static absl::StatusOr<CuptiTracer*>* tracer = [] {
    // CUPTI needs the driver; without one it would fail with a less clear
    // message.
    absl::StatusOr<const CudaDriver*> driver = CudaDriver::Get();
    if (!driver.ok()) return new absl::StatusOr<CuptiTracer*>(driver.status());
    absl::Status s = CheckCupti(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                                "cuptiActivityRegisterCallbacks");
    if (!s.ok()) return new absl::StatusOr<CuptiTracer*>(s);
    return new absl::StatusOr<CuptiTracer*>(new CuptiTracer());
  }();
  return *tracer;
}

absl::Status CuptiTracer::Start() {
  if (started_) return absl::FailedPreconditionError("CuptiTracer::Start: already tracing");
  {
    Collected& c = collected();
    std::lock_guard<std::mutex> lock(c.mu);
    c.activities.clear();
    c.dropped = 0;
  }
  for (CUpti_ActivityKind kind : kTracedKinds) {
    RETURN_IF_ERROR(CheckCupti(cuptiActivityEnable(kind), StrCat("cuptiActivityEnable(", static_cast<int>(kind), ")")));
  }
  started_ = true;
  return absl::OkStatus();
}

absl::Status CuptiTracer::PushExternalId(CuptiExternalKind kind, uint64_t id) {
  return CheckCupti(cuptiActivityPushExternalCorrelationId(CuptiKind(kind), id),
                    "cuptiActivityPushExternalCorrelationId");
}

absl::Status CuptiTracer::PopExternalId(CuptiExternalKind kind) {
  uint64_t id = 0;
  return CheckCupti(cuptiActivityPopExternalCorrelationId(CuptiKind(kind), &id),
                    "cuptiActivityPopExternalCorrelationId");
}

absl::StatusOr<std::vector<CuptiActivity>> CuptiTracer::Stop() {
  if (!started_) return absl::FailedPreconditionError("CuptiTracer::Stop: not tracing");
  started_ = false;
  absl::Status flushed = CheckCupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  for (CUpti_ActivityKind kind : kTracedKinds) cuptiActivityDisable(kind);
  if (!flushed.ok()) return flushed;
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<CuptiActivity> out = std::move(c.activities);
  c.activities.clear();
  return out;
}

uint64_t CuptiTracer::Timestamp() const {
  uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return t;
}

int64_t CuptiTracer::dropped_records() const {
  Collected& c = collected();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.dropped;
}

}  // namespace passlab
