// Finite-difference checks of every gradient rule (f64 on the evaluator) and
// of second derivatives (reverse over reverse).
#include "models/autodiff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/verify/hlo_verifier.h"
#include "models/layers.h"

namespace passlab {
namespace {

constexpr PrimitiveType kF64 = PrimitiveType::kF64;
using Fn = std::function<Op(HloBuilder&, const std::vector<Op>&)>;

// Builds loss = sum(f(params) * r) with a fixed random r, its gradients, and
// compares each gradient with central differences of the loss.
void CheckGradients(const std::vector<Shape>& shapes, const Fn& f, double tolerance = 1e-6,
                    uint64_t seed = 1, const std::function<void(std::vector<Literal>&)>& fix_args = nullptr) {
  HloModule module("grad_check");
  HloBuilder b(&module, "main");
  std::vector<Op> params;
  for (size_t i = 0; i < shapes.size(); ++i) params.push_back(b.Parameter(shapes[i], "p" + std::to_string(i)));
  Op out = f(b, params);
  ASSERT_TRUE(b.ok()) << b.status();
  Literal r = MakeRandomLiteral(out->shape(), seed + 100);
  Op loss = out->shape().IsScalar() ? out : b.ReduceSum(b.Mul(out, b.ConstantLiteral(std::move(r))), [&] {
    std::vector<int64_t> all;
    for (int64_t d = 0; d < out->shape().rank(); ++d) all.push_back(d);
    return all;
  }());
  std::vector<Op> xs;
  for (Op p : params) {
    if (IsFloatingPointType(p->shape().element_type())) xs.push_back(p);
  }
  auto grads = Gradients(b, loss, xs);
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<Op> outs = {loss};
  outs.insert(outs.end(), grads->begin(), grads->end());
  ASSERT_TRUE(b.Build(outs).ok()) << b.status();
  ASSERT_TRUE(VerifyModule(module).ok()) << VerifyModule(module);

  std::vector<Literal> args = MakeRandomArguments(*module.entry_computation(), seed);
  if (fix_args) fix_args(args);
  HloEvaluator ev;
  auto base = ev.Evaluate(module, args);
  ASSERT_TRUE(base.ok()) << base.status();
  const double h = 1e-5;
  int64_t g_index = 1;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!IsFloatingPointType(params[i]->shape().element_type())) continue;
    const Literal& grad = base->tuple_elements()[g_index++];
    int64_t n = args[i].element_count();
    int64_t step = std::max<int64_t>(1, n / 7);
    for (int64_t j = 0; j < n; j += step) {
      double x0 = args[i].GetDouble(j);
      args[i].SetDouble(j, x0 + h);
      double up = ev.Evaluate(module, args)->tuple_elements()[0].GetDouble(0);
      args[i].SetDouble(j, x0 - h);
      double down = ev.Evaluate(module, args)->tuple_elements()[0].GetDouble(0);
      args[i].SetDouble(j, x0);
      double fd = (up - down) / (2 * h);
      EXPECT_NEAR(grad.GetDouble(j), fd, tolerance * std::max(1.0, std::fabs(fd)))
          << "parameter " << i << " element " << j;
    }
  }
}

Shape F(std::vector<int64_t> dims) { return Shape(kF64, std::move(dims)); }

