#include "models/hlo_builder.h"

#include <cctype>
#include <cmath>
#include <utility>

#include "core/ir/str_util.h"
#include "core/verify/shape_inference.h"

namespace passlab {

HloBuilder::HloBuilder(HloModule* module, std::string name, bool is_entry) : module_(module) {
  auto computation = std::make_unique<HloComputation>(std::move(name));
  computation_ = is_entry ? module->AddEntryComputation(std::move(computation))
                          : module->AddEmbeddedComputation(std::move(computation));
}

HloBuilder::HloBuilder(HloComputation* existing)
    : module_(existing->parent()), computation_(existing), next_parameter_(existing->num_parameters()) {}

std::string HloBuilder::ScopePath() const { return Join(scopes_, "/"); }

absl::StatusOr<HloComputation*> HloBuilder::Build(const std::vector<Op>& outputs) {
  if (!status_.ok()) return status_;
  if (outputs.empty()) return absl::InvalidArgumentError(StrCat("computation '", computation_->name(), "' has no outputs"));
  Op root = outputs.size() == 1 ? outputs[0] : Tuple(outputs);
  if (!status_.ok()) return status_;
  computation_->set_root_instruction(root);
  return computation_;
}

Op HloBuilder::Fail(std::string_view op, HloOpcode opcode, std::string_view message) {
  if (status_.ok()) {
    std::string where = ScopePath();
    status_ = absl::InvalidArgumentError(StrCat("op '", op, "' (", HloOpcodeString(opcode), ")",
                                                where.empty() ? "" : StrCat(" in '", where, "'"),
                                                ": ", message));
  }
  return nullptr;
}

Op HloBuilder::AddInstruction(std::unique_ptr<HloInstruction> instruction, bool infer, std::string name) {
  if (!status_.ok()) {
    instruction->DetachFromOperands();
    return nullptr;
  }
  for (const HloInstruction* operand : instruction->operands()) {
    if (operand == nullptr || operand->parent() != computation_) {
      instruction->DetachFromOperands();
      return Fail(name.empty() ? HloOpcodeString(instruction->opcode()) : name, instruction->opcode(),
                  operand == nullptr ? "operand is null" : StrCat("operand '", operand->name(), "' belongs to another computation"));
    }
  }
  if (infer) {
    absl::StatusOr<Shape> shape = InferInstructionShape(*instruction);
    if (!shape.ok()) {
      HloOpcode opcode = instruction->opcode();
      instruction->DetachFromOperands();
      return Fail(name.empty() ? HloOpcodeString(opcode) : name, opcode, std::string(std::string(shape.status().message())));
    }
    if (instruction->shape().element_type() != PrimitiveType::kInvalid &&
        !instruction->shape().Compatible(*shape)) {
      HloOpcode opcode = instruction->opcode();
      std::string message = StrCat("result shape ", instruction->shape().ToString(false),
                                   " does not match the inferred ", shape->ToString(false));
      instruction->DetachFromOperands();
      return Fail(name.empty() ? HloOpcodeString(opcode) : name, opcode, message);
    }
    *instruction->mutable_shape() = *shape;
  }
  OpMetadata metadata;
  metadata.op_type = op_type_.empty() ? std::string(HloOpcodeString(instruction->opcode())) : op_type_;
  std::string path = ScopePath();
  std::string leaf = name.empty() ? std::string(HloOpcodeString(instruction->opcode())) : name;
  metadata.op_name = path.empty() ? leaf : StrCat(path, "/", leaf);
  instruction->set_metadata(std::move(metadata));
  if (instruction->opcode() == HloOpcode::kParameter) {
    return computation_->AddParameter(std::move(instruction));
  }
  return computation_->AddInstruction(std::move(instruction), name);
}

bool HloBuilder::CheckOperands(std::string_view op, std::initializer_list<Op> operands) {
  if (!status_.ok()) return false;
  for (Op o : operands) {
    if (o == nullptr) {
      std::string where = ScopePath();
      status_ = absl::InvalidArgumentError(StrCat("op '", op, "'", where.empty() ? "" : StrCat(" in '", where, "'"),
                                                  ": an operand is null"));
      return false;
    }
  }
  return true;
}

Op HloBuilder::Parameter(const Shape& shape, std::string name) {
  if (!status_.ok()) return nullptr;
  for (char ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-') {
      return Fail(name, HloOpcode::kParameter, "parameter names may only use letters, digits, '_', '.' and '-'");
    }
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return Fail(name, HloOpcode::kParameter, "parameter names must start with a letter or '_'");
  }
  return AddInstruction(HloInstruction::CreateParameter(next_parameter_++, shape, name), false, name);
}

Op HloBuilder::ConstantLiteral(Literal literal, std::string name) {
  return AddInstruction(HloInstruction::CreateConstant(std::move(literal)), false, std::move(name));
}

