// Shape inference: reductions, windows, scans, FFTs, batch norms and
// collectives.
#include "core/verify/shape_inference_internal.h"

#include <algorithm>
#include <set>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace shape_inference_internal {

absl::StatusOr<Shape> InferReduce(const HloInstruction& inst) {
  int64_t n = inst.operand_count() / 2;
  if (n == 0 || inst.operand_count() % 2 != 0) return Err(inst, "needs N operands and N init values");
  const Shape& first = inst.operand(0)->shape();
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    const Shape& init = inst.operand(n + i)->shape();
    RETURN_IF_ERROR(CheckArray(inst, s, "an operand"));
    if (!s.SameDimensions(first)) return Err(inst, "all operands must have the same dimensions");
    if (!init.IsScalar()) return Err(inst, StrCat("init value ", i, " must be a scalar"));
    types.push_back(init.element_type());
  }
  if (absl::Status st = CheckDimsValid(inst, inst.dimensions(), first.rank(), "reduced dimension"); !st.ok()) {
    return st;
  }
  RETURN_IF_ERROR(CheckReducer(inst, inst.to_apply(), types));
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
  RETURN_IF_ERROR(CheckWindow(inst.window(), first.rank(), "reduce-window"));
  std::vector<PrimitiveType> types;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& init = inst.operand(n + i)->shape();
    if (!inst.operand(i)->shape().SameDimensions(first)) return Err(inst, "operands must have equal dimensions");
    if (!init.IsScalar()) return Err(inst, "init values must be scalars");
    types.push_back(init.element_type());
    ASSIGN_OR_RETURN(Shape r, InferWindowOutputShape(first, inst.window(), init.element_type()));
    results.push_back(r);
  }
  RETURN_IF_ERROR(CheckReducer(inst, inst.to_apply(), types));
  return n == 1 ? results[0] : Shape::Tuple(results);
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
        RETURN_IF_ERROR(CheckReducer(inst, inst.to_apply(), {t}));
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

}  // namespace shape_inference_internal

using namespace shape_inference_internal;

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type) {
  RETURN_IF_ERROR(CheckWindow(window, base.rank(), "window"));
  Shape r = Shape::ArrayWithoutLayout(element_type, {});
  for (int64_t i = 0; i < base.rank(); ++i) r.add_dimension(WindowOutputSize(base.dimensions(i), window.dimensions[i]));
  r.SetDefaultLayout();
  return r;
}

}  // namespace passlab
