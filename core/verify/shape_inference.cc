#include "core/verify/shape_inference.h"

#include <algorithm>
#include <set>

#include "absl/algorithm/container.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

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

absl::StatusOr<Shape> InferUnary(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (absl::Status s = CheckArray(inst, op, "the operand"); !s.ok()) return s;
  PrimitiveType t = op.element_type();
  switch (inst.opcode()) {
    case HloOpcode::kIsFinite:
      if (!IsFloatingPointType(t)) return Err(inst, "needs a floating-point operand");
      return ArrayLike(op, PrimitiveType::kPred);
    case HloOpcode::kReal: case HloOpcode::kImag:
      if (IsComplexType(t)) return ArrayLike(op, ComplexComponentType(t));
      if (!IsFloatingPointType(t)) return Err(inst, "needs a float or complex operand");
      return ArrayLike(op, t);
    case HloOpcode::kAbs:
      if (IsComplexType(t)) return ArrayLike(op, ComplexComponentType(t));
      if (t == PrimitiveType::kPred || IsUnsignedIntegralType(t)) {
        return Err(inst, StrCat("is not defined for ", PrimitiveTypeName(t)));
      }
      return ArrayLike(op, t);
    case HloOpcode::kNot:
      if (!IsIntegralType(t) && t != PrimitiveType::kPred) return Err(inst, "needs a pred or integer operand");
      return ArrayLike(op, t);
    case HloOpcode::kPopulationCount: case HloOpcode::kClz:
      if (!IsIntegralType(t)) return Err(inst, "needs an integer operand");
      return ArrayLike(op, t);
    case HloOpcode::kNegate: case HloOpcode::kSign:
      if (t == PrimitiveType::kPred) return Err(inst, "is not defined for pred");
      return ArrayLike(op, t);
    case HloOpcode::kCopy:
      return ArrayLike(op, t);
    case HloOpcode::kCeil: case HloOpcode::kFloor: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kReducePrecision: case HloOpcode::kCbrt:
    case HloOpcode::kErf:
      if (!IsFloatingPointType(t)) return Err(inst, StrCat("needs a floating-point operand, not ", PrimitiveTypeName(t)));
      return ArrayLike(op, t);
    default:  // transcendental: float or complex
      if (!IsFloatOrComplex(t)) {
        return Err(inst, StrCat("needs a floating-point or complex operand, not ", PrimitiveTypeName(t)));
      }
      return ArrayLike(op, t);
  }
}

