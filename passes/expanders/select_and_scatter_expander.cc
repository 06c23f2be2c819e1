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

// Windows of at most this many elements are selected by an unrolled chain
// of elementwise ops over strided slices (emitted kernels); larger ones by a
// variadic reduce-window.
constexpr int64_t kMaxUnrolledWindow = 64;

// select's body uses only elementwise ops on its parameters (no constants),
// so it can be applied to whole arrays.
bool IsElementwiseSelect(const HloComputation& select) {
  for (HloInstruction* inst : select.instructions()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    if (!inst->IsElementwise() || inst->opcode() == HloOpcode::kConstant || inst->operand_count() == 0) return false;
  }
  return true;
}

// select(a, b) applied elementwise to arrays of `dims`.
HloInstruction* ApplySelect(ExpansionBuilder& b, const HloComputation& select, HloInstruction* a, HloInstruction* x,
                            const std::vector<int64_t>& dims) {
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  map[select.parameter_instruction(0)] = a;
  map[select.parameter_instruction(1)] = x;
  for (HloInstruction* inst : select.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
    map[inst] = b.Add(inst->CloneWithNewOperands(Shape(inst->shape().element_type(), dims), ops));
  }
  return map.at(select.root_instruction());
}

// The operand coordinates (one [windows..] array per operand dimension) of
// each window's selected element; an empty window's first coordinate is out
// of bounds. Window elements in row-major order; the first real one is the
// initial choice, a later one replaces the choice when !select(choice, it).
std::vector<HloInstruction*> UnrolledSelection(ExpansionBuilder& b, const HloInstruction& sas, PrimitiveType index_type) {
  const HloInstruction* operand = sas.operand(0);
  const std::vector<int64_t>& dims = operand->shape().dimensions();
  const std::vector<int64_t>& windows = sas.operand(1)->shape().dimensions();
  const Window& w = sas.window();
  const int64_t rank = static_cast<int64_t>(dims.size());
  PaddingConfig padding;
  std::vector<int64_t> padded_dims, window_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& wd = w.dimensions[d];
    padding.dimensions.push_back({wd.padding_low, wd.padding_high, 0});
    padded_dims.push_back(dims[d] + wd.padding_low + wd.padding_high);
    window_sizes.push_back(wd.size);
  }
  HloInstruction* values = b.Add(HloInstruction::CreatePad(Shape(operand->shape().element_type(), padded_dims),
                                                           sas.mutable_operand(0), b.Zero(operand->shape().element_type()),
                                                           padding));
  HloInstruction* real = b.Add(HloInstruction::CreatePad(
      Shape(PrimitiveType::kPred, padded_dims), b.Broadcast(b.ConstantScalar(PrimitiveType::kPred, 1), dims),
      b.Zero(PrimitiveType::kPred), padding));
  HloInstruction* best_value = nullptr;
  HloInstruction* best_offset = nullptr;  // the window element's row-major number
  HloInstruction* best_real = nullptr;
  int64_t count = 1;
  for (int64_t k : window_sizes) count *= k;
  for (int64_t e = 0; e < count; ++e) {
    std::vector<SliceDimension> slice;
    for (int64_t d = 0, rest = e, inner = count; d < rank; ++d) {
      inner /= window_sizes[d];
      int64_t o = rest / inner;
      rest %= inner;
      const WindowDimension& wd = w.dimensions[d];
      slice.push_back({o, o + (windows[d] - 1) * wd.stride + 1, wd.stride});
    }
    HloInstruction* v = b.Add(HloInstruction::CreateSlice(Shape(values->shape().element_type(), windows), values, slice));
    HloInstruction* r = b.Add(HloInstruction::CreateSlice(Shape(PrimitiveType::kPred, windows), real, slice));
    HloInstruction* offset = b.Broadcast(b.ConstantScalar(index_type, e), windows);
    if (best_value == nullptr) {
      best_value = v;
      best_offset = offset;
      best_real = r;
      continue;
    }
    // take = r && (!best_real || !select(best, v))
    HloInstruction* keep = ApplySelect(b, *sas.select(), best_value, v, windows);
    HloInstruction* not_keep = b.Add(HloInstruction::CreateUnary(keep->shape(), HloOpcode::kNot, keep));
    HloInstruction* none = b.Add(HloInstruction::CreateUnary(best_real->shape(), HloOpcode::kNot, best_real));
    HloInstruction* take = b.Binary(HloOpcode::kAnd, r, b.Binary(HloOpcode::kOr, none, not_keep));
    best_value = b.Select(take, v, best_value);
    best_offset = b.Select(take, offset, best_offset);
    best_real = b.Binary(HloOpcode::kOr, best_real, r);
  }
  std::vector<HloInstruction*> coordinates;
  for (int64_t d = 0, inner = count; d < rank; ++d) {
    inner /= window_sizes[d];
    const WindowDimension& wd = w.dimensions[d];
    // window index * stride + offset in the window - padding_low
    HloInstruction* o = best_offset;
    if (inner > 1) o = b.Binary(HloOpcode::kDivide, o, b.Broadcast(b.ConstantScalar(index_type, inner), windows));
    if (d > 0) o = b.Binary(HloOpcode::kRemainder, o, b.Broadcast(b.ConstantScalar(index_type, window_sizes[d]), windows));
    HloInstruction* start = b.Add(HloInstruction::CreateIota(Shape(index_type, windows), d));
    if (wd.stride != 1) start = b.Binary(HloOpcode::kMultiply, start, b.Broadcast(b.ConstantScalar(index_type, wd.stride), windows));
    HloInstruction* coordinate = b.Binary(HloOpcode::kAdd, start, o);
    if (wd.padding_low != 0) {
      coordinate = b.Binary(HloOpcode::kSubtract, coordinate, b.Broadcast(b.ConstantScalar(index_type, wd.padding_low), windows));
    }
    if (d == 0) coordinate = b.Select(best_real, coordinate, b.Broadcast(b.ConstantScalar(index_type, dims[0]), windows));
    coordinates.push_back(coordinate);
  }
  return coordinates;
}

