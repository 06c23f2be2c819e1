// Convolution library calls run as matrix products on oneDNN's matmul:
// tap-gemm (one product per output position and filter tap) and
// im2col-gemm (one product of the input's gathered patches with the
// filter). Both read operands through views as conv_runner.cc's oneDNN
// convolutions do (conv_operand_views.h); the picker times them beside
// oneDNN's own convolution kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/conv_operand_views.h"
#include "core/runtime/conv_runner_internal.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_threads.h"

namespace passlab::runtime_internal {

// The indices of each dimension of operand `op` where every element is a
// zero its producer put there: `op` (or its fusion's root) is a pad with
// zero value, under any transposes and copies, and its edge and interior
// padding are zeros whatever the padded array holds. Empty: none known.
// This is the filter XLA's conv padding legalization leaves of a strided
// layer's backward-input convolution once swapped (the output gradient
// with its stride's holes materialized as interior padding, ResNet-18's
// fusion.306: f32[8,2,2,512] -> pad 0_0_1 -> f32[3,3,512,8]), and the
// zero-padded weight it reads as the input (fusion.80).
std::vector<std::vector<bool>> StructuralZeros(const HloInstruction& op) {
  const HloInstruction* i = &op;
  if (i->opcode() == HloOpcode::kFusion) {
    const HloComputation* body = i->fused_instructions_computation();
    if (body == nullptr) return {};
    i = body->root_instruction();
  }
  std::vector<const HloInstruction*> chain;  // from the root down to the pad
  while (i->opcode() == HloOpcode::kTranspose || i->opcode() == HloOpcode::kCopy) {
    chain.push_back(i);
    i = i->operand(0);
  }
  if (i->opcode() != HloOpcode::kPad || i->operand_count() != 2 || !i->shape().IsArray()) return {};
  const HloInstruction* value = i->operand(1);
  if (value->opcode() != HloOpcode::kConstant || !value->has_literal() || !value->shape().IsArray() ||
      value->shape().rank() != 0 || value->literal().GetDouble(0) != 0) {
    return {};
  }
  const Shape& padded = i->shape();
  if (static_cast<int64_t>(i->attrs().padding_config.dimensions.size()) != padded.rank()) return {};
  std::vector<std::vector<bool>> zero(padded.rank());
  for (int64_t k = 0; k < padded.rank(); ++k) {
    const PaddingDimension& p = i->attrs().padding_config.dimensions[k];
    if (p.edge_padding_low < 0 || p.edge_padding_high < 0 || p.interior_padding < 0) return {};
    const int64_t size = padded.dimensions(k);
    zero[k].assign(size, false);
    for (int64_t idx = 0; idx < size; ++idx) {
      const int64_t rel = idx - p.edge_padding_low;
      zero[k][idx] = rel < 0 || idx >= size - p.edge_padding_high || rel % (p.interior_padding + 1) != 0;
    }
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if ((*it)->opcode() != HloOpcode::kTranspose) continue;
    std::vector<std::vector<bool>> moved((*it)->shape().rank());
    for (int64_t k = 0; k < (*it)->shape().rank(); ++k) moved[k] = zero[(*it)->dimensions(k)];
    zero = std::move(moved);
  }
  if (static_cast<int64_t>(zero.size()) != op.shape().rank()) return {};
  for (int64_t k = 0; k < op.shape().rank(); ++k) {
    if (static_cast<int64_t>(zero[k].size()) != op.shape().dimensions(k)) return {};
  }
  return zero;
}

namespace {

using dnnl::memory;

// Strides of operand `operand` of `shape`: its view's or its buffer's;
// `offset` the view's, `pad_low` / `pad_high` its zero padding (zeros
// where none).
std::vector<int64_t> OperandStrides(absl::Span<const std::optional<StridedView>> views, int64_t operand,
                                    const Shape& shape, int64_t& offset, std::vector<int64_t>& pad_low,
                                    std::vector<int64_t>& pad_high) {
  offset = 0;
  pad_low.assign(shape.rank(), 0);
  pad_high.assign(shape.rank(), 0);
  if (operand >= static_cast<int64_t>(views.size()) || !views[operand].has_value()) return PhysicalStrides(shape);
  const StridedView& v = *views[operand];
  offset = v.offset;
  if (!v.pad_low.empty()) {
    pad_low = v.pad_low;
    pad_high = v.pad_high;
  }
  return v.strides;
}

// A (rows, columns) matrix of strides (rs, cs) as oneDNN reads it: a
// dimension of one element gets the stride that makes the matrix plain
// (oneDNN checks a transposed matrix's leading dimension against the other
// even where it is never stepped: f32[4,1] of strides {1,2} creates, then
// fails to execute).
memory::desc Matrix(int64_t rows, int64_t columns, int64_t rs, int64_t cs) {
  if (columns == 1) cs = 1;
  if (rows == 1) rs = columns * cs;
  return memory::desc({rows, columns}, memory::data_type::f32, {rs, cs});
}

// What tap-gemm and im2col-gemm both take: ungrouped convolutions, f32
// operands and result in plain layouts, none empty, views of the first two
// operands only (the bytes read and written counted on the way).
absl::Status CheckMatmulConvCall(const HloInstruction& inst, const ConvCall& c,
                                 absl::Span<const std::optional<StridedView>> views, std::string_view algorithm,
                                 int64_t& bytes_read, int64_t& bytes_written) {
  auto unsupported = [&](std::string_view why) {
    return absl::UnimplementedError(StrCat(inst.name(), ": ", algorithm, " ", why));
  };
  if (c.feature_group_count != 1) return unsupported("runs no grouped convolutions");
  if (inst.operand_count() < 2) return absl::InvalidArgumentError(StrCat(inst.name(), ": a convolution of one operand"));
  for (const HloInstruction* op : inst.operands()) {
    if (op->shape().element_type() != PrimitiveType::kF32) return unsupported("takes f32 only");
    RETURN_IF_ERROR(CheckPlainLayout(op->shape()));
    bytes_read += op->shape().byte_size();
  }
  if (c.result_shape.element_type() != PrimitiveType::kF32) return unsupported("takes f32 only");
  RETURN_IF_ERROR(CheckPlainLayout(c.result_shape));
  bytes_written = c.result_shape.byte_size();
  if (c.input_shape.element_count() == 0 || c.filter_shape.element_count() == 0 ||
      c.output_shape.element_count() == 0) {
    return unsupported("takes no empty arrays");
  }
  for (size_t k = 2; k < views.size(); ++k) {
    if (views[k].has_value()) return unsupported("reads only the input and filter through views");
  }
  return absl::OkStatus();
}

// What tap-gemm's and im2col-gemm's runners share: creation (oneDNN's
// errors while preparing mean the algorithm does not take the call) and
// the start of a run.
class MatmulConvRunner : public LibraryCallRunner {
 protected:
  template <typename Runner>
  static absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateAs(
      const HloInstruction& inst, const ConvCall& c, absl::Span<const std::optional<StridedView>> views,
      ConvAlgorithm algorithm) {
    std::unique_ptr<Runner> r(new Runner());
    r->name_ = inst.name();
    r->algorithm_ = {static_cast<int64_t>(algorithm), ConvAlgorithmName(algorithm)};
    r->operand_count_ = inst.operand_count();
    try {
      if (absl::Status s = r->Prepare(inst, c, views); !s.ok()) return s;
    } catch (const dnnl::error& e) {
      return absl::UnimplementedError(StrCat(inst.name(), ": oneDNN's matmul does not take this convolution: ", e.what()));
    }
    return std::unique_ptr<LibraryCallRunner>(std::move(r));
  }