TEST(AutodiffTest, ElementwiseRules) {
  CheckGradients({F({3, 4}), F({3, 4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op s = b.Sub(b.Add(p[0], p[1]), b.Mul(p[0], p[1]));
    Op t = b.Tanh(b.Neg(s));
    Op e = b.Exp(b.MulScalar(p[1], 0.5));
    return b.Add(b.Div(t, b.AddScalar(b.Mul(p[0], p[0]), 1.5)), e);
  });
}

TEST(AutodiffTest, LogSqrtRsqrtOfPositiveValues) {
  CheckGradients({F({5})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op pos = b.AddScalar(b.Mul(p[0], p[0]), 0.5);
    return b.Add(b.Add(b.Log(pos), b.Sqrt(pos)), b.Rsqrt(pos));
  });
}

TEST(AutodiffTest, MaxMinSelectRelu) {
  CheckGradients({F({4, 3}), F({4, 3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op m = b.Max(p[0], p[1]);
    Op n = b.Binary(HloOpcode::kMinimum, p[0], b.MulScalar(p[1], 0.3));
    Op sel = b.Select(b.Compare(p[0], b.Full(p[0]->shape(), 0.1), ComparisonDirection::kGt), m, n);
    return b.Add(Relu(b, sel), b.Mul(m, n));
  }, 1e-6, 1, [](std::vector<Literal>& args) {
    // Away from ties and kinks, where finite differences are exact.
    for (int64_t j = 0; j < 12; ++j) {
      args[0].SetDouble(j, std::sin(2.1 * j + 0.2));
      args[1].SetDouble(j, std::cos(1.3 * j + 0.5));
    }
  });
}

TEST(AutodiffTest, ShapeRules) {
  CheckGradients({F({2, 3, 4}), F({3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op t = b.Transpose(p[0], {2, 0, 1});                       // [4,2,3]
    Op r = b.Reshape(t, {8, 3});
    Op bc = b.Broadcast(p[1], {8, 3}, {1});
    Op sl = b.Slice(b.Mul(r, bc), {1, 0}, {8, 3}, {2, 2});       // [4,2]
    Op pad = b.Pad(sl, b.ConstantScalar(kF64, 0), PaddingConfig{{{1, 0, 1}, {0, 2, 0}}});  // [8,4]
    Op cat = b.Concatenate({pad, b.Reverse(pad, {0})}, 1);      // [8,8]
    Op bt = b.Broadcast(b.Reshape(b.Slice(p[1], {0}, {2}), {2}), {2, 8}, {0});
    Op bt2 = b.Broadcast(bt, {8, 2, 8}, {1, 2});  // broadcast into the middle
    Op tr = b.Transpose(bt2, {1, 0, 2});          // [2,8,8]
    return b.Add(b.Reshape(b.Convert(cat, kF64), {1, 8, 8}), b.ReduceSum(tr, {0}) == nullptr ? nullptr : b.Reshape(b.ReduceSum(tr, {0}), {1, 8, 8}));
  });
}

TEST(AutodiffTest, ConvertAndCopy) {
  // Through f32 and back: the gradient converts back to f64 (f32 rounding
  // over the finite-difference step of 1e-5 bounds the tolerance).
  CheckGradients({F({2, 3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op narrow = b.Convert(b.Unary(HloOpcode::kCopy, p[0]), PrimitiveType::kF32);
    return b.Convert(b.Mul(narrow, narrow), kF64);
  }, 1e-2);
}

TEST(AutodiffTest, UnsortedBroadcastDimensions) {
  CheckGradients({F({3, 2})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Broadcast(p[0], {2, 4, 3}, {2, 0});
  });
}

TEST(AutodiffTest, DotGeneral) {
  // Batch dim 0; lhs contracting 1 with rhs 2; lhs free 2, rhs free 1.
  CheckGradients({F({2, 3, 4}), F({2, 5, 3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    DotDimensionNumbers d;
    d.lhs_batch_dimensions = {0};
    d.rhs_batch_dimensions = {0};
    d.lhs_contracting_dimensions = {1};
    d.rhs_contracting_dimensions = {2};
    return b.Dot(p[0], p[1], d);
  });
  // Two contracting dimensions in crossed order.
  CheckGradients({F({3, 4, 2}), F({2, 6, 4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    DotDimensionNumbers d;
    d.lhs_contracting_dimensions = {1, 2};
    d.rhs_contracting_dimensions = {2, 0};
    return b.Dot(p[0], p[1], d);
  });
}

TEST(AutodiffTest, ReduceAddAndMax) {
  CheckGradients({F({3, 5})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Add(b.ReduceSum(p[0], {1}), b.ReduceMax(b.Mul(p[0], p[0]), {1}));
  });
}

ConvolutionDimensionNumbers Nhwc() {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0; d.input_feature_dimension = 3; d.input_spatial_dimensions = {1, 2};
  d.kernel_spatial_dimensions = {0, 1}; d.kernel_input_feature_dimension = 2; d.kernel_output_feature_dimension = 3;
  d.output_batch_dimension = 0; d.output_feature_dimension = 3; d.output_spatial_dimensions = {1, 2};
  return d;
}

TEST(AutodiffTest, ConvolutionStride1Pad1) {
  CheckGradients({F({2, 5, 5, 3}), F({3, 3, 3, 4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {1, 1}, {{1, 1}, {1, 1}}), Nhwc());
  });
}

TEST(AutodiffTest, ConvolutionStride2OddSizes) {
  // 7x6 input, 3x3 window, stride 2, pad 1: the stride does not divide evenly.
  CheckGradients({F({1, 7, 6, 2}), F({3, 3, 2, 3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 2}, {{1, 1}, {1, 1}}), Nhwc());
  });
  // 7x7 window, stride 2, pad 3 (the ResNet stem) and 1x1 stride 2 (downsample).
  CheckGradients({F({1, 9, 9, 1}), F({7, 7, 1, 2})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({7, 7}, {2, 2}, {{3, 3}, {3, 3}}), Nhwc());
  });
  CheckGradients({F({2, 6, 6, 3}), F({1, 1, 3, 2})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({1, 1}, {2, 2}, {}), Nhwc());
  });
}

TEST(AutodiffTest, ConvolutionNchw) {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0; d.input_feature_dimension = 1; d.input_spatial_dimensions = {2, 3};
  d.kernel_output_feature_dimension = 0; d.kernel_input_feature_dimension = 1; d.kernel_spatial_dimensions = {2, 3};
  d.output_batch_dimension = 0; d.output_feature_dimension = 1; d.output_spatial_dimensions = {2, 3};
  CheckGradients({F({2, 2, 6, 5}), F({3, 2, 3, 3})}, [d](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 1}, {{1, 1}, {1, 1}}), d);
  });
}

// Depthwise (feature_group_count = channels, as MobileNet's 3x3 layers):
// backward-data is a depthwise convolution of the output gradient with the
// regrouped, reversed kernel, backward-filter a convolution with
// batch_group_count = channels (jax/_src/lax/convolution.py's transpose
// rules; XLA's convolution_group_converter handles the same forms).
TEST(AutodiffTest, DepthwiseConvolution) {
  // stride 1, pad 1; 3 channels, multiplier 1: kernel [3, 3, 1, 3].
  CheckGradients({F({2, 5, 5, 3}), F({3, 3, 1, 3})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {1, 1}, {{1, 1}, {1, 1}}), Nhwc(), /*feature_group_count=*/3);
  });
  // stride 2 over odd sizes, channel multiplier 2: kernel [3, 3, 1, 6].
  CheckGradients({F({1, 7, 6, 3}), F({3, 3, 1, 6})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 2}, {{1, 1}, {1, 1}}), Nhwc(), 3);
  });
}

TEST(AutodiffTest, GroupedConvolutionNhwcAndNchw) {
  // 2 groups of 2 input channels, 6 output channels (3 per group).
  CheckGradients({F({2, 5, 4, 4}), F({3, 3, 2, 6})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 1}, {{1, 1}, {0, 1}}), Nhwc(), 2);
  });
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0; d.input_feature_dimension = 1; d.input_spatial_dimensions = {2, 3};
  d.kernel_output_feature_dimension = 0; d.kernel_input_feature_dimension = 1; d.kernel_spatial_dimensions = {2, 3};
  d.output_batch_dimension = 0; d.output_feature_dimension = 1; d.output_spatial_dimensions = {2, 3};
  // Depthwise in NCHW / OIHW: kernel [4, 1, 3, 3].
  CheckGradients({F({2, 4, 5, 5}), F({4, 1, 3, 3})}, [d](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 2}, {{1, 1}, {1, 1}}), d, 4);
  });
  // 3 groups, kernel [6, 2, 3, 3] (input 6 channels, output 6).
  CheckGradients({F({1, 6, 4, 5}), F({6, 2, 3, 3})}, [d](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {1, 1}, {{1, 1}, {1, 1}}), d, 3);
  });
}

