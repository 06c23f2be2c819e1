#include "models/autodiff.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/conv_dimensions.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// A rule gets the instruction, the gradient of its (array) result, which
// operands need a gradient, and fills one contribution per operand (nullptr
// for none). For tuple-shaped results `g` is the gradient of element 0 and
// `tuple_g` holds all elements' gradients.
struct RuleArgs {
  HloBuilder& b;
  Op inst;
  Op g;
  const std::vector<Op>& tuple_g;
  const std::vector<bool>& need;
  std::vector<Op>& out;
};
using Rule = std::function<absl::Status(RuleArgs&)>;

absl::Status Unsupported(const HloInstruction* inst, std::string_view why) {
  return absl::UnimplementedError(StrCat("autodiff: instruction '", inst->name(), "' (",
                                         HloOpcodeString(inst->opcode()), "): ", why));
}

Op Zeros(HloBuilder& b, const Shape& shape) { return b.Full(shape, 0); }

const std::vector<int64_t>& Dims(Op x) { return x->shape().dimensions(); }

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

// Free (non-batch, non-contracting) dimensions of a dot operand, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      free.push_back(d);
    }
  }
  return free;
}

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) - v.begin();
}

// Splits axis `src` of x into (groups, size / groups), moves the `groups`
// part just in front of axis `dst` and merges it there (groups major): dims
// src and dst become size(src) / groups and groups * size(dst), the rank and
// the other axes stay. JAX's _reshape_axis_out_of + _reshape_axis_into, as
// its convolution transpose rules use them for grouped kernels and outputs
// (jax/_src/lax/convolution.py).
Op MoveAxisGroupsInto(HloBuilder& b, Op x, int64_t src, int64_t groups, int64_t dst) {
  if (x == nullptr) return nullptr;
  std::vector<int64_t> dims = Dims(x);
  std::vector<int64_t> split = dims;
  split[src] = dims[src] / groups;
  split.insert(split.begin() + src, groups);
  int64_t dst_in_split = dst < src ? dst : dst + 1;
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < static_cast<int64_t>(split.size()); ++a) {
    if (a == src) continue;
    if (a == dst_in_split) perm.push_back(src);
    perm.push_back(a);
  }
  dims[src] /= groups;
  dims[dst] *= groups;
  return b.Reshape(b.Transpose(b.Reshape(x, split), perm), dims);
}

// The kind of a reducer computation: add or max of its two parameters.
std::optional<ReducerKind> ReducerKindOf(const HloComputation* c) {
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = c->root_instruction();
  if (root->operand_count() != 2 || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter) {
    return std::nullopt;
  }
  if (root->opcode() == HloOpcode::kAdd) return ReducerKind::kAdd;
  if (root->opcode() == HloOpcode::kMaximum) return ReducerKind::kMax;
  return std::nullopt;
}

