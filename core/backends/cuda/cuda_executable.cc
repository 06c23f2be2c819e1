// CudaExecutable: the entry computation's DeviceProgram on one device, with
// its streams, event pool and argument buffers; Run copies the arguments
// in, runs the thunks (cuda_thunk.h), and turns their events or CUPTI's
// activity records into KernelRecords.
#include "core/backends/cuda/cuda_executable.h"

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/buffer_assignment.h"
#include "core/backends/cuda/cuda_driver.h"
#include "core/backends/cuda/cuda_library_call.h"
#include "core/backends/cuda/cuda_thunk.h"
#include "core/runtime/host_buffer.h"

namespace passlab {

struct CudaExecutable::Impl {
  std::unique_ptr<CudaDevice> device;  // destroyed last
  std::unique_ptr<CudaLibraries> libraries;
  CUstream compute = nullptr, async = nullptr;
  CudaExecutableOptions options;
  // The kernel provider, host fallback, and every thunk's CUPTI operation.
  DeviceProgramContext build;
  const HloModule* module = nullptr;
  std::string description;
  std::vector<CUevent> event_pool;
  size_t events_used = 0;
  std::unique_ptr<DeviceProgram> program;
  std::vector<std::vector<DeviceBuffer>> parameters;  // per parameter, per leaf
  std::vector<std::vector<uint8_t>> host_staging;     // argument/result bytes
  // keep_arguments: the literals `parameters` hold (empty: none uploaded).
  std::vector<const Literal*> uploaded;
  CudaRunStats last;
  uint64_t next_run_id = 1;
  // Command buffer: the captured step, the parameter buffers it was
  // captured with, and why runs stay eager ("" while capture is possible).
  CUgraph graph = nullptr;
  CUgraphExec graph_exec = nullptr;
  std::vector<CUdeviceptr> graph_parameters;
  int64_t graph_nodes = 0;
  int64_t eager_runs = 0;  // runs without records that ran eagerly
  std::string graph_unavailable;

  ~Impl() {
    if (device != nullptr) DestroyGraph();
    program.reset();
    parameters.clear();
    libraries.reset();
    if (device == nullptr) return;
    for (CUevent e : event_pool) device->api().cuEventDestroy(e);
    if (compute != nullptr) device->api().cuStreamDestroy(compute);
    if (async != nullptr) device->api().cuStreamDestroy(async);
  }

  void DestroyGraph() {
    if (graph_exec != nullptr) device->api().cuGraphExecDestroy(graph_exec);
    if (graph != nullptr) device->api().cuGraphDestroy(graph);
    graph_exec = nullptr;
    graph = nullptr;
    graph_parameters.clear();
    graph_nodes = 0;
  }

  // A run without records: the first runs eagerly, the next is captured
  // into a CUDA graph and launched, later ones launch that graph while the
  // parameter buffers are the ones it was captured with.
  absl::Status RunCommandBuffer(DeviceFrame& frame, GpuRunContext& ctx, DeviceFrame** run_frame);

