#include "passes/layout/layout_normalization.h"

#include <algorithm>
#include <cstring>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "passes/layout/bitcast_layouts.h"
#include "passes/layout/descending_layout.h"

namespace passlab {
namespace {

// Local precondition of every rewrite: each operand either has a descending
// layout or is a bitcast of a value that has one (the rewrites of the
// operands, visited first, leave them so). Postcondition: the rewritten op
// computes on descending layouts and is bitcast back to its original shape.
class NormalizationVisitor : public HloRewriteVisitor {
 public:
  // Everything without a rewrite of its own: elementwise ops are rebuilt on
  // the normalized operands, the rest gets a bitcast to its normalized shape
  // and back in front of its users.
  absl::Status DefaultAction(HloInstruction* hlo) override {
    if (!ShouldProcess(*hlo)) return absl::OkStatus();
    if (IsElementwiseUnary(hlo->opcode())) return NormalizeUnary(hlo);
    if (IsElementwiseBinary(hlo->opcode())) return NormalizeBinary(hlo);
    return BitcastAroundUsers(hlo);
  }

  absl::Status HandleConstant(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeConstant); }
  absl::Status HandleSlice(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeSlice); }
  absl::Status HandleConcatenate(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeConcatenate);
  }
  absl::Status HandleReduceWindow(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeReduceWindow);
  }
  absl::Status HandleBroadcast(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeBroadcast);
  }
  absl::Status HandleIota(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeIota); }
  absl::Status HandleBitcastConvert(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeBitcastConvert);
  }
  absl::Status HandleReshape(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeReshape); }
  absl::Status HandleScatter(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeScatter); }
  absl::Status HandleTranspose(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeTranspose);
  }
  absl::Status HandleCopy(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeCopy); }
  absl::Status HandleReverse(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeReverse); }
  absl::Status HandlePad(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizePad); }
  absl::Status HandleConvolution(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeConvolution);
  }
  absl::Status HandleSelect(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeTernary); }
  absl::Status HandleClamp(HloInstruction* hlo) override { return Guarded(hlo, &NormalizationVisitor::NormalizeTernary); }
  absl::Status HandleDynamicSlice(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeDynamicSlice);
  }
  // XLA:GPU runs the pass with NormalizeLayoutForGpuCustomCalls
  // (xla/service/gpu/conv_layout_normalization.cc): a convolution call is
  // rebuilt on its operands bitcast to their descending forms, its
  // dimension numbers mapped to the physical positions; other custom calls
  // get the default treatment.
  absl::Status HandleCustomCall(HloInstruction* hlo) override {
    std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*hlo);
    if (kind.has_value() && IsConvolutionKind(*kind)) return NormalizeConvolutionCall(hlo);
    return DefaultAction(hlo);
  }
  absl::Status HandleDynamicUpdateSlice(HloInstruction* hlo) override {
    return Guarded(hlo, &NormalizationVisitor::NormalizeDynamicUpdateSlice);
  }

 private:
  using Rewrite = absl::Status (NormalizationVisitor::*)(HloInstruction*);

  // An op whose result and operands all have descending layouts is skipped.
  static bool ShouldProcess(const HloInstruction& hlo) {
    if (!hlo.shape().IsArray() || !HasDescendingLayout(hlo.shape())) return true;
    for (const HloInstruction* operand : hlo.operands()) {
      if (!HasDescendingLayout(operand->shape())) return true;
    }
    return false;
  }

  absl::Status Guarded(HloInstruction* hlo, Rewrite rewrite) {
    if (!ShouldProcess(*hlo)) return absl::OkStatus();
    return (this->*rewrite)(hlo);
  }

  static bool SamePlacement(const Shape& a, const Shape& b) {
    if (!a.has_layout() || !b.has_layout()) return HasDescendingLayout(a) && HasDescendingLayout(b);
    return a.layout().minor_to_major() == b.layout().minor_to_major() && a.layout().tiles() == b.layout().tiles();
  }

  // The normalized value behind an operand: itself when its layout is
  // descending, else the operand of the bitcast it must be.
  static absl::StatusOr<HloInstruction*> NormalizedInput(HloInstruction* hlo) {
    if (HasDescendingLayout(hlo->shape())) return hlo;
    if (hlo->opcode() != HloOpcode::kBitcast || !HasDescendingLayout(hlo->operand(0)->shape())) {
      return absl::InternalError(StrCat("unexpected input to layout normalization: '", hlo->name(), "' (",
                                        hlo->shape().ToString(), ") is neither normalized nor a bitcast of a "
                                        "normalized value"));
    }
    return hlo->mutable_operand(0);
  }

  absl::StatusOr<std::vector<HloInstruction*>> NormalizedInputs(HloInstruction* hlo, int64_t from = 0,
                                                                int64_t to = -1) {
    if (to < 0) to = hlo->operand_count();
    std::vector<HloInstruction*> out;
    for (int64_t i = from; i < to; ++i) {
      ASSIGN_OR_RETURN(HloInstruction* n, NormalizedInput(hlo->mutable_operand(i)));
      out.push_back(n);
    }
    return out;
  }

  HloInstruction* Add(HloInstruction* anchor, std::unique_ptr<HloInstruction> inst) {
    MarkChanged();
    return anchor->parent()->AddInstruction(std::move(inst));
  }

  // `hlo` itself when it already has `shape`, else a bitcast of it.
  HloInstruction* MaybeBitcast(HloInstruction* hlo, const Shape& shape) {
    if (hlo->shape() == shape) return hlo;
    return Add(hlo, HloInstruction::CreateBitcast(shape, hlo));
  }

  // A copy of `hlo` on new operands with the normalized shape; the caller
  // renumbers its attributes.
  std::unique_ptr<HloInstruction> Rebuild(const HloInstruction& hlo, const Shape& shape,
                                          absl::Span<HloInstruction* const> operands) {
    std::unique_ptr<HloInstruction> out = hlo.CloneWithNewOperands(shape, operands);
    out->clear_sharding();
    return out;
  }

  // Adds `normalized` and replaces `hlo` by it, bitcast to hlo's shape.
  absl::Status ReplaceByNormalized(HloInstruction* hlo, std::unique_ptr<HloInstruction> normalized) {
    HloInstruction* added = Add(hlo, std::move(normalized));
    return ReplaceInstruction(hlo, MaybeBitcast(added, hlo->shape()));
  }

  // x => bitcast(bitcast(x) to normalized) to x's shape, for x's users.
  absl::Status BitcastAroundUsers(HloInstruction* hlo) {
    if (hlo->user_count() == 0) return absl::OkStatus();
    const Shape& shape = hlo->shape();
    if (!shape.IsArray()) return absl::OkStatus();  // tuples: their elements are handled one by one
    Shape normalized = DescendingShapeWithSamePhysicalLayout(shape);
    if (normalized == shape) return absl::OkStatus();
    std::vector<HloInstruction*> users = hlo->users();
    HloInstruction* to_normalized = MaybeBitcast(hlo, normalized);
    HloInstruction* back = MaybeBitcast(to_normalized, shape);
    RETURN_IF_ERROR(hlo->ReplaceUsesWith(users, back));
    MarkChanged();
    return absl::OkStatus();
  }

  // A constant's literal is rewritten in the normalized shape (its elements
  // transposed into memory order), then bitcast back for its users.
  absl::Status NormalizeConstant(HloInstruction* hlo) {
    const Shape shape = hlo->shape();
    if (!shape.IsArray() || !hlo->has_literal()) return absl::OkStatus();
    // An empty literal has nothing to move (XLA leaves it; its users still
    // need a bitcast of a normalized value).
    if (shape.element_count() == 0) return BitcastAroundUsers(hlo);
    Shape normalized = DescendingShapeWithSamePhysicalLayout(shape);
    if (normalized.has_layout()) normalized.mutable_layout().set_element_size_in_bits(0);
    if (normalized == shape) return absl::OkStatus();
    const Literal& old = hlo->literal();
    Literal fresh(normalized);
    const std::vector<int64_t> order = MajorToMinorDims(shape);  // new dim i = old dim order[i]
    const int64_t count = shape.element_count();
    const int64_t width = old.size_bytes() / count;
    std::vector<int64_t> old_strides = RowMajorStrides(shape.dimensions());
    std::vector<int64_t> index(normalized.rank(), 0);
    for (int64_t linear = 0; linear < count; ++linear) {
      int64_t src = 0;
      for (int64_t i = 0; i < normalized.rank(); ++i) src += index[i] * old_strides[order[i]];
      std::memcpy(fresh.untyped_data() + linear * width, old.untyped_data() + src * width, width);
      for (int64_t i = normalized.rank() - 1; i >= 0; --i) {
        if (++index[i] < normalized.dimensions(i)) break;
        index[i] = 0;
      }
    }
    std::vector<HloInstruction*> users = hlo->users();
    const bool was_root = hlo->IsRoot();
    hlo->set_literal(std::move(fresh));
    *hlo->mutable_shape() = normalized;
    HloInstruction* back = MaybeBitcast(hlo, shape);
    RETURN_IF_ERROR(hlo->ReplaceUsesWith(users, back));
    if (was_root) hlo->parent()->set_root_instruction(back);
    MarkChanged();
    return absl::OkStatus();
  }

  // slice is layout-preserving: its per-dimension attributes follow the
  // layout permutation.
  absl::Status NormalizeSlice(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!SamePlacement(hlo->shape(), operand->shape())) {
      return absl::InternalError(StrCat("slice '", hlo->name(), "' changes the layout"));
    }
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    const std::vector<int64_t> perm = MajorToMinorDims(hlo->shape());
    auto slice = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input});
    slice->mutable_attrs().slice = PermuteByIndex(hlo->attrs().slice, perm);
    return ReplaceByNormalized(hlo, std::move(slice));
  }

  absl::Status NormalizeConcatenate(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> inputs, NormalizedInputs(hlo));
    const int64_t dim = InversePermutation(MajorToMinorDims(hlo->shape()))[hlo->concatenate_dimension()];
    auto concat = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), inputs);
    concat->set_dimensions({dim});
    return ReplaceByNormalized(hlo, std::move(concat));
  }

  absl::Status NormalizeReduceWindow(HloInstruction* hlo) {
    if (hlo->shape().IsTuple()) return absl::OkStatus();  // variadic reduce-windows are not handled
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!SamePlacement(hlo->shape(), operand->shape())) {
      return absl::InternalError(StrCat("reduce-window '", hlo->name(), "' changes the layout"));
    }
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    const std::vector<int64_t> perm = MajorToMinorDims(hlo->shape());
    auto rw = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input, hlo->mutable_operand(1)});
    Window window = hlo->window();
    window.dimensions = PermuteByIndex(hlo->window().dimensions, perm);
    rw->mutable_attrs().window = window;
    return ReplaceByNormalized(hlo, std::move(rw));
  }

  // broadcast(bitcast(A){L}){L'} => bitcast(broadcast(A)), the broadcast
  // dimensions mapped through the operand's and the result's layouts.
  absl::Status NormalizeBroadcast(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(hlo->mutable_operand(0)));
    const std::vector<int64_t> operand_order = MajorToMinorDims(hlo->operand(0)->shape());
    const std::vector<int64_t> inverse_out = InversePermutation(MajorToMinorDims(hlo->shape()));
    std::vector<int64_t> dims;
    for (int64_t d : ComposePermutations(hlo->dimensions(), operand_order)) dims.push_back(inverse_out[d]);
    auto broadcast = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input});
    broadcast->set_dimensions(dims);
    return ReplaceByNormalized(hlo, std::move(broadcast));
  }

  absl::Status NormalizeIota(HloInstruction* hlo) {
    const int64_t dim = InversePermutation(MajorToMinorDims(hlo->shape()))[hlo->iota_dimension()];
    auto iota = HloInstruction::CreateIota(DescendingShapeWithSamePhysicalLayout(hlo->shape()), dim);
    return ReplaceByNormalized(hlo, std::move(iota));
  }

  // bitcast-convert is layout-preserving when it keeps the rank; when it
  // adds or drops the last dimension, only if that dimension is most minor.
  absl::Status NormalizeBitcastConvert(HloInstruction* hlo) {
    const Shape& operand = hlo->operand(0)->shape();
    if (hlo->shape().rank() == operand.rank()) return NormalizeUnary(hlo);
    const Shape& wider = operand.rank() > hlo->shape().rank() ? operand : hlo->shape();
    const bool last_is_minor =
        wider.rank() == 0 || !wider.has_layout() || wider.layout().minor_to_major().front() == wider.rank() - 1;
    if (!last_is_minor) return BitcastAroundUsers(hlo);
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(hlo->mutable_operand(0)));
    return ReplaceByNormalized(hlo, Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input}));
  }

  // unary(bitcast(A){L}){L} => bitcast(unary(A)).
  absl::Status NormalizeUnary(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!SamePlacement(hlo->shape(), operand->shape())) {
      return absl::InternalError(StrCat("elementwise '", hlo->name(), "' changes the layout"));
    }
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    return ReplaceByNormalized(hlo, Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input}));
  }

  // binary(bitcast(A){L}, bitcast(B){L}){L} => bitcast(binary(A, B)).
  absl::Status NormalizeBinary(HloInstruction* hlo) {
    if (!SamePlacement(hlo->shape(), hlo->operand(0)->shape())) {
      return absl::InternalError(StrCat("elementwise '", hlo->name(), "' changes the layout"));
    }
    return NormalizeElementwise(hlo);
  }

  // select and clamp: like binary ops (clamp's bounds may be scalars).
  absl::Status NormalizeTernary(HloInstruction* hlo) {
    if (!SamePlacement(hlo->shape(), hlo->operand(1)->shape()) ||
        (hlo->opcode() == HloOpcode::kSelect && !SamePlacement(hlo->shape(), hlo->operand(2)->shape()))) {
      return absl::InternalError(StrCat("'", hlo->name(), "' changes the layout"));
    }
    return NormalizeElementwise(hlo);
  }

  absl::Status NormalizeElementwise(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> inputs, NormalizedInputs(hlo));
    Shape shape = DescendingShapeWithSamePhysicalLayout(hlo->shape());
    for (const HloInstruction* input : inputs) {
      if (input->shape().rank() != 0 && input->shape().dimensions() != shape.dimensions()) {
        return absl::InternalError(StrCat("operands of '", hlo->name(), "' normalize to different shapes"));
      }
    }
    return ReplaceByNormalized(hlo, Rebuild(*hlo, shape, inputs));
  }

  // ReshapeDecomposer leaves only bitcast reshapes: the normalized reshape
  // goes between the normalized shapes.
  absl::Status NormalizeReshape(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    const Shape& in = operand->shape();
    const Shape& out = hlo->shape();
    if (!ReshapeIsBitcast(in.dimensions(), in.has_layout() ? in.layout() : Layout::Default(in.rank()),
                          out.dimensions(), out.has_layout() ? out.layout() : Layout::Default(out.rank()))) {
      return absl::InternalError(StrCat("reshape '", hlo->name(), "' is not a bitcast (run ReshapeDecomposer first)"));
    }
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    return ReplaceByNormalized(hlo, HloInstruction::CreateReshape(DescendingShapeWithSamePhysicalLayout(out), input));
  }

  // scatter keeps its operands' layout: the dimension numbers are renumbered
  // through the operand, indices and updates layouts. Only one scatter
  // (batch) dimension is allowed, since scatter cannot say in which order the
  // updates' and the indices' batch dimensions are (ScatterSimplifier runs
  // first).
  absl::Status NormalizeScatter(HloInstruction* hlo) {
    const int64_t n = (hlo->operand_count() - 1) / 2;
    const Shape& operand_shape = hlo->operand(0)->shape();
    const Shape& update_shape = hlo->operand(n + 1)->shape();
    for (int64_t i = 0; i < n; ++i) {
      if (!SamePlacement(hlo->operand(i)->shape(), operand_shape)) {
        return absl::FailedPreconditionError("All scatter operands must have the same layout");
      }
      if (!SamePlacement(hlo->operand(n + 1 + i)->shape(), update_shape)) {
        return absl::FailedPreconditionError("All scatter updates must have the same layout");
      }
    }
    const ScatterDimensionNumbers& dims = hlo->attrs().scatter_dnums;
    if (update_shape.rank() - static_cast<int64_t>(dims.update_window_dims.size()) > 1) {
      return absl::FailedPreconditionError(
          "There should be just a single scatter dimension. Make sure to run ScatterSimplifier before "
          "LayoutNormalization");
    }
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> inputs, NormalizedInputs(hlo));

    const Shape& indices_shape = hlo->operand(n)->shape();
    const std::vector<int64_t> indices_perm = InversePermutation(MajorToMinorDims(indices_shape));
    const std::vector<int64_t> layout_perm = MajorToMinorDims(operand_shape);
    const std::vector<int64_t> operand_perm = InversePermutation(layout_perm);
    const std::vector<int64_t> update_perm = InversePermutation(MajorToMinorDims(update_shape));

    ScatterDimensionNumbers normalized;
    normalized.index_vector_dim = dims.index_vector_dim < indices_shape.rank()
                                      ? indices_perm[dims.index_vector_dim]
                                      : dims.index_vector_dim;
    for (int64_t d : dims.scatter_dims_to_operand_dims) normalized.scatter_dims_to_operand_dims.push_back(operand_perm[d]);
    std::vector<int64_t> update_window_dims;
    for (int64_t d : dims.update_window_dims) update_window_dims.push_back(update_perm[d]);
    // Each operand dimension: -1 for an inserted window dimension, else the
    // (normalized) update dimension it comes from; then put in the
    // normalized operand's order. update_window_dims may come out unsorted
    // (ScatterSimplifier sorts it again).
    std::vector<int64_t> window(operand_shape.rank());
    for (int64_t i = 0, j = 0, k = 0; i < operand_shape.rank(); ++i) {
      if (j < static_cast<int64_t>(dims.inserted_window_dims.size()) && dims.inserted_window_dims[j] == i) {
        window[i] = -1;
        ++j;
      } else {
        window[i] = update_window_dims[k++];
      }
    }
    const std::vector<int64_t> permuted = ComposePermutations(window, layout_perm);
    for (int64_t i = 0; i < static_cast<int64_t>(permuted.size()); ++i) {
      if (permuted[i] == -1) {
        normalized.inserted_window_dims.push_back(i);
      } else {
        normalized.update_window_dims.push_back(permuted[i]);
      }
    }

    std::vector<Shape> shapes;
    for (int64_t i = 0; i < n; ++i) shapes.push_back(inputs[i]->shape());
    const Shape shape = hlo->shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0];
    auto scatter = Rebuild(*hlo, shape, inputs);
    scatter->mutable_attrs().scatter_dnums = normalized;
    if (!hlo->shape().IsTuple()) return ReplaceByNormalized(hlo, std::move(scatter));
    HloInstruction* added = Add(hlo, std::move(scatter));
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < n; ++i) {
      HloInstruction* gte = Add(hlo, HloInstruction::CreateGetTupleElement(added, i));
      elements.push_back(MaybeBitcast(gte, hlo->shape().tuple_shapes(i)));
    }
    return ReplaceInstruction(hlo, Add(hlo, HloInstruction::CreateTuple(elements)));
  }

  // transpose(bitcast(A){L0}){L} => bitcast(transpose(A)) with the
  // dimensions L0^-1 o dims o L (no transpose when that is the identity).
  absl::Status NormalizeTranspose(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    const std::vector<int64_t> dims = ComposePermutations(
        ComposePermutations(InversePermutation(MajorToMinorDims(operand->shape())), hlo->dimensions()),
        MajorToMinorDims(hlo->shape()));
    if (IsIdentityPermutation(dims)) return ReplaceInstruction(hlo, MaybeBitcast(input, hlo->shape()));
    return ReplaceByNormalized(
        hlo, HloInstruction::CreateTranspose(DescendingShapeWithSamePhysicalLayout(hlo->shape()), input, dims));
  }

  // copy(bitcast(A){L0}){L} (a physical transposition) =>
  // bitcast(transpose(A)) with the dimensions L0^-1 o L.
  absl::Status NormalizeCopy(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    const std::vector<int64_t> dims =
        ComposePermutations(InversePermutation(MajorToMinorDims(operand->shape())), MajorToMinorDims(hlo->shape()));
    return ReplaceByNormalized(
        hlo, HloInstruction::CreateTranspose(DescendingShapeWithSamePhysicalLayout(hlo->shape()), input, dims));
  }

  absl::Status NormalizeReverse(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(hlo->mutable_operand(0)));
    const std::vector<int64_t> inverse = InversePermutation(MajorToMinorDims(hlo->shape()));
    std::vector<int64_t> dims;
    for (int64_t d : hlo->dimensions()) dims.push_back(inverse[d]);
    std::sort(dims.begin(), dims.end());
    auto reverse = Rebuild(*hlo, input->shape(), {input});
    reverse->set_dimensions(dims);
    return ReplaceByNormalized(hlo, std::move(reverse));
  }

  // pad is layout-preserving: the padding config follows the permutation.
  absl::Status NormalizePad(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(hlo->mutable_operand(0)));
    const std::vector<int64_t> inverse = InversePermutation(MajorToMinorDims(hlo->shape()));
    const PaddingConfig& config = hlo->attrs().padding_config;
    PaddingConfig normalized;
    normalized.dimensions.resize(config.dimensions.size());
    for (size_t d = 0; d < config.dimensions.size(); ++d) normalized.dimensions[inverse[d]] = config.dimensions[d];
    auto pad = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), {input, hlo->mutable_operand(1)});
    pad->mutable_attrs().padding_config = normalized;
    return ReplaceByNormalized(hlo, std::move(pad));
  }

  // convolution on the normalized operands, every dimension number mapped
  // through the layout of its shape.
  absl::Status NormalizeConvolution(HloInstruction* hlo) {
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> inputs, NormalizedInputs(hlo));
    const Shape shape = DescendingShapeWithSamePhysicalLayout(hlo->shape());
    if (inputs == hlo->operands() && shape == hlo->shape()) return absl::OkStatus();
    if (!hlo->attrs().conv_dnums.has_value()) return BitcastAroundUsers(hlo);
    const ConvolutionDimensionNumbers& dnums = *hlo->attrs().conv_dnums;
    ConvolutionDimensionNumbers fresh = dnums;
    auto renumber = [](const Shape& s, int64_t& a, int64_t& b, std::vector<int64_t>& spatial) {
      const std::vector<int64_t> p = InversePermutation(MajorToMinorDims(s));
      for (int64_t& d : spatial) d = p[d];
      a = p[a];
      b = p[b];
    };
    renumber(hlo->operand(0)->shape(), fresh.input_batch_dimension, fresh.input_feature_dimension,
             fresh.input_spatial_dimensions);
    renumber(hlo->operand(1)->shape(), fresh.kernel_input_feature_dimension, fresh.kernel_output_feature_dimension,
             fresh.kernel_spatial_dimensions);
    renumber(hlo->shape(), fresh.output_batch_dimension, fresh.output_feature_dimension,
             fresh.output_spatial_dimensions);
    auto conv = Rebuild(*hlo, shape, inputs);
    conv->mutable_attrs().conv_dnums = fresh;
    return ReplaceByNormalized(hlo, std::move(conv));
  }

  // A convolution call (UpdateLayoutForCudnnConvolution): every operand is
  // bitcast to its descending form (even one that already is), the result
  // tuple's elements take their descending forms, each dimension number
  // becomes its physical position in the shape of its role, and the new
  // call's elements are bitcast back and tupled. A call already in
  // descending layouts with unchanged dimension numbers is left alone (XLA
  // leaves the operand bitcasts it made for it unused; passlab makes none).
  absl::Status NormalizeConvolutionCall(HloInstruction* hlo) {
    absl::StatusOr<ConvCall> call = AnalyzeConvCall(*hlo);
    if (!call.ok() || !hlo->attrs().conv_dnums.has_value()) return DefaultAction(hlo);
    const Shape& result0 = hlo->shape().IsTuple() ? hlo->shape().tuple_shapes(0) : hlo->shape();
    const HloInstruction* lhs = hlo->operand(0);
    const HloInstruction* rhs = hlo->operand(1);
    const Shape *input = &lhs->shape(), *filter = &rhs->shape(), *output = &result0;
    switch (call->kind) {
      case LibraryCallKind::kConvBackwardInput:
        input = &result0;
        output = &lhs->shape();
        break;
      case LibraryCallKind::kConvBackwardFilter:
        filter = &result0;
        output = &rhs->shape();
        break;
      default:
        break;
    }
    auto physical = [](const Shape& s, int64_t& d) { d = InversePermutation(MajorToMinorDims(s))[d]; };
    const ConvolutionDimensionNumbers& dnums = *hlo->attrs().conv_dnums;
    ConvolutionDimensionNumbers fresh = dnums;
    physical(*input, fresh.input_batch_dimension);
    physical(*input, fresh.input_feature_dimension);
    for (int64_t& d : fresh.input_spatial_dimensions) physical(*input, d);
    physical(*filter, fresh.kernel_input_feature_dimension);
    physical(*filter, fresh.kernel_output_feature_dimension);
    for (int64_t& d : fresh.kernel_spatial_dimensions) physical(*filter, d);
    physical(*output, fresh.output_batch_dimension);
    physical(*output, fresh.output_feature_dimension);
    for (int64_t& d : fresh.output_spatial_dimensions) physical(*output, d);
    Shape normalized;
    if (hlo->shape().IsTuple()) {
      std::vector<Shape> elements;
      for (const Shape& e : hlo->shape().tuple_shapes()) elements.push_back(DescendingShapeWithSamePhysicalLayout(e));
      normalized = Shape::Tuple(std::move(elements));
    } else {
      normalized = DescendingShapeWithSamePhysicalLayout(hlo->shape());
    }
    if (normalized == hlo->shape() && fresh == dnums) return absl::OkStatus();
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : hlo->operands()) {
      operands.push_back(Add(hlo, HloInstruction::CreateBitcast(DescendingShapeWithSamePhysicalLayout(op->shape()), op)));
    }
    std::unique_ptr<HloInstruction> conv = Rebuild(*hlo, normalized, operands);
    conv->mutable_attrs().conv_dnums = fresh;
    HloInstruction* added = Add(hlo, std::move(conv));
    if (!hlo->shape().IsTuple()) {
      return ReplaceInstruction(hlo, Add(hlo, HloInstruction::CreateBitcast(hlo->shape(), added)));
    }
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < hlo->shape().tuple_shapes_size(); ++i) {
      HloInstruction* gte = Add(hlo, HloInstruction::CreateGetTupleElement(added, i));
      elements.push_back(Add(hlo, HloInstruction::CreateBitcast(hlo->shape().tuple_shapes(i), gte)));
    }
    return ReplaceInstruction(hlo, Add(hlo, HloInstruction::CreateTuple(elements)));
  }

  // dynamic-slice keeps the layout: start index operands and sizes follow
  // the permutation.
  absl::Status NormalizeDynamicSlice(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!SamePlacement(hlo->shape(), operand->shape())) {
      return absl::InternalError(StrCat("dynamic-slice '", hlo->name(), "' changes the layout"));
    }
    ASSIGN_OR_RETURN(HloInstruction* input, NormalizedInput(operand));
    const std::vector<int64_t> perm = MajorToMinorDims(hlo->shape());
    std::vector<HloInstruction*> starts(hlo->operands().begin() + 1, hlo->operands().end());
    std::vector<HloInstruction*> operands = {input};
    for (HloInstruction* s : PermuteByIndex(starts, perm)) operands.push_back(s);
    auto slice = Rebuild(*hlo, DescendingShapeWithSamePhysicalLayout(hlo->shape()), operands);
    slice->mutable_attrs().slice_sizes = PermuteByIndex(hlo->attrs().slice_sizes, perm);
    return ReplaceByNormalized(hlo, std::move(slice));
  }

  absl::Status NormalizeDynamicUpdateSlice(HloInstruction* hlo) {
    HloInstruction* operand = hlo->mutable_operand(0);
    if (!SamePlacement(hlo->shape(), operand->shape())) {
      return absl::InternalError(StrCat("dynamic-update-slice '", hlo->name(), "' changes the layout"));
    }
    ASSIGN_OR_RETURN(std::vector<HloInstruction*> inputs, NormalizedInputs(hlo, 0, 2));
    const std::vector<int64_t> perm = MajorToMinorDims(hlo->shape());
    std::vector<HloInstruction*> starts(hlo->operands().begin() + 2, hlo->operands().end());
    std::vector<HloInstruction*> operands = inputs;
    for (HloInstruction* s : PermuteByIndex(starts, perm)) operands.push_back(s);
    return ReplaceByNormalized(hlo, Rebuild(*hlo, inputs[0]->shape(), operands));
  }
};

}  // namespace

absl::StatusOr<bool> LayoutNormalization::RunImpl(HloModule& module, PassRunContext*) {
  NormalizationVisitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
