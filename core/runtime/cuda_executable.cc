#include "core/runtime/cuda_executable.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/buffer_assignment.h"
#include "core/runtime/cuda_driver.h"
#include "core/runtime/cuda_library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine.h"
#include "core/runtime/instruction_evaluator.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {
namespace {

class DeviceProgram;

struct DeviceFrame {
  CUdeviceptr arena = 0;
  std::vector<std::vector<CUdeviceptr>> parameters;  // per parameter, per leaf
};

// A thunk's record while its events are pending.
struct PendingRecord {
  const class GpuThunk* thunk = nullptr;
  std::string name, detail;  // transfers (no thunk)
  KernelKind kind = KernelKind::kCopy;
  int64_t bytes = 0;
  CUevent start = nullptr, end = nullptr;
  int64_t stream = 0;
};

// What every thunk of one run shares.
struct GpuRunContext {
  const CudaDevice* device = nullptr;
  CudaLibraries* libraries = nullptr;
  CUstream compute = nullptr, async = nullptr;
  CUstream stream = nullptr;  // where the current thunk enqueues its work
  CudaTiming timing = CudaTiming::kEvents;
  bool recording = false;
  std::vector<PendingRecord>* pending = nullptr;
  std::function<absl::StatusOr<CUevent>()> new_event;  // from the executable's pool
  CuptiTracer* tracer = nullptr;
  // Async starts (and copy-starts) in flight: the event their work records.
  absl::flat_hash_map<const HloInstruction*, CUevent> in_flight;
  int64_t stream_index() const { return stream == async ? 1 : 0; }
  absl::Status Check(CUresult r, std::string_view call) const { return device->Check(r, call); }
  const CudaDriverApi& api() const { return device->api(); }
};

int64_t LeafBytesOf(const Shape& s) {
  int64_t n = 0;
  for (const Shape& leaf : LeafShapes(s)) n += BufferBytes(leaf);
  return n;
}

class GpuThunk {
 public:
  explicit GpuThunk(const HloInstruction& inst) : instruction_(inst) {}
  virtual ~GpuThunk() = default;
  virtual KernelKind kind() const = 0;
  virtual std::string detail() const = 0;
  virtual absl::Status Run(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx) = 0;
  virtual std::vector<const DeviceProgram*> nested() const { return {}; }
  virtual int64_t flops() const { return 0; }
  virtual LaunchDims launch() const { return {}; }
  virtual int64_t registers() const { return 0; }
  virtual int64_t shared_memory_bytes() const { return 0; }
  int64_t bytes_read() const {
    int64_t n = 0;
    for (const HloInstruction* op : instruction_.operands()) n += LeafBytesOf(op->shape());
    return n;
  }
  int64_t bytes_written() const { return LeafBytesOf(instruction_.shape()); }
  const HloInstruction& instruction() const { return instruction_; }
  int64_t operation_id = 0;  // CUPTI's external id for this thunk (kOperation)

  // Run with timing: events around the work (kEvents) or the thunk's
  // operation id pushed for CUPTI (kCupti).
  absl::Status Execute(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx);

