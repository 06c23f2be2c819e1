#include "passes/layout/gpu_layout_assignment.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"

namespace passlab {
namespace {

// A layout from its physical dimension order, major to minor.
Layout FromMajorToMinor(const std::vector<int64_t>& major_to_minor) {
  return Layout(std::vector<int64_t>(major_to_minor.rbegin(), major_to_minor.rend()));
}

std::vector<int64_t> MajorToMinor(const Layout& layout) {
  const std::vector<int64_t>& m2m = layout.minor_to_major();
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

// The layout of an array shape (the default one when it has none).
Layout LayoutOf(const Shape& shape) {
  return shape.has_layout() ? shape.layout() : Layout::Default(shape.rank());
}

// The same placement without tiles (what kernels read).
Layout Untiled(const Layout& layout) {
  Layout out = layout;
  out.mutable_tiles().clear();
  return out;
}

bool IsTiled(const Layout& layout) { return !layout.tiles().empty(); }

bool Assignable(const Shape& shape) { return shape.IsArray() && shape.rank() >= 2; }

// Values whose layout is free: they take the layout their users need.
bool IsLayoutFreeProducer(HloOpcode op) {
  return op == HloOpcode::kBroadcast || op == HloOpcode::kConstant || op == HloOpcode::kIota;
}

// Users whose kernels read an operand of any plain layout (emitters index
// through the operand's strides) without tying it to their own layout.
bool ReadsAnyLayout(HloOpcode op) {
  return op == HloOpcode::kReduce || op == HloOpcode::kBroadcast || op == HloOpcode::kTranspose ||
         op == HloOpcode::kReshape || op == HloOpcode::kSlice || op == HloOpcode::kDynamicSlice ||
         op == HloOpcode::kConcatenate || op == HloOpcode::kPad || op == HloOpcode::kReverse ||
         op == HloOpcode::kReduceWindow || op == HloOpcode::kGather || op == HloOpcode::kCopy;
}

bool IsPropagatingElementwise(const HloInstruction& inst) {
  return inst.IsElementwise() && inst.opcode() != HloOpcode::kCopy && Assignable(inst.shape());
}

// `base` (memory space, element size, ...) with another dimension order and
// no tiles.
Layout WithOrder(const Layout& base, const Layout& order) {
  Layout out = Untiled(base);
  out.mutable_minor_to_major() = order.minor_to_major();
  return out;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// ---------------------------------------------------------------- dots

// A dot operand's physical order the gemm reads directly: the batch
// dimensions most major, then the free and contracting groups, each
// contiguous in logical order (either group may be the minor one).
bool GemmReadsDirectly(const Layout& layout, const std::vector<int64_t>& batch, const std::vector<int64_t>& free,
                       const std::vector<int64_t>& contracting) {
  std::vector<int64_t> a = batch, b = batch;
  a.insert(a.end(), free.begin(), free.end());
  a.insert(a.end(), contracting.begin(), contracting.end());
  b.insert(b.end(), contracting.begin(), contracting.end());
  b.insert(b.end(), free.begin(), free.end());
  std::vector<int64_t> physical = MajorToMinor(layout);
  return physical == a || physical == b;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) out.push_back(d);
  }
  return out;
}

// The layout a dot needs for operand `i` currently laid out as `current`:
// kept when the gemm reads it directly, else batch-major row-major (lhs
// [batch, m, k], rhs [batch, k, n]).
Layout DotOperandLayout(const HloInstruction& dot, int64_t i, const Layout& current) {
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  const std::vector<int64_t>& batch = i == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting = i == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  std::vector<int64_t> free = FreeDims(dot.operand(i)->shape().rank(), batch, contracting);
  if (GemmReadsDirectly(current, batch, free, contracting)) return current;
  std::vector<int64_t> order = batch;
  const std::vector<int64_t>& first = i == 0 ? free : contracting;
  const std::vector<int64_t>& second = i == 0 ? contracting : free;
  order.insert(order.end(), first.begin(), first.end());
  order.insert(order.end(), second.begin(), second.end());
  return FromMajorToMinor(order);
}

// ---------------------------------------------------------------- convolutions

enum class ConvRole { kActivationInput, kFilter, kActivationOutput, kNone };

Layout ActivationLayout(int64_t batch, int64_t feature, const std::vector<int64_t>& spatial, ConvLayout pref) {
  std::vector<int64_t> order = {batch};
  if (pref == ConvLayout::kNchw) order.push_back(feature);
  order.insert(order.end(), spatial.begin(), spatial.end());
  if (pref == ConvLayout::kNhwc) order.push_back(feature);
  return FromMajorToMinor(order);
}

Layout ConvRoleLayout(const ConvolutionDimensionNumbers& d, ConvRole role, ConvLayout pref) {
  switch (role) {
    case ConvRole::kActivationInput:
      return ActivationLayout(d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions, pref);
    case ConvRole::kActivationOutput:
      return ActivationLayout(d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions, pref);
    case ConvRole::kFilter: {
      // NCHW: [o, i, spatial...]; NHWC: [spatial..., i, o] (TF's and JAX's
      // filter order; oneDNN reorders filters into its blocked format
      // either way).
      std::vector<int64_t> order;
      if (pref == ConvLayout::kNchw) order = {d.kernel_output_feature_dimension, d.kernel_input_feature_dimension};
      order.insert(order.end(), d.kernel_spatial_dimensions.begin(), d.kernel_spatial_dimensions.end());
      if (pref == ConvLayout::kNhwc) {
        order.push_back(d.kernel_input_feature_dimension);
        order.push_back(d.kernel_output_feature_dimension);
      }
      return FromMajorToMinor(order);
    }
    case ConvRole::kNone: break;
  }
  return Layout();
}

// The roles of a convolution call's operands and result (the forward
// convolution's input, filter and output, whatever the call's kind).
struct ConvRoles {
  std::vector<ConvRole> operands;
  ConvRole result = ConvRole::kNone;
  ConvolutionDimensionNumbers dnums;
};

std::optional<ConvRoles> ConvCallRoles(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return std::nullopt;
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind.has_value() || !IsConvolutionKind(*kind)) return std::nullopt;
  absl::StatusOr<ConvCall> call = AnalyzeConvCall(inst);
  if (!call.ok()) return std::nullopt;
  ConvRoles r;
  r.dnums = call->dnums;
  r.operands.assign(inst.operand_count(), ConvRole::kNone);
  switch (*kind) {
    case LibraryCallKind::kConvForward:
    case LibraryCallKind::kConvBiasActivationForward:
      r.operands[0] = ConvRole::kActivationInput;
      r.operands[1] = ConvRole::kFilter;
      if (call->side_input_operand >= 0) r.operands[call->side_input_operand] = ConvRole::kActivationOutput;
      r.result = ConvRole::kActivationOutput;
      break;
    case LibraryCallKind::kConvBackwardInput:
      r.operands[0] = ConvRole::kActivationOutput;
      r.operands[1] = ConvRole::kFilter;
      r.result = ConvRole::kActivationInput;
      break;
    case LibraryCallKind::kConvBackwardFilter:
      r.operands[0] = ConvRole::kActivationInput;
      r.operands[1] = ConvRole::kActivationOutput;
      r.result = ConvRole::kFilter;
      break;
    case LibraryCallKind::kGemm:
    case LibraryCallKind::kCholesky:
    case LibraryCallKind::kTriangularSolve:
      return std::nullopt;
  }
  return r;
}

// ---------------------------------------------------------------- assignment

class ComputationLayouts {
 public:
  ComputationLayouts(HloComputation& computation, const GpuLayoutAssignmentOptions& options,
                     std::optional<Shape> result_layout)
      : computation_(computation), options_(options), result_layout_(std::move(result_layout)) {}

