#include "passes/expanders/select_and_scatter_expander.h"

#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"

namespace passlab {
namespace {

// (acc_value, acc_position, x_value, x_position) -> the pair to keep: the
// accumulated one when select(acc, x) holds and acc is a real position, x
// when acc is still the empty init (-1), never an empty x.
HloComputation* SelectingReducer(HloModule& module, const HloComputation& select, PrimitiveType value_type,
                                 PrimitiveType index_type) {
  auto c = std::make_unique<HloComputation>(select.name() + ".selecting_reducer");
  Shape value = Shape::Scalar(value_type), index = Shape::Scalar(index_type);
  HloInstruction* acc_v = c->AddParameter(HloInstruction::CreateParameter(0, value, "acc_value"));
  HloInstruction* acc_i = c->AddParameter(HloInstruction::CreateParameter(1, index, "acc_position"));
  HloInstruction* x_v = c->AddParameter(HloInstruction::CreateParameter(2, value, "x_value"));
  HloInstruction* x_i = c->AddParameter(HloInstruction::CreateParameter(3, index, "x_position"));
  // select's body, inlined on (acc_value, x_value).
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  map[select.parameter_instruction(0)] = acc_v;
  map[select.parameter_instruction(1)] = x_v;
  for (HloInstruction* inst : select.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = c->AddInstruction(inst->CloneWithNewOperands(inst->shape(), ops));
  }
  HloInstruction* keep_acc = map.at(select.root_instruction());
  ExpansionBuilder b(c.get(), {});
  HloInstruction* zero = b.Zero(index_type);
  HloInstruction* acc_empty = b.Compare(acc_i, zero, ComparisonDirection::kLt);
  HloInstruction* x_empty = b.Compare(x_i, zero, ComparisonDirection::kLt);
  HloInstruction* acc_real = b.Add(HloInstruction::CreateUnary(acc_empty->shape(), HloOpcode::kNot, acc_empty));
  HloInstruction* take_acc = b.Binary(HloOpcode::kOr, x_empty, b.Binary(HloOpcode::kAnd, acc_real, keep_acc));
  c->set_root_instruction(b.Tuple({b.Select(take_acc, acc_v, x_v), b.Select(take_acc, acc_i, x_i)}));
  return module.AddEmbeddedComputation(std::move(c));
}

}  // namespace

bool SelectAndScatterExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kSelectAndScatter || inst->shape().rank() == 0) return false;
  if (inst->select()->num_parameters() != 2) return false;
  for (const WindowDimension& d : inst->window().dimensions) {
    if (d.window_dilation != 1 || d.base_dilation != 1 || d.window_reversal) return false;
  }
  return true;
}

absl::StatusOr<HloInstruction*> SelectAndScatterExpander::ExpandInstruction(HloInstruction* sas) {
  HloComputation* c = sas->parent();
  HloModule& module = *c->parent();
  ExpansionBuilder b(c, sas->metadata());
  HloInstruction* operand = sas->mutable_operand(0);
  HloInstruction* source = sas->mutable_operand(1);
  HloInstruction* init = sas->mutable_operand(2);
  const std::vector<int64_t>& dims = operand->shape().dimensions();
  const std::vector<int64_t>& windows = source->shape().dimensions();
  int64_t rank = static_cast<int64_t>(dims.size());
  int64_t n = operand->shape().element_count();
  PrimitiveType value_type = operand->shape().element_type();
  PrimitiveType index_type = n >= (int64_t{1} << 31) ? PrimitiveType::kS64 : PrimitiveType::kS32;

  // Select: the linear position of every window's selected element.
  HloInstruction* positions = b.Reshape(b.Add(HloInstruction::CreateIota(Shape(index_type, {n}), 0)), dims);
  HloInstruction* empty = b.ConstantScalar(index_type, -1);
  Shape selected_shape = Shape::Tuple({Shape(value_type, windows), Shape(index_type, windows)});
  auto reduce_window =
      HloInstruction::Create(HloOpcode::kReduceWindow, selected_shape, {operand, positions, b.Zero(value_type), empty});
  reduce_window->mutable_attrs().window = sas->window();
  reduce_window->set_to_apply(SelectingReducer(module, *sas->select(), value_type, index_type));
  HloInstruction* selected = b.GetTupleElement(b.Add(std::move(reduce_window)), 1);

  // Scatter: coordinates of each selected position; an empty window's
  // first coordinate is dims[0], out of bounds, so the scatter skips it.
  std::vector<int64_t> coordinate_dims = windows;
  coordinate_dims.push_back(1);
  HloInstruction* is_empty = b.Compare(selected, b.Broadcast(b.Zero(index_type), windows), ComparisonDirection::kLt);
  std::vector<HloInstruction*> coordinates;
  int64_t stride = n;
  for (int64_t d = 0; d < rank; ++d) {
    stride = dims[d] == 0 ? 0 : stride / dims[d];
    HloInstruction* coordinate = selected;
    if (stride > 1) coordinate = b.Binary(HloOpcode::kDivide, coordinate, b.Broadcast(b.ConstantScalar(index_type, stride), windows));
    if (d > 0) coordinate = b.Binary(HloOpcode::kRemainder, coordinate, b.Broadcast(b.ConstantScalar(index_type, dims[d]), windows));
    if (d == 0) coordinate = b.Select(is_empty, b.Broadcast(b.ConstantScalar(index_type, dims[0]), windows), coordinate);
    coordinates.push_back(b.Reshape(coordinate, coordinate_dims));
  }
  HloInstruction* indices = b.Concatenate(coordinates, rank);
  HloInstruction* filled = b.Broadcast(init, dims);
  auto scatter = HloInstruction::Create(HloOpcode::kScatter, sas->shape(), {filled, indices, source});
  ScatterDimensionNumbers& sd = scatter->mutable_attrs().scatter_dnums;
  sd.inserted_window_dims.resize(rank);
  std::iota(sd.inserted_window_dims.begin(), sd.inserted_window_dims.end(), 0);
  sd.scatter_dims_to_operand_dims = sd.inserted_window_dims;
  sd.index_vector_dim = rank;
  scatter->set_to_apply(sas->scatter());
  return b.Add(std::move(scatter));
}

}  // namespace passlab
