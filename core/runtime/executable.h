// Executable: a compiled module for the CPU — the entry computation's
// Program (thunks + buffer assignment) — with Run(inputs) -> outputs that
// also returns one KernelRecord per thunk run.
//
// Thunks are chosen per instruction: library calls (core/libcall targets) on
// OpenBLAS/oneDNN, copies, runtime routines, control flow around nested
// programs, and a CompiledKernel from `kernels` (the code generator) for
// everything else. Not safe to Run from two threads at once.
#ifndef PASSLAB_CORE_RUNTIME_EXECUTABLE_H_
#define PASSLAB_CORE_RUNTIME_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/runtime/kernel_record.h"
#include "core/runtime/thunk.h"

namespace passlab {

// Host memory an executable uses while it runs.
struct ExecutableMemory {
  int64_t arena_bytes = 0;         // the entry computation's temporaries
  int64_t nested_arena_bytes = 0;  // control-flow bodies' arenas (kept between runs)
  int64_t parameter_bytes = 0;
  int64_t constant_bytes = 0;      // of every program
  int64_t peak_bytes() const { return arena_bytes + nested_arena_bytes + parameter_bytes + constant_bytes; }
};

class Executable {
 public:
  // The module must outlive the executable.
  static absl::StatusOr<std::unique_ptr<Executable>> Create(const HloModule& module, const KernelProvider& kernels);

  // Runs once on `args` (one literal per entry parameter; layouts of the
  // literals are ignored). Appends a record per thunk to `records` if given.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> args, std::vector<KernelRecord>* records = nullptr);
  // Runs once without assembling the result literal (timed repetitions:
  // only the program's own work, no host-side output copies).
  absl::Status Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records = nullptr);

  const Program& program() const { return *program_; }
  const BufferAssignment& buffer_assignment() const { return program_->assignment(); }
  std::string ToString() const { return program_->ToString(); }
  ExecutableMemory memory() const;

 private:
  Executable() = default;
  const HloModule* module_ = nullptr;
  std::unique_ptr<Program> program_;
  // Parameter buffers, kept between runs: fresh allocations of this size
  // cost a page fault per 4 KiB on every run (hundreds of ms on a ResNet
  // training step in a VM).
  std::vector<std::vector<std::vector<uint64_t>>> parameter_storage_;
  // Execute's work; returns the entry frame holding the results.
  absl::StatusOr<const Frame*> ExecuteToFrame(absl::Span<const Literal> args, std::vector<KernelRecord>* records);
};

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_EXECUTABLE_H_
