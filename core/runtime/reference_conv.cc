#include "core/runtime/reference_conv.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_internal.h"

namespace passlab {
namespace {

// Sizes and physical strides of one operand's dimensions, by role.
struct Axes {
  int64_t batch_size = 0, feature_size = 0;  // kernel: input / output feature
  int64_t batch_stride = 0, feature_stride = 0;
  std::vector<int64_t> spatial_size, spatial_stride;
};

Axes MakeAxes(const Shape& s, int64_t batch_dim, int64_t feature_dim, const std::vector<int64_t>& spatial_dims) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  Axes a;
  a.batch_size = s.dimensions(batch_dim);
  a.batch_stride = strides[batch_dim];
  a.feature_size = s.dimensions(feature_dim);
  a.feature_stride = strides[feature_dim];
  for (int64_t d : spatial_dims) {
    a.spatial_size.push_back(s.dimensions(d));
    a.spatial_stride.push_back(strides[d]);
  }
  return a;
}

std::string Describe(const ConvGeometry& g) {
  return StrCat("input ", g.input.ToString(), ", filter ", g.filter.ToString(), ", output ", g.output.ToString(),
                ", window ", g.window.ToString(), ", dim_labels ", g.dnums.ToString(),
                ", feature_group_count=", g.feature_group_count, ", batch_group_count=", g.batch_group_count);
}

// The input coordinate that output coordinate `y` reads at window position
// `i` along one spatial dimension, or -1 (padding, or a hole of the base
// dilation).
int64_t InputCoordinate(const WindowDimension& w, int64_t y, int64_t i, int64_t input_size) {
  int64_t dilated = y * w.stride - w.padding_low + i * w.window_dilation;
  if (dilated < 0 || dilated % w.base_dilation != 0) return -1;
  int64_t x = dilated / w.base_dilation;
  return x < input_size ? x : -1;
}

// Which array accumulates the product of the other two.
template <ConvUnknown kUnknown>
void Accumulate(const double* a, const double* b, double* result, int64_t in, int64_t w, int64_t out) {
  if constexpr (kUnknown == ConvUnknown::kOutput) {
    result[out] += a[in] * b[w];
  } else if constexpr (kUnknown == ConvUnknown::kInput) {
    result[in] += a[out] * b[w];
  } else {
    result[w] += a[in] * b[out];
  }
}

template <ConvUnknown kUnknown>
void Convolve(const ConvGeometry& g, const double* a, const double* b, double* result) {
  const ConvolutionDimensionNumbers& d = g.dnums;
  Axes in = MakeAxes(g.input, d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions);
  Axes w = MakeAxes(g.filter, d.kernel_input_feature_dimension, d.kernel_output_feature_dimension,
                    d.kernel_spatial_dimensions);
  Axes out = MakeAxes(g.output, d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions);
  const int64_t spatial = static_cast<int64_t>(in.spatial_size.size());
  const int64_t features_in_group = w.batch_size;  // the kernel's input features
  const int64_t output_features = w.feature_size;
  const int64_t per_feature_group = output_features / g.feature_group_count;
  const int64_t per_batch_group = output_features / g.batch_group_count;
  const int64_t batch = out.batch_size;
  // Per output feature: the offset of its input-feature group and of its
  // batch group in the input.
  std::vector<int64_t> input_shift(output_features);
  for (int64_t o = 0; o < output_features; ++o) {
    input_shift[o] = o / per_feature_group * features_in_group * in.feature_stride +
                     o / per_batch_group * batch * in.batch_stride;
  }
  // Output positions and window taps, one spatial dimension after another.
  int64_t positions = 1, taps = 1;
  for (int64_t s = 0; s < spatial; ++s) {
    positions *= out.spatial_size[s];
    taps *= w.spatial_size[s];
  }
  std::vector<int64_t> y(spatial), t(spatial);
  for (int64_t p = 0; p < positions; ++p) {
    for (int64_t s = spatial - 1, rest = p; s >= 0; --s) {
      y[s] = rest % out.spatial_size[s];
      rest /= out.spatial_size[s];
    }
    int64_t out_base = 0;
    for (int64_t s = 0; s < spatial; ++s) out_base += y[s] * out.spatial_stride[s];
    for (int64_t tap = 0; tap < taps; ++tap) {
      int64_t in_base = 0, w_base = 0;
      bool inside = true;
      for (int64_t s = spatial - 1, rest = tap; s >= 0; --s) {
        t[s] = rest % w.spatial_size[s];
        rest /= w.spatial_size[s];
      }
      for (int64_t s = 0; s < spatial && inside; ++s) {
        const WindowDimension& wd = g.window.dimensions[s];
        int64_t x = InputCoordinate(wd, y[s], t[s], in.spatial_size[s]);
        inside = x >= 0;
        // A reversed window reads the kernel backwards.
        int64_t k = wd.window_reversal ? w.spatial_size[s] - 1 - t[s] : t[s];
        in_base += x * in.spatial_stride[s];
        w_base += k * w.spatial_stride[s];
      }
      if (!inside) continue;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t o = 0; o < output_features; ++o) {
          int64_t in_at = in_base + n * in.batch_stride + input_shift[o];
          int64_t w_at = w_base + o * w.feature_stride;
          int64_t out_at = out_base + n * out.batch_stride + o * out.feature_stride;
          for (int64_t c = 0; c < features_in_group; ++c) {
            Accumulate<kUnknown>(a, b, result, in_at + c * in.feature_stride, w_at + c * w.batch_stride, out_at);
          }
        }
      }
    }
  }
}

}  // namespace

