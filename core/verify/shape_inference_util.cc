// Checks shared by the op families of shape inference.
#include "core/verify/shape_inference_internal.h"

#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace shape_inference_internal {

absl::Status Err(const HloInstruction& inst, std::string_view message) {
  return absl::InvalidArgumentError(StrCat(HloOpcodeString(inst.opcode()), ": ", message));
}

bool HasShape(const HloInstruction& inst) {
  return inst.shape().element_type() != PrimitiveType::kInvalid;
}

// Ops whose result shape is given, not derived: return it or fail.
absl::StatusOr<Shape> OwnShape(const HloInstruction& inst, std::string_view why) {
  if (!HasShape(inst)) {
    return Err(inst, StrCat("the result shape cannot be inferred (", why, "); write it explicitly"));
  }
  return inst.shape();
}

Shape ArrayLike(const Shape& dims_from, PrimitiveType type) {
  Shape s = Shape::ArrayWithoutLayout(type, {});
  for (int64_t i = 0; i < dims_from.rank(); ++i) {
    s.add_dimension(dims_from.dimensions(i), dims_from.is_dynamic_dimension(i));
  }
  s.SetDefaultLayout();
  return s;
}

absl::Status CheckArray(const HloInstruction& inst, const Shape& s, std::string_view what) {
  if (!s.IsArray()) {
    return Err(inst, StrCat(what, " must be an array, but is ", s.ToString()));
  }
  return absl::OkStatus();
}

absl::Status CheckDimsValid(const HloInstruction& inst, const std::vector<int64_t>& dims,
                            int64_t rank, std::string_view what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Err(inst, StrCat(what, " ", d, " is out of range for rank ", rank));
    }
    if (!seen.insert(d).second) return Err(inst, StrCat(what, " ", d, " is repeated"));
  }
  return absl::OkStatus();
}

bool IsFloatOrComplex(PrimitiveType t) { return IsFloatingPointType(t) || IsComplexType(t); }

int64_t WindowOutputSize(int64_t base, const WindowDimension& w) {
  int64_t dilated_base = base == 0 ? 0 : (base - 1) * w.base_dilation + 1;
  int64_t padded = dilated_base + w.padding_low + w.padding_high;
  int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

absl::Status CheckWindow(const Window& window, int64_t rank, std::string_view op) {
  if (static_cast<int64_t>(window.dimensions.size()) != rank) {
    return absl::InvalidArgumentError(StrCat(op, ": window has ", window.dimensions.size(),
                                             " dimensions but the operand has rank ", rank));
  }
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size <= 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) {
      return absl::InvalidArgumentError(
          StrCat(op, ": window dimension ", i, " needs positive size, stride and dilations"));
    }
  }
  return absl::OkStatus();
}

// Compatible, where two floating-point types of different precision also
// count as the same (XLA's ShapeUtil::CompatibleIgnoringFpPrecision).
bool CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (a.IsTuple() && b.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i) {
      if (!CompatibleIgnoringFpPrecision(a.tuple_shapes()[i], b.tuple_shapes()[i])) return false;
    }
    return true;
  }
  if (a.IsArray() && b.IsArray() && IsFloatingPointType(a.element_type()) && IsFloatingPointType(b.element_type())) {
    Shape c = a;
    c.set_element_type(b.element_type());
    return c.Compatible(b);
  }
  return a.Compatible(b);
}

// The computation `c` takes `params` and returns `result` (reducers: with
// floating-point precision ignored, as XLA's VerifyReducerShape does).
absl::Status CheckSignature(const HloInstruction& inst, const HloComputation* c,
                            const std::vector<Shape>& params, const Shape& result,
                            std::string_view role, bool ignore_fp_precision) {
  auto compatible = [&](const Shape& a, const Shape& b) {
    return ignore_fp_precision ? CompatibleIgnoringFpPrecision(a, b) : a.Compatible(b);
  };
  if (c == nullptr) return Err(inst, StrCat("missing ", role, " computation"));
  if (c->num_parameters() != static_cast<int64_t>(params.size())) {
    return Err(inst, StrCat(role, " computation '", c->name(), "' takes ", c->num_parameters(),
                            " parameters but needs ", params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!compatible(c->parameter_instruction(i)->shape(), params[i])) {
      return Err(inst, StrCat(role, " computation '", c->name(), "' parameter ", i, " is ",
                              c->parameter_instruction(i)->shape().ToString(false), " but should be ",
                              params[i].ToString(false)));
    }
  }
  if (c->root_instruction() == nullptr || !compatible(c->root_instruction()->shape(), result)) {
    return Err(inst, StrCat(role, " computation '", c->name(), "' returns ",
                            c->root_instruction() ? c->root_instruction()->shape().ToString(false) : "nothing",
                            " but should return ", result.ToString(false)));
  }
  return absl::OkStatus();
}

// Reducer of N values: (T0..Tn-1, T0..Tn-1) -> (T0..Tn-1) of scalars.
absl::Status CheckReducer(const HloInstruction& inst, const HloComputation* c,
                          const std::vector<PrimitiveType>& types) {
  std::vector<Shape> params;
  for (int k = 0; k < 2; ++k) {
    for (PrimitiveType t : types) params.push_back(Shape::Scalar(t));
  }
  Shape result = types.size() == 1 ? Shape::Scalar(types[0]) : Shape::Tuple({});
  if (types.size() > 1) {
    for (PrimitiveType t : types) result.mutable_tuple_shapes().push_back(Shape::Scalar(t));
  }
  return CheckSignature(inst, c, params, result, "reducer", /*ignore_fp_precision=*/true);
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) {
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace shape_inference_internal

}  // namespace passlab
