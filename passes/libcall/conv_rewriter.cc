#include "passes/libcall/conv_rewriter.h"

#include <algorithm>
#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

// A convolution call to build: target, operands and the forward
// convolution's window and dimension numbers.
struct ConvMatch {
  std::string_view target;
  HloInstruction* lhs;
  HloInstruction* rhs;
  Window window;
  ConvolutionDimensionNumbers dnums;
};

bool HasBaseDilation(const Window& w) {
  for (const WindowDimension& d : w.dimensions) {
    if (d.base_dilation != 1) return true;
  }
  return false;
}

bool HasWindowDilation(const Window& w) {
  for (const WindowDimension& d : w.dimensions) {
    if (d.window_dilation != 1) return true;
  }
  return false;
}

// The high padding XLA picks when the forward padding can be anything in
// [min_high, min_high + stride - 1] (trailing input the windows never reach):
// the low padding when it is in range (symmetric, what cuDNN prefers), else
// the nearest end of the range.
int64_t ChooseHighPadding(int64_t low, int64_t min_high, int64_t stride) {
  int64_t max_high = min_high + stride - 1;
  if (low < min_high) return min_high;
  if (low > max_high) return max_high;
  return low;
}

// conv(x, dy) computing a filter gradient: dW[c,o,k] = sum x[n,c,y*s+k-p] dy[n,o,y].
std::optional<ConvMatch> MatchBackwardFilter(HloInstruction* conv) {
  const Window& w = conv->window();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  if (conv->attrs().feature_group_count != 1 || HasBaseDilation(w)) return std::nullopt;
  int64_t window_elements = 1, output_elements = 1;
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    const WindowDimension& wd = w.dimensions[j];
    if (wd.stride != 1 || wd.window_reversal || wd.padding_low < 0) return std::nullopt;
    window_elements *= wd.size;
    output_elements *= conv->shape().dimensions(d.output_spatial_dimensions[j]);
  }
  // Stride 1 forward: a filter gradient only when the window (the output
  // gradient) is larger than the result (the filter).
  if (!HasWindowDilation(w) && window_elements <= output_elements) return std::nullopt;
  ConvMatch m{kConvBackwardFilterCallTarget, conv->mutable_operand(0), conv->mutable_operand(1), {}, {}};
  ConvolutionDimensionNumbers& f = m.dnums;
  f.input_batch_dimension = d.input_feature_dimension;
  f.input_feature_dimension = d.input_batch_dimension;
  f.input_spatial_dimensions = d.input_spatial_dimensions;
  f.kernel_input_feature_dimension = d.output_batch_dimension;
  f.kernel_output_feature_dimension = d.output_feature_dimension;
  f.kernel_spatial_dimensions = d.output_spatial_dimensions;
  f.output_batch_dimension = d.kernel_input_feature_dimension;
  f.output_feature_dimension = d.kernel_output_feature_dimension;
  f.output_spatial_dimensions = d.kernel_spatial_dimensions;
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    const WindowDimension& wd = w.dimensions[j];
    WindowDimension fd;
    fd.size = conv->shape().dimensions(d.output_spatial_dimensions[j]);
    fd.stride = wd.window_dilation;
    fd.padding_low = wd.padding_low;
    // The gradient's high padding is the least forward high padding that
    // yields its output size.
    fd.padding_high = ChooseHighPadding(wd.padding_low, wd.padding_high, fd.stride);
    m.window.dimensions.push_back(fd);
  }
  return m;
}