  absl::StatusOr<bool> Run() {
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    for (HloInstruction* inst : order) {
      if (Assignable(inst->shape())) original_[inst] = LayoutOf(inst->shape());
      if (std::optional<ConvRoles> roles = ConvCallRoles(*inst)) conv_roles_[inst] = *roles;
    }
    for (HloInstruction* inst : order) DecideForward(inst);
    for (auto it = order.rbegin(); it != order.rend(); ++it) DecideBackward(*it);
    bool changed = ApplyLayouts(order);
    for (HloInstruction* inst : order) changed |= InsertOperandCopies(inst);
    changed |= CopyRootIfNeeded();
    return changed;
  }

 private:
  // The layout of `inst` its users see after the pass.
  std::optional<Layout> Decided(const HloInstruction* inst) const {
    auto it = chosen_.find(inst);
    if (it != chosen_.end()) return it->second;
    return std::nullopt;
  }
  Layout Final(const HloInstruction* inst) const {
    std::optional<Layout> l = Decided(inst);
    return l.has_value() ? *l : LayoutOf(inst->shape());
  }

  void DecideForward(HloInstruction* inst) {
    if (!Assignable(inst->shape())) return;
    HloOpcode op = inst->opcode();
    if (op == HloOpcode::kDot) {
      chosen_[inst] = WithOrder(LayoutOf(inst->shape()), Layout::Default(inst->shape().rank()));
      return;
    }
    if (op == HloOpcode::kGetTupleElement && inst->tuple_index() == 0) {
      auto it = conv_roles_.find(inst->operand(0));
      if (it != conv_roles_.end() && ConvResultMovable(inst->operand(0))) {
        chosen_[inst] = WithOrder(LayoutOf(inst->shape()),
                                  ConvRoleLayout(it->second.dnums, it->second.result, options_.conv_layout));
        return;
      }
    }
    if (IsPropagatingElementwise(*inst)) {
      for (const HloInstruction* operand : inst->operands()) {
        if (operand->shape().IsArray() && operand->shape().rank() == inst->shape().rank()) {
          std::optional<Layout> l = Decided(operand);
          if (l.has_value() && !IsTiled(*l)) {
            chosen_[inst] = *l;
            return;
          }
        }
      }
      return;  // decided by its users
    }
    if (IsLayoutFreeProducer(op)) return;
    chosen_[inst] = LayoutOf(inst->shape());
  }