absl::StatusOr<Shape> InferBinary(const HloInstruction& inst) {
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  if (absl::Status s = CheckArray(inst, a, "lhs"); !s.ok()) return s;
  if (absl::Status s = CheckArray(inst, b, "rhs"); !s.ok()) return s;
  if (!a.SameDimensions(b)) {
    return Err(inst, StrCat("operand shapes differ: ", a.ToString(false), " vs ", b.ToString(false),
                            " (HLO needs an explicit broadcast)"));
  }
  PrimitiveType t = a.element_type();
  if (inst.opcode() != HloOpcode::kStochasticConvert && b.element_type() != t) {
    // As XLA's InferElementwiseBinaryOpShape: floating-point operands may
    // differ in precision (SameElementTypeIgnoringFpPrecision) and the
    // result has the higher one (the evaluator and the CPU backend compute
    // such ops in the result's type).
    PrimitiveType u = b.element_type();
    if (!IsFloatingPointType(t) || !IsFloatingPointType(u)) {
      return Err(inst, StrCat("operand element types differ: ", PrimitiveTypeName(t), " vs ", PrimitiveTypeName(u)));
    }
    if (std::pair(PrimitiveBitWidth(u), MantissaBits(u)) > std::pair(PrimitiveBitWidth(t), MantissaBits(t))) t = u;
  }
  switch (inst.opcode()) {
    case HloOpcode::kCompare:
      return ArrayLike(a, PrimitiveType::kPred);
    case HloOpcode::kComplex:
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return Err(inst, "needs f32 or f64 operands");
      return ArrayLike(a, t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      if (!IsIntegralType(t) && t != PrimitiveType::kPred) return Err(inst, "needs pred or integer operands");
      return ArrayLike(a, t);
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kMulhi:
      if (!IsIntegralType(t)) return Err(inst, "needs integer operands");
      return ArrayLike(a, t);
    case HloOpcode::kAtan2:
      if (!IsFloatOrComplex(t)) return Err(inst, "needs floating-point operands");
      return ArrayLike(a, t);
    case HloOpcode::kStochasticConvert:
      return OwnShape(inst, "the result type is chosen by the instruction");
    default:
      if (t == PrimitiveType::kPred && inst.opcode() != HloOpcode::kMaximum &&
          inst.opcode() != HloOpcode::kMinimum) {
        return Err(inst, "is not defined for pred");
      }
      return ArrayLike(a, t);
  }
}

absl::StatusOr<Shape> InferTuple(const HloInstruction& inst) {
  std::vector<Shape> e;
  for (const HloInstruction* op : inst.operands()) e.push_back(op->shape());
  return Shape::Tuple(std::move(e));
}

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
                            std::string_view role, bool ignore_fp_precision = false) {
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

absl::StatusOr<Shape> InferReduce(const HloInstruction& inst) {
  int64_t n = inst.operand_count() / 2;
  if (n == 0 || inst.operand_count() % 2 != 0) return Err(inst, "needs N operands and N init values");
  const Shape& first = inst.operand(0)->shape();
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    const Shape& init = inst.operand(n + i)->shape();
    if (absl::Status st = CheckArray(inst, s, "an operand"); !st.ok()) return st;
    if (!s.SameDimensions(first)) return Err(inst, "all operands must have the same dimensions");
    if (!init.IsScalar()) return Err(inst, StrCat("init value ", i, " must be a scalar"));
    types.push_back(init.element_type());
  }
  if (absl::Status st = CheckDimsValid(inst, inst.dimensions(), first.rank(), "reduced dimension"); !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckReducer(inst, inst.to_apply(), types); !st.ok()) return st;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    Shape r = Shape::ArrayWithoutLayout(types[i], {});
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (std::find(inst.dimensions().begin(), inst.dimensions().end(), d) == inst.dimensions().end()) {
        r.add_dimension(first.dimensions(d), first.is_dynamic_dimension(d));
      }
    }
    r.SetDefaultLayout();
    results.push_back(r);
  }
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferReduceWindow(const HloInstruction& inst) {
  int64_t n = inst.operand_count() / 2;
  if (n == 0 || inst.operand_count() % 2 != 0) return Err(inst, "needs N operands and N init values");
  const Shape& first = inst.operand(0)->shape();
  if (absl::Status st = CheckWindow(inst.window(), first.rank(), "reduce-window"); !st.ok()) return st;
  std::vector<PrimitiveType> types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& init = inst.operand(n + i)->shape();
    if (!inst.operand(i)->shape().SameDimensions(first)) return Err(inst, "operands must have equal dimensions");
    if (!init.IsScalar()) return Err(inst, "init values must be scalars");
    types.push_back(init.element_type());
    absl::StatusOr<Shape> r = InferWindowOutputShape(first, inst.window(), init.element_type());
    if (!r.ok()) return r.status();
    results.push_back(*r);
  }
  if (absl::Status st = CheckReducer(inst, inst.to_apply(), types); !st.ok()) return st;
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const auto& slice = inst.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != op.rank()) {
    return Err(inst, StrCat("slice has ", slice.size(), " ranges but the operand has rank ", op.rank()));
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    const SliceDimension& d = slice[i];
    if (d.stride <= 0) return Err(inst, StrCat("stride of dimension ", i, " must be positive"));
    if (d.start < 0 || d.start > d.limit || d.limit > op.dimensions(i)) {
      return Err(inst, StrCat("range [", d.start, ":", d.limit, "] of dimension ", i,
                              " is outside [0:", op.dimensions(i), "]"));
    }
    r.add_dimension((d.limit - d.start + d.stride - 1) / d.stride);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferConcatenate(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return Err(inst, "needs at least one operand");
  if (inst.dimensions().size() != 1) return Err(inst, "needs exactly one dimension");
  const Shape& first = inst.operand(0)->shape();
  int64_t dim = inst.dimensions(0);
  if (dim < 0 || dim >= first.rank()) return Err(inst, StrCat("dimension ", dim, " is out of range"));
  Shape r = first;
  int64_t total = 0;
  for (const HloInstruction* op : inst.operands()) {
    const Shape& s = op->shape();
    if (s.rank() != first.rank() || s.element_type() != first.element_type()) {
      return Err(inst, "operands must have the same rank and element type");
    }
    for (int64_t i = 0; i < s.rank(); ++i) {
      if (i != dim && s.dimensions(i) != first.dimensions(i)) {
        return Err(inst, StrCat("operand '", op->name(), "' differs in dimension ", i));
      }
    }
    total += s.dimensions(dim);
  }
  r.set_dimensions(dim, total);
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferPad(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (!inst.operand(1)->shape().IsScalar()) return Err(inst, "the padding value must be a scalar");
  const PaddingConfig& pc = inst.attrs().padding_config;
  if (static_cast<int64_t>(pc.dimensions.size()) != op.rank()) {
    return Err(inst, StrCat("padding has ", pc.dimensions.size(), " dimensions but the operand has rank ", op.rank()));
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    const PaddingDimension& p = pc.dimensions[i];
    if (p.interior_padding < 0) return Err(inst, StrCat("interior padding of dimension ", i, " is negative"));
    int64_t d = op.dimensions(i);
    int64_t size = p.edge_padding_low + p.edge_padding_high + d + std::max<int64_t>(d - 1, 0) * p.interior_padding;
    if (size < 0) return Err(inst, StrCat("padding makes dimension ", i, " negative"));
    r.add_dimension(size);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferTranspose(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (static_cast<int64_t>(inst.dimensions().size()) != op.rank()) {
    return Err(inst, "the permutation must list every dimension");
  }
  if (absl::Status s = CheckDimsValid(inst, inst.dimensions(), op.rank(), "permutation entry"); !s.ok()) return s;
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t d : inst.dimensions()) r.add_dimension(op.dimensions(d), op.is_dynamic_dimension(d));
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferBroadcast(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  if (!HasShape(inst)) return OwnShape(inst, "broadcast dimensions give only the operand's place");
  const Shape& out = inst.shape();
  if (static_cast<int64_t>(inst.dimensions().size()) != op.rank()) {
    return Err(inst, StrCat("dimensions has ", inst.dimensions().size(), " entries but the operand has rank ", op.rank()));
  }
  if (absl::Status s = CheckDimsValid(inst, inst.dimensions(), out.rank(), "broadcast dimension"); !s.ok()) return s;
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (op.dimensions(i) != out.dimensions(inst.dimensions(i))) {
      return Err(inst, StrCat("operand dimension ", i, " (", op.dimensions(i), ") != output dimension ",
                              inst.dimensions(i), " (", out.dimensions(inst.dimensions(i)), ")"));
    }
  }
  if (op.element_type() != out.element_type()) return Err(inst, "element types differ");
  return out;
}

absl::StatusOr<Shape> InferDynamicSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const auto& sizes = inst.attrs().slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != op.rank()) return Err(inst, "dynamic_slice_sizes must match the rank");
  if (inst.operand_count() != op.rank() + 1) {
    return Err(inst, StrCat("needs ", op.rank(), " scalar start indices, got ", inst.operand_count() - 1));
  }
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsScalar() || !IsIntegralType(s.element_type())) return Err(inst, "start indices must be integer scalars");
  }
  Shape r = Shape::ArrayWithoutLayout(op.element_type(), {});
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (sizes[i] < 0 || sizes[i] > op.dimensions(i)) {
      return Err(inst, StrCat("slice size ", sizes[i], " of dimension ", i, " exceeds ", op.dimensions(i)));
    }
    r.add_dimension(sizes[i]);
  }
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const Shape& upd = inst.operand(1)->shape();
  if (upd.rank() != op.rank() || upd.element_type() != op.element_type()) {
    return Err(inst, "the update must have the operand's rank and element type");
  }
  if (inst.operand_count() != op.rank() + 2) return Err(inst, "needs one scalar start index per dimension");
  for (int64_t i = 0; i < op.rank(); ++i) {
    if (upd.dimensions(i) > op.dimensions(i)) return Err(inst, StrCat("update is larger in dimension ", i));
  }
  for (int64_t i = 2; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsScalar() || !IsIntegralType(s.element_type())) return Err(inst, "start indices must be integer scalars");
  }
  return ArrayLike(op, op.element_type());
}