Op HloBuilder::ConstantScalar(PrimitiveType type, double value) {
  Literal l(Shape::Scalar(type));
  l.SetDouble(0, value);
  return ConstantLiteral(std::move(l));
}

Op HloBuilder::Full(const Shape& shape, double value) {
  return BroadcastScalar(ConstantScalar(shape.element_type(), value), shape.dimensions());
}

Op HloBuilder::Iota(const Shape& shape, int64_t dimension) {
  return AddInstruction(HloInstruction::CreateIota(shape, dimension), true);
}

Op HloBuilder::Unary(HloOpcode opcode, Op x) {
  if (!CheckOperands(HloOpcodeString(opcode), {x})) return nullptr;
  return AddInstruction(HloInstruction::CreateUnary(Shape(), opcode, x), true);
}

Op HloBuilder::Binary(HloOpcode opcode, Op a, Op b) {
  if (!CheckOperands(HloOpcodeString(opcode), {a, b})) return nullptr;
  return AddInstruction(HloInstruction::CreateBinary(Shape(), opcode, a, b), true);
}

Op HloBuilder::Compare(Op a, Op b, ComparisonDirection direction) {
  if (!CheckOperands("compare", {a, b})) return nullptr;
  return AddInstruction(HloInstruction::CreateCompare(Shape(), a, b, direction), true);
}

Op HloBuilder::Select(Op pred, Op on_true, Op on_false) {
  if (!CheckOperands("select", {pred, on_true, on_false})) return nullptr;
  return AddInstruction(HloInstruction::CreateTernary(Shape(), HloOpcode::kSelect, pred, on_true, on_false), true);
}

Op HloBuilder::Convert(Op x, PrimitiveType type) {
  if (!CheckOperands("convert", {x})) return nullptr;
  if (x->shape().element_type() == type) return x;
  return AddInstruction(HloInstruction::CreateConvert(Shape(type, x->shape().dimensions()), x), true);
}

Op HloBuilder::MulScalar(Op a, double b) {
  if (!CheckOperands("multiply", {a})) return nullptr;
  return Mul(a, Full(a->shape(), b));
}

Op HloBuilder::AddScalar(Op a, double b) {
  if (!CheckOperands("add", {a})) return nullptr;
  return Add(a, Full(a->shape(), b));
}

Op HloBuilder::Broadcast(Op x, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& dimensions) {
  if (!CheckOperands("broadcast", {x})) return nullptr;
  return AddInstruction(
      HloInstruction::CreateBroadcast(Shape(x->shape().element_type(), out_dims), x, dimensions), true);
}

Op HloBuilder::Reshape(Op x, const std::vector<int64_t>& dims) {
  if (!CheckOperands("reshape", {x})) return nullptr;
  if (x->shape().dimensions() == dims) return x;
  return AddInstruction(HloInstruction::CreateReshape(Shape(x->shape().element_type(), dims), x), true);
}

Op HloBuilder::Transpose(Op x, const std::vector<int64_t>& permutation) {
  if (!CheckOperands("transpose", {x})) return nullptr;
  bool identity = true;
  for (int64_t i = 0; i < static_cast<int64_t>(permutation.size()); ++i) identity &= permutation[i] == i;
  if (identity && static_cast<int64_t>(permutation.size()) == x->shape().rank()) return x;
  std::vector<int64_t> dims;
  for (int64_t p : permutation) {
    if (p < 0 || p >= x->shape().rank()) return Fail("transpose", HloOpcode::kTranspose, StrCat("permutation entry ", p, " out of range"));
    dims.push_back(x->shape().dimensions(p));
  }
  return AddInstruction(
      HloInstruction::CreateTranspose(Shape(x->shape().element_type(), dims), x, permutation), true);
}

Op HloBuilder::Reverse(Op x, const std::vector<int64_t>& dimensions) {
  if (!CheckOperands("reverse", {x})) return nullptr;
  return AddInstruction(HloInstruction::CreateReverse(Shape(), x, dimensions), true);
}

Op HloBuilder::Slice(Op x, const std::vector<int64_t>& starts, const std::vector<int64_t>& limits,
                     const std::vector<int64_t>& strides) {
  if (!CheckOperands("slice", {x})) return nullptr;
  if (starts.size() != limits.size() || (!strides.empty() && strides.size() != starts.size())) {
    return Fail("slice", HloOpcode::kSlice, "starts, limits and strides differ in length");
  }
  std::vector<SliceDimension> slice;
  for (size_t i = 0; i < starts.size(); ++i) {
    slice.push_back({starts[i], limits[i], strides.empty() ? 1 : strides[i]});
  }
  return AddInstruction(HloInstruction::CreateSlice(Shape(), x, slice), true);
}

