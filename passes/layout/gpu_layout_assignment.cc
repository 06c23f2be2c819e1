#include "passes/layout/gpu_layout_assignment.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "passes/layout/bitcast_layouts.h"

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

// ---------------------------------------------------------------- reduces

// XLA:GPU propagates a row-reduction layout to a reduce's input only when
// the reduced dimensions hold at least 32 elements: below that the row
// reduction's gain does not pay for the layout change
// (GpuLayoutAssignment::PropagateReductionLayoutToOperand).
constexpr int64_t kMinRowReductionSize = 32;

// The input layout that makes a single-output reduce laid out as
// `output_layout` a row reduction: the reduced dimensions most minor (the
// last one most minor), the kept ones in the output's order above them.
//
// A reduce to a scalar or a vector passes nothing to its input: XLA's
// LayoutAssignment::PropagateBufferConstraintToOperands returns early for a
// result of rank <= 1 (xla/service/layout_assignment.cc, IsAtMostRank1), so
// such an input keeps the layout its producers give it.
std::optional<Layout> RowReductionOperandLayout(const HloInstruction& reduce, const Layout& output_layout) {
  if (reduce.shape().IsTuple() || reduce.operand_count() != 2) return std::nullopt;
  if (reduce.shape().rank() <= 1) return std::nullopt;
  const Shape& input = reduce.operand(0)->shape();
  const std::vector<int64_t>& reduced = reduce.dimensions();
  int64_t reduction_size = 1;
  for (int64_t d : reduced) reduction_size *= input.dimensions(d);
  if (reduction_size < kMinRowReductionSize) return std::nullopt;
  std::vector<int64_t> m2m(reduced.rbegin(), reduced.rend());
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < input.rank(); ++d) {
    if (!Contains(reduced, d)) kept.push_back(d);
  }
  for (int64_t output_dim : output_layout.minor_to_major()) m2m.push_back(kept[output_dim]);
  return Layout(std::move(m2m));
}

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

// Whether a value is packed (of a sub-byte type other than pred), or comes
// from one through a chain of single-operand ops and elementwise binary ops
// (XLA:GPU's IsPackedInstruction).
bool IsPacked(const HloInstruction* inst, absl::flat_hash_set<const HloInstruction*>& visited) {
  while (visited.insert(inst).second) {
    const Shape& shape = inst->shape();
    if (shape.IsArray() && shape.element_type() != PrimitiveType::kPred &&
        PrimitiveBitWidth(shape.element_type()) < 8) {
      return true;
    }
    if (inst->operand_count() != 1) {
      if (!inst->IsElementwise() || inst->operand_count() != 2) return false;
      return IsPacked(inst->operand(0), visited) || IsPacked(inst->operand(1), visited);
    }
    inst = inst->operand(0);
  }
  return false;
}

bool IsPacked(const HloInstruction* inst) {
  absl::flat_hash_set<const HloInstruction*> visited;
  return IsPacked(inst, visited);
}

bool IsF8ForGemm(PrimitiveType t) { return t == PrimitiveType::kF8E4M3FN || t == PrimitiveType::kF8E5M2FNUZ; }

// Whether the gemm reads operand `i` only with its contracting dimensions
// most minor: s8 x s8 -> s32 and fp8 gemms (both operands), and packed
// sub-byte operands when the option packs them along k (XLA:GPU's
// AddDotBackendConstraints).
bool NeedsMinorContracting(const HloInstruction& dot, int64_t i, bool pack_along_k) {
  const PrimitiveType lhs = dot.operand(0)->shape().element_type();
  const PrimitiveType rhs = dot.operand(1)->shape().element_type();
  const bool s8_to_s32 = dot.shape().element_type() == PrimitiveType::kS32 && lhs == PrimitiveType::kS8 &&
                         rhs == PrimitiveType::kS8;
  if (s8_to_s32 || (IsF8ForGemm(lhs) && IsF8ForGemm(rhs))) return true;
  return pack_along_k && IsPacked(dot.operand(i));
}

