#include "models/gelu.h"

#include "core/ir/status_macros.h"
#include "models/hlo_builder.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> BuildGelu(const GeluConfig& c) {
  if (c.batch < 1 || c.seq_len < 1 || c.width < 1) {
    return absl::InvalidArgumentError("gelu: batch, seq_len and width must be positive");
  }
  if (!IsFloatingPointType(c.dtype)) {
    return absl::InvalidArgumentError("gelu: dtype must be a floating-point type");
  }
  auto module = std::make_unique<HloModule>("m");
  Shape shape(c.dtype, {c.batch, c.seq_len, c.width});
  HloComputation* fused;
  {
    HloBuilder f(module.get(), "gelu", /*is_entry=*/false);
    HloBuilder::ScopedName scope(f, "gelu");
    HloBuilder::ScopedOpType type(f, "Gelu");
    Op param = f.Parameter(shape, "param");
    auto constant = [&](double value, const char* name) {
      Literal l(Shape::Scalar(c.dtype));
      l.SetDouble(0, value);
      return f.ConstantLiteral(std::move(l), name);
    };
    auto bcast = [&](Op scalar, const char* name) {
      return f.AddInstruction(HloInstruction::CreateBroadcast(shape, scalar, {}), true, name);
    };
    auto binary = [&](HloOpcode opcode, Op a, Op b, const char* name) {
      return f.AddInstruction(HloInstruction::CreateBinary(Shape(), opcode, a, b), true, name);
    };
    Op bcast_0 = bcast(constant(0.5, "constant_0"), "bcast_0");
    Op bcast_1 = bcast(constant(1, "constant_1"), "bcast_1");
    Op bcast_2 = bcast(constant(0.79785, "constant_2"), "bcast_2");
    Op bcast_3 = bcast(constant(0.044708, "constant_3"), "bcast_3");
    Op square = binary(HloOpcode::kMultiply, param, param, "square");
    Op cube = binary(HloOpcode::kMultiply, square, param, "cube");
    Op multiply_3 = binary(HloOpcode::kMultiply, cube, bcast_3, "multiply_3");
    Op add_1 = binary(HloOpcode::kAdd, param, multiply_3, "add_1");
    Op multiply_2 = binary(HloOpcode::kMultiply, add_1, bcast_2, "multiply_2");
    Op tanh_0 = f.AddInstruction(HloInstruction::CreateUnary(Shape(), HloOpcode::kTanh, multiply_2), true, "tanh_0");
    Op add_0 = binary(HloOpcode::kAdd, tanh_0, bcast_1, "add_0");
    Op multiply_1 = binary(HloOpcode::kMultiply, add_0, bcast_0, "multiply_1");
    Op multiply_0 = binary(HloOpcode::kMultiply, param, multiply_1, "multiply_0");
    ASSIGN_OR_RETURN(HloComputation* built, f.Build(multiply_0));
    fused = built;
  }
  HloBuilder b(module.get(), "main");
  HloBuilder::ScopedName scope(b, "gelu");
  HloBuilder::ScopedOpType type(b, "Gelu");
  Op param = b.Parameter(shape, "param");
  ASSIGN_OR_RETURN(HloComputation* built, b.Build(b.Fusion({param}, fused, FusionKind::kLoop, "fusion")));
  // Names are unique per computation in XLA text; the seed reuses "param".
  param->SetName("param");
  return module;
}

}  // namespace passlab
