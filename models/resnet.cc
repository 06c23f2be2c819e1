#include "models/resnet.h"

#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {
namespace {

class ResNetBuilder {
 public:
  ResNetBuilder(const ResNetConfig& c, HloModule* module)
      : c_(c), b_(module, c.inference ? "resnet_inference" : "resnet_train_step") {
    nhwc_ = c.layout == ImageLayout::kNhwc;
    feature_ = nhwc_ ? 3 : 1;
  }

  absl::StatusOr<HloComputation*> Build() {
    std::vector<int64_t> blocks;
    bool bottleneck = c_.depth >= 50;
    switch (c_.depth) {
      case 18: blocks = {2, 2, 2, 2}; break;
      case 34: blocks = {3, 4, 6, 3}; break;
      case 50: blocks = {3, 4, 6, 3}; break;
      case 101: blocks = {3, 4, 23, 3}; break;
      case 152: blocks = {3, 8, 36, 3}; break;
      default:
        return absl::InvalidArgumentError(StrCat("resnet: depth must be 18, 34, 50, 101 or 152, got ", c_.depth));
    }
    if (c_.batch < 1 || c_.image_size < 1 || c_.classes < 1 || c_.base_width < 1) {
      return absl::InvalidArgumentError("resnet: batch, image size, classes and width must be positive");
    }
    if (c_.dtype != PrimitiveType::kF32 && c_.dtype != PrimitiveType::kBF16 && c_.dtype != PrimitiveType::kF64) {
      return absl::InvalidArgumentError(StrCat("resnet: dtype must be f32, bf16 or f64, got ", PrimitiveTypeName(c_.dtype)));
    }
    HloBuilder::ScopedName model(b_, StrCat("resnet", c_.depth));
    images_ = b_.Parameter(nhwc_ ? Shape(c_.dtype, {c_.batch, c_.image_size, c_.image_size, 3})
                                 : Shape(c_.dtype, {c_.batch, 3, c_.image_size, c_.image_size}),
                           "images");
    if (!c_.inference) labels_ = b_.Parameter(Shape(PrimitiveType::kF32, {c_.batch, c_.classes}), "labels");

    Op x;
    int64_t channels = c_.base_width;
    {
      HloBuilder::ScopedName stem(b_, "stem");
      x = ConvBn(images_, 3, channels, 7, 2, "conv1", /*relu=*/true);
      HloBuilder::ScopedName pool(b_, "maxpool");
      HloBuilder::ScopedOpType type(b_, "MaxPool");
      Window w = nhwc_ ? MakeWindow({1, 3, 3, 1}, {1, 2, 2, 1}, {{0, 0}, {1, 1}, {1, 1}, {0, 0}})
                       : MakeWindow({1, 1, 3, 3}, {1, 1, 2, 2}, {{0, 0}, {0, 0}, {1, 1}, {1, 1}});
      x = b_.ReduceWindow(x, b_.ConstantScalar(c_.dtype, -INFINITY), w, ReducerKind::kMax);
    }
    int64_t expansion = bottleneck ? 4 : 1;
    for (int64_t layer = 0; layer < 4; ++layer) {
      HloBuilder::ScopedName layer_scope(b_, StrCat("layer", layer + 1));
      int64_t width = c_.base_width << layer;
      for (int64_t block = 0; block < blocks[layer]; ++block) {
        HloBuilder::ScopedName block_scope(b_, StrCat("block", block));
        int64_t stride = (layer > 0 && block == 0) ? 2 : 1;
        int64_t out = width * expansion;
        Op shortcut = x;
        if (stride != 1 || channels != out) {
          HloBuilder::ScopedName ds(b_, "downsample");
          shortcut = ConvBn(x, channels, out, 1, stride, "conv", false);
        }
        Op y;
        if (bottleneck) {
          y = ConvBn(x, channels, width, 1, 1, "conv1", true);
          y = ConvBn(y, width, width, 3, stride, "conv2", true);
          y = ConvBn(y, width, out, 1, 1, "conv3", false);
        } else {
          y = ConvBn(x, channels, width, 3, stride, "conv1", true);
          y = ConvBn(y, width, width, 3, 1, "conv2", false);
        }
        {
          HloBuilder::ScopedName add(b_, "residual");
          HloBuilder::ScopedOpType type(b_, "AddV2");
          y = b_.Add(y, shortcut);
        }
        x = Relu(b_, y);
        channels = out;
      }
    }
    Op logits;
    {
      HloBuilder::ScopedName head(b_, "head");
      HloBuilder::ScopedOpType type(b_, "GlobalAveragePool");
      std::vector<int64_t> spatial = nhwc_ ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{2, 3};
      Op pooled = x == nullptr ? nullptr : b_.ReduceSum(x, spatial);
      if (pooled != nullptr) {
        int64_t hw = x->shape().dimensions(spatial[0]) * x->shape().dimensions(spatial[1]);
        pooled = b_.MulScalar(pooled, 1.0 / static_cast<double>(hw));
      }
      HloBuilder::ScopedName fc(b_, "fc");
      Op w = Param(Shape(c_.dtype, {channels, c_.classes}), "fc.weight");
      Op bias = Param(Shape(c_.dtype, {c_.classes}), "fc.bias");
      logits = Dense(b_, pooled, w, bias);
    }
    std::vector<Op> outputs;
    if (c_.inference) {
      outputs.push_back(b_.Convert(logits, c_.dtype == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32));
    } else {
      Op loss = SoftmaxCrossEntropy(b_, logits, labels_);
      {
        HloBuilder::ScopedName opt(b_, "sgd");
        momentum_ = MomentumParameters(b_, params_);
      }
      ASSIGN_OR_RETURN(std::vector<Op> step, SgdMomentumStep(
          b_, loss, params_, momentum_, SgdOptions{c_.learning_rate, c_.momentum, c_.weight_decay}));
      outputs = std::move(step);
      outputs.insert(outputs.end(), new_stats_.begin(), new_stats_.end());
    }
    if (!b_.ok()) return b_.status();
    // Parameter order: params, momentum, running statistics, images, labels.
    int64_t n = 0;
    for (Op p : params_) p->set_index(n++);
    for (Op p : momentum_) p->set_index(n++);
    for (Op p : stats_) p->set_index(n++);
    images_->set_index(n++);
    if (labels_ != nullptr) labels_->set_index(n++);
    b_.computation()->RebuildParameterList();
    return b_.Build(outputs);
  }

