#include "models/embedding.h"

#include <vector>

#include "core/ir/status_macros.h"
#include "models/hlo_builder.h"
#include "models/layers.h"
#include "models/optimizer.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> BuildEmbeddingModel(const EmbeddingConfig& c) {
  if (c.batch < 1 || c.seq_len < 1 || c.vocab < 1 || c.width < 1 || c.classes < 1) {
    return absl::InvalidArgumentError("embedding: batch, seq_len, vocab, width and classes must be positive");
  }
  if (!IsFloatingPointType(c.dtype)) return absl::InvalidArgumentError("embedding: dtype must be floating point");
  auto module = std::make_unique<HloModule>("embedding_train_step");
  HloBuilder b(module.get(), "embedding_train_step");
  HloBuilder::ScopedName model(b, "embedding_model");
  Op table = b.Parameter(Shape(c.dtype, {c.vocab, c.width}), "embedding.table");
  Op w = b.Parameter(Shape(c.dtype, {c.width, c.classes}), "fc.weight");
  Op bias = b.Parameter(Shape(c.dtype, {c.classes}), "fc.bias");
  std::vector<Op> params = {table, w, bias};
  std::vector<Op> momentum = MomentumParameters(b, params);
  Op ids = b.Parameter(Shape(PrimitiveType::kS32, {c.batch, c.seq_len}), "ids");
  Op labels = b.Parameter(Shape(PrimitiveType::kF32, {c.batch, c.classes}), "labels");
  Op pooled;
  {
    HloBuilder::ScopedName s(b, "embedding");
    HloBuilder::ScopedOpType type(b, "ResourceGather");
    GatherDimensionNumbers d;
    d.offset_dims = {2};
    d.collapsed_slice_dims = {0};
    d.start_index_map = {0};
    d.index_vector_dim = 2;
    Op rows = b.Gather(table, ids, d, {1, c.width});  // [B, S, D]
    HloBuilder::ScopedOpType mean(b, "Mean");
    pooled = b.MulScalar(b.ReduceSum(rows, {1}), 1.0 / static_cast<double>(c.seq_len));
  }
  Op logits;
  {
    HloBuilder::ScopedName s(b, "fc");
    logits = Dense(b, pooled, w, bias);
  }
  Op loss = SoftmaxCrossEntropy(b, logits, labels);
  ASSIGN_OR_RETURN(std::vector<Op> outputs, SgdMomentumStep(
      b, loss, params, momentum, SgdOptions{.learning_rate = c.learning_rate, .weight_decay = 0}));
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(outputs));
  return module;
}

}  // namespace passlab
