// Shape inference for every HLO opcode, following XLA's ShapeInference: given
// an instruction's operands and attributes, the shape it must have. Ops whose
// result shape is an input of the op itself (broadcast, reshape, iota, rng,
// convert's type, custom-call, ...) check what can be checked and return the
// instruction's own shape; asked to infer them without one, they fail.
//
// Errors say what is wrong and why ("dot: lhs contracting dimension 1 has
// size 3 but rhs contracting dimension 0 has size 4").
#ifndef PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_H_
#define PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_H_

#include "absl/status/statusor.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

// The shape `instruction` must have, from its operands and attributes (and
// called computations). Layouts of the result are the defaults.
absl::StatusOr<Shape> InferInstructionShape(const HloInstruction& instruction);

// Building blocks, usable by passes and the model builder.
absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs,
                                    const DotDimensionNumbers& dnums, PrimitiveType result_type);
absl::StatusOr<Shape> InferConvolveShape(const Shape& lhs, const Shape& rhs,
                                         int64_t feature_group_count, int64_t batch_group_count,
                                         const Window& window,
                                         const ConvolutionDimensionNumbers& dnums,
                                         PrimitiveType result_type);
absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type);
absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& start_indices,
                                       const GatherDimensionNumbers& dnums,
                                       const std::vector<int64_t>& slice_sizes);

}  // namespace passlab

#endif  // PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_H_
