// `__dnn$conv*` on oneDNN 2.6 (v2 API: op::desc + primitive_desc(desc,
// engine)). Buffers of any dim_labels and layout are described to oneDNN by
// strides (no transposes on our side); the primitive picks its own formats
// (format_tag::any) and reorders move data in and out, except that a
// depthwise convolution runs on the activations' own layout where an
// optimized kernel takes it. bf16/f16 buffers are converted through f32
// temporaries. The fused forward computes
// act(conv_result_scale * conv + side_input_scale * side_input + bias) as an
// output scale plus sum, binary-add and eltwise post-ops. Algorithm
// as-backward-filter runs a forward convolution on the filter-gradient
// primitive (PrepareAsBackwardFilter says how and why). Operands may be read
// through strided views of other buffers (conv_operand_views.h, where the
// reversals are explained). The algorithms that run a convolution as
// matrix products (tap-gemm, im2col-gemm) are in conv_gemm_runners.cc.
#include "core/runtime/conv_runner_internal.h"
#include "core/runtime/library_call_internal.h"
#include "core/runtime/library_threads.h"

#include <algorithm>
#include <cmath>
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
#include "core/runtime/host_buffer.h"

namespace passlab::runtime_internal {

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

void AppendActivation(dnnl::post_ops& ops, ConvActivation mode) {
  switch (mode) {
    case ConvActivation::kNone: break;
    case ConvActivation::kRelu: ops.append_eltwise(1, dnnl::algorithm::eltwise_relu, 0, 0); break;
    case ConvActivation::kRelu6: ops.append_eltwise(1, dnnl::algorithm::eltwise_clip, 0, 6); break;
    case ConvActivation::kElu: ops.append_eltwise(1, dnnl::algorithm::eltwise_elu, 1, 0); break;
    case ConvActivation::kTanh: ops.append_eltwise(1, dnnl::algorithm::eltwise_tanh, 0, 0); break;
    case ConvActivation::kSigmoid: ops.append_eltwise(1, dnnl::algorithm::eltwise_logistic, 0, 0); break;
  }
}

namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::algorithm DnnAlgorithm(ConvAlgorithm a) {
  switch (a) {
    case ConvAlgorithm::kDirect: return dnnl::algorithm::convolution_direct;
    case ConvAlgorithm::kWinograd: return dnnl::algorithm::convolution_winograd;
    case ConvAlgorithm::kAuto:
    case ConvAlgorithm::kAsBackwardFilter:
    case ConvAlgorithm::kTapGemm:
    case ConvAlgorithm::kReference: return dnnl::algorithm::convolution_auto;
  }
  return dnnl::algorithm::convolution_auto;
}

bool DnnType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

// One tensor argument: the caller's buffer (converted to f32 when needed),
// described by strides, and the primitive's own copy when its format differs.
struct Tensor {
  int64_t buffer = -1;  // index into the run's buffers
  Shape shape;
  bool output = false;
  // Offsets to read the image from (the filter of a window-reversed
  // convolution, spatially flipped), or for the result to write it to (a
  // result reversed by an input view); empty = element i at offset i.
  std::vector<int64_t> gather;
  memory user;
  memory prim;
  bool reorder = false;
  dnnl::reorder to_prim, to_user;  // created once: reorders are JIT-compiled
  std::vector<float> f32;          // the f32 image of a non-f32 buffer
  int dnnl_arg = 0;
};

class DnnConvRunner : public LibraryCallRunner {
 public:
  static absl::StatusOr<std::unique_ptr<LibraryCallRunner>> Create(
      const HloInstruction& inst, ConvCall call, ConvAlgorithm algorithm,
      absl::Span<const std::optional<StridedView>> views = {}) {
    std::unique_ptr<DnnConvRunner> r(new DnnConvRunner());
    r->name_ = inst.name();
    r->algorithm_ = {static_cast<int64_t>(algorithm), ConvAlgorithmName(algorithm)};
    r->call_ = std::move(call);
    r->views_.assign(views.begin(), views.end());
    try {
      if (absl::Status s = r->Prepare(inst, algorithm); !s.ok()) return s;
    } catch (const dnnl::error& e) {
      return absl::UnimplementedError(StrCat(inst.name(), ": oneDNN does not run this convolution with algorithm ",
                                             ConvAlgorithmName(algorithm), ": ", e.what()));
    }
    return std::unique_ptr<LibraryCallRunner>(std::move(r));
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    ApplyLibraryCallThreads();
    if (static_cast<int64_t>(buffers.size()) < operand_count_ + 1) {
      return absl::InvalidArgumentError(StrCat(name_, ": expected ", operand_count_, " operand buffers and a result"));
    }
    if (empty_) return absl::OkStatus();
    try {
      std::unordered_map<int, memory> args;
      for (Tensor& t : tensors_) {
        void* data = buffers[t.buffer];
        if (data == nullptr) return absl::InvalidArgumentError(StrCat(name_, ": null buffer ", t.buffer));
        if (!t.f32.empty() || t.shape.element_count() == 0) {
          if (!t.output) {
            PrimitiveType type = t.shape.element_type();
            int64_t n = static_cast<int64_t>(t.f32.size());
            if (t.gather.empty()) {
              for (int64_t i = 0; i < n; ++i) t.f32[i] = static_cast<float>(ReadFloat(type, data, i));
            } else {
              for (int64_t i = 0; i < n; ++i) t.f32[i] = static_cast<float>(ReadFloat(type, data, t.gather[i]));
            }
          }
        } else {
          t.user.set_data_handle(data);
        }
        if (!t.output && t.reorder) t.to_prim.execute(stream_, t.user, t.prim);
        if (t.dnnl_arg != 0) args[t.dnnl_arg] = t.reorder ? t.prim : t.user;
      }
      if (side_input_ >= 0) {
        // The sum post-op reads the side input from the destination.
        Tensor& side = tensors_[side_input_];
        Tensor& dst = tensors_[output_];
        memory& target = dst.reorder ? dst.prim : dst.user;
        side_to_dst_.execute(stream_, side.user, target);
      }
      if (epilogue_side_ >= 0 && tensors_[epilogue_side_].f32.empty() &&
          buffers[tensors_[epilogue_side_].buffer] == buffers[tensors_[output_].buffer]) {
        // The convolution would overwrite the side input before the
        // epilogue reads it (an in-place call; none is made today).
        return absl::UnimplementedError(
            StrCat(name_, ": as-backward-filter takes no side input that shares the result's buffer"));
      }
      primitive_.execute(stream_, args);
      Tensor& out = tensors_[output_];
      if (out.reorder) out.to_user.execute(stream_, out.prim, out.user);
      if (epilogue_) {
        // In place on the result: side input, bias, activation.
        epilogue_result_.set_data_handle(out.user.get_data_handle());
        const void* bias = buffers[bias_operand_];
        for (size_t i = 0; i < bias_image_.size(); ++i) {
          bias_image_[i] = static_cast<float>(ReadFloat(bias_type_, bias, i) * bias_factor_);
        }
        memory& src0 = epilogue_side_ >= 0 ? tensors_[epilogue_side_].user : epilogue_result_;
        epilogue_.execute(stream_,
                          {{DNNL_ARG_SRC_0, src0}, {DNNL_ARG_SRC_1, bias_memory_}, {DNNL_ARG_DST, epilogue_result_}});
      }
      stream_.wait();
      if (!out.f32.empty()) {
        void* data = buffers[out.buffer];
        const int64_t n = static_cast<int64_t>(out.f32.size());
        for (int64_t i = 0; i < n; ++i) {
          WriteFloat(out.shape.element_type(), data, out.gather.empty() ? i : out.gather[i], out.f32[i]);
        }
      }
    } catch (const dnnl::error& e) {
      return absl::InternalError(StrCat(name_, ": oneDNN failed: ", e.what()));
    }
    return absl::OkStatus();
  }