absl::Status CheckConvGeometry(const ConvGeometry& g) {
  const ConvolutionDimensionNumbers& d = g.dnums;
  const int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
  const int64_t rank = spatial + 2;
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("reference convolution: ", what, " (", Describe(g), ")"));
  };
  if (!g.input.IsArray() || !g.filter.IsArray() || !g.output.IsArray() || g.input.rank() != rank ||
      g.filter.rank() != rank || g.output.rank() != rank ||
      static_cast<int64_t>(d.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.output_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(g.window.dimensions.size()) != spatial) {
    return bad("ranks, dim_labels and window do not agree");
  }
  for (const Shape* s : {&g.input, &g.filter, &g.output}) RETURN_IF_ERROR(CheckPlainLayout(*s));
  const int64_t fgc = g.feature_group_count, bgc = g.batch_group_count;
  const int64_t c = g.input.dimensions(d.input_feature_dimension);
  const int64_t i = g.filter.dimensions(d.kernel_input_feature_dimension);
  const int64_t o = g.filter.dimensions(d.kernel_output_feature_dimension);
  if (fgc < 1 || bgc < 1 || c != i * fgc || o % fgc != 0 || o % bgc != 0 ||
      g.output.dimensions(d.output_feature_dimension) != o ||
      g.input.dimensions(d.input_batch_dimension) != g.output.dimensions(d.output_batch_dimension) * bgc) {
    return bad("features, batch and group counts do not agree");
  }
  for (int64_t s = 0; s < spatial; ++s) {
    const WindowDimension& w = g.window.dimensions[s];
    int64_t x = g.input.dimensions(d.input_spatial_dimensions[s]);
    int64_t k = g.filter.dimensions(d.kernel_spatial_dimensions[s]);
    if (w.size != k || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return bad(StrCat("window dimension ", s, " does not fit the filter"));
    }
    int64_t span = (x == 0 ? 0 : (x - 1) * w.base_dilation + 1) + w.padding_low + w.padding_high -
                   ((k - 1) * w.window_dilation + 1);
    int64_t expect = span < 0 ? 0 : span / w.stride + 1;
    if (g.output.dimensions(d.output_spatial_dimensions[s]) != expect) {
      return bad(StrCat("output spatial dimension ", s, " should be ", expect));
    }
  }
  return absl::OkStatus();
}

absl::Status ReferenceConvolution(const ConvGeometry& g, ConvUnknown unknown, absl::Span<const double> a,
                                  absl::Span<const double> b, absl::Span<double> result) {
  RETURN_IF_ERROR(CheckConvGeometry(g));
  const Shape* shapes[3];  // a, b, result
  switch (unknown) {
    case ConvUnknown::kOutput: shapes[0] = &g.input, shapes[1] = &g.filter, shapes[2] = &g.output; break;
    case ConvUnknown::kInput: shapes[0] = &g.output, shapes[1] = &g.filter, shapes[2] = &g.input; break;
    case ConvUnknown::kFilter: shapes[0] = &g.input, shapes[1] = &g.output, shapes[2] = &g.filter; break;
  }
  const size_t sizes[3] = {a.size(), b.size(), result.size()};
  for (int k = 0; k < 3; ++k) {
    if (static_cast<int64_t>(sizes[k]) != shapes[k]->element_count()) {
      return absl::InvalidArgumentError(StrCat("reference convolution: array ", k, " has ", sizes[k],
                                               " values for ", shapes[k]->ToString()));
    }
  }
  std::fill(result.begin(), result.end(), 0.0);
  if (a.empty() || b.empty() || result.empty()) return absl::OkStatus();
  switch (unknown) {
    case ConvUnknown::kOutput: Convolve<ConvUnknown::kOutput>(g, a.data(), b.data(), result.data()); break;
    case ConvUnknown::kInput: Convolve<ConvUnknown::kInput>(g, a.data(), b.data(), result.data()); break;
    case ConvUnknown::kFilter: Convolve<ConvUnknown::kFilter>(g, a.data(), b.data(), result.data()); break;
  }
  return absl::OkStatus();
}

}  // namespace passlab

// ---------------------------------------------------------------- the library call

