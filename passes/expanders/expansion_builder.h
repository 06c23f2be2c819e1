// Helpers shared by the expanders that build loops and index arithmetic
// (ScatterExpander, GatherExpander, RngBitGeneratorExpander): an
// ExpansionBuilder that adds shape-correct instructions to one computation
// (copying the expanded instruction's metadata), and MakeCountedLoop, which
// wraps a body in `for (i = 0; i < trip_count; ++i)` as a while loop (after
// XLA's WhileUtil::MakeCountedLoop).
#ifndef PASSLAB_PASSES_EXPANDERS_EXPANSION_BUILDER_H_
#define PASSLAB_PASSES_EXPANDERS_EXPANSION_BUILDER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

class ExpansionBuilder {
 public:
  ExpansionBuilder(HloComputation* computation, OpMetadata metadata)
      : c_(computation), metadata_(std::move(metadata)) {}

  HloComputation* computation() const { return c_; }
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst);

  // Scalar constant of any integer or floating type.
  HloInstruction* ConstantScalar(PrimitiveType type, int64_t value);
  HloInstruction* ConstantLiteral(Literal literal);
  // Scalar zero of any array type (pred false, complex 0+0i).
  HloInstruction* Zero(PrimitiveType type);
  HloInstruction* Convert(HloInstruction* x, PrimitiveType type);
  HloInstruction* Reshape(HloInstruction* x, std::vector<int64_t> dims);
  HloInstruction* Transpose(HloInstruction* x, std::vector<int64_t> permutation);
  HloInstruction* Broadcast(HloInstruction* x, std::vector<int64_t> dims,
                            std::vector<int64_t> broadcast_dimensions = {});
  HloInstruction* Unary(HloOpcode opcode, HloInstruction* x);
  HloInstruction* Binary(HloOpcode opcode, HloInstruction* a, HloInstruction* b);
  HloInstruction* Iota(PrimitiveType type, std::vector<int64_t> dims, int64_t iota_dimension);
  // Result dimensions: batch, then lhs's free ones, then rhs's (in order).
  HloInstruction* Dot(HloInstruction* lhs, HloInstruction* rhs, DotDimensionNumbers dnums);
  HloInstruction* Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection direction);
  HloInstruction* Select(HloInstruction* pred, HloInstruction* on_true, HloInstruction* on_false);
  HloInstruction* Slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits);
  HloInstruction* Concatenate(absl::Span<HloInstruction* const> xs, int64_t dimension);
  HloInstruction* DynamicSlice(HloInstruction* x, absl::Span<HloInstruction* const> starts,
                               std::vector<int64_t> sizes);
  HloInstruction* DynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                     absl::Span<HloInstruction* const> starts);
  HloInstruction* Tuple(absl::Span<HloInstruction* const> elements);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);
  // Element k of a rank-1 array, as a scalar.
  HloInstruction* ElementAsScalar(HloInstruction* vector, int64_t k);

 private:
  HloComputation* c_;
  OpMetadata metadata_;
};

// Gather/scatter indices as [N, K]: index_vector_dim moved last (or added as
// a trailing 1 when it equals the rank), every other dimension flattened in
// order into the leading one (XLA's TransformStartIndices).
HloInstruction* CanonicalizeGatherScatterIndices(ExpansionBuilder& b, HloInstruction* indices,
                                                 int64_t index_vector_dim);
// The dimensions of `indices` other than index_vector_dim, in order.
std::vector<int64_t> IndexBatchDims(const Shape& indices, int64_t index_vector_dim);

// The last steps shared by GatherSimplifier and GatherExpander: `gathered`
// is [N, slice dims...] with N the flattened index batch and the slice dims
// those of the operand that are neither collapsed nor batching, in operand
// order. Splits N into the indices' batch dimensions and moves the offset
// dimensions to their places in the gather's output.
HloInstruction* GatherOutputFromCanonical(ExpansionBuilder& b, HloInstruction* gathered,
                                          const HloInstruction& gather);

// Builds `for (i = 0; i < trip_count; ++i) state = body(i, state)` as a
// while loop in `parent` and returns the final state. The body gets the
// builder of the loop body computation, the s32 induction variable and the
// current state, and returns the next state (same shapes, same count).
using CountedLoopBody = std::function<absl::StatusOr<std::vector<HloInstruction*>>(
    ExpansionBuilder& body, HloInstruction* induction_var, const std::vector<HloInstruction*>& state)>;
absl::StatusOr<std::vector<HloInstruction*>> MakeCountedLoop(
    HloComputation* parent, int64_t trip_count, const std::vector<HloInstruction*>& init,
    const CountedLoopBody& body, const OpMetadata& metadata, const std::string& name_prefix);

}  // namespace passlab

#endif  // PASSLAB_PASSES_EXPANDERS_EXPANSION_BUILDER_H_