  // The library threads applied and the buffers checked.
  absl::Status StartRun(absl::Span<void* const> buffers) const {
    ApplyLibraryCallThreads();
    if (static_cast<int64_t>(buffers.size()) < operand_count_ + 1) {
      return absl::InvalidArgumentError(StrCat(name_, ": expected ", operand_count_, " operand buffers and a result"));
    }
    for (int64_t k = 0; k <= operand_count_; ++k) {
      if (buffers[k] == nullptr) return absl::InvalidArgumentError(StrCat(name_, ": null buffer ", k));
    }
    return absl::OkStatus();
  }

  int64_t operand_count_ = 0;
};

// ConvAlgorithm::kTapGemm: a forward convolution as a sum of matrix
// products, one per output position p and filter tap k that meets a real
// input element, q = p*stride + k*dilation - pad_l (in the input dilated by
// base_dilation: a multiple of it, q / base_dilation inside the input):
//   y[:, p, :] += x[:, q, :] (batch x input features) * w[k, :, :] (input x output features)
// each on one oneDNN matmul primitive (created once, with the buffers'
// strides; the positions are pointer offsets). Suits what XLA's operand swap
// leaves: few positions, a large batch and features (ResNet-18's layer4
// input gradients, mb512_ic512oc8 at 3x3 -> 2x2: 16 products of
// 512x512x8, ~1.0 ms on 2 threads against 1.2-1.5 ms for oneDNN's direct
// convolution, measured with ONEDNN_VERBOSE=1 and /tmp benches). Since the
// positions are offsets, any spatial dimension may be read reversed (a
// window reversal, or a reversed view of the input or filter) at no cost.
// Pairs that meet only zeros are skipped: window padding, base dilation's
// holes, a padded view's edges, and the structural zeros of an operand made
// by a zero pad (StructuralZeros: the strided layers' swapped
// backward-input convolutions, where 3/4 of a dense convolution's
// multiply-adds meet the stride's holes or the weight's padding; ResNet-18's
// custom-call.73: 25 products of 144). The fused forward: a side input is
// scaled into the result first (every product then accumulates, with the
// result scale), bias and activation run in one pass after the products
// (as matmul post-ops, a binary add sends oneDNN 2.6's matmul to its
// reference kernel: 120 ms against 3 for custom-call.73).
class TapGemmConvRunner : public MatmulConvRunner {
 public:
  // Products beyond this many cost more in calls than they save.
  static constexpr int64_t kMaxProducts = 256;

