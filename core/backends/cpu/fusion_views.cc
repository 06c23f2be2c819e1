#include "core/backends/cpu/fusion_views.h"

#include <algorithm>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"

namespace passlab {
namespace {

// The logical dimensions of `shape` from the most major to the most minor.
std::vector<int64_t> MajorToMinor(const Shape& shape) {
  std::vector<int64_t> order(shape.rank());
  for (int64_t k = 0; k < shape.rank(); ++k) order[k] = k;
  if (!shape.has_layout() || static_cast<int64_t>(shape.layout().minor_to_major().size()) != shape.rank()) {
    return order;
  }
  const std::vector<int64_t>& m2m = shape.layout().minor_to_major();
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

// The strides of a strided array of `dims` reshaped (row-major, as HLO's
// reshape) to `new_dims`, or nullopt when the reshape merges dimensions
// that are not contiguous with each other (no view). numpy's no-copy
// reshape: dimensions are matched in groups of equal element count; a
// group's old dimensions must nest (stride = next stride * next size), and
// its new ones nest under the innermost old stride.
std::optional<std::vector<int64_t>> ReshapedStrides(const std::vector<int64_t>& dims,
                                                    const std::vector<int64_t>& strides,
                                                    const std::vector<int64_t>& new_dims) {
  std::vector<int64_t> od, os;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    od.push_back(dims[k]);
    os.push_back(strides[k]);
  }
  const size_t on = od.size(), nn = new_dims.size();
  std::vector<int64_t> ns(nn, 0);
  size_t oi = 0, ni = 0;
  while (ni < nn && oi < on) {
    if (new_dims[ni] == 1) {
      ++ni;
      continue;
    }
    size_t oj = oi + 1, nj = ni + 1;
    int64_t np = new_dims[ni], op = od[oi];
    while (np != op) {
      if (np < op) {
        if (nj >= nn) return std::nullopt;
        np *= new_dims[nj++];
      } else {
        if (oj >= on) return std::nullopt;
        op *= od[oj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k) {
      if (os[k] != od[k + 1] * os[k + 1]) return std::nullopt;
    }
    ns[nj - 1] = os[oj - 1];
    for (size_t k = nj - 1; k > ni; --k) ns[k - 1] = ns[k] * new_dims[k];
    ni = nj;
    oi = oj;
  }
  if (oi != on) return std::nullopt;
  for (size_t k = ni; k < nn; ++k) {
    if (new_dims[k] != 1) return std::nullopt;
  }
  // Dimensions of size 1 (never stepped along): the stride a dense array
  // would give them.
  for (size_t k = nn; k-- > 0;) {
    if (new_dims[k] == 1) ns[k] = k + 1 < nn ? ns[k + 1] * new_dims[k + 1] : 1;
  }
  return ns;
}

bool IsZeroScalarConstant(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kConstant && inst.has_literal() && inst.shape().IsArray() &&
         inst.shape().rank() == 0 && inst.literal().GetDouble(0) == 0;
}

// One fused op applied to a view of its operand (`dims`, the operand's
// dimensions, become the op's); false when the op is no data movement or
// its result is no view.
bool ApplyToView(const HloInstruction& op, std::vector<int64_t>& dims, StridedView& view) {
  const Shape& from = op.operand(0)->shape();
  const Shape& to = op.shape();
  const bool padded = !view.pad_low.empty();
  if (op.opcode() == HloOpcode::kPad) {
    // Zeros at the edges only (no interior or negative padding).
    if (!IsZeroScalarConstant(*op.operand(1)) || !to.IsArray() || to.element_type() != from.element_type()) {
      return false;
    }
    if (!padded) {
      view.pad_low.assign(dims.size(), 0);
      view.pad_high.assign(dims.size(), 0);
    }
    for (size_t k = 0; k < dims.size(); ++k) {
      const PaddingDimension& p = op.attrs().padding_config.dimensions[k];
      if (p.interior_padding != 0 || p.edge_padding_low < 0 || p.edge_padding_high < 0) return false;
      view.pad_low[k] += p.edge_padding_low;
      view.pad_high[k] += p.edge_padding_high;
    }
    dims = to.dimensions();
    return true;
  }
  if (!to.IsArray() || to.element_type() != from.element_type() || to.element_count() != from.element_count()) {
    return false;
  }
  std::vector<int64_t> to_dims = to.dimensions();
  if (op.opcode() == HloOpcode::kCopy) return true;  // the same logical array
  if (op.opcode() == HloOpcode::kTranspose) {
    // Result dimension k is operand dimension dimensions[k].
    std::vector<int64_t> strides(to.rank());
    for (int64_t k = 0; k < to.rank(); ++k) strides[k] = view.strides[op.dimensions(k)];
    view.strides = std::move(strides);
    if (padded) {
      std::vector<int64_t> low(to.rank()), high(to.rank());
      for (int64_t k = 0; k < to.rank(); ++k) {
        low[k] = view.pad_low[op.dimensions(k)];
        high[k] = view.pad_high[op.dimensions(k)];
      }
      view.pad_low = std::move(low);
      view.pad_high = std::move(high);
    }
    dims = std::move(to_dims);
    return true;
  }
  // Reversing or reshaping padding is not taken.
  if (padded) return false;
  if (op.opcode() == HloOpcode::kReverse) {
    for (int64_t k : op.dimensions()) {
      view.offset += (dims[k] - 1) * view.strides[k];
      view.strides[k] = -view.strides[k];
    }
    return true;
  }
  if (op.opcode() == HloOpcode::kReshape) {
    std::optional<std::vector<int64_t>> strides = ReshapedStrides(dims, view.strides, to_dims);
    if (!strides) return false;
    view.strides = std::move(*strides);
    dims = std::move(to_dims);
    return true;
  }
  if (op.opcode() == HloOpcode::kBitcast) {
    // The same bytes under another shape and layout: the operand in its
    // physical order, reshaped to the result's physical dimensions, read
    // in the result's logical order.
    std::vector<int64_t> from_order = MajorToMinor(from), to_order = MajorToMinor(to);
    std::vector<int64_t> physical_dims, physical_strides, to_physical_dims;
    for (int64_t k : from_order) {
      physical_dims.push_back(dims[k]);
      physical_strides.push_back(view.strides[k]);
    }
    for (int64_t k : to_order) to_physical_dims.push_back(to_dims[k]);
    std::optional<std::vector<int64_t>> strides = ReshapedStrides(physical_dims, physical_strides, to_physical_dims);
    if (!strides) return false;
    view.strides.assign(to.rank(), 0);
    for (int64_t j = 0; j < to.rank(); ++j) view.strides[to_order[j]] = (*strides)[j];
    dims = std::move(to_dims);
    return true;
  }
  return false;
}

bool IsConvCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return false;
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  return kind.has_value() && *kind != LibraryCallKind::kGemm && !IsSolverKind(*kind);
}

bool Overlap(const BufferSlice& a, const BufferSlice& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case BufferSlice::Kind::kNone: return false;
    case BufferSlice::Kind::kArena: return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
    case BufferSlice::Kind::kParameter: return a.parameter == b.parameter && a.parameter_leaf == b.parameter_leaf;
    case BufferSlice::Kind::kConstant: return a.constant == b.constant && a.constant_leaf == b.constant_leaf;
  }
  return true;
}

// Whether the fusion's operand buffer holds its value from the fusion's
// step until its last user's: nothing scheduled in between writes storage
// that overlaps it (aliases write nothing).
bool SourceHeldUntilRead(const BufferAssignment& a, const HloInstruction& fusion,
                         const absl::flat_hash_map<const HloInstruction*, int64_t>& step) {
  const std::vector<BufferSlice>& source = a.LeafSlices(fusion.operand(0));
  if (source.size() != 1 || source[0].kind == BufferSlice::Kind::kNone) return false;
  int64_t first = step.at(&fusion), last = first;
  for (const HloInstruction* user : fusion.users()) {
    auto it = step.find(user);
    if (it == step.end()) return false;
    last = std::max(last, it->second);
  }
  for (int64_t s = first + 1; s <= last; ++s) {
    const HloInstruction* inst = a.schedule()[s];
    if (IsBufferAlias(inst->opcode())) continue;
    for (const BufferSlice& written : a.LeafSlices(inst)) {
      if (Overlap(written, source[0])) return false;
    }
  }
  return true;
}

// A fusion the plan may elide: pure data movement of one plain array, not
// an output, read only by convolution calls.
std::optional<StridedView> Candidate(const HloInstruction& inst, const BufferAssignment& a,
                                     const absl::flat_hash_map<const HloInstruction*, int64_t>& step) {
  if (inst.opcode() != HloOpcode::kFusion || inst.operand_count() != 1 || inst.IsRoot() || inst.users().empty()) {
    return std::nullopt;
  }
  const Shape& from = inst.operand(0)->shape();
  if (!inst.shape().IsArray() || !from.IsArray() || inst.shape().element_count() == 0 ||
      !CheckPlainLayout(inst.shape()).ok() || !CheckPlainLayout(from).ok()) {
    return std::nullopt;
  }
  for (const HloInstruction* user : inst.users()) {
    if (!IsConvCall(*user)) return std::nullopt;
    // The runners read only their first two operands (input and filter,
    // or their gradients) through views; a view offered as a bias or side
    // input would make the call refuse its other views too (ResNet-18's
    // custom-call.73 then kept its padded input, fusion.80).
    for (int64_t i = 2; i < user->operand_count(); ++i) {
      if (user->operand(i) == &inst) return std::nullopt;
    }
  }
  std::optional<StridedView> view = DataMovementView(inst);
  if (!view || !SourceHeldUntilRead(a, inst, step)) return std::nullopt;
  return view;
}

}  // namespace

std::optional<StridedView> DataMovementView(const HloInstruction& fusion) {
  if (fusion.opcode() != HloOpcode::kFusion || fusion.operand_count() != 1) return std::nullopt;
  const HloComputation* body = fusion.fused_instructions_computation();
  const Shape& source = fusion.operand(0)->shape();
  if (body == nullptr || body->num_parameters() != 1 || !source.IsArray()) return std::nullopt;
  // The chain from the root back to the parameter; nothing else fused.
  std::vector<const HloInstruction*> chain;
  std::vector<const HloInstruction*> pad_values;  // a pad's zero, the one other operand taken
  for (const HloInstruction* i = body->root_instruction(); i->opcode() != HloOpcode::kParameter; i = i->operand(0)) {
    if (i->opcode() == HloOpcode::kPad && i->operand_count() == 2 && IsZeroScalarConstant(*i->operand(1))) {
      if (std::find(pad_values.begin(), pad_values.end(), i->operand(1)) == pad_values.end()) {
        pad_values.push_back(i->operand(1));
      }
    } else if (i->operand_count() != 1) {
      return std::nullopt;
    }
    chain.push_back(i);
  }
  if (static_cast<int64_t>(chain.size() + pad_values.size()) + 1 != body->instruction_count()) return std::nullopt;
  if (body->parameter_instruction(0)->shape().dimensions() != source.dimensions()) return std::nullopt;
  StridedView view;
  view.strides = PhysicalStrides(source);
  std::vector<int64_t> dims = source.dimensions();
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!ApplyToView(**it, dims, view)) return std::nullopt;
  }
  if (dims != fusion.shape().dimensions()) return std::nullopt;
  return view;
}