 private:
  DnnConvRunner() : stream_(Engine()) {}

  // The user's memory for a tensor whose logical oneDNN dims are `dims` and
  // whose element strides are `strides`.
  int AddTensor(int64_t buffer, const Shape& shape, const Dims& dims, const Dims& strides, bool output) {
    Tensor t;
    t.buffer = buffer;
    t.shape = shape;
    t.output = output;
    memory::desc md(dims, memory::data_type::f32, strides);
    if (shape.element_type() != PrimitiveType::kF32) {
      t.f32.resize(shape.element_count());
      t.user = memory(md, Engine(), t.f32.empty() ? DNNL_MEMORY_NONE : t.f32.data());
    } else {
      t.user = memory(md, Engine(), DNNL_MEMORY_NONE);
    }
    tensors_.push_back(std::move(t));
    return static_cast<int>(tensors_.size()) - 1;
  }

  // Reads an operand (or writes the result) through an f32 image whose
  // dimensions marked in `flip` are reversed: `strides` are the tensor's
  // (those of its oneDNN descriptor, the image's layout).
  void Flip(Tensor& t, const Shape& shape, const std::vector<int64_t>& strides, const std::vector<bool>& flip) {
    int64_t n = shape.element_count();
    t.gather.assign(n, 0);
    if (t.f32.empty()) {
      t.f32.resize(n);
      t.user.set_data_handle(t.f32.data());
    }
    // For each element (logical row-major index), its offset and the offset
    // of its flipped counterpart.
    std::vector<int64_t> idx(shape.rank(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t dst = 0, src = 0;
      for (int64_t k = 0; k < shape.rank(); ++k) {
        dst += idx[k] * strides[k];
        src += (flip[k] ? shape.dimensions(k) - 1 - idx[k] : idx[k]) * strides[k];
      }
      t.gather[dst] = src;
      for (int64_t k = shape.rank() - 1; k >= 0; --k) {
        if (++idx[k] < shape.dimensions(k)) break;
        idx[k] = 0;
      }
    }
  }

  // The strides of operand `operand` (of `shape`): its view's where it has
  // one (reversed dimensions turned into positive strides and marked in
  // `reversed`), else its buffer's.
  absl::Status OperandStrides(int64_t operand, const Shape& shape, std::vector<int64_t>& strides,
                              std::vector<bool>& reversed) const {
    strides = PhysicalStrides(shape);
    reversed.assign(shape.rank(), false);
    if (operand < 0 || operand >= static_cast<int64_t>(views_.size()) || !views_[operand].has_value()) {
      return absl::OkStatus();
    }
    const StridedView& v = *views_[operand];
    if (static_cast<int64_t>(v.strides.size()) != shape.rank()) {
      return absl::InvalidArgumentError(StrCat(name_, ": a view of rank ", v.strides.size(), " for operand ",
                                               operand, " of shape ", shape.ToString()));
    }
    int64_t offset = v.offset;
    for (int64_t k = 0; k < shape.rank(); ++k) {
      strides[k] = v.strides[k];
      if (strides[k] >= 0) continue;
      offset += (shape.dimensions(k) - 1) * strides[k];
      strides[k] = -strides[k];
      reversed[k] = shape.dimensions(k) > 1;
    }
    // A view of a whole buffer starts at its first element once unreversed.
    if (offset != 0) {
      return absl::UnimplementedError(StrCat(name_, ": operand ", operand, "'s view starts at element ", offset));
    }
    return absl::OkStatus();
  }

  // The filter read through a spatially flipped image and the result
  // written through one where Prepare found them reversed.
  void FlipFilterAndResult(int filter, int result) {
    auto any = [](const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); };
    if (any(filter_flip_)) Flip(tensors_[filter], call_.filter_shape, filter_strides_, filter_flip_);
    if (any(result_flip_)) Flip(tensors_[result], call_.output_shape, result_strides_, result_flip_);
  }

