// The evaluator on library calls (`__blas$gemm`, `__dnn$conv*`): gemm against
// the plain dot plus hand-applied epilogues, convolutions of every kind
// against a naive loop over the forward convolution's terms (odd sizes,
// strides, padding, dilation, feature groups, unusual dim_labels).
#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

Literal Random(const Shape& shape, uint64_t seed) {
  Literal l(shape);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    l.SetDouble(i, static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0);
  }
  return l;
}

absl::StatusOr<Literal> Eval(const std::string& text, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return HloEvaluator().Evaluate(**m, args);
}

void ExpectNear(const Literal& got, const Literal& want, double tol) {
  ASSERT_EQ(got.element_count(), want.element_count());
  for (int64_t i = 0; i < got.element_count(); ++i) {
    ASSERT_NEAR(got.GetDouble(i), want.GetDouble(i), tol * (1 + std::abs(want.GetDouble(i)))) << "element " << i;
  }
}

// ---------------------------------------------------------------- gemm

TEST(LibraryCallEvalTest, GemmWithBetaBiasReluMatchesDotAndEpilogue) {
  const std::string gemm = R"(HloModule m
ENTRY e {
  a = f32[3,5,4] parameter(0)
  b = f32[3,6,5] parameter(1)
  c = f32[3,4,6] parameter(2)
  bias = f32[6] parameter(3)
  ROOT g = f32[3,4,6] custom-call(a, b, c, bias), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1.5,"beta":-0.5,"epilogue":"BIAS_RELU","dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["2"]}}}
})";
  const std::string dot = R"(HloModule m
ENTRY e {
  a = f32[3,5,4] parameter(0)
  b = f32[3,6,5] parameter(1)
  ROOT d = f32[3,4,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_contracting_dims={2}
})";
  std::vector<Literal> args = {Random(Shape(PrimitiveType::kF32, {3, 5, 4}), 1),
                               Random(Shape(PrimitiveType::kF32, {3, 6, 5}), 2),
                               Random(Shape(PrimitiveType::kF32, {3, 4, 6}), 3),
                               Random(Shape(PrimitiveType::kF32, {6}), 4)};
  absl::StatusOr<Literal> got = Eval(gemm, args);
  ASSERT_TRUE(got.ok()) << got.status().message();
  absl::StatusOr<Literal> d = Eval(dot, {args[0], args[1]});
  ASSERT_TRUE(d.ok()) << d.status().message();
  Literal want(Shape(PrimitiveType::kF32, {3, 4, 6}));
  int64_t positives = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    double v = 1.5 * d->GetDouble(i) - 0.5 * args[2].GetDouble(i) + args[3].GetDouble(i % 6);
    positives += v > 0;
    want.SetDouble(i, std::max(v, 0.0));
  }
  EXPECT_GT(positives, 0);
  EXPECT_LT(positives, want.element_count());
  ExpectNear(*got, want, 1e-5);
}

TEST(LibraryCallEvalTest, GemmTupleResultAndGelu) {
  const std::string gemm = R"(HloModule m
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,2] parameter(1)
  ROOT g = (f32[2,2], s8[32]) custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"epilogue":"GELU","dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})";
  Literal a = Literal::FromDoubles(Shape(PrimitiveType::kBF16, {2, 3}), {1, 2, 3, -1, 0, 0.5});
  Literal b = Literal::FromDoubles(Shape(PrimitiveType::kBF16, {3, 2}), {1, 0, 0, 1, 1, -1});
  absl::StatusOr<Literal> got = Eval(gemm, {a, b});
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_TRUE(got->shape().IsTuple());
  const Literal& r = got->tuple_elements()[0];
  auto gelu = [](double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); };
  // [[1+3, 2-3], [-1+0.5, 0-0.5]]
  double want[] = {gelu(4), gelu(-1), gelu(-0.5), gelu(-0.5)};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(r.GetDouble(i), want[i], 1e-6) << i;
  EXPECT_EQ(got->tuple_elements()[1].element_count(), 32);
}

