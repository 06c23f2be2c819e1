#include "models/mobilenet_v2.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {
namespace {

// torchvision's _make_divisible: the nearest multiple of 8, at least 8, and
// not more than 10% below v.
int64_t MakeDivisible(double v) {
  constexpr int64_t kDivisor = 8;
  int64_t rounded = std::max<int64_t>(kDivisor, static_cast<int64_t>(v + kDivisor / 2.0) / kDivisor * kDivisor);
  if (static_cast<double>(rounded) < 0.9 * v) rounded += kDivisor;
  return rounded;
}

struct BlockPlan {
  int64_t in, hidden, out, stride;
  bool expand, residual;
};

struct ChannelPlan {
  int64_t stem;
  std::vector<BlockPlan> blocks;
  int64_t head;
};

ChannelPlan PlanChannels(double width) {
  struct Stage {
    int64_t t, c, n, s;
  };
  static constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  ChannelPlan plan;
  plan.stem = MakeDivisible(32 * width);
  int64_t in = plan.stem;
  for (const Stage& stage : kStages) {
    int64_t out = MakeDivisible(static_cast<double>(stage.c) * width);
    for (int64_t i = 0; i < stage.n; ++i) {
      BlockPlan block;
      block.in = in;
      block.hidden = in * stage.t;
      block.out = out;
      block.stride = i == 0 ? stage.s : 1;
      block.expand = stage.t != 1;
      block.residual = block.stride == 1 && in == out;
      plan.blocks.push_back(block);
      in = out;
    }
  }
  plan.head = MakeDivisible(1280 * std::max(1.0, width));
  return plan;
}

class MobileNetV2Builder {
 public:
  MobileNetV2Builder(const MobileNetV2Config& c, HloModule* module) : c_(c), b_(module, "mobilenet_v2_train_step") {
    nhwc_ = c.layout == ImageLayout::kNhwc;
    feature_ = nhwc_ ? 3 : 1;
  }

  absl::StatusOr<HloComputation*> Build() {
    if (c_.batch < 1 || c_.image_size < 1 || c_.classes < 1 || !(c_.width_multiplier > 0)) {
      return absl::InvalidArgumentError("mobilenet_v2: batch, image size, classes and width must be positive");
    }
    if (c_.dtype != PrimitiveType::kF32 && c_.dtype != PrimitiveType::kBF16 && c_.dtype != PrimitiveType::kF64) {
      return absl::InvalidArgumentError(
          StrCat("mobilenet_v2: dtype must be f32, bf16 or f64, got ", PrimitiveTypeName(c_.dtype)));
    }
    ChannelPlan plan = PlanChannels(c_.width_multiplier);
    HloBuilder::ScopedName model(b_, "mobilenet_v2");
    images_ = b_.Parameter(nhwc_ ? Shape(c_.dtype, {c_.batch, c_.image_size, c_.image_size, 3})
                                 : Shape(c_.dtype, {c_.batch, 3, c_.image_size, c_.image_size}),
                           "images");
    labels_ = b_.Parameter(Shape(PrimitiveType::kF32, {c_.batch, c_.classes}), "labels");

    Op x;
    {
      HloBuilder::ScopedName stem(b_, "stem");
      x = ConvBn(images_, 3, plan.stem, 3, 2, /*groups=*/1, "conv", /*relu6=*/true);
    }
    for (size_t i = 0; i < plan.blocks.size(); ++i) {
      const BlockPlan& block = plan.blocks[i];
      HloBuilder::ScopedName block_scope(b_, StrCat("block", i));
      Op y = x;
      if (block.expand) y = ConvBn(y, block.in, block.hidden, 1, 1, 1, "expand", true);
      y = ConvBn(y, block.hidden, block.hidden, 3, block.stride, /*groups=*/block.hidden, "depthwise", true);
      y = ConvBn(y, block.hidden, block.out, 1, 1, 1, "project", false);
      if (block.residual) {
        HloBuilder::ScopedName add(b_, "residual");
        HloBuilder::ScopedOpType type(b_, "AddV2");
        y = b_.Add(y, x);
      }
      x = y;
    }
    Op logits;
    {
      HloBuilder::ScopedName head(b_, "head");
      x = ConvBn(x, plan.blocks.back().out, plan.head, 1, 1, 1, "conv", true);
      HloBuilder::ScopedOpType type(b_, "GlobalAveragePool");
      std::vector<int64_t> spatial = nhwc_ ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{2, 3};
      Op pooled = x == nullptr ? nullptr : b_.ReduceSum(x, spatial);
      if (pooled != nullptr) {
        int64_t hw = x->shape().dimensions(spatial[0]) * x->shape().dimensions(spatial[1]);
        pooled = b_.MulScalar(pooled, 1.0 / static_cast<double>(hw));
      }
      HloBuilder::ScopedName fc(b_, "fc");
      Op w = Param(Shape(c_.dtype, {plan.head, c_.classes}), "fc.weight");
      Op bias = Param(Shape(c_.dtype, {c_.classes}), "fc.bias");
      logits = Dense(b_, pooled, w, bias);
    }
    Op loss = SoftmaxCrossEntropy(b_, logits, labels_);
    {
      HloBuilder::ScopedName opt(b_, "sgd");
      momentum_ = MomentumParameters(b_, params_);
    }
    ASSIGN_OR_RETURN(std::vector<Op> outputs, SgdMomentumStep(
        b_, loss, params_, momentum_, SgdOptions{c_.learning_rate, c_.momentum, c_.weight_decay}));
    outputs.insert(outputs.end(), new_stats_.begin(), new_stats_.end());
    // Parameter order: params, momentum, running statistics, images, labels.
    int64_t n = 0;
    for (Op p : params_) p->set_index(n++);
    for (Op p : momentum_) p->set_index(n++);
    for (Op p : stats_) p->set_index(n++);
    images_->set_index(n++);
    labels_->set_index(n++);
    b_.computation()->RebuildParameterList();
    return b_.Build(outputs);
  }