  static absl::StatusOr<std::unique_ptr<LibraryCallRunner>> Create(
      const HloInstruction& inst, const ConvCall& c, absl::Span<const std::optional<StridedView>> views) {
    return CreateAs<TapGemmConvRunner>(inst, c, views, ConvAlgorithm::kTapGemm);
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(StartRun(buffers));
    const float* x = static_cast<const float*>(buffers[0]);
    const float* w = static_cast<const float*>(buffers[1]);
    float* y = static_cast<float*>(buffers[operand_count_]);
    for (int64_t at : unreached_) {
      for (int64_t b = 0; b < batch_; ++b) {
        for (int64_t o = 0; o < features_; ++o) y[at + b * y_batch_stride_ + o * y_feature_stride_] = 0;
      }
    }
    if (side_operand_ >= 0) {
      // Same layout as the result (Prepare): element by element, in place
      // where they share a buffer.
      const float* side = static_cast<const float*>(buffers[side_operand_]);
      const float scale = side_scale_;
      for (int64_t e = 0; e < result_elements_; ++e) y[e] = scale * side[e];
    }
    try {
      for (const Product& p : products_) {
        x_.set_data_handle(const_cast<float*>(x + p.x));
        w_.set_data_handle(const_cast<float*>(w + p.w));
        y_.set_data_handle(y + p.y);
        (p.first ? set_ : accumulate_).execute(stream_, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DST, y_}});
      }
      stream_.wait();
    } catch (const dnnl::error& e) {
      return absl::InternalError(StrCat(name_, ": oneDNN failed: ", e.what()));
    }
    if (bias_operand_ >= 0) {
      // The fused epilogue, one pass over the result: act(y + bias).
      const float* bias = static_cast<const float*>(buffers[bias_operand_]);
      for (int64_t at : positions_) {
        for (int64_t b = 0; b < batch_; ++b) {
          float* row = y + at + b * y_batch_stride_;
          for (int64_t o = 0; o < features_; ++o) {
            float& v = row[o * y_feature_stride_];
            v = Activate(v + bias[o]);
          }
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  struct Product {
    int64_t x = 0, w = 0, y = 0;  // element offsets of the three matrices
    bool first = false;           // the first product into its position (overwrites it)
  };

  friend class MatmulConvRunner;
  TapGemmConvRunner() : stream_(Engine()) {}

  // The fused activation of one element (as oneDNN's eltwise post-ops).
  float Activate(float v) const {
    switch (activation_) {
      case ConvActivation::kNone: return v;
      case ConvActivation::kRelu: return std::max(v, 0.0f);
      case ConvActivation::kRelu6: return std::min(std::max(v, 0.0f), 6.0f);
      case ConvActivation::kElu: return v > 0 ? v : std::expm1(v);
      case ConvActivation::kTanh: return std::tanh(v);
      case ConvActivation::kSigmoid: return 1 / (1 + std::exp(-v));
    }
    return v;
  }

  absl::Status Prepare(const HloInstruction& inst, const ConvCall& c,
                       absl::Span<const std::optional<StridedView>> views) {
    const ConvolutionDimensionNumbers& d = c.dnums;
    const Shape &in = c.input_shape, &f = c.filter_shape, &out = c.output_shape;
    auto unsupported = [&](std::string_view why) {
      return absl::UnimplementedError(StrCat(name_, ": tap-gemm ", why));
    };
    const bool fused = c.kind == LibraryCallKind::kConvBiasActivationForward;
    if (c.kind != LibraryCallKind::kConvForward && !fused) return unsupported("runs only forward convolutions");
    RETURN_IF_ERROR(CheckMatmulConvCall(inst, c, views, algorithm_.name, bytes_read_, bytes_written_));
    int64_t x_offset = 0, w_offset = 0, unused = 0;
    std::vector<int64_t> x_low, x_high, w_low, w_high, y_low, y_high;
    const std::vector<int64_t> xs = OperandStrides(views, 0, in, x_offset, x_low, x_high);
    const std::vector<int64_t> ws = OperandStrides(views, 1, f, w_offset, w_low, w_high);
    const std::vector<int64_t> ys = OperandStrides({}, 0, out, unused, y_low, y_high);
    if (static_cast<int64_t>(xs.size()) != in.rank() || static_cast<int64_t>(ws.size()) != f.rank() ||
        static_cast<int64_t>(x_low.size()) != in.rank() || static_cast<int64_t>(x_high.size()) != in.rank() ||
        static_cast<int64_t>(w_low.size()) != f.rank() || static_cast<int64_t>(w_high.size()) != f.rank()) {
      return absl::InvalidArgumentError(StrCat(name_, ": a view of another rank than its operand"));
    }
    for (int64_t k : {d.input_batch_dimension, d.input_feature_dimension}) {
      if (x_low[k] != 0 || x_high[k] != 0) return unsupported("reads no padded batch or feature dimension");
    }
    for (int64_t k : {d.kernel_input_feature_dimension, d.kernel_output_feature_dimension}) {
      if (w_low[k] != 0 || w_high[k] != 0) return unsupported("reads no padded feature dimension");
    }
    const int64_t n = in.dimensions(d.input_batch_dimension), i = in.dimensions(d.input_feature_dimension);
    const int64_t o = f.dimensions(d.kernel_output_feature_dimension);
    int64_t taps = 1;
    for (int64_t k : d.kernel_spatial_dimensions) taps *= f.dimensions(k);
    flops_ = 2 * out.element_count() * i * taps;
    batch_ = n;
    features_ = o;
    y_batch_stride_ = ys[d.output_batch_dimension];
    y_feature_stride_ = ys[d.output_feature_dimension];
    const int64_t x_b = xs[d.input_batch_dimension], x_f = xs[d.input_feature_dimension];
    const int64_t w_i = ws[d.kernel_input_feature_dimension], w_o = ws[d.kernel_output_feature_dimension];
    if (x_b < 0 || x_f < 0 || w_i < 0 || w_o < 0) return unsupported("reads no reversed batch or feature dimension");
    // Zeros known from the operands' producers (in their logical indices).
    const std::vector<std::vector<bool>> x_zero = StructuralZeros(*inst.operand(0));
    const std::vector<std::vector<bool>> w_zero = StructuralZeros(*inst.operand(1));
    // Every (position, tap) pair that meets a real element, as offsets.
    const int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
    std::vector<int64_t> positions(spatial, 0);
    const int64_t position_count = out.element_count() / (n * o);
    for (int64_t pi = 0; pi < position_count; ++pi) {
      int64_t y_at = 0;
      for (int64_t s = 0; s < spatial; ++s) y_at += positions[s] * ys[d.output_spatial_dimensions[s]];
      std::vector<int64_t> tap(spatial, 0);
      bool reached = false;
      for (int64_t ti = 0; ti < taps; ++ti) {
        int64_t x_at = x_offset, w_at = w_offset;
        bool inside = true;
        for (int64_t s = 0; s < spatial && inside; ++s) {
          const WindowDimension& win = c.window.dimensions[s];
          const int64_t xd = d.input_spatial_dimensions[s], kd = d.kernel_spatial_dimensions[s];
          // In the base-dilated input, then in the operand's indices.
          const int64_t dilated = positions[s] * win.stride + tap[s] * win.window_dilation - win.padding_low;
          const int64_t q = dilated / win.base_dilation;
          const int64_t kernel = f.dimensions(kd);
          const int64_t k = win.window_reversal ? kernel - 1 - tap[s] : tap[s];
          inside = dilated >= 0 && dilated % win.base_dilation == 0 && q >= x_low[xd] &&
                   q < in.dimensions(xd) - x_high[xd] && k >= w_low[kd] && k < kernel - w_high[kd] &&
                   (x_zero.empty() || !x_zero[xd][q]) && (w_zero.empty() || !w_zero[kd][k]);
          x_at += (q - x_low[xd]) * xs[xd];
          w_at += (k - w_low[kd]) * ws[kd];
        }
        if (inside) {
          products_.push_back({x_at, w_at, y_at, false});
          reached = true;
        }
        for (int64_t s = spatial - 1; s >= 0; --s) {
          if (++tap[s] < f.dimensions(d.kernel_spatial_dimensions[s])) break;
          tap[s] = 0;
        }
      }
      if (!reached) unreached_.push_back(y_at);
      positions_.push_back(y_at);
      for (int64_t s = spatial - 1; s >= 0; --s) {
        if (++positions[s] < out.dimensions(d.output_spatial_dimensions[s])) break;
        positions[s] = 0;
      }
    }
    if (static_cast<int64_t>(products_.size()) > kMaxProducts) {
      return unsupported(StrCat("takes at most ", kMaxProducts, " products, not ", products_.size()));
    }
    if (products_.empty()) return unsupported("has no product to run (every tap meets zeros)");
    // Products reading the same input position run together (it stays in
    // cache); the first into each result position overwrites it (unless a
    // side input was put there).
    std::stable_sort(products_.begin(), products_.end(), [](const Product& a, const Product& b) { return a.x < b.x; });
    const double side_scale = fused && c.side_input_operand >= 0 ? c.config.side_input_scale : 0;
    absl::flat_hash_set<int64_t> seen;
    for (Product& p : products_) p.first = seen.insert(p.y).second && side_scale == 0;
    const memory::desc x_md = Matrix(n, i, x_b, x_f);
    const memory::desc w_md = Matrix(i, o, w_i, w_o);
    const memory::desc y_md = Matrix(n, o, y_batch_stride_, y_feature_stride_);
    dnnl::matmul::desc desc(x_md, w_md, y_md);
    auto make = [&](bool accumulate, dnnl::matmul& primitive) {
      dnnl::primitive_attr attr;
      if (c.config.conv_result_scale != 1) {
        attr.set_output_scales(0, {static_cast<float>(c.config.conv_result_scale)});
      }
      dnnl::post_ops ops;
      if (accumulate) ops.append_sum(1.0f);
      attr.set_post_ops(ops);
      dnnl::matmul::primitive_desc pd(desc, attr, Engine(), /*allow_empty=*/true);
      if (!pd) return false;
      primitive = dnnl::matmul(pd);
      return true;
    };
    if (fused) {
      // The bias (f32[o]) broadcast over the batch.
      const Shape& bias = inst.operand(c.bias_operand)->shape();
      if (bias.rank() != 1 || bias.dimensions(0) != o) {
        return absl::InvalidArgumentError(StrCat(name_, ": a bias of shape ", bias.ToString(), " for ", o, " features"));
      }
      bias_operand_ = c.bias_operand;
      activation_ = c.config.activation_mode;
      if (side_scale != 0) {
        const Shape& side = inst.operand(c.side_input_operand)->shape();
        if (side.dimensions() != c.result_shape.dimensions() ||
            PhysicalStrides(side) != PhysicalStrides(c.result_shape)) {
          return unsupported("takes a side input only in the result's layout");
        }
        side_operand_ = c.side_input_operand;
        side_scale_ = static_cast<float>(side_scale);
        result_elements_ = c.result_shape.element_count();
      }
    }
    if ((side_scale == 0 && !make(false, set_)) || !make(true, accumulate_)) {
      return unsupported("found no oneDNN matmul for these strides");
    }
    x_ = memory(x_md, Engine(), DNNL_MEMORY_NONE);
    w_ = memory(w_md, Engine(), DNNL_MEMORY_NONE);
    y_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
    return absl::OkStatus();
  }

  std::vector<Product> products_;
  std::vector<int64_t> unreached_;  // result positions no tap reaches (zeros)
  std::vector<int64_t> positions_;  // every result position's offset
  int64_t batch_ = 0, features_ = 0, y_batch_stride_ = 0, y_feature_stride_ = 0;
  // The fused forward's bias and side input operands (-1: none).
  int64_t bias_operand_ = -1, side_operand_ = -1;
  float side_scale_ = 0;
  ConvActivation activation_ = ConvActivation::kNone;
  int64_t result_elements_ = 0;
  dnnl::stream stream_;
  dnnl::matmul set_, accumulate_;
  memory x_, w_, y_;
};


// ConvAlgorithm::kIm2colGemm: a forward convolution as one matrix product,
//   y[(b, p), o] = A[(b, p), (k, i)] * w[(k, i), o],
// where row (b, p) of A holds what every filter tap k of output position p
// reads, x[b, q(p, k), :] (zeros where q falls in the window's padding,
// base dilation's holes or a view's padding), gathered into the runner's
// buffer at each call (or read in place where it is that matrix already:
// a 1x1 convolution without stride). The filter is read in place as one
// matrix: its taps equally spaced in memory and its input features one
// stride apart, taps outside features or inside (HWIO, OHWI, OIHW and views
// of them); the result's rows (batch and positions) likewise. Suits a small
// input and a large filter or result, where tap-gemm's products each
// rewrite a whole result position: ResNet-18's layer4 at 2x2 positions,
// the weight gradients XLA leaves as forward convolutions
// (mb512_ic8oc512, a 2x2 window over 2x2 -> 3x3; GpuConvRewriter's
// MatchBackwardFilter keeps a window no larger than the result a forward
// convolution): one 4608x32x512 product writes each element of the 9.4 MB
// gradient once, ~1.0 ms on 2 threads against ~3.6 ms for
// as-backward-filter's primitive, reorder and epilogue (/tmp bench and
// ONEDNN_VERBOSE). The fused forward: the bias is the matmul's bias
// (divided by the result scale, which oneDNN applies to product and bias
// alike), a side input is scaled into the result first (an eltwise
// primitive) and added back by a sum post-op, the activation is the last
// post-op. A filter-gradient convolution is the same product read the other
// way, w[(k, i), o] = A^T[(k, i), (b, p)] * dy[(b, p), o]: ResNet-50's 1x1
// filter gradients at 2x2 (mb8, 512 x 2048 features) are one 32-deep
// product over the activations and gradients in place, where oneDNN's
// filter-gradient kernels first reorder both into blocked formats. An
// input-gradient convolution is C[(b, p), (k, i)] = dy[(b, p), o] *
// w^T[o, (k, i)], each element of C then added into the input element its
// (position, tap) reads (col2im; written directly where C is the input
// gradient itself: a 1x1 convolution without stride or padding).
class Im2colGemmConvRunner : public MatmulConvRunner {
 public:
  // The gathered input's size beyond which gathering costs more than the
  // one product saves (and the runner's buffer grows too large to keep).
  static constexpr int64_t kMaxGatheredBytes = int64_t{16} << 20;
  // A (position, tap) that reads a zero (an offset can be negative).
  static constexpr int64_t kZero = std::numeric_limits<int64_t>::min();

  static absl::StatusOr<std::unique_ptr<LibraryCallRunner>> Create(
      const HloInstruction& inst, const ConvCall& c, absl::Span<const std::optional<StridedView>> views) {
    return CreateAs<Im2colGemmConvRunner>(inst, c, views, ConvAlgorithm::kIm2colGemm);
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(StartRun(buffers));
    if (backward_input_) return RunInputGradient(buffers);
    const float* x = static_cast<const float*>(buffers[0]);
    float* y = static_cast<float*>(buffers[operand_count_]);
    if (in_place_rows_) {
      const float* from = x + x_base_;
      if (side_operand_ >= 0 && from < y + result_elements_ && y < from + x_span_) {
        // The side input goes into the result before the product reads
        // the input: keep a copy of the input where the two share memory.
        gathered_.assign(from, from + x_span_);
        from = gathered_.data();
      }
      a_.set_data_handle(const_cast<float*>(from));
    } else {
      Gather(x);
      a_.set_data_handle(gathered_.data());
    }
    try {
      result_.set_data_handle(y + result_base_);
      if (side_operand_ >= 0) {
        // In place where the side input shares the result's buffer.
        side_.set_data_handle(buffers[side_operand_]);
        scale_side_.execute(stream_, {{DNNL_ARG_SRC, side_}, {DNNL_ARG_DST, result_}});
      }
      operand1_.set_data_handle(static_cast<float*>(buffers[1]) + operand1_base_);
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, operand1_}, {DNNL_ARG_DST, result_}};
      if (bias_operand_ >= 0) {
        const float* bias = static_cast<const float*>(buffers[bias_operand_]);
        for (size_t o = 0; o < bias_image_.size(); ++o) bias_image_[o] = bias[o] * bias_factor_;
        args[DNNL_ARG_BIAS] = bias_;
      }
      matmul_.execute(stream_, args);
      stream_.wait();
    } catch (const dnnl::error& e) {
      return absl::InternalError(StrCat(name_, ": oneDNN failed: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  friend class MatmulConvRunner;
  Im2colGemmConvRunner() : stream_(Engine()) {}

  // The input gradient: C = dy * w^T into the result (in place) or into
  // the buffer, then added at each (position, tap)'s input element.
  absl::Status RunInputGradient(absl::Span<void* const> buffers) {
    float* x = static_cast<float*>(buffers[operand_count_]);
    float* c = in_place_rows_ ? x + x_base_ : gathered_.data();
    try {
      a_.set_data_handle(static_cast<float*>(buffers[0]) + y_base_);
      operand1_.set_data_handle(static_cast<float*>(buffers[1]) + operand1_base_);
      result_.set_data_handle(c);
      matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, operand1_}, {DNNL_ARG_DST, result_}});
      stream_.wait();
    } catch (const dnnl::error& e) {
      return absl::InternalError(StrCat(name_, ": oneDNN failed: ", e.what()));
    }
    if (in_place_rows_) return absl::OkStatus();
    std::fill(x, x + result_elements_, 0.0f);
    const int64_t columns = taps_ * features_;
    for (int64_t r = 0; r < rows_; ++r) {
      const float* row = c + r * columns;
      float* xb = x + row_x_[r];
      const int64_t* at = tap_x_.data() + row_p_[r] * taps_;
      for (int64_t t = 0; t < taps_; ++t) {
        if (at[t] == kZero) continue;
        const float* src = row + t * a_tap_;
        float* dst = xb + at[t];
        for (int64_t k = 0; k < features_; ++k) dst[k * x_feature_] += src[k * a_feature_];
      }
    }
    return absl::OkStatus();
  }

  // Fills A (row-major, rows_ x columns) from the input.
  void Gather(const float* x) {
    const int64_t columns = taps_ * features_;
    for (int64_t r = 0; r < rows_; ++r) {
      float* row = gathered_.data() + r * columns;
      const float* xb = x + row_x_[r];
      const int64_t* at = tap_x_.data() + row_p_[r] * taps_;
      for (int64_t t = 0; t < taps_; ++t) {
        float* dst = row + t * a_tap_;
        if (at[t] == kZero) {
          for (int64_t c = 0; c < features_; ++c) dst[c * a_feature_] = 0;
        } else if (x_feature_ == 1 && a_feature_ == 1) {
          std::memcpy(dst, xb + at[t], features_ * sizeof(float));
        } else {
          const float* src = xb + at[t];
          for (int64_t c = 0; c < features_; ++c) dst[c * a_feature_] = src[c * x_feature_];
        }
      }
    }
  }

  // The offsets `offsets` (of equally strided items) sorted: their order,
  // and in `step` the spacing (1 for a single item); false when they are
  // not equally spaced.
  static bool EquallySpaced(const std::vector<int64_t>& offsets, std::vector<int64_t>& order, int64_t& step) {
    order.resize(offsets.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return offsets[a] < offsets[b]; });
    step = order.size() > 1 ? offsets[order[1]] - offsets[order[0]] : 1;
    if (step <= 0) return false;
    for (size_t k = 1; k < order.size(); ++k) {
      if (offsets[order[k]] - offsets[order[k - 1]] != step) return false;
    }
    return true;
  }

  absl::Status Prepare(const HloInstruction& inst, const ConvCall& c,
                       absl::Span<const std::optional<StridedView>> views) {
    const ConvolutionDimensionNumbers& d = c.dnums;
    const Shape &in = c.input_shape, &f = c.filter_shape, &out = c.output_shape;
    auto unsupported = [&](std::string_view why) {
      return absl::UnimplementedError(StrCat(name_, ": im2col-gemm ", why));
    };
    const bool fused = c.kind == LibraryCallKind::kConvBiasActivationForward;
    backward_filter_ = c.kind == LibraryCallKind::kConvBackwardFilter;
    backward_input_ = c.kind == LibraryCallKind::kConvBackwardInput;
    if (c.kind != LibraryCallKind::kConvForward && !fused && !backward_filter_ && !backward_input_) {
      return unsupported("runs no such convolution");
    }
    if ((backward_filter_ || backward_input_) && c.config.conv_result_scale != 1) {
      return unsupported("scales no gradient");
    }
    RETURN_IF_ERROR(CheckMatmulConvCall(inst, c, views, algorithm_.name, bytes_read_, bytes_written_));
    // Forward: the filter is operand 1 (maybe a view), the output the
    // result. Filter gradient: the output gradient is operand 1 (maybe a
    // view), the filter the result.
    int64_t x_offset = 0, w_offset = 0, y_offset = 0;
    std::vector<int64_t> x_low, x_high, w_low, w_high, y_low, y_high;
    // Input gradient: the output gradient is operand 0, the filter operand
    // 1, the input (gradient) the result.
    const std::vector<int64_t> xs = backward_input_ ? OperandStrides({}, 0, in, x_offset, x_low, x_high)
                                                    : OperandStrides(views, 0, in, x_offset, x_low, x_high);
    const std::vector<int64_t> ws = backward_filter_ ? OperandStrides({}, 0, f, w_offset, w_low, w_high)
                                                     : OperandStrides(views, 1, f, w_offset, w_low, w_high);
    const std::vector<int64_t> ys = backward_filter_  ? OperandStrides(views, 1, out, y_offset, y_low, y_high)
                                    : backward_input_ ? OperandStrides(views, 0, out, y_offset, y_low, y_high)
                                                      : OperandStrides({}, 0, out, y_offset, y_low, y_high);
    if (static_cast<int64_t>(xs.size()) != in.rank() || static_cast<int64_t>(ws.size()) != f.rank() ||
        static_cast<int64_t>(ys.size()) != out.rank() || static_cast<int64_t>(x_low.size()) != in.rank() ||
        static_cast<int64_t>(x_high.size()) != in.rank() || static_cast<int64_t>(w_low.size()) != f.rank() ||
        static_cast<int64_t>(w_high.size()) != f.rank() || static_cast<int64_t>(y_low.size()) != out.rank() ||
        static_cast<int64_t>(y_high.size()) != out.rank()) {
      return absl::InvalidArgumentError(StrCat(name_, ": a view of another rank than its operand"));
    }
    for (int64_t k = 0; k < out.rank(); ++k) {
      if (y_low[k] != 0 || y_high[k] != 0) return unsupported("reads no padded output gradient");
    }
    for (int64_t k : {d.input_batch_dimension, d.input_feature_dimension}) {
      if (x_low[k] != 0 || x_high[k] != 0) return unsupported("reads no padded batch or feature dimension");
    }
    for (int64_t k = 0; k < f.rank(); ++k) {
      if (w_low[k] != 0 || w_high[k] != 0) return unsupported("reads no padded filter");
    }
    const int64_t n = in.dimensions(d.input_batch_dimension), i = in.dimensions(d.input_feature_dimension);
    const int64_t o = f.dimensions(d.kernel_output_feature_dimension);
    const int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
    taps_ = 1;
    for (int64_t k : d.kernel_spatial_dimensions) taps_ *= f.dimensions(k);
    const int64_t positions = out.element_count() / (n * o);
    features_ = i;
    rows_ = n * positions;
    const int64_t columns = taps_ * i;
    flops_ = 2 * rows_ * columns * o;
    x_feature_ = xs[d.input_feature_dimension];
    const int64_t w_i = ws[d.kernel_input_feature_dimension], w_o = ws[d.kernel_output_feature_dimension];
    const int64_t y_f = ys[d.output_feature_dimension];
    if (w_i <= 0 || w_o <= 0 || y_f <= 0) return unsupported("reads no reversed feature dimension");

    // The filter as a (taps x input features, output features) matrix.
    std::vector<std::vector<int64_t>> tap_index;  // each tap's spatial indices
    std::vector<int64_t> tap_offset;
    {
      std::vector<int64_t> k(spatial, 0);
      for (int64_t t = 0; t < taps_; ++t) {
        int64_t at = w_offset;
        for (int64_t s = 0; s < spatial; ++s) at += k[s] * ws[d.kernel_spatial_dimensions[s]];
        tap_index.push_back(k);
        tap_offset.push_back(at);
        for (int64_t s = spatial - 1; s >= 0; --s) {
          if (++k[s] < f.dimensions(d.kernel_spatial_dimensions[s])) break;
          k[s] = 0;
        }
      }
    }
    std::vector<int64_t> tap_order;
    int64_t tap_step = 1;
    if (!EquallySpaced(tap_offset, tap_order, tap_step)) {
      return unsupported("reads a filter whose taps are not equally spaced in memory");
    }
    int64_t k_stride = 0;
    if (taps_ == 1 || tap_step == i * w_i) {
      // (tap, feature): HWIO, OHWI.
      a_tap_ = i;
      a_feature_ = 1;
      k_stride = w_i;
    } else if (w_i == taps_ * tap_step) {
      // (feature, tap): OIHW.
      a_tap_ = 1;
      a_feature_ = taps_;
      k_stride = tap_step;
    } else {
      return unsupported("reads a filter whose taps and input features are not one matrix");
    }
    w_base_ = tap_offset[tap_order[0]];
    if (w_base_ < 0) return absl::InvalidArgumentError(StrCat(name_, ": a filter view before its buffer"));
    std::vector<int64_t> rank(taps_);
    for (int64_t r = 0; r < taps_; ++r) rank[tap_order[r]] = r;

    // The result as a (batch x positions, output features) matrix.
    std::vector<int64_t> row_offset, row_batch, row_position;
    {
      std::vector<int64_t> p(spatial, 0);
      std::vector<int64_t> position_offset;
      for (int64_t pi = 0; pi < positions; ++pi) {
        int64_t at = 0;
        for (int64_t s = 0; s < spatial; ++s) at += p[s] * ys[d.output_spatial_dimensions[s]];
        position_offset.push_back(at);
        for (int64_t s = spatial - 1; s >= 0; --s) {
          if (++p[s] < out.dimensions(d.output_spatial_dimensions[s])) break;
          p[s] = 0;
        }
      }
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t pi = 0; pi < positions; ++pi) {
          row_offset.push_back(b * ys[d.output_batch_dimension] + position_offset[pi]);
          row_batch.push_back(b);
          row_position.push_back(pi);
        }
      }
    }
    std::vector<int64_t> row_order;
    int64_t row_step = 1;
    if (!EquallySpaced(row_offset, row_order, row_step)) {
      return unsupported("takes an output whose rows (batch and positions) are not equally spaced");
    }
    y_base_ = y_offset + row_offset[row_order[0]];
    if (y_base_ < 0 || (!backward_filter_ && !backward_input_ && y_base_ != 0)) {
      return absl::InvalidArgumentError(StrCat(name_, ": an output view before its buffer"));
    }
    row_x_.resize(rows_);
    row_p_.resize(rows_);
    for (int64_t r = 0; r < rows_; ++r) {
      row_x_[r] = x_offset + row_batch[row_order[r]] * xs[d.input_batch_dimension];
      row_p_[r] = row_position[row_order[r]];
    }