absl::StatusOr<Shape> InferBitcastConvert(const HloInstruction& inst) {
  if (!HasShape(inst)) return OwnShape(inst, "the result type is chosen by the instruction");
  const Shape& op = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  int in_bits = PrimitiveBitWidth(op.element_type());
  int out_bits = PrimitiveBitWidth(out.element_type());
  Shape expected = ArrayLike(op, out.element_type());
  if (in_bits > out_bits) {
    expected.add_dimension(in_bits / out_bits);
  } else if (in_bits < out_bits) {
    if (op.rank() == 0 || op.dimensions(op.rank() - 1) != out_bits / in_bits) {
      return Err(inst, StrCat("converting ", in_bits, "-bit to ", out_bits, "-bit elements needs a minor dimension of ",
                              out_bits / in_bits));
    }
    std::vector<int64_t> dims(op.dimensions().begin(), op.dimensions().end() - 1);
    expected = Shape(out.element_type(), dims);
  }
  return expected;
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

absl::StatusOr<Shape> InferScatter(const HloInstruction& inst) {
  int64_t n = (inst.operand_count() - 1) / 2;
  if (n < 1 || inst.operand_count() != 2 * n + 1) return Err(inst, "needs N operands, indices and N updates");
  std::vector<Shape> results;
  std::vector<PrimitiveType> types;
  const ScatterDimensionNumbers& d = inst.attrs().scatter_dnums;
  const Shape& indices = inst.operand(n)->shape();
  if (!IsIntegralType(indices.element_type())) return Err(inst, "scatter indices must be integers");
  if (d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) {
    return Err(inst, "index_vector_dim is out of range");
  }
  for (int64_t i = 0; i < n; ++i) {
    const Shape& op = inst.operand(i)->shape();
    const Shape& upd = inst.operand(n + 1 + i)->shape();
    if (absl::Status s = CheckDimsValid(inst, d.update_window_dims, upd.rank(), "update window dimension"); !s.ok()) return s;
    int64_t scatter_dims = indices.rank() - (d.index_vector_dim < indices.rank() ? 1 : 0);
    if (upd.rank() != scatter_dims + static_cast<int64_t>(d.update_window_dims.size())) {
      return Err(inst, StrCat("updates have rank ", upd.rank(), " but need ", scatter_dims, " scatter dims + ",
                              d.update_window_dims.size(), " window dims"));
    }
    if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                             d.input_batching_dims.size()) != op.rank()) {
      return Err(inst, "window dims + inserted dims + batching dims must equal the operand rank");
    }
    results.push_back(ArrayLike(op, op.element_type()));
    types.push_back(op.element_type());
  }
  if (absl::Status s = CheckReducer(inst, inst.to_apply(), types); !s.ok()) return s;
  return n == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferSort(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return Err(inst, "needs operands");
  const Shape& first = inst.operand(0)->shape();
  if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= std::max<int64_t>(first.rank(), 1)) {
    return Err(inst, "needs one sort dimension within the rank");
  }
  std::vector<Shape> params;
  std::vector<Shape> results;
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().SameDimensions(first)) return Err(inst, "all operands must have the same dimensions");
    params.push_back(Shape::Scalar(op->shape().element_type()));
    params.push_back(Shape::Scalar(op->shape().element_type()));
    results.push_back(ArrayLike(op->shape(), op->shape().element_type()));
  }
  if (absl::Status s = CheckSignature(inst, inst.to_apply(), params, Shape::Scalar(PrimitiveType::kPred), "comparator");
      !s.ok()) {
    return s;
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(results);
}

absl::StatusOr<Shape> InferFft(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  const auto& len = inst.attrs().fft_length;
  if (len.empty() || len.size() > 3 || static_cast<int64_t>(len.size()) > op.rank()) {
    return Err(inst, "fft_length must have 1 to 3 entries, at most the rank");
  }
  Shape r = ArrayLike(op, op.element_type());
  int64_t last = op.rank() - 1;
  switch (inst.attrs().fft_type) {
    case FftType::kFft: case FftType::kIfft:
      if (!IsComplexType(op.element_type())) return Err(inst, "FFT/IFFT need a complex operand");
      return r;
    case FftType::kRfft:
      if (!IsFloatingPointType(op.element_type())) return Err(inst, "RFFT needs a real operand");
      r = ArrayLike(op, op.element_type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64);
      r.set_dimensions(last, len.back() / 2 + 1);
      return r;
    case FftType::kIrfft:
      if (!IsComplexType(op.element_type())) return Err(inst, "IRFFT needs a complex operand");
      r = ArrayLike(op, ComplexComponentType(op.element_type()));
      r.set_dimensions(last, len.back());
      return r;
  }
  return r;
}

absl::StatusOr<Shape> InferBatchNorm(const HloInstruction& inst) {
  const Shape& op = inst.operand(0)->shape();
  int64_t f = inst.attrs().feature_index;
  if (f < 0 || f >= op.rank()) return Err(inst, StrCat("feature_index ", f, " is out of range for rank ", op.rank()));
  if (!IsFloatingPointType(op.element_type())) return Err(inst, "needs a floating-point operand");
  Shape feature = Shape(op.element_type(), {op.dimensions(f)});
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    bool is_grad_output = inst.opcode() == HloOpcode::kBatchNormGrad && i == 4;
    if (is_grad_output) {
      if (!s.SameDimensions(op)) return Err(inst, "grad_output must have the operand's shape");
      continue;
    }
    if (s.rank() != 1 || s.dimensions(0) != op.dimensions(f)) {
      return Err(inst, StrCat("operand ", i, " must be a vector of ", op.dimensions(f), " features"));
    }
  }
  Shape out = ArrayLike(op, op.element_type());
  if (inst.opcode() == HloOpcode::kBatchNormInference) return out;
  return Shape::Tuple({out, feature, feature});
}

absl::StatusOr<Shape> InferCollective(const HloInstruction& inst) {
  std::vector<Shape> results;
  for (const HloInstruction* op : inst.operands()) results.push_back(op->shape());
  Shape same = results.size() == 1 ? results[0] : Shape::Tuple(results);
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: {
      std::vector<PrimitiveType> types;
      for (const HloInstruction* op : inst.operands()) types.push_back(op->shape().element_type());
      if (inst.operand_count() == 1 && absl::Status(CheckReducer(inst, inst.to_apply(), types)).ok()) return same;
      if (inst.to_apply() == nullptr) return Err(inst, "needs a to_apply reducer");
      // Each element is reduced by the scalar reducer of its own type.
      for (PrimitiveType t : types) {
        if (absl::Status s = CheckReducer(inst, inst.to_apply(), {t}); !s.ok()) return s;
      }
      return same;
    }
    case HloOpcode::kAllToAll: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      return same;
    default:
      // all-gather/reduce-scatter sizes depend on the group size; the
      // instruction states them.
      return OwnShape(inst, "the group size decides the result");
  }
}

}  // namespace

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type) {
  if (absl::Status s = CheckWindow(window, base.rank(), "window"); !s.ok()) return s;
  Shape r = Shape::ArrayWithoutLayout(element_type, {});
  for (int64_t i = 0; i < base.rank(); ++i) r.add_dimension(WindowOutputSize(base.dimensions(i), window.dimensions[i]));
  r.SetDefaultLayout();
  return r;
}

