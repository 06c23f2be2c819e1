#include "passes/libcall/conv_call_util.h"

namespace passlab {

bool IsDnnConvType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

std::unique_ptr<HloInstruction> CreateConvCall(const Shape& result, std::string_view target,
                                               absl::Span<HloInstruction* const> operands, const Window& window,
                                               const ConvolutionDimensionNumbers& dnums, int64_t feature_group_count,
                                               const ConvBackendConfig& config, const PrecisionConfig& precision) {
  Shape shape = Shape::Tuple({result, Shape(PrimitiveType::kU8, {0})});
  std::unique_ptr<HloInstruction> call =
      HloInstruction::CreateCustomCall(shape, operands, std::string(target), config.ToJson());
  HloAttributes& a = call->mutable_attrs();
  a.window = window;
  a.conv_dnums = dnums;
  a.feature_group_count = feature_group_count;
  a.precision_config = precision;
  return call;
}

std::unique_ptr<HloInstruction> CloneConvCall(const HloInstruction& call, const Shape& result,
                                              absl::Span<HloInstruction* const> operands, const Window& window) {
  std::unique_ptr<HloInstruction> clone =
      CreateConvCall(result, call.custom_call_target(), operands, window, *call.attrs().conv_dnums,
                     call.attrs().feature_group_count, ConvBackendConfig{}, call.attrs().precision_config);
  clone->set_raw_backend_config(call.raw_backend_config());
  Shape shape = call.shape();
  shape.mutable_tuple_shapes()[0] = result;
  *clone->mutable_shape() = shape;
  clone->set_metadata(call.metadata());
  return clone;
}

}  // namespace passlab
