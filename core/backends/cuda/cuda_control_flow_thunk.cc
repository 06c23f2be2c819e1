// Control-flow thunks of the CUDA runtime: while and conditional/call run
// nested DevicePrograms (the predicate or branch index read back to the
// host), async-start/copy-start enqueue on the second stream and their done
// waits for it (events order the two streams).
#include "core/backends/cuda/cuda_thunk.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

absl::StatusOr<uint8_t> ReadByte(CUdeviceptr ptr, GpuRunContext& ctx, std::string_view what) {
  uint8_t value = 0;
  RETURN_IF_ERROR(ctx.Check(ctx.api().cuMemcpyDtoHAsync(&value, ptr, 1, ctx.stream),
                            StrCat("cuMemcpyDtoHAsync(", what, ")")));
  RETURN_IF_ERROR(ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));
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
  std::string HostDependency() const override {
    return StrCat(instruction_.name(), " reads its predicate on the host");
  }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    std::vector<Shape> shapes = LeafShapes(instruction_.shape());
    std::vector<CUdeviceptr> state = p.LeafPointers(&instruction_, f);
    RETURN_IF_ERROR(CopyLeavesOnDevice(shapes, p.LeafPointers(instruction_.operand(0), f), state, staging_, ctx,
                                       instruction_.name()));
    iterations_ = 0;
    for (;;) {
      DeviceFrame* cf = nullptr;
      RETURN_IF_ERROR(cond_->ExecuteWithParameters({state}, ctx, &cf));
      CUdeviceptr pred = cond_->LeafPointers(cond_->computation().root_instruction(), *cf)[0];
      ASSIGN_OR_RETURN(uint8_t go, ReadByte(pred, ctx, StrCat(instruction_.name(), " predicate")));
      if (go == 0) break;
      if (++iterations_ > kMaxWhileIterations) {
        return absl::ResourceExhaustedError(
            StrCat(instruction_.name(), ": more than ", kMaxWhileIterations, " iterations"));
      }
      DeviceFrame* bf = nullptr;
      RETURN_IF_ERROR(body_->ExecuteWithParameters({state}, ctx, &bf));
      RETURN_IF_ERROR(CopyLeavesOnDevice(shapes, body_->LeafPointers(body_->computation().root_instruction(), *bf),
                                         state, staging_, ctx, instruction_.name()));
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
  std::string HostDependency() const override {
    if (instruction_.opcode() != HloOpcode::kConditional) return "";
    return StrCat(instruction_.name(), " reads its branch index on the host");
  }
  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    const DeviceProgram* branch = branches_[0].get();
    std::vector<std::vector<CUdeviceptr>> params;
    if (instruction_.opcode() == HloOpcode::kConditional) {
      const HloInstruction* index = instruction_.operand(0);
      CUdeviceptr ptr = p.LeafPointers(index, f)[0];
      int64_t n = static_cast<int64_t>(branches_.size()), b = 0;
      if (index->shape().element_type() == PrimitiveType::kPred) {
        ASSIGN_OR_RETURN(uint8_t v, ReadByte(ptr, ctx, StrCat(instruction_.name(), " predicate")));
        b = v != 0 ? 0 : 1;
      } else {
        int32_t v = 0;
        RETURN_IF_ERROR(ctx.Check(ctx.api().cuMemcpyDtoHAsync(&v, ptr, sizeof(v), ctx.stream),
                                  StrCat("cuMemcpyDtoHAsync(", instruction_.name(), " branch index)")));
        RETURN_IF_ERROR(ctx.Check(ctx.api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize"));
        b = v < 0 || v >= n ? n - 1 : v;  // out of range runs the last branch
      }
      branch = branches_[b].get();
      params.push_back(p.LeafPointers(instruction_.operand(b + 1), f));
    } else {
      for (const HloInstruction* op : instruction_.operands()) params.push_back(p.LeafPointers(op, f));
    }
    DeviceFrame* bf = nullptr;
    RETURN_IF_ERROR(branch->ExecuteWithParameters(std::move(params), ctx, &bf));
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
  ASSIGN_OR_RETURN(CUevent e, ctx.new_event());
  RETURN_IF_ERROR(ctx.Check(ctx.api().cuEventRecord(e, signaller), StrCat("cuEventRecord(", what, ")")));
  return ctx.Check(ctx.api().cuStreamWaitEvent(waiter, e, 0), StrCat("cuStreamWaitEvent(", what, ")"));
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
    RETURN_IF_ERROR(CopyLeavesOnDevice(held_shapes, operands, held, staging_, ctx, instruction_.name()));
    CUstream caller = ctx.stream;
    RETURN_IF_ERROR(Order(caller, ctx.async, ctx, instruction_.name()));
    ctx.stream = ctx.async;
    absl::Status s = Enqueue(held, out, leaves, ctx);
    ctx.stream = caller;
    if (!s.ok()) return s;
    ASSIGN_OR_RETURN(CUevent done, ctx.new_event());
    RETURN_IF_ERROR(ctx.Check(ctx.api().cuEventRecord(done, ctx.async), "cuEventRecord"));
    ctx.in_flight[&instruction_] = done;
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
    RETURN_IF_ERROR(wrapped_->ExecuteWithParameters(std::move(params), ctx, &wf));
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
    RETURN_IF_ERROR(ctx.Check(ctx.api().cuStreamWaitEvent(ctx.stream, it->second, 0), "cuStreamWaitEvent"));
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

}  // namespace

std::unique_ptr<GpuThunk> CreateWhileThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> condition,
                                           std::unique_ptr<DeviceProgram> body, DeviceBuffer staging) {
  return std::make_unique<WhileThunk>(inst, std::move(condition), std::move(body), std::move(staging));
}

std::unique_ptr<GpuThunk> CreateBranchThunk(const HloInstruction& inst,
                                            std::vector<std::unique_ptr<DeviceProgram>> branches,
                                            DeviceBuffer staging) {
  return std::make_unique<BranchThunk>(inst, std::move(branches), std::move(staging));
}

std::unique_ptr<GpuThunk> CreateAsyncStartThunk(const HloInstruction& inst, std::unique_ptr<DeviceProgram> wrapped,
                                                DeviceBuffer staging) {
  return std::make_unique<AsyncStartThunk>(inst, std::move(wrapped), std::move(staging));
}

std::unique_ptr<GpuThunk> CreateAsyncWaitThunk(const HloInstruction& inst) {
  return std::make_unique<AsyncWaitThunk>(inst);
}

}  // namespace passlab
