#include "core/backends/cpu/thunk.h"

#include <algorithm>
#include <cstring>

#include "core/backends/cpu/fusion_views.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine.h"

namespace passlab {
namespace {

// dst = src element by element, `dst_shape` and `src_shape` having the same
// dimensions and element type but possibly different layouts.
void CopyArray(const Shape& src_shape, const void* src, const Shape& dst_shape, void* dst) {
  int64_t bytes = BufferBytes(dst_shape);
  if (bytes == 0 || src == dst) return;
  bool tiled = (src_shape.has_layout() && !src_shape.layout().tiles().empty()) ||
               (dst_shape.has_layout() && !dst_shape.layout().tiles().empty());
  if (tiled) {
    // Through the row-major order: offsets of both sides by element.
    if (src_shape.layout() == dst_shape.layout()) {
      std::memcpy(dst, src, bytes);
      return;
    }
    int64_t width = PrimitiveByteWidth(dst_shape.element_type());
    std::vector<int64_t> from(src_shape.element_count());
    ForEachElementOffset(src_shape, [&](int64_t linear, int64_t offset) { from[linear] = offset; });
    std::memset(dst, 0, bytes);  // tile padding
    const uint8_t* s = static_cast<const uint8_t*>(src);
    uint8_t* d = static_cast<uint8_t*>(dst);
    ForEachElementOffset(dst_shape, [&](int64_t linear, int64_t offset) {
      std::memcpy(d + offset * width, s + from[linear] * width, width);
    });
    return;
  }
  std::vector<int64_t> ss = PhysicalStrides(src_shape), ds = PhysicalStrides(dst_shape);
  if (ss == ds) {
    std::memcpy(dst, src, bytes);
    return;
  }
  int64_t width = PrimitiveByteWidth(dst_shape.element_type()), rank = dst_shape.rank();
  std::vector<int64_t> idx(rank, 0);
  int64_t so = 0, dof = 0, n = dst_shape.element_count();
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(d + dof * width, s + so * width, width);
    for (int64_t k = rank - 1; k >= 0; --k) {
      so += ss[k];
      dof += ds[k];
      if (++idx[k] < dst_shape.dimensions(k)) break;
      so -= ss[k] * idx[k];
      dof -= ds[k] * idx[k];
      idx[k] = 0;
    }
  }
}

// Copies each leaf of `from` (program `fp`, frame `ff`) into the matching
// leaf pointer of `to`, staging first so that leaves may swap places.
void CopyLeaves(const std::vector<Shape>& from_shapes, const std::vector<void*>& from,
                const std::vector<Shape>& to_shapes, const std::vector<void*>& to) {
  // Straight from source to destination unless a destination overlaps
  // another leaf's source (a tuple copy that permutes shared buffers): then
  // every source is staged first. Staging a 2 MB array through a fresh
  // vector took 0.68 ms on the 2-core VM, the direct copy a third of that.
  auto range = [](const Shape& s, const void* p) {
    const auto* b = static_cast<const uint8_t*>(p);
    return std::pair{b, b + BufferBytes(s)};
  };
  bool overlap = false;
  for (size_t i = 0; i < from.size() && !overlap; ++i) {
    if (from[i] == to[i] || !from_shapes[i].IsArray()) continue;
    auto [t0, t1] = range(to_shapes[i], to[i]);
    for (size_t j = 0; j < from.size() && !overlap; ++j) {
      if (!from_shapes[j].IsArray()) continue;
      auto [f0, f1] = range(from_shapes[j], from[j]);
      overlap = t0 < f1 && f0 < t1;
    }
  }
  if (!overlap) {
    for (size_t i = 0; i < from.size(); ++i) {
      if (from[i] == to[i] || !from_shapes[i].IsArray()) continue;
      CopyArray(from_shapes[i], from[i], to_shapes[i], to[i]);
    }
    return;
  }
  std::vector<std::vector<uint8_t>> staged(from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i] || !from_shapes[i].IsArray()) continue;
    staged[i].resize(BufferBytes(from_shapes[i]));
    if (!staged[i].empty()) std::memcpy(staged[i].data(), from[i], staged[i].size());
  }
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i] || !from_shapes[i].IsArray()) continue;
    CopyArray(from_shapes[i], staged[i].data(), to_shapes[i], to[i]);
  }
}

