// Library calls (core/libcall): `__blas$gemm`, the `__dnn$conv*` targets and
// the solver calls (`__lapack$potrf`, `__blas$trsm`), evaluated with the
// evaluator's own dot, convolution, cholesky and triangular-solve so that the
// evaluator stays the oracle for the runtime's OpenBLAS/oneDNN calls.
//
// The products are computed in f64 (c128 for complex) and the scaling, bias
// and activation applied before one final rounding to the result type.
// Backward convolutions are rewritten as forward ones over the same data
// (dimension numbers and windows from core/ir/conv_dimensions.h):
//   input_grad  = conv(output_grad, filter with in/out features swapped and
//                 regrouped, spatially reversed), lhs dilated by the stride;
//   filter_grad = conv(input viewed with batch and feature swapped,
//                 output_grad as the kernel), batch_group_count = groups.
#include <cmath>
#include <complex>
#include <cstring>
#include <optional>

#include "core/eval/eval_internal.h"
#include "core/ir/conv_dimensions.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"

namespace passlab::eval {
namespace {

PrimitiveType WideType(PrimitiveType t) { return IsComplexType(t) ? PrimitiveType::kC128 : PrimitiveType::kF64; }

Shape WithType(const Shape& s, PrimitiveType t) {
  Shape out = Shape::Array(t, s.dimensions());
  return out;
}

// The result literal for a call's array `value` (tuple results get a zeroed
// scratch element).
absl::StatusOr<Literal> Finish(const HloInstruction& inst, const Literal& wide, const Shape& result_shape) {
  ASSIGN_OR_RETURN(Literal narrow, wide.Convert(result_shape.element_type()));
  narrow.set_shape_layout(result_shape);
  if (!inst.shape().IsTuple()) return std::move(narrow);
  Literal scratch(inst.shape().tuple_shapes(1));
  return Literal::Tuple({std::move(narrow), std::move(scratch)});
}

double Gelu(double x) {
  // The tanh approximation, as cuBLASLt's GELU epilogue computes it.
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// `operand` with the batch dimensions `batch` prepended: the same matrix
// for every batch (a gemm operand without batch dimensions).
Literal PrependBatch(const Literal& operand, const std::vector<int64_t>& batch) {
  std::vector<int64_t> dims = batch;
  dims.insert(dims.end(), operand.shape().dimensions().begin(), operand.shape().dimensions().end());
  Literal out(Shape(operand.shape().element_type(), dims));
  int64_t bytes = operand.size_bytes();
  for (int64_t at = 0; bytes > 0 && at < out.size_bytes(); at += bytes) {
    std::memcpy(out.untyped_data() + at, operand.untyped_data(), bytes);
  }
  return out;
}

absl::StatusOr<Literal> EvalGemm(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  ASSIGN_OR_RETURN(GemmCall call, AnalyzeGemmCall(inst));
  const GemmBackendConfig& c = call.config;
  PrimitiveType rt = call.result_shape.element_type();
  if (!IsFloatingPointType(rt) && !IsComplexType(rt)) {
    return absl::InvalidArgumentError(StrCat("custom call ", inst.name(), ": gemm result must be floating point, not ",
                                             call.result_shape.ToString()));
  }
  std::unique_ptr<HloInstruction> dot =
      HloInstruction::Create(HloOpcode::kDot, WithType(call.result_shape, WideType(rt)), {});
  dot->mutable_attrs().dot_dnums = c.dot_dimension_numbers;
  dot->mutable_attrs().precision_config = c.precision_config;
  const Literal* operands[2] = {ops[0], ops[1]};
  // A side without batch dimensions is broadcast over the other's batch.
  DotDimensionNumbers& dn = dot->mutable_attrs().dot_dnums;
  std::optional<Literal> broadcast;
  for (int side = 0; side < 2; ++side) {
    std::vector<int64_t>& mine = side == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
    std::vector<int64_t>& mine_contracting = side == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
    const std::vector<int64_t>& other = side == 0 ? dn.rhs_batch_dimensions : dn.lhs_batch_dimensions;
    if (!mine.empty() || other.empty()) continue;
    std::vector<int64_t> sizes;
    for (int64_t d : other) sizes.push_back(operands[1 - side]->shape().dimensions(d));
    broadcast = PrependBatch(*operands[side], sizes);
    operands[side] = &*broadcast;
    int64_t nb = static_cast<int64_t>(sizes.size());
    for (int64_t i = 0; i < nb; ++i) mine.push_back(i);
    for (int64_t& d : mine_contracting) d += nb;
    break;
  }
  ASSIGN_OR_RETURN(Literal product, EvalDot(*dot, operands, ctx.options().num_threads));
  Literal& out = product;
  int64_t count = out.element_count();
  int64_t n = call.result_shape.rank() == 0 ? 1 : call.result_shape.dimensions().back();
  const Literal* cin = call.c_operand >= 0 ? ops[call.c_operand] : nullptr;
  const Literal* bias = call.bias_operand >= 0 ? ops[call.bias_operand] : nullptr;
  bool relu = c.epilogue == GemmEpilogue::kRelu || c.epilogue == GemmEpilogue::kBiasRelu;
  bool gelu = c.epilogue == GemmEpilogue::kGelu || c.epilogue == GemmEpilogue::kBiasGelu;
  if (IsComplexType(rt)) {
    if (relu || gelu) return absl::InvalidArgumentError(StrCat("custom call ", inst.name(), ": complex gemm with activation"));
    std::complex<double> alpha(c.alpha_real, c.alpha_imag);
    for (int64_t i = 0; i < count; ++i) {
      std::complex<double> v = alpha * out.GetComplex(i);
      if (cin != nullptr) v += c.beta * cin->GetComplex(i);
      if (bias != nullptr) v += bias->GetComplex(i % n);
      out.SetComplex(i, v);
    }
    return Finish(inst, out, call.result_shape);
  }
  double* v = out.data<double>().data();
  for (int64_t i = 0; i < count; ++i) {
    double x = c.alpha_real * v[i];
    if (cin != nullptr) x += c.beta * cin->GetDouble(i);
    if (bias != nullptr) x += bias->GetDouble(i % n);
    if (relu) x = std::max(x, 0.0);
    if (gelu) x = Gelu(x);
    v[i] = x;
  }
  return Finish(inst, out, call.result_shape);
}

double Activate(ConvActivation a, double x, double leaky_alpha) {
  switch (a) {
    case ConvActivation::kNone: return x;
    case ConvActivation::kRelu: return std::max(x, 0.0);
    case ConvActivation::kRelu6: return std::min(std::max(x, 0.0), 6.0);
    case ConvActivation::kElu: return x > 0 ? x : std::expm1(x);
    case ConvActivation::kTanh: return std::tanh(x);
    case ConvActivation::kSigmoid: return 1 / (1 + std::exp(-x));
  }
  (void)leaky_alpha;
  return x;
}

// The backward-input kernel: features swapped and, with groups, regrouped:
// w'[.., o', g*I + c] = w[.., c, g*Og + o'] (o' at the old output-feature
// position, g*I + c at the old input-feature position).
Literal RegroupFilter(const Literal& w, const ConvolutionDimensionNumbers& d, int64_t groups) {
  if (groups == 1) return w;
  const Shape& ws = w.shape();
  int64_t i_pos = d.kernel_input_feature_dimension, o_pos = d.kernel_output_feature_dimension;
  int64_t I = ws.dimensions(i_pos), O = ws.dimensions(o_pos), Og = O / groups;
  std::vector<int64_t> dims = ws.dimensions();
  dims[i_pos] = I * groups;
  dims[o_pos] = Og;
  Literal out(Shape::Array(ws.element_type(), dims));
  Index src(dims.size());
  ForEachIndex(dims, [&](const Index& idx, int64_t linear) {
    src = idx;
    int64_t g = idx[i_pos] / I, c = idx[i_pos] % I;
    src[i_pos] = c;
    src[o_pos] = g * Og + idx[o_pos];
    CopyElement(out, linear, w, Linear(src, ws.dimensions()));
  });
  return out;
}

absl::StatusOr<Literal> EvalConv(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  PrimitiveType rt = call.result_shape.element_type();
  if (!IsFloatingPointType(rt)) {
    return absl::InvalidArgumentError(StrCat("custom call ", inst.name(), ": convolution result must be real floating point, not ",
                                             call.result_shape.ToString()));
  }
  const ConvolutionDimensionNumbers& d = call.dnums;
  std::unique_ptr<HloInstruction> conv =
      HloInstruction::Create(HloOpcode::kConvolution, WithType(call.result_shape, PrimitiveType::kF64), {});
  HloAttributes& a = conv->mutable_attrs();
  Literal regrouped;
  std::vector<const Literal*> operands = {ops[0], ops[1]};
  switch (call.kind) {
    case LibraryCallKind::kConvForward:
    case LibraryCallKind::kConvBiasActivationForward:
      a.conv_dnums = d;
      a.window = call.window;
      a.feature_group_count = call.feature_group_count;
      break;
    case LibraryCallKind::kConvBackwardInput: {
      a.conv_dnums = BackwardDataDimensionNumbers(d);
      a.window = BackwardDataWindow(call.window, d, call.input_shape, call.output_shape);
      a.feature_group_count = call.feature_group_count;
      regrouped = RegroupFilter(*ops[1], d, call.feature_group_count);
      operands[1] = &regrouped;
      break;
    }
    case LibraryCallKind::kConvBackwardFilter: {
      a.conv_dnums = BackwardFilterDimensionNumbers(d);
      a.window = BackwardFilterWindow(call.window, d, call.input_shape, call.output_shape);
      a.batch_group_count = call.feature_group_count;
      break;
    }
    case LibraryCallKind::kGemm:
    case LibraryCallKind::kCholesky:
    case LibraryCallKind::kTriangularSolve:
      return absl::InternalError(StrCat(inst.name(), " is not a convolution"));
  }
  ASSIGN_OR_RETURN(Literal product, EvalConvolution(*conv, operands, ctx.options().num_threads));
  const ConvBackendConfig& c = call.config;
  double* v = product.data<double>().data();
  int64_t count = product.element_count();
  if (call.kind != LibraryCallKind::kConvBiasActivationForward) {
    for (int64_t i = 0; i < count; ++i) v[i] *= c.conv_result_scale;
    return Finish(inst, product, call.result_shape);
  }
  // act(scale * conv + side_input_scale * side_input + bias), bias along the
  // output feature dimension.
  const Shape& os = call.output_shape;
  std::vector<int64_t> strides = RowMajorStrides(os.dimensions());
  int64_t f_stride = strides[d.output_feature_dimension], features = os.dimensions(d.output_feature_dimension);
  const Literal& bias = *ops[call.bias_operand];
  const Literal* side = call.side_input_operand >= 0 ? ops[call.side_input_operand] : nullptr;
  for (int64_t i = 0; i < count; ++i) {
    double x = c.conv_result_scale * v[i] + bias.GetDouble(i / f_stride % features);
    if (side != nullptr) x += c.side_input_scale * side->GetDouble(i);
    v[i] = Activate(c.activation_mode, x, c.leakyrelu_alpha);
  }
  return Finish(inst, product, call.result_shape);
}

// LAPACK potrf's info for one matrix of `a` (elements [offset, offset + n*n)):
// 0, or 1 + the first column whose pivot is not positive.
int32_t PotrfInfo(const Literal& a, int64_t offset, int64_t n, bool lower) {
  auto at = [&](int64_t i, int64_t j) { return lower ? a.GetDouble(offset + i * n + j) : a.GetDouble(offset + j * n + i); };
  std::vector<double> l(n * n, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    double d = at(j, j);
    for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0)) return static_cast<int32_t>(j + 1);
    l[j * n + j] = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double v = at(i, j);
      for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = v / l[j * n + j];
    }
  }
  return 0;
}

