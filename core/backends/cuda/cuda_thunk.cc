#include "core/backends/cuda/cuda_thunk.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

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
    RETURN_IF_ERROR(device.Check(device.api().cuModuleGetFunction(&function_, module_, kernel_.entry.c_str()),
                                 StrCat("cuModuleGetFunction(", kernel_.name, ", ", kernel_.entry, ")")));
    const GpuLaunchDimensions& l = kernel_.launch;
    if (l.dynamic_shared_memory_bytes > 48 * 1024) {
      RETURN_IF_ERROR(
          device.Check(device.api().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                       static_cast<int>(l.dynamic_shared_memory_bytes)),
                       StrCat("cuFuncSetAttribute(", kernel_.name, ", dynamic shared memory)")));
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
    return StrCat(instruction_.custom_call_target(), "/", call_->algorithm().name, call_->tf32() ? " (tf32)" : "");
  }
  int64_t flops() const override { return call_->flops(); }
  bool UsesTf32() const override { return call_->tf32(); }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    return call_->Run(Buffers(p, f), ctx.stream);
  }

 private:
  std::unique_ptr<CudaLibraryCall> call_;
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

}  // namespace

// ---------------------------------------------------------------- thunks

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateKernelLaunchThunk(const HloInstruction& inst, GpuKernel kernel,
                                                                  const CudaDevice& device) {
  auto thunk = std::make_unique<KernelLaunchThunk>(inst, std::move(kernel));
  RETURN_IF_ERROR(thunk->Load(device));
  return thunk;
}

std::unique_ptr<GpuThunk> CreateLibraryThunk(const HloInstruction& inst, std::unique_ptr<CudaLibraryCall> call) {
  return std::make_unique<LibraryThunk>(inst, std::move(call));
}

std::unique_ptr<GpuThunk> CreateDeviceCopyThunk(const HloInstruction& inst) {
  return std::make_unique<DeviceCopyThunk>(inst);
}

std::unique_ptr<GpuThunk> CreateMemsetThunk(const HloInstruction& inst) { return std::make_unique<MemsetThunk>(inst); }

// ---------------------------------------------------------------- device copies

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
        RETURN_IF_ERROR(copy(to[i], from[i], BufferBytes(shapes[i])));
      }
    }
    return absl::OkStatus();
  }
  int64_t offset = 0;
  std::vector<int64_t> offsets;
  for (size_t i = 0; i < from.size(); ++i) {
    offsets.push_back(offset);
    if (shapes[i].IsArray() && from[i] != to[i]) {
      RETURN_IF_ERROR(copy(staging.ptr() + offset, from[i], BufferBytes(shapes[i])));
      offset += (BufferBytes(shapes[i]) + 255) / 256 * 256;
    }
  }
  for (size_t i = 0; i < from.size(); ++i) {
    if (shapes[i].IsArray() && from[i] != to[i]) {
      RETURN_IF_ERROR(copy(to[i], staging.ptr() + offsets[i], BufferBytes(shapes[i])));
    }
  }
  return absl::OkStatus();
}

int64_t StagingBytes(const Shape& shape) {
  int64_t n = 0;
  for (const Shape& leaf : LeafShapes(shape)) n += (BufferBytes(leaf) + 255) / 256 * 256;
  return n;
}

// ---------------------------------------------------------------- thunk base

int64_t GpuThunk::bytes_read() const {
  int64_t n = 0;
  for (const HloInstruction* op : instruction_.operands()) n += LeafBufferBytes(op->shape());
  return n;
}

void GpuThunk::FillRecord(const CudaDevice& device, KernelRecord& r) const {
  r.name = instruction_.name();
  r.kind = kind();
  r.detail = detail();
  r.device = StrCat("cuda:", device.ordinal());
  r.hlo_instruction = instruction_.name();
  r.hlo_computation = instruction_.parent() != nullptr ? instruction_.parent()->name() : "";
  r.bytes_read = bytes_read();
  r.bytes_written = bytes_written();
  r.flops = flops();
  r.launch = launch();
  r.registers = registers();
  r.shared_memory_bytes = shared_memory_bytes();
}

absl::Status GpuThunk::Execute(const DeviceProgram& program, DeviceFrame& frame, GpuRunContext& ctx) {
  if (!ctx.recording) return Run(program, frame, ctx);
  if (ctx.timing == CudaTiming::kCupti) {
    RETURN_IF_ERROR(ctx.tracer->PushExternalId(CuptiExternalKind::kOperation, operation_id));
    absl::Status s = Run(program, frame, ctx);
    absl::Status popped = ctx.tracer->PopExternalId(CuptiExternalKind::kOperation);
    return s.ok() ? popped : s;
  }
  ASSIGN_OR_RETURN(CUevent start, ctx.new_event());
  CUstream stream = ctx.stream;
  RETURN_IF_ERROR(ctx.Check(ctx.api().cuEventRecord(start, stream), "cuEventRecord"));
  RETURN_IF_ERROR(Run(program, frame, ctx));
  ASSIGN_OR_RETURN(CUevent end, ctx.new_event());
  RETURN_IF_ERROR(ctx.Check(ctx.api().cuEventRecord(end, stream), "cuEventRecord"));
  PendingRecord r;
  r.thunk = this;
  r.start = start;
  r.end = end;
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

}  // namespace passlab
