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
  // The kernel operand to build first: rhs reversed on these dimensions (a
  // constant kernel), or rhs reshaped to this shape (a 1-D kernel).
  std::optional<std::vector<int64_t>> reverse_rhs;
  std::optional<Shape> reshape_rhs;
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

bool HasWindowReversal(const Window& w) {
  for (const WindowDimension& d : w.dimensions) {
    if (d.window_reversal) return true;
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

// The dimension a reshape inserts when it only inserts one 1-sized dimension
// (XLA's ShapeUtil::ReshapeMerelyInsertsOrDeletes1SizedDimensions: the
// shapes walked together, equal sizes paired first).
std::optional<int64_t> SingleInsertedUnitDimension(const Shape& from, const Shape& to) {
  std::vector<int64_t> inserted;
  int64_t i = 0, j = 0;
  const int64_t n = from.rank(), m = to.rank();
  while (i < n && j < m) {
    if (from.dimensions(i) == to.dimensions(j)) {
      ++i, ++j;
    } else if (from.dimensions(i) == 1) {
      return std::nullopt;  // a deleted dimension
    } else if (to.dimensions(j) == 1) {
      inserted.push_back(j++);
    } else {
      return std::nullopt;
    }
  }
  if (i < n) return std::nullopt;
  for (; j < m; ++j) {
    if (to.dimensions(j) != 1) return std::nullopt;
    inserted.push_back(j);
  }
  if (inserted.size() != 1) return std::nullopt;
  return inserted[0];
}

// A 1-D convolution written as a 2-D one: the filter is a reshape inserting
// one unit kernel spatial dimension (XLA's MaybeConv1dToConv2d).
bool IsConv1dAsConv2d(const HloInstruction* conv) {
  if (conv->window().dimensions.size() != 2) return false;
  const HloInstruction* filter = conv->operand(1);
  if (filter->opcode() != HloOpcode::kReshape) return false;
  std::optional<int64_t> dim = SingleInsertedUnitDimension(filter->operand(0)->shape(), filter->shape());
  if (!dim) return false;
  const std::vector<int64_t>& spatial = conv->attrs().conv_dnums->kernel_spatial_dimensions;
  return std::find(spatial.begin(), spatial.end(), *dim) != spatial.end();
}

// XLA's LooksLikeForwardConvolution: the result's batch is the input's, its
// features the filter's output features, and no kernel spatial dimension is
// larger than the result's (a filter gradient swaps batch and features).
bool LooksLikeForwardConvolution(const HloInstruction* conv) {
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  const Shape &lhs = conv->operand(0)->shape(), &rhs = conv->operand(1)->shape(), &out = conv->shape();
  if (lhs.dimensions(d.input_batch_dimension) != out.dimensions(d.output_batch_dimension)) return false;
  if (rhs.dimensions(d.kernel_output_feature_dimension) != out.dimensions(d.output_feature_dimension)) return false;
  for (size_t j = 0; j < d.kernel_spatial_dimensions.size(); ++j) {
    if (rhs.dimensions(d.kernel_spatial_dimensions[j]) > out.dimensions(d.output_spatial_dimensions[j])) return false;
  }
  return true;
}

// conv(x, dy) computing a filter gradient: dW[c,o,k] = sum x[n,c,y*s+k-p] dy[n,o,y].
// The filter gradient of a grouped convolution is batch-grouped (x's
// features, its "batch" here, split into G groups, one per group of dy's
// features): XLA's conv_rewriter.cc gives the call feature_group_count =
// batch_group_count. A feature-grouped convolution is never a filter
// gradient (frameworks write grouped ones batch-grouped; XLA the same).
//
// Which stride-1 convolutions are filter gradients is XLA's heuristic
// (MatchBackwardFilter): not one that looks like a forward convolution, and
// without window dilation (the forward stride) only one whose kernel is
// larger than the result in every spatial dimension (in all but the unit
// one of a 1-D convolution written as 2-D). No window reversal.
std::optional<ConvMatch> MatchBackwardFilter(HloInstruction* conv) {
  const Window& w = conv->window();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  if (conv->attrs().feature_group_count != 1 || LooksLikeForwardConvolution(conv)) return std::nullopt;
  for (const WindowDimension& wd : w.dimensions) {
    if (wd.stride != 1 || wd.base_dilation != 1 || wd.padding_low < 0 || wd.window_reversal) return std::nullopt;
  }
  int64_t small_kernel_dims = 0;
  for (size_t j = 0; j < d.kernel_spatial_dimensions.size(); ++j) {
    if (conv->operand(1)->shape().dimensions(d.kernel_spatial_dimensions[j]) <=
        conv->shape().dimensions(d.output_spatial_dimensions[j])) {
      ++small_kernel_dims;
    }
  }
  if ((d.kernel_spatial_dimensions.empty() || small_kernel_dims > 1 ||
       (small_kernel_dims == 1 && !IsConv1dAsConv2d(conv))) &&
      !HasWindowDilation(w)) {
    return std::nullopt;
  }
  ConvMatch m{kConvBackwardFilterCallTarget, conv->mutable_operand(0), conv->mutable_operand(1), {}, {}};
  m.feature_group_count = conv->attrs().batch_group_count;
  m.dnums = BackwardFilterDimensionNumbers(d);  // its own inverse
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    // The gradient's high padding is the least forward high padding that
    // yields its output size.
    WindowDimension fd = ForwardOfBackwardFilterWindowDimension(
        w.dimensions[j], conv->shape().dimensions(d.output_spatial_dimensions[j]));
    fd.padding_high = ChooseHighPadding(fd.padding_low, fd.padding_high, fd.stride);
    if (fd.padding_high < 0) return std::nullopt;  // XLA falls back to the plain convolution
    m.window.dimensions.push_back(fd);
  }
  return m;
}

// conv(dy, reversed w) with lhs_dilation s: dx[n,c,x] = sum dy[n,o,y] w[k,c,o]
// over y*s + k - p = x.
//
// XLA's MatchBackwardInput takes a convolution for an input gradient when
// its kernel is reverse(w) on exactly the kernel's spatial dimensions (or,
// for a 1-D convolution written as 2-D, reshape(reverse(w))), or when it is
// lhs-dilated and its kernel is 1x1 or a constant (then reversed here, as
// XLA's pair of reverses does); never with window reversal, stride or window
// dilation.
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
  bool reversed_filter = false;
  if (kernel->opcode() == HloOpcode::kReverse) {
    std::vector<int64_t> dims = kernel->dimensions(), spatial = d.kernel_spatial_dimensions;
    std::sort(dims.begin(), dims.end());
    std::sort(spatial.begin(), spatial.end());
    reversed_filter = dims == spatial;
  }
  // XLA takes any reverse under the reshape; here it must reverse the
  // kernel's (real) spatial dimension, else the call would compute another
  // convolution.
  bool reversed_conv1d_filter = false;
  if (IsConv1dAsConv2d(conv) && kernel->operand(0)->opcode() == HloOpcode::kReverse) {
    int64_t inserted =
        *SingleInsertedUnitDimension(kernel->operand(0)->shape(), kernel->shape());
    std::vector<int64_t> want;
    for (int64_t dim : d.kernel_spatial_dimensions) {
      if (dim != inserted) want.push_back(dim < inserted ? dim : dim - 1);
    }
    std::vector<int64_t> dims = kernel->operand(0)->dimensions();
    std::sort(dims.begin(), dims.end());
    std::sort(want.begin(), want.end());
    reversed_conv1d_filter = dims == want;
  }
  bool unit_filter = std::all_of(w.dimensions.begin(), w.dimensions.end(),
                                 [](const WindowDimension& wd) { return wd.size == 1; });
  bool constant_filter = kernel->opcode() == HloOpcode::kConstant;
  // passlab's grouped extension (below) also takes the kernel reversal
  // spelled as a window reversed in every spatial dimension.
  bool grouped_window_reversed = conv->attrs().feature_group_count > 1 && !reversed_filter &&
                                 std::all_of(w.dimensions.begin(), w.dimensions.end(),
                                             [](const WindowDimension& wd) { return wd.window_reversal; });
  if (!reversed_filter && !reversed_conv1d_filter && !grouped_window_reversed &&
      !(HasBaseDilation(w) && (constant_filter || unit_filter))) {
    return std::nullopt;
  }
  for (const WindowDimension& wd : w.dimensions) {
    if (wd.stride != 1 || wd.window_dilation != 1 || (wd.window_reversal && !grouped_window_reversed)) {
      return std::nullopt;
    }
  }
  ConvMatch m{kConvBackwardInputCallTarget, conv->mutable_operand(0), kernel, {}, {}};
  if (reversed_filter) {
    m.rhs = kernel->mutable_operand(0);  // the call reverses the kernel itself
  } else if (constant_filter) {
    m.reverse_rhs = d.kernel_spatial_dimensions;
  } else if (reversed_conv1d_filter) {
    m.rhs = kernel->mutable_operand(0)->mutable_operand(0);
    m.reshape_rhs = kernel->shape();
  }
  m.feature_group_count = conv->attrs().feature_group_count;
  if (m.feature_group_count > 1) {
    m.regroup_rhs = GroupMove{d.kernel_output_feature_dimension, d.kernel_input_feature_dimension,
                              m.feature_group_count};
  }
  m.dnums = BackwardDataDimensionNumbers(d);  // its own inverse
  for (size_t j = 0; j < w.dimensions.size(); ++j) {
    WindowDimension wd = w.dimensions[j];
    wd.window_reversal = false;
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
  const Window& w = conv->window();
  const ConvolutionDimensionNumbers& d = *conv->attrs().conv_dnums;
  // XLA's CanImplementAsGpuForwardConv: at most 3 spatial dimensions, no
  // empty operand, and cuDNN's cross-correlation or convolution (a 2-D
  // window reversed in all dimensions or none; other ranks none). Base
  // dilation is kept: ConvPaddingLegalization makes it an explicit pad.
  if (d.input_spatial_dimensions.size() > 3 || conv->operand(0)->shape().element_count() == 0 ||
      conv->operand(1)->shape().element_count() == 0) {
    return std::nullopt;
  }
  bool all_reversed = std::all_of(w.dimensions.begin(), w.dimensions.end(),
                                  [](const WindowDimension& wd) { return wd.window_reversal; });
  if (HasWindowReversal(w) && (w.dimensions.size() != 2 || !all_reversed)) return std::nullopt;
  ConvMatch m{kConvForwardCallTarget, conv->mutable_operand(0), conv->mutable_operand(1), w, d};
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
    // XLA's order (CreateCustomCallHelper): input gradient, filter
    // gradient, forward.
    std::optional<ConvMatch> m = MatchBackwardInput(conv);
    if (!m) m = MatchBackwardFilter(conv);
    if (!m) m = MatchForward(conv);
    if (!m) return absl::OkStatus();
    auto add = [&](std::unique_ptr<HloInstruction> inst) { return AddInstruction(conv, std::move(inst)); };
    PrimitiveType rhs_type = m->rhs->shape().element_type();
    if (m->reverse_rhs) {
      m->rhs = add(HloInstruction::CreateReverse(m->rhs->shape(), m->rhs, *m->reverse_rhs));
    } else if (m->reshape_rhs) {
      m->rhs = add(HloInstruction::CreateReshape(Shape::Array(rhs_type, m->reshape_rhs->dimensions()), m->rhs));
    }
    if (m->regroup_lhs) m->lhs = MoveGroups(m->lhs, *m->regroup_lhs, add);
    if (m->regroup_rhs) m->rhs = MoveGroups(m->rhs, *m->regroup_rhs, add);
    ConvBackendConfig config;
    std::unique_ptr<HloInstruction> call = CreateConvCall(conv->shape(), m->target, {m->lhs, m->rhs}, m->window,
                                                          m->dnums, m->feature_group_count, config,
                                                          conv->attrs().precision_config);
    call->set_metadata(conv->metadata());
    HloInstruction* added = AddInstruction(conv, std::move(call));
    pass_.BumpCounter(std::string(m->target));
    return ReplaceWithNewInstruction(conv, HloInstruction::CreateGetTupleElement(added, 0));
  }

 private:
  ConvRewriter& pass_;
};

}  // namespace

bool ConvRewriter::ConvIsLowerable(HloInstruction* conv) {
  if (conv->opcode() != HloOpcode::kConvolution || !conv->attrs().conv_dnums.has_value()) return false;
  return MatchForward(conv).has_value() || MatchBackwardFilter(conv).has_value() ||
         MatchBackwardInput(conv).has_value();
}

absl::StatusOr<bool> ConvRewriter::RunImpl(HloModule& module, PassRunContext*) {
  ConvRewriteVisitor visitor(*this);
  return visitor.RunOnModule(module);
}

}  // namespace passlab