Op HloBuilder::Pad(Op x, Op value, const PaddingConfig& config) {
  if (!CheckOperands("pad", {x, value})) return nullptr;
  return AddInstruction(HloInstruction::CreatePad(Shape(), x, value, config), true);
}

Op HloBuilder::Concatenate(const std::vector<Op>& xs, int64_t dimension) {
  for (Op x : xs) {
    if (!CheckOperands("concatenate", {x})) return nullptr;
  }
  return AddInstruction(HloInstruction::CreateConcatenate(Shape(), xs, dimension), true);
}

Op HloBuilder::Tuple(const std::vector<Op>& xs) {
  for (Op x : xs) {
    if (!CheckOperands("tuple", {x})) return nullptr;
  }
  return AddInstruction(HloInstruction::CreateTuple(xs), true);
}

Op HloBuilder::GetTupleElement(Op t, int64_t index) {
  if (!CheckOperands("get-tuple-element", {t})) return nullptr;
  if (!t->shape().IsTuple() || index < 0 || index >= t->shape().tuple_shapes_size()) {
    return Fail("get-tuple-element", HloOpcode::kGetTupleElement,
                StrCat("index ", index, " is not an element of ", t->shape().ToString(false)));
  }
  return AddInstruction(HloInstruction::CreateGetTupleElement(t, index), true);
}

Op HloBuilder::Dot(Op a, Op b, const DotDimensionNumbers& dnums, PrimitiveType result_type) {
  if (!CheckOperands("dot", {a, b})) return nullptr;
  PrimitiveType type = result_type == PrimitiveType::kInvalid ? a->shape().element_type() : result_type;
  absl::StatusOr<Shape> shape = InferDotShape(a->shape(), b->shape(), dnums, type);
  if (!shape.ok()) return Fail("dot", HloOpcode::kDot, std::string(shape.status().message()));
  return AddInstruction(HloInstruction::CreateDot(*shape, a, b, dnums), true);
}

Op HloBuilder::MatMul(Op a, Op b) {
  if (!CheckOperands("dot", {a, b})) return nullptr;
  if (a->shape().rank() < 1 || b->shape().rank() != 2) {
    return Fail("dot", HloOpcode::kDot, StrCat("MatMul needs a rank>=1 lhs and a rank-2 rhs, got ",
                                               a->shape().ToString(false), " and ", b->shape().ToString(false)));
  }
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {a->shape().rank() - 1};
  d.rhs_contracting_dimensions = {0};
  return Dot(a, b, d);
}

Op HloBuilder::Convolution(Op lhs, Op rhs, const Window& window, const ConvolutionDimensionNumbers& dnums,
                           int64_t feature_group_count, int64_t batch_group_count) {
  if (!CheckOperands("convolution", {lhs, rhs})) return nullptr;
  absl::StatusOr<Shape> shape = InferConvolveShape(lhs->shape(), rhs->shape(), feature_group_count,
                                                   batch_group_count, window, dnums, lhs->shape().element_type());
  if (!shape.ok()) return Fail("convolution", HloOpcode::kConvolution, std::string(shape.status().message()));
  return AddInstruction(HloInstruction::CreateConvolve(*shape, lhs, rhs, feature_group_count, batch_group_count,
                                                       window, dnums),
                        true);
}

HloComputation* HloBuilder::Reducer(ReducerKind kind, PrimitiveType type) {
  std::string name = StrCat(kind == ReducerKind::kAdd ? "add_" : "max_", PrimitiveTypeName(type));
  if (HloComputation* existing = module_->GetComputationWithName(name)) return existing;
  HloBuilder r(module_, name, /*is_entry=*/false);
  Op a = r.Parameter(Shape::Scalar(type), "a");
  Op b = r.Parameter(Shape::Scalar(type), "b");
  Op root = r.Binary(kind == ReducerKind::kAdd ? HloOpcode::kAdd : HloOpcode::kMaximum, a, b);
  absl::StatusOr<HloComputation*> c = r.Build(root);
  return c.ok() ? *c : nullptr;
}

Op HloBuilder::Reduce(Op x, Op init, const std::vector<int64_t>& dimensions, ReducerKind kind) {
  if (!CheckOperands("reduce", {x, init})) return nullptr;
  HloComputation* reducer = Reducer(kind, x->shape().element_type());
  return AddInstruction(HloInstruction::CreateReduce(Shape(), {x}, {init}, dimensions, reducer), true);
}

Op HloBuilder::ReduceSum(Op x, const std::vector<int64_t>& dimensions) {
  if (!CheckOperands("reduce", {x})) return nullptr;
  return Reduce(x, ConstantScalar(x->shape().element_type(), 0), dimensions, ReducerKind::kAdd);
}

Op HloBuilder::ReduceMax(Op x, const std::vector<int64_t>& dimensions) {
  if (!CheckOperands("reduce", {x})) return nullptr;
  return Reduce(x, ConstantScalar(x->shape().element_type(), -INFINITY), dimensions, ReducerKind::kMax);
}