  // Binds a tensor to a primitive argument with the primitive's format.
  void Bind(int index, const memory::desc& wanted, int arg) {
    Tensor& t = tensors_[index];
    t.dnnl_arg = arg;
    if (wanted != t.user.get_desc()) {
      t.reorder = true;
      t.prim = memory(wanted, Engine());
      if (t.output) {
        t.to_user = dnnl::reorder(t.prim, t.user);
      } else {
        t.to_prim = dnnl::reorder(t.user, t.prim);
      }
    }
  }

  absl::Status Prepare(const HloInstruction& inst, ConvAlgorithm algorithm) {
    const ConvCall& c = call_;
    const ConvolutionDimensionNumbers& d = c.dnums;
    operand_count_ = inst.operand_count();
    for (const HloInstruction* op : inst.operands()) {
      if (!DnnType(op->shape().element_type())) {
        return absl::UnimplementedError(
            StrCat(name_, ": oneDNN path takes f32/bf16/f16, not ", op->shape().ToString()));
      }
      if (absl::Status s = CheckPlainLayout(op->shape()); !s.ok()) return s;
      bytes_read_ += op->shape().byte_size();
    }
    if (!DnnType(c.result_shape.element_type())) {
      return absl::UnimplementedError(
          StrCat(name_, ": oneDNN path takes f32/bf16/f16, not ", c.result_shape.ToString()));
    }
    if (absl::Status s = CheckPlainLayout(c.result_shape); !s.ok()) return s;
    bytes_written_ = c.result_shape.byte_size();
    int64_t spatial = d.input_spatial_dimensions.size();
    if (spatial < 1 || spatial > 3) {
      return absl::UnimplementedError(
          StrCat(name_, ": oneDNN convolutions have 1 to 3 spatial dimensions, not ", spatial));
    }
    // A forward convolution's input read through a zero-padded view is the
    // unpadded source with that much more window padding.
    std::vector<int64_t> input_pad_low(call_.input_shape.rank(), 0), input_pad_high(call_.input_shape.rank(), 0);
    for (size_t k = 0; k < views_.size(); ++k) {
      if (!views_[k].has_value() || views_[k]->pad_low.empty()) continue;
      const StridedView& v = *views_[k];
      const bool forward_input =
          k == 0 && (c.kind == LibraryCallKind::kConvForward || c.kind == LibraryCallKind::kConvBiasActivationForward);
      if (!forward_input || static_cast<int64_t>(v.pad_low.size()) != call_.input_shape.rank() ||
          v.pad_high.size() != v.pad_low.size()) {
        return absl::UnimplementedError(StrCat(name_, ": only a forward convolution's input is read padded"));
      }
      for (int64_t d = 0; d < call_.input_shape.rank(); ++d) {
        const bool spatial = std::find(c.dnums.input_spatial_dimensions.begin(), c.dnums.input_spatial_dimensions.end(),
                                       d) != c.dnums.input_spatial_dimensions.end();
        if ((v.pad_low[d] != 0 || v.pad_high[d] != 0) && !spatial) {
          return absl::UnimplementedError(StrCat(name_, ": the input's view pads a batch or feature dimension"));
        }
        input_pad_low[d] = v.pad_low[d];
        input_pad_high[d] = v.pad_high[d];
        call_.input_shape.set_dimensions(d, call_.input_shape.dimensions(d) - v.pad_low[d] - v.pad_high[d]);
        if (call_.input_shape.dimensions(d) <= 0) {
          return absl::UnimplementedError(StrCat(name_, ": the input's view is only padding"));
        }
      }
    }
    Dims strides, dilates, pad_l, pad_r;
    for (size_t s = 0; s < c.window.dimensions.size(); ++s) {
      const WindowDimension& w = c.window.dimensions[s];
      if (w.base_dilation != 1) return absl::UnimplementedError(StrCat(name_, ": oneDNN has no base dilation"));
      strides.push_back(w.stride);
      dilates.push_back(w.window_dilation - 1);
      pad_l.push_back(w.padding_low + input_pad_low[c.dnums.input_spatial_dimensions[s]]);
      pad_r.push_back(w.padding_high + input_pad_high[c.dnums.input_spatial_dimensions[s]]);
    }
    int64_t g = c.feature_group_count;
    const Shape &in = c.input_shape, &f = c.filter_shape, &out = c.output_shape;
    empty_ = in.element_count() == 0 || f.element_count() == 0 || out.element_count() == 0;
    if (empty_ && c.result_shape.element_count() > 0) {
      // A non-empty result of an empty sum (zeros, or the fused epilogue of
      // zeros): oneDNN rejects empty operands; the reference computes it.
      return absl::UnimplementedError(StrCat(name_, ": oneDNN takes no empty operands"));
    }
    int64_t taps = 1;
    for (int64_t k : d.kernel_spatial_dimensions) taps *= f.dimensions(k);
    flops_ = 2 * out.element_count() * f.dimensions(d.kernel_input_feature_dimension) * taps;
    if (empty_) return absl::OkStatus();
    // The buffers' strides, or the views' (conv_operand_views.h): operand
    // 0 and 1 are the forward convolution's x and w (forward), y and w
    // (backward input) or x and y (backward filter).
    for (size_t k = 2; k < views_.size(); ++k) {
      if (views_[k].has_value()) {
        return absl::UnimplementedError(StrCat(name_, ": operand ", k, " is not read through a view"));
      }
    }
    const bool forward = c.kind == LibraryCallKind::kConvForward || c.kind == LibraryCallKind::kConvBiasActivationForward;
    std::vector<int64_t> is, fs, os;
    std::vector<bool> in_rev, f_rev, out_rev;
    RETURN_IF_ERROR(OperandStrides(c.kind == LibraryCallKind::kConvBackwardInput ? -1 : 0, in, is, in_rev));
    RETURN_IF_ERROR(OperandStrides(c.kind == LibraryCallKind::kConvBackwardFilter ? -1 : 1, f, fs, f_rev));
    RETURN_IF_ERROR(OperandStrides(c.kind == LibraryCallKind::kConvBackwardInput    ? 0
                                   : c.kind == LibraryCallKind::kConvBackwardFilter ? 1
                                                                                     : -1,
                                   out, os, out_rev));
    auto any_of = [](const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); };
    if (any_of(in_rev) && !views_.empty() && views_[0].has_value() && !views_[0]->pad_low.empty()) {
      return absl::UnimplementedError(StrCat(name_, ": the input's view is both reversed and padded"));
    }
    if (in_rev[d.input_batch_dimension] || in_rev[d.input_feature_dimension] ||
        f_rev[d.kernel_input_feature_dimension] || f_rev[d.kernel_output_feature_dimension] || any_of(out_rev) ||
        (!forward && (any_of(in_rev) || any_of(f_rev)))) {
      return absl::UnimplementedError(StrCat(
          name_, ": only the spatial dimensions of a forward convolution's input and filter are read reversed"));
    }
    // Window reversal (forward kinds only; AnalyzeConvCall rejects it on
    // backward ones) is a flipped filter. Reversed spatial dimensions: of
    // the filter, a toggled window reversal;
    // of the input, the result reversed too, with the padding turned around.
    filter_flip_.assign(f.rank(), false);
    result_flip_.assign(out.rank(), false);
    for (int64_t s = 0; s < spatial; ++s) {
      const WindowDimension& w = c.window.dimensions[s];
      bool flip = w.window_reversal != f_rev[d.kernel_spatial_dimensions[s]];
      if (in_rev[d.input_spatial_dimensions[s]]) {
        flip = !flip;
        result_flip_[d.output_spatial_dimensions[s]] = true;
        const int64_t unread = in.dimensions(d.input_spatial_dimensions[s]) + pad_l[s] + pad_r[s] -
                               (f.dimensions(d.kernel_spatial_dimensions[s]) - 1) * w.window_dilation - 1 -
                               (out.dimensions(d.output_spatial_dimensions[s]) - 1) * w.stride;
        const int64_t low = pad_l[s];
        pad_l[s] = pad_r[s] - unread;
        pad_r[s] = low + unread;
      }
      filter_flip_[d.kernel_spatial_dimensions[s]] = flip;
    }
    if (any_of(result_flip_) && c.side_input_operand >= 0) {
      return absl::UnimplementedError(StrCat(name_, ": a reversed input with a side input is not taken"));
    }
    filter_strides_ = fs;
    result_strides_ = os;
    // Logical oneDNN dims and strides.
    Dims src_dims = {in.dimensions(d.input_batch_dimension), in.dimensions(d.input_feature_dimension)};
    Dims src_strides = {is[d.input_batch_dimension], is[d.input_feature_dimension]};
    Dims dst_dims = {out.dimensions(d.output_batch_dimension), out.dimensions(d.output_feature_dimension)};
    Dims dst_strides = {os[d.output_batch_dimension], os[d.output_feature_dimension]};
    int64_t o = f.dimensions(d.kernel_output_feature_dimension), i = f.dimensions(d.kernel_input_feature_dimension);
    int64_t ko = fs[d.kernel_output_feature_dimension], ki = fs[d.kernel_input_feature_dimension];
    Dims w_dims = g > 1 ? Dims{g, o / g, i} : Dims{o, i};
    Dims w_strides = g > 1 ? Dims{ko * (o / g), ko, ki} : Dims{ko, ki};
    for (int64_t s = 0; s < spatial; ++s) {
      src_dims.push_back(in.dimensions(d.input_spatial_dimensions[s]));
      src_strides.push_back(is[d.input_spatial_dimensions[s]]);
      dst_dims.push_back(out.dimensions(d.output_spatial_dimensions[s]));
      dst_strides.push_back(os[d.output_spatial_dimensions[s]]);
      w_dims.push_back(f.dimensions(d.kernel_spatial_dimensions[s]));
      w_strides.push_back(fs[d.kernel_spatial_dimensions[s]]);
    }
    if (algorithm == ConvAlgorithm::kAsBackwardFilter) {
      return PrepareAsBackwardFilter(inst, src_dims, src_strides, dst_dims, dst_strides, w_dims, w_strides, pad_l);
    }
    int64_t result_buffer = operand_count_;
    int src = -1, wei = -1, dst = -1;
    switch (c.kind) {
      case LibraryCallKind::kConvForward:
      case LibraryCallKind::kConvBiasActivationForward:
        src = AddTensor(0, in, src_dims, src_strides, false);
        wei = AddTensor(1, f, w_dims, w_strides, false);
        dst = AddTensor(result_buffer, out, dst_dims, dst_strides, true);
        output_ = dst;
        FlipFilterAndResult(wei, dst);
        break;
      case LibraryCallKind::kConvBackwardInput:
        dst = AddTensor(0, out, dst_dims, dst_strides, false);
        wei = AddTensor(1, f, w_dims, w_strides, false);
        src = AddTensor(result_buffer, in, src_dims, src_strides, true);
        output_ = src;
        break;
      case LibraryCallKind::kConvBackwardFilter:
        src = AddTensor(0, in, src_dims, src_strides, false);
        dst = AddTensor(1, out, dst_dims, dst_strides, false);
        wei = AddTensor(result_buffer, f, w_dims, w_strides, true);
        output_ = wei;
        break;
      case LibraryCallKind::kGemm:
      case LibraryCallKind::kCholesky:
      case LibraryCallKind::kTriangularSolve:
        return absl::InternalError(StrCat(inst.name(), " is not a convolution"));
    }
    auto any = [](const Dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); };
    memory::desc src_any = any(src_dims), w_any = any(w_dims), dst_any = any(dst_dims);
    // Depthwise (one input feature per group) is memory-bound: oneDNN's
    // depthwise kernels read the buffers' own channels-last layout, and the
    // reorders into its blocked format would cost more than the convolution
    // (MobileNetV2's 3x3 filter gradient at batch 96, 112x112x32: two 45 ms
    // reorders around a 100 ms convolution on 2 cores, ONEDNN_VERBOSE=1).
    // So the activations are offered as they are first; a layout no
    // optimized kernel takes falls back to the blocked one.
    const bool depthwise = g > 1 && i == 1;
    auto optimized = [](const auto& pd) { return std::string_view(pd.impl_info_str()).substr(0, 4) != "ref:"; };
    dnnl::algorithm alg = DnnAlgorithm(algorithm);
    auto unsupported = [&]() {
      return absl::UnimplementedError(StrCat(name_, ": oneDNN has no ", ConvAlgorithmName(algorithm),
                                             " implementation for this convolution on this CPU"));
    };
    if (c.kind == LibraryCallKind::kConvForward || c.kind == LibraryCallKind::kConvBiasActivationForward) {
      dnnl::primitive_attr attr;
      if (c.config.conv_result_scale != 1) attr.set_output_scales(0, {static_cast<float>(c.config.conv_result_scale)});
      if (c.kind == LibraryCallKind::kConvBiasActivationForward) {
        dnnl::post_ops ops;
        int post_op = 0;
        if (c.side_input_operand >= 0) {
          const Shape& side = inst.operand(c.side_input_operand)->shape();
          std::vector<int64_t> ss = PhysicalStrides(side);
          Dims side_strides = {ss[d.output_batch_dimension], ss[d.output_feature_dimension]};
          for (int64_t s = 0; s < spatial; ++s) side_strides.push_back(ss[d.output_spatial_dimensions[s]]);
          side_input_ = AddTensor(c.side_input_operand, side, dst_dims, side_strides, false);
          ops.append_sum(static_cast<float>(c.config.side_input_scale));
          ++post_op;
        }
        Dims bias_dims(spatial + 2, 1), bias_strides(spatial + 2, 1);
        bias_dims[1] = o;
        bias_strides[0] = o;
        int bias = AddTensor(c.bias_operand, inst.operand(c.bias_operand)->shape(), bias_dims, bias_strides, false);
        memory::desc bias_md = tensors_[bias].user.get_desc();
        ops.append_binary(dnnl::algorithm::binary_add, bias_md);
        tensors_[bias].dnnl_arg = DNNL_ARG_ATTR_MULTIPLE_POST_OP(post_op) | DNNL_ARG_SRC_1;
        ++post_op;
        AppendActivation(ops, c.config.activation_mode);
        attr.set_post_ops(ops);
      }
      auto make = [&](const memory::desc& src_md, const memory::desc& dst_md) {
        dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src_md, w_any, dst_md, strides,
                                             dilates, pad_l, pad_r);
        return dnnl::convolution_forward::primitive_desc(desc, attr, Engine(), /*allow_empty=*/true);
      };
      dnnl::convolution_forward::primitive_desc pd;
      if (depthwise) pd = make(tensors_[src].user.get_desc(), tensors_[dst].user.get_desc());
      if (!pd || !optimized(pd)) pd = make(src_any, dst_any);
      if (!pd) return unsupported();
      Bind(src, pd.src_desc(), DNNL_ARG_SRC);
      Bind(wei, pd.weights_desc(), DNNL_ARG_WEIGHTS);
      Bind(dst, pd.dst_desc(), DNNL_ARG_DST);
      if (side_input_ >= 0) {
        Tensor& out_tensor = tensors_[dst];
        side_to_dst_ =
            dnnl::reorder(tensors_[side_input_].user, out_tensor.reorder ? out_tensor.prim : out_tensor.user);
      }
      primitive_ = dnnl::convolution_forward(pd);
      return absl::OkStatus();
    }
    // Backward primitives take the forward one as a hint (same formats).
    auto make_hint = [&](const memory::desc& src_md, const memory::desc& dst_md) {
      dnnl::convolution_forward::desc hint_desc(dnnl::prop_kind::forward_training, alg, src_md, w_any, dst_md, strides,
                                                dilates, pad_l, pad_r);
      return dnnl::convolution_forward::primitive_desc(hint_desc, Engine(), /*allow_empty=*/true);
    };
    const memory::desc src_plain = tensors_[src].user.get_desc(), dst_plain = tensors_[dst].user.get_desc();
    if (c.kind == LibraryCallKind::kConvBackwardInput) {
      auto make = [&](const memory::desc& src_md, const memory::desc& dst_md) {
        dnnl::convolution_backward_data::primitive_desc pd;
        dnnl::convolution_forward::primitive_desc hint = make_hint(src_md, dst_md);
        if (!hint) return pd;
        dnnl::convolution_backward_data::desc desc(alg, src_md, w_any, dst_md, strides, dilates, pad_l, pad_r);
        return dnnl::convolution_backward_data::primitive_desc(desc, Engine(), hint, /*allow_empty=*/true);
      };
      dnnl::convolution_backward_data::primitive_desc pd;
      if (depthwise) pd = make(src_plain, dst_plain);
      if (!pd || !optimized(pd)) pd = make(src_any, dst_any);
      if (!pd) return unsupported();
      Bind(src, pd.diff_src_desc(), DNNL_ARG_DIFF_SRC);
      Bind(wei, pd.weights_desc(), DNNL_ARG_WEIGHTS);
      Bind(dst, pd.diff_dst_desc(), DNNL_ARG_DIFF_DST);
      primitive_ = dnnl::convolution_backward_data(pd);
      return absl::OkStatus();
    }
    auto make = [&](const memory::desc& src_md, const memory::desc& dst_md) {
      dnnl::convolution_backward_weights::primitive_desc pd;
      dnnl::convolution_forward::primitive_desc hint = make_hint(src_md, dst_md);
      if (!hint) return pd;
      dnnl::convolution_backward_weights::desc desc(alg, src_md, w_any, dst_md, strides, dilates, pad_l, pad_r);
      return dnnl::convolution_backward_weights::primitive_desc(desc, Engine(), hint, /*allow_empty=*/true);
    };
    dnnl::convolution_backward_weights::primitive_desc pd;
    if (depthwise) pd = make(src_plain, dst_plain);
    if (!pd || !optimized(pd)) pd = make(src_any, dst_any);
    if (!pd) return unsupported();
    Bind(src, pd.src_desc(), DNNL_ARG_SRC);
    Bind(wei, pd.diff_weights_desc(), DNNL_ARG_DIFF_WEIGHTS);
    Bind(dst, pd.diff_dst_desc(), DNNL_ARG_DIFF_DST);
    primitive_ = dnnl::convolution_backward_weights(pd);
    return absl::OkStatus();
  }

  // A forward convolution on oneDNN's filter-gradient primitive
  // (ConvAlgorithm::kAsBackwardFilter). Both compute
  //   y[n, o, p] = sum over i, k of x[n, i, p*stride + k*dilation - pad_l] * w[o, i, k]
  // (w flipped first where the window is reversed); the filter gradient
  // sums over its batch and output positions. So its batch is x's feature
  // i, its input feature x's batch n, its output gradient the filter
  // (batch i, feature o, positions k) and its filter gradient the result
  // (o, n, positions p); stride and dilation trade places. This is the
  // shape XLA's operand swap (SwapConvolutionOperandsIfBeneficial) and
  // batch-as-feature weight gradients leave: a window as large as the
  // input, a "batch" of hundreds and a handful of input or output features,
  // where oneDNN's forward kernels crawl (ResNet-18's layer4 weight
  // gradients at 2x2, mb512_ic8oc512: 9.9 ms each on one thread) and its
  // filter-gradient kernels do not (3.1 ms against 8.1). The fused
  // epilogue (side input, bias, activation) runs after it as a oneDNN
  // binary primitive, in place on the result; a conv_result_scale is not
  // taken.
  absl::Status PrepareAsBackwardFilter(const HloInstruction& inst, const Dims& src_dims, const Dims& src_strides,
                                       const Dims& dst_dims, const Dims& dst_strides, const Dims& w_dims,
                                       const Dims& w_strides, const Dims& pad_l) {
    const ConvCall& c = call_;
    const bool fused = c.kind == LibraryCallKind::kConvBiasActivationForward;
    if ((c.kind != LibraryCallKind::kConvForward && !fused) || c.feature_group_count != 1 ||
        c.config.conv_result_scale != 1) {
      return absl::UnimplementedError(
          StrCat(name_, ": as-backward-filter runs only ungrouped, unscaled forward convolutions"));
    }
    const int64_t spatial = static_cast<int64_t>(src_dims.size()) - 2;
    // x as the source: (i, n, spatial); the filter as the output gradient:
    // (i, o, spatial); the result as the filter gradient: (o, n, spatial).
    Dims x_dims = {src_dims[1], src_dims[0]}, x_strides = {src_strides[1], src_strides[0]};
    Dims g_dims = {w_dims[1], w_dims[0]}, g_strides = {w_strides[1], w_strides[0]};
    Dims y_dims = {dst_dims[1], dst_dims[0]}, y_strides = {dst_strides[1], dst_strides[0]};
    Dims strides, dilates, pad_r;
    for (int64_t s = 0; s < spatial; ++s) {
      x_dims.push_back(src_dims[2 + s]);
      x_strides.push_back(src_strides[2 + s]);
      g_dims.push_back(w_dims[2 + s]);
      g_strides.push_back(w_strides[2 + s]);
      y_dims.push_back(dst_dims[2 + s]);
      y_strides.push_back(dst_strides[2 + s]);
      const WindowDimension& w = c.window.dimensions[s];
      strides.push_back(w.window_dilation);
      dilates.push_back(w.stride - 1);
      // The padding that reaches exactly the last position the forward
      // convolution reads (less than its own where its stride leaves a
      // remainder unread; oneDNN wants the sizes to agree exactly).
      pad_r.push_back((w_dims[2 + s] - 1) * w.window_dilation + (dst_dims[2 + s] - 1) * w.stride + 1 -
                      src_dims[2 + s] - pad_l[s]);
    }
    int x = AddTensor(0, c.input_shape, x_dims, x_strides, false);
    int g = AddTensor(1, c.filter_shape, g_dims, g_strides, false);
    int y = AddTensor(operand_count_, c.output_shape, y_dims, y_strides, true);
    output_ = y;
    FlipFilterAndResult(g, y);
    auto any = [](const Dims& dims) { return memory::desc(dims, memory::data_type::f32, memory::format_tag::any); };
    // Direct: oneDNN's auto picks winograd for small filter gradients even
    // where it is slower (mb8_ic512oc512 at 2x2, 3x3: 11.5 ms against 2).
    dnnl::algorithm alg = dnnl::algorithm::convolution_direct;
    auto unsupported = [&]() {
      return absl::UnimplementedError(
          StrCat(name_, ": oneDNN has no filter-gradient implementation for this convolution on this CPU"));
    };
    dnnl::convolution_forward::desc hint_desc(dnnl::prop_kind::forward_training, alg, any(x_dims), any(y_dims),
                                              any(g_dims), strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc hint(hint_desc, Engine(), /*allow_empty=*/true);
    if (!hint) return unsupported();
    dnnl::convolution_backward_weights::desc desc(alg, any(x_dims), any(y_dims), any(g_dims), strides, dilates, pad_l,
                                                  pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, Engine(), hint, /*allow_empty=*/true);
    if (!pd) return unsupported();
    Bind(x, pd.src_desc(), DNNL_ARG_SRC);
    Bind(g, pd.diff_dst_desc(), DNNL_ARG_DIFF_DST);
    Bind(y, pd.diff_weights_desc(), DNNL_ARG_DIFF_WEIGHTS);
    primitive_ = dnnl::convolution_backward_weights(pd);

    // The epilogue, y = act(y + side_input_scale * side + bias), one binary
    // primitive in place on the result after its reorder out of oneDNN's
    // format, described in the forward convolution's (batch, feature,
    // spatial) order: oneDNN's binary kernels broadcast along dimension 1
    // and take no scales (with a scale, or a sum post-op on the reorder, it
    // falls back to reference code: 300 and 88 ms for 2.4M elements). So
    // with a side input it computes ((side + bias / scale) * scale) + y: an
    // eltwise_linear and a sum post-op, the bias divided when it is read.
    if (!fused) return absl::OkStatus();
    const memory::desc y_md(dst_dims, memory::data_type::f32, dst_strides);
    epilogue_result_ = memory(y_md, Engine(), DNNL_MEMORY_NONE);
    Dims bias_dims(spatial + 2, 1), bias_strides(spatial + 2, 1);
    bias_dims[1] = dst_dims[1];
    bias_strides[0] = dst_dims[1];
    const memory::desc bias_md(bias_dims, memory::data_type::f32, bias_strides);
    bias_image_.assign(dst_dims[1], 0.0f);
    bias_memory_ = memory(bias_md, Engine(), bias_image_.data());
    bias_operand_ = c.bias_operand;
    bias_type_ = inst.operand(c.bias_operand)->shape().element_type();
    const double side_scale = c.side_input_operand >= 0 ? c.config.side_input_scale : 0;
    if (side_scale != 0 && !(std::abs(side_scale) > 1e-30 && std::abs(side_scale) < 1e30)) {
      return absl::UnimplementedError(
          StrCat(name_, ": as-backward-filter divides the bias by side_input_scale ", side_scale, ", out of range"));
    }
    dnnl::post_ops ops;
    memory::desc src0_md = y_md;
    if (side_scale != 0) {
      const ConvolutionDimensionNumbers& d = c.dnums;
      const Shape& side = inst.operand(c.side_input_operand)->shape();
      std::vector<int64_t> ss = PhysicalStrides(side);
      Dims side_strides = {ss[d.output_batch_dimension], ss[d.output_feature_dimension]};
      for (int64_t s = 0; s < spatial; ++s) side_strides.push_back(ss[d.output_spatial_dimensions[s]]);
      epilogue_side_ = AddTensor(c.side_input_operand, side, dst_dims, side_strides, false);
      src0_md = tensors_[epilogue_side_].user.get_desc();
      bias_factor_ = 1 / side_scale;
      ops.append_eltwise(1, dnnl::algorithm::eltwise_linear, static_cast<float>(side_scale), 0);
      ops.append_sum(1);
    }
    AppendActivation(ops, c.config.activation_mode);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::binary::desc b(dnnl::algorithm::binary_add, src0_md, bias_md, y_md);
    dnnl::binary::primitive_desc bpd(b, attr, Engine(), /*allow_empty=*/true);
    if (!bpd) return unsupported();
    epilogue_ = dnnl::binary(bpd);
    return absl::OkStatus();
  }

  ConvCall call_;
  std::vector<std::optional<StridedView>> views_;  // per operand, may be shorter
  // Per filter / result dimension: read or written flipped (window
  // reversal, reversed views); the strides of their oneDNN descriptors.
  std::vector<bool> filter_flip_, result_flip_;
  std::vector<int64_t> filter_strides_, result_strides_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  // as-backward-filter's epilogue: run after primitive_ (and the result's
  // reorder), in place on the result.
  dnnl::primitive epilogue_;
  memory epilogue_result_;  // the result's buffer as the epilogue sees it
  int epilogue_side_ = -1;  // index into tensors_ of the side input
  int64_t bias_operand_ = -1;
  PrimitiveType bias_type_ = PrimitiveType::kF32;
  double bias_factor_ = 1;  // 1 / side_input_scale with a side input
  std::vector<float> bias_image_;
  memory bias_memory_;
  dnnl::reorder side_to_dst_;
  std::vector<Tensor> tensors_;
  int output_ = -1;
  int side_input_ = -1;
  int64_t operand_count_ = 0;
  bool empty_ = false;
};

}  // namespace