// The same coordinates from a variadic reduce-window over (operand, linear
// position) whose reducer keeps the accumulated pair when select holds.
std::vector<HloInstruction*> ReduceWindowSelection(ExpansionBuilder& b, HloInstruction* sas, PrimitiveType index_type) {
  HloModule& module = *b.computation()->parent();
  HloInstruction* operand = sas->mutable_operand(0);
  const std::vector<int64_t>& dims = operand->shape().dimensions();
  const std::vector<int64_t>& windows = sas->operand(1)->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t n = operand->shape().element_count();
  PrimitiveType value_type = operand->shape().element_type();
  HloInstruction* positions = b.Reshape(b.Add(HloInstruction::CreateIota(Shape(index_type, {n}), 0)), dims);
  HloInstruction* empty = b.ConstantScalar(index_type, -1);
  Shape selected_shape = Shape::Tuple({Shape(value_type, windows), Shape(index_type, windows)});
  auto reduce_window =
      HloInstruction::Create(HloOpcode::kReduceWindow, selected_shape, {operand, positions, b.Zero(value_type), empty});
  reduce_window->mutable_attrs().window = sas->window();
  reduce_window->set_to_apply(SelectingReducer(module, *sas->select(), value_type, index_type));
  HloInstruction* selected = b.GetTupleElement(b.Add(std::move(reduce_window)), 1);
  HloInstruction* is_empty = b.Compare(selected, b.Broadcast(b.Zero(index_type), windows), ComparisonDirection::kLt);
  std::vector<HloInstruction*> coordinates;
  int64_t stride = n;
  for (int64_t d = 0; d < rank; ++d) {
    stride = dims[d] == 0 ? 0 : stride / dims[d];
    HloInstruction* coordinate = selected;
    if (stride > 1) coordinate = b.Binary(HloOpcode::kDivide, coordinate, b.Broadcast(b.ConstantScalar(index_type, stride), windows));
    if (d > 0) coordinate = b.Binary(HloOpcode::kRemainder, coordinate, b.Broadcast(b.ConstantScalar(index_type, dims[d]), windows));
    if (d == 0) coordinate = b.Select(is_empty, b.Broadcast(b.ConstantScalar(index_type, dims[0]), windows), coordinate);
    coordinates.push_back(coordinate);
  }
  return coordinates;
}

bool UseUnrolledSelection(const HloInstruction& sas) {
  int64_t count = 1;
  for (const WindowDimension& d : sas.window().dimensions) {
    if (d.padding_low < 0 || d.padding_high < 0) return false;
    count *= d.size;
  }
  return count <= kMaxUnrolledWindow && IsElementwiseSelect(*sas.select());
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
  ExpansionBuilder b(sas->parent(), sas->metadata());
  HloInstruction* source = sas->mutable_operand(1);
  const std::vector<int64_t>& dims = sas->operand(0)->shape().dimensions();
  const std::vector<int64_t>& windows = source->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(dims.size());
  PrimitiveType index_type =
      sas->operand(0)->shape().element_count() >= (int64_t{1} << 31) ? PrimitiveType::kS64 : PrimitiveType::kS32;

  // Select: where each window's selected element is.
  std::vector<HloInstruction*> coordinates =
      UseUnrolledSelection(*sas) ? UnrolledSelection(b, *sas, index_type) : ReduceWindowSelection(b, sas, index_type);

  // Scatter the source there, into broadcast(init).
  std::vector<int64_t> coordinate_dims = windows;
  coordinate_dims.push_back(1);
  for (HloInstruction*& coordinate : coordinates) coordinate = b.Reshape(coordinate, coordinate_dims);
  HloInstruction* indices = b.Concatenate(coordinates, rank);
  HloInstruction* filled = b.Broadcast(sas->mutable_operand(2), dims);
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
