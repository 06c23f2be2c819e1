#include "passes/libcall/cudnn_simplify_padding.h"

#include <algorithm>
#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"
#include "core/ir/status_macros.h"
#include "core/libcall/library_call.h"

namespace passlab {
namespace {

// Element `linear` of `literal` is zero (-0.0 counts as zero).
bool IsZeroElement(const Literal& literal, int64_t linear) {
  PrimitiveType t = literal.shape().element_type();
  if (IsFloatingPointType(t)) return literal.GetDouble(linear) == 0.0;
  if (IsComplexType(t)) return literal.GetComplex(linear) == std::complex<double>(0, 0);
  return literal.GetBits(linear) == 0;
}

// A constant of one element (any rank, all dimensions 1) equal to zero:
// XLA's m::ConstantEffectiveScalar(0).
bool IsEffectiveScalarZeroConstant(const HloInstruction* h) {
  if (h->opcode() != HloOpcode::kConstant || !h->has_literal() || h->literal().elided()) return false;
  if (!h->shape().IsArray() || h->shape().element_count() != 1) return false;
  return IsZeroElement(h->literal(), 0);
}

bool IsForwardConvCall(const HloInstruction* h) {
  if (h->opcode() != HloOpcode::kCustomCall || !h->has_attrs() || !h->attrs().conv_dnums.has_value()) {
    return false;
  }
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*h);
  return kind == LibraryCallKind::kConvForward || kind == LibraryCallKind::kConvBiasActivationForward;
}

// How many output features at the end of `conv`'s result are known to be
// zero: those whose filter values are all zero. The filter is either a pad
// with a zero padding value (its padding_high on the kernel's output
// feature dimension) or a constant (scanned). nullopt when unknown.
std::optional<int64_t> NumTrailingZeroOutputFeatures(const HloInstruction* conv) {
  const int64_t feature_dim = conv->attrs().conv_dnums->kernel_output_feature_dimension;
  const HloInstruction* weights = conv->operand(1);
  if (weights->opcode() == HloOpcode::kPad && IsEffectiveScalarZeroConstant(weights->operand(1))) {
    return weights->attrs().padding_config.dimensions[feature_dim].edge_padding_high;
  }
  if (weights->opcode() != HloOpcode::kConstant || !weights->has_literal() || weights->literal().elided()) {
    return std::nullopt;
  }
  // The first feature after the last one with a nonzero value.
  const Literal& literal = weights->literal();
  const Shape& shape = weights->shape();
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  const int64_t features = shape.dimensions(feature_dim);
  int64_t first_trailing_zero = 0;
  for (int64_t linear = 0; linear < literal.element_count(); ++linear) {
    int64_t feature = (linear / strides[feature_dim]) % features;
    if (feature >= first_trailing_zero && !IsZeroElement(literal, linear)) first_trailing_zero = feature + 1;
  }
  return std::max<int64_t>(0, features - first_trailing_zero);
}

// pad(slice(gte(conv, 0)), 0) => pad(gte(conv, 0), 0) with less padding_high
// on the output feature dimension, when the slice only cuts known-zero
// output features.
absl::StatusOr<bool> TrySimplifyPadding(HloComputation* computation, HloInstruction* pad) {
  if (pad->opcode() != HloOpcode::kPad || !IsEffectiveScalarZeroConstant(pad->operand(1))) return false;
  HloInstruction* slice = pad->mutable_operand(0);
  if (slice->opcode() != HloOpcode::kSlice) return false;
  HloInstruction* gte = slice->mutable_operand(0);
  if (gte->opcode() != HloOpcode::kGetTupleElement || gte->tuple_index() != 0) return false;
  const HloInstruction* conv = gte->operand(0);
  if (!IsForwardConvCall(conv)) return false;

  std::optional<int64_t> known_zero = NumTrailingZeroOutputFeatures(conv);
  if (!known_zero.has_value() || *known_zero == 0) return false;

  // The slice may only cut the end of the output feature dimension.
  const int64_t feature_dim = conv->attrs().conv_dnums->output_feature_dimension;
  const std::vector<SliceDimension>& s = slice->attrs().slice;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (s[d].start != 0 || s[d].stride != 1) return false;
    if (d != feature_dim && s[d].limit != gte->shape().dimensions(d)) return false;
  }
  const int64_t num_sliced = gte->shape().dimensions(feature_dim) - s[feature_dim].limit;
  // Cutting more than the known zeros does real work.
  if (num_sliced > *known_zero) return false;
  const PaddingConfig& old_config = pad->attrs().padding_config;
  if (old_config.dimensions[feature_dim].interior_padding != 0) return false;

  // Pad num_sliced fewer zeros (a negative padding_high trims). The shape
  // and every value stay the same.
  PaddingConfig config = old_config;
  config.dimensions[feature_dim].edge_padding_high -= num_sliced;
  HloInstruction* new_pad = computation->AddInstruction(
      HloInstruction::CreatePad(pad->shape(), gte, pad->mutable_operand(1), std::move(config)));
  RETURN_IF_ERROR(computation->ReplaceInstruction(pad, new_pad));
  return true;
}

}  // namespace

absl::StatusOr<bool> CudnnSimplifyPadding::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    for (HloInstruction* instruction : computation->MakeInstructionPostOrder()) {
      ASSIGN_OR_RETURN(bool simplified, TrySimplifyPadding(computation, instruction));
      if (simplified) BumpCounter("folded slice into pad");
      changed |= simplified;
    }
  }
  return changed;
}

}  // namespace passlab
