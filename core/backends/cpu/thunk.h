// Thunks: the units an Executable runs in order. A Program is one
// computation's thunk sequence with its buffer assignment and constants; a
// Frame holds one execution's arena and parameter buffers. Every thunk run
// appends a KernelRecord (wall-clock start/end on the steady clock, bytes,
// flops) to the RunContext.
//
// Kinds (XLA:CPU's): kernel (a CompiledKernel from the code generator),
// library call (OpenBLAS/oneDNN), copy (layout-changing copy), runtime
// routine (sort, fft, cholesky, triangular-solve, topk, rng-bit-generator,
// rng-get-and-update-state: the runtime's own host routines,
// host_routine.h), and control flow
// (while, conditional, call) around nested Programs.
#ifndef PASSLAB_CORE_BACKENDS_CPU_THUNK_H_
#define PASSLAB_CORE_BACKENDS_CPU_THUNK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/codegen/compiled_kernel.h"
#include "core/runtime/buffer_assignment.h"
#include "core/runtime/host_routine.h"
#include "core/runtime/kernel_record.h"
#include "core/runtime/library_call_runner.h"

namespace passlab {

class Program;

// One execution's storage for a Program.
struct Frame {
  uint8_t* arena = nullptr;
  std::vector<std::vector<void*>> parameters;  // per parameter, per leaf
};

struct RunContext {
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  std::vector<KernelRecord>* records = nullptr;  // may be null
  int64_t NowNs() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin).count();
  }
};

class Thunk {
 public:
  explicit Thunk(const HloInstruction& inst) : instruction_(inst) {}
  virtual ~Thunk() = default;
  virtual KernelKind kind() const = 0;
  virtual std::string detail() const = 0;
  // Runs the thunk's work (no record); Execute adds the timing record.
  virtual absl::Status Run(const Program& program, Frame& frame, RunContext& ctx) = 0;
  virtual int64_t bytes_read() const;
  virtual int64_t bytes_written() const;
  virtual int64_t flops() const { return 0; }
  // The programs a control-flow thunk runs (condition and body, branches).
  virtual std::vector<const Program*> nested() const { return {}; }

  absl::Status Execute(const Program& program, Frame& frame, RunContext& ctx);
  const HloInstruction& instruction() const { return instruction_; }

 protected:
  // Operand leaf-0 pointers then result leaves (compiled_kernel.h's order).
  std::vector<void*> KernelBuffers(const Program& program, const Frame& frame) const;

  const HloInstruction& instruction_;
};

// Produces the compiled kernel of an instruction that needs one (a fusion or
// an unfused op); the code generator's CpuKernelCompiler in production.
using KernelProvider = std::function<absl::StatusOr<std::unique_ptr<CompiledKernel>>(const HloInstruction&)>;

class Program {
 public:
  // Assigns buffers and chooses a thunk per instruction of `computation`
  // (and, recursively, of the computations control flow calls).
  static absl::StatusOr<std::unique_ptr<Program>> Build(const HloComputation& computation,
                                                        BufferAssignmentOptions options,
                                                        const KernelProvider& kernels);

  // Runs the thunks in order. The frame's arena must hold arena_bytes().
  absl::Status Execute(Frame& frame, RunContext& ctx) const;
  // Runs with this program's own (reused) arena, or `arena` when given
  // (grown to fit, kept by the caller), and the given parameters. The
  // arena's buffers start `arena_offset` bytes (a multiple of 64) past the
  // storage's first 64-byte boundary: where they land in the caches and
  // pages, which measurements randomize (Executable::set_arena_offset).
  absl::Status ExecuteWithParameters(std::vector<std::vector<void*>> parameters, RunContext& ctx,
                                     Frame** frame_out = nullptr, std::vector<uint64_t>* arena = nullptr,
                                     int64_t arena_offset = 0) const;

  void* Resolve(const BufferSlice& slice, const Frame& frame) const;
  std::vector<void*> LeafPointers(const HloInstruction* inst, const Frame& frame) const;

  const HloComputation& computation() const { return computation_; }
  const BufferAssignment& assignment() const { return *assignment_; }
  const std::vector<std::unique_ptr<Thunk>>& thunks() const { return thunks_; }
  // "kernel fusion.1", "library custom-call.2 (__dnn$convForward/auto)", ...
  std::string ToString(int indent = 0) const;

 private:
  explicit Program(const HloComputation& c) : computation_(c) {}
  absl::Status AddThunkFor(const HloInstruction& inst, const KernelProvider& kernels);

  const HloComputation& computation_;
  std::unique_ptr<BufferAssignment> assignment_;
  std::vector<std::unique_ptr<Thunk>> thunks_;
  absl::flat_hash_map<const HloInstruction*, std::vector<std::vector<uint8_t>>> constants_;
  // The arena of nested executions (control flow), allocated once.
  mutable std::vector<uint64_t> own_arena_;
  mutable Frame own_frame_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CPU_THUNK_H_
