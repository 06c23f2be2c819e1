// Buffer assignment for one computation over its sequential schedule (the
// post order): every array leaf of every instruction gets a slice, either in
// the computation's arena, in a caller-provided parameter buffer, or in a
// constant's storage.
//
//  - Aliases share storage: get-tuple-element, tuple, bitcast,
//    opt-barrier, domain and add-dependency define no new buffers.
//  - In-place ops (dynamic-update-slice, single-operand scatter, custom
//    calls and fusions with output_to_operand_aliasing) write into their
//    operand's buffer when that is the operand's last use and the buffer is
//    in the arena (or a donated parameter).
//  - While loops keep their state in their init's buffers (leaf by leaf)
//    when the init is read by nothing else from the loop on and no buffer
//    appears twice in it: what CopyInsertion arranges with copies of
//    parameters, constants and shared values.
//  - Parameter donation: an output leaf that the module's input_output_alias
//    ties to a parameter is placed in that parameter's buffer when the
//    parameter is dead by the time the leaf is computed; buffer_donor
//    parameters may be overwritten in place.
//  - Liveness-based reuse: a buffer's arena space is free once its last
//    user has run; offsets are chosen first-fit in schedule order.
//
// Called computations (while bodies, branches, ...) get assignments of
// their own; fusion computations none (they are kernels).
#ifndef PASSLAB_CORE_RUNTIME_BUFFER_ASSIGNMENT_H_
#define PASSLAB_CORE_RUNTIME_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace passlab {

// Ops that run no work of their own: parameters and constants (their storage
// is set up before a run) and the aliases above (tuple, get-tuple-element,
// bitcast, opt-barrier, domain, add-dependency) and after-all. The CPU and
// CUDA programs give them no thunk.
inline bool IsBufferAlias(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement || op == HloOpcode::kBitcast || op == HloOpcode::kOptimizationBarrier ||
         op == HloOpcode::kDomain || op == HloOpcode::kAddDependency || op == HloOpcode::kAfterAll;
}

struct BufferSlice {
  enum class Kind { kNone, kArena, kParameter, kConstant };
  Kind kind = Kind::kNone;  // kNone: zero-sized (or token) leaf
  int64_t offset = 0;       // kArena: byte offset in the arena
  int64_t size = 0;         // bytes
  int64_t parameter = -1;   // kParameter: parameter number and leaf ordinal
  int64_t parameter_leaf = 0;
  const HloInstruction* constant = nullptr;  // kConstant: the constant and leaf ordinal
  int64_t constant_leaf = 0;
  bool operator==(const BufferSlice&) const = default;
};

struct BufferAssignmentOptions {
  int64_t alignment = 64;
  // Parameters the caller lets the computation overwrite.
  std::vector<BufferDonor> donors;
  // Output leaves that should live in a parameter's buffer.
  std::vector<InputOutputAlias> output_aliases;

  // A module's entry options: its buffer_donor parameters, and its
  // input_output_alias (those parameters are donors too).
  static BufferAssignmentOptions ForModule(const HloModuleConfig& config);
};

class BufferAssignment {
 public:
  // One logical buffer: a set of positions sharing storage.
  struct Buffer {
    int64_t id = 0;
    const HloInstruction* defining = nullptr;
    int64_t defining_leaf = 0;
    int64_t size = 0;
    int64_t def_step = 0;
    int64_t last_use_step = 0;  // schedule length when live out
    bool live_out = false;
    BufferSlice slice;
  };

  static absl::StatusOr<std::unique_ptr<BufferAssignment>> Run(const HloComputation& computation,
                                                               BufferAssignmentOptions options = {});
  // The entry computation, with the module's donors and input_output_alias.
  static absl::StatusOr<std::unique_ptr<BufferAssignment>> ForEntry(const HloModule& module);

  const std::vector<const HloInstruction*>& schedule() const { return schedule_; }
  // One slice per leaf of the instruction's shape (depth-first).
  const std::vector<BufferSlice>& LeafSlices(const HloInstruction* inst) const;
  // The buffer of an instruction's leaf.
  const Buffer& BufferAt(const HloInstruction* inst, int64_t leaf) const;
  const std::vector<Buffer>& buffers() const { return buffers_; }
  // Whether `inst` writes into its operand's buffer (in place).
  bool IsInPlace(const HloInstruction* inst) const;
  // Whether running the computation may change a parameter's buffer: a
  // donated parameter written in place, or holding an output leaf. Callers
  // may reuse arguments from run to run only when it is false.
  bool OverwritesParameters() const { return overwrites_parameters_; }

  int64_t arena_bytes() const { return arena_bytes_; }          // the arena's size
  int64_t peak_live_bytes() const { return peak_live_bytes_; }  // most arena bytes live at one step
  int64_t total_bytes() const { return total_bytes_; }          // arena buffers without any reuse
  int64_t parameter_bytes() const { return parameter_bytes_; }
  int64_t constant_bytes() const { return constant_bytes_; }
  // "arena 1.5 MiB (peak live 1.2 MiB, 3.0 MiB without reuse), ..." and one
  // line per buffer.
  std::string ToString() const;

 private:
  BufferAssignment() = default;
  absl::Status Assign(const HloComputation& computation, const BufferAssignmentOptions& options);
  int64_t NewBuffer(const HloInstruction* inst, int64_t leaf, int64_t size, BufferSlice slice);
  // Whether `user` (a user of `holder`) reads `buffer` through it.
  bool Reads(const HloInstruction* user, const HloInstruction* holder, int64_t buffer) const;
  bool CanOverwrite(int64_t buffer, const HloInstruction* writer, const BufferAssignmentOptions& options) const;

  std::vector<const HloInstruction*> schedule_;
  absl::flat_hash_map<const HloInstruction*, int64_t> step_;
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> leaf_buffers_;
  absl::flat_hash_map<const HloInstruction*, std::vector<BufferSlice>> leaf_slices_;
  std::vector<std::vector<const HloInstruction*>> holders_;  // per buffer, in schedule order
  std::vector<Buffer> buffers_;
  std::vector<const HloInstruction*> in_place_;
  bool overwrites_parameters_ = false;
  int64_t arena_bytes_ = 0, peak_live_bytes_ = 0, total_bytes_ = 0, parameter_bytes_ = 0, constant_bytes_ = 0;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_BUFFER_ASSIGNMENT_H_