 protected:
  // Operand leaf-0 pointers, then the result leaves (compiled_kernel.h).
  std::vector<CUdeviceptr> Buffers(const DeviceProgram& program, const DeviceFrame& frame) const;
  const HloInstruction& instruction_;
};

class DeviceProgram {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceProgram>> Build(const HloComputation& computation,
                                                              BufferAssignmentOptions options,
                                                              CudaExecutable::Impl& exe);
  absl::Status Execute(DeviceFrame& frame, GpuRunContext& ctx) const {
    if (static_cast<int64_t>(frame.parameters.size()) != computation_.num_parameters()) {
      return absl::InvalidArgumentError(StrCat(computation_.name(), ": expected ", computation_.num_parameters(),
                                               " parameters, got ", frame.parameters.size()));
    }
    for (const std::unique_ptr<GpuThunk>& t : thunks_) {
      if (absl::Status s = t->Execute(*this, frame, ctx); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // Runs on this program's own arena (nested programs).
  absl::Status ExecuteWithParameters(std::vector<std::vector<CUdeviceptr>> parameters, GpuRunContext& ctx,
                                     DeviceFrame** frame_out) const {
    own_frame_.arena = own_arena_.ptr();
    own_frame_.parameters = std::move(parameters);
    *frame_out = &own_frame_;
    return Execute(own_frame_, ctx);
  }
  CUdeviceptr Resolve(const BufferSlice& slice, const DeviceFrame& frame) const {
    switch (slice.kind) {
      case BufferSlice::Kind::kNone: return 0;
      case BufferSlice::Kind::kArena: return frame.arena + slice.offset;
      case BufferSlice::Kind::kParameter: return frame.parameters[slice.parameter][slice.parameter_leaf];
      case BufferSlice::Kind::kConstant: return constants_.at(slice.constant)[slice.constant_leaf].ptr();
    }
    return 0;
  }
  std::vector<CUdeviceptr> LeafPointers(const HloInstruction* inst, const DeviceFrame& frame) const {
    std::vector<CUdeviceptr> out;
    for (const BufferSlice& s : assignment_->LeafSlices(inst)) out.push_back(Resolve(s, frame));
    return out;
  }
  const HloComputation& computation() const { return computation_; }
  const BufferAssignment& assignment() const { return *assignment_; }
  const std::vector<std::unique_ptr<GpuThunk>>& thunks() const { return thunks_; }
  std::string ToString(int indent = 0) const {
    std::string out, pad(indent, ' ');
    for (const std::unique_ptr<GpuThunk>& t : thunks_) {
      StrAppend(&out, pad, KernelKindName(t->kind()), " ", t->instruction().name(), " (", t->detail(), ")\n");
      for (const DeviceProgram* n : t->nested()) {
        StrAppend(&out, pad, "  ", n->computation().name(), ":\n", n->ToString(indent + 4));
      }
    }
    return out;
  }

 private:
  explicit DeviceProgram(const HloComputation& c) : computation_(c) {}
  absl::Status AddThunkFor(const HloInstruction& inst, CudaExecutable::Impl& exe);
  absl::Status AddHostThunk(const HloInstruction& inst, CudaExecutable::Impl& exe, std::string_view why);

  const HloComputation& computation_;
  std::unique_ptr<BufferAssignment> assignment_;
  std::vector<std::unique_ptr<GpuThunk>> thunks_;
  absl::flat_hash_map<const HloInstruction*, std::vector<DeviceBuffer>> constants_;
  DeviceBuffer own_arena_;
  mutable DeviceFrame own_frame_;
};

// Copies leaf i of `from` to leaf i of `to` (same shapes), staging through
// `staging` when some leaves move between each other's buffers.
absl::Status CopyLeavesOnDevice(const std::vector<Shape>& shapes, const std::vector<CUdeviceptr>& from,
                                const std::vector<CUdeviceptr>& to, const DeviceBuffer& staging, GpuRunContext& ctx,
                                std::string_view what) {
  bool overlap = false;
  for (size_t i = 0; i < from.size(); ++i) {
    for (size_t j = 0; j < to.size(); ++j) overlap |= i != j && from[i] != 0 && from[i] == to[j];
  }
  auto copy = [&](CUdeviceptr dst, CUdeviceptr src, int64_t bytes) {
    if (dst == src || bytes == 0 || dst == 0 || src == 0) return absl::OkStatus();
    return ctx.Check(ctx.api().cuMemcpyDtoDAsync(dst, src, bytes, ctx.stream), StrCat("cuMemcpyDtoDAsync(", what, ")"));
  };
  if (!overlap) {
    for (size_t i = 0; i < from.size(); ++i) {
      if (shapes[i].IsArray()) {
        if (absl::Status s = copy(to[i], from[i], BufferBytes(shapes[i])); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }
  int64_t offset = 0;
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < from.size(); ++i) {
    offsets.push_back(offset);
    if (shapes[i].IsArray() && from[i] != to[i]) {
      if (absl::Status s = copy(staging.ptr() + offset, from[i], BufferBytes(shapes[i])); !s.ok()) return s;
      offset += (BufferBytes(shapes[i]) + 255) / 256 * 256;
    }
  }
  for (size_t i = 0; i < from.size(); ++i) {
    if (shapes[i].IsArray() && from[i] != to[i]) {
      if (absl::Status s = copy(to[i], staging.ptr() + offsets[i], BufferBytes(shapes[i])); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

int64_t StagingBytes(const Shape& shape) {
  int64_t n = 0;
  for (const Shape& leaf : LeafShapes(shape)) n += (BufferBytes(leaf) + 255) / 256 * 256;
  return n;
}

}  // namespace

// ---------------------------------------------------------------- Impl

struct CudaExecutable::Impl {
  std::unique_ptr<CudaDevice> device;  // destroyed last
  std::unique_ptr<CudaLibraries> libraries;
  CUstream compute = nullptr, async = nullptr;
  CudaExecutableOptions options;
  GpuKernelProvider kernels;
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
  int64_t next_operation_id = 1;
  uint64_t next_run_id = 1;
  std::map<uint64_t, CuptiOperation> operations;  // by operation id (CUPTI)

  ~Impl() {
    program.reset();
    parameters.clear();
    libraries.reset();
    if (device == nullptr) return;
    for (CUevent e : event_pool) device->api().cuEventDestroy(e);
    if (compute != nullptr) device->api().cuStreamDestroy(compute);
    if (async != nullptr) device->api().cuStreamDestroy(async);
  }

  absl::StatusOr<CUevent> NewEvent() {
    if (events_used < event_pool.size()) return event_pool[events_used++];
    CUevent e = nullptr;
    if (absl::Status s = device->Check(device->api().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate"); !s.ok()) {
      return s;
    }
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

namespace {

// ---------------------------------------------------------------- thunks

void ThunkRecordFields(const GpuThunk& t, const CudaDevice& device, KernelRecord& r) {
  const HloInstruction& inst = t.instruction();
  r.name = inst.name();
  r.kind = t.kind();
  r.detail = t.detail();
  r.device = StrCat("cuda:", device.ordinal());
  r.hlo_instruction = inst.name();
  r.hlo_computation = inst.parent() != nullptr ? inst.parent()->name() : "";
  r.bytes_read = t.bytes_read();
  r.bytes_written = t.bytes_written();
  r.flops = t.flops();
  r.launch = t.launch();
  r.registers = t.registers();
  r.shared_memory_bytes = t.shared_memory_bytes();
}

class KernelLaunchThunk : public GpuThunk {
 public:
  KernelLaunchThunk(const HloInstruction& inst, GpuKernel kernel) : GpuThunk(inst), kernel_(std::move(kernel)) {}
  ~KernelLaunchThunk() override {
    if (module_ != nullptr) device_->api().cuModuleUnload(module_);
  }
  absl::Status Load(const CudaDevice& device) {
    device_ = &device;
    constexpr unsigned kLogBytes = 8192;
    std::vector<char> log(kLogBytes, 0);
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes))};
    absl::Status s = device.Check(device.api().cuModuleLoadDataEx(&module_, kernel_.ptx.c_str(), 2, options, values),
                                  StrCat("cuModuleLoadData(", kernel_.name, ")"));
    if (!s.ok()) {
      module_ = nullptr;
      std::string text(log.data());
      return text.empty() ? s : absl::Status(s.code(), StrCat(s.message(), ": ", text));
    }
    if (absl::Status s = device.Check(device.api().cuModuleGetFunction(&function_, module_, kernel_.entry.c_str()),
                                      StrCat("cuModuleGetFunction(", kernel_.name, ", ", kernel_.entry, ")"));
        !s.ok()) {
      return s;
    }
    const GpuLaunchDimensions& l = kernel_.launch;
    if (l.dynamic_shared_memory_bytes > 48 * 1024) {
      if (absl::Status s = device.Check(
              device.api().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              static_cast<int>(l.dynamic_shared_memory_bytes)),
              StrCat("cuFuncSetAttribute(", kernel_.name, ", dynamic shared memory)"));
          !s.ok()) {
        return s;
      }
    }
    int value = 0;
    if (device.api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, function_) == CUDA_SUCCESS) {
      registers_ = value;
    }
    if (device.api().cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function_) == CUDA_SUCCESS) {
      static_shared_ = value;
    }
    return absl::OkStatus();
  }
  KernelKind kind() const override { return KernelKind::kEmitted; }
  std::string detail() const override { return EmitterKindName(kernel_.emitter_kind); }
  int64_t flops() const override { return kernel_.flops; }
  LaunchDims launch() const override {
    const GpuLaunchDimensions& l = kernel_.launch;
    return LaunchDims{l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y, l.block_z};
  }
  int64_t registers() const override { return registers_; }
  int64_t shared_memory_bytes() const override { return static_shared_ + kernel_.launch.dynamic_shared_memory_bytes; }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    std::vector<CUdeviceptr> buffers = Buffers(p, f);
    if (static_cast<int64_t>(buffers.size()) != kernel_.num_buffers) {
      return absl::InternalError(StrCat(kernel_.name, ": kernel takes ", kernel_.num_buffers, " buffers, ",
                                        instruction_.name(), " has ", buffers.size()));
    }
    std::vector<void*> params;
    for (CUdeviceptr& b : buffers) params.push_back(&b);
    const GpuLaunchDimensions& l = kernel_.launch;
    if (l.num_blocks() == 0 || l.threads_per_block() == 0) return absl::OkStatus();
    return ctx.Check(ctx.api().cuLaunchKernel(function_, l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y, l.block_z,
                                              l.dynamic_shared_memory_bytes, ctx.stream, params.data(), nullptr),
                     StrCat("cuLaunchKernel(", kernel_.name, ")"));
  }

 private:
  GpuKernel kernel_;
  const CudaDevice* device_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  int64_t registers_ = 0, static_shared_ = 0;
};

class LibraryThunk : public GpuThunk {
 public:
  LibraryThunk(const HloInstruction& inst, std::unique_ptr<CudaLibraryCall> call)
      : GpuThunk(inst), call_(std::move(call)) {}
  KernelKind kind() const override { return KernelKind::kLibraryCall; }
  std::string detail() const override {
    return StrCat(instruction_.custom_call_target(), "/", call_->algorithm().name);
  }
  int64_t flops() const override { return call_->flops(); }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    return call_->Run(Buffers(p, f), ctx.stream);
  }

 private:
  std::unique_ptr<CudaLibraryCall> call_;
};

// Work on host buffers between a device-to-host and a host-to-device copy.
class HostThunk : public GpuThunk {
 public:
  using HostFunction = std::function<absl::Status(absl::Span<void* const>)>;
  HostThunk(const HloInstruction& inst, HostFunction fn, std::string what)
      : GpuThunk(inst), fn_(std::move(fn)), what_(std::move(what)) {
    for (const HloInstruction* op : inst.operands()) {
      std::vector<Shape> leaves = LeafShapes(op->shape());
      shapes_.push_back(leaves.empty() ? Shape() : leaves[0]);
    }
    operands_ = shapes_.size();
    for (const Shape& s : LeafShapes(inst.shape())) shapes_.push_back(s);
    for (const Shape& s : shapes_) host_.emplace_back(s.IsArray() ? BufferBytes(s) / 8 + 1 : 1, 0);
  }
  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override { return StrCat(kHostFallbackPrefix, what_); }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    std::vector<CUdeviceptr> buffers = Buffers(p, f);
    std::vector<void*> host;
    for (size_t i = 0; i < buffers.size(); ++i) {
      int64_t bytes = shapes_[i].IsArray() ? BufferBytes(shapes_[i]) : 0;
      host.push_back(buffers[i] == 0 && bytes == 0 ? nullptr : host_[i].data());
      if (i >= operands_ || bytes == 0 || buffers[i] == 0) continue;
      if (absl::Status s = ctx.Check(ctx.api().cuMemcpyDtoHAsync(host_[i].data(), buffers[i], bytes, ctx.stream),
                                     StrCat("cuMemcpyDtoHAsync(", instruction_.name(), " operand ", i, ")"));
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s = ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"); !s.ok()) {
      return s;
    }
    if (absl::Status s = fn_(host); !s.ok()) return s;
    for (size_t i = operands_; i < buffers.size(); ++i) {
      int64_t bytes = shapes_[i].IsArray() ? BufferBytes(shapes_[i]) : 0;
      if (bytes == 0 || buffers[i] == 0) continue;
      if (absl::Status s = ctx.Check(ctx.api().cuMemcpyHtoDAsync(buffers[i], host_[i].data(), bytes, ctx.stream),
                                     StrCat("cuMemcpyHtoDAsync(", instruction_.name(), " result)"));
          !s.ok()) {
        return s;
      }
    }
    // The host staging is reused by the next run of this thunk.
    return ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize");
  }

 private:
  HostFunction fn_;
  std::string what_;
  std::vector<Shape> shapes_;
  size_t operands_ = 0;
  std::vector<std::vector<uint64_t>> host_;
};

// A copy between buffers of the same layout (leaf by leaf).
class DeviceCopyThunk : public GpuThunk {
 public:
  using GpuThunk::GpuThunk;
  KernelKind kind() const override { return KernelKind::kCopy; }
  std::string detail() const override { return "DtoD"; }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    return CopyLeavesOnDevice(LeafShapes(instruction_.shape()), p.LeafPointers(instruction_.operand(0), f),
                              p.LeafPointers(&instruction_, f), DeviceBuffer(), ctx, instruction_.name());
  }
};

// A broadcast of a zero scalar: cuMemsetD8.
class MemsetThunk : public GpuThunk {
 public:
  using GpuThunk::GpuThunk;
  KernelKind kind() const override { return KernelKind::kMemset; }
  std::string detail() const override { return "memset 0"; }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    CUdeviceptr out = p.LeafPointers(&instruction_, f)[0];
    int64_t bytes = BufferBytes(instruction_.shape());
    if (bytes == 0) return absl::OkStatus();
    return ctx.Check(ctx.api().cuMemsetD8Async(out, 0, bytes, ctx.stream),
                     StrCat("cuMemsetD8Async(", instruction_.name(), ")"));
  }
};

absl::StatusOr<uint8_t> ReadByte(CUdeviceptr ptr, GpuRunContext& ctx, std::string_view what) {
  uint8_t value = 0;
  if (absl::Status s = ctx.Check(ctx.api().cuMemcpyDtoHAsync(&value, ptr, 1, ctx.stream),
                                 StrCat("cuMemcpyDtoHAsync(", what, ")"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"); !s.ok()) return s;
  return value;
}

constexpr int64_t kMaxWhileIterations = int64_t{1} << 24;

class WhileThunk : public GpuThunk {
 public:
  WhileThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> cond, std::unique_ptr<DeviceProgram> body,
             DeviceBuffer staging)
      : GpuThunk(inst), cond_(std::move(cond)), body_(std::move(body)), staging_(std::move(staging)) {}
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return StrCat("while (", iterations_, " iterations)"); }
  std::vector<const DeviceProgram*> nested() const override { return {cond_.get(), body_.get()}; }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    std::vector<Shape> shapes = LeafShapes(instruction_.shape());
    std::vector<CUdeviceptr> state = p.LeafPointers(&instruction_, f);
    if (absl::Status s = CopyLeavesOnDevice(shapes, p.LeafPointers(instruction_.operand(0), f), state, staging_, ctx,
                                            instruction_.name());
        !s.ok()) {
      return s;
    }
    iterations_ = 0;
    for (;;) {
      DeviceFrame* cf = nullptr;
      if (absl::Status s = cond_->ExecuteWithParameters({state}, ctx, &cf); !s.ok()) return s;
      CUdeviceptr pred = cond_->LeafPointers(cond_->computation().root_instruction(), *cf)[0];
      absl::StatusOr<uint8_t> go = ReadByte(pred, ctx, StrCat(instruction_.name(), " predicate"));
      if (!go.ok()) return go.status();
      if (*go == 0) break;
      if (++iterations_ > kMaxWhileIterations) {
        return absl::ResourceExhaustedError(
            StrCat(instruction_.name(), ": more than ", kMaxWhileIterations, " iterations"));
      }
      DeviceFrame* bf = nullptr;
      if (absl::Status s = body_->ExecuteWithParameters({state}, ctx, &bf); !s.ok()) return s;
      if (absl::Status s = CopyLeavesOnDevice(shapes, body_->LeafPointers(body_->computation().root_instruction(), *bf),
                                              state, staging_, ctx, instruction_.name());
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<DeviceProgram> cond_, body_;
  DeviceBuffer staging_;
  int64_t iterations_ = 0;
};

// conditional (branch index read back to the host) and call.
class BranchThunk : public GpuThunk {
 public:
  BranchThunk(const HloInstruction& inst, std::vector<std::unique_ptr<DeviceProgram>> branches, DeviceBuffer staging)
      : GpuThunk(inst), branches_(std::move(branches)), staging_(std::move(staging)) {}
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return std::string(HloOpcodeString(instruction_.opcode())); }
  std::vector<const DeviceProgram*> nested() const override {
    std::vector<const DeviceProgram*> out;
    for (const std::unique_ptr<DeviceProgram>& b : branches_) out.push_back(b.get());
    return out;
  }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    const DeviceProgram* branch = branches_[0].get();
    std::vector<std::vector<CUdeviceptr>> params;
    if (instruction_.opcode() == HloOpcode::kConditional) {
      const HloInstruction* index = instruction_.operand(0);
      CUdeviceptr ptr = p.LeafPointers(index, f)[0];
      int64_t n = static_cast<int64_t>(branches_.size()), b = 0;
      if (index->shape().element_type() == PrimitiveType::kPred) {
        absl::StatusOr<uint8_t> v = ReadByte(ptr, ctx, StrCat(instruction_.name(), " predicate"));
        if (!v.ok()) return v.status();
        b = *v != 0 ? 0 : 1;
      } else {
        int32_t v = 0;
        if (absl::Status s = ctx.Check(ctx.api().cuMemcpyDtoHAsync(&v, ptr, sizeof(v), ctx.stream),
                                       StrCat("cuMemcpyDtoHAsync(", instruction_.name(), " branch index)"));
            !s.ok()) {
          return s;
        }
        if (absl::Status s = ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"); !s.ok()) {
          return s;
        }
        b = v < 0 || v >= n ? n - 1 : v;  // out of range runs the last branch
      }
      branch = branches_[b].get();
      params.push_back(p.LeafPointers(instruction_.operand(b + 1), f));
    } else {
      for (const HloInstruction* op : instruction_.operands()) params.push_back(p.LeafPointers(op, f));
    }
    DeviceFrame* bf = nullptr;
    if (absl::Status s = branch->ExecuteWithParameters(std::move(params), ctx, &bf); !s.ok()) return s;
    return CopyLeavesOnDevice(LeafShapes(instruction_.shape()),
                              branch->LeafPointers(branch->computation().root_instruction(), *bf),
                              p.LeafPointers(&instruction_, f), staging_, ctx, instruction_.name());
  }

 private:
  std::vector<std::unique_ptr<DeviceProgram>> branches_;
  DeviceBuffer staging_;
};

// Makes `waiter` wait for the work enqueued so far on `signaller`.
absl::Status Order(CUstream signaller, CUstream waiter, GpuRunContext& ctx, std::string_view what) {
  absl::StatusOr<CUevent> e = ctx.new_event();
  if (!e.ok()) return e.status();
  if (absl::Status s = ctx.Check(ctx.api().cuEventRecord(*e, signaller), StrCat("cuEventRecord(", what, ")"));
      !s.ok()) {
    return s;
  }
  return ctx.Check(ctx.api().cuStreamWaitEvent(waiter, *e, 0), StrCat("cuStreamWaitEvent(", what, ")"));
}

// The first result leaves of an async-start that belong to tuple element
// `element`: [begin, end).
std::pair<size_t, size_t> ElementLeaves(const Shape& tuple, int64_t element) {
  size_t begin = 0;
  for (int64_t i = 0; i < element; ++i) begin += LeafShapes(tuple.tuple_shapes(i)).size();
  return {begin, begin + LeafShapes(tuple.tuple_shapes(element)).size()};
}

// async-start (the wrapped computation on the second stream) and
// copy-start (a device copy there); the done event goes to ctx.in_flight.
class AsyncStartThunk : public GpuThunk {
 public:
  AsyncStartThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> wrapped, DeviceBuffer staging)
      : GpuThunk(inst), wrapped_(std::move(wrapped)), staging_(std::move(staging)) {}
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return StrCat(HloOpcodeString(instruction_.opcode()), " (second stream)"); }
  std::vector<const DeviceProgram*> nested() const override {
    return wrapped_ ? std::vector<const DeviceProgram*>{wrapped_.get()} : std::vector<const DeviceProgram*>{};
  }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    // The operands are first copied (on the caller's stream) into the
    // start's own leaves — element 0 of async-start, the source leaf of
    // copy-start — which stay live until the matching done, while the
    // operands' buffers may be reused as soon as this thunk returns.
    std::vector<CUdeviceptr> out = p.LeafPointers(&instruction_, f);
    std::vector<Shape> leaves = LeafShapes(instruction_.shape());
    std::vector<CUdeviceptr> operands;
    for (const HloInstruction* op : instruction_.operands()) {
      for (CUdeviceptr ptr : p.LeafPointers(op, f)) operands.push_back(ptr);
    }
    auto [begin, end] = instruction_.opcode() == HloOpcode::kCopyStart ? std::pair<size_t, size_t>{1, 2}
                                                                       : ElementLeaves(instruction_.shape(), 0);
    std::vector<Shape> held_shapes(leaves.begin() + begin, leaves.begin() + end);
    std::vector<CUdeviceptr> held(out.begin() + begin, out.begin() + end);
    if (held.size() != operands.size()) {
      return absl::InternalError(StrCat(instruction_.name(), ": ", operands.size(), " operand leaves, ", held.size(),
                                        " held leaves"));
    }
    if (absl::Status s = CopyLeavesOnDevice(held_shapes, operands, held, staging_, ctx, instruction_.name()); !s.ok()) {
      return s;
    }
    CUstream caller = ctx.stream;
    if (absl::Status s = Order(caller, ctx.async, ctx, instruction_.name()); !s.ok()) return s;
    ctx.stream = ctx.async;
    absl::Status s = Enqueue(held, out, leaves, ctx);
    ctx.stream = caller;
    if (!s.ok()) return s;
    absl::StatusOr<CUevent> done = ctx.new_event();
    if (!done.ok()) return done.status();
    if (absl::Status r = ctx.Check(ctx.api().cuEventRecord(*done, ctx.async), "cuEventRecord"); !r.ok()) return r;
    ctx.in_flight[&instruction_] = *done;
    return absl::OkStatus();
  }

