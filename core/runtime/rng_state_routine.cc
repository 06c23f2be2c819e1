// rng-get-and-update-state: what RngExpander leaves in front of each
// rng-bit-generator that replaces an `rng`. As in XLA:CPU, the state is the
// executable's (here: this routine's, one per instruction; no process
// global): each run returns the u64[2] state and then advances it by
// `delta` as a 128-bit counter. It starts at {42, 0}, the evaluator's
// default seed, so the first run draws what the evaluator's first
// evaluation of the same module draws.
#include <mutex>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab::routine_internal {
namespace {

constexpr uint64_t kInitialSeed = 42;

class RngStateRoutine : public HostRoutine {
 public:
  RngStateRoutine(const HloInstruction& inst, uint64_t delta) : result_(inst.shape()), delta_(delta) {}

  absl::Status Run(absl::Span<void* const> buffers) const override {
    std::lock_guard<std::mutex> lock(mu_);
    uint8_t packed[2 * sizeof(uint64_t)];
    StoreBits(PrimitiveType::kU64, packed, 0, state_[0]);
    StoreBits(PrimitiveType::kU64, packed, 1, state_[1]);
    ScatterRowMajor(result_, packed, buffers[0]);
    const uint64_t low = state_[0] + delta_;
    state_[1] += low < state_[0] ? 1 : 0;
    state_[0] = low;
    return absl::OkStatus();
  }

 private:
  Shape result_;
  uint64_t delta_;
  mutable std::mutex mu_;
  mutable uint64_t state_[2] = {kInitialSeed, 0};
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateRngStateRoutine(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  if (!s.IsArray() || s.element_type() != PrimitiveType::kU64 || s.element_count() != 2) {
    return Unimplemented(inst, StrCat("the state is u64[2], not ", s.ToString()));
  }
  int64_t delta = 1;
  for (const auto& [name, value] : inst.attrs().unknown_attributes) {
    if (name == "delta" && !SimpleAtoi(value, &delta)) return Unimplemented(inst, StrCat("delta=", value));
  }
  return std::unique_ptr<HostRoutine>(new RngStateRoutine(inst, static_cast<uint64_t>(delta)));
}

}  // namespace passlab::routine_internal
