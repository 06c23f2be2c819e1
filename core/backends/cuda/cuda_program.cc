// DeviceProgram: one computation's GPU thunks in schedule order, with its
// buffer assignment (the CPU runtime's) placed in one device arena and its
// constants uploaded once. Which thunk an instruction gets: aliases none,
// library calls cuBLASLt/cuDNN, same-layout copies a device copy, zero
// broadcasts a memset, control flow nested programs, fft / cholesky /
// triangular-solve / sort their device routines, everything else a
// kernel from the provider; what the GPU cannot run falls back to the host
// (cuda_host_thunk.cc) when the options allow it.
#include "core/backends/cuda/cuda_thunk.h"

#include <algorithm>

#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"

namespace passlab {
namespace {

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

absl::Status DeviceProgram::Execute(DeviceFrame& frame, GpuRunContext& ctx) const {
  if (static_cast<int64_t>(frame.parameters.size()) != computation_.num_parameters()) {
    return absl::InvalidArgumentError(StrCat(computation_.name(), ": expected ", computation_.num_parameters(),
                                             " parameters, got ", frame.parameters.size()));
  }
  for (const std::unique_ptr<GpuThunk>& t : thunks_) RETURN_IF_ERROR(t->Execute(*this, frame, ctx));
  return absl::OkStatus();
}

absl::Status DeviceProgram::ExecuteWithParameters(std::vector<std::vector<CUdeviceptr>> parameters,
                                                  GpuRunContext& ctx, DeviceFrame** frame_out) const {
  *frame_out = OwnFrame(std::move(parameters));
  return Execute(**frame_out, ctx);
}

DeviceFrame* DeviceProgram::OwnFrame(std::vector<std::vector<CUdeviceptr>> parameters) const {
  own_frame_.arena = own_arena_.ptr();
  own_frame_.parameters = std::move(parameters);
  return &own_frame_;
}

void DeviceProgram::ForEachThunk(const std::function<void(const GpuThunk&)>& visit) const {
  for (const std::unique_ptr<GpuThunk>& t : thunks_) {
    visit(*t);
    for (const DeviceProgram* n : t->nested()) n->ForEachThunk(visit);
  }
}

std::string DeviceProgram::HostDependency() const {
  std::string first;
  ForEachThunk([&](const GpuThunk& t) {
    if (first.empty()) first = t.HostDependency();
  });
  return first;
}

CUdeviceptr DeviceProgram::Resolve(const BufferSlice& slice, const DeviceFrame& frame) const {
  switch (slice.kind) {
    case BufferSlice::Kind::kNone: return 0;
    case BufferSlice::Kind::kArena: return frame.arena + slice.offset;
    case BufferSlice::Kind::kParameter: return frame.parameters[slice.parameter][slice.parameter_leaf];
    case BufferSlice::Kind::kConstant: return constants_.at(slice.constant)[slice.constant_leaf].ptr();
  }
  return 0;
}

std::vector<CUdeviceptr> DeviceProgram::LeafPointers(const HloInstruction* inst, const DeviceFrame& frame) const {
  std::vector<CUdeviceptr> out;
  for (const BufferSlice& s : assignment_->LeafSlices(inst)) out.push_back(Resolve(s, frame));
  return out;
}

std::string DeviceProgram::ToString(int indent) const {
  std::string out, pad(indent, ' ');
  for (const std::unique_ptr<GpuThunk>& t : thunks_) {
    StrAppend(&out, pad, KernelKindName(t->kind()), " ", t->instruction().name(), " (", t->detail(), ")\n");
    for (const DeviceProgram* n : t->nested()) {
      StrAppend(&out, pad, "  ", n->computation().name(), ":\n", n->ToString(indent + 4));
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<DeviceProgram>> DeviceProgram::Build(const HloComputation& computation,
                                                                    BufferAssignmentOptions options,
                                                                    DeviceProgramContext& ctx) {
  std::unique_ptr<DeviceProgram> p(new DeviceProgram(computation));
  ASSIGN_OR_RETURN(p->assignment_, BufferAssignment::Run(computation, std::move(options)));
  ASSIGN_OR_RETURN(p->own_arena_, DeviceBuffer::Allocate(*ctx.device, p->assignment_->arena_bytes(),
                                                         StrCat(computation.name(), " arena")));
  for (const HloInstruction* inst : p->assignment_->schedule()) RETURN_IF_ERROR(p->AddThunkFor(*inst, ctx));
  for (const std::unique_ptr<GpuThunk>& t : p->thunks_) {
    t->operation_id = ctx.next_operation_id++;
    const HloInstruction& inst = t->instruction();
    ctx.operations[t->operation_id] =
        CuptiOperation{inst.name(), inst.parent() != nullptr ? inst.parent()->name() : "", t->kind(), t->detail()};
  }
  return p;
}

absl::Status DeviceProgram::AddHostThunk(const HloInstruction& inst, const DeviceProgramContext& ctx,
                                         std::string_view why) {
  if (!ctx.host_fallback) {
    return absl::UnimplementedError(StrCat(inst.name(), ": no GPU implementation (", why, ") and host fallback is off"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GpuThunk> thunk, CreateHostFallbackThunk(inst, why, ctx.host_kernels));
  thunks_.push_back(std::move(thunk));
  return absl::OkStatus();
}

absl::Status DeviceProgram::AddConstant(const HloInstruction& inst, const CudaDevice& device) {
  if (!inst.has_literal()) return absl::InvalidArgumentError(StrCat(inst.name(), ": constant without a value"));
  std::vector<const Literal*> values;
  FlattenLeaves(inst.literal(), values);
  std::vector<Shape> leaves = LeafShapes(inst.shape());
  if (values.size() != leaves.size()) return absl::InternalError(StrCat(inst.name(), ": constant leaves mismatch"));
  std::vector<DeviceBuffer>& storage = constants_[&inst];
  for (size_t i = 0; i < leaves.size(); ++i) {
    int64_t bytes = leaves[i].IsArray() ? BufferBytes(leaves[i]) : 0;
    ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(device, bytes, inst.name()));
    storage.push_back(std::move(b));
    if (bytes == 0 || leaves[i].element_count() == 0) continue;
    std::vector<uint8_t> host(bytes);
    RETURN_IF_ERROR(CopyLiteralToBuffer(*values[i], leaves[i], host.data()));
    RETURN_IF_ERROR(device.Check(device.api().cuMemcpyHtoD(storage.back().ptr(), host.data(), bytes),
                                 StrCat("cuMemcpyHtoD(", inst.name(), ")")));
  }
  return absl::OkStatus();
}

absl::Status DeviceProgram::AddThunkFor(const HloInstruction& inst, DeviceProgramContext& ctx) {
  HloOpcode op = inst.opcode();
  const CudaDevice& device = *ctx.device;
  bool moves_data = IsBufferAlias(op) || op == HloOpcode::kCopy || op == HloOpcode::kWhile ||
                    op == HloOpcode::kConditional || op == HloOpcode::kCall;
  for (const Shape& leaf : LeafShapes(inst.shape())) {
    if (!leaf.IsArray()) continue;
    absl::Status s = moves_data && op != HloOpcode::kBitcast ? CheckHostLayout(leaf) : CheckPlainLayout(leaf);
    if (!s.ok()) return absl::UnimplementedError(StrCat(inst.name(), ": ", s.message()));
  }
  if (op == HloOpcode::kConstant) return AddConstant(inst, device);
  if (IsBufferAlias(op)) return absl::OkStatus();
  if (op == HloOpcode::kCustomCall && ClassifyLibraryCall(inst).has_value()) {
    absl::StatusOr<std::unique_ptr<CudaLibraryCall>> call = CudaLibraryCall::Create(inst, *ctx.libraries);
    if (call.ok()) {
      thunks_.push_back(CreateLibraryThunk(inst, std::move(*call)));
      return absl::OkStatus();
    }
    if (!absl::IsUnimplemented(call.status())) return call.status();
    return AddHostThunk(inst, ctx, std::string(call.status().message()));
  }
  if (op == HloOpcode::kCopy && SameLeafLayouts(inst.operand(0)->shape(), inst.shape())) {
    thunks_.push_back(CreateDeviceCopyThunk(inst));
    return absl::OkStatus();
  }
  if (IsZeroScalarBroadcast(inst)) {
    thunks_.push_back(CreateMemsetThunk(inst));
    return absl::OkStatus();
  }
  if (IsRuntimeRoutine(op)) {
    absl::StatusOr<std::unique_ptr<GpuThunk>> routine = CreateRoutineThunk(inst, ctx);
    if (routine.ok()) {
      thunks_.push_back(std::move(*routine));
      return absl::OkStatus();
    }
    if (!absl::IsUnimplemented(routine.status())) return routine.status();
    return AddHostThunk(inst, ctx, std::string(routine.status().message()));
  }
  if (op == HloOpcode::kCustomCall) return AddHostThunk(inst, ctx, "runtime routine");
  if (op == HloOpcode::kWhile) {
    ASSIGN_OR_RETURN(std::unique_ptr<DeviceProgram> cond, Build(*inst.while_condition(), {}, ctx));
    BufferAssignmentOptions body_options;  // the loop state is updated in place, as on the CPU
    ForEachSubshape(inst.while_body()->root_instruction()->shape(), [&](const Shape& s, const ShapeIndex& index) {
      if (s.IsTuple()) return;
      body_options.output_aliases.push_back(InputOutputAlias{index, 0, index});
      body_options.donors.push_back(BufferDonor{0, index});
    });
    ASSIGN_OR_RETURN(std::unique_ptr<DeviceProgram> body, Build(*inst.while_body(), body_options, ctx));
    ASSIGN_OR_RETURN(DeviceBuffer staging, DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name()));
    thunks_.push_back(CreateWhileThunk(inst, std::move(cond), std::move(body), std::move(staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kConditional || op == HloOpcode::kCall) {
    std::vector<std::unique_ptr<DeviceProgram>> branches;
    for (const HloComputation* c : inst.called_computations()) {
      ASSIGN_OR_RETURN(std::unique_ptr<DeviceProgram> b, Build(*c, {}, ctx));
      branches.push_back(std::move(b));
    }
    if (branches.empty()) return absl::InvalidArgumentError(StrCat(inst.name(), ": no called computation"));
    ASSIGN_OR_RETURN(DeviceBuffer staging, DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name()));
    thunks_.push_back(CreateBranchThunk(inst, std::move(branches), std::move(staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kAsyncStart || op == HloOpcode::kCopyStart) {
    std::unique_ptr<DeviceProgram> wrapped;
    if (op == HloOpcode::kAsyncStart) {
      ASSIGN_OR_RETURN(std::unique_ptr<DeviceProgram> w, Build(*inst.async_wrapped_computation(), {}, ctx));
      wrapped = std::move(w);
    }
    ASSIGN_OR_RETURN(DeviceBuffer staging, DeviceBuffer::Allocate(device, StagingBytes(inst.shape()), inst.name()));
    thunks_.push_back(CreateAsyncStartThunk(inst, std::move(wrapped), std::move(staging)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone || op == HloOpcode::kCopyDone) {
    thunks_.push_back(CreateAsyncWaitThunk(inst));
    return absl::OkStatus();
  }
  if (!ctx.kernels) return AddHostThunk(inst, ctx, "no GPU code generator given");
  for (const HloInstruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) {
      return AddHostThunk(inst, ctx, StrCat("kernels take array operands, not ", operand->shape().ToString()));
    }
  }
  absl::StatusOr<GpuKernel> kernel = ctx.kernels(inst);
  if (!kernel.ok()) {
    if (absl::IsUnimplemented(kernel.status())) return AddHostThunk(inst, ctx, std::string(kernel.status().message()));
    return kernel.status();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GpuThunk> thunk, CreateKernelLaunchThunk(inst, std::move(*kernel), device));
  thunks_.push_back(std::move(thunk));
  return absl::OkStatus();
}

}  // namespace passlab