 private:
  absl::Status Enqueue(const std::vector<CUdeviceptr>& held, const std::vector<CUdeviceptr>& out,
                       const std::vector<Shape>& leaves, GpuRunContext& ctx) {
    if (instruction_.opcode() == HloOpcode::kCopyStart) {
      // (destination, source, context): the source lands in the destination.
      return CopyLeavesOnDevice({leaves[0]}, {held[0]}, {out[0]}, DeviceBuffer(), ctx, instruction_.name());
    }
    std::vector<std::vector<CUdeviceptr>> params;
    size_t next = 0;
    for (const HloInstruction* op : instruction_.operands()) {
      size_t n = LeafShapes(op->shape()).size();
      params.emplace_back(held.begin() + next, held.begin() + next + n);
      next += n;
    }
    DeviceFrame* wf = nullptr;
    if (absl::Status s = wrapped_->ExecuteWithParameters(std::move(params), ctx, &wf); !s.ok()) return s;
    std::vector<CUdeviceptr> results = wrapped_->LeafPointers(wrapped_->computation().root_instruction(), *wf);
    auto [begin, end] = ElementLeaves(instruction_.shape(), 1);
    std::vector<Shape> shapes(leaves.begin() + begin, leaves.begin() + end);
    std::vector<CUdeviceptr> to(out.begin() + begin, out.begin() + end);
    return CopyLeavesOnDevice(shapes, results, to, staging_, ctx, instruction_.name());
  }

