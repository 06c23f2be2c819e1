#include "passes/libcall/conv_padding_legalization.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

bool Legal(const WindowDimension& d) { return d.padding_low == d.padding_high && d.padding_low >= 0; }

// A zero of `type` as a scalar constant.
std::unique_ptr<HloInstruction> Zero(PrimitiveType type) {
  absl::StatusOr<Literal> zero = Literal::Scalar<float>(0).Convert(type);
  return HloInstruction::CreateConstant(zero.ok() ? std::move(*zero) : Literal::Scalar<float>(0));
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
    if (std::all_of(w.dimensions.begin(), w.dimensions.end(), Legal)) return absl::OkStatus();
    if (*kind == LibraryCallKind::kConvBackwardInput) return LegalizeBackwardInput(call);
    return LegalizeInputSide(call);
  }

 private:
  // conv(x) with padding (l, h) == conv(pad(x, l - p, h - p)) with padding
  // (p, p), p = max(0, min(l, h)); negative parts become a slice of x.
  absl::Status LegalizeInputSide(HloInstruction* call) {
    const ConvolutionDimensionNumbers& d = *call->attrs().conv_dnums;
    HloInstruction* input = call->mutable_operand(0);
    const Shape& in = input->shape();
    Window window = call->window();
    PaddingConfig pad;
    pad.dimensions.resize(in.rank());
    std::vector<SliceDimension> slice(in.rank());
    std::vector<int64_t> padded_dims = in.dimensions();
    bool needs_pad = false, needs_slice = false;
    for (size_t j = 0; j < window.dimensions.size(); ++j) {
      WindowDimension& wd = window.dimensions[j];
      int64_t dim = d.input_spatial_dimensions[j];
      int64_t p = std::max<int64_t>(0, std::min(wd.padding_low, wd.padding_high));
      int64_t low = wd.padding_low - p, high = wd.padding_high - p;
      pad.dimensions[dim].edge_padding_low = std::max<int64_t>(low, 0);
      pad.dimensions[dim].edge_padding_high = std::max<int64_t>(high, 0);
      needs_pad = needs_pad || low > 0 || high > 0;
      padded_dims[dim] += std::max<int64_t>(low, 0) + std::max<int64_t>(high, 0);
      wd.padding_low = wd.padding_high = p;
    }
    for (int64_t dim = 0; dim < in.rank(); ++dim) slice[dim] = {0, padded_dims[dim], 1};
    for (size_t j = 0; j < window.dimensions.size(); ++j) {
      const WindowDimension& old = call->window().dimensions[j];
      int64_t p = window.dimensions[j].padding_low;
      int64_t dim = d.input_spatial_dimensions[j];
      if (old.padding_low - p < 0) slice[dim].start = p - old.padding_low;
      if (old.padding_high - p < 0) slice[dim].limit += old.padding_high - p;
      needs_slice = needs_slice || slice[dim].start != 0 || slice[dim].limit != padded_dims[dim];
    }
    HloInstruction* legal = input;
    if (needs_pad) {
      HloInstruction* zero = AddInstruction(call, Zero(in.element_type()));
      Shape shape(in.element_type(), padded_dims);
      shape.set_layout(in.layout());
      legal = AddInstruction(call, HloInstruction::CreatePad(shape, legal, zero, pad));
      pass_.BumpCounter("explicit input padding");
    }
    if (needs_slice) {
      std::vector<int64_t> dims;
      for (const SliceDimension& s : slice) dims.push_back(s.limit - s.start);
      Shape shape(in.element_type(), dims);
      shape.set_layout(in.layout());
      legal = AddInstruction(call, HloInstruction::CreateSlice(shape, legal, slice));
      pass_.BumpCounter("input slice for negative padding");
    }
    std::vector<HloInstruction*> operands = call->operands();
    operands[0] = legal;
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
