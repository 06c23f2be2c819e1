#include "core/backends/cpu/executable.h"

#include "core/ir/hlo_instruction.h"
#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab {
namespace {

// A literal of `shape` from its leaves' buffers (depth-first).
absl::StatusOr<Literal> Assemble(const Shape& shape, const std::vector<void*>& leaves, size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& e : shape.tuple_shapes()) {
      ASSIGN_OR_RETURN(Literal l, Assemble(e, leaves, next));
      elements.push_back(std::move(l));
    }
    return Literal::Tuple(std::move(elements));
  }
  void* p = leaves[next++];
  if (!shape.IsArray()) return Literal(shape);
  if (p == nullptr || shape.element_count() == 0) return Literal(shape);
  return LiteralFromBuffer(shape, p);
}

}  // namespace

std::vector<uint64_t>& SharedHostMemory::Parameter(size_t parameter, size_t leaf) {
  if (parameters_.size() <= parameter) parameters_.resize(parameter + 1);
  if (parameters_[parameter].size() <= leaf) parameters_[parameter].resize(leaf + 1);
  return parameters_[parameter][leaf];
}

ExecutableMemory Executable::memory() const {
  ExecutableMemory m;
  m.arena_bytes = program_->assignment().arena_bytes();
  m.parameter_bytes = program_->assignment().parameter_bytes();
  std::vector<const Program*> pending = {program_.get()};
  while (!pending.empty()) {
    const Program* p = pending.back();
    pending.pop_back();
    m.constant_bytes += p->assignment().constant_bytes();
    if (p != program_.get()) m.nested_arena_bytes += p->assignment().arena_bytes();
    for (const std::unique_ptr<Thunk>& t : p->thunks()) {
      for (const Program* n : t->nested()) pending.push_back(n);
    }
  }
  return m;
}

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(const HloModule& module, const KernelProvider& kernels) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  std::unique_ptr<Executable> e(new Executable());
  e->module_ = &module;
  ASSIGN_OR_RETURN(e->program_, Program::Build(*module.entry_computation(),
                                               BufferAssignmentOptions::ForModule(module.config()), kernels));
  return e;
}

absl::StatusOr<const Frame*> Executable::ExecuteToFrame(absl::Span<const Literal> args,
                                                        std::vector<KernelRecord>* records) {
  const HloComputation& entry = program_->computation();
  if (static_cast<int64_t>(args.size()) != entry.num_parameters()) {
    return absl::InvalidArgumentError(
        StrCat(entry.name(), " takes ", entry.num_parameters(), " arguments, got ", args.size()));
  }
  // Parameter buffers. A program that writes none of its parameters reads
  // each argument in place when the literal's bytes already have the
  // parameter's layout (no copy per step: a ResNet-50 step's 100 MB of
  // weights and state); otherwise the argument is copied into a buffer
  // owned by the executable, every run (a donated one may be overwritten).
  const bool read_in_place = !program_->assignment().OverwritesParameters();
  parameter_storage_.resize(args.size());
  std::vector<std::vector<void*>> params(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& shape = entry.parameter_instruction(i)->shape();
    std::vector<Shape> leaves = LeafShapes(shape);
    std::vector<const Literal*> values;
    FlattenLeaves(args[i], values);
    if (values.size() != leaves.size()) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " of shape ", args[i].shape().ToString(),
                                               " does not match parameter shape ", shape.ToString()));
    }
    parameter_storage_[i].resize(leaves.size());
    for (size_t k = 0; k < leaves.size(); ++k) {
      if (read_in_place && leaves[k].element_count() > 0 && LiteralIsBuffer(*values[k], leaves[k])) {
        // The program only reads it: the const is kept in fact.
        params[i].push_back(const_cast<uint8_t*>(values[k]->untyped_data()));
        continue;
      }
      int64_t bytes = BufferBytes(leaves[k]);
      std::vector<uint64_t>& storage =
          shared_memory_ != nullptr ? shared_memory_->Parameter(i, k) : parameter_storage_[i][k];
      if (storage.size() != static_cast<size_t>(bytes / 8 + 1)) storage.assign(bytes / 8 + 1, 0);
      params[i].push_back(storage.data());
      if (bytes == 0) continue;
      if (absl::Status s = CopyLiteralToBuffer(*values[k], leaves[k], params[i].back()); !s.ok()) {
        return absl::InvalidArgumentError(StrCat("argument ", i, ": ", s.message()));
      }
    }
  }
  RunContext ctx;
  ctx.records = records;
  Frame* frame = nullptr;
  RETURN_IF_ERROR(program_->ExecuteWithParameters(std::move(params), ctx, &frame,
                                                  shared_memory_ != nullptr ? &shared_memory_->arena() : nullptr,
                                                  arena_offset_));
  return frame;
}

absl::Status Executable::Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  return ExecuteToFrame(args, records).status();
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal> args, std::vector<KernelRecord>* records) {
  ASSIGN_OR_RETURN(const Frame* frame, ExecuteToFrame(args, records));
  const HloInstruction* root = program_->computation().root_instruction();
  std::vector<void*> leaves = program_->LeafPointers(root, *frame);
  size_t next = 0;
  return Assemble(root->shape(), leaves, next);
}

}  // namespace passlab
