// HloRematerialization ("rematerialization"): on a scheduled module, keeps
// the memory live at every point of the schedule under a limit by
// recomputing values next to their later uses, or by keeping them in a
// compact layout in between, as XLA's HloRematerialization
// (xla/hlo/transforms/simplifiers/hlo_rematerialization.cc) does.
//
// It walks each computation's schedule (entry first) tracking the bytes of
// live buffers (tuple points-to: get-tuple-element, bitcast and tuple
// elements alias; parameters and the computation's outputs belong to the
// caller and count nothing). Wherever the bytes (plus the peak of the
// control-flow computations an instruction calls) exceed the limit, it picks
// the placed block of instructions with the lowest cost (limit / bytes
// saved, 0 for a pure move; blocks grow up to block_size_limit) and either
// recomputes it ("x.remat", placed before the first unplaced use of the
// value or of the operands it reads, its later uses rewired, through new
// get-tuple-elements and bitcasts) or compresses it (copy to the compact
// layout after the value, copy back before the later uses). When still over
// the limit at a call or while, it rematerializes the called computation
// under the bytes left. Finally dead code goes (HloDCE). The limit is the
// option less the module's output size. The peak-priority algorithm instead
// works at the highest peak only, until the bytes there drop, then
// reschedules and finds the new peak, until under the limit or stuck.
//
// Must run after a scheduler (it needs is_scheduled and keeps the sequence
// topological). Without a memory limit (the default) it does nothing.
// Optional: a program runs with or without it. Host offload is not
// modelled (the pass fails when asked).
#ifndef PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_
#define PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct RematerializationOptions {
  // Peak live bytes allowed, module output included; < 0: no limit, nothing
  // to do.
  int64_t memory_limit_bytes = -1;
  // Most consecutive instructions rematerialized as one block.
  int64_t block_size_limit = 1;
  // Effort spent on blocks larger than one, relative to single instructions.
  double block_rematerialization_factor = 1;
  // Buffers smaller than this are not candidates.
  int64_t min_remat_size = 0;
  // Strategies (XLA's RematerializationModeConfig).
  bool recompute = true;
  bool compress = true;
  bool host_offload = false;
  // "always_remat" (XLA's kAlwaysRemat) or "peak_priority" (kPeakPriority).
  std::string remat_algorithm = "always_remat";
  // Bytes of a shape: "byte_size_of" (ShapeUtil::ByteSizeOf, 8-byte
  // pointers for tuples) or "pad_minor_to_64" (the most minor dimension
  // padded to 64; tuples 4 bytes).
  std::string shape_size_function = "byte_size_of";
  // Compact layout for compression: "identity" (none) or
  // "swap_two_minor_dims" (rank 2: the larger dimension becomes minor).
  std::string compact_shape_function = "identity";
};

class Rematerialization : public HloModulePass {
 public:
  explicit Rematerialization(RematerializationOptions options = {}) : options_(std::move(options)) {}
  std::string_view name() const override { return "rematerialization"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  RematerializationOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_
