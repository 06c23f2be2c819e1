#include "models/mlp.h"

#include <vector>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> BuildMlp(const MlpConfig& c) {
  if (c.batch < 1 || c.features < 1 || c.depth < 0 || c.width < 1 || c.classes < 1) {
    return absl::InvalidArgumentError("mlp: batch, features, width and classes must be positive, depth >= 0");
  }
  if (!IsFloatingPointType(c.dtype)) return absl::InvalidArgumentError("mlp: dtype must be floating point");
  auto module = std::make_unique<HloModule>("mlp_train_step");
  HloBuilder b(module.get(), "mlp_train_step");
  HloBuilder::ScopedName model(b, "mlp");
  std::vector<Op> params;
  int64_t in = c.features;
  for (int64_t i = 0; i <= c.depth; ++i) {
    int64_t out = i == c.depth ? c.classes : c.width;
    params.push_back(b.Parameter(Shape(c.dtype, {in, out}), StrCat("dense", i, ".weight")));
    params.push_back(b.Parameter(Shape(c.dtype, {out}), StrCat("dense", i, ".bias")));
    in = out;
  }
  std::vector<Op> momentum = MomentumParameters(b, params);
  Op x = b.Parameter(Shape(c.dtype, {c.batch, c.features}), "inputs");
  Op labels = b.Parameter(Shape(PrimitiveType::kF32, {c.batch, c.classes}), "labels");
  for (int64_t i = 0; i <= c.depth; ++i) {
    HloBuilder::ScopedName layer(b, StrCat("dense", i));
    x = Dense(b, x, params[2 * i], params[2 * i + 1]);
    if (i < c.depth) x = Relu(b, x);
  }
  Op loss = SoftmaxCrossEntropy(b, x, labels);
  ASSIGN_OR_RETURN(std::vector<Op> outputs,
      SgdMomentumStep(b, loss, params, momentum, SgdOptions{.learning_rate = c.learning_rate}));
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(outputs));
  return module;
}

}  // namespace passlab