const std::map<HloOpcode, Rule>& Rules() {
  static const auto* rules = new std::map<HloOpcode, Rule>{
      // d(a + b) = da + db
      {HloOpcode::kAdd, [](RuleArgs& r) {
         r.out = {r.g, r.g};
         return absl::OkStatus();
       }},
      // d(a - b) = da - db
      {HloOpcode::kSubtract, [](RuleArgs& r) {
         r.out = {r.g, r.need[1] ? r.b.Neg(r.g) : nullptr};
         return absl::OkStatus();
       }},
      // d(a * b) = b da + a db
      {HloOpcode::kMultiply, [](RuleArgs& r) {
         Op a = r.inst->mutable_operand(0), c = r.inst->mutable_operand(1);
         r.out = {r.need[0] ? r.b.Mul(r.g, c) : nullptr, r.need[1] ? r.b.Mul(r.g, a) : nullptr};
         return absl::OkStatus();
       }},
      // d(a / b) = da / b - (a / b) db / b
      {HloOpcode::kDivide, [](RuleArgs& r) {
         Op c = r.inst->mutable_operand(1);
         r.out = {r.need[0] ? r.b.Div(r.g, c) : nullptr,
                  r.need[1] ? r.b.Neg(r.b.Div(r.b.Mul(r.g, r.inst), c)) : nullptr};
         return absl::OkStatus();
       }},
      // d(-a) = -da
      {HloOpcode::kNegate, [](RuleArgs& r) {
         r.out = {r.b.Neg(r.g)};
         return absl::OkStatus();
       }},
      // d exp(a) = exp(a) da
      {HloOpcode::kExp, [](RuleArgs& r) {
         r.out = {r.b.Mul(r.g, r.inst)};
         return absl::OkStatus();
       }},
      // d log(a) = da / a
      {HloOpcode::kLog, [](RuleArgs& r) {
         r.out = {r.b.Div(r.g, r.inst->mutable_operand(0))};
         return absl::OkStatus();
       }},
      // d tanh(a) = (1 - tanh(a)^2) da
      {HloOpcode::kTanh, [](RuleArgs& r) {
         r.out = {r.b.Sub(r.g, r.b.Mul(r.g, r.b.Mul(r.inst, r.inst)))};
         return absl::OkStatus();
       }},
      // d sqrt(a) = da / (2 sqrt(a))
      {HloOpcode::kSqrt, [](RuleArgs& r) {
         r.out = {r.b.Div(r.b.MulScalar(r.g, 0.5), r.inst)};
         return absl::OkStatus();
       }},
      // d rsqrt(a) = -rsqrt(a)^3 da / 2
      {HloOpcode::kRsqrt, [](RuleArgs& r) {
         r.out = {r.b.MulScalar(r.b.Mul(r.g, r.b.Mul(r.inst, r.b.Mul(r.inst, r.inst))), -0.5)};
         return absl::OkStatus();
       }},
      // d max(a, b) = da where a >= b, db elsewhere
      {HloOpcode::kMaximum, [](RuleArgs& r) {
         Op a = r.inst->mutable_operand(0), c = r.inst->mutable_operand(1);
         Op mask = r.b.Compare(a, c, ComparisonDirection::kGe);
         Op zero = Zeros(r.b, r.g->shape());
         r.out = {r.need[0] ? r.b.Select(mask, r.g, zero) : nullptr,
                  r.need[1] ? r.b.Select(mask, zero, r.g) : nullptr};
         return absl::OkStatus();
       }},
      // d min(a, b) = da where a <= b, db elsewhere
      {HloOpcode::kMinimum, [](RuleArgs& r) {
         Op a = r.inst->mutable_operand(0), c = r.inst->mutable_operand(1);
         Op mask = r.b.Compare(a, c, ComparisonDirection::kLe);
         Op zero = Zeros(r.b, r.g->shape());
         r.out = {r.need[0] ? r.b.Select(mask, r.g, zero) : nullptr,
                  r.need[1] ? r.b.Select(mask, zero, r.g) : nullptr};
         return absl::OkStatus();
       }},
      // d select(p, a, b) = select(p, da, 0) + select(p, 0, db)
      {HloOpcode::kSelect, [](RuleArgs& r) {
         Op p = r.inst->mutable_operand(0);
         Op zero = Zeros(r.b, r.g->shape());
         r.out = {nullptr, r.need[1] ? r.b.Select(p, r.g, zero) : nullptr,
                  r.need[2] ? r.b.Select(p, zero, r.g) : nullptr};
         return absl::OkStatus();
       }},
      // d convert(a) = convert(da) back to a's type
      {HloOpcode::kConvert, [](RuleArgs& r) {
         r.out = {r.b.Convert(r.g, r.inst->operand(0)->shape().element_type())};
         return absl::OkStatus();
       }},
      {HloOpcode::kCopy, [](RuleArgs& r) {
         r.out = {r.g};
         return absl::OkStatus();
       }},
      // broadcast: sum the gradient over the broadcast dimensions
      {HloOpcode::kBroadcast, [](RuleArgs& r) {
         const std::vector<int64_t>& kept = r.inst->dimensions();
         std::vector<int64_t> reduced;
         for (int64_t d = 0; d < r.inst->shape().rank(); ++d) {
           if (std::find(kept.begin(), kept.end(), d) == kept.end()) reduced.push_back(d);
         }
         Op sum = reduced.empty() ? r.g : r.b.ReduceSum(r.g, reduced);
         std::vector<int64_t> sorted = kept;
         std::sort(sorted.begin(), sorted.end());
         std::vector<int64_t> perm;
         for (int64_t d : kept) perm.push_back(IndexOf(sorted, d));
         r.out = {r.b.Transpose(sum, perm)};
         return absl::OkStatus();
       }},
      {HloOpcode::kReshape, [](RuleArgs& r) {
         r.out = {r.b.Reshape(r.g, Dims(r.inst->mutable_operand(0)))};
         return absl::OkStatus();
       }},
      {HloOpcode::kTranspose, [](RuleArgs& r) {
         r.out = {r.b.Transpose(r.g, InversePermutation(r.inst->dimensions()))};
         return absl::OkStatus();
       }},
      {HloOpcode::kReverse, [](RuleArgs& r) {
         r.out = {r.b.Reverse(r.g, r.inst->dimensions())};
         return absl::OkStatus();
       }},
      // slice: pad the gradient back with zeros (strides become interior padding)
      {HloOpcode::kSlice, [](RuleArgs& r) {
         const Shape& in = r.inst->operand(0)->shape();
         PaddingConfig config;
         for (int64_t d = 0; d < in.rank(); ++d) {
           const SliceDimension& s = r.inst->attrs().slice[d];
           int64_t n = r.inst->shape().dimensions(d);
           int64_t last = n == 0 ? s.start : s.start + (n - 1) * s.stride + 1;
           config.dimensions.push_back({s.start, in.dimensions(d) - last, n == 0 ? 0 : s.stride - 1});
         }
         r.out = {r.b.Pad(r.g, r.b.ConstantScalar(r.g->shape().element_type(), 0), config)};
         return absl::OkStatus();
       }},
      // pad: slice the operand's elements out of the gradient
      {HloOpcode::kPad, [](RuleArgs& r) {
         if (r.need[1]) return Unsupported(r.inst, "gradient with respect to the padding value");
         const Shape& in = r.inst->operand(0)->shape();
         std::vector<int64_t> starts, limits, strides;
         for (int64_t d = 0; d < in.rank(); ++d) {
           const PaddingDimension& p = r.inst->attrs().padding_config.dimensions[d];
           if (p.edge_padding_low < 0 || p.edge_padding_high < 0) {
             return Unsupported(r.inst, "negative padding");
           }
           starts.push_back(p.edge_padding_low);
           limits.push_back(p.edge_padding_low + (in.dimensions(d) - 1) * (p.interior_padding + 1) + 1);
           strides.push_back(p.interior_padding + 1);
         }
         r.out = {r.b.Slice(r.g, starts, limits, strides), nullptr};
         return absl::OkStatus();
       }},
      // concatenate: each operand gets its slice of the gradient
      {HloOpcode::kConcatenate, [](RuleArgs& r) {
         int64_t dim = r.inst->concatenate_dimension();
         int64_t offset = 0;
         r.out.assign(r.inst->operand_count(), nullptr);
         for (int64_t i = 0; i < r.inst->operand_count(); ++i) {
           const Shape& s = r.inst->operand(i)->shape();
           if (r.need[i]) {
             std::vector<int64_t> starts(s.rank(), 0), limits = r.g->shape().dimensions();
             starts[dim] = offset;
             limits[dim] = offset + s.dimensions(dim);
             r.out[i] = r.b.Slice(r.g, starts, limits);
           }
           offset += s.dimensions(dim);
         }
         return absl::OkStatus();
       }},
      // dot: d lhs = g . rhs over rhs's free dims; d rhs = lhs . g over lhs's free dims
      {HloOpcode::kDot, [](RuleArgs& r) {
         if (r.inst->operand_count() != 2) return Unsupported(r.inst, "sparse dot");
         Op lhs = r.inst->mutable_operand(0), rhs = r.inst->mutable_operand(1);
         const DotDimensionNumbers& d = r.inst->attrs().dot_dnums;
         int64_t nb = d.lhs_batch_dimensions.size();
         std::vector<int64_t> lf = FreeDims(lhs->shape().rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
         std::vector<int64_t> rf = FreeDims(rhs->shape().rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
         int64_t nlf = lf.size();
         std::vector<int64_t> g_batch;
         for (int64_t i = 0; i < nb; ++i) g_batch.push_back(i);
         r.out = {nullptr, nullptr};
         if (r.need[0]) {
           DotDimensionNumbers gd;
           gd.lhs_batch_dimensions = g_batch;
           gd.rhs_batch_dimensions = d.rhs_batch_dimensions;
           for (size_t j = 0; j < rf.size(); ++j) {
             gd.lhs_contracting_dimensions.push_back(nb + nlf + j);
             gd.rhs_contracting_dimensions.push_back(rf[j]);
           }
           Op prod = r.b.Dot(r.g, rhs, gd, lhs->shape().element_type());
           // Result dims: batch, lhs free, then rhs's contracting dims in increasing order.
           std::vector<int64_t> result_to_lhs = d.lhs_batch_dimensions;
           result_to_lhs.insert(result_to_lhs.end(), lf.begin(), lf.end());
           std::vector<int64_t> rc = d.rhs_contracting_dimensions;
           std::sort(rc.begin(), rc.end());
           for (int64_t dim : rc) result_to_lhs.push_back(d.lhs_contracting_dimensions[IndexOf(d.rhs_contracting_dimensions, dim)]);
           r.out[0] = r.b.Transpose(prod, InversePermutation(result_to_lhs));
         }
         if (r.need[1]) {
           DotDimensionNumbers gd;
           gd.lhs_batch_dimensions = d.lhs_batch_dimensions;
           gd.rhs_batch_dimensions = g_batch;
           for (int64_t j = 0; j < nlf; ++j) {
             gd.lhs_contracting_dimensions.push_back(lf[j]);
             gd.rhs_contracting_dimensions.push_back(nb + j);
           }
           Op prod = r.b.Dot(lhs, r.g, gd, rhs->shape().element_type());
           // Result dims: batch, lhs's contracting dims in increasing order, then rhs free.
           std::vector<int64_t> result_to_rhs = d.rhs_batch_dimensions;
           std::vector<int64_t> lc = d.lhs_contracting_dimensions;
           std::sort(lc.begin(), lc.end());
           for (int64_t dim : lc) result_to_rhs.push_back(d.rhs_contracting_dimensions[IndexOf(d.lhs_contracting_dimensions, dim)]);
           result_to_rhs.insert(result_to_rhs.end(), rf.begin(), rf.end());
           r.out[1] = r.b.Transpose(prod, InversePermutation(result_to_rhs));
         }
         return absl::OkStatus();
       }},
      // convolution: backward-data and backward-filter convolutions
      {HloOpcode::kConvolution, [](RuleArgs& r) {
         const HloAttributes& a = r.inst->attrs();
         const int64_t feature_groups = a.feature_group_count, batch_groups = a.batch_group_count;
         if (feature_groups > 1 && batch_groups > 1) {
           return Unsupported(r.inst, "both feature_group_count and batch_group_count above 1");
         }
         const ConvolutionDimensionNumbers& d = *a.conv_dnums;
         const Window& w = *a.window;
         for (const WindowDimension& wd : w.dimensions) {
           if (wd.base_dilation != 1 || wd.window_dilation != 1 || wd.window_reversal) {
             return Unsupported(r.inst, "dilated or reversed convolution windows");
           }
         }
         Op in = r.inst->mutable_operand(0), kernel = r.inst->mutable_operand(1);
         r.out = {nullptr, nullptr};
         if (r.need[0]) {
           // d in[b,i,x] = sum g[b,o,y] w[k,i,o] with x = y*s + k - pad_low:
           // the output gradient, dilated by the stride, convolved with the
           // reversed kernel (in and out features swapped). The reversal is
           // a reverse op on the kernel's spatial dimensions, as JAX's
           // _conv_general_dilated_transpose_lhs writes it (rev(rhs)): the
           // form XLA's conv_rewriter.cc matches as a backward input; it
           // takes no window reversal for one.
           ConvolutionDimensionNumbers bd = BackwardDataDimensionNumbers(d);
           Window bw = BackwardDataWindow(w, d, in->shape(), r.inst->shape());
           for (WindowDimension& wd : bw.dimensions) wd.window_reversal = false;
           // Grouped (G feature or batch groups): the kernel's output
           // features split as (G, O/G) and G moves into its input features
           // (I -> G*I, group major), so the transposed convolution is
           // grouped G ways over the output gradient's O features. With
           // batch groups its G*C output features then move back into the
           // batch: batch index = group * N_out + n. JAX's
           // _conv_general_dilated_transpose_lhs.
           int64_t groups = std::max(feature_groups, batch_groups);
           Op k = groups == 1 ? kernel
                              : MoveAxisGroupsInto(r.b, kernel, d.kernel_output_feature_dimension, groups,
                                                   d.kernel_input_feature_dimension);
           k = r.b.Reverse(k, d.kernel_spatial_dimensions);
           Op dx = r.b.Convolution(r.g, k, bw, bd, /*feature_group_count=*/groups);
           if (batch_groups > 1) {
             dx = MoveAxisGroupsInto(r.b, dx, d.input_feature_dimension, batch_groups, d.input_batch_dimension);
           }
           r.out[0] = dx;
         }
         if (r.need[1]) {
           // d w[k,i,o] = sum in[b,i,y*s + k - pad_low] g[b,o,y]: batch and
           // feature swap roles, the output gradient is the (dilated) kernel.
           ConvolutionDimensionNumbers fd = BackwardFilterDimensionNumbers(d);
           Window fw = BackwardFilterWindow(w, d, in->shape(), r.inst->shape());
           // Grouping swaps kind, as in JAX's
           // _conv_general_dilated_transpose_rhs: G feature groups of the
           // forward convolution are G batch groups here (the input's
           // features, now its batch, split G ways against the output
           // gradient's O features; the form XLA's
           // hlo/transforms/simplifiers/convolution_group_converter.cc
           // rewrites for backends without batch groups), and batch groups
           // become feature groups.
           r.out[1] = r.b.Convolution(in, r.g, fw, fd, /*feature_group_count=*/batch_groups,
                                      /*batch_group_count=*/feature_groups);
         }
         return absl::OkStatus();
       }},
      // reduce: add broadcasts the gradient back; max routes it to the maxima
      {HloOpcode::kReduce, [](RuleArgs& r) {
         if (r.inst->operand_count() != 2) return Unsupported(r.inst, "variadic reduce");
         if (r.need[1]) return Unsupported(r.inst, "gradient with respect to the init value");
         std::optional<ReducerKind> kind = ReducerKindOf(r.inst->to_apply());
         if (!kind) return Unsupported(r.inst, "reducer is neither add nor max");
         Op x = r.inst->mutable_operand(0);
         std::vector<int64_t> kept;
         for (int64_t dim = 0; dim < x->shape().rank(); ++dim) {
           if (std::find(r.inst->dimensions().begin(), r.inst->dimensions().end(), dim) == r.inst->dimensions().end()) {
             kept.push_back(dim);
           }
         }
         Op spread = r.b.Broadcast(r.g, Dims(x), kept);
         if (*kind == ReducerKind::kAdd) {
           r.out = {spread, nullptr};
           return absl::OkStatus();
         }
         Op is_max = r.b.Compare(x, r.b.Broadcast(r.inst, Dims(x), kept), ComparisonDirection::kEq);
         r.out = {r.b.Select(is_max, spread, Zeros(r.b, x->shape())), nullptr};
         return absl::OkStatus();
       }},
      // max pooling: select-and-scatter of the gradient onto the window maxima
      {HloOpcode::kReduceWindow, [](RuleArgs& r) {
         if (r.inst->operand_count() != 2) return Unsupported(r.inst, "variadic reduce-window");
         if (r.need[1]) return Unsupported(r.inst, "gradient with respect to the init value");
         if (ReducerKindOf(r.inst->to_apply()) != ReducerKind::kMax) {
           return Unsupported(r.inst, "only max pooling (a max reducer) has a rule");
         }
         for (const WindowDimension& wd : r.inst->window().dimensions) {
           if (wd.base_dilation != 1 || wd.window_dilation != 1) return Unsupported(r.inst, "dilated pooling windows");
         }
         Op x = r.inst->mutable_operand(0);
         r.out = {r.b.SelectAndScatter(x, r.g, r.b.ConstantScalar(x->shape().element_type(), 0), r.inst->window()),
                  nullptr};
         return absl::OkStatus();
       }},
      // batch-norm-training: batch-norm-grad with the batch statistics
      {HloOpcode::kBatchNormTraining, [](RuleArgs& r) {
         if (r.tuple_g.size() > 1 && (r.tuple_g[1] != nullptr || r.tuple_g[2] != nullptr)) {
           return Unsupported(r.inst, "gradient through the batch mean or variance outputs");
         }
         if (r.g == nullptr) {
           r.out = {nullptr, nullptr, nullptr};
           return absl::OkStatus();
         }
         const HloAttributes& a = r.inst->attrs();
         Op mean = r.b.GetTupleElement(r.inst, 1);
         Op var = r.b.GetTupleElement(r.inst, 2);
         Op grad = r.b.BatchNormGrad(r.inst->mutable_operand(0), r.inst->mutable_operand(1), mean, var, r.g,
                                     a.epsilon, a.feature_index);
         r.out = {r.need[0] ? r.b.GetTupleElement(grad, 0) : nullptr,
                  r.need[1] ? r.b.GetTupleElement(grad, 1) : nullptr,
                  r.need[2] ? r.b.GetTupleElement(grad, 2) : nullptr};
         return absl::OkStatus();
       }},
      // gather: scatter-add the gradient into zeros at the gathered positions
      {HloOpcode::kGather, [](RuleArgs& r) {
         const GatherDimensionNumbers& gd = r.inst->attrs().gather_dnums;
         if (!gd.operand_batching_dims.empty()) return Unsupported(r.inst, "gather with batching dims");
         Op operand = r.inst->mutable_operand(0);
         ScatterDimensionNumbers sd;
         sd.update_window_dims = gd.offset_dims;
         sd.inserted_window_dims = gd.collapsed_slice_dims;
         sd.scatter_dims_to_operand_dims = gd.start_index_map;
         sd.index_vector_dim = gd.index_vector_dim;
         r.out = {r.b.ScatterAdd(Zeros(r.b, operand->shape()), r.inst->mutable_operand(1), r.g, sd), nullptr};
         return absl::OkStatus();
       }},
  };
  return *rules;
}

bool IsDifferentiable(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      if (IsDifferentiable(s)) return true;
    }
    return false;
  }
  return shape.IsArray() && IsFloatingPointType(shape.element_type());
}

}  // namespace