    // Where each (position, tap) reads the input, relative to its batch
    // element's (negative along reversed dimensions); kZero where it reads
    // a zero.
    tap_x_.assign(positions * taps_, kZero);
    {
      std::vector<int64_t> p(spatial, 0);
      for (int64_t pi = 0; pi < positions; ++pi) {
        for (int64_t t = 0; t < taps_; ++t) {
          int64_t at = 0;
          bool inside = true;
          for (int64_t s = 0; s < spatial && inside; ++s) {
            const WindowDimension& win = c.window.dimensions[s];
            const int64_t xd = d.input_spatial_dimensions[s];
            const int64_t kernel = f.dimensions(d.kernel_spatial_dimensions[s]);
            // The window position filter element k meets (flipped where the
            // window is reversed), in the base-dilated input, then in the
            // operand's indices.
            const int64_t tap = win.window_reversal ? kernel - 1 - tap_index[t][s] : tap_index[t][s];
            const int64_t dilated = p[s] * win.stride + tap * win.window_dilation - win.padding_low;
            const int64_t q = dilated / win.base_dilation;
            inside = dilated >= 0 && dilated % win.base_dilation == 0 && q >= x_low[xd] &&
                     q < in.dimensions(xd) - x_high[xd];
            at += (q - x_low[xd]) * xs[xd];
          }
          if (inside) tap_x_[pi * taps_ + rank[t]] = at;
        }
        for (int64_t s = spatial - 1; s >= 0; --s) {
          if (++p[s] < out.dimensions(d.output_spatial_dimensions[s])) break;
          p[s] = 0;
        }
      }
    }

