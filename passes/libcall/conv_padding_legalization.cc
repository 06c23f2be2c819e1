#include "passes/libcall/conv_padding_legalization.h"

#include <algorithm>
#include <utility>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

bool Symmetric(const Window& w) {
  return std::all_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.padding_low == d.padding_high; });
}
bool NonNegative(const Window& w) {
  return std::all_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.padding_low >= 0 && d.padding_high >= 0; });
}
bool BaseDilated(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.base_dilation != 1; });
}
bool WindowDilated(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.window_dilation != 1; });
}

// A zero of `type` as a scalar constant.
std::unique_ptr<HloInstruction> Zero(PrimitiveType type) {
  absl::StatusOr<Literal> zero = Literal::Scalar<float>(0).Convert(type);
  return HloInstruction::CreateConstant(zero.ok() ? std::move(*zero) : Literal::Scalar<float>(0));
}

// pad(operand, 0, config) with its inferred shape (operand's layout).
std::unique_ptr<HloInstruction> MakePad(HloInstruction* operand, HloInstruction* zero, const PaddingConfig& config) {
  const Shape& in = operand->shape();
  std::vector<int64_t> dims = in.dimensions();
  for (int64_t k = 0; k < in.rank(); ++k) {
    const PaddingDimension& p = config.dimensions[k];
    int64_t interior = dims[k] > 0 ? (dims[k] - 1) * p.interior_padding : 0;
    dims[k] += p.edge_padding_low + p.edge_padding_high + interior;
  }
  Shape shape(in.element_type(), dims);
  shape.set_layout(in.layout());
  return HloInstruction::CreatePad(shape, operand, zero, config);
}

class PaddingVisitor : public HloRewriteVisitor {
 public:
  explicit PaddingVisitor(ConvPaddingLegalization& pass) : pass_(pass) {}