  void DecideBackward(HloInstruction* inst) {
    if (!Assignable(inst->shape()) || chosen_.contains(inst)) return;
    for (const HloInstruction* user : inst->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != inst) continue;
        if (std::optional<Layout> need = Requirement(*user, i); need.has_value()) {
          chosen_[inst] = Untiled(*need);
          return;
        }
      }
    }
    chosen_[inst] = Untiled(LayoutOf(inst->shape()));
  }

  // A convolution call's result layout may change when only
  // get-tuple-elements read it (they carry the new layout on).
  bool ConvResultMovable(const HloInstruction* call) const {
    if (call->IsRoot()) return false;
    for (const HloInstruction* user : call->users()) {
      if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    }
    return call->shape().IsTuple() && Assignable(call->shape().tuple_shapes(0));
  }

  // The layout `user` needs for operand `i`, or nullopt when it reads any
  // plain layout.
  std::optional<Layout> Requirement(const HloInstruction& user, int64_t i) const {
    const HloInstruction* operand = user.operand(i);
    if (!Assignable(operand->shape())) return std::nullopt;
    if (IsPropagatingElementwise(user) && operand->shape().rank() == user.shape().rank()) return Decided(&user);
    if (user.opcode() == HloOpcode::kDot && i < 2) {
      return WithOrder(Final(operand), DotOperandLayout(user, i, Final(operand)));
    }
    if (auto it = conv_roles_.find(&user); it != conv_roles_.end()) {
      ConvRole role = it->second.operands[i];
      if (role == ConvRole::kNone) return std::nullopt;
      return WithOrder(Final(operand), ConvRoleLayout(it->second.dnums, role, options_.conv_layout));
    }
    if (ReadsAnyLayout(user.opcode()) || IsPropagatingElementwise(user)) return std::nullopt;
    // A tuple declares its elements' layouts.
    if (user.opcode() == HloOpcode::kTuple && Assignable(user.shape().tuple_shapes(i))) {
      return LayoutOf(user.shape().tuple_shapes(i));
    }
    // Layout-sensitive users (tuples, control flow, bitcasts, in-place and
    // other custom calls, fusions, collectives): the layout it had.
    auto it = original_.find(operand);
    return it != original_.end() ? std::optional<Layout>(it->second) : std::nullopt;
  }

  bool ApplyLayouts(const std::vector<HloInstruction*>& order) {
    bool changed = false;
    for (HloInstruction* inst : order) {
      if (inst->opcode() == HloOpcode::kGetTupleElement && inst->tuple_index() == 0 &&
          conv_roles_.contains(inst->operand(0))) {
        HloInstruction* call = inst->mutable_operand(0);
        std::optional<Layout> l = Decided(inst);
        if (l.has_value() && call->shape().tuple_shapes(0).layout() != *l) {
          call->mutable_shape()->mutable_tuple_shapes()[0].set_layout(*l);
          changed = true;
        }
      }
      std::optional<Layout> l = Decided(inst);
      if (!l.has_value() || LayoutOf(inst->shape()) == *l) continue;
      inst->mutable_shape()->set_layout(*l);
      changed = true;
    }
    return changed;
  }

  // A copy of `operand` laid out as `layout` (one per operand and layout).
  HloInstruction* CopyWithLayout(HloInstruction* operand, const Layout& layout) {
    for (auto& [from, to] : copies_) {
      if (from == operand && to->shape().layout() == layout) return to;
    }
    Shape shape = operand->shape();
    shape.set_layout(layout);
    HloInstruction* copy = computation_.AddInstruction(HloInstruction::CreateUnary(shape, HloOpcode::kCopy, operand));
    copies_.push_back({operand, copy});
    return copy;
  }

  bool InsertOperandCopies(HloInstruction* inst) {
    bool changed = false;
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      HloInstruction* operand = inst->mutable_operand(i);
      if (!Assignable(operand->shape())) continue;
      std::optional<Layout> need = Requirement(*inst, i);
      Layout have = LayoutOf(operand->shape());
      // Kernels never read tiled buffers: copies, tuples and control flow
      // pass them on; everything else reads an untiled copy.
      if (!need.has_value() && IsTiled(have) && inst->opcode() != HloOpcode::kCopy) need = Untiled(have);
      if (!need.has_value() || *need == have) continue;
      inst->ReplaceOperandWith(i, CopyWithLayout(operand, *need));
      changed = true;
    }
    return changed;
  }

  bool CopyRootIfNeeded() {
    HloInstruction* root = computation_.root_instruction();
    if (!Assignable(root->shape())) return false;
    Layout need = result_layout_.has_value() && result_layout_->IsArray() ? LayoutOf(*result_layout_)
                                                                             : original_.at(root);
    if (LayoutOf(root->shape()) == need) return false;
    computation_.set_root_instruction(CopyWithLayout(root, need));
    return true;
  }

  HloComputation& computation_;
  const GpuLayoutAssignmentOptions& options_;
  std::optional<Shape> result_layout_;
  absl::flat_hash_map<const HloInstruction*, Layout> original_;
  absl::flat_hash_map<const HloInstruction*, Layout> chosen_;
  absl::flat_hash_map<const HloInstruction*, ConvRoles> conv_roles_;
  std::vector<std::pair<const HloInstruction*, HloInstruction*>> copies_;
};