 private:
  Op Param(const Shape& shape, std::string name) {
    Op p = b_.Parameter(shape, name);
    if (p != nullptr) params_.push_back(p);
    return p;
  }

  // convolution (no bias; `groups` feature groups, cin / groups input
  // channels per kernel) -> batch norm (training mode) -> optional ReLU6.
  Op ConvBn(Op x, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t groups, const std::string& name,
            bool relu6) {
    HloBuilder::ScopedName scope(b_, name);
    std::string path = b_.ScopePath();
    // Parameter names: the scope path without the model prefix, '/' -> '.'.
    std::string pname = path.substr(path.find('/') + 1);
    for (char& ch : pname) ch = ch == '/' ? '.' : ch;
    int64_t kin = cin / groups;
    Op w = Param(nhwc_ ? Shape(c_.dtype, {k, k, kin, cout}) : Shape(c_.dtype, {cout, kin, k, k}), pname + ".weight");
    Op y;
    {
      HloBuilder::ScopedOpType type(b_, groups == 1 ? "Conv2D" : "DepthwiseConv2dNative");
      ConvolutionDimensionNumbers d;
      if (nhwc_) {
        d.input_batch_dimension = 0; d.input_feature_dimension = 3; d.input_spatial_dimensions = {1, 2};
        d.kernel_spatial_dimensions = {0, 1}; d.kernel_input_feature_dimension = 2; d.kernel_output_feature_dimension = 3;
        d.output_batch_dimension = 0; d.output_feature_dimension = 3; d.output_spatial_dimensions = {1, 2};
      } else {
        d.input_batch_dimension = 0; d.input_feature_dimension = 1; d.input_spatial_dimensions = {2, 3};
        d.kernel_output_feature_dimension = 0; d.kernel_input_feature_dimension = 1; d.kernel_spatial_dimensions = {2, 3};
        d.output_batch_dimension = 0; d.output_feature_dimension = 1; d.output_spatial_dimensions = {2, 3};
      }
      int64_t pad = k / 2;
      y = b_.Convolution(x, w, MakeWindow({k, k}, {stride, stride}, {{pad, pad}, {pad, pad}}), d, groups);
    }
    HloBuilder::ScopedName bn_scope(b_, "bn");
    HloBuilder::ScopedOpType type(b_, "FusedBatchNormV3");
    // Batch norm in f32 (f64 models stay f64, for gradient checks).
    PrimitiveType bn_type = c_.dtype == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
    Op gamma = Param(Shape(bn_type, {cout}), pname + ".bn.scale");
    Op beta = Param(Shape(bn_type, {cout}), pname + ".bn.offset");
    Op mean = b_.Parameter(Shape(bn_type, {cout}), pname + ".bn.running_mean");
    Op var = b_.Parameter(Shape(bn_type, {cout}), pname + ".bn.running_var");
    stats_.push_back(mean);
    stats_.push_back(var);
    Op bn = b_.BatchNormTraining(b_.Convert(y, bn_type), gamma, beta, c_.bn_epsilon, feature_);
    double m = c_.bn_momentum;
    new_stats_.push_back(b_.Add(b_.MulScalar(mean, 1 - m), b_.MulScalar(b_.GetTupleElement(bn, 1), m)));
    new_stats_.push_back(b_.Add(b_.MulScalar(var, 1 - m), b_.MulScalar(b_.GetTupleElement(bn, 2), m)));
    Op normed = b_.Convert(b_.GetTupleElement(bn, 0), c_.dtype);
    return relu6 ? Relu6(b_, normed) : normed;
  }

  const MobileNetV2Config& c_;
  HloBuilder b_;
  bool nhwc_ = true;
  int64_t feature_ = 3;
  Op images_ = nullptr;
  Op labels_ = nullptr;
  std::vector<Op> params_, momentum_, stats_, new_stats_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> BuildMobileNetV2(const MobileNetV2Config& config) {
  auto module = std::make_unique<HloModule>("mobilenet_v2_train_step");
  MobileNetV2Builder builder(config, module.get());
  ASSIGN_OR_RETURN(HloComputation* built, builder.Build());
  return module;
}

int64_t MobileNetV2ParameterCount(const MobileNetV2Config& config) {
  ChannelPlan plan = PlanChannels(config.width_multiplier);
  // A convolution without bias plus its batch norm's scale and offset.
  auto conv_bn = [](int64_t kernel_elements, int64_t cout) { return kernel_elements + 2 * cout; };
  int64_t n = conv_bn(3 * 3 * 3 * plan.stem, plan.stem);
  for (const BlockPlan& block : plan.blocks) {
    if (block.expand) n += conv_bn(block.in * block.hidden, block.hidden);
    n += conv_bn(3 * 3 * block.hidden, block.hidden);
    n += conv_bn(block.hidden * block.out, block.out);
  }
  n += conv_bn(plan.blocks.back().out * plan.head, plan.head);
  return n + plan.head * config.classes + config.classes;
}

}  // namespace passlab