  std::unique_ptr<DeviceProgram> wrapped_;  // null for copy-start
  DeviceBuffer staging_;
};

// async-update / async-done / copy-done: the caller's stream waits for the
// start's event, then takes its result leaves.
class AsyncWaitThunk : public GpuThunk {
 public:
  using GpuThunk::GpuThunk;
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return StrCat(HloOpcodeString(instruction_.opcode()), " (wait)"); }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    const HloInstruction* start = instruction_.operand(0);
    while (start->opcode() == HloOpcode::kAsyncUpdate) start = start->operand(0);
    auto it = ctx.in_flight.find(start);
    if (it == ctx.in_flight.end()) {
      return absl::InternalError(StrCat(instruction_.name(), ": ", start->name(), " has not started"));
    }
    if (absl::Status s = ctx.Check(ctx.api().cuStreamWaitEvent(ctx.stream, it->second, 0), "cuStreamWaitEvent");
        !s.ok()) {
      return s;
    }
    std::vector<CUdeviceptr> from = p.LeafPointers(instruction_.operand(0), f);
    std::vector<CUdeviceptr> to = p.LeafPointers(&instruction_, f);
    std::vector<Shape> shapes = LeafShapes(instruction_.shape());
    if (instruction_.opcode() == HloOpcode::kAsyncUpdate) {
      return CopyLeavesOnDevice(shapes, from, to, DeviceBuffer(), ctx, instruction_.name());
    }
    size_t begin = 0;  // copy-done: element 0; async-done: element 1
    if (instruction_.opcode() == HloOpcode::kAsyncDone) begin = ElementLeaves(instruction_.operand(0)->shape(), 1).first;
    std::vector<CUdeviceptr> sub(from.begin() + begin, from.begin() + begin + to.size());
    return CopyLeavesOnDevice(shapes, sub, to, DeviceBuffer(), ctx, instruction_.name());
  }
};

