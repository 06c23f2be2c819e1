#include "passes/expanders/bitcast_dtypes_expander.h"

#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

bool IsExpandableType(PrimitiveType t) {
  if (t == PrimitiveType::kPred || IsComplexType(t)) return false;
  if (!IsIntegralType(t) && !IsFloatingPointType(t)) return false;
  const int bits = PrimitiveBitWidth(t);
  return bits == 8 || bits == 16 || bits == 32 || bits == 64;
}

PrimitiveType UnsignedOfWidth(int bits) {
  switch (bits) {
    case 8: return PrimitiveType::kU8;
    case 16: return PrimitiveType::kU16;
    case 32: return PrimitiveType::kU32;
    default: return PrimitiveType::kU64;
  }
}

// Same-width reinterpretation (nothing when the type is already `type`).
HloInstruction* Reinterpret(ExpansionBuilder& b, HloInstruction* x, PrimitiveType type) {
  if (x->shape().element_type() == type) return x;
  return b.Add(HloInstruction::Create(HloOpcode::kBitcastConvert, Shape(type, x->shape().dimensions()), {x}));
}

HloComputation* OrReducer(HloModule& module, PrimitiveType type) {
  const std::string name = StrCat("bitcast_or_", PrimitiveTypeName(type));
  if (HloComputation* existing = module.GetComputationWithName(name);
      existing != nullptr && existing->num_parameters() == 2 &&
      existing->root_instruction()->opcode() == HloOpcode::kOr &&
      existing->root_instruction()->shape() == Shape::Scalar(type)) {
    return existing;
  }
  auto c = std::make_unique<HloComputation>(name);
  HloInstruction* a = c->AddParameter(HloInstruction::CreateParameter(0, Shape::Scalar(type), "a"));
  HloInstruction* b = c->AddParameter(HloInstruction::CreateParameter(1, Shape::Scalar(type), "b"));
  c->set_root_instruction(c->AddInstruction(HloInstruction::CreateBinary(Shape::Scalar(type), HloOpcode::kOr, a, b)));
  return module.AddEmbeddedComputation(std::move(c));
}

// iota * step along the last dimension of `dims`, in `type`.
HloInstruction* Shifts(ExpansionBuilder& b, PrimitiveType type, const std::vector<int64_t>& dims, int step) {
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  return b.Binary(HloOpcode::kMultiply, b.Iota(type, dims, last), b.Broadcast(b.ConstantScalar(type, step), dims));
}

}  // namespace

bool BitcastDtypesExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kBitcastConvert) return false;
  const Shape& in = inst->operand(0)->shape();
  const Shape& out = inst->shape();
  return in.IsArray() && out.IsArray() && in.is_static() && out.is_static() && IsExpandableType(in.element_type()) &&
         IsExpandableType(out.element_type()) &&
         PrimitiveBitWidth(in.element_type()) != PrimitiveBitWidth(out.element_type());
}

absl::StatusOr<HloInstruction*> BitcastDtypesExpander::ExpandInstruction(HloInstruction* convert) {
  HloInstruction* x = convert->mutable_operand(0);
  const Shape& in = x->shape();
  const Shape& out = convert->shape();
  const int in_bits = PrimitiveBitWidth(in.element_type()), out_bits = PrimitiveBitWidth(out.element_type());
  const PrimitiveType u_in = UnsignedOfWidth(in_bits), u_out = UnsignedOfWidth(out_bits);
  ExpansionBuilder b(convert->parent(), convert->metadata());
  if (in_bits > out_bits) {
    // wide [d...] -> narrow [d..., k]
    const int64_t k = in_bits / out_bits;
    if (out.rank() != in.rank() + 1 || out.dimensions(out.rank() - 1) != k) {
      return absl::InvalidArgumentError(StrCat("bitcast_dtypes_expander: ", convert->name(), ": ", in.ToString(),
                                               " -> ", out.ToString(), " must add a minor dimension of ", k));
    }
    const std::vector<int64_t> dims = out.dimensions();
    std::vector<int64_t> kept(in.rank());
    for (int64_t d = 0; d < in.rank(); ++d) kept[d] = d;
    HloInstruction* wide = b.Broadcast(Reinterpret(b, x, u_in), dims, kept);
    HloInstruction* shifted = b.Binary(HloOpcode::kShiftRightLogical, wide, Shifts(b, u_in, dims, out_bits));
    Literal mask(Shape::Scalar(u_in));
    mask.SetBits(0, out_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << out_bits) - 1);
    HloInstruction* part = b.Binary(HloOpcode::kAnd, shifted, b.Broadcast(b.ConstantLiteral(std::move(mask)), dims));
    return Reinterpret(b, b.Convert(part, u_out), out.element_type());
  }
  // narrow [d..., k] -> wide [d...]
  const int64_t k = out_bits / in_bits;
  if (in.rank() != out.rank() + 1 || in.dimensions(in.rank() - 1) != k) {
    return absl::InvalidArgumentError(StrCat("bitcast_dtypes_expander: ", convert->name(), ": ", in.ToString(),
                                             " -> ", out.ToString(), " must drop a minor dimension of ", k));
  }
  HloModule* module = convert->GetModule();
  if (module == nullptr) {
    return absl::InternalError(StrCat("bitcast_dtypes_expander: ", convert->name(), " is not in a module"));
  }
  const std::vector<int64_t> dims = in.dimensions();
  HloInstruction* parts = b.Convert(Reinterpret(b, x, u_in), u_out);
  HloInstruction* shifted = b.Binary(HloOpcode::kShiftLeft, parts, Shifts(b, u_out, dims, in_bits));
  HloInstruction* combined = b.Add(HloInstruction::CreateReduce(Shape(u_out, out.dimensions()), {shifted},
                                                                {b.Zero(u_out)}, {in.rank() - 1},
                                                                OrReducer(*module, u_out)));
  return Reinterpret(b, combined, out.element_type());
}

}  // namespace passlab