absl::StatusOr<Shape> InferDotShape(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                                    PrimitiveType result_type) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("dot: ", m)); };
  if (!lhs.IsArray() || !rhs.IsArray()) return fail("operands must be arrays");
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) return fail("batch dimension counts differ");
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return fail("contracting dimension counts differ");
  }
  auto in_range = [](const std::vector<int64_t>& v, int64_t rank) {
    std::set<int64_t> seen;
    for (int64_t x : v) {
      if (x < 0 || x >= rank || !seen.insert(x).second) return false;
    }
    return true;
  };
  std::vector<int64_t> lhs_all = d.lhs_batch_dimensions, rhs_all = d.rhs_batch_dimensions;
  lhs_all.insert(lhs_all.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  rhs_all.insert(rhs_all.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  if (!in_range(lhs_all, lhs.rank())) return fail("lhs batch/contracting dimensions are out of range or repeated");
  if (!in_range(rhs_all, rhs.rank())) return fail("rhs batch/contracting dimensions are out of range or repeated");
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_batch_dimensions[i]), b = rhs.dimensions(d.rhs_batch_dimensions[i]);
    if (a != b) {
      return fail(StrCat("lhs batch dimension ", d.lhs_batch_dimensions[i], " has size ", a,
                         " but rhs batch dimension ", d.rhs_batch_dimensions[i], " has size ", b));
    }
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t a = lhs.dimensions(d.lhs_contracting_dimensions[i]), b = rhs.dimensions(d.rhs_contracting_dimensions[i]);
    if (a != b) {
      return fail(StrCat("lhs contracting dimension ", d.lhs_contracting_dimensions[i], " has size ", a,
                         " but rhs contracting dimension ", d.rhs_contracting_dimensions[i], " has size ", b));
    }
  }
  Shape r = Shape::ArrayWithoutLayout(result_type, {});
  for (int64_t b : d.lhs_batch_dimensions) r.add_dimension(lhs.dimensions(b));
  for (int64_t i : FreeDims(lhs.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions)) r.add_dimension(lhs.dimensions(i));
  for (int64_t i : FreeDims(rhs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions)) r.add_dimension(rhs.dimensions(i));
  r.SetDefaultLayout();
  return r;
}

namespace {

// ragged-dot(lhs, rhs, group_sizes), XLA's InferRaggedDotOpShape: exactly one
// lhs ragged dim; its kind picks the mode (non-contracting: one rhs group dim
// of size g, dropped from the result; contracting: the result leads with g;
// batch: a plain dot); group_sizes is [g] or [prefix..., g].
absl::StatusOr<Shape> InferRaggedDot(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  const DotDimensionNumbers& d = a.dot_dnums;
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& sizes = inst.operand(2)->shape();
  if (!sizes.IsArray() || sizes.rank() < 1 || !IsIntegralType(sizes.element_type())) {
    return Err(inst, "group_sizes must be an integer array of rank >= 1");
  }
  if (a.lhs_ragged_dims.size() != 1) return Err(inst, "needs exactly one lhs ragged dimension (lhs_ragged_dims)");
  const int64_t ragged = a.lhs_ragged_dims[0];
  if (ragged < 0 || ragged >= lhs.rank()) {
    return Err(inst, StrCat("lhs ragged dimension ", ragged, " is out of range [0, ", lhs.rank(), ")"));
  }
  const bool batch = absl::c_linear_search(d.lhs_batch_dimensions, ragged);
  const bool contracting = absl::c_linear_search(d.lhs_contracting_dimensions, ragged);
  const int64_t groups = sizes.dimensions(sizes.rank() - 1);
  for (int64_t g : a.rhs_group_dims) {
    if (g < 0 || g >= rhs.rank()) return Err(inst, StrCat("rhs group dimension ", g, " is out of range"));
    if (absl::c_linear_search(d.rhs_batch_dimensions, g) || absl::c_linear_search(d.rhs_contracting_dimensions, g)) {
      return Err(inst, "the rhs group dimension cannot be a batch or contracting dimension");
    }
  }
  if ((batch || contracting) && !a.rhs_group_dims.empty()) {
    return Err(inst, "there must be no rhs group dimension when the ragged dimension is batch or contracting");
  }
  if (!batch && !contracting) {
    if (a.rhs_group_dims.size() != 1) {
      return Err(inst, "needs exactly one rhs group dimension when the lhs ragged dimension is non-contracting");
    }
    if (rhs.dimensions(a.rhs_group_dims[0]) != groups) {
      return Err(inst, StrCat("the rhs group dimension has size ", rhs.dimensions(a.rhs_group_dims[0]),
                              " but group_sizes has ", groups, " groups"));
    }
  }
  // The dot without the rhs group dim: check dims as a dot does.
  Shape rhs_no_group = rhs;
  DotDimensionNumbers dd = d;
  if (!a.rhs_group_dims.empty()) {
    const int64_t g = a.rhs_group_dims[0];
    std::vector<int64_t> dims = rhs.dimensions();
    dims.erase(dims.begin() + g);
    rhs_no_group = Shape(rhs.element_type(), dims);
    for (auto* v : {&dd.rhs_batch_dimensions, &dd.rhs_contracting_dimensions}) {
      for (int64_t& x : *v) x -= x > g ? 1 : 0;
    }
  }
  PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : lhs.element_type();
  absl::StatusOr<Shape> dot = InferDotShape(lhs, rhs_no_group, dd, t);
  if (!dot.ok()) return Err(inst, std::string(dot.status().message()));
  if (!contracting) return *dot;
  std::vector<int64_t> dims = dot->dimensions();
  dims.insert(dims.begin(), groups);
  return Shape(t, dims);
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale), XLA's ShapeVerifier::
// HandleScaledDot: each scale is a scalar (no scaling) or has its operand's
// rank with every operand dim a multiple of the scale's; not both scalars;
// the result is the dot's.
absl::StatusOr<Shape> InferScaledDot(const HloInstruction& inst) {
  for (int64_t i : {0, 1}) {
    const Shape& x = inst.operand(i)->shape();
    const Shape& scale = inst.operand(i + 2)->shape();
    if (!scale.IsArray()) return Err(inst, "scales must be arrays");
    if (scale.rank() == 0) continue;
    if (scale.rank() != x.rank()) {
      return Err(inst, StrCat("scale operand ", i + 2, " has rank ", scale.rank(), " but operand ", i, " has rank ",
                              x.rank()));
    }
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (scale.dimensions(d) == 0 || x.dimensions(d) % scale.dimensions(d) != 0) {
        return Err(inst, StrCat("dimension ", d, " of operand ", i, " (", x.dimensions(d),
                                ") is not a multiple of the scale's (", scale.dimensions(d), ")"));
      }
    }
  }
  if (inst.operand(2)->shape().rank() == 0 && inst.operand(3)->shape().rank() == 0) {
    return Err(inst, "at least one of the scales must not be a scalar");
  }
  PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : inst.operand(0)->shape().element_type();
  absl::StatusOr<Shape> dot = InferDotShape(inst.operand(0)->shape(), inst.operand(1)->shape(), inst.attrs().dot_dnums, t);
  if (!dot.ok()) return Err(inst, std::string(dot.status().message()));
  return *dot;
}