// The layout a dot needs for operand `i` currently laid out as `current`:
// kept when the gemm reads it directly, else batch-major row-major (lhs
// [batch, m, k], rhs [batch, k, n]). Where the gemm needs the contracting
// dimensions most minor, [batch, free, k] unless `current` already has them
// there.
Layout DotOperandLayout(const HloInstruction& dot, int64_t i, const Layout& current, bool pack_along_k) {
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  const std::vector<int64_t>& batch = i == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const std::vector<int64_t>& contracting = i == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  std::vector<int64_t> free = FreeDims(dot.operand(i)->shape().rank(), batch, contracting);
  const bool minor_contracting = NeedsMinorContracting(dot, i, pack_along_k);
  const std::vector<int64_t>& m2m = current.minor_to_major();
  const bool contracting_minor = std::all_of(m2m.begin(), m2m.begin() + std::min(m2m.size(), contracting.size()),
                                             [&](int64_t dim) { return Contains(contracting, dim); });
  if (GemmReadsDirectly(current, batch, free, contracting) && (!minor_contracting || contracting_minor)) {
    return current;
  }
  std::vector<int64_t> order = batch;
  const std::vector<int64_t>& first = i == 0 || minor_contracting ? free : contracting;
  const std::vector<int64_t>& second = i == 0 || minor_contracting ? contracting : free;
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

Layout ConvRoleLayout(const ConvolutionDimensionNumbers& d, ConvRole role, ConvLayout pref, bool xla_filter) {
  switch (role) {
    case ConvRole::kActivationInput:
      return ActivationLayout(d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions, pref);
    case ConvRole::kActivationOutput:
      return ActivationLayout(d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions, pref);
    case ConvRole::kFilter: {
      // NCHW: [o, i, spatial...] (cuDNN's kOutputInputYX). NHWC:
      // [spatial..., i, o] (TF's and JAX's filter order; oneDNN reorders
      // filters into its blocked format either way), or with
      // `xla_filter` XLA:GPU's [o, spatial..., i] (kOutputYXInput, cuDNN's
      // KRSC; HeuristicLayoutAssignment in
      // xla/backends/gpu/transforms/layout_assignment.cc), which makes
      // every weight a transpose per step: on the CPU backend those cost
      // more than the step's convolutions (ResNet-18, batch 8, 64x64:
      // 176-193 ms per step against 82-96 ms).
      std::vector<int64_t> order;
      if (pref == ConvLayout::kNchw) {
        order = {d.kernel_output_feature_dimension, d.kernel_input_feature_dimension};
      } else if (xla_filter) {
        order = {d.kernel_output_feature_dimension};
      }
      order.insert(order.end(), d.kernel_spatial_dimensions.begin(), d.kernel_spatial_dimensions.end());
      if (pref == ConvLayout::kNhwc) {
        order.push_back(d.kernel_input_feature_dimension);
        if (!xla_filter) order.push_back(d.kernel_output_feature_dimension);
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
  // `auto_parameters`: the parameters whose layout the pass chooses (an
  // entry parameter written without a layout is XLA's AUTO layout).
  ComputationLayouts(HloComputation& computation, const GpuLayoutAssignmentOptions& options,
                     std::optional<Shape> result_layout,
                     absl::flat_hash_set<const HloInstruction*> auto_parameters)
      : computation_(computation),
        options_(options),
        result_layout_(std::move(result_layout)),
        auto_parameters_(std::move(auto_parameters)) {}

  absl::StatusOr<bool> Run() {
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    for (HloInstruction* inst : order) {
      if (Assignable(inst->shape())) original_[inst] = LayoutOf(inst->shape());
      if (std::optional<ConvRoles> roles = ConvCallRoles(*inst)) conv_roles_[inst] = *roles;
    }
    PropagateLibraryCallLayouts(order);
    for (HloInstruction* inst : order) DecideForward(inst);
    for (auto it = order.rbegin(); it != order.rend(); ++it) DecideBackward(*it);
    bool changed = ApplyLayouts(order);
    for (HloInstruction* inst : order) changed |= InsertOperandCopies(inst);
    changed |= CopyRootIfNeeded();
    changed |= FillMissingLayouts();
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

  // Ops whose result and same-rank operands share one layout (XLA's
  // LayoutAssignment::InstructionCanChangeLayout is false).
  static bool IsLayoutPreserving(const HloInstruction& inst) {
    return IsPropagatingElementwise(inst) || (inst.opcode() == HloOpcode::kReverse && Assignable(inst.shape()));
  }

  // XLA adds the convolution calls' layout constraints after the entry
  // parameters', in reverse post order, and pushes each new constraint to
  // the front of its depth-first worklist
  // (GpuLayoutAssignment::AddBackendConstraints: "the earliest convolution
  // layout propagates first"; LayoutAssignment::PropagateConstraints), so
  // the calls' layouts reach the ops around them before the parameters' do:
  // the first call's result first, then its operands (filter before input),
  // then the next call. Each spreads through layout-preserving ops, forward
  // to users and back to operands, until it meets a layout already chosen;
  // what it cannot reach (parameters, transposes, other calls) is copied.
  void PropagateLibraryCallLayouts(const std::vector<HloInstruction*>& order) {
    for (HloInstruction* call : order) {
      auto roles = conv_roles_.find(call);
      if (roles == conv_roles_.end()) continue;
      const ConvRoles& r = roles->second;
      if (ConvResultMovable(call)) {
        const Layout result = WithOrder(LayoutOf(call->shape().tuple_shapes(0)),
                                        ConvRoleLayout(r.dnums, r.result, options_.conv_layout, options_.xla_filter_layout));
        for (HloInstruction* gte : call->users()) {
          if (gte->tuple_index() != 0 || chosen_.contains(gte)) continue;
          chosen_[gte] = result;
          for (HloInstruction* user : gte->users()) Spread(user, result);
        }
      }
      for (int64_t i = std::min<int64_t>(call->operand_count(), 2) - 1; i >= 0; --i) {
        if (r.operands[i] == ConvRole::kNone || !Constrains(r.operands[i])) continue;
        HloInstruction* operand = call->mutable_operand(i);
        if (!Assignable(operand->shape())) continue;
        Spread(operand, WithOrder(LayoutOf(operand->shape()), ConvRoleLayout(r.dnums, r.operands[i], options_.conv_layout, options_.xla_filter_layout)));
      }
    }
  }

  // Gives `start` and the layout-preserving ops connected to it `layout`.
  void Spread(HloInstruction* start, const Layout& layout) {
    std::vector<HloInstruction*> stack = {start};
    while (!stack.empty()) {
      HloInstruction* x = stack.back();
      stack.pop_back();
      if (chosen_.contains(x) || !IsLayoutPreserving(*x) || x->shape().rank() != static_cast<int64_t>(layout.minor_to_major().size()) ||
          IsTiled(LayoutOf(x->shape()))) {
        continue;
      }
      chosen_[x] = WithOrder(LayoutOf(x->shape()), layout);
      for (HloInstruction* operand : x->operands()) {
        if (Assignable(operand->shape()) && operand->shape().rank() == x->shape().rank()) stack.push_back(operand);
      }
      for (HloInstruction* user : x->users()) stack.push_back(user);
    }
  }

  void DecideForward(HloInstruction* inst) {
    if (!Assignable(inst->shape()) || chosen_.contains(inst)) return;
    HloOpcode op = inst->opcode();
    const Layout current = LayoutOf(inst->shape());
    if (op == HloOpcode::kParameter && auto_parameters_.contains(inst)) return;  // decided by its users
    if (op == HloOpcode::kDot || op == HloOpcode::kFft) {
      // cuFFT reads and writes dim-0-major arrays.
      chosen_[inst] = WithOrder(current, Layout::Default(inst->shape().rank()));
      return;
    }
    if (op == HloOpcode::kRaggedAllToAll) {
      // The ragged dimension (0) most major.
      chosen_[inst] = MoveDimToMajor(Untiled(current), 0);
      return;
    }
    if (op == HloOpcode::kTranspose || op == HloOpcode::kReshape) {
      std::optional<Layout> in = Decided(inst->operand(0));
      if (!in.has_value()) return;  // decided by its users
      chosen_[inst] = BitcastResultLayout(*inst, *in);
      return;
    }
    if (op == HloOpcode::kGetTupleElement && inst->tuple_index() == 0) {
      auto it = conv_roles_.find(inst->operand(0));
      if (it != conv_roles_.end() && ConvResultMovable(inst->operand(0))) {
        chosen_[inst] = WithOrder(current, ConvRoleLayout(it->second.dnums, it->second.result, options_.conv_layout, options_.xla_filter_layout));
        return;
      }
    }
    if (IsPropagatingElementwise(*inst)) {
      if (std::optional<Layout> l = RowReductionLayoutForAllUsers(inst); l.has_value()) {
        chosen_[inst] = WithOrder(current, *l);
        return;
      }
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
    if (op == HloOpcode::kReverse) {
      // Layout-preserving (XLA's LayoutAssignment::InstructionCanChangeLayout
      // is false): the reverse and its operand share one layout. A layout
      // its users need (a convolution's filter) is pulled through it onto
      // the operand, which is copied, as XLA's PropagateUseConstraintToDefs
      // does; else it keeps its operand's layout.
      if (std::optional<Layout> need = RequirementOfAllUsers(inst); need.has_value() && !IsTiled(*need)) {
        chosen_[inst] = *need;
        return;
      }
      std::optional<Layout> in = Decided(inst->operand(0));
      chosen_[inst] = in.has_value() && !IsTiled(*in) ? WithOrder(current, *in) : current;
      return;
    }
    if (IsLayoutFreeProducer(op)) return;
    chosen_[inst] = current;
  }

  // The layout every use of `inst` needs, when all its users need one and
  // they agree.
  std::optional<Layout> RequirementOfAllUsers(const HloInstruction* inst) const {
    std::optional<Layout> out;
    if (inst->users().empty() || inst->IsRoot()) return std::nullopt;
    for (const HloInstruction* user : inst->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != inst) continue;
        std::optional<Layout> l = Requirement(*user, i);
        if (!l.has_value() || (out.has_value() && *out != *l)) return std::nullopt;
        out = l;
      }
    }
    return out;
  }

  // A transpose or reshape of an operand laid out as `in`: a transpose, and
  // a reshape whose layout would move elements, become bitcasts (a reshape
  // keeps its size-1 dimensions where they were: XLA:GPU's
  // ChooseOutputLayoutFromOperandLayout).
  Layout BitcastResultLayout(const HloInstruction& inst, const Layout& in) const {
    const Layout current = LayoutOf(inst.shape());
    if (inst.opcode() == HloOpcode::kTranspose) {
      return IsTiled(in) || IsTiled(current) ? current : WithOrder(current, TransposeOutputLayout(inst, in));
    }
    const std::vector<int64_t>& in_dims = inst.operand(0)->shape().dimensions();
    if (IsTiled(in) || IsTiled(current) || ReshapeIsBitcast(in_dims, in, inst.shape().dimensions(), current)) {
      return current;
    }
    std::optional<Layout> aligned = ReshapeBitcastLayout(in_dims, in, inst.shape().dimensions(), current);
    return aligned.has_value() ? WithOrder(current, *aligned) : current;
  }

  // The row-reduction input layout every user of `inst` (reduces reading
  // it as their input) wants, when they agree.
  std::optional<Layout> RowReductionLayoutForAllUsers(const HloInstruction* inst) const {
    std::optional<Layout> out;
    if (inst->users().empty()) return std::nullopt;
    for (const HloInstruction* user : inst->users()) {
      if (user->opcode() != HloOpcode::kReduce || user->operand(0) != inst || user->operand(1) == inst) {
        return std::nullopt;
      }
      std::optional<Layout> l = RowReductionOperandLayout(*user, Final(user));
      if (!l.has_value() || (out.has_value() && *out != *l)) return std::nullopt;
      out = l;
    }
    return out;
  }

  void DecideBackward(HloInstruction* inst) {
    if (!Assignable(inst->shape()) || chosen_.contains(inst)) return;
    for (const HloInstruction* user : inst->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) != inst) continue;
        if (std::optional<Layout> want = Preference(*user, i); want.has_value()) {
          chosen_[inst] = Untiled(*want);
          return;
        }
      }
    }
    chosen_[inst] = Untiled(LayoutOf(inst->shape()));
  }

  // The layout `user` would like operand `i` to have when the operand's
  // layout is still free: what it needs, else the layout that makes a
  // transpose or reshape a bitcast, or a reduce a row reduction.
  std::optional<Layout> Preference(const HloInstruction& user, int64_t i) const {
    if (std::optional<Layout> need = Requirement(user, i); need.has_value()) return need;
    const HloInstruction* operand = user.operand(i);
    std::optional<Layout> out = Decided(&user);
    if (!Assignable(operand->shape()) || !out.has_value() || IsTiled(*out)) return std::nullopt;
    switch (user.opcode()) {
      case HloOpcode::kTranspose:
        return WithOrder(LayoutOf(operand->shape()), TransposeOperandLayout(user, *out));
      case HloOpcode::kReshape: {
        std::optional<Layout> l = ReshapeBitcastLayout(user.shape().dimensions(), *out,
                                                       operand->shape().dimensions(), LayoutOf(operand->shape()));
        if (!l.has_value()) return std::nullopt;
        return WithOrder(LayoutOf(operand->shape()), *l);
      }
      case HloOpcode::kReduce:
        if (i != 0) return std::nullopt;
        return RowReductionOperandLayout(user, *out);
      default:
        return std::nullopt;
    }
  }

  // Whether a convolution call's operand in `role` must have that role's
  // layout (a filter operand keeps its producer's with
  // filter_layout_as_is).
  bool Constrains(ConvRole role) const {
    return role != ConvRole::kFilter || options_.xla_filter_layout || !options_.filter_layout_as_is;
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
      return WithOrder(Final(operand),
                       DotOperandLayout(user, i, Final(operand), options_.pack_dot_operands_along_k_dimension));
    }
    if (auto it = conv_roles_.find(&user); it != conv_roles_.end()) {
      ConvRole role = it->second.operands[i];
      if (role == ConvRole::kNone || !Constrains(role)) return std::nullopt;
      return WithOrder(Final(operand), ConvRoleLayout(it->second.dnums, role, options_.conv_layout, options_.xla_filter_layout));
    }
    switch (user.opcode()) {
      case HloOpcode::kFft:
        return WithOrder(Final(operand), Layout::Default(operand->shape().rank()));
      case HloOpcode::kSlice:
      case HloOpcode::kDynamicSlice:
        // Layout-preserving (XLA's LayoutAssignment::InstructionCanChangeLayout
        // is false for both) and layout_normalization relies on it: the
        // sliced array in the slice's own layout. Without this, Gemma 3 1B
        // of XLA's benchmark set failed layout_normalization ("slice
        // changes the layout").
        if (i == 0) return WithOrder(Final(operand), Final(&user));
        break;
      case HloOpcode::kReverse:
        // Layout-preserving, as slices are (see DecideForward).
        return WithOrder(Final(operand), Final(&user));
      case HloOpcode::kPad:
      case HloOpcode::kConcatenate:
      case HloOpcode::kReduceWindow:
        // Layout-preserving too (InstructionCanChangeLayout is false), and
        // layout_normalization renumbers their attributes by one layout:
        // an operand laid out otherwise is copied into the result's layout
        // (a conv-derived layout reaching a pad's operand made
        // layout_normalization pad the wrong dimensions).
        if (user.shape().IsArray() && operand->shape().rank() == user.shape().rank()) {
          return WithOrder(Final(operand), Final(&user));
        }
        break;
      case HloOpcode::kRaggedAllToAll:
        // The input and the (aliased) output buffer share the result's
        // layout.
        if (i < 2) return Decided(&user);
        break;
      case HloOpcode::kReduce:
        // A variadic reduce reads all its inputs in one layout (XLA's
        // OperandLayoutAlwaysPropagateToSiblings): the first input's.
        if (i > 0 && i < user.operand_count() / 2) return Untiled(Final(user.operand(0)));
        break;
      case HloOpcode::kCustomCall: {
        // A custom call's declared operand layouts are mandatory.
        const std::optional<std::vector<Shape>>& declared = user.attrs().operand_layout_constraints;
        if (declared.has_value() && i < static_cast<int64_t>(declared->size()) && (*declared)[i].IsArray()) {
          return LayoutOf((*declared)[i]);
        }
        break;
      }
      default:
        break;
    }
    if (ReadsAnyLayout(user.opcode()) || IsPropagatingElementwise(user)) return std::nullopt;
    // The entry's root tuple takes its elements as they are (copied into the
    // result layout after it); another tuple declares its elements' layouts.
    if (IsResultTuple(user)) return Final(operand);
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

  // Every array written without a layout gets the default one (XLA's
  // layout assignment leaves no shape without a layout).
  bool FillMissingLayouts() {
    bool changed = false;
    for (HloInstruction* inst : computation_.instructions()) {
      changed |= FillMissingLayouts(*inst->mutable_shape());
    }
    return changed;
  }
  static bool FillMissingLayouts(Shape& shape) {
    if (shape.IsTuple()) {
      bool changed = false;
      for (Shape& element : shape.mutable_tuple_shapes()) changed |= FillMissingLayouts(element);
      return changed;
    }
    if (!shape.IsArray() || shape.has_layout()) return false;
    shape.set_layout(Layout::Default(shape.rank()));
    return shape.rank() > 0;  // a scalar's only layout prints as none
  }

  // The entry's root tuple, whose elements keep the layouts they were given
  // and are copied into the result layout after it.
  bool IsResultTuple(const HloInstruction& inst) const {
    return inst.opcode() == HloOpcode::kTuple && inst.IsRoot() && result_layout_.has_value() &&
           result_layout_->IsTuple() && result_layout_->tuple_shapes_size() == inst.operand_count();
  }

  // XLA's LayoutAssignment copies a root tuple whose layout differs from the
  // result layout through CreateCopyWithNewLayout: a get-tuple-element of
  // every element, a copy of each one laid out otherwise, and a new tuple.
  bool CopyResultTupleIfNeeded() {
    HloInstruction* root = computation_.root_instruction();
    bool changed = false;
    bool differs = false;
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      const Shape& element = root->operand(i)->shape();
      Shape& slot = root->mutable_shape()->mutable_tuple_shapes()[i];
      if (!Assignable(element)) continue;
      if (slot != element) {
        slot = element;
        changed = true;
      }
      differs |= LayoutOf(element) != LayoutOf(result_layout_->tuple_shapes(i));
    }
    if (!differs) return changed;
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      HloInstruction* gte = computation_.AddInstruction(HloInstruction::CreateGetTupleElement(root, i));
      const Shape& want = result_layout_->tuple_shapes(i);
      if (Assignable(gte->shape()) && LayoutOf(gte->shape()) != LayoutOf(want)) {
        Shape shape = gte->shape();
        shape.set_layout(LayoutOf(want));
        gte = computation_.AddInstruction(HloInstruction::CreateUnary(shape, HloOpcode::kCopy, gte));
      }
      elements.push_back(gte);
    }
    computation_.set_root_instruction(computation_.AddInstruction(HloInstruction::CreateTuple(elements)));
    return true;
  }

  bool CopyRootIfNeeded() {
    HloInstruction* root = computation_.root_instruction();
    if (IsResultTuple(*root)) return CopyResultTupleIfNeeded();
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
  absl::flat_hash_set<const HloInstruction*> auto_parameters_;
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

// The entry parameters written without a layout (in the module's
// entry_computation_layout when it has one, else on the parameter): XLA's
// AUTO layout, which the pass chooses from the parameter's users. (An entry
// result written without a layout takes the default layout.)
absl::flat_hash_set<const HloInstruction*> AutoLayoutParameters(const HloModule& module) {
  absl::flat_hash_set<const HloInstruction*> out;
  const HloComputation* entry = module.entry_computation();
  const std::optional<ProgramShape>& entry_layout = module.config().entry_computation_layout;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* param = entry->parameter_instruction(i);
    const Shape& declared = entry_layout.has_value() ? entry_layout->parameters[i] : param->shape();
    if (declared.IsArray() && !declared.has_layout()) out.insert(param);
  }
  return out;
}