bool IsAlias(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement || op == HloOpcode::kBitcast || op == HloOpcode::kOptimizationBarrier ||
         op == HloOpcode::kDomain || op == HloOpcode::kAddDependency || op == HloOpcode::kAfterAll;
}

bool IsRuntimeRoutine(HloOpcode op) {
  return op == HloOpcode::kSort || op == HloOpcode::kFft || op == HloOpcode::kCholesky ||
         op == HloOpcode::kTriangularSolve || op == HloOpcode::kTopK || op == HloOpcode::kRngBitGenerator;
}

bool IsZeroScalarBroadcast(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kBroadcast || !inst.shape().IsArray()) return false;
  const HloInstruction* value = inst.operand(0);
  if (value->opcode() != HloOpcode::kConstant || !value->has_literal() || value->shape().rank() != 0) return false;
  if (!value->shape().IsArray() || value->shape().element_count() != 1) return false;
  std::vector<uint8_t> bytes(BufferBytes(value->shape()) + 1, 0xFF);
  if (!CopyLiteralToBuffer(value->literal(), value->shape(), bytes.data()).ok()) return false;
  return std::all_of(bytes.begin(), bytes.end() - 1, [](uint8_t b) { return b == 0; });
}

bool SameLeafLayouts(const Shape& a, const Shape& b) {
  std::vector<Shape> la = LeafShapes(a), lb = LeafShapes(b);
  if (la.size() != lb.size()) return false;
  for (size_t i = 0; i < la.size(); ++i) {
    if (!la[i].IsArray()) continue;
    bool tiled = (la[i].has_layout() && !la[i].layout().tiles().empty()) ||
                 (lb[i].has_layout() && !lb[i].layout().tiles().empty());
    if (tiled ? !(la[i].layout() == lb[i].layout()) : PhysicalStrides(la[i]) != PhysicalStrides(lb[i])) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- thunk base

absl::Status GpuThunk::Execute(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx) {
  if (!ctx.recording) return Run(program, frame, ctx);
  if (ctx.timing == CudaTiming::kCupti) {
    if (absl::Status s = ctx.tracer->PushExternalId(CuptiExternalKind::kOperation, operation_id); !s.ok()) return s;
    absl::Status s = Run(program, frame, ctx);
    absl::Status popped = ctx.tracer->PopExternalId(CuptiExternalKind::kOperation);
    return s.ok() ? popped : s;
  }
  absl::StatusOr<CUevent> start = ctx.new_event();
  if (!start.ok()) return start.status();
  CUstream stream = ctx.stream;
  if (absl::Status s = ctx.Check(ctx.api().cuEventRecord(*start, stream), "cuEventRecord"); !s.ok()) return s;
  if (absl::Status s = Run(program, frame, ctx); !s.ok()) return s;
  absl::StatusOr<CUevent> end = ctx.new_event();
  if (!end.ok()) return end.status();
  if (absl::Status s = ctx.Check(ctx.api().cuEventRecord(*end, stream), "cuEventRecord"); !s.ok()) return s;
  PendingRecord r;
  r.thunk = this;
  r.start = *start;
  r.end = *end;
  r.stream = stream == ctx.async ? 1 : 0;
  ctx.pending->push_back(std::move(r));
  return absl::OkStatus();
}

std::vector<CUdeviceptr> GpuThunk::Buffers(const DeviceProgram& program, const DeviceFrame& frame) const {
  std::vector<CUdeviceptr> buffers;
  for (const HloInstruction* op : instruction_.operands()) {
    std::vector<CUdeviceptr> leaves = program.LeafPointers(op, frame);
    buffers.push_back(leaves.empty() ? 0 : leaves[0]);
  }
  std::vector<CUdeviceptr> results = program.LeafPointers(&instruction_, frame);
  buffers.insert(buffers.end(), results.begin(), results.end());
  return buffers;
}

// ---------------------------------------------------------------- DeviceProgram

absl::StatusOr<std::unique_ptr<DeviceProgram>> DeviceProgram::Build(const HloComputation& computation,
                                                                    BufferAssignmentOptions options,
                                                                    CudaExecutable::Impl& exe) {
  std::unique_ptr<DeviceProgram> p(new DeviceProgram(computation));
  absl::StatusOr<std::unique_ptr<BufferAssignment>> a = BufferAssignment::Run(computation, std::move(options));
  if (!a.ok()) return a.status();
  p->assignment_ = std::move(*a);
  absl::StatusOr<DeviceBuffer> arena =
      DeviceBuffer::Allocate(*exe.device, p->assignment_->arena_bytes(), StrCat(computation.name(), " arena"));
  if (!arena.ok()) return arena.status();
  p->own_arena_ = std::move(*arena);
  for (const HloInstruction* inst : p->assignment_->schedule()) {
    if (absl::Status s = p->AddThunkFor(*inst, exe); !s.ok()) return s;
  }
  for (const std::unique_ptr<GpuThunk>& t : p->thunks_) {
    t->operation_id = exe.next_operation_id++;
    const HloInstruction& inst = t->instruction();
    exe.operations[t->operation_id] =
        CuptiOperation{inst.name(), inst.parent() != nullptr ? inst.parent()->name() : "", t->kind(), t->detail()};
  }
  return p;
}

absl::Status DeviceProgram::AddHostThunk(const HloInstruction& inst, CudaExecutable::Impl& exe, std::string_view why) {
  if (!exe.options.host_fallback) {
    return absl::UnimplementedError(StrCat(inst.name(), ": no GPU implementation (", why, ") and host fallback is off"));
  }
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().IsArray()) {
      return absl::UnimplementedError(StrCat(inst.name(), ": ", why, "; host fallback needs array operands, not ",
                                             op->shape().ToString()));
    }
  }
  if (ClassifyLibraryCall(inst).has_value()) {
    absl::StatusOr<std::unique_ptr<LibraryCallRunner>> r = LibraryCallRunner::Create(inst);
    if (!r.ok()) return r.status();
    std::shared_ptr<LibraryCallRunner> runner(std::move(*r));
    std::string what = StrCat(inst.custom_call_target(), "/", runner->algorithm().name, " (", why, ")");
    thunks_.push_back(std::make_unique<HostThunk>(
        inst, [runner](absl::Span<void* const> b) { return runner->Run(b); }, what));
    return absl::OkStatus();
  }
  if (IsHostRoutineOpcode(inst.opcode())) {
    absl::StatusOr<std::unique_ptr<HostRoutine>> r = CreateHostRoutine(inst);
    if (!r.ok()) return r.status();
    std::shared_ptr<HostRoutine> routine(std::move(*r));
    thunks_.push_back(std::make_unique<HostThunk>(
        inst, [routine](absl::Span<void* const> b) { return routine->Run(b); },
        StrCat(HloOpcodeString(inst.opcode()), " (", why, ")")));
    return absl::OkStatus();
  }
  // Anything else the host can run only through the reference evaluator.
  absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(inst);
  if (!ev.ok()) return ev.status();
  std::shared_ptr<InstructionEvaluator> evaluator(std::move(*ev));
  thunks_.push_back(std::make_unique<HostThunk>(
      inst, [evaluator](absl::Span<void* const> b) { return evaluator->Run(b); },
      StrCat(HloOpcodeString(inst.opcode()), " (", why, ")")));
  return absl::OkStatus();
}