  absl::Status HandleCustomCall(HloInstruction* call) override {
    std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*call);
    if (!kind || !IsConvolutionKind(*kind) || !call->attrs().window.has_value() ||
        !call->attrs().conv_dnums.has_value() || !call->shape().IsTuple()) {
      return absl::OkStatus();
    }
    const Window& w = call->window();
    if (*kind == LibraryCallKind::kConvBackwardInput) {
      if (Symmetric(w)) return absl::OkStatus();
      return LegalizeBackwardInput(call);
    }
    if (*kind == LibraryCallKind::kConvBackwardFilter) {
      if (Symmetric(w) || !NonNegative(w)) return absl::OkStatus();
      return LegalizeBackwardFilter(call);
    }
    if (Symmetric(w) && NonNegative(w) && !BaseDilated(w)) return absl::OkStatus();
    return LegalizeForward(call);
  }

 private:
  // XLA's CanonicalizeForwardConvolution (gpu conv_padding_legalization.cc):
  // when the padding is asymmetric or the input base-dilated, all positive
  // padding and the base dilation move into one explicit pad of the input;
  // negative padding becomes a slice of it; a window dilation then becomes
  // an interior pad of the kernel (the window grows to the dilated kernel).
  absl::Status LegalizeForward(HloInstruction* call) {
    const ConvolutionDimensionNumbers& d = *call->attrs().conv_dnums;
    HloInstruction* input = call->mutable_operand(0);
    HloInstruction* kernel = call->mutable_operand(1);
    Window window = call->window();
    if (!Symmetric(window) || BaseDilated(window)) {
      PaddingConfig pad;
      pad.dimensions.resize(input->shape().rank());
      for (size_t j = 0; j < window.dimensions.size(); ++j) {
        WindowDimension& wd = window.dimensions[j];
        PaddingDimension& p = pad.dimensions[d.input_spatial_dimensions[j]];
        if (wd.padding_low > 0) p.edge_padding_low = std::exchange(wd.padding_low, 0);
        if (wd.padding_high > 0) p.edge_padding_high = std::exchange(wd.padding_high, 0);
        if (wd.base_dilation != 1) p.interior_padding = std::exchange(wd.base_dilation, 1) - 1;
      }
      HloInstruction* zero = AddInstruction(call, Zero(input->shape().element_type()));
      input = AddInstruction(call, MakePad(input, zero, pad));
      pass_.BumpCounter("explicit input padding");
    }
    if (!NonNegative(window)) {
      const Shape& in = input->shape();
      std::vector<SliceDimension> slice(in.rank());
      for (int64_t k = 0; k < in.rank(); ++k) slice[k] = {0, in.dimensions(k), 1};
      for (size_t j = 0; j < window.dimensions.size(); ++j) {
        WindowDimension& wd = window.dimensions[j];
        SliceDimension& s = slice[d.input_spatial_dimensions[j]];
        if (wd.padding_low < 0) s.start -= std::exchange(wd.padding_low, 0);
        if (wd.padding_high < 0) s.limit += std::exchange(wd.padding_high, 0);
      }
      std::vector<int64_t> dims;
      for (const SliceDimension& s : slice) dims.push_back(s.limit - s.start);
      Shape shape(in.element_type(), dims);
      shape.set_layout(in.layout());
      input = AddInstruction(call, HloInstruction::CreateSlice(shape, input, slice));
      pass_.BumpCounter("input slice for negative padding");
    }
    if (WindowDilated(window)) {
      PaddingConfig pad;
      pad.dimensions.resize(kernel->shape().rank());
      for (size_t j = 0; j < window.dimensions.size(); ++j) {
        pad.dimensions[d.kernel_spatial_dimensions[j]].interior_padding = window.dimensions[j].window_dilation - 1;
      }
      HloInstruction* zero = AddInstruction(call, Zero(kernel->shape().element_type()));
      kernel = AddInstruction(call, MakePad(kernel, zero, pad));
      for (size_t j = 0; j < window.dimensions.size(); ++j) {
        window.dimensions[j].size = kernel->shape().dimensions(d.kernel_spatial_dimensions[j]);
        window.dimensions[j].window_dilation = 1;
      }
      pass_.BumpCounter("explicit kernel dilation");
    }
    std::vector<HloInstruction*> operands = call->operands();
    operands[0] = input;
    operands[1] = kernel;
    return ReplaceWithNewInstruction(call, CloneConvCall(*call, call->shape().tuple_shapes(0), operands, window));
  }

  // XLA's CanonicalizeBackwardFilterConvolution: the difference of uneven
  // non-negative padding (l, h) moves into a pad of the input, the call
  // keeps p = min(l, h) on both sides.
  absl::Status LegalizeBackwardFilter(HloInstruction* call) {
    const ConvolutionDimensionNumbers& d = *call->attrs().conv_dnums;
    HloInstruction* input = call->mutable_operand(0);
    Window window = call->window();
    PaddingConfig pad;
    pad.dimensions.resize(input->shape().rank());
    for (size_t j = 0; j < window.dimensions.size(); ++j) {
      WindowDimension& wd = window.dimensions[j];
      int64_t p = std::min(wd.padding_low, wd.padding_high);
      PaddingDimension& pd = pad.dimensions[d.input_spatial_dimensions[j]];
      pd.edge_padding_low = wd.padding_low - p;
      pd.edge_padding_high = wd.padding_high - p;
      wd.padding_low = wd.padding_high = p;
    }
    HloInstruction* zero = AddInstruction(call, Zero(input->shape().element_type()));
    HloInstruction* padded = AddInstruction(call, MakePad(input, zero, pad));
    pass_.BumpCounter("explicit input padding");
    std::vector<HloInstruction*> operands = call->operands();
    operands[0] = padded;
    return ReplaceWithNewInstruction(call, CloneConvCall(*call, call->shape().tuple_shapes(0), operands, window));
  }

  // dx for padding (l, h) == slice(dx' for padding (p, p)), p = min(l, h),
  // where x' is x grown by l - p before and h - p after.
  absl::Status LegalizeBackwardInput(HloInstruction* call) {
    const ConvolutionDimensionNumbers& d = *call->attrs().conv_dnums;
    Window window = call->window();
    const Shape& result = call->shape().tuple_shapes(0);
    std::vector<int64_t> grown = result.dimensions();
    std::vector<SliceDimension> slice(result.rank());
    for (int64_t dim = 0; dim < result.rank(); ++dim) slice[dim] = {0, result.dimensions(dim), 1};
    for (size_t j = 0; j < window.dimensions.size(); ++j) {
      WindowDimension& wd = window.dimensions[j];
      if (wd.padding_low < 0 || wd.padding_high < 0) return absl::OkStatus();
      int64_t dim = d.input_spatial_dimensions[j];
      int64_t p = std::min(wd.padding_low, wd.padding_high);
      grown[dim] += wd.padding_low - p + wd.padding_high - p;
      slice[dim] = {wd.padding_low - p, wd.padding_low - p + result.dimensions(dim), 1};
      wd.padding_low = wd.padding_high = p;
    }
    Shape grown_shape(result.element_type(), grown);
    grown_shape.set_layout(result.layout());
    HloInstruction* legal = AddInstruction(call, CloneConvCall(*call, grown_shape, call->operands(), window));
    HloInstruction* value = AddInstruction(call, HloInstruction::CreateGetTupleElement(legal, 0));
    HloInstruction* cut = AddInstruction(call, HloInstruction::CreateSlice(result, value, slice));
    HloInstruction* scratch = AddInstruction(call, HloInstruction::CreateGetTupleElement(legal, 1));
    pass_.BumpCounter("backward input result slice");
    return ReplaceWithNewInstruction(call, HloInstruction::CreateTuple({cut, scratch}));
  }

  ConvPaddingLegalization& pass_;
};

}  // namespace

absl::StatusOr<bool> ConvPaddingLegalization::RunImpl(HloModule& module, PassRunContext*) {
  PaddingVisitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