absl::StatusOr<std::vector<Op>> Gradients(HloBuilder& b, Op y, const std::vector<Op>& xs, Op seed) {
  if (!b.ok()) return b.status();
  if (y == nullptr) return absl::InvalidArgumentError("autodiff: output is null");
  if (!y->shape().IsArray() || !IsFloatingPointType(y->shape().element_type())) {
    return absl::InvalidArgumentError(
        StrCat("autodiff: output '", y->name(), "' must be a floating-point array, got ", y->shape().ToString(false)));
  }
  if (seed == nullptr && !y->shape().IsScalar()) {
    return absl::InvalidArgumentError(
        StrCat("autodiff: output '", y->name(), "' is not a scalar (", y->shape().ToString(false), "); give a seed"));
  }
  if (seed != nullptr && !seed->shape().Compatible(y->shape())) {
    return absl::InvalidArgumentError(StrCat("autodiff: seed shape ", seed->shape().ToString(false),
                                             " differs from the output's ", y->shape().ToString(false)));
  }
  // Snapshot the graph before any gradient op is added.
  std::vector<HloInstruction*> order = b.computation()->MakeInstructionPostOrder();
  absl::flat_hash_set<const HloInstruction*> depends_on_x(xs.begin(), xs.end());
  for (HloInstruction* inst : order) {
    if (depends_on_x.contains(inst) || !IsDifferentiable(inst->shape())) continue;
    for (const HloInstruction* o : inst->operands()) {
      if (depends_on_x.contains(o)) {
        depends_on_x.insert(inst);
        break;
      }
    }
  }
  absl::flat_hash_map<const HloInstruction*, Op> adjoint;
  absl::flat_hash_map<const HloInstruction*, std::vector<Op>> tuple_adjoint;
  auto accumulate = [&](Op target, Op g) {
    Op& slot = adjoint[target];
    slot = slot == nullptr ? g : b.Add(slot, g);
  };
  adjoint[y] = seed != nullptr ? seed : b.ConstantScalar(y->shape().element_type(), 1);

  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* inst = *it;
    if (!depends_on_x.contains(inst)) continue;
    Op g = nullptr;
    std::vector<Op> tuple_g;
    if (inst->shape().IsTuple()) {
      auto t = tuple_adjoint.find(inst);
      if (t == tuple_adjoint.end()) continue;
      tuple_g = t->second;
      g = tuple_g[0];
    } else {
      auto a = adjoint.find(inst);
      if (a == adjoint.end()) continue;
      g = a->second;
    }
    HloBuilder::ScopedName scope(b, StrCat("gradients/", inst->metadata().op_name.empty() ? inst->name()
                                                                                        : inst->metadata().op_name));
    HloBuilder::ScopedOpType type(b, StrCat(inst->metadata().op_type.empty() ? HloOpcodeString(inst->opcode())
                                                                            : inst->metadata().op_type,
                                            "Grad"));
    if (inst->opcode() == HloOpcode::kParameter || inst->opcode() == HloOpcode::kConstant) continue;
    if (inst->opcode() == HloOpcode::kGetTupleElement) {
      Op t = inst->mutable_operand(0);
      std::vector<Op>& slots = tuple_adjoint[t];
      slots.resize(t->shape().tuple_shapes_size(), nullptr);
      Op& slot = slots[inst->tuple_index()];
      slot = slot == nullptr ? g : b.Add(slot, g);
      continue;
    }
    if (inst->opcode() == HloOpcode::kTuple) {
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        if (depends_on_x.contains(inst->operand(i)) && tuple_g[i] != nullptr) accumulate(inst->mutable_operand(i), tuple_g[i]);
      }
      continue;
    }
    auto rule = Rules().find(inst->opcode());
    if (rule == Rules().end()) return Unsupported(inst, "no gradient rule for this opcode");
    std::vector<bool> need;
    for (const HloInstruction* o : inst->operands()) need.push_back(depends_on_x.contains(o));
    std::vector<Op> out;
    RuleArgs args{b, inst, g, tuple_g, need, out};
    RETURN_IF_ERROR(rule->second(args));
    if (!b.ok()) return b.status();
    for (int64_t i = 0; i < inst->operand_count() && i < static_cast<int64_t>(out.size()); ++i) {
      if (need[i] && out[i] != nullptr) accumulate(inst->mutable_operand(i), out[i]);
    }
  }
  std::vector<Op> grads;
  for (Op x : xs) {
    auto a = adjoint.find(x);
    grads.push_back(a != adjoint.end() ? a->second : Zeros(b, x->shape()));
  }
  if (!b.ok()) return b.status();
  return grads;
}

absl::StatusOr<std::unique_ptr<HloModule>> BuildGradientModule(const HloModule& loss_module) {
  std::unique_ptr<HloModule> module = loss_module.Clone();
  HloComputation* entry = module->entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("autodiff: module has no entry computation");
  Op loss = entry->root_instruction();
  std::vector<Op> params;
  for (Op p : entry->parameter_instructions()) {
    if (p->shape().IsArray() && IsFloatingPointType(p->shape().element_type())) params.push_back(p);
  }
  HloBuilder b(entry);
  ASSIGN_OR_RETURN(std::vector<Op> grads, Gradients(b, loss, params));
  std::vector<Op> outputs = {loss};
  outputs.insert(outputs.end(), grads.begin(), grads.end());
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(outputs));
  return module;
}

}  // namespace passlab