// Whether `copy` moves one plain (untiled) array into another layout.
bool IsLayoutChangingPlainCopy(const HloInstruction& copy) {
  const Shape& from = copy.operand(0)->shape();
  const Shape& to = copy.shape();
  if (!from.IsArray() || !to.IsArray() || to.element_count() == 0) return false;
  if (!CheckPlainLayout(from).ok() || !CheckPlainLayout(to).ok()) return false;
  return PhysicalStrides(from) != PhysicalStrides(to);
}

// ---------------------------------------------------------------- thunks

class KernelThunk : public Thunk {
 public:
  KernelThunk(const HloInstruction& inst, std::unique_ptr<CompiledKernel> kernel)
      : Thunk(inst), kernel_(std::move(kernel)) {}
  KernelKind kind() const override { return KernelKind::kEmitted; }
  std::string detail() const override { return EmitterKindName(kernel_->emitter_kind()); }
  absl::Status Run(const Program& p, Frame& f, RunContext&) override {
    kernel_->Run(KernelBuffers(p, f));
    return absl::OkStatus();
  }
  int64_t bytes_read() const override {
    return kernel_->bytes_read() > 0 ? kernel_->bytes_read() : Thunk::bytes_read();
  }
  int64_t bytes_written() const override {
    return kernel_->bytes_written() > 0 ? kernel_->bytes_written() : Thunk::bytes_written();
  }
  int64_t flops() const override { return kernel_->flops(); }

 private:
  std::unique_ptr<CompiledKernel> kernel_;
};

class LibraryCallThunk : public Thunk {
 public:
  // `elided`: the operands that are elided fusions (fusion_views.h), read
  // through views of their own operand's buffer by `runner`.
  LibraryCallThunk(const HloInstruction& inst, std::unique_ptr<LibraryCallRunner> runner,
                   const absl::flat_hash_set<const HloInstruction*>& elided = {})
      : Thunk(inst), runner_(std::move(runner)) {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (elided.contains(inst.operand(i))) views_.push_back({i, inst.operand(i)->operand(0)});
    }
  }
  KernelKind kind() const override { return KernelKind::kLibraryCall; }
  std::string detail() const override {
    std::string out = StrCat(instruction_.custom_call_target(), "/", runner_->algorithm().name);
    for (const auto& [operand, source] : views_) {
      StrAppend(&out, ", ", instruction_.operand(operand)->name(), " as a view of ", source->name());
    }
    return out;
  }
  absl::Status Run(const Program& p, Frame& f, RunContext&) override {
    std::vector<void*> buffers = KernelBuffers(p, f);
    for (const auto& [operand, source] : views_) buffers[operand] = p.LeafPointers(source, f)[0];
    return runner_->Run(buffers);
  }
  int64_t flops() const override { return runner_->flops(); }

 private:
  std::unique_ptr<LibraryCallRunner> runner_;
  std::vector<std::pair<int64_t, const HloInstruction*>> views_;  // operand, the buffer it reads
};

class CopyThunk : public Thunk {
 public:
  using Thunk::Thunk;
  KernelKind kind() const override { return KernelKind::kCopy; }
  std::string detail() const override { return "copy"; }
  absl::Status Run(const Program& p, Frame& f, RunContext&) override {
    std::vector<Shape> from = LeafShapes(instruction_.operand(0)->shape()), to = LeafShapes(instruction_.shape());
    CopyLeaves(from, p.LeafPointers(instruction_.operand(0), f), to, p.LeafPointers(&instruction_, f));
    return absl::OkStatus();
  }
};

// sort, topk, fft, cholesky, triangular-solve, rng-bit-generator and
// rng-get-and-update-state: the runtime's host routines (host_routine.h),
// as XLA:CPU runs them as calls.
class RoutineThunk : public Thunk {
 public:
  RoutineThunk(const HloInstruction& inst, std::unique_ptr<HostRoutine> routine)
      : Thunk(inst), routine_(std::move(routine)) {}
  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override { return std::string(HloOpcodeString(instruction_.opcode())); }
  absl::Status Run(const Program& p, Frame& f, RunContext&) override { return routine_->Run(KernelBuffers(p, f)); }
  int64_t flops() const override { return routine_->flops(); }

