#include "passes/libcall/conv_rewriter.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "core/ir/conv_dimensions.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/libcall/conv_call_util.h"

namespace passlab {
namespace {

// Moves `groups` from one dimension of an operand into another, both
// groups-major: dimension `from` (size G*n) becomes n and dimension `to`
// (size m) becomes G*m, element [.., from = g*n + i, .., to = j, ..] going to
// [.., from = i, .., to = g*m + j, ..].
struct GroupMove {
  int64_t from = -1;
  int64_t to = -1;
  int64_t groups = 1;
};

// A convolution call to build: target, operands, the forward convolution's
// window, dimension numbers and feature groups, and the regrouping an
// operand needs first (a grouped input gradient's kernel, the input of a
// batch-grouped forward convolution).
struct ConvMatch {
  std::string_view target;
  HloInstruction* lhs;
  HloInstruction* rhs;
  Window window;
  ConvolutionDimensionNumbers dnums;
  int64_t feature_group_count = 1;
  std::optional<GroupMove> regroup_lhs;
  std::optional<GroupMove> regroup_rhs;
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
// The filter gradient of a grouped convolution is batch-grouped (x's
// features, its "batch" here, split into G groups, one per group of dy's
// features): XLA's conv_rewriter.cc gives the call feature_group_count =
// batch_group_count. A feature-grouped convolution is never a filter
// gradient (frameworks write grouped ones batch-grouped; XLA the same).
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
  m.feature_group_count = conv->attrs().batch_group_count;
  m.dnums = BackwardFilterDimensionNumbers(d);  // its own inverse
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    // The gradient's high padding is the least forward high padding that
    // yields its output size.
    WindowDimension fd = ForwardOfBackwardFilterWindowDimension(
        w.dimensions[j], conv->shape().dimensions(d.output_spatial_dimensions[j]));
    fd.padding_high = ChooseHighPadding(fd.padding_low, fd.padding_high, fd.stride);
    m.window.dimensions.push_back(fd);
  }
  return m;
}

// conv(dy, reversed w) with lhs_dilation s: dx[n,c,x] = sum dy[n,o,y] w[k,c,o]
// over y*s + k - p = x.
//
// Grouped (G = feature_group_count): the gradient's kernel K holds, for
// group g, the forward filter's block with its features swapped, K[a, g*C/G
// + i] = W[i, g*O/G + a] (a: the gradient's kernel input feature, O/G of
// them; C/G forward input features i per group). The call takes the forward
// filter W, so K is regrouped: its output-feature dimension splits into
// [G, C/G] and G moves into the input-feature dimension. This is the code
// XLA's conv_rewriter.cc carries behind an early return for cuDNN ("not much
// performance improvement"); oneDNN's backward-data runs groups and
// depthwise natively, so passlab enables it.
std::optional<ConvMatch> MatchBackwardInput(HloInstruction* conv) {
  const Window& w = conv->window();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  if (conv->attrs().batch_group_count != 1 || w.dimensions.empty()) return std::nullopt;
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
  m.feature_group_count = conv->attrs().feature_group_count;
  if (m.feature_group_count > 1) {
    m.regroup_rhs = GroupMove{d.kernel_output_feature_dimension, d.kernel_input_feature_dimension,
                              m.feature_group_count};
  }
  m.dnums = BackwardDataDimensionNumbers(d);  // its own inverse
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    const WindowDimension& wd = w.dimensions[j];
    if (wd.stride != 1 || wd.window_dilation != 1) return std::nullopt;
    int64_t in = conv->shape().dimensions(d.output_spatial_dimensions[j]);
    int64_t out = conv->operand(0)->shape().dimensions(d.input_spatial_dimensions[j]);
    WindowDimension fd = ForwardOfBackwardDataWindowDimension(wd, in, out);
    fd.padding_high = ChooseHighPadding(fd.padding_low, fd.padding_high, fd.stride);
    // Negative forward padding would need a padded gradient; XLA falls back
    // to the plain convolution there too.
    if (fd.padding_low < 0 || fd.padding_high < 0) return std::nullopt;
    m.window.dimensions.push_back(fd);
  }
  return m;
}

