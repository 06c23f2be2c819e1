// Host fallback of the CUDA runtime: what has no GPU implementation here (an
// op the kernel provider cannot emit, a library call the GPU library cannot
// take as laid out, rng, topk and the routines cuda_routine_thunk.cc cannot
// take) runs on the host between a device-to-host and a host-to-device copy,
// on the CPU runtime's library-call runner or host routine, or else as a
// host kernel of the CPU code generator (injected: HostKernelProvider). Its
// records say kind "routine", detail "host: ...".
#include "core/backends/cuda/cuda_thunk.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_routine.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {
namespace {

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
  std::string HostDependency() const override { return StrCat(instruction_.name(), " runs on the host"); }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    std::vector<CUdeviceptr> buffers = Buffers(p, f);
    std::vector<void*> host;
    for (size_t i = 0; i < buffers.size(); ++i) {
      int64_t bytes = shapes_[i].IsArray() ? BufferBytes(shapes_[i]) : 0;
      host.push_back(buffers[i] == 0 && bytes == 0 ? nullptr : host_[i].data());
      if (i >= operands_ || bytes == 0 || buffers[i] == 0) continue;
      RETURN_IF_ERROR(ctx.Check(ctx.api().cuMemcpyDtoHAsync(host_[i].data(), buffers[i], bytes, ctx.stream),
                                StrCat("cuMemcpyDtoHAsync(", instruction_.name(), " operand ", i, ")")));
    }
    RETURN_IF_ERROR(ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));
    RETURN_IF_ERROR(fn_(host));
    for (size_t i = operands_; i < buffers.size(); ++i) {
      int64_t bytes = shapes_[i].IsArray() ? BufferBytes(shapes_[i]) : 0;
      if (bytes == 0 || buffers[i] == 0) continue;
      RETURN_IF_ERROR(ctx.Check(ctx.api().cuMemcpyHtoDAsync(buffers[i], host_[i].data(), bytes, ctx.stream),
                                StrCat("cuMemcpyHtoDAsync(", instruction_.name(), " result)")));
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

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateHostFallbackThunk(const HloInstruction& inst, std::string_view why,
                                                                  const HostKernelProvider& host_kernels) {
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().IsArray()) {
      return absl::UnimplementedError(StrCat(inst.name(), ": ", why, "; host fallback needs array operands, not ",
                                             op->shape().ToString()));
    }
  }
  if (ClassifyLibraryCall(inst).has_value()) {
    ASSIGN_OR_RETURN(std::unique_ptr<LibraryCallRunner> r, LibraryCallRunner::Create(inst));
    std::shared_ptr<LibraryCallRunner> runner(std::move(r));
    std::string what = StrCat(inst.custom_call_target(), "/", runner->algorithm().name, " (", why, ")");
    return std::make_unique<HostThunk>(
        inst, [runner](absl::Span<void* const> b) { return runner->Run(b); }, what);
  }
  if (IsHostRoutineOpcode(inst.opcode())) {
    ASSIGN_OR_RETURN(std::unique_ptr<HostRoutine> r, CreateHostRoutine(inst));
    std::shared_ptr<HostRoutine> routine(std::move(r));
    return std::make_unique<HostThunk>(
        inst, [routine](absl::Span<void* const> b) { return routine->Run(b); },
        StrCat(HloOpcodeString(inst.opcode()), " (", why, ")"));
  }
  // Anything else: a kernel of the host's code generator.
  if (!host_kernels) {
    return absl::UnimplementedError(StrCat(inst.name(), " (", HloOpcodeString(inst.opcode()),
                                           "): no GPU implementation (", why,
                                           ") and no host code generator to run it on the host"));
  }
  absl::StatusOr<std::unique_ptr<CompiledKernel>> k = host_kernels(inst);
  if (!k.ok()) {
    return absl::UnimplementedError(StrCat(inst.name(), " (", HloOpcodeString(inst.opcode()),
                                           "): no GPU implementation (", why,
                                           "), and the host code generator cannot compile it either: ",
                                           k.status().message()));
  }
  std::shared_ptr<CompiledKernel> kernel(std::move(*k));
  return std::make_unique<HostThunk>(
      inst,
      [kernel](absl::Span<void* const> b) {
        kernel->Run(b);
        return absl::OkStatus();
      },
      StrCat(HloOpcodeString(inst.opcode()), " on a host kernel (", why, ")"));
}

}  // namespace passlab