    // One tap that reads a real element for every row, at equally spaced
    // offsets (a 1x1 convolution without stride over a dense input): the
    // input is A already, read in place.
    std::vector<int64_t> a_strides = {columns, 1};
    if (taps_ == 1 && x_feature_ > 0) {
      std::vector<int64_t> at(rows_);
      bool real = true;
      for (int64_t r = 0; r < rows_ && real; ++r) {
        real = tap_x_[row_p_[r]] != kZero;
        if (real) at[r] = row_x_[r] + tap_x_[row_p_[r]];
      }
      const int64_t step = rows_ > 1 && real ? at[1] - at[0] : 1;
      bool spaced = real && at[0] >= 0 && step > 0;
      for (int64_t r = 1; r < rows_ && spaced; ++r) spaced = at[r] - at[r - 1] == step;
      // The input gradient is written whole: its rows must be all of it.
      if (backward_input_ && rows_ * columns != in.element_count()) spaced = false;
      if (spaced) {
        in_place_rows_ = true;
        x_base_ = at[0];
        x_span_ = (rows_ - 1) * step + (columns - 1) * x_feature_ + 1;
        a_strides = {step, x_feature_};
      }
    }

    if (!in_place_rows_ && rows_ * columns > kMaxGatheredBytes / static_cast<int64_t>(sizeof(float))) {
      return unsupported(StrCat("gathers at most ", kMaxGatheredBytes >> 20, " MB, not ",
                                rows_ * columns * static_cast<int64_t>(sizeof(float)) >> 20, " MB"));
    }