// A batch-grouped convolution (what a depthwise backward-filter is) has a
// gradient too: its backward-filter is feature-grouped, its backward-data
// moves the groups back into the batch.
TEST(AutodiffTest, BatchGroupedConvolution) {
  // Batch 4 = 2 groups x 2, 3 input features, 4 output features (2 per group).
  CheckGradients({F({4, 5, 5, 3}), F({3, 3, 3, 4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.Convolution(p[0], p[1], MakeWindow({3, 3}, {2, 1}, {{1, 1}, {1, 1}}), Nhwc(),
                         /*feature_group_count=*/1, /*batch_group_count=*/2);
  });
}

TEST(AutodiffTest, MaxPoolSelectAndScatter) {
  // Distinct values so the maximum is unique (finite differences are then exact).
  CheckGradients({F({1, 6, 6, 2})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Window w = MakeWindow({1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}});
    return b.ReduceWindow(p[0], b.ConstantScalar(kF64, -INFINITY), w, ReducerKind::kMax);
  }, 1e-6, 1, [](std::vector<Literal>& args) {
    for (int64_t j = 0; j < args[0].element_count(); ++j) args[0].SetDouble(j, std::sin(1.7 * j + 0.3) * (1 + 0.01 * j));
  });
}

TEST(AutodiffTest, BatchNormTraining) {
  CheckGradients({F({4, 3, 3, 2}), F({2}), F({2})}, [](HloBuilder& b, const std::vector<Op>& p) {
    return b.GetTupleElement(b.BatchNormTraining(p[0], p[1], p[2], 0.001f, 3), 0);
  }, 1e-5);
}

TEST(AutodiffTest, GatherEmbeddingScatterAdd) {
  CheckGradients({F({6, 3}), Shape(PrimitiveType::kS32, {2, 4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    GatherDimensionNumbers d;
    d.offset_dims = {2};
    d.collapsed_slice_dims = {0};
    d.start_index_map = {0};
    d.index_vector_dim = 2;
    return b.Gather(p[0], p[1], d, {1, 3});
  }, 1e-6, 1, [](std::vector<Literal>& args) {
    const int ids[8] = {0, 2, 2, 5, 1, 0, 5, 5};  // repeated ids accumulate
    for (int j = 0; j < 8; ++j) args[1].SetInt(j, ids[j]);
  });
}

TEST(AutodiffTest, LayerNormSoftmaxGeluAndCrossEntropy) {
  CheckGradients({F({3, 4}), F({4}), F({4})}, [](HloBuilder& b, const std::vector<Op>& p) {
    Op ln = LayerNorm(b, p[0], p[1], p[2], 1e-5);
    return b.Add(Softmax(b, Gelu(b, ln)), ln);
  }, 1e-5);
}

TEST(AutodiffTest, SecondDerivativesReverseOverReverse) {
  // u = sum(tanh(x . w)); Laplacian-like: d/dx (du/dx) through the gradient ops.
  HloModule module("second");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(F({1, 2}), "x");
  Op w = b.Parameter(F({2, 1}), "w");
  Op u = b.ReduceSum(b.Tanh(b.MatMul(x, w)), {0, 1});
  auto g = Gradients(b, u, {x});
  ASSERT_TRUE(g.ok()) << g.status();
  Op gx0 = b.ReduceSum(b.Slice((*g)[0], {0, 0}, {1, 1}), {0, 1});  // du/dx0
  auto h = Gradients(b, gx0, {x});
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_TRUE(b.Build({u, (*g)[0], (*h)[0]}).ok()) << b.status();
  Literal xv = Literal::FromDoubles(F({1, 2}), {0.3, -0.4});
  Literal wv = Literal::FromDoubles(F({2, 1}), {0.7, 1.1});
  auto out = HloEvaluator().Evaluate(module, {xv, wv});
  ASSERT_TRUE(out.ok()) << out.status();
  double z = 0.3 * 0.7 - 0.4 * 1.1, t = std::tanh(z), s = 1 - t * t;
  EXPECT_NEAR(out->tuple_elements()[1].GetDouble(0), s * 0.7, 1e-12);
  EXPECT_NEAR(out->tuple_elements()[1].GetDouble(1), s * 1.1, 1e-12);
  // d2u/dx0^2 = -2 t s w0^2; d2u/dx0dx1 = -2 t s w0 w1.
  EXPECT_NEAR(out->tuple_elements()[2].GetDouble(0), -2 * t * s * 0.7 * 0.7, 1e-12);
  EXPECT_NEAR(out->tuple_elements()[2].GetDouble(1), -2 * t * s * 0.7 * 1.1, 1e-12);
}

TEST(AutodiffTest, UnsupportedOpIsAClearError) {
  HloModule module("bad");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(F({3}), "x");
  Op y = b.ReduceSum(b.Unary(HloOpcode::kCos, x), {0});
  auto g = Gradients(b, y, {x});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("(cosine): no gradient rule"), std::string::npos) << g.status();
}

TEST(AutodiffTest, NonScalarOutputNeedsASeed) {
  HloModule module("bad");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(F({3}), "x");
  auto g = Gradients(b, b.Exp(x), {x});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("not a scalar"), std::string::npos);
}

TEST(AutodiffTest, BuildGradientModule) {
  HloModule module("loss");
  HloBuilder b(&module, "main");
  Op x = b.Parameter(F({3}), "x");
  Op y = b.ReduceSum(b.Mul(x, x), {0});
  ASSERT_TRUE(b.Build(y).ok());
  auto g = BuildGradientModule(module);
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(VerifyModule(**g).ok());
  auto out = HloEvaluator().Evaluate(**g, {Literal::FromDoubles(F({3}), {1, -2, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->tuple_elements()[0].GetDouble(0), 14);
  EXPECT_EQ(out->tuple_elements()[1].GetDouble(1), -4);
}

}  // namespace
}  // namespace passlab
