// How a library call reaches cuBLASLt and cuDNN: pure functions from the HLO
// custom call (core/libcall) to the library's problem description, with no
// CUDA types, so they are unit-tested without a GPU and the executor only
// translates them into descriptors.
//
// Gemm (cuBLASLt is column-major): each operand is viewed as a batch of
// [rows][cols] matrices with the strides of its layout. A matrix whose rows
// are contiguous (unit row stride) is a column-major matrix as stored; one
// whose columns are contiguous is a stored transpose. A row-major result D
// is computed as D^T = B^T A^T (operands swapped), a column-major one as is;
// bias epilogues need the swapped form (cuBLASLt's bias runs along D's rows,
// XLA's along the result's last dimension). Batch offsets must form a
// progression (stride 0 for an operand without batch dimensions).
//
// Convolution (cuDNN, legacy API, cross-correlation): the forward
// convolution's x (input), w (filter) and y (output) as N,C,spatial... tensor
// descriptors with the strides of each shape's layout (any layout), a filter
// in KCRS or KRSC order (other filter layouts through a transposed scratch
// copy), symmetric padding, no base dilation or window
// reversal; 1-D convolutions get a unit spatial dimension (cuDNN wants 4-D).
// Anything else is not plannable: the executor then runs the call on the
// host library (visible as such in the kernel table).
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_PLAN_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/primitive_type.h"
#include "core/libcall/library_call.h"

namespace passlab {

class HloInstruction;

// ---------------------------------------------------------------- gemm

// One cuBLASLt matrix layout: column-major rows x cols with leading
// dimension ld, `batch_stride` elements between batches.
struct BlasLtMatrix {
  PrimitiveType type = PrimitiveType::kF32;
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t batch_stride = 0;
  bool operator==(const BlasLtMatrix&) const = default;
};

enum class BlasLtComputeType { k32F, k64F };

struct BlasLtGemmPlan {
  // cuBLASLt's problem: D[m x n] = alpha * op(A)[m x k] op(B)[k x n] + beta * C.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool transpose_a = false, transpose_b = false;
  BlasLtMatrix a, b, c, d;  // as stored (before op)
  // Buffer indices (operand order, then the result) of cuBLASLt's A, B, C
  // (-1: none; C is D then, with beta 0) and the bias.
  int64_t a_buffer = 0, b_buffer = 1, c_buffer = -1, bias_buffer = -1;
  bool swapped = false;  // D^T = B^T A^T (the HLO result is row-major)
  // Batch dimensions that one batch stride cannot cover: one cuBLASLt call
  // per entry, A, B, C and D starting at these element offsets (empty: one
  // call at offset 0). `batch` is then each call's strided batch.
  std::vector<int64_t> outer_a, outer_b, outer_c, outer_d;
  double alpha = 1, beta = 0;
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  PrimitiveType bias_type = PrimitiveType::kF32;
  BlasLtComputeType compute = BlasLtComputeType::k32F;
  // f32 operands that XLA lets compute in TF32 (Tf32Allowed below).
  bool tf32 = false;
  int64_t flops = 0;
};

// Whether XLA:GPU lets an f32 gemm or convolution with this precision
// config run on TF32 tensor cores: with no algorithm set, when every
// operand precision is DEFAULT or HIGH (xla/service/gpu/matmul_utils.cc
// IsTf32Allowed; xla/backends/gpu/autotuner/cudnn.cc allow_tf32); with an
// algorithm, when it takes TF32 inputs ("dot_tf32_tf32_f32", ...).
bool Tf32Allowed(const PrecisionConfig& precision);

// The plan of a `__blas$gemm` call, or why cuBLASLt cannot take it as laid
// out (kUnimplemented) or the call is malformed (kInvalidArgument).
absl::StatusOr<BlasLtGemmPlan> PlanBlasLtGemm(const HloInstruction& inst);
// "m=64 n=32 k=16 batch=1 A=N(64x16 ld 64) B=T(...) D=... epilogue=BIAS"
std::string BlasLtGemmPlanToString(const BlasLtGemmPlan& plan);

// ---------------------------------------------------------------- convolution

// An N, C, spatial... tensor (element strides from the shape's layout).
struct DnnTensor {
  std::vector<int64_t> dims, strides;
  bool operator==(const DnnTensor&) const = default;
};

// cuDNN's NCHW / NHWC filter formats; kStrided: any other layout, moved
// into a packed scratch filter (in `packed_order`) with cudnnTransformTensor
// (before the call when the filter is read, after it when it is written).
// A filter whose format differs from the activations' (an NCHW filter with
// NHWC activations, as HWIO weights with NHWC images give) is kStrided too:
// cuDNN offers no backward-data or backward-filter algorithm for f32 or f64
// when the two formats differ (seen on an H200 with cuDNN 9).
enum class DnnFilterOrder { kKCRS, kKRSC, kStrided };

struct DnnConvPlan {
  LibraryCallKind kind = LibraryCallKind::kConvForward;
  PrimitiveType type = PrimitiveType::kF32;     // x, w, y
  PrimitiveType compute = PrimitiveType::kF32;  // accumulation
  bool tf32 = false;  // f32 that XLA lets compute in TF32 (Tf32Allowed)
  // Every spatial window dimension reversed: cuDNN's convolution mode
  // instead of cross-correlation.
  bool convolution_mode = false;
  DnnTensor x, y;
  std::vector<int64_t> w_dims;     // K, C/groups, spatial...
  std::vector<int64_t> w_strides;  // of w_dims in the filter's layout
  DnnFilterOrder w_order = DnnFilterOrder::kKCRS;
  // The format cuDNN sees: kKRSC when x is channels-last, else kKCRS (for
  // kStrided filters, the scratch copy's order).
  DnnFilterOrder packed_order = DnnFilterOrder::kKCRS;
  int64_t w_bytes = 0;  // the filter's size (the kStrided scratch)
  std::vector<int64_t> padding, stride, dilation;  // per spatial dimension
  int64_t groups = 1;
  // Buffer indices of x, w, y (operands, then the result).
  int64_t x_buffer = 0, w_buffer = 1, y_buffer = 2;
  // kConvBiasActivationForward: bias (1, K, 1, ...) and side input (y's
  // shape), scales and activation.
  int64_t bias_buffer = -1, side_input_buffer = -1;
  DnnTensor bias, side_input;
  double conv_scale = 1, side_input_scale = 0;
  ConvActivation activation = ConvActivation::kNone;
  int64_t scratch_bytes = 0;  // the call's scratch buffer (result element 1)
  int64_t flops = 0;
};

absl::StatusOr<DnnConvPlan> PlanDnnConvolution(const HloInstruction& inst);
std::string DnnConvPlanToString(const DnnConvPlan& plan);

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDA_LIBRARY_PLAN_H_