bool DnnAccepts(const HloInstruction& inst, const ConvCall& call, ConvAlgorithm algorithm) {
  return CreateDnnConvRunner(inst, call, algorithm).ok();
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateDnnConvRunner(const HloInstruction& inst, ConvCall call,
                                                                       ConvAlgorithm algorithm) {
  if (algorithm == ConvAlgorithm::kReference)
    return absl::InvalidArgumentError("the reference is not a oneDNN algorithm");
  if (algorithm == ConvAlgorithm::kTapGemm) return CreateTapGemmConvRunner(inst, call, {});
  if (algorithm == ConvAlgorithm::kIm2colGemm) return CreateIm2colGemmConvRunner(inst, call, {});
  return DnnConvRunner::Create(inst, std::move(call), algorithm);
}

}  // namespace passlab::runtime_internal

namespace passlab {

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateConvRunnerWithViews(
    const HloInstruction& inst, absl::Span<const std::optional<StridedView>> views, std::optional<int64_t> algorithm) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind || *kind == LibraryCallKind::kGemm || IsSolverKind(*kind)) {
    return absl::InvalidArgumentError(StrCat(inst.name(), " is not a convolution library call"));
  }
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  // The algorithm LibraryCallRunner::Create would run: the recorded one, or
  // oneDNN's auto where none (or XLA:GPU's cuDNN one) is recorded.
  std::optional<ConvAlgorithm> a;
  if (algorithm.has_value()) {
    ConvBackendConfig probe;
    probe.algo_id = *algorithm;
    a = probe.algorithm();
    if (!a) return absl::InvalidArgumentError(StrCat(inst.name(), ": unknown convolution algorithm ", *algorithm));
  } else if (!inst.custom_call_target().starts_with("__cudnn$")) {
    a = call.config.algorithm();
  }
  if (!a) a = ConvAlgorithm::kAuto;
  if (*a == ConvAlgorithm::kReference) {
    return absl::UnimplementedError(StrCat(inst.name(), ": the reference convolution reads no views"));
  }
  if (*a == ConvAlgorithm::kTapGemm) return runtime_internal::CreateTapGemmConvRunner(inst, call, views);
  if (*a == ConvAlgorithm::kIm2colGemm) return runtime_internal::CreateIm2colGemmConvRunner(inst, call, views);
  return runtime_internal::DnnConvRunner::Create(inst, std::move(call), *a, views);
}

}  // namespace passlab