FusionViewPlan PlanFusionViews(const BufferAssignment& assignment) {
  absl::flat_hash_map<const HloInstruction*, int64_t> step;
  for (size_t s = 0; s < assignment.schedule().size(); ++s) step[assignment.schedule()[s]] = static_cast<int64_t>(s);
  absl::flat_hash_map<const HloInstruction*, StridedView> views;
  std::vector<const HloInstruction*> calls;  // readers of a candidate, in schedule order
  for (const HloInstruction* inst : assignment.schedule()) {
    if (std::optional<StridedView> v = Candidate(*inst, assignment, step)) views[inst] = std::move(*v);
  }
  for (const HloInstruction* inst : assignment.schedule()) {
    if (!IsConvCall(*inst)) continue;
    for (const HloInstruction* op : inst->operands()) {
      if (views.contains(op)) {
        calls.push_back(inst);
        break;
      }
    }
  }
  // Prepare every reader with its views; a reader that cannot take them
  // keeps its fusions (for all their readers), so start over without them.
  FusionViewPlan plan;
  for (bool retry = true; retry;) {
    retry = false;
    plan.runners.clear();
    for (const HloInstruction* call : calls) {
      std::vector<std::optional<StridedView>> operand_views(call->operand_count());
      bool any = false;
      for (int64_t i = 0; i < call->operand_count(); ++i) {
        auto it = views.find(call->operand(i));
        if (it == views.end()) continue;
        operand_views[i] = it->second;
        any = true;
      }
      if (!any) continue;
      absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = CreateConvRunnerWithViews(*call, operand_views);
      if (runner.ok()) {
        plan.runners[call] = std::move(*runner);
        continue;
      }
      for (const HloInstruction* op : call->operands()) views.erase(op);
      retry = true;
      break;
    }
  }
  for (const auto& [fusion, view] : views) plan.elided.insert(fusion);
  return plan;
}

}  // namespace passlab
