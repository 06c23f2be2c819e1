// Executable: a compiled module for the CPU — the entry computation's
// Program (thunks + buffer assignment) — with Run(inputs) -> outputs that
// also returns one KernelRecord per thunk run.
//
// Thunks are chosen per instruction: library calls (core/libcall targets) on
// OpenBLAS/oneDNN, copies, runtime routines, control flow around nested
// programs, and a CompiledKernel from `kernels` (the code generator) for
// everything else. Not safe to Run from two threads at once.
#ifndef PASSLAB_CORE_BACKENDS_CPU_EXECUTABLE_H_
#define PASSLAB_CORE_BACKENDS_CPU_EXECUTABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/runtime/kernel_record.h"
#include "core/backends/cpu/thunk.h"

namespace passlab {

// Host memory an executable uses while it runs.
struct ExecutableMemory {
  int64_t arena_bytes = 0;         // the entry computation's temporaries
  int64_t nested_arena_bytes = 0;  // control-flow bodies' arenas (kept between runs)
  int64_t parameter_bytes = 0;
  int64_t constant_bytes = 0;      // of every program
  int64_t peak_bytes() const { return arena_bytes + nested_arena_bytes + parameter_bytes + constant_bytes; }
};

// Host memory that executables which never run at the same time can share:
// the entry parameters' buffers and the entry arena. The ablation worker
// times a variant and its control (the baseline program) alternately in one
// process; sharing makes them run on the same pages, so that two identical
// programs also time alike (with separate allocations, where each buffer
// lands in the caches differs, which on its own shifts a ResNet step by a
// few percent).
class SharedHostMemory {
 public:
  std::vector<uint64_t>& Parameter(size_t parameter, size_t leaf);
  std::vector<uint64_t>& arena() { return arena_; }

 private:
  std::vector<std::vector<std::vector<uint64_t>>> parameters_;
  std::vector<uint64_t> arena_;
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

  // Runs from now on use `memory` for the parameters and the entry arena
  // (the executable's own otherwise). Executables sharing it must not run
  // at the same time; a Run's result is copied out before it returns.
  void ShareHostMemory(std::shared_ptr<SharedHostMemory> memory) { shared_memory_ = std::move(memory); }
  // Runs from now on place the entry arena's buffers `bytes` (rounded down
  // to 64) past its first 64-byte boundary. Where a program's buffers sit
  // relative to cache sets, pages and its other memory changes its time by
  // a few percent on its own; the ablation worker draws a new offset for
  // every timed step so that this placement averages out instead of biasing
  // one program against another.
  void set_arena_offset(int64_t bytes) { arena_offset_ = bytes; }

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
  std::shared_ptr<SharedHostMemory> shared_memory_;
  int64_t arena_offset_ = 0;
  // Execute's work; returns the entry frame holding the results.
  absl::StatusOr<const Frame*> ExecuteToFrame(absl::Span<const Literal> args, std::vector<KernelRecord>* records);
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CPU_EXECUTABLE_H_