namespace passlab::runtime_internal {
namespace {

double Activate(ConvActivation a, double x) {
  switch (a) {
    case ConvActivation::kNone: return x;
    case ConvActivation::kRelu: return x > 0 ? x : 0;
    case ConvActivation::kRelu6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case ConvActivation::kElu: return x > 0 ? x : std::expm1(x);
    case ConvActivation::kTanh: return std::tanh(x);
    case ConvActivation::kSigmoid: return 1 / (1 + std::exp(-x));
  }
  return x;
}

bool RealType(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
}

// A `__dnn$conv*` call on ReferenceConvolution: the buffers' roles follow
// the call's kind; conv_result_scale, then (fused forward) bias along the
// output features, side_input_scale * side input and the activation, with
// one rounding to the result type at the end.
class ReferenceConvRunner : public ReferenceRunnerBase {
 public:
  ReferenceConvRunner(const HloInstruction& inst, LibraryAlgorithm algorithm, ConvCall call)
      : ReferenceRunnerBase(inst, std::move(algorithm)), call_(std::move(call)) {
    geometry_ = ConvGeometry{call_.input_shape, call_.filter_shape, call_.output_shape, call_.dnums, call_.window,
                             call_.feature_group_count, 1};
    if (call_.kind == LibraryCallKind::kConvBackwardInput) unknown_ = ConvUnknown::kInput;
    if (call_.kind == LibraryCallKind::kConvBackwardFilter) unknown_ = ConvUnknown::kFilter;
    for (int64_t i = 0; i < 2; ++i) operand_shapes_.push_back(inst.operand(i)->shape());
    if (call_.bias_operand >= 0) bias_shape_ = inst.operand(call_.bias_operand)->shape();
    if (call_.side_input_operand >= 0) side_shape_ = inst.operand(call_.side_input_operand)->shape();
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(CheckBuffers(buffers));
    std::vector<double> a = ReadBufferValues(operand_shapes_[0], buffers[0]);
    std::vector<double> b = ReadBufferValues(operand_shapes_[1], buffers[1]);
    std::vector<double> result(call_.result_shape.element_count());
    RETURN_IF_ERROR(ReferenceConvolution(geometry_, unknown_, a, b, absl::MakeSpan(result)));
    const ConvBackendConfig& c = call_.config;
    if (call_.kind != LibraryCallKind::kConvBiasActivationForward) {
      for (double& v : result) v *= c.conv_result_scale;
    } else {
      ApplyBiasActivation(buffers, result);
    }
    WriteBufferValues(call_.result_shape, result, buffers[operand_count_]);
    return absl::OkStatus();
  }

 private:
  // act(scale * conv + side_input_scale * side_input + bias[feature]).
  void ApplyBiasActivation(absl::Span<void* const> buffers, std::vector<double>& result) const {
    const ConvBackendConfig& c = call_.config;
    const Shape& out = call_.result_shape;
    int64_t f = call_.dnums.output_feature_dimension;
    int64_t feature_stride = PhysicalStrides(out)[f], features = out.dimensions(f);
    // The side input in the result's physical order (its own layout may differ).
    std::vector<double> side;
    if (call_.side_input_operand >= 0) {
      side.resize(result.size());
      std::vector<int64_t> side_strides = PhysicalStrides(side_shape_), out_strides = PhysicalStrides(out);
      const void* side_buffer = buffers[call_.side_input_operand];
      for (int64_t linear = 0; linear < out.element_count(); ++linear) {
        int64_t out_at = 0, side_at = 0;
        for (int64_t d = out.rank() - 1, rest = linear; d >= 0; --d) {
          int64_t i = rest % out.dimensions(d);
          rest /= out.dimensions(d);
          out_at += i * out_strides[d];
          side_at += i * side_strides[d];
        }
        side[out_at] = ReadFloat(side_shape_.element_type(), side_buffer, side_at);
      }
    }
    const void* bias = buffers[call_.bias_operand];
    for (size_t at = 0; at < result.size(); ++at) {
      int64_t feature = static_cast<int64_t>(at) / feature_stride % features;
      double x = c.conv_result_scale * result[at] + ReadFloat(bias_shape_.element_type(), bias, feature);
      if (!side.empty()) x += c.side_input_scale * side[at];
      result[at] = Activate(c.activation_mode, x);
    }
  }

  ConvCall call_;
  ConvGeometry geometry_;
  ConvUnknown unknown_ = ConvUnknown::kOutput;
  std::vector<Shape> operand_shapes_;
  Shape bias_shape_, side_shape_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceConvRunner(const HloInstruction& inst,
                                                                             LibraryAlgorithm algorithm) {
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  for (const HloInstruction* op : inst.operands()) {
    if (!RealType(op->shape().element_type())) {
      return absl::UnimplementedError(StrCat(inst.name(), ": the reference convolution takes f16/bf16/f32/f64, not ",
                                             op->shape().ToString()));
    }
    RETURN_IF_ERROR(CheckPlainLayout(op->shape()));
  }
  if (!RealType(call.result_shape.element_type())) {
    return absl::UnimplementedError(StrCat(inst.name(), ": the reference convolution writes f16/bf16/f32/f64, not ",
                                           call.result_shape.ToString()));
  }
  RETURN_IF_ERROR(CheckPlainLayout(call.result_shape));
  ConvGeometry g{call.input_shape, call.filter_shape, call.output_shape, call.dnums, call.window,
                 call.feature_group_count, 1};
  RETURN_IF_ERROR(CheckConvGeometry(g));
  return std::unique_ptr<LibraryCallRunner>(new ReferenceConvRunner(inst, std::move(algorithm), std::move(call)));
}

}  // namespace passlab::runtime_internal
