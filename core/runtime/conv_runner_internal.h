// What conv_runner.cc (oneDNN's convolution primitives) and
// conv_gemm_runners.cc (convolutions as oneDNN matmuls) share.
#ifndef PASSLAB_CORE_RUNTIME_CONV_RUNNER_INTERNAL_H_
#define PASSLAB_CORE_RUNTIME_CONV_RUNNER_INTERNAL_H_

#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/libcall/library_call.h"
#include "core/runtime/conv_operand_views.h"
#include "core/runtime/library_call_runner.h"

namespace passlab::runtime_internal {

// The CPU engine every convolution runner uses.
dnnl::engine& Engine();

// The fused forward's activation as a oneDNN eltwise post-op.
void AppendActivation(dnnl::post_ops& ops, ConvActivation mode);

// The indices of each dimension of operand `op` where its producer put a
// zero whatever its own operands hold (conv_gemm_runners.cc); empty: none.
std::vector<std::vector<bool>> StructuralZeros(const HloInstruction& op);

// ConvAlgorithm::kTapGemm and kIm2colGemm (conv_gemm_runners.cc), reading
// operands through `views` (conv_operand_views.h) where set.
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateTapGemmConvRunner(
    const HloInstruction& inst, const ConvCall& call, absl::Span<const std::optional<StridedView>> views);
absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateIm2colGemmConvRunner(
    const HloInstruction& inst, const ConvCall& call, absl::Span<const std::optional<StridedView>> views);

}  // namespace passlab::runtime_internal

#endif  // PASSLAB_CORE_RUNTIME_CONV_RUNNER_INTERNAL_H_
