// Helpers shared by the convolution library-call passes (ConvRewriter,
// CudnnFusedConvRewriter, ConvPaddingLegalization).
#ifndef PASSLAB_PASSES_LIBCALL_CONV_CALL_UTIL_H_
#define PASSLAB_PASSES_LIBCALL_CONV_CALL_UTIL_H_

#include <memory>
#include <string_view>

#include "absl/types/span.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"

namespace passlab {

// Types the DNN library computes convolutions in.
bool IsDnnConvType(PrimitiveType t);

// A convolution call returning (result, u8[0] scratch) with the forward
// convolution's window, dim_labels, feature groups and operand precision
// (XLA's conv_rewriter.cc CreateGpuConv copies the convolution's
// precision_config onto the custom call).
std::unique_ptr<HloInstruction> CreateConvCall(const Shape& result, std::string_view target,
                                               absl::Span<HloInstruction* const> operands, const Window& window,
                                               const ConvolutionDimensionNumbers& dnums, int64_t feature_group_count,
                                               const ConvBackendConfig& config,
                                               const PrecisionConfig& precision = {});

// A copy of the convolution call `call` with new operands, result and
// window (config, operand precision and the rest kept).
std::unique_ptr<HloInstruction> CloneConvCall(const HloInstruction& call, const Shape& result,
                                              absl::Span<HloInstruction* const> operands, const Window& window);

}  // namespace passlab

#endif  // PASSLAB_PASSES_LIBCALL_CONV_CALL_UTIL_H_