// scan(inputs..., inits...), XLA's parser and HloScanInstruction: to_apply
// takes one slice of each input (the scan dim removed) and the carries, and
// returns (outputs..., new carries...); outputs gain the scan dim back.
absl::StatusOr<Shape> InferScan(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  const HloComputation* body = inst.to_apply();
  if (body == nullptr) return Err(inst, "needs to_apply");
  if (inst.dimensions().size() != 1) return Err(inst, "needs exactly one scan dimension");
  const int64_t carries = a.num_carries;
  const int64_t inputs = inst.operand_count() - carries;
  if (carries < 0 || inputs < 0) {
    return Err(inst, StrCat("has ", inst.operand_count(), " operands but num_carries=", carries));
  }
  if (inputs == 0) return Err(inst, "needs at least one input to infer the scan length");
  const int64_t dim = inst.dimensions(0);
  const Shape& first = inst.operand(0)->shape();
  if (dim < 0 || dim >= first.rank()) {
    return Err(inst, StrCat("scan dimension ", dim, " is out of range for an operand of rank ", first.rank()));
  }
  const int64_t length = first.dimensions(dim);
  std::vector<Shape> params;
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& in = inst.operand(i)->shape();
    if (!in.IsArray() || in.rank() <= dim || in.dimensions(dim) != length) {
      return Err(inst, StrCat("input ", i, " must be an array with dimension ", dim, " of size ", length));
    }
    std::vector<int64_t> dims = in.dimensions();
    dims.erase(dims.begin() + dim);
    params.push_back(Shape(in.element_type(), dims));
  }
  for (int64_t c = 0; c < carries; ++c) params.push_back(inst.operand(inputs + c)->shape());
  if (body->num_parameters() != static_cast<int64_t>(params.size())) {
    return Err(inst, StrCat("to_apply takes ", body->num_parameters(), " parameters but the scan passes ",
                            params.size(), " (", inputs, " input slices and ", carries, " carries)"));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!body->parameter_instruction(i)->shape().Compatible(params[i])) {
      return Err(inst, StrCat("to_apply parameter ", i, " is ", body->parameter_instruction(i)->shape().ToString(false),
                              " but the scan passes ", params[i].ToString(false)));
    }
  }
  const Shape& root = body->root_instruction()->shape();
  std::vector<Shape> parts = root.IsTuple() ? root.tuple_shapes() : std::vector<Shape>{root};
  const int64_t outputs = static_cast<int64_t>(parts.size()) - carries;
  if (outputs < 0) return Err(inst, "to_apply returns fewer values than num_carries");
  for (int64_t c = 0; c < carries; ++c) {
    if (!parts[outputs + c].Compatible(inst.operand(inputs + c)->shape())) {
      return Err(inst, StrCat("to_apply's carry ", c, " is ", parts[outputs + c].ToString(false),
                              " but its init is ", inst.operand(inputs + c)->shape().ToString(false)));
    }
  }
  for (int64_t o = 0; o < outputs; ++o) {
    if (!parts[o].IsArray()) return Err(inst, "to_apply's outputs must be arrays");
    std::vector<int64_t> dims = parts[o].dimensions();
    dims.insert(dims.begin() + dim, length);
    parts[o] = Shape(parts[o].element_type(), dims);
  }
  if (!root.IsTuple()) return parts[0];
  return Shape::Tuple(parts);
}

}  // namespace

absl::StatusOr<Shape> InferConvolveShape(const Shape& lhs, const Shape& rhs, int64_t fgc, int64_t bgc,
                                         const Window& window, const ConvolutionDimensionNumbers& d,
                                         PrimitiveType result_type) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("convolution: ", m)); };
  if (lhs.rank() != rhs.rank() || lhs.rank() < 2) return fail("input and kernel need the same rank (at least 2)");
  int64_t spatial = lhs.rank() - 2;
  if (static_cast<int64_t>(d.input_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.output_spatial_dimensions.size()) != spatial) {
    return fail("dim_labels do not match the rank");
  }
  if (static_cast<int64_t>(window.dimensions.size()) != spatial) {
    return fail(StrCat("window has ", window.dimensions.size(), " dimensions for ", spatial, " spatial dimensions"));
  }
  if (fgc <= 0 || bgc <= 0) return fail("group counts must be positive");
  int64_t in_batch = lhs.dimensions(d.input_batch_dimension);
  int64_t in_feature = lhs.dimensions(d.input_feature_dimension);
  int64_t k_in = rhs.dimensions(d.kernel_input_feature_dimension);
  int64_t k_out = rhs.dimensions(d.kernel_output_feature_dimension);
  if (in_feature % fgc != 0 || in_feature / fgc != k_in) {
    return fail(StrCat("input features (", in_feature, ") / feature_group_count (", fgc,
                       ") must equal the kernel's input features (", k_in, ")"));
  }
  if (k_out % fgc != 0) return fail("kernel output features must be divisible by feature_group_count");
  if (in_batch % bgc != 0 || k_out % bgc != 0) return fail("batch_group_count must divide the batch and output features");
  std::vector<int64_t> out(lhs.rank(), 0);
  out[d.output_batch_dimension] = in_batch / bgc;
  out[d.output_feature_dimension] = k_out;
  for (int64_t i = 0; i < spatial; ++i) {
    WindowDimension w = window.dimensions[i];
    if (w.size != rhs.dimensions(d.kernel_spatial_dimensions[i])) {
      return fail(StrCat("window size ", w.size, " != kernel spatial size ", rhs.dimensions(d.kernel_spatial_dimensions[i])));
    }
    if (w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) return fail("window strides and dilations must be positive");
    out[d.output_spatial_dimensions[i]] = WindowOutputSize(lhs.dimensions(d.input_spatial_dimensions[i]), w);
  }
  return Shape(result_type, out);
}