TEST(LibraryCallEvalTest, GemmErrorsNameTheInstruction) {
  absl::StatusOr<Literal> r = Eval(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT bad_gemm = f32[2,2] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"epilogue":"BIAS","dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})",
                                   {Random(Shape(PrimitiveType::kF32, {2, 3}), 1), Random(Shape(PrimitiveType::kF32, {3, 2}), 2)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad_gemm"), std::string_view::npos) << r.status().message();
}

// ---------------------------------------------------------------- convolution

// A 2-D convolution problem with arbitrary dim_labels.
struct ConvProblem {
  std::string dim_labels;  // e.g. "b01f_01io->b01f"
  int64_t n, c, o, groups;
  int64_t in_h, in_w, k_h, k_w;
  int64_t stride_h, stride_w, pad_lo_h, pad_hi_h, pad_lo_w, pad_hi_w, dil_h, dil_w;

  int64_t OutH() const { return (in_h + pad_lo_h + pad_hi_h - (k_h - 1) * dil_h - 1) / stride_h + 1; }
  int64_t OutW() const { return (in_w + pad_lo_w + pad_hi_w - (k_w - 1) * dil_w - 1) / stride_w + 1; }

  // Dims of a tensor whose labels are `labels` (one of the three parts).
  std::vector<int64_t> Dims(std::string_view labels, int64_t b, int64_t f, int64_t h, int64_t w) const {
    std::vector<int64_t> d;
    for (char ch : labels) d.push_back(ch == 'b' || ch == 'o' ? b : ch == 'f' || ch == 'i' ? f : ch == '0' ? h : w);
    return d;
  }
  std::string Part(int i) const {
    size_t us = dim_labels.find('_'), ar = dim_labels.find("->");
    if (i == 0) return dim_labels.substr(0, us);
    if (i == 1) return dim_labels.substr(us + 1, ar - us - 1);
    return dim_labels.substr(ar + 2);
  }
  // Kernel labels use i/o for features: b<->o, f<->i map above.
  std::vector<int64_t> InputDims() const { return Dims(Part(0), n, c, in_h, in_w); }
  std::vector<int64_t> FilterDims() const { return Dims(Part(1), o, c / groups, k_h, k_w); }
  std::vector<int64_t> OutputDims() const { return Dims(Part(2), n, o, OutH(), OutW()); }

  std::string Window() const {
    return StrCat("{size=", k_h, "x", k_w, " stride=", stride_h, "x", stride_w, " pad=", pad_lo_h, "_", pad_hi_h, "x",
                  pad_lo_w, "_", pad_hi_w, " rhs_dilate=", dil_h, "x", dil_w, "}");
  }
};

std::string ShapeText(const std::vector<int64_t>& d) { return StrCat("f32[", Join(d, ","), "]"); }

// Index of (b, f, h, w) in a tensor with `labels`.
std::vector<int64_t> At(std::string_view labels, int64_t b, int64_t f, int64_t h, int64_t w) {
  std::vector<int64_t> idx;
  for (char ch : labels) idx.push_back(ch == 'b' || ch == 'o' ? b : ch == 'f' || ch == 'i' ? f : ch == '0' ? h : w);
  return idx;
}

// Calls fn(input_index, filter_index, output_index) for every term of the
// forward convolution.
template <typename Fn>
void ForEachTerm(const ConvProblem& p, Fn&& fn) {
  int64_t og = p.o / p.groups, ig = p.c / p.groups;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t y = 0; y < p.OutH(); ++y)
        for (int64_t x = 0; x < p.OutW(); ++x)
          for (int64_t kh = 0; kh < p.k_h; ++kh)
            for (int64_t kw = 0; kw < p.k_w; ++kw)
              for (int64_t c = 0; c < ig; ++c) {
                int64_t ih = y * p.stride_h - p.pad_lo_h + kh * p.dil_h, iw = x * p.stride_w - p.pad_lo_w + kw * p.dil_w;
                if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
                fn(At(p.Part(0), n, o / og * ig + c, ih, iw), At(p.Part(1), o, c, kh, kw), At(p.Part(2), n, o, y, x));
              }
}

class ConvEvalTest : public ::testing::TestWithParam<ConvProblem> {};

TEST_P(ConvEvalTest, EveryKindMatchesTheNaiveLoop) {
  const ConvProblem& p = GetParam();
  Shape in_s(PrimitiveType::kF32, p.InputDims()), f_s(PrimitiveType::kF32, p.FilterDims()),
      out_s(PrimitiveType::kF32, p.OutputDims());
  Literal x = Random(in_s, 11), w = Random(f_s, 12), dy = Random(out_s, 13);
  std::string attrs = StrCat("window=", p.Window(), ", dim_labels=", p.dim_labels,
                             p.groups > 1 ? StrCat(", feature_group_count=", p.groups) : "");
  auto module = [&](const std::string& target, const std::string& a, const std::string& b, const std::string& result) {
    return StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b,
                  " parameter(1)\n  ROOT r = (", result, ", u8[0]) custom-call(a, b), ", attrs,
                  ", custom_call_target=\"", target, "\"\n}\n");
  };
  // Forward.
  {
    Literal want(out_s);
    ForEachTerm(p, [&](const auto& i, const auto& f, const auto& o) {
      int64_t k = want.LinearIndex(o);
      want.SetDouble(k, want.GetDouble(k) + x.GetDouble(x.LinearIndex(i)) * w.GetDouble(w.LinearIndex(f)));
    });
    absl::StatusOr<Literal> got = Eval(module("__dnn$convForward", ShapeText(p.InputDims()), ShapeText(p.FilterDims()),
                                              ShapeText(p.OutputDims())),
                                       {x, w});
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectNear(got->tuple_elements()[0], want, 1e-5);
  }
  // Backward input: operands (output_grad, filter).
  {
    Literal want(in_s);
    ForEachTerm(p, [&](const auto& i, const auto& f, const auto& o) {
      int64_t k = want.LinearIndex(i);
      want.SetDouble(k, want.GetDouble(k) + dy.GetDouble(dy.LinearIndex(o)) * w.GetDouble(w.LinearIndex(f)));
    });
    absl::StatusOr<Literal> got = Eval(module("__dnn$convBackwardInput", ShapeText(p.OutputDims()),
                                              ShapeText(p.FilterDims()), ShapeText(p.InputDims())),
                                       {dy, w});
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectNear(got->tuple_elements()[0], want, 1e-5);
  }
  // Backward filter: operands (input, output_grad).
  {
    Literal want(f_s);
    ForEachTerm(p, [&](const auto& i, const auto& f, const auto& o) {
      int64_t k = want.LinearIndex(f);
      want.SetDouble(k, want.GetDouble(k) + x.GetDouble(x.LinearIndex(i)) * dy.GetDouble(dy.LinearIndex(o)));
    });
    absl::StatusOr<Literal> got = Eval(module("__dnn$convBackwardFilter", ShapeText(p.InputDims()),
                                              ShapeText(p.OutputDims()), ShapeText(p.FilterDims())),
                                       {x, dy});
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectNear(got->tuple_elements()[0], want, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvEvalTest,
    ::testing::Values(
        // ResNet-like 3x3, NHWC / HWIO.
        ConvProblem{"b01f_01io->b01f", 2, 3, 4, 1, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        // Strided, asymmetric padding, odd sizes, NCHW / OIHW.
        ConvProblem{"bf01_oi01->bf01", 1, 5, 3, 1, 9, 8, 3, 2, 2, 3, 1, 0, 2, 1, 1, 1},
        // Dilation and feature groups.
        ConvProblem{"b01f_01io->b01f", 2, 6, 4, 2, 8, 7, 3, 3, 1, 2, 2, 2, 0, 1, 2, 1},
        // Depthwise with stride whose windows skip the last input rows.
        ConvProblem{"bf01_oi01->bf01", 1, 4, 4, 4, 10, 6, 2, 3, 3, 1, 0, 0, 1, 1, 1, 1},
        // Scrambled labels: features first, spatial swapped.
        ConvProblem{"f1b0_i1o0->1fb0", 3, 2, 5, 1, 5, 6, 2, 3, 1, 2, 1, 0, 0, 2, 1, 1}));

TEST(LibraryCallEvalTest, BiasActivationForwardAppliesScaleSideInputBiasAndRelu) {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  w = f32[1,1,2,3] parameter(1)
  bias = f32[3] parameter(2)
  side = f32[1,4,4,3] parameter(3)
  ROOT c = (f32[1,4,4,3], u8[0]) custom-call(x, w, bias, side), window={size=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":2,"side_input_scale":0.5,"activation_mode":"kRelu"}}
})";
  Literal x = Random(Shape(PrimitiveType::kF32, {1, 4, 4, 2}), 1), w = Random(Shape(PrimitiveType::kF32, {1, 1, 2, 3}), 2),
          bias = Random(Shape(PrimitiveType::kF32, {3}), 3), side = Random(Shape(PrimitiveType::kF32, {1, 4, 4, 3}), 4);
  absl::StatusOr<Literal> got = Eval(text, {x, w, bias, side});
  ASSERT_TRUE(got.ok()) << got.status().message();
  Literal want(Shape(PrimitiveType::kF32, {1, 4, 4, 3}));
  for (int64_t p = 0; p < 16; ++p) {
    for (int64_t o = 0; o < 3; ++o) {
      double acc = 0;
      for (int64_t c = 0; c < 2; ++c) acc += x.GetDouble(p * 2 + c) * w.GetDouble(c * 3 + o);
      double v = 2 * acc + 0.5 * side.GetDouble(p * 3 + o) + bias.GetDouble(o);
      want.SetDouble(p * 3 + o, std::max(v, 0.0));
    }
  }
  ExpectNear(got->tuple_elements()[0], want, 1e-5);
}

}  // namespace
}  // namespace passlab
