// Shape inference's internals, shared by its files (not a public header:
// core/verify/shape_inference.h is). InferInstructionShape
// (shape_inference.cc) checks operand counts and dispatches on the opcode
// to one op family's file:
//   shape_inference_elementwise.cc    unary, binary, tuple, bitcast-convert
//   shape_inference_data_movement.cc  slice, concatenate, pad, transpose,
//                                     broadcast, dynamic slices, gather,
//                                     scatter, sort
//   shape_inference_reduction.cc      reduce, reduce-window, windows, scan,
//                                     fft, batch norms, collectives
//   shape_inference_dot_conv.cc       dot, ragged-dot, scaled-dot, convolution
//   shape_inference_util.cc           the checks they share
#ifndef PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_INTERNAL_H_
#define PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_INTERNAL_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/hlo_instruction.h"
#include "core/verify/shape_inference.h"

namespace passlab {
namespace shape_inference_internal {

// ---- Shared checks (shape_inference_util.cc) ----
// "opcode: message".
absl::Status Err(const HloInstruction& inst, std::string_view message);
bool HasShape(const HloInstruction& inst);
// Ops whose result shape is given, not derived: return it or fail.
absl::StatusOr<Shape> OwnShape(const HloInstruction& inst, std::string_view why);
// An array of `type` with the dimensions of `dims_from`, default layout.
Shape ArrayLike(const Shape& dims_from, PrimitiveType type);
absl::Status CheckArray(const HloInstruction& inst, const Shape& s, std::string_view what);
// Each of `dims` in [0, rank) and none repeated.
absl::Status CheckDimsValid(const HloInstruction& inst, const std::vector<int64_t>& dims,
                            int64_t rank, std::string_view what);
bool IsFloatOrComplex(PrimitiveType t);
int64_t WindowOutputSize(int64_t base, const WindowDimension& w);
absl::Status CheckWindow(const Window& window, int64_t rank, std::string_view op);
// Compatible, where two floating-point types of different precision also
// count as the same (XLA's ShapeUtil::CompatibleIgnoringFpPrecision).
bool CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b);
// The computation `c` takes `params` and returns `result` (reducers: with
// floating-point precision ignored, as XLA's VerifyReducerShape does).
absl::Status CheckSignature(const HloInstruction& inst, const HloComputation* c,
                            const std::vector<Shape>& params, const Shape& result,
                            std::string_view role, bool ignore_fp_precision = false);
// Reducer of N values: (T0..Tn-1, T0..Tn-1) -> (T0..Tn-1) of scalars.
absl::Status CheckReducer(const HloInstruction& inst, const HloComputation* c,
                          const std::vector<PrimitiveType>& types);
// The dimensions in [0, rank) in neither `a` nor `b`, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// ---- Elementwise (shape_inference_elementwise.cc) ----
absl::StatusOr<Shape> InferUnary(const HloInstruction& inst);
absl::StatusOr<Shape> InferBinary(const HloInstruction& inst);
absl::StatusOr<Shape> InferTuple(const HloInstruction& inst);
absl::StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst);

// ---- Data movement (shape_inference_data_movement.cc) ----
absl::StatusOr<Shape> InferSlice(const HloInstruction& inst);
absl::StatusOr<Shape> InferConcatenate(const HloInstruction& inst);
absl::StatusOr<Shape> InferPad(const HloInstruction& inst);
absl::StatusOr<Shape> InferTranspose(const HloInstruction& inst);
absl::StatusOr<Shape> InferBroadcast(const HloInstruction& inst);
absl::StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst);
absl::StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst);
absl::StatusOr<Shape> InferScatter(const HloInstruction& inst);
absl::StatusOr<Shape> InferSort(const HloInstruction& inst);

// ---- Reductions, windows, collectives (shape_inference_reduction.cc) ----
absl::StatusOr<Shape> InferReduce(const HloInstruction& inst);
absl::StatusOr<Shape> InferReduceWindow(const HloInstruction& inst);
absl::StatusOr<Shape> InferFft(const HloInstruction& inst);
absl::StatusOr<Shape> InferBatchNorm(const HloInstruction& inst);
absl::StatusOr<Shape> InferCollective(const HloInstruction& inst);
absl::StatusOr<Shape> InferScan(const HloInstruction& inst);

// ---- Dots and convolutions (shape_inference_dot_conv.cc) ----
absl::StatusOr<Shape> InferRaggedDot(const HloInstruction& inst);
absl::StatusOr<Shape> InferScaledDot(const HloInstruction& inst);

}  // namespace shape_inference_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_VERIFY_SHAPE_INFERENCE_INTERNAL_H_