 private:
  std::unique_ptr<HostRoutine> routine_;
};

// The parameter leaves a nested program gets: the leaves of `operands`.
std::vector<std::vector<void*>> ParametersFrom(const Program& p, const Frame& f,
                                               absl::Span<HloInstruction* const> operands) {
  std::vector<std::vector<void*>> params;
  for (const HloInstruction* op : operands) params.push_back(p.LeafPointers(op, f));
  return params;
}

class WhileThunk : public Thunk {
 public:
  WhileThunk(const HloInstruction& inst, std::unique_ptr<Program> cond, std::unique_ptr<Program> body,
             int64_t max_iterations)
      : Thunk(inst), cond_(std::move(cond)), body_(std::move(body)), max_iterations_(max_iterations) {}
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return StrCat("while (", iterations_, " iterations)"); }
  std::vector<const Program*> nested() const override { return {cond_.get(), body_.get()}; }
  int64_t bytes_read() const override { return 0; }
  int64_t bytes_written() const override { return 0; }
  absl::Status Run(const Program& p, Frame& f, RunContext& ctx) override {
    std::vector<Shape> shapes = LeafShapes(instruction_.shape());
    std::vector<void*> state = p.LeafPointers(&instruction_, f);
    CopyLeaves(shapes, p.LeafPointers(instruction_.operand(0), f), shapes, state);
    iterations_ = 0;
    for (;;) {
      Frame* cf = nullptr;
      RETURN_IF_ERROR(cond_->ExecuteWithParameters({state}, ctx, &cf));
      void* pred = cond_->LeafPointers(cond_->computation().root_instruction(), *cf)[0];
      if (*static_cast<const uint8_t*>(pred) == 0) break;
      if (++iterations_ > max_iterations_) {
        return absl::ResourceExhaustedError(
            StrCat(instruction_.name(), ": more than ", max_iterations_, " iterations"));
      }
      Frame* bf = nullptr;
      RETURN_IF_ERROR(body_->ExecuteWithParameters({state}, ctx, &bf));
      CopyLeaves(shapes, body_->LeafPointers(body_->computation().root_instruction(), *bf), shapes, state);
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<Program> cond_, body_;
  int64_t max_iterations_;
  int64_t iterations_ = 0;
};

// conditional (branch index operand 0, branch i takes operand i+1) and call
// (one branch taking every operand).
class BranchThunk : public Thunk {
 public:
  BranchThunk(const HloInstruction& inst, std::vector<std::unique_ptr<Program>> branches)
      : Thunk(inst), branches_(std::move(branches)) {}
  KernelKind kind() const override { return KernelKind::kControlFlow; }
  std::string detail() const override { return std::string(HloOpcodeString(instruction_.opcode())); }
  int64_t bytes_read() const override { return 0; }
  int64_t bytes_written() const override { return 0; }
  std::vector<const Program*> nested() const override {
    std::vector<const Program*> out;
    for (const std::unique_ptr<Program>& b : branches_) out.push_back(b.get());
    return out;
  }
  absl::Status Run(const Program& p, Frame& f, RunContext& ctx) override {
    const Program* branch = branches_[0].get();
    std::vector<std::vector<void*>> params;
    if (instruction_.opcode() == HloOpcode::kConditional) {
      const HloInstruction* index = instruction_.operand(0);
      const void* ptr = p.LeafPointers(index, f)[0];
      int64_t n = static_cast<int64_t>(branches_.size()), b;
      if (index->shape().element_type() == PrimitiveType::kPred) {
        b = *static_cast<const uint8_t*>(ptr) != 0 ? 0 : 1;
      } else {
        int32_t v;
        std::memcpy(&v, ptr, sizeof(v));
        b = v < 0 || v >= n ? n - 1 : v;  // out of range runs the last branch
      }
      branch = branches_[b].get();
      params.push_back(p.LeafPointers(instruction_.operand(b + 1), f));
    } else {
      params = ParametersFrom(p, f, instruction_.operands());
    }
    Frame* bf = nullptr;
    RETURN_IF_ERROR(branch->ExecuteWithParameters(std::move(params), ctx, &bf));
    std::vector<Shape> shapes = LeafShapes(instruction_.shape());
    CopyLeaves(shapes, branch->LeafPointers(branch->computation().root_instruction(), *bf), shapes,
               p.LeafPointers(&instruction_, f));
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<Program>> branches_;
};

constexpr int64_t kMaxWhileIterations = int64_t{1} << 24;

}  // namespace

// ---------------------------------------------------------------- Thunk

int64_t Thunk::bytes_read() const {
  int64_t n = 0;
  for (const HloInstruction* op : instruction_.operands()) n += LeafBufferBytes(op->shape());
  return n;
}

int64_t Thunk::bytes_written() const { return LeafBufferBytes(instruction_.shape()); }

absl::Status Thunk::Execute(const Program& program, Frame& frame, RunContext& ctx) {
  // CPU time only for recorded runs (a system call each side, outside the
  // kernel's own start..end).
  const int64_t cpu_start = ctx.records != nullptr ? ProcessCpuTimeNs() : -1;
  int64_t start = ctx.NowNs();
  absl::Status s = Run(program, frame, ctx);
  int64_t end = ctx.NowNs();
  if (ctx.records != nullptr) {
    const int64_t cpu_end = ProcessCpuTimeNs();
    KernelRecord r;
    r.name = instruction_.name();
    r.kind = kind();
    r.detail = detail();
    r.device = "cpu";
    r.hlo_instruction = instruction_.name();
    r.hlo_computation = instruction_.parent() != nullptr ? instruction_.parent()->name() : "";
    r.start_ns = start;
    r.end_ns = end;
    if (cpu_start >= 0 && cpu_end >= cpu_start) r.cpu_ns = cpu_end - cpu_start;
    r.bytes_read = bytes_read();
    r.bytes_written = bytes_written();
    r.flops = flops();
    ctx.records->push_back(std::move(r));
  }
  return s;
}

std::vector<void*> Thunk::KernelBuffers(const Program& program, const Frame& frame) const {
  std::vector<void*> buffers;
  for (const HloInstruction* op : instruction_.operands()) {
    std::vector<void*> leaves = program.LeafPointers(op, frame);
    buffers.push_back(leaves.empty() ? nullptr : leaves[0]);
  }
  std::vector<void*> results = program.LeafPointers(&instruction_, frame);
  buffers.insert(buffers.end(), results.begin(), results.end());
  return buffers;
}

// ---------------------------------------------------------------- Program

absl::StatusOr<std::unique_ptr<Program>> Program::Build(const HloComputation& computation,
                                                        BufferAssignmentOptions options,
                                                        const KernelProvider& kernels) {
  std::unique_ptr<Program> p(new Program(computation));
  ASSIGN_OR_RETURN(std::unique_ptr<BufferAssignment> a, BufferAssignment::Run(computation, std::move(options)));
  p->assignment_ = std::move(a);
  // Data-movement fusions read only by convolution calls run no kernel:
  // the calls read through views (fusion_views.h).
  FusionViewPlan views = PlanFusionViews(*p->assignment_);
  for (const HloInstruction* inst : p->assignment_->schedule()) {
    if (views.elided.contains(inst)) continue;
    if (auto it = views.runners.find(inst); it != views.runners.end()) {
      p->thunks_.push_back(std::make_unique<LibraryCallThunk>(*inst, std::move(it->second), views.elided));
      continue;
    }
    RETURN_IF_ERROR(p->AddThunkFor(*inst, kernels));
  }
  return p;
}

absl::Status Program::AddThunkFor(const HloInstruction& inst, const KernelProvider& kernels) {
  HloOpcode op = inst.opcode();
  // Tiled buffers are only held and moved (parameters, copies, tuples,
  // control-flow state); whatever computes on a buffer needs it plain.
  bool moves_data = IsBufferAlias(op) || op == HloOpcode::kCopy || op == HloOpcode::kWhile ||
                    op == HloOpcode::kConditional || op == HloOpcode::kCall;
  for (const Shape& leaf : LeafShapes(inst.shape())) {
    if (leaf.IsArray()) {
      absl::Status s = moves_data && op != HloOpcode::kBitcast ? CheckHostLayout(leaf) : CheckPlainLayout(leaf);
      if (!s.ok()) return absl::UnimplementedError(StrCat(inst.name(), ": ", s.message()));
    }
  }
  if (op == HloOpcode::kConstant) {
    if (!inst.has_literal()) return absl::InvalidArgumentError(StrCat(inst.name(), ": constant without a value"));
    std::vector<std::vector<uint8_t>>& storage = constants_[&inst];
    std::vector<Shape> leaves = LeafShapes(inst.shape());
    std::vector<const Literal*> values;
    FlattenLeaves(inst.literal(), values);
    if (values.size() != leaves.size()) return absl::InternalError(StrCat(inst.name(), ": constant leaves mismatch"));
    for (size_t i = 0; i < leaves.size(); ++i) {
      storage.emplace_back(BufferBytes(leaves[i]));
      if (!leaves[i].IsArray() || leaves[i].element_count() == 0) continue;
      RETURN_IF_ERROR(CopyLiteralToBuffer(*values[i], leaves[i], storage.back().data()));
    }
    return absl::OkStatus();
  }
  if (IsBufferAlias(op)) return absl::OkStatus();
  if (op == HloOpcode::kCustomCall && ClassifyLibraryCall(inst).has_value()) {
    ASSIGN_OR_RETURN(std::unique_ptr<LibraryCallRunner> r, LibraryCallRunner::Create(inst));
    thunks_.push_back(std::make_unique<LibraryCallThunk>(inst, std::move(r)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kCopy) {
    // A copy that changes a plain array's layout is a transpose: it is
    // compiled like any other kernel (the transpose or loop emitter, on
    // every core), as XLA does and as the CUDA runtime here does. The rest
    // (the same layout: a memcpy; tiled or tuple buffers) move through
    // CopyThunk, as does a copy the code generator turns down.
    if (kernels && IsLayoutChangingPlainCopy(inst)) {
      absl::StatusOr<std::unique_ptr<CompiledKernel>> k = kernels(inst);
      if (k.ok()) {
        thunks_.push_back(std::make_unique<KernelThunk>(inst, std::move(*k)));
        return absl::OkStatus();
      }
      if (!absl::IsUnimplemented(k.status())) return k.status();
    }
    thunks_.push_back(std::make_unique<CopyThunk>(inst));
    return absl::OkStatus();
  }
  if (IsHostRoutineOpcode(op)) {
    ASSIGN_OR_RETURN(std::unique_ptr<HostRoutine> r, CreateHostRoutine(inst));
    thunks_.push_back(std::make_unique<RoutineThunk>(inst, std::move(r)));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kCustomCall) {
    return absl::UnimplementedError(StrCat(inst.name(), " (custom-call): the CPU runtime has no implementation of \"",
                                           inst.custom_call_target(), "\""));
  }
  if (op == HloOpcode::kWhile) {
    ASSIGN_OR_RETURN(std::unique_ptr<Program> cond, Build(*inst.while_condition(), {}, kernels));
    // The loop state is the body's parameter and its result: body results
    // are placed straight in the state buffers when the old state is dead
    // by then, and the body may update the state in place (the while owns
    // it), so a loop copies only what it must.
    BufferAssignmentOptions body_options;
    ForEachSubshape(inst.while_body()->root_instruction()->shape(), [&](const Shape& s, const ShapeIndex& index) {
      if (s.IsTuple()) return;
      body_options.output_aliases.push_back(InputOutputAlias{index, 0, index});
      body_options.donors.push_back(BufferDonor{0, index});
    });
    ASSIGN_OR_RETURN(std::unique_ptr<Program> body, Build(*inst.while_body(), body_options, kernels));
    thunks_.push_back(std::make_unique<WhileThunk>(inst, std::move(cond), std::move(body), kMaxWhileIterations));
    return absl::OkStatus();
  }
  if (op == HloOpcode::kConditional || op == HloOpcode::kCall) {
    std::vector<std::unique_ptr<Program>> branches;
    for (const HloComputation* c : inst.called_computations()) {
      ASSIGN_OR_RETURN(std::unique_ptr<Program> b, Build(*c, {}, kernels));
      branches.push_back(std::move(b));
    }
    if (branches.empty()) return absl::InvalidArgumentError(StrCat(inst.name(), ": no called computation"));
    thunks_.push_back(std::make_unique<BranchThunk>(inst, std::move(branches)));
    return absl::OkStatus();
  }
  if (!kernels) {
    return absl::UnimplementedError(
        StrCat(inst.name(), " (", HloOpcodeString(op), ") needs a compiled kernel and no kernel compiler was given"));
  }
  for (const HloInstruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) {
      return absl::UnimplementedError(
          StrCat(inst.name(), ": kernels take array operands, not ", operand->shape().ToString()));
    }
  }
  absl::StatusOr<std::unique_ptr<CompiledKernel>> k = kernels(inst);
  if (!k.ok() && absl::IsUnimplemented(k.status()) && op != HloOpcode::kFusion) {
    // An unfused op the code generator has no emitter for: the executable
    // is not built (no silent fallback to another implementation).
    return absl::UnimplementedError(StrCat(inst.name(), " (", HloOpcodeString(op),
                                           "): no emitter and no runtime routine: ", k.status().message()));
  }
  if (!k.ok()) return k.status();
  thunks_.push_back(std::make_unique<KernelThunk>(inst, std::move(*k)));
  return absl::OkStatus();
}

void* Program::Resolve(const BufferSlice& slice, const Frame& frame) const {
  switch (slice.kind) {
    case BufferSlice::Kind::kNone: return nullptr;
    case BufferSlice::Kind::kArena: return frame.arena + slice.offset;
    case BufferSlice::Kind::kParameter: return frame.parameters[slice.parameter][slice.parameter_leaf];
    case BufferSlice::Kind::kConstant: {
      std::vector<uint8_t>& storage =
          const_cast<std::vector<uint8_t>&>(constants_.at(slice.constant)[slice.constant_leaf]);
      return storage.empty() ? nullptr : storage.data();
    }
  }
  return nullptr;
}

std::vector<void*> Program::LeafPointers(const HloInstruction* inst, const Frame& frame) const {
  std::vector<void*> out;
  for (const BufferSlice& s : assignment_->LeafSlices(inst)) out.push_back(Resolve(s, frame));
  return out;
}

absl::Status Program::Execute(Frame& frame, RunContext& ctx) const {
  if (static_cast<int64_t>(frame.parameters.size()) != computation_.num_parameters()) {
    return absl::InvalidArgumentError(StrCat(computation_.name(), ": expected ", computation_.num_parameters(),
                                             " parameters, got ", frame.parameters.size()));
  }
  for (const std::unique_ptr<Thunk>& t : thunks_) {
    RETURN_IF_ERROR(t->Execute(*this, frame, ctx));
  }
  return absl::OkStatus();
}

absl::Status Program::ExecuteWithParameters(std::vector<std::vector<void*>> parameters, RunContext& ctx,
                                            Frame** frame_out, std::vector<uint64_t>* arena,
                                            int64_t arena_offset) const {
  constexpr int64_t kAlign = 64;
  arena_offset = std::max<int64_t>(0, arena_offset) / kAlign * kAlign;
  std::vector<uint64_t>& storage = arena != nullptr ? *arena : own_arena_;
  int64_t words = (assignment_->arena_bytes() + arena_offset + kAlign) / sizeof(uint64_t) + 1;
  if (static_cast<int64_t>(storage.size()) < words) storage.assign(words, 0);
  uintptr_t base = reinterpret_cast<uintptr_t>(storage.data());
  own_frame_.arena = reinterpret_cast<uint8_t*>((base + kAlign - 1) / kAlign * kAlign + arena_offset);
  own_frame_.parameters = std::move(parameters);
  if (frame_out != nullptr) *frame_out = &own_frame_;
  return Execute(own_frame_, ctx);
}

std::string Program::ToString(int indent) const {
  std::string out;
  std::string pad(indent, ' ');
  for (const std::unique_ptr<Thunk>& t : thunks_) {
    StrAppend(&out, pad, KernelKindName(t->kind()), " ", t->instruction().name(), " (", t->detail(), ")\n");
    for (const Program* nested : t->nested()) {
      StrAppend(&out, pad, "  ", nested->computation().name(), ":\n", nested->ToString(indent + 4));
    }
  }
  return out;
}

}  // namespace passlab
