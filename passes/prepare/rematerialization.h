// HloRematerialization ("rematerialization"): on a scheduled module, cuts a
// computation's peak live bytes below a memory limit by recomputing cheap
// values next to their late uses instead of keeping them live across the
// peak, as XLA does after scheduling.
//
// Repeatedly, at the step of the schedule where live bytes peak: among the
// values live there but not used there, whose every user is an ordinary
// instruction (not a view, not the root) and which are cheap to recompute
// (elementwise, broadcast or iota, without side effects, whose operands are
// parameters, constants or at most a quarter of its size), the largest is
// recomputed right before its first use after the peak, and those later
// uses read the copy. The rewrite is kept when the peak (or the number of
// steps at the peak) drops, else undone. Liveness is the latency-hiding
// scheduler's (EstimateSchedule: views share their source's buffer,
// parameters and constants are not counted).
//
// Must run after a scheduler (it needs is_scheduled and places the copies in
// the sequence); runs last in ir-emit-prepare. Without a memory limit (the
// default) it does nothing. Optional: a program runs with or without it.
#ifndef PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_
#define PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_

#include <cstdint>
#include <string_view>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct RematerializationOptions {
  // Target peak live bytes per computation; 0: no limit, nothing to do.
  int64_t memory_limit_bytes = 0;
  // Rewrites tried per computation (kept or undone).
  int64_t max_attempts = 200;
};

class Rematerialization : public HloModulePass {
 public:
  explicit Rematerialization(RematerializationOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "rematerialization"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  RematerializationOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_REMATERIALIZATION_H_
