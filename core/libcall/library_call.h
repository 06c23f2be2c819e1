// Library calls: the custom-call targets that stand for a call into a tuned
// library (gemm on BLAS, convolutions on a DNN library) and their
// backend_config schema. The rewriter passes produce them, the evaluator
// gives them meaning (the oracle) and the runtime executes them; all three
// read the configs through this file.
//
// Targets (passlab spelling; XLA's `__cublas$gemm` / `__cudnn$conv*` spellings
// are accepted too, so real XLA:GPU dumps load):
//   __blas$gemm                      operands lhs, rhs[, c when beta != 0][, bias]
//   __dnn$convForward                operands input, filter
//   __dnn$convBackwardInput          operands output_grad, filter -> input_grad
//   __dnn$convBackwardFilter         operands input, output_grad  -> filter_grad
//   __dnn$convBiasActivationForward  operands input, filter, bias[, side_input]
//   __lapack$potrf                   operand a -> (factor, s32 info)  (cholesky)
//   __blas$trsm                      operands a, b -> x             (triangular-solve)
//
// Result shapes follow XLA: a convolution returns the tuple (result,
// u8[scratch bytes]); a gemm returns its array or, as newer XLA does, the
// tuple (result, s8[workspace bytes]). A convolution's window, dim_labels and
// feature_group_count are those of the *forward* convolution relating input,
// filter and output (as in XLA), whatever the kind.
//
// backend_config is JSON modelled on XLA's GemmBackendConfig and
// CudnnConvBackendConfig, wrapped as XLA wraps them
// ({"gemm_backend_config": {...}} / {"cudnn_conv_backend_config": {...}});
// the bare inner object is accepted as well. Integers may be JSON numbers or
// strings (proto JSON writes int64 as strings).
#ifndef PASSLAB_CORE_LIBCALL_LIBRARY_CALL_H_
#define PASSLAB_CORE_LIBCALL_LIBRARY_CALL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_attributes.h"
#include "core/ir/shape.h"

namespace passlab {

class HloInstruction;

inline constexpr std::string_view kGemmCallTarget = "__blas$gemm";
inline constexpr std::string_view kConvForwardCallTarget = "__dnn$convForward";
inline constexpr std::string_view kConvBackwardInputCallTarget = "__dnn$convBackwardInput";
inline constexpr std::string_view kConvBackwardFilterCallTarget = "__dnn$convBackwardFilter";
inline constexpr std::string_view kConvBiasActivationForwardCallTarget = "__dnn$convBiasActivationForward";
inline constexpr std::string_view kCholeskyCallTarget = "__lapack$potrf";
inline constexpr std::string_view kTriangularSolveCallTarget = "__blas$trsm";

enum class LibraryCallKind {
  kGemm,
  kConvForward,
  kConvBackwardInput,
  kConvBackwardFilter,
  kConvBiasActivationForward,
  kCholesky,
  kTriangularSolve,
};
const char* LibraryCallKindName(LibraryCallKind kind);  // "gemm", "convForward", ...

// The kind of a custom-call target (passlab or XLA spelling), if it is one.
std::optional<LibraryCallKind> ClassifyLibraryCallTarget(std::string_view target);
// The kind of a custom-call instruction, if it is a library call.
std::optional<LibraryCallKind> ClassifyLibraryCall(const HloInstruction& inst);
bool IsConvolutionKind(LibraryCallKind kind);
bool IsSolverKind(LibraryCallKind kind);  // cholesky, triangular-solve

// ---------------------------------------------------------------- gemm

enum class GemmEpilogue { kDefault, kBias, kRelu, kBiasRelu, kGelu, kBiasGelu };
const char* GemmEpilogueName(GemmEpilogue e);  // "DEFAULT", "BIAS", ...
bool EpilogueHasBias(GemmEpilogue e);

// XLA's GemmBackendConfig, the fields passlab uses.
struct GemmBackendConfig {
  double alpha_real = 1;
  double alpha_imag = 0;
  double beta = 0;
  DotDimensionNumbers dot_dimension_numbers;
  PrecisionConfig precision_config;
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  // -1 = not selected (the library's default); see ListAlgorithms in
  // core/runtime/library_call_runner.h for the values.
  int64_t selected_algorithm = -1;