  absl::StatusOr<CUevent> NewEvent() {
    if (events_used < event_pool.size()) return event_pool[events_used++];
    CUevent e = nullptr;
    RETURN_IF_ERROR(device->Check(device->api().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"));
    event_pool.push_back(e);
    ++events_used;
    return e;
  }

  absl::StatusOr<const DeviceFrame*> ExecuteToFrame(absl::Span<const Literal> args, std::vector<KernelRecord>* records,
                                                    DeviceFrame& frame);
  // The rest of a run once frame.parameters hold the uploaded arguments.
  absl::StatusOr<const DeviceFrame*> ExecuteUploaded(DeviceFrame& frame, GpuRunContext& ctx, CUevent origin,
                                                     uint64_t cupti_origin, uint64_t run_id,
                                                     std::vector<PendingRecord>& pending,
                                                     std::vector<KernelRecord>* records);
  absl::Status Finish(std::vector<PendingRecord>& pending, CUevent origin, std::vector<KernelRecord>* records,
                      const std::vector<CuptiActivity>* activities, uint64_t cupti_origin, uint64_t run_id);
};

absl::StatusOr<std::string> DescribeCudaDevice(int ordinal) {
  ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d, CudaDevice::Open(ordinal));
  return d->Describe();
}

absl::StatusOr<std::pair<int, int>> CudaComputeCapability(int ordinal) {
  ASSIGN_OR_RETURN(std::unique_ptr<CudaDevice> d, CudaDevice::Open(ordinal));
  return std::make_pair(d->compute_capability_major(), d->compute_capability_minor());
}

CudaExecutable::~CudaExecutable() = default;

absl::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Create(const HloModule& module,
                                                                      const GpuKernelProvider& kernels,
                                                                      const CudaExecutableOptions& options) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  std::unique_ptr<CudaExecutable> e(new CudaExecutable());
  e->impl_ = std::make_unique<Impl>();
  Impl& impl = *e->impl_;
  impl.options = options;
  impl.build.kernels = kernels;
  impl.build.host_fallback = options.host_fallback;
  impl.build.host_kernels = options.host_kernels;
  impl.module = &module;
  ASSIGN_OR_RETURN(impl.device, CudaDevice::Open(options.device_ordinal));
  impl.description = impl.device->Describe();
  const CudaDriverApi& api = impl.device->api();
  RETURN_IF_ERROR(impl.device->Check(api.cuStreamCreate(&impl.compute, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  RETURN_IF_ERROR(impl.device->Check(api.cuStreamCreate(&impl.async, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  ASSIGN_OR_RETURN(impl.libraries, CudaLibraries::Create(*impl.device));
  impl.libraries->set_allow_tf32(options.allow_tf32 && impl.libraries->allow_tf32());
  impl.build.device = impl.device.get();
  impl.build.libraries = impl.libraries.get();
  ASSIGN_OR_RETURN(impl.program, DeviceProgram::Build(*module.entry_computation(),
                                                      BufferAssignmentOptions::ForModule(module.config()), impl.build));
  impl.graph_unavailable = options.command_buffer ? impl.program->HostDependency() : "off";
  return e;
}

absl::Status CudaExecutable::Impl::Finish(std::vector<PendingRecord>& pending, CUevent origin,
                                          std::vector<KernelRecord>* records,
                                          const std::vector<CuptiActivity>* activities, uint64_t cupti_origin,
                                          uint64_t run_id) {
  const CudaDriverApi& api = device->api();
  last.kernel_time = GpuKernelTime();
  if (activities != nullptr) {
    CuptiConversionOptions copts;
    copts.origin_ns = cupti_origin;
    copts.operations = build.operations;
    CuptiConversion c = ConvertCuptiActivities(*activities, copts);
    last.cupti_dropped_zero_timestamp = c.dropped_zero_timestamp;
    if (auto it = c.runs.find(run_id); it != c.runs.end()) last.kernel_time = it->second;
    if (records != nullptr) {
      for (size_t i = 0; i < c.records.size(); ++i) {
        if (c.record_runs[i] == run_id) records->push_back(std::move(c.records[i]));
      }
    }
    return absl::OkStatus();
  }
  std::vector<KernelRecord> out;
  for (const PendingRecord& p : pending) {
    float start_ms = 0, end_ms = 0;
    RETURN_IF_ERROR(device->Check(api.cuEventElapsedTime(&start_ms, origin, p.start), "cuEventElapsedTime"));
    RETURN_IF_ERROR(device->Check(api.cuEventElapsedTime(&end_ms, origin, p.end), "cuEventElapsedTime"));
    KernelRecord r;
    if (p.thunk != nullptr) {
      p.thunk->FillRecord(*device, r);
    } else {
      r.name = p.name;
      r.kind = p.kind;
      r.detail = p.detail;
      r.device = StrCat("cuda:", device->ordinal());
      r.bytes_read = r.bytes_written = p.bytes;
    }
    r.start_ns = static_cast<int64_t>(start_ms * 1e6);
    r.end_ns = static_cast<int64_t>(end_ms * 1e6);
    r.thread = p.stream;
    if (p.thunk == nullptr) {
      (p.detail == "HtoD" ? last.host_to_device_ns : last.device_to_host_ns) += r.duration_ns();
    }
    out.push_back(std::move(r));
  }
  last.kernel_time = KernelTimeOf(out);
  if (records != nullptr) records->insert(records->end(), out.begin(), out.end());
  return absl::OkStatus();
}

absl::StatusOr<const DeviceFrame*> CudaExecutable::Impl::ExecuteToFrame(absl::Span<const Literal> args,
                                                                         std::vector<KernelRecord>* records,
                                                                         DeviceFrame& frame) {
  const HloComputation& entry = program->computation();
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(
        StrCat(entry.name(), " takes ", entry.num_parameters(), " arguments, got ", args.size()));
  }
  RETURN_IF_ERROR(device->Activate());
  const CudaDriverApi& api = device->api();
  last = CudaRunStats();
  events_used = 0;
  std::vector<PendingRecord> pending;
  GpuRunContext ctx;
  ctx.device = device.get();
  ctx.libraries = libraries.get();
  ctx.compute = ctx.stream = compute;
  ctx.async = async;
  ctx.timing = options.timing;
  ctx.recording = records != nullptr;
  ctx.pending = &pending;
  ctx.new_event = [this] { return NewEvent(); };
  uint64_t run_id = next_run_id++, cupti_origin = 0;
  if (ctx.recording && ctx.timing == CudaTiming::kCupti) {
    ASSIGN_OR_RETURN(ctx.tracer, CuptiTracer::Get());
    RETURN_IF_ERROR(ctx.tracer->Start());
    cupti_origin = ctx.tracer->Timestamp();
    RETURN_IF_ERROR(ctx.tracer->PushExternalId(CuptiExternalKind::kRun, run_id));
  }
  CUevent origin = nullptr;
  if (ctx.recording) {
    ASSIGN_OR_RETURN(origin, NewEvent());
    RETURN_IF_ERROR(device->Check(api.cuEventRecord(origin, compute), "cuEventRecord"));
  }
  // Arguments: one device buffer per parameter leaf, kept between runs;
  // with keep_arguments, their values too while the same literals come and
  // the program writes no parameter buffer.
  const bool may_overwrite = program->assignment().OverwritesParameters();
  bool kept = options.keep_arguments && !may_overwrite && uploaded.size() == args.size() &&
              parameters.size() == args.size();
  for (size_t i = 0; kept && i < args.size(); ++i) kept = uploaded[i] == &args[i];
  if (kept) {
    frame.parameters.assign(args.size(), {});
    for (size_t i = 0; i < args.size(); ++i) {
      for (const DeviceBuffer& b : parameters[i]) frame.parameters[i].push_back(b.ptr());
    }
    return ExecuteUploaded(frame, ctx, origin, cupti_origin, run_id, pending, records);
  }
  uploaded.clear();
  parameters.resize(args.size());
  frame.parameters.assign(args.size(), {});
  PendingRecord transfer;
  transfer.name = "arguments";
  transfer.detail = "HtoD";
  if (ctx.recording && ctx.timing == CudaTiming::kEvents) {
    ASSIGN_OR_RETURN(transfer.start, NewEvent());
    RETURN_IF_ERROR(device->Check(api.cuEventRecord(transfer.start, compute), "cuEventRecord"));
  }
  host_staging.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& shape = entry.parameter_instruction(i)->shape();
    std::vector<Shape> leaves = LeafShapes(shape);
    std::vector<const Literal*> values;
    FlattenLeaves(args[i], values);
    if (values.size() != leaves.size()) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " of shape ", args[i].shape().ToString(),
                                               " does not match parameter shape ", shape.ToString()));
    }
    parameters[i].resize(leaves.size());
    for (size_t k = 0; k < leaves.size(); ++k) {
      int64_t bytes = leaves[k].IsArray() ? BufferBytes(leaves[k]) : 0;
      if (parameters[i][k].bytes() != bytes) {
        ASSIGN_OR_RETURN(parameters[i][k], DeviceBuffer::Allocate(*device, bytes, StrCat("argument ", i)));
      }
      frame.parameters[i].push_back(parameters[i][k].ptr());
      if (bytes == 0) continue;
      host_staging.emplace_back(bytes);
      if (absl::Status s = CopyLiteralToBuffer(*values[k], leaves[k], host_staging.back().data()); !s.ok()) {
        return absl::InvalidArgumentError(StrCat("argument ", i, ": ", s.message()));
      }
      RETURN_IF_ERROR(
          device->Check(api.cuMemcpyHtoDAsync(parameters[i][k].ptr(), host_staging.back().data(), bytes, compute),
                        StrCat("cuMemcpyHtoDAsync(argument ", i, ")")));
      last.host_to_device_bytes += bytes;
    }
  }
  if (transfer.start != nullptr) {
    ASSIGN_OR_RETURN(transfer.end, NewEvent());
    transfer.bytes = last.host_to_device_bytes;
    RETURN_IF_ERROR(device->Check(api.cuEventRecord(transfer.end, compute), "cuEventRecord"));
    pending.push_back(transfer);
  }
  if (options.keep_arguments && !may_overwrite) {
    for (const Literal& a : args) uploaded.push_back(&a);
  }
  return ExecuteUploaded(frame, ctx, origin, cupti_origin, run_id, pending, records);
}

absl::StatusOr<const DeviceFrame*> CudaExecutable::Impl::ExecuteUploaded(DeviceFrame& frame, GpuRunContext& ctx,
                                                                         CUevent origin, uint64_t cupti_origin,
                                                                         uint64_t run_id,
                                                                         std::vector<PendingRecord>& pending,
                                                                         std::vector<KernelRecord>* records) {
  const CudaDriverApi& api = device->api();
  DeviceFrame* run_frame = nullptr;
  absl::Status ran = !ctx.recording && graph_unavailable.empty()
                         ? RunCommandBuffer(frame, ctx, &run_frame)
                         : program->ExecuteWithParameters(std::move(frame.parameters), ctx, &run_frame);
  absl::Status synced = device->Check(api.cuStreamSynchronize(async), "cuStreamSynchronize(async)");
  if (synced.ok()) synced = device->Check(api.cuStreamSynchronize(compute), "cuStreamSynchronize(compute)");
  if (ctx.tracer != nullptr) {
    ctx.tracer->PopExternalId(CuptiExternalKind::kRun).IgnoreError();  // the run's tag; Stop reports failures
    absl::StatusOr<std::vector<CuptiActivity>> activities = ctx.tracer->Stop();
    if (!ran.ok()) return ran;
    if (!synced.ok()) return synced;
    if (!activities.ok()) return activities.status();
    RETURN_IF_ERROR(Finish(pending, origin, records, &*activities, cupti_origin, run_id));
    return run_frame;
  }
  if (!ran.ok()) return ran;
  if (!synced.ok()) return synced;
  if (ctx.recording) {
    RETURN_IF_ERROR(Finish(pending, origin, records, nullptr, 0, run_id));
  }
  return run_frame;
}

absl::Status CudaExecutable::Impl::RunCommandBuffer(DeviceFrame& frame, GpuRunContext& ctx,
                                                    DeviceFrame** run_frame) {
  const CudaDriverApi& api = device->api();
  std::vector<CUdeviceptr> flat;
  for (const std::vector<CUdeviceptr>& p : frame.parameters) flat.insert(flat.end(), p.begin(), p.end());
  if (graph_exec != nullptr && flat == graph_parameters) {
    *run_frame = program->OwnFrame(std::move(frame.parameters));
    RETURN_IF_ERROR(device->Check(api.cuGraphLaunch(graph_exec, compute), "cuGraphLaunch"));
    last.graph_launched = true;
    return absl::OkStatus();
  }
  // The first run is eager: whatever a library sets up on its first call
  // happens outside the capture.
  if (eager_runs++ == 0) return program->ExecuteWithParameters(std::move(frame.parameters), ctx, run_frame);
  DestroyGraph();
  std::vector<std::vector<CUdeviceptr>> parameters = frame.parameters;
  RETURN_IF_ERROR(device->Check(api.cuStreamBeginCapture(compute, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                                "cuStreamBeginCapture"));
  absl::Status captured = program->ExecuteWithParameters(std::move(frame.parameters), ctx, run_frame);
  CUgraph g = nullptr;
  CUresult ended = api.cuStreamEndCapture(compute, &g);
  if (captured.ok()) captured = device->Check(ended, "cuStreamEndCapture");
  if (captured.ok()) captured = device->Check(api.cuGraphInstantiate(&graph_exec, g, 0), "cuGraphInstantiate");
  if (captured.ok()) {
    graph = g;
    graph_parameters = std::move(flat);
    size_t nodes = 0;
    if (api.cuGraphGetNodes(g, nullptr, &nodes) == CUDA_SUCCESS) graph_nodes = static_cast<int64_t>(nodes);
    RETURN_IF_ERROR(device->Check(api.cuGraphLaunch(graph_exec, compute), "cuGraphLaunch"));
    last.graph_launched = true;
    return absl::OkStatus();
  }
  if (g != nullptr) api.cuGraphDestroy(g);
  graph_exec = nullptr;
  // Nothing captured ran: this and every later run go eagerly.
  graph_unavailable = StrCat("capture failed: ", captured.message());
  return program->ExecuteWithParameters(std::move(parameters), ctx, run_frame);
}

absl::Status CudaExecutable::Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  DeviceFrame frame;
  return impl_->ExecuteToFrame(args, records, frame).status();
}

absl::StatusOr<Literal> CudaExecutable::Run(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  DeviceFrame frame;
  ASSIGN_OR_RETURN(const DeviceFrame* ran, impl_->ExecuteToFrame(args, records, frame));
  Impl& impl = *impl_;
  const CudaDriverApi& api = impl.device->api();
  const HloInstruction* root = impl.program->computation().root_instruction();
  std::vector<CUdeviceptr> leaves = impl.program->LeafPointers(root, *ran);
  std::vector<Shape> shapes = LeafShapes(root->shape());
  auto started = std::chrono::steady_clock::now();
  std::vector<Literal> values;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (!shapes[i].IsArray() || leaves[i] == 0 || shapes[i].element_count() == 0) {
      values.emplace_back(shapes[i]);
      continue;
    }
    int64_t bytes = BufferBytes(shapes[i]);
    std::vector<uint64_t> host(bytes / 8 + 1);
    RETURN_IF_ERROR(impl.device->Check(api.cuMemcpyDtoH(host.data(), leaves[i], bytes),
                                       StrCat("cuMemcpyDtoH(result leaf ", i, ")")));
    impl.last.device_to_host_bytes += bytes;
    ASSIGN_OR_RETURN(Literal l, LiteralFromBuffer(shapes[i], host.data()));
    values.push_back(std::move(l));
  }
  int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count();
  impl.last.device_to_host_ns = ns;
  if (records != nullptr) {
    KernelRecord r;
    r.name = "results";
    r.kind = KernelKind::kCopy;
    r.detail = "DtoH (host clock)";
    r.device = StrCat("cuda:", impl.device->ordinal());
    int64_t end = 0;
    for (const KernelRecord& k : *records) end = std::max(end, k.end_ns);
    r.start_ns = end;
    r.end_ns = end + ns;
    r.bytes_read = r.bytes_written = impl.last.device_to_host_bytes;
    records->push_back(std::move(r));
  }
  // Reassemble the root's tuple structure from its leaves.
  size_t next = 0;
  std::function<Literal(const Shape&)> assemble = [&](const Shape& s) -> Literal {
    if (!s.IsTuple()) return std::move(values[next++]);
    std::vector<Literal> elements;
    for (const Shape& e : s.tuple_shapes()) elements.push_back(assemble(e));
    return Literal::Tuple(std::move(elements));
  };
  return assemble(root->shape());
}

const CudaRunStats& CudaExecutable::last_run() const { return impl_->last; }
const std::string& CudaExecutable::device_description() const { return impl_->description; }
std::string CudaExecutable::ToString() const { return impl_->program->ToString(); }
int64_t CudaExecutable::device_arena_bytes() const { return impl_->program->assignment().arena_bytes(); }

std::string CudaExecutable::CommandBufferStatus() const {
  const Impl& impl = *impl_;
  if (impl.graph_unavailable == "off") return "off";
  if (!impl.graph_unavailable.empty()) return StrCat("eager: ", impl.graph_unavailable);
  if (impl.graph_exec == nullptr) return "not captured yet (the second run without records captures it)";
  return StrCat("CUDA graph of ", impl.graph_nodes, " nodes");
}

int64_t CudaExecutable::Tf32LibraryCalls() const {
  int64_t n = 0;
  impl_->program->ForEachThunk([&](const GpuThunk& t) { n += t.UsesTf32() ? 1 : 0; });
  return n;
}

std::vector<std::string> CudaExecutable::HostFallbacks() const {
  std::vector<std::string> out;
  for (const auto& [id, op] : impl_->build.operations) {
    if (op.kind == KernelKind::kRuntimeRoutine && op.detail.starts_with(kHostFallbackPrefix)) {
      out.push_back(StrCat(op.hlo_instruction, ": ", op.detail.substr(kHostFallbackPrefix.size())));
    }
  }
  return out;
}

}  // namespace passlab