    const memory::desc a_md = Matrix(rows_, columns, a_strides[0], a_strides[1]);
    const memory::desc w_md = Matrix(columns, o, k_stride, w_o);
    const memory::desc y_md = Matrix(rows_, o, row_step, y_f);
    if (backward_input_) {
      // The input gradient: C = y * w^T, added into the input's positions
      // (the result itself where C is it, else after zeroing it).
      const memory::desc wt_md = Matrix(o, columns, w_o, k_stride);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(y_md, wt_md, a_md), Engine(), /*allow_empty=*/true);
      if (!pd) return unsupported("found no oneDNN matmul for these strides");
      matmul_ = dnnl::matmul(pd);
      a_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
      operand1_ = memory(wt_md, Engine(), DNNL_MEMORY_NONE);
      result_ = memory(a_md, Engine(), DNNL_MEMORY_NONE);
      if (!in_place_rows_) gathered_.assign(rows_ * columns, 0.0f);
      operand1_base_ = w_base_;
      result_elements_ = in.element_count();
      return absl::OkStatus();
    }
    if (backward_filter_) {
      // The filter gradient: w = A^T * y, summed over the rows.
      const memory::desc at_md = Matrix(columns, rows_, a_strides[1], a_strides[0]);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(at_md, y_md, w_md), Engine(), /*allow_empty=*/true);
      if (!pd) return unsupported("found no oneDNN matmul for these strides");
      matmul_ = dnnl::matmul(pd);
      a_ = memory(at_md, Engine(), DNNL_MEMORY_NONE);
      if (!in_place_rows_) gathered_.assign(rows_ * columns, 0.0f);
      operand1_base_ = y_base_;
      result_base_ = w_base_;
      operand1_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
      result_ = memory(w_md, Engine(), DNNL_MEMORY_NONE);
      return absl::OkStatus();
    }

    // The product and the fused epilogue.
    dnnl::primitive_attr attr;
    const double scale = c.config.conv_result_scale;
    if (scale != 1) attr.set_output_scales(0, {static_cast<float>(scale)});
    dnnl::post_ops ops;
    const double side_scale = fused && c.side_input_operand >= 0 ? c.config.side_input_scale : 0;
    if (side_scale != 0) {
      const Shape& side = inst.operand(c.side_input_operand)->shape();
      if (side.dimensions() != c.result_shape.dimensions() || PhysicalStrides(side) != PhysicalStrides(c.result_shape)) {
        return unsupported("takes a side input only in the result's layout");
      }
      side_operand_ = c.side_input_operand;
      result_elements_ = c.result_shape.element_count();
      side_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
      dnnl::eltwise_forward::desc e(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_linear, y_md,
                                    static_cast<float>(side_scale), 0.0f);
      scale_side_ = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(e, Engine()));
      ops.append_sum(1.0f);
    }
    std::optional<memory::desc> bias_md;
    if (fused) {
      const Shape& bias = inst.operand(c.bias_operand)->shape();
      if (bias.rank() != 1 || bias.dimensions(0) != o) {
        return absl::InvalidArgumentError(StrCat(name_, ": a bias of shape ", bias.ToString(), " for ", o, " features"));
      }
      if (!(std::abs(scale) > 1e-30 && std::abs(scale) < 1e30)) {
        return unsupported(StrCat("divides the bias by conv_result_scale ", scale, ", out of range"));
      }
      bias_operand_ = c.bias_operand;
      bias_factor_ = static_cast<float>(1 / scale);
      bias_image_.assign(o, 0.0f);
      bias_md = memory::desc({1, o}, memory::data_type::f32, {o, 1});
      bias_ = memory(*bias_md, Engine(), bias_image_.data());
      AppendActivation(ops, c.config.activation_mode);
    }
    attr.set_post_ops(ops);
    dnnl::matmul::desc desc = bias_md ? dnnl::matmul::desc(a_md, w_md, *bias_md, y_md) : dnnl::matmul::desc(a_md, w_md, y_md);
    dnnl::matmul::primitive_desc pd(desc, attr, Engine(), /*allow_empty=*/true);
    if (!pd) return unsupported("found no oneDNN matmul for these strides");
    matmul_ = dnnl::matmul(pd);
    a_ = memory(a_md, Engine(), DNNL_MEMORY_NONE);
    if (!in_place_rows_) gathered_.assign(rows_ * columns, 0.0f);
    operand1_base_ = w_base_;
    operand1_ = memory(w_md, Engine(), DNNL_MEMORY_NONE);
    result_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
    return absl::OkStatus();
  }

  int64_t rows_ = 0, taps_ = 0, features_ = 0;
  // A's layout: tap t's feature c of a row is at t * a_tap_ + c * a_feature_.
  int64_t a_tap_ = 0, a_feature_ = 0;
  int64_t x_feature_ = 0;  // the input's feature stride
  int64_t w_base_ = 0;     // the filter matrix's first element
  int64_t y_base_ = 0;     // the output (gradient) matrix's first element
  // Filter gradient (w = A^T y) rather than forward (y = A w).
  bool backward_filter_ = false;
  // Input gradient (C = y w^T, added into the input's positions).
  bool backward_input_ = false;
  // Where the product's second operand (operand 1) and its result start.
  int64_t operand1_base_ = 0, result_base_ = 0;
  std::vector<int64_t> row_x_;  // per row of A: its batch element's input offset
  std::vector<int64_t> row_p_;  // per row of A: its output position
  std::vector<int64_t> tap_x_;  // [position * taps + tap]: input offset, kZero for a zero
  std::vector<float> gathered_;
  // A is the input itself, from element x_base_ (no gather).
  bool in_place_rows_ = false;
  int64_t x_base_ = 0, x_span_ = 0;
  int64_t result_elements_ = 0;
  int64_t bias_operand_ = -1, side_operand_ = -1;
  float bias_factor_ = 1;
  std::vector<float> bias_image_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::eltwise_forward scale_side_;
  memory a_, operand1_, result_, side_, bias_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateTapGemmConvRunner(
    const HloInstruction& inst, const ConvCall& call, absl::Span<const std::optional<StridedView>> views) {
  return TapGemmConvRunner::Create(inst, call, views);
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateIm2colGemmConvRunner(
    const HloInstruction& inst, const ConvCall& call, absl::Span<const std::optional<StridedView>> views) {
  return Im2colGemmConvRunner::Create(inst, call, views);
}

}  // namespace passlab::runtime_internal

namespace passlab {

void ZeroStructuralZeros(const HloInstruction& op, void* data) {
  const std::vector<std::vector<bool>> zero = runtime_internal::StructuralZeros(op);
  const Shape& shape = op.shape();
  if (zero.empty() || data == nullptr || !shape.IsArray() || !CheckPlainLayout(shape).ok()) return;
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  std::vector<int64_t> idx(shape.rank(), 0);
  for (int64_t e = 0; e < shape.element_count(); ++e) {
    bool is_zero = false;
    int64_t at = 0;
    for (int64_t k = 0; k < shape.rank(); ++k) {
      is_zero = is_zero || zero[k][idx[k]];
      at += idx[k] * strides[k];
    }
    if (is_zero) WriteFloat(shape.element_type(), data, at, 0);
    for (int64_t k = shape.rank() - 1; k >= 0; --k) {
      if (++idx[k] < shape.dimensions(k)) break;
      idx[k] = 0;
    }
  }
}

}  // namespace passlab