absl::Status DeviceProgram::AddThunkFor(const HloInstruction& inst, CudaExecutable::Impl& exe) {
  HloOpcode op = inst.opcode();
  const CudaDevice& device = *exe.device;
  bool moves_data = IsAlias(op) || op == HloOpcode::kCopy || op == HloOpcode::kWhile ||
                    op == HloOpcode::kConditional || op == HloOpcode::kCall;
  for (const Shape& leaf : LeafShapes(inst.shape())) {
    if (!leaf.IsArray()) continue;
    absl::Status s = moves_data && op != HloOpcode::kBitcast ? CheckHostLayout(leaf) : CheckPlainLayout(leaf);
    if (!s.ok()) return absl::UnimplementedError(StrCat(inst.name(), ": ", s.message()));
  }
  if (op == HloOpcode::kConstant) {
    if (!inst.has_literal()) return absl::InvalidArgumentError(StrCat(inst.name(), ": constant without a value"));
    std::vector<const Literal*> values;
    std::function<void(const Literal&)> collect = [&](const Literal& l) {
      if (!l.shape().IsTuple()) {
        values.push_back(&l);
        return;
      }
      for (const Literal& e : l.tuple_elements()) collect(e);
    };
    collect(inst.literal());
    std::vector<Shape> leaves = LeafShapes(inst.shape());
    if (values.size() != leaves.size()) return absl::InternalError(StrCat(inst.name(), ": constant leaves mismatch"));
    std::vector<DeviceBuffer>& storage = constants_[&inst];
    for (size_t i = 0; i < leaves.size(); ++i) {
      int64_t bytes = leaves[i].IsArray() ? BufferBytes(leaves[i]) : 0;
      absl::StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(device, bytes, inst.name());
      if (!b.ok()) return b.status();
      storage.push_back(std::move(*b));
      if (bytes == 0 || leaves[i].element_count() == 0) continue;
      std::vector<uint8_t> host(bytes);
      if (absl::Status s = CopyLiteralToBuffer(*values[i], leaves[i], host.data()); !s.ok()) return s;
      if (absl::Status s = device.Check(device.api().cuMemcpyHtoD(storage.back().ptr(), host.data(), bytes),
                                        StrCat("cuMemcpyHtoD(", inst.name(), ")"));
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }
  if (IsAlias(op)) return absl::OkStatus();
  if (op == HloOpcode::kCustomCall && ClassifyLibraryCall(inst).has_value()) {
    absl::StatusOr<std::unique_ptr<CudaLibraryCall>> call = CudaLibraryCall::Create(inst, *exe.libraries);
    if (call.ok()) {
      thunks_.push_back(std::make_unique<LibraryThunk>(inst, std::move(*call)));
      return absl::OkStatus();
    }
    if (!absl::IsUnimplemented(call.status())) return call.status();
    return AddHostThunk(inst, exe, std::string(call.status().message()));
  }
  if (op == HloOpcode::kCopy && SameLeafLayouts(inst.operand(0)->shape(), inst.shape())) {
    thunks_.push_back(std::make_unique<DeviceCopyThunk>(inst));
    return absl::OkStatus();
  }
  if (IsZeroScalarBroadcast(inst)) {
    thunks_.push_back(std::make_unique<MemsetThunk>(inst));
    return absl::OkStatus();
  }
  if (IsRuntimeRoutine(op) || op == HloOpcode::kCustomCall) return AddHostThunk(inst, exe, "runtime routine");
  if (op == HloOpcode::kWhile) {
    absl::StatusOr<std::unique_ptr<DeviceProgram>> cond = Build(*inst.while_condition(), {}, exe);
    if (!cond.ok()) return cond.status();
    BufferAssignmentOptions body_options;  // the loop state is updated in place, as on the CPU
    ForEachSubshape(inst.while_body()->root_instruction()->shape(), [&](const Shape& s, const ShapeIndex& index) {
      if (s.IsTuple()) return;
      body_options.output_aliases.push_back(InputOutputAlias{index, 0, index});
      body_options.donors.push_back(BufferDonor{0, index});
    });
    absl::StatusOr<std::unique_ptr<DeviceProgram>> body = Build(*inst.while_body(), body_options, exe);
    if (!body.ok()) return body.status();
    absl::StatusOr<DeviceBuffer> staging = DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name());
    if (!staging.ok()) return staging.status();
    thunks_.push_back(std::make_unique<WhileThunk>(inst, std::move(*cond), std::move(*body), std::move(*staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kConditional || op == HloOpcode::kCall) {
    std::vector<std::unique_ptr<DeviceProgram>> branches;
    for (const HloComputation* c : inst.called_computations()) {
      absl::StatusOr<std::unique_ptr<DeviceProgram>> b = Build(*c, {}, exe);
      if (!b.ok()) return b.status();
      branches.push_back(std::move(*b));
    }
    if (branches.empty()) return absl::InvalidArgumentError(StrCat(inst.name(), ": no called computation"));
    absl::StatusOr<DeviceBuffer> staging = DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name());
    if (!staging.ok()) return staging.status();
    thunks_.push_back(std::make_unique<BranchThunk>(inst, std::move(branches), std::move(*staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kAsyncStart || op == HloOpcode::kCopyStart) {
    std::unique_ptr<DeviceProgram> wrapped;
    if (op == HloOpcode::kAsyncStart) {
      absl::StatusOr<std::unique_ptr<DeviceProgram>> w = Build(*inst.async_wrapped_computation(), {}, exe);
      if (!w.ok()) return w.status();
      wrapped = std::move(*w);
    }
    absl::StatusOr<DeviceBuffer> staging = DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name());
    if (!staging.ok()) return staging.status();
    thunks_.push_back(std::make_unique<AsyncStartThunk>(inst, std::move(wrapped), std::move(*staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone || op == HloOpcode::kCopyDone) {
    thunks_.push_back(std::make_unique<AsyncWaitThunk>(inst));
    return absl::OkStatus();
  }
  if (!exe.kernels) return AddHostThunk(inst, exe, "no GPU code generator given");
  for (const HloInstruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) {
      return AddHostThunk(inst, exe, StrCat("kernels take array operands, not ", operand->shape().ToString()));
    }
  }
  absl::StatusOr<GpuKernel> kernel = exe.kernels(inst);
  if (!kernel.ok()) {
    if (absl::IsUnimplemented(kernel.status())) return AddHostThunk(inst, exe, std::string(kernel.status().message()));
    return kernel.status();
  }
  auto thunk = std::make_unique<KernelLaunchThunk>(inst, std::move(*kernel));
  if (absl::Status s = thunk->Load(device); !s.ok()) return s;
  thunks_.push_back(std::move(thunk));
  return absl::OkStatus();
}

// ---------------------------------------------------------------- CudaExecutable

absl::StatusOr<std::string> DescribeCudaDevice(int ordinal) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> d = CudaDevice::Open(ordinal);
  if (!d.ok()) return d.status();
  return (*d)->Describe();
}

absl::StatusOr<std::pair<int, int>> CudaComputeCapability(int ordinal) {
  absl::StatusOr<std::unique_ptr<CudaDevice>> d = CudaDevice::Open(ordinal);
  if (!d.ok()) return d.status();
  return std::make_pair((*d)->compute_capability_major(), (*d)->compute_capability_minor());
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
  impl.kernels = kernels;
  impl.module = &module;
  absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(options.device_ordinal);
  if (!device.ok()) return device.status();
  impl.device = std::move(*device);
  impl.description = impl.device->Describe();
  const CudaDriverApi& api = impl.device->api();
  if (absl::Status s = impl.device->Check(api.cuStreamCreate(&impl.compute, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = impl.device->Check(api.cuStreamCreate(&impl.async, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<CudaLibraries>> libraries = CudaLibraries::Create(*impl.device);
  if (!libraries.ok()) return libraries.status();
  impl.libraries = std::move(*libraries);
  absl::StatusOr<std::unique_ptr<DeviceProgram>> program =
      DeviceProgram::Build(*module.entry_computation(), BufferAssignmentOptions::ForModule(module.config()), impl);
  if (!program.ok()) return program.status();
  impl.program = std::move(*program);
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
    copts.operations = operations;
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
    if (absl::Status s = device->Check(api.cuEventElapsedTime(&start_ms, origin, p.start), "cuEventElapsedTime");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = device->Check(api.cuEventElapsedTime(&end_ms, origin, p.end), "cuEventElapsedTime"); !s.ok()) {
      return s;
    }
    KernelRecord r;
    if (p.thunk != nullptr) {
      ThunkRecordFields(*p.thunk, *device, r);
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
  if (absl::Status s = device->Activate(); !s.ok()) return s;
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
    absl::StatusOr<CuptiTracer*> tracer = CuptiTracer::Get();
    if (!tracer.ok()) return tracer.status();
    ctx.tracer = *tracer;
    if (absl::Status s = ctx.tracer->Start(); !s.ok()) return s;
    cupti_origin = ctx.tracer->Timestamp();
    if (absl::Status s = ctx.tracer->PushExternalId(CuptiExternalKind::kRun, run_id); !s.ok()) return s;
  }
  CUevent origin = nullptr;
  if (ctx.recording) {
    absl::StatusOr<CUevent> e = NewEvent();
    if (!e.ok()) return e.status();
    origin = *e;
    if (absl::Status s = device->Check(api.cuEventRecord(origin, compute), "cuEventRecord"); !s.ok()) return s;
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
    absl::StatusOr<CUevent> e = NewEvent();
    if (!e.ok()) return e.status();
    transfer.start = *e;
    if (absl::Status s = device->Check(api.cuEventRecord(transfer.start, compute), "cuEventRecord"); !s.ok()) return s;
  }
  host_staging.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& shape = entry.parameter_instruction(i)->shape();
    std::vector<Shape> leaves = LeafShapes(shape);
    std::vector<const Literal*> values;
    std::function<void(const Literal&)> collect = [&](const Literal& l) {
      if (!l.shape().IsTuple()) {
        values.push_back(&l);
        return;
      }
      for (const Literal& e : l.tuple_elements()) collect(e);
    };
    collect(args[i]);
    if (values.size() != leaves.size()) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " of shape ", args[i].shape().ToString(),
                                               " does not match parameter shape ", shape.ToString()));
    }
    parameters[i].resize(leaves.size());
    for (size_t k = 0; k < leaves.size(); ++k) {
      int64_t bytes = leaves[k].IsArray() ? BufferBytes(leaves[k]) : 0;
      if (parameters[i][k].bytes() != bytes) {
        absl::StatusOr<DeviceBuffer> b = DeviceBuffer::Allocate(*device, bytes, StrCat("argument ", i));
        if (!b.ok()) return b.status();
        parameters[i][k] = std::move(*b);
      }
      frame.parameters[i].push_back(parameters[i][k].ptr());
      if (bytes == 0) continue;
      host_staging.emplace_back(bytes);
      if (absl::Status s = CopyLiteralToBuffer(*values[k], leaves[k], host_staging.back().data()); !s.ok()) {
        return absl::InvalidArgumentError(StrCat("argument ", i, ": ", s.message()));
      }
      if (absl::Status s = device->Check(api.cuMemcpyHtoDAsync(parameters[i][k].ptr(), host_staging.back().data(),
                                                               bytes, compute),
                                         StrCat("cuMemcpyHtoDAsync(argument ", i, ")"));
          !s.ok()) {
        return s;
      }
      last.host_to_device_bytes += bytes;
    }
  }
  if (transfer.start != nullptr) {
    absl::StatusOr<CUevent> e = NewEvent();
    if (!e.ok()) return e.status();
    transfer.end = *e;
    transfer.bytes = last.host_to_device_bytes;
    if (absl::Status s = device->Check(api.cuEventRecord(transfer.end, compute), "cuEventRecord"); !s.ok()) return s;
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
  absl::Status ran = program->ExecuteWithParameters(std::move(frame.parameters), ctx, &run_frame);
  absl::Status synced = device->Check(api.cuStreamSynchronize(async), "cuStreamSynchronize(async)");
  if (synced.ok()) synced = device->Check(api.cuStreamSynchronize(compute), "cuStreamSynchronize(compute)");
  if (ctx.tracer != nullptr) {
    ctx.tracer->PopExternalId(CuptiExternalKind::kRun).IgnoreError();  // the run's tag; Stop reports failures
    absl::StatusOr<std::vector<CuptiActivity>> activities = ctx.tracer->Stop();
    if (!ran.ok()) return ran;
    if (!synced.ok()) return synced;
    if (!activities.ok()) return activities.status();
    if (absl::Status s = Finish(pending, origin, records, &*activities, cupti_origin, run_id); !s.ok()) return s;
    return run_frame;
  }
  if (!ran.ok()) return ran;
  if (!synced.ok()) return synced;
  if (ctx.recording) {
    if (absl::Status s = Finish(pending, origin, records, nullptr, 0, run_id); !s.ok()) return s;
  }
  return run_frame;
}

absl::Status CudaExecutable::Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  DeviceFrame frame;
  return impl_->ExecuteToFrame(args, records, frame).status();
}

absl::StatusOr<Literal> CudaExecutable::Run(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  DeviceFrame frame;
  absl::StatusOr<const DeviceFrame*> ran = impl_->ExecuteToFrame(args, records, frame);
  if (!ran.ok()) return ran.status();
  Impl& impl = *impl_;
  const CudaDriverApi& api = impl.device->api();
  const HloInstruction* root = impl.program->computation().root_instruction();
  std::vector<CUdeviceptr> leaves = impl.program->LeafPointers(root, **ran);
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
    if (absl::Status s = impl.device->Check(api.cuMemcpyDtoH(host.data(), leaves[i], bytes),
                                            StrCat("cuMemcpyDtoH(result leaf ", i, ")"));
        !s.ok()) {
      return s;
    }
    impl.last.device_to_host_bytes += bytes;
    absl::StatusOr<Literal> l = LiteralFromBuffer(shapes[i], host.data());
    if (!l.ok()) return l.status();
    values.push_back(std::move(*l));
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

std::vector<std::string> CudaExecutable::HostFallbacks() const {
  std::vector<std::string> out;
  for (const auto& [id, op] : impl_->operations) {
    if (op.kind == KernelKind::kRuntimeRoutine && op.detail.starts_with(kHostFallbackPrefix)) {
      out.push_back(StrCat(op.hlo_instruction, ": ", op.detail.substr(kHostFallbackPrefix.size())));
    }
  }
  return out;
}

}  // namespace passlab