// Writes the layouts chosen for AUTO entry parameters and an AUTO result
// into the module's entry_computation_layout (XLA's
// PropagateComputationLayouts).
bool RecordChosenEntryLayouts(HloModule& module) {
  std::optional<ProgramShape>& entry_layout = module.config().entry_computation_layout;
  if (!entry_layout.has_value()) return false;
  bool changed = false;
  const HloComputation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    Shape& declared = entry_layout->parameters[i];
    if (declared.IsArray() && !declared.has_layout()) {
      declared = entry->parameter_instruction(i)->shape();
      changed |= declared.rank() > 0;
    }
  }
  if (entry_layout->result.IsArray() && !entry_layout->result.has_layout()) {
    entry_layout->result = entry->root_instruction()->shape();
    changed |= entry_layout->result.rank() > 0;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> GpuLayoutAssignment::RunImpl(HloModule& module, PassRunContext*) {
  const absl::flat_hash_set<const HloInstruction*> auto_parameters = AutoLayoutParameters(module);
  ASSIGN_OR_RETURN(bool changed, HonourEntryLayout(module));
  const std::optional<ProgramShape>& entry_layout = std::as_const(module).config().entry_computation_layout;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    std::optional<Shape> result;
    if (c == module.entry_computation() && entry_layout.has_value()) result = entry_layout->result;
    absl::flat_hash_set<const HloInstruction*> auto_here;
    if (c == module.entry_computation()) auto_here = auto_parameters;
    ASSIGN_OR_RETURN(bool c_changed, ComputationLayouts(*c, options_, result, std::move(auto_here)).Run());
    changed |= c_changed;
  }
  changed |= RecordChosenEntryLayouts(module);
  return changed;
}

}  // namespace passlab