// __lapack$potrf and __blas$trsm: the evaluator's own cholesky and
// triangular-solve, plus potrf's info.
absl::StatusOr<Literal> EvalSolver(const HloInstruction& inst, Operands ops) {
  if (ClassifyLibraryCall(inst) == LibraryCallKind::kTriangularSolve) {
    ASSIGN_OR_RETURN(TriangularSolveCall call, AnalyzeTriangularSolveCall(inst));
    std::unique_ptr<HloInstruction> solve = HloInstruction::Create(HloOpcode::kTriangularSolve, inst.shape(), {});
    solve->mutable_attrs().triangular_solve = call.options;
    return EvalLinearAlgebra(*solve, ops);
  }
  ASSIGN_OR_RETURN(CholeskyCall call, AnalyzeCholeskyCall(inst));
  std::unique_ptr<HloInstruction> cholesky = HloInstruction::Create(HloOpcode::kCholesky, call.factor_shape, {});
  cholesky->mutable_attrs().cholesky_lower = call.lower;
  ASSIGN_OR_RETURN(Literal factor, EvalLinearAlgebra(*cholesky, ops));
  Literal info(inst.shape().tuple_shapes(1));
  for (int64_t b = 0; b < call.batch; ++b) info.SetInt(b, PotrfInfo(*ops[0], b * call.n * call.n, call.n, call.lower));
  return Literal::Tuple({std::move(factor), std::move(info)});
}

}  // namespace

absl::StatusOr<Literal> EvalLibraryCall(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return absl::InvalidArgumentError(StrCat(inst.name(), " is not a library call"));
  if (*kind == LibraryCallKind::kGemm) return EvalGemm(inst, ops, ctx);
  if (IsSolverKind(*kind)) return EvalSolver(inst, ops);
  return EvalConv(inst, ops, ctx);
}

}  // namespace passlab::eval
