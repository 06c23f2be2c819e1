#include "models/model_registry.h"

#include <algorithm>

#include "core/ir/str_util.h"
#include "models/embedding.h"
#include "models/gelu.h"
#include "models/laplace_pinn.h"
#include "models/mlp.h"
#include "models/mobilenet_v2.h"
#include "models/resnet.h"
#include "models/transformer.h"

namespace passlab {
namespace {

ModelInfo ResNetInfo(int depth, bool inference) {
  ModelInfo info;
  info.name = StrCat("resnet", depth, inference ? "-inference" : "");
  info.description = StrCat("ResNet-", depth, depth >= 50 ? " (bottleneck blocks)" : " (basic blocks)",
                            inference ? ", inference (batch-norm-inference, logits out)"
                                      : " training step: batch-norm-training, softmax cross-entropy, "
                                        "backward, SGD with momentum and weight decay");
  info.options = {"batch", "image-size", "classes", "dtype", "width", "layout"};
  if (!inference) info.options.push_back("inference");
  info.defaults = "batch 8, 64x64, 1000 classes, f32, width 64, nhwc";
  info.build = [depth, inference](const ModelOptions& o) {
    ResNetConfig c;
    c.depth = depth;
    c.batch = o.batch.value_or(8);
    c.image_size = o.image_size.value_or(64);
    c.classes = o.classes.value_or(1000);
    c.dtype = o.dtype.value_or(PrimitiveType::kF32);
    c.base_width = o.width.value_or(64);
    c.layout = o.layout.value_or(ImageLayout::kNhwc);
    c.inference = inference || o.inference;
    return BuildResNet(c);
  };
  return info;
}

std::vector<ModelInfo> MakeRegistry() {
  std::vector<ModelInfo> models;
  for (int depth : {18, 34, 50, 101, 152}) {
    models.push_back(ResNetInfo(depth, false));
    models.push_back(ResNetInfo(depth, true));
  }
  models.push_back({"laplace_pinn",
                    "Laplace PINN (seed 003): tanh MLP, grid x grid collocation points, Laplacian by "
                    "reverse-over-reverse autodiff, boundary loss, Adam",
                    {"image-size", "depth", "width", "dtype"},
                    "grid (image-size) 101, depth 5, width 50, f32",
                    [](const ModelOptions& o) {
                      LaplacePinnConfig c;
                      c.grid = o.image_size.value_or(101);
                      c.depth = o.depth.value_or(5);
                      c.width = o.width.value_or(50);
                      c.dtype = o.dtype.value_or(PrimitiveType::kF32);
                      return BuildLaplacePinn(c);
                    }});
  models.push_back({"gelu", "Seed 000's GELU module: one kLoop fusion of the tanh approximation",
                    {"batch", "seq-len", "width", "dtype"},
                    "[6, 512, 4096] bf16",
                    [](const ModelOptions& o) {
                      GeluConfig c;
                      c.batch = o.batch.value_or(6);
                      c.seq_len = o.seq_len.value_or(512);
                      c.width = o.width.value_or(4096);
                      c.dtype = o.dtype.value_or(PrimitiveType::kBF16);
                      return BuildGelu(c);
                    }});
  models.push_back({"mlp", "MLP classifier training step: ReLU dense layers, softmax cross-entropy, SGD",
                    {"batch", "image-size", "classes", "dtype", "depth", "width"},
                    "batch 64, 784 features (image-size 28, squared), depth 2, width 256, 10 classes, f32",
                    [](const ModelOptions& o) {
                      MlpConfig c;
                      c.batch = o.batch.value_or(64);
                      int64_t side = o.image_size.value_or(28);
                      c.features = side * side;
                      c.depth = o.depth.value_or(2);
                      c.width = o.width.value_or(256);
                      c.classes = o.classes.value_or(10);
                      c.dtype = o.dtype.value_or(PrimitiveType::kF32);
                      return BuildMlp(c);
                    }});
  models.push_back({"mobilenet_v2",
                    "MobileNetV2 training step: inverted residuals (1x1 expand, depthwise 3x3, 1x1 project), "
                    "ReLU6, batch-norm-training, softmax cross-entropy, backward, SGD with momentum",
                    {"batch", "image-size", "classes", "dtype", "width", "layout"},
                    "batch 8, 64x64, 1000 classes, f32, width 32 (the stem's channels: multiplier width/32), nhwc",
                    [](const ModelOptions& o) {
                      MobileNetV2Config c;
                      c.batch = o.batch.value_or(8);
                      c.image_size = o.image_size.value_or(64);
                      c.classes = o.classes.value_or(1000);
                      c.dtype = o.dtype.value_or(PrimitiveType::kF32);
                      // As ResNet's base width 64: --width 8 is multiplier 0.25.
                      c.width_multiplier = static_cast<double>(o.width.value_or(32)) / 32.0;
                      c.layout = o.layout.value_or(ImageLayout::kNhwc);
                      return BuildMobileNetV2(c);
                    }});
  models.push_back({"transformer_block",
                    "Transformer encoder block training step: multi-head attention, layer norm, GELU MLP, "
                    "MSE loss, SGD",
                    {"batch", "seq-len", "width", "heads", "dtype"},
                    "batch 8, seq-len 128, width 256, 4 heads, f32",
                    [](const ModelOptions& o) {
                      TransformerConfig c;
                      c.batch = o.batch.value_or(8);
                      c.seq_len = o.seq_len.value_or(128);
                      c.width = o.width.value_or(256);
                      c.heads = o.heads.value_or(4);
                      c.dtype = o.dtype.value_or(PrimitiveType::kF32);
                      return BuildTransformerBlock(c);
                    }});
  models.push_back({"embedding",
                    "Embedding lookup (gather) + mean + dense classifier; the table gradient is a scatter-add",
                    {"batch", "seq-len", "vocab", "width", "classes", "dtype"},
                    "batch 32, seq-len 64, vocab 10000, width 64, 10 classes, f32",
                    [](const ModelOptions& o) {
                      EmbeddingConfig c;
                      c.batch = o.batch.value_or(32);
                      c.seq_len = o.seq_len.value_or(64);
                      c.vocab = o.vocab.value_or(10000);
                      c.width = o.width.value_or(64);
                      c.classes = o.classes.value_or(10);
                      c.dtype = o.dtype.value_or(PrimitiveType::kF32);
                      return BuildEmbeddingModel(c);
                    }});
  std::sort(models.begin(), models.end(), [](const ModelInfo& a, const ModelInfo& b) { return a.name < b.name; });
  return models;
}

}  // namespace

const std::vector<ModelInfo>& ModelRegistry() {
  static const auto* registry = new std::vector<ModelInfo>(MakeRegistry());
  return *registry;
}

const ModelInfo* FindModel(std::string_view name) {
  for (const ModelInfo& m : ModelRegistry()) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string> SetOptionNames(const ModelOptions& o) {
  std::vector<std::string> names;
  if (o.batch) names.push_back("batch");
  if (o.image_size) names.push_back("image-size");
  if (o.classes) names.push_back("classes");
  if (o.dtype) names.push_back("dtype");
  if (o.depth) names.push_back("depth");
  if (o.width) names.push_back("width");
  if (o.layout) names.push_back("layout");
  if (o.seq_len) names.push_back("seq-len");
  if (o.heads) names.push_back("heads");
  if (o.vocab) names.push_back("vocab");
  if (o.inference) names.push_back("inference");
  return names;
}

absl::StatusOr<std::unique_ptr<HloModule>> BuildModel(std::string_view name, const ModelOptions& options) {
  const ModelInfo* info = FindModel(name);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const ModelInfo& m : ModelRegistry()) names.push_back(m.name);
    return absl::NotFoundError(StrCat("unknown model '", name, "'; known models: ", Join(names, ", ")));
  }
  for (const std::string& set : SetOptionNames(options)) {
    if (std::find(info->options.begin(), info->options.end(), set) == info->options.end()) {
      return absl::InvalidArgumentError(StrCat("model '", name, "' does not take --", set, "; it takes: --",
                                               Join(info->options, ", --")));
    }
  }
  return info->build(options);
}

}  // namespace passlab