// A batch-grouped convolution that is no filter gradient runs as a
// feature-grouped one: x's batch splits into [G, N/G] and G moves into its
// features (XLA's ConvertBatchGroupedToFeatureGroupedConvolution in
// conv_rewriter.cc).
std::optional<ConvMatch> MatchForward(HloInstruction* conv) {
  if (HasBaseDilation(conv->window())) return std::nullopt;
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  ConvMatch m{kConvForwardCallTarget, conv->mutable_operand(0), conv->mutable_operand(1), conv->window(), d};
  m.feature_group_count = conv->attrs().feature_group_count;
  int64_t batch_groups = conv->attrs().batch_group_count;
  if (batch_groups > 1) {
    m.feature_group_count = batch_groups;
    m.regroup_lhs = GroupMove{d.input_batch_dimension, d.input_feature_dimension, batch_groups};
  }
  return m;
}

// `operand` with move.groups moved as GroupMove says: a reshape splitting
// `from`, a transpose putting the groups just major to `to` (left out when
// it moves only unit dimensions) and a reshape merging them.
HloInstruction* MoveGroups(HloInstruction* operand, const GroupMove& move,
                           const std::function<HloInstruction*(std::unique_ptr<HloInstruction>)>& add) {
  const Shape& s = operand->shape();
  const int64_t rank = s.rank(), g = move.groups;
  // Split: the groups at position `from`, the rest of `from` after them.
  std::vector<int64_t> split;
  for (int64_t k = 0; k < rank; ++k) {
    if (k == move.from) split.push_back(g);
    split.push_back(k == move.from ? s.dimensions(k) / g : s.dimensions(k));
  }
  auto split_pos = [&](int64_t k) { return k < move.from ? k : k + 1; };
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < rank; ++k) {
    if (k == move.to) perm.push_back(move.from);
    perm.push_back(split_pos(k));
  }
  std::vector<int64_t> merged = s.dimensions();
  merged[move.from] /= g;
  merged[move.to] *= g;
  // Only unit dimensions change places: the element order is the same.
  std::vector<int64_t> moved;
  for (int64_t p : perm) {
    if (split[p] != 1) moved.push_back(p);
  }
  PrimitiveType t = s.element_type();
  if (std::is_sorted(moved.begin(), moved.end())) {
    return add(HloInstruction::CreateReshape(Shape::Array(t, merged), operand));
  }
  HloInstruction* r = add(HloInstruction::CreateReshape(Shape::Array(t, split), operand));
  std::vector<int64_t> transposed;
  for (int64_t p : perm) transposed.push_back(split[p]);
  HloInstruction* tr = add(HloInstruction::CreateTranspose(Shape::Array(t, transposed), r, perm));
  return add(HloInstruction::CreateReshape(Shape::Array(t, merged), tr));
}

class ConvRewriteVisitor : public HloRewriteVisitor {
 public:
  explicit ConvRewriteVisitor(ConvRewriter& pass) : pass_(pass) {}

  absl::Status HandleConvolution(HloInstruction* conv) override {
    PrimitiveType t = conv->shape().element_type();
    const HloAttributes& a = conv->attrs();
    if (!IsDnnConvType(t) || conv->operand(0)->shape().element_type() != t ||
        conv->operand(1)->shape().element_type() != t || !a.conv_dnums.has_value() ||
        (a.feature_group_count != 1 && a.batch_group_count != 1)) {
      return absl::OkStatus();
    }
    std::optional<ConvMatch> m = MatchBackwardFilter(conv);
    if (!m) m = MatchBackwardInput(conv);
    if (!m) m = MatchForward(conv);
    if (!m) return absl::OkStatus();
    auto add = [&](std::unique_ptr<HloInstruction> inst) { return AddInstruction(conv, std::move(inst)); };
    if (m->regroup_lhs) m->lhs = MoveGroups(m->lhs, *m->regroup_lhs, add);
    if (m->regroup_rhs) m->rhs = MoveGroups(m->rhs, *m->regroup_rhs, add);
    ConvBackendConfig config;
    std::unique_ptr<HloInstruction> call = CreateConvCall(conv->shape(), m->target, {m->lhs, m->rhs}, m->window,
                                                          m->dnums, m->feature_group_count, config);
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