  bool operator==(const GemmBackendConfig&) const = default;
  // The wrapped JSON text ({"gemm_backend_config": {...}}), keys sorted.
  std::string ToJson() const;
};

// Parses the backend_config of a gemm custom call; errors name `inst`.
absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(const HloInstruction& inst);
absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(std::string_view json, std::string_view where);

// A gemm call taken apart: its config and the role of each operand, checked
// against the shapes (batch/contracting dims in range, c and bias shaped as
// the result needs). One operand may have no batch dimensions while the
// other has some: it is then the same matrix for every batch (stride 0).
struct GemmCall {
  GemmBackendConfig config;
  int64_t c_operand = -1;     // operand index of C (beta != 0), -1 if none
  int64_t bias_operand = -1;  // operand index of the bias vector, -1 if none
  Shape result_shape;         // the array result (element 0 of a tuple result)
  int64_t batch = 1, m = 1, n = 1, k = 1;
};
absl::StatusOr<GemmCall> AnalyzeGemmCall(const HloInstruction& inst);

// ---------------------------------------------------------------- convolution

enum class ConvActivation { kNone, kRelu, kRelu6, kElu, kTanh, kSigmoid };
const char* ConvActivationName(ConvActivation a);  // "kNone", "kRelu", ... (XLA spelling)

// The algorithms a convolution call may record (passlab's, mapped onto the
// DNN library's). kAsBackwardFilter runs a forward convolution through the
// library's filter-gradient primitive, the same sum with the roles of batch
// and features exchanged (core/runtime/conv_runner.cc): a different engine
// for the same HLO, as cuDNN's algorithm picker chooses among engines.
// kTapGemm runs it as one matrix product per output position and filter
// tap on the library's matmul (few positions, large batch and features);
// kIm2colGemm as one matrix product of the input's patches, gathered per
// call, with the filter (a small input, a large filter or result).
enum class ConvAlgorithm {
  kAuto = 0,
  kDirect = 1,
  kWinograd = 2,
  kReference = 3,
  kAsBackwardFilter = 4,
  kTapGemm = 5,
  kIm2colGemm = 6
};
// "auto", "direct", "winograd", "reference", "as-backward-filter", "tap-gemm",
// "im2col-gemm"
const char* ConvAlgorithmName(ConvAlgorithm a);
std::optional<ConvAlgorithm> ParseConvAlgorithmName(std::string_view name);

// XLA's CudnnConvBackendConfig, the fields passlab uses.
struct ConvBackendConfig {
  double conv_result_scale = 1;
  double side_input_scale = 0;
  double leakyrelu_alpha = 0;
  ConvActivation activation_mode = ConvActivation::kNone;
  // algorithm {algo_id, tuning_knobs}; algo_id -1 = not selected.
  int64_t algo_id = -1;
  std::vector<std::pair<int64_t, int64_t>> tuning_knobs;  // sorted by knob id
  int64_t workspace_size = 0;

  bool operator==(const ConvBackendConfig&) const = default;
  std::optional<ConvAlgorithm> algorithm() const;  // nullopt when unset or unknown
  std::string ToJson() const;  // {"cudnn_conv_backend_config": {...}}, keys sorted
};

absl::StatusOr<ConvBackendConfig> ParseConvBackendConfig(const HloInstruction& inst);
absl::StatusOr<ConvBackendConfig> ParseConvBackendConfig(std::string_view json, std::string_view where);

// A convolution call taken apart: which buffer plays input, filter and output
// of the forward convolution, checked against window and dim_labels.
struct ConvCall {
  LibraryCallKind kind = LibraryCallKind::kConvForward;
  ConvBackendConfig config;
  Shape input_shape, filter_shape, output_shape;  // of the forward convolution
  Shape result_shape;           // element 0 of the result tuple
  int64_t scratch_bytes = 0;    // element 1 of the result tuple
  ConvolutionDimensionNumbers dnums;
  Window window;
  int64_t feature_group_count = 1;
  int64_t bias_operand = -1;        // kConvBiasActivationForward
  int64_t side_input_operand = -1;  // kConvBiasActivationForward, when present
};
absl::StatusOr<ConvCall> AnalyzeConvCall(const HloInstruction& inst);

// ---------------------------------------------------------------- solvers
//
// __lapack$potrf (XLA:GPU's cuSOLVER potrf call): operand a [batch.., n, n]
// (f32 or f64, row-major), result (factor [batch.., n, n], s32[batch..] info).
// factor is L with A = L L^T (lower) or U with A = U^T U, read from and
// written to that triangle, the other triangle zero; info is LAPACK's: 0, or
// the order of the first leading minor that is not positive definite (the
// factor is then unspecified). backend_config:
//   {"cholesky_backend_config": {"lower": true}}
// __blas$trsm (cuBLAS trsm): operands a [batch.., k, k], b [batch.., m, n]
// (f32 or f64), result x of b's shape with op(A) X = B (left_side, k = m) or
// X op(A) = B (k = n); only A's `lower` (or upper) triangle is read.
// backend_config, XLA's TriangularSolveOptions:
//   {"triangular_solve_backend_config": {"left_side": true, "lower": true,
//     "unit_diagonal": false, "transpose_a": "NO_TRANSPOSE"}}

struct CholeskyCall {
  bool lower = true;
  Shape factor_shape;  // element 0 of the result
  int64_t batch = 1, n = 0;
};
absl::StatusOr<CholeskyCall> AnalyzeCholeskyCall(const HloInstruction& inst);
std::string CholeskyBackendConfigJson(bool lower);

struct TriangularSolveCall {
  TriangularSolveOptions options;
  int64_t batch = 1, m = 0, n = 0, k = 0;  // b is [batch.., m, n], a [batch.., k, k]
};
absl::StatusOr<TriangularSolveCall> AnalyzeTriangularSolveCall(const HloInstruction& inst);
std::string TriangularSolveBackendConfigJson(const TriangularSolveOptions& options);

}  // namespace passlab

#endif  // PASSLAB_CORE_LIBCALL_LIBRARY_CALL_H_