// Gives the entry parameters the entry_computation_layout's layouts and
// copies tuple results element-wise into it; true if anything changed.
absl::StatusOr<bool> HonourEntryLayout(HloModule& module) {
  const std::optional<ProgramShape>& entry_layout = std::as_const(module).config().entry_computation_layout;
  if (!entry_layout.has_value()) return false;
  HloComputation* entry = module.entry_computation();
  bool changed = false;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    HloInstruction* param = entry->parameter_instruction(i);
    const Shape& want = entry_layout->parameters[i];
    if (!want.Compatible(param->shape())) {
      return absl::InvalidArgumentError(StrCat("layout-assignment: entry parameter ", param->name(), " is ",
                                               param->shape().ToString(), " but entry_computation_layout says ",
                                               want.ToString()));
    }
    if (want.IsTuple() && want != param->shape()) {
      return absl::UnimplementedError(StrCat("layout-assignment: entry parameter ", param->name(),
                                             ": re-laying out tuple parameters is not supported"));
    }
    if (want.IsArray() && want.has_layout() && param->shape() != want) {
      *param->mutable_shape() = want;
      changed = true;
    }
  }
  HloInstruction* root = entry->root_instruction();
  const Shape& result = entry_layout->result;
  if (!root->shape().IsTuple() || root->opcode() != HloOpcode::kTuple || root->shape() == result) return changed;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    HloInstruction* element = root->mutable_operand(i);
    const Shape& want = result.tuple_shapes(i);
    if (!want.IsArray() || !want.has_layout() || element->shape() == want) continue;
    if (!element->shape().IsArray()) {
      return absl::UnimplementedError(StrCat("layout-assignment: result element ", i, " of ", root->name(),
                                             " is a nested tuple with another layout"));
    }
    root->ReplaceOperandWith(i, entry->AddInstruction(HloInstruction::CreateUnary(want, HloOpcode::kCopy, element)));
    root->mutable_shape()->mutable_tuple_shapes()[i] = want;
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> GpuLayoutAssignment::RunImpl(HloModule& module, PassRunContext*) {
  absl::StatusOr<bool> changed = HonourEntryLayout(module);
  if (!changed.ok()) return changed.status();
  const std::optional<ProgramShape>& entry_layout = std::as_const(module).config().entry_computation_layout;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::optional<Shape> result;
    if (c == module.entry_computation() && entry_layout.has_value()) result = entry_layout->result;
    absl::StatusOr<bool> c_changed = ComputationLayouts(*c, options_, result).Run();
    if (!c_changed.ok()) return c_changed.status();
    *changed |= *c_changed;
  }
  return *changed;
}

}  // namespace passlab
