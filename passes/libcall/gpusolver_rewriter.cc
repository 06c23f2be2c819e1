#include "passes/libcall/gpusolver_rewriter.h"

#include <cmath>

#include "core/ir/hlo_computation.h"
#include "core/libcall/library_call.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {

bool GpusolverRewriter::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kCholesky) return false;
  const Shape& s = inst->shape();
  return s.IsArray() && s.rank() >= 2 && s.is_static() &&
         (s.element_type() == PrimitiveType::kF32 || s.element_type() == PrimitiveType::kF64);
}

absl::StatusOr<HloInstruction*> GpusolverRewriter::ExpandInstruction(HloInstruction* cholesky) {
  ExpansionBuilder b(cholesky->parent(), cholesky->metadata());
  const Shape& shape = cholesky->shape();
  std::vector<int64_t> batch(shape.dimensions().begin(), shape.dimensions().end() - 2);
  Shape call_shape = Shape::Tuple({shape, Shape(PrimitiveType::kS32, batch)});
  HloInstruction* call = b.Add(HloInstruction::CreateCustomCall(call_shape, {cholesky->mutable_operand(0)},
                                                                std::string(kCholeskyCallTarget),
                                                                CholeskyBackendConfigJson(cholesky->attrs().cholesky_lower)));
  HloInstruction* factor = b.GetTupleElement(call, 0);
  HloInstruction* info = b.GetTupleElement(call, 1);
  // info == 0 per matrix, broadcast over its elements.
  HloInstruction* ok = b.Compare(info, b.Broadcast(b.Zero(PrimitiveType::kS32), batch), ComparisonDirection::kEq);
  std::vector<int64_t> batch_dims(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) batch_dims[i] = static_cast<int64_t>(i);
  HloInstruction* ok_all = b.Add(HloInstruction::CreateBroadcast(Shape(PrimitiveType::kPred, shape.dimensions()), ok,
                                                                 batch_dims));
  Literal nan(Shape::Scalar(shape.element_type()));
  nan.SetDouble(0, std::nan(""));
  HloInstruction* nans = b.Broadcast(b.ConstantLiteral(std::move(nan)), shape.dimensions());
  return b.Select(ok_all, factor, nans);
}

}  // namespace passlab