absl::StatusOr<Shape> InferGatherShape(const Shape& operand, const Shape& indices,
                                       const GatherDimensionNumbers& d, const std::vector<int64_t>& slice_sizes) {
  auto fail = [](std::string m) { return absl::InvalidArgumentError(StrCat("gather: ", m)); };
  if (!IsIntegralType(indices.element_type())) return fail("start indices must be integers");
  if (d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) return fail("index_vector_dim is out of range");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) return fail("slice_sizes must match the operand rank");
  int64_t index_vector_size = d.index_vector_dim < indices.rank() ? indices.dimensions(d.index_vector_dim) : 1;
  if (static_cast<int64_t>(d.start_index_map.size()) != index_vector_size) {
    return fail(StrCat("start_index_map has ", d.start_index_map.size(), " entries but the index vector has ",
                       index_vector_size));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (slice_sizes[i] < 0 || slice_sizes[i] > operand.dimensions(i)) {
      return fail(StrCat("slice size ", slice_sizes[i], " of dimension ", i, " exceeds ", operand.dimensions(i)));
    }
  }
  for (int64_t c : d.collapsed_slice_dims) {
    if (c < 0 || c >= operand.rank() || slice_sizes[c] > 1) return fail("collapsed slice dims must have size <= 1");
  }
  std::vector<int64_t> batch_dims;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != d.index_vector_dim) batch_dims.push_back(indices.dimensions(i));
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    bool collapsed = std::find(d.collapsed_slice_dims.begin(), d.collapsed_slice_dims.end(), i) != d.collapsed_slice_dims.end();
    bool batching = std::find(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), i) != d.operand_batching_dims.end();
    if (!collapsed && !batching) offset_sizes.push_back(slice_sizes[i]);
  }
  if (offset_sizes.size() != d.offset_dims.size()) {
    return fail(StrCat("offset_dims has ", d.offset_dims.size(), " entries but ", offset_sizes.size(),
                       " slice dimensions are not collapsed"));
  }
  int64_t rank = static_cast<int64_t>(batch_dims.size() + offset_sizes.size());
  std::vector<int64_t> out(rank);
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < rank; ++i) {
    auto it = std::find(d.offset_dims.begin(), d.offset_dims.end(), i);
    if (it != d.offset_dims.end()) {
      out[i] = offset_sizes[oi++];
    } else {
      if (bi >= batch_dims.size()) return fail("offset_dims are inconsistent with the output rank");
      out[i] = batch_dims[bi++];
    }
  }
  return Shape(operand.element_type(), out);
}

// The fewest operands an opcode's inference reads (fixed arities exactly;
// variadic ones at least this many).
int64_t MinOperands(HloOpcode op) {
  int arity = HloOpcodeArity(op);
  if (arity != kVariadic) return arity;
  switch (op) {
    case HloOpcode::kDot: case HloOpcode::kReduce: case HloOpcode::kReduceWindow:
    case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kRng:
      return 2;
    case HloOpcode::kScatter:
      return 3;
    case HloOpcode::kDynamicSlice: case HloOpcode::kConcatenate: case HloOpcode::kSort:
    case HloOpcode::kMap: case HloOpcode::kConditional: case HloOpcode::kDynamicReshape:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll: case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kWhile: case HloOpcode::kAsyncUpdate:
    case HloOpcode::kRaggedAllToAll: case HloOpcode::kScan:
      return 1;
    default:
      return 0;
  }
}

namespace {

// An elementwise result is laid out like its (first) operand, as XLA's
// InferUnaryOpShape and InferElementwiseBinaryOpShape keep the operand's
// layout: `abs(x)` written without a shape gets x's minor_to_major.
absl::StatusOr<Shape> WithOperandLayout(absl::StatusOr<Shape> inferred, const Shape& operand) {
  if (!inferred.ok() || !inferred->IsArray() || !operand.IsArray() || !operand.has_layout() ||
      operand.rank() != inferred->rank()) {
    return inferred;
  }
  Layout layout = Layout::Default(inferred->rank());
  layout.mutable_minor_to_major() = operand.layout().minor_to_major();
  inferred->set_layout(std::move(layout));
  return inferred;
}

}  // namespace