Op HloBuilder::ReduceWindow(Op x, Op init, const Window& window, ReducerKind kind) {
  if (!CheckOperands("reduce-window", {x, init})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kReduceWindow, Shape(), {x, init});
  inst->mutable_attrs().window = window;
  inst->set_to_apply(Reducer(kind, x->shape().element_type()));
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::SelectAndScatter(Op operand, Op source, Op init, const Window& window) {
  if (!CheckOperands("select-and-scatter", {operand, source, init})) return nullptr;
  PrimitiveType type = operand->shape().element_type();
  std::string select_name = StrCat("ge_", PrimitiveTypeName(type));
  HloComputation* select = module_->GetComputationWithName(select_name);
  if (select == nullptr) {
    HloBuilder s(module_, select_name, /*is_entry=*/false);
    Op a = s.Parameter(Shape::Scalar(type), "a");
    Op b = s.Parameter(Shape::Scalar(type), "b");
    absl::StatusOr<HloComputation*> c = s.Build(s.Compare(a, b, ComparisonDirection::kGe));
    if (!c.ok()) return Fail("select-and-scatter", HloOpcode::kSelectAndScatter, std::string(c.status().message()));
    select = *c;
  }
  auto inst = HloInstruction::Create(HloOpcode::kSelectAndScatter, Shape(), {operand, source, init});
  inst->mutable_attrs().window = window;
  inst->set_called_computation(0, select);
  inst->set_called_computation(1, Reducer(ReducerKind::kAdd, type));
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::BatchNormTraining(Op x, Op scale, Op offset, float epsilon, int64_t feature_index) {
  if (!CheckOperands("batch-norm-training", {x, scale, offset})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kBatchNormTraining, Shape(), {x, scale, offset});
  inst->mutable_attrs().epsilon = epsilon;
  inst->mutable_attrs().feature_index = feature_index;
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::BatchNormInference(Op x, Op scale, Op offset, Op mean, Op variance, float epsilon,
                                  int64_t feature_index) {
  if (!CheckOperands("batch-norm-inference", {x, scale, offset, mean, variance})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kBatchNormInference, Shape(), {x, scale, offset, mean, variance});
  inst->mutable_attrs().epsilon = epsilon;
  inst->mutable_attrs().feature_index = feature_index;
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::BatchNormGrad(Op x, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                             int64_t feature_index) {
  if (!CheckOperands("batch-norm-grad", {x, scale, mean, variance, grad_output})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kBatchNormGrad, Shape(), {x, scale, mean, variance, grad_output});
  inst->mutable_attrs().epsilon = epsilon;
  inst->mutable_attrs().feature_index = feature_index;
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::Gather(Op operand, Op indices, const GatherDimensionNumbers& dnums,
                      const std::vector<int64_t>& slice_sizes) {
  if (!CheckOperands("gather", {operand, indices})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kGather, Shape(), {operand, indices});
  inst->mutable_attrs().gather_dnums = dnums;
  inst->mutable_attrs().slice_sizes = slice_sizes;
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::ScatterAdd(Op operand, Op indices, Op updates, const ScatterDimensionNumbers& dnums) {
  if (!CheckOperands("scatter", {operand, indices, updates})) return nullptr;
  auto inst = HloInstruction::Create(HloOpcode::kScatter, Shape(), {operand, indices, updates});
  inst->mutable_attrs().scatter_dnums = dnums;
  inst->set_to_apply(Reducer(ReducerKind::kAdd, operand->shape().element_type()));
  return AddInstruction(std::move(inst), true);
}

Op HloBuilder::Fusion(const std::vector<Op>& operands, HloComputation* fused, FusionKind kind, std::string name) {
  for (Op x : operands) {
    if (!CheckOperands("fusion", {x})) return nullptr;
  }
  if (fused == nullptr || fused->root_instruction() == nullptr) {
    return Fail("fusion", HloOpcode::kFusion, "fused computation is missing or has no root");
  }
  auto inst = HloInstruction::CreateFusion(fused->root_instruction()->shape(), kind, operands, fused);
  Op result = AddInstruction(std::move(inst), true, std::move(name));
  if (result != nullptr) fused->SetFusionInstruction(result);
  return result;
}

Window MakeWindow(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                  const std::vector<std::pair<int64_t, int64_t>>& padding) {
  Window w;
  for (size_t i = 0; i < sizes.size(); ++i) {
    WindowDimension d;
    d.size = sizes[i];
    d.stride = i < strides.size() ? strides[i] : 1;
    if (i < padding.size()) {
      d.padding_low = padding[i].first;
      d.padding_high = padding[i].second;
    }
    w.dimensions.push_back(d);
  }
  return w;
}

}  // namespace passlab