 private:
  Op Param(const Shape& shape, std::string name) {
    Op p = b_.Parameter(shape, name);
    if (p != nullptr) params_.push_back(p);
    return p;
  }

  // convolution (no bias) -> batch norm -> optional relu.
  Op ConvBn(Op x, int64_t cin, int64_t cout, int64_t k, int64_t stride, const std::string& name, bool relu) {
    HloBuilder::ScopedName scope(b_, name);
    std::string path = b_.ScopePath();
    // Parameter names: the scope path without the model prefix, '/' -> '.'.
    std::string pname = path.substr(path.find('/') + 1);
    for (char& ch : pname) ch = ch == '/' ? '.' : ch;
    Op w = Param(nhwc_ ? Shape(c_.dtype, {k, k, cin, cout}) : Shape(c_.dtype, {cout, cin, k, k}), pname + ".weight");
    Op y;
    {
      HloBuilder::ScopedOpType type(b_, "Conv2D");
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
      y = b_.Convolution(x, w, MakeWindow({k, k}, {stride, stride}, {{pad, pad}, {pad, pad}}), d);
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
    Op y32 = b_.Convert(y, bn_type);
    Op normed;
    if (c_.inference) {
      normed = b_.BatchNormInference(y32, gamma, beta, mean, var, c_.bn_epsilon, feature_);
    } else {
      Op bn = b_.BatchNormTraining(y32, gamma, beta, c_.bn_epsilon, feature_);
      normed = b_.GetTupleElement(bn, 0);
      double m = c_.bn_momentum;
      new_stats_.push_back(b_.Add(b_.MulScalar(mean, 1 - m), b_.MulScalar(b_.GetTupleElement(bn, 1), m)));
      new_stats_.push_back(b_.Add(b_.MulScalar(var, 1 - m), b_.MulScalar(b_.GetTupleElement(bn, 2), m)));
    }
    normed = b_.Convert(normed, c_.dtype);
    return relu ? Relu(b_, normed) : normed;
  }

  const ResNetConfig& c_;
  HloBuilder b_;
  bool nhwc_ = true;
  int64_t feature_ = 3;
  Op images_ = nullptr;
  Op labels_ = nullptr;
  std::vector<Op> params_, momentum_, stats_, new_stats_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> BuildResNet(const ResNetConfig& config) {
  auto module = std::make_unique<HloModule>(
      StrCat("resnet", config.depth, config.inference ? "_inference" : "_train_step"));
  ResNetBuilder builder(config, module.get());
  ASSIGN_OR_RETURN(HloComputation* built, builder.Build());
  return module;
}

absl::StatusOr<int64_t> ResNetParameterCount(const ResNetConfig& config) {
  ResNetConfig c = config;
  c.inference = true;
  c.batch = 1;
  c.image_size = 32;
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, BuildResNet(c));
  int64_t n = 0;
  for (const HloInstruction* p : m->entry_computation()->parameter_instructions()) {
    const std::string& name = p->name();
    bool is_stat = name.find("running_") != std::string::npos;
    if (!is_stat && name != "images") n += p->shape().element_count();
  }
  return n;
}

}  // namespace passlab