absl::StatusOr<Shape> InferInstructionShape(const HloInstruction& inst) {
  int arity = HloOpcodeArity(inst.opcode());
  int64_t needed = MinOperands(inst.opcode());
  if (inst.operand_count() < needed || (arity != kVariadic && inst.operand_count() != arity)) {
    return Err(inst, StrCat("has ", inst.operand_count(), " operand(s) but needs ",
                            arity != kVariadic ? "exactly " : "at least ", needed));
  }
  for (const HloInstruction* op : inst.operands()) {
    if (op->shape().element_type() == PrimitiveType::kInvalid) {
      return Err(inst, StrCat("operand '", op->name(), "' has no shape"));
    }
  }
  const HloAttributes& a = inst.attrs();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  switch (inst.opcode()) {
    // Elementwise.
    case HloOpcode::kAbs: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClz:
    case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIsFinite:
    case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kReducePrecision: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign: case HloOpcode::kSin:
    case HloOpcode::kSqrt: case HloOpcode::kTan: case HloOpcode::kTanh:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh:
      if (inst.opcode() == HloOpcode::kReducePrecision && (a.exponent_bits < 1 || a.mantissa_bits < 0)) {
        return Err(inst, "needs exponent_bits >= 1 and mantissa_bits >= 0");
      }
      if (inst.opcode() == HloOpcode::kCopy && !operand(0).IsArray()) return operand(0);
      return WithOperandLayout(InferUnary(inst), operand(0));
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kCompare:
    case HloOpcode::kComplex: case HloOpcode::kDivide: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kMultiply: case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
    case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kXor:
    case HloOpcode::kMulhi:
      return WithOperandLayout(InferBinary(inst), operand(0));
    case HloOpcode::kClamp: {
      const Shape& x = operand(1);
      for (int i : {0, 2}) {
        if (!operand(i).IsScalar() && !operand(i).SameDimensions(x)) return Err(inst, "min and max must be scalars or match the operand");
        if (operand(i).element_type() != x.element_type()) return Err(inst, "min, operand and max must share an element type");
      }
      return ArrayLike(x, x.element_type());
    }
    case HloOpcode::kSelect: {
      const Shape& p = operand(0);
      if (p.element_type() != PrimitiveType::kPred) return Err(inst, "the predicate must be pred");
      if (!operand(1).Compatible(operand(2))) return Err(inst, "on_true and on_false must have the same shape");
      if (!p.IsScalar() && !p.SameDimensions(operand(1))) return Err(inst, "the predicate must match the operands' dimensions");
      return operand(1).IsArray() ? ArrayLike(operand(1), operand(1).element_type()) : operand(1);
    }
    case HloOpcode::kConvert:
      if (!HasShape(inst)) return OwnShape(inst, "the target type is chosen by the instruction");
      if (!operand(0).IsArray()) return Err(inst, "needs an array operand");
      return ArrayLike(operand(0), inst.shape().element_type());
    case HloOpcode::kBitcastConvert:
      return InferBitcastConvert(inst);
    case HloOpcode::kMap: {
      if (inst.operand_count() == 0) return Err(inst, "needs operands");
      std::vector<Shape> params;
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().SameDimensions(operand(0))) return Err(inst, "operands must have the same dimensions");
        params.push_back(Shape::Scalar(op->shape().element_type()));
      }
      const HloComputation* f = inst.to_apply();
      if (f == nullptr || f->root_instruction() == nullptr || !f->root_instruction()->shape().IsScalar()) {
        return Err(inst, "the mapped computation must return a scalar");
      }
      if (absl::Status s = CheckSignature(inst, f, params, f->root_instruction()->shape(), "mapped"); !s.ok()) return s;
      return ArrayLike(operand(0), f->root_instruction()->shape().element_type());
    }
    // Shape-defining ops.
    case HloOpcode::kParameter:
      return OwnShape(inst, "parameters declare their shape");
    case HloOpcode::kConstant:
      return inst.literal().shape();
    case HloOpcode::kIota:
      if (!HasShape(inst)) return OwnShape(inst, "iota declares its shape");
      if (!inst.shape().IsArray() || inst.iota_dimension() < 0 || inst.iota_dimension() >= std::max<int64_t>(inst.shape().rank(), 1)) {
        return Err(inst, "iota_dimension is out of range");
      }
      return inst.shape();
    case HloOpcode::kRng:
      if (!HasShape(inst)) return OwnShape(inst, "rng declares its shape");
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().IsScalar() || op->shape().element_type() != inst.shape().element_type()) {
          return Err(inst, "the distribution parameters must be scalars of the result type");
        }
      }
      return inst.shape();
    case HloOpcode::kRngBitGenerator:
      if (!HasShape(inst)) return OwnShape(inst, "rng-bit-generator declares its shape");
      if (!inst.shape().IsTuple() || inst.shape().tuple_shapes_size() != 2 ||
          !inst.shape().tuple_shapes(0).Compatible(operand(0))) {
        return Err(inst, "the result must be (state, values) with the state shaped like the operand");
      }
      return inst.shape();
    case HloOpcode::kRngGetAndUpdateState:
      return Shape(PrimitiveType::kU64, {2});
    case HloOpcode::kReshape: case HloOpcode::kDynamicReshape: case HloOpcode::kBitcast: {
      if (!HasShape(inst)) return OwnShape(inst, "reshapes declare their shape");
      if (inst.opcode() == HloOpcode::kReshape || inst.opcode() == HloOpcode::kBitcast) {
        const Shape& in = operand(0);
        if (!in.IsArray() || !inst.shape().IsArray()) return Err(inst, "needs array shapes");
        if (inst.opcode() == HloOpcode::kReshape && in.element_type() != inst.shape().element_type()) {
          return Err(inst, "cannot change the element type (use convert)");
        }
        int64_t in_bytes = in.element_count() * PrimitiveBitWidth(in.element_type());
        int64_t out_bytes = inst.shape().element_count() * PrimitiveBitWidth(inst.shape().element_type());
        if (inst.opcode() == HloOpcode::kReshape ? in.element_count() != inst.shape().element_count()
                                                 : in_bytes != out_bytes) {
          return Err(inst, StrCat("cannot reshape ", in.ToString(false), " (", in.element_count(),
                                  " elements) to ", inst.shape().ToString(false), " (",
                                  inst.shape().element_count(), " elements)"));
        }
      }
      return inst.shape();
    }
    case HloOpcode::kBroadcast:
      return InferBroadcast(inst);
    case HloOpcode::kTranspose:
      return InferTranspose(inst);
    case HloOpcode::kReverse:
      if (absl::Status s = CheckDimsValid(inst, inst.dimensions(), operand(0).rank(), "reversed dimension"); !s.ok()) return s;
      return ArrayLike(operand(0), operand(0).element_type());
    case HloOpcode::kSlice:
      return InferSlice(inst);
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice(inst);
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(inst);
    case HloOpcode::kConcatenate:
      return InferConcatenate(inst);
    case HloOpcode::kPad:
      return InferPad(inst);
    case HloOpcode::kReduce:
      return InferReduce(inst);
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(inst);
    case HloOpcode::kSelectAndScatter: {
      const Shape& op = operand(0);
      absl::StatusOr<Shape> windowed = InferWindowOutputShape(op, inst.window(), op.element_type());
      if (!windowed.ok()) return Err(inst, std::string(windowed.status().message()));
      if (!windowed->SameDimensions(operand(1))) {
        return Err(inst, StrCat("source is ", operand(1).ToString(false), " but the window gives ",
                                windowed->ToString(false)));
      }
      if (!operand(2).IsScalar()) return Err(inst, "init value must be a scalar");
      PrimitiveType t = op.element_type();
      if (absl::Status s = CheckSignature(inst, inst.select(), {Shape::Scalar(t), Shape::Scalar(t)},
                                          Shape::Scalar(PrimitiveType::kPred), "select");
          !s.ok()) {
        return s;
      }
      if (absl::Status s = CheckReducer(inst, inst.scatter(), {t}); !s.ok()) return s;
      return ArrayLike(op, t);
    }
    case HloOpcode::kDot: {
      PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : operand(0).element_type();
      absl::StatusOr<Shape> s = InferDotShape(operand(0), operand(1), a.dot_dnums, t);
      return s;
    }
    case HloOpcode::kConvolution: {
      if (!a.conv_dnums.has_value()) return Err(inst, "missing dim_labels");
      PrimitiveType t = HasShape(inst) ? inst.shape().element_type() : operand(0).element_type();
      return InferConvolveShape(operand(0), operand(1), a.feature_group_count, a.batch_group_count,
                                inst.window(), *a.conv_dnums, t);
    }
    case HloOpcode::kGather:
      return InferGatherShape(operand(0), operand(1), a.gather_dnums, a.slice_sizes);
    case HloOpcode::kScatter:
      return InferScatter(inst);
    case HloOpcode::kSort:
      return InferSort(inst);
    case HloOpcode::kRaggedDot:
      return InferRaggedDot(inst);
    case HloOpcode::kScaledDot:
      return InferScaledDot(inst);
    case HloOpcode::kScan:
      return InferScan(inst);
    case HloOpcode::kTopK: {
      const Shape& op = operand(0);
      if (op.rank() < 1 || a.k < 0 || a.k > op.dimensions(op.rank() - 1)) return Err(inst, "k must be within the last dimension");
      Shape values = ArrayLike(op, op.element_type());
      values.set_dimensions(op.rank() - 1, a.k);
      Shape indices = ArrayLike(values, PrimitiveType::kS32);
      return Shape::Tuple({values, indices});
    }
    case HloOpcode::kFft:
      return InferFft(inst);
    case HloOpcode::kCholesky: {
      const Shape& op = operand(0);
      if (op.rank() < 2 || op.dimensions(op.rank() - 1) != op.dimensions(op.rank() - 2)) {
        return Err(inst, "needs square matrices in the minor two dimensions");
      }
      return ArrayLike(op, op.element_type());
    }
    case HloOpcode::kTriangularSolve: {
      const Shape& am = operand(0);
      const Shape& b = operand(1);
      if (am.rank() < 2 || am.dimensions(am.rank() - 1) != am.dimensions(am.rank() - 2)) return Err(inst, "a must be square");
      if (b.rank() != am.rank()) return Err(inst, "a and b need the same rank");
      int64_t n = am.dimensions(am.rank() - 1);
      int64_t bdim = a.triangular_solve.left_side ? b.dimensions(b.rank() - 2) : b.dimensions(b.rank() - 1);
      if (bdim != n) return Err(inst, "b's shared dimension must match a");
      return ArrayLike(b, b.element_type());
    }
    case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormGrad:
      return InferBatchNorm(inst);
    // Tuples and control flow.
    case HloOpcode::kTuple:
      return InferTuple(inst);
    case HloOpcode::kGetTupleElement: {
      const Shape& t = operand(0);
      if (!t.IsTuple() || inst.tuple_index() < 0 || inst.tuple_index() >= t.tuple_shapes_size()) {
        return Err(inst, StrCat("index ", inst.tuple_index(), " is out of range for ", t.ToString(false)));
      }
      return t.tuple_shapes(inst.tuple_index());
    }
    case HloOpcode::kWhile: {
      const Shape& s = operand(0);
      if (inst.called_computations().size() != 2) return Err(inst, "needs a condition and a body");
      if (absl::Status st = CheckSignature(inst, inst.while_condition(), {s}, Shape::Scalar(PrimitiveType::kPred), "condition"); !st.ok()) return st;
      if (absl::Status st = CheckSignature(inst, inst.while_body(), {s}, s, "body"); !st.ok()) return st;
      return s;
    }
    case HloOpcode::kConditional: {
      const Shape& index = operand(0);
      int64_t branches = inst.branch_count();
      if (branches < 1) return Err(inst, "needs at least one branch");
      if (!index.IsScalar() || (index.element_type() != PrimitiveType::kS32 &&
                                !(index.element_type() == PrimitiveType::kPred && branches == 2))) {
        return Err(inst, "the branch index must be s32[] (or pred[] with two branches)");
      }
      if (inst.operand_count() != branches + 1) return Err(inst, "needs one operand per branch");
      const HloComputation* b0 = inst.branch_computation(0);
      if (b0 == nullptr || b0->root_instruction() == nullptr) return Err(inst, "branch 0 is empty");
      Shape result = b0->root_instruction()->shape();
      for (int64_t i = 0; i < branches; ++i) {
        if (absl::Status s = CheckSignature(inst, inst.branch_computation(i), {operand(i + 1)}, result,
                                            StrCat("branch ", i));
            !s.ok()) {
          return s;
        }
      }
      return result;
    }
    case HloOpcode::kCall: case HloOpcode::kFusion: {
      const HloComputation* c = inst.to_apply();
      if (c == nullptr || c->root_instruction() == nullptr) return Err(inst, "needs a called computation");
      std::vector<Shape> params;
      for (const HloInstruction* op : inst.operands()) params.push_back(op->shape());
      if (absl::Status s = CheckSignature(inst, c, params, c->root_instruction()->shape(),
                                          inst.opcode() == HloOpcode::kCall ? "called" : "fused");
          !s.ok()) {
        return s;
      }
      return c->root_instruction()->shape();
    }
    case HloOpcode::kCustomCall:
      return OwnShape(inst, "custom calls declare their shape");
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kDomain:
      return operand(0);
    case HloOpcode::kAddDependency:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return operand(0);
    case HloOpcode::kAfterAll:
      for (const HloInstruction* op : inst.operands()) {
        if (!op->shape().IsToken()) return Err(inst, "operands must be tokens");
      }
      return Shape::Token();
    case HloOpcode::kGetDimensionSize:
      if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= operand(0).rank()) {
        return Err(inst, "needs one dimension within the rank");
      }
      return Shape::Scalar(PrimitiveType::kS32);
    case HloOpcode::kSetDimensionSize: {
      if (inst.dimensions().size() != 1 || inst.dimensions(0) < 0 || inst.dimensions(0) >= operand(0).rank()) {
        return Err(inst, "needs one dimension within the rank");
      }
      Shape r = ArrayLike(operand(0), operand(0).element_type());
      r.set_dynamic_dimension(inst.dimensions(0), true);
      return r;
    }
    case HloOpcode::kReplicaId: case HloOpcode::kPartitionId:
      return Shape::Scalar(PrimitiveType::kU32);
    // Collectives.
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kReduceScatter:
    case HloOpcode::kRaggedAllToAll:
      return InferCollective(inst);
    case HloOpcode::kAllReduceDone: case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyDone: {
      const Shape& s = operand(0);
      if (inst.opcode() == HloOpcode::kAllReduceDone) return s;
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) return Err(inst, "needs the tuple its -start produced");
      return s.tuple_shapes(1);
    }
    case HloOpcode::kCollectivePermuteStart:
      return Shape::Tuple({operand(0), operand(0), Shape::Scalar(PrimitiveType::kU32),
                           Shape::Scalar(PrimitiveType::kU32)});
    case HloOpcode::kCopyStart:
      return Shape::Tuple({operand(0), operand(0), Shape::Scalar(PrimitiveType::kU32)});
    case HloOpcode::kSend:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return Shape::Tuple({operand(0), Shape::Scalar(PrimitiveType::kU32), Shape::Token()});
    case HloOpcode::kSendDone:
      return Shape::Token();
    case HloOpcode::kRecv:
      return OwnShape(inst, "recv declares what it receives");
    case HloOpcode::kRecvDone: {
      const Shape& s = operand(0);
      if (!s.IsTuple() || s.tuple_shapes_size() != 3) return Err(inst, "needs the tuple recv produced");
      return Shape::Tuple({s.tuple_shapes(0), Shape::Token()});
    }
    case HloOpcode::kInfeed:
      return OwnShape(inst, "infeed declares what it reads");
    case HloOpcode::kOutfeed:
      if (!operand(1).IsToken()) return Err(inst, "the second operand must be a token");
      return Shape::Token();
    // Async ops (seed 001).
    case HloOpcode::kAsyncStart: {
      if (!HasShape(inst)) {
        const HloInstruction* w = inst.async_wrapped_instruction();
        if (w == nullptr) return Err(inst, "needs a wrapped computation");
        std::vector<Shape> ops;
        for (const HloInstruction* op : inst.operands()) ops.push_back(op->shape());
        return Shape::Tuple({Shape::Tuple(ops), w->shape(), Shape::Scalar(PrimitiveType::kS32)});
      }
      return inst.shape();
    }
    case HloOpcode::kAsyncUpdate:
      return operand(0);
    case HloOpcode::kAsyncDone: {
      const Shape& s = operand(0);
      if (!s.IsTuple() || s.tuple_shapes_size() < 2) return Err(inst, "needs the async-start tuple");
      return s.tuple_shapes(1);
    }
  }
  return Err(inst, "unknown opcode");
}

}  // namespace passlab
