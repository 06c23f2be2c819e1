#include "passes/libcall/cudnn_pad_for_convolutions.h"

#include "core/ir/hlo_computation.h"
#include "core/ir/literal.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

int64_t RoundUp(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

bool IsNarrowFloat(PrimitiveType t) { return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16; }

// `x` grown to `sizes` with zeros at the high end; `x` itself when no
// dimension grows.
HloInstruction* PadWithZeros(HloComputation* c, HloInstruction* x, const std::vector<int64_t>& sizes) {
  if (x->shape().dimensions() == sizes) return x;
  absl::StatusOr<Literal> zero = Literal::Scalar<float>(0).Convert(x->shape().element_type());
  HloInstruction* z = c->AddInstruction(HloInstruction::CreateConstant(std::move(*zero)));
  PaddingConfig config;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    config.dimensions.push_back({0, sizes[d] - x->shape().dimensions(d), 0});
  }
  Shape shape = x->shape();
  for (int64_t d = 0; d < shape.rank(); ++d) shape.set_dimensions(d, sizes[d]);
  return c->AddInstruction(HloInstruction::CreatePad(shape, x, z, std::move(config)));
}

std::vector<int64_t> WithDim(std::vector<int64_t> dims, int64_t d, int64_t size) {
  dims[d] = size;
  return dims;
}

int64_t ElementsOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

class PadVisitor : public HloRewriteVisitor {
 public:
  PadVisitor(const CudnnPadForConvolutionsOptions& options, HloPassInterface& pass) : options_(options), pass_(pass) {}

  // conv(x, w) => slice(conv(pad(x), pad(w)))
  absl::Status HandleCustomCall(HloInstruction* call) override {
    std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*call);
    if (kind != LibraryCallKind::kConvForward && kind != LibraryCallKind::kConvBiasActivationForward) {
      return absl::OkStatus();
    }
    absl::StatusOr<ConvCall> conv = AnalyzeConvCall(*call);
    if (!conv.ok() || conv->feature_group_count != 1 || !IsNarrowFloat(conv->result_shape.element_type()) ||
        conv->input_shape.element_type() != conv->result_shape.element_type()) {
      return absl::OkStatus();
    }
    const ConvolutionDimensionNumbers& d = conv->dnums;
    const int64_t multiple = options_.pad_to_multiple_of;
    const int64_t in_features = conv->input_shape.dimensions(d.input_feature_dimension);
    const int64_t out_features = conv->output_shape.dimensions(d.output_feature_dimension);
    const int64_t new_in = RoundUp(in_features, multiple), new_out = RoundUp(out_features, multiple);
    if (new_in == in_features && new_out == out_features) return absl::OkStatus();
    std::vector<int64_t> input_dims = WithDim(conv->input_shape.dimensions(), d.input_feature_dimension, new_in);
    std::vector<int64_t> filter_dims =
        WithDim(WithDim(conv->filter_shape.dimensions(), d.kernel_input_feature_dimension, new_in),
                d.kernel_output_feature_dimension, new_out);
    std::vector<int64_t> output_dims = WithDim(conv->output_shape.dimensions(), d.output_feature_dimension, new_out);
    // Guard: the call must not touch too many more bytes.
    int64_t before = conv->input_shape.element_count() + conv->filter_shape.element_count() +
                     conv->output_shape.element_count();
    int64_t after = ElementsOf(input_dims) + ElementsOf(filter_dims) + ElementsOf(output_dims);
    if (static_cast<double>(after) > options_.max_bytes_growth * static_cast<double>(before)) {
      pass_.BumpCounter("left unpadded (too many more bytes)");
      return absl::OkStatus();
    }
    HloComputation* c = call->parent();
    std::vector<HloInstruction*> operands = {PadWithZeros(c, call->mutable_operand(0), input_dims),
                                             PadWithZeros(c, call->mutable_operand(1), filter_dims)};
    if (conv->bias_operand >= 0) {
      operands.push_back(PadWithZeros(c, call->mutable_operand(conv->bias_operand), {new_out}));
    }
    if (conv->side_input_operand >= 0) {
      operands.push_back(PadWithZeros(c, call->mutable_operand(conv->side_input_operand), output_dims));
    }
    Shape padded_result = conv->result_shape;
    padded_result.set_dimensions(d.output_feature_dimension, new_out);
    HloInstruction* padded = c->AddInstruction(CloneConvCall(*call, padded_result, operands, conv->window));
    HloInstruction* result = c->AddInstruction(HloInstruction::CreateGetTupleElement(padded, 0));
    std::vector<SliceDimension> slice;
    for (int64_t size : conv->result_shape.dimensions()) slice.push_back({0, size, 1});
    HloInstruction* sliced = c->AddInstruction(HloInstruction::CreateSlice(conv->result_shape, result, slice));
    HloInstruction* scratch = c->AddInstruction(HloInstruction::CreateGetTupleElement(padded, 1));
    pass_.BumpCounter("padded convolution features");
    return ReplaceWithNewInstruction(call, HloInstruction::CreateTuple({sliced, scratch}));
  }

 private:
  const CudnnPadForConvolutionsOptions& options_;
  HloPassInterface& pass_;
};

}  // namespace

absl::StatusOr<bool> CudnnPadForConvolutions::RunImpl(HloModule& module, PassRunContext*) {
  PadVisitor visitor(options_, *this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