// conv(dy, reversed w) with lhs_dilation s: dx[n,c,x] = sum dy[n,o,y] w[k,c,o]
// over y*s + k - p = x.
std::optional<ConvMatch> MatchBackwardInput(HloInstruction* conv) {
  const Window& w = conv->window();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  if (conv->attrs().feature_group_count != 1 || w.dimensions.empty()) return std::nullopt;
  HloInstruction* kernel = conv->mutable_operand(1);
  bool window_reversed = true;
  for (const WindowDimension& wd : w.dimensions) window_reversed = window_reversed && wd.window_reversal;
  bool any_reversed = false;
  for (const WindowDimension& wd : w.dimensions) any_reversed = any_reversed || wd.window_reversal;
  if (!window_reversed) {
    // reverse(w) on exactly the kernel's spatial dims, window not reversed.
    if (any_reversed || kernel->opcode() != HloOpcode::kReverse) return std::nullopt;
    std::vector<int64_t> dims = kernel->dimensions(), spatial = d.kernel_spatial_dimensions;
    std::sort(dims.begin(), dims.end());
    std::sort(spatial.begin(), spatial.end());
    if (dims != spatial) return std::nullopt;
    kernel = kernel->mutable_operand(0);
  }
  ConvMatch m{kConvBackwardInputCallTarget, conv->mutable_operand(0), kernel, {}, {}};
  ConvolutionDimensionNumbers& f = m.dnums;
  f.input_batch_dimension = d.output_batch_dimension;
  f.input_feature_dimension = d.output_feature_dimension;
  f.input_spatial_dimensions = d.output_spatial_dimensions;
  f.kernel_input_feature_dimension = d.kernel_output_feature_dimension;
  f.kernel_output_feature_dimension = d.kernel_input_feature_dimension;
  f.kernel_spatial_dimensions = d.kernel_spatial_dimensions;
  f.output_batch_dimension = d.input_batch_dimension;
  f.output_feature_dimension = d.input_feature_dimension;
  f.output_spatial_dimensions = d.input_spatial_dimensions;
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    const WindowDimension& wd = w.dimensions[j];
    if (wd.stride != 1 || wd.window_dilation != 1) return std::nullopt;
    int64_t k = wd.size, s = wd.base_dilation;
    int64_t in = conv->shape().dimensions(d.output_spatial_dimensions[j]);
    int64_t out = conv->operand(0)->shape().dimensions(d.input_spatial_dimensions[j]);
    WindowDimension fd;
    fd.size = k;
    fd.stride = s;
    fd.padding_low = k - 1 - wd.padding_low;
    int64_t min_high = k + (out - 1) * s - in - fd.padding_low;
    fd.padding_high = ChooseHighPadding(fd.padding_low, min_high, s);
    // Negative forward padding would need a padded gradient; XLA falls back
    // to the plain convolution there too.
    if (fd.padding_low < 0 || fd.padding_high < 0) return std::nullopt;
    m.window.dimensions.push_back(fd);
  }
  return m;
}

std::optional<ConvMatch> MatchForward(HloInstruction* conv) {
  if (HasBaseDilation(conv->window())) return std::nullopt;
  return ConvMatch{kConvForwardCallTarget, conv->mutable_operand(0), conv->mutable_operand(1), conv->window(),
                   *conv->attrs().conv_dnums};
}

class ConvRewriteVisitor : public HloRewriteVisitor {
 public:
  explicit ConvRewriteVisitor(ConvRewriter& pass) : pass_(pass) {}

  absl::Status HandleConvolution(HloInstruction* conv) override {
    PrimitiveType t = conv->shape().element_type();
    if (!IsDnnConvType(t) || conv->operand(0)->shape().element_type() != t ||
        conv->operand(1)->shape().element_type() != t || conv->attrs().batch_group_count != 1 ||
        !conv->attrs().conv_dnums.has_value()) {
      return absl::OkStatus();
    }
    std::optional<ConvMatch> m = MatchBackwardFilter(conv);
    if (!m) m = MatchBackwardInput(conv);
    if (!m) m = MatchForward(conv);
    if (!m) return absl::OkStatus();
    ConvBackendConfig config;
    std::unique_ptr<HloInstruction> call = CreateConvCall(conv->shape(), m->target, {m->lhs, m->rhs}, m->window,
                                                          m->dnums, conv->attrs().feature_group_count, config);
    call->set_metadata(conv->metadata());
    HloInstruction* added = AddInstruction(conv, std::move(call));
    pass_.BumpCounter(std::string(m->target));
    return ReplaceWithNewInstruction(conv, HloInstruction::CreateGetTupleElement(added, 0));
  }

 private:
  ConvRewriter& pass_;
};

}  // namespace

absl::StatusOr<bool> ConvRewriter::RunImpl(HloModule& module, PassRunContext*) {
  ConvRewriteVisitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
