// AlgebraicSimplifier rules over gather, in the order XLA's HandleGather
// tries them (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc):
// gathers of nothing or of one element, tiny 1-D gathers as selects, and
// gathers of pads (or of reshapes of pads) as pads of gathers.
#include <algorithm>
#include <map>

#include "passes/simplifiers/algsimp_internal.h"

namespace passlab::algsimp {
namespace {

using O = HloOpcode;

// XLA's ops with at most this many operand elements become selects
// (AlgebraicSimplifierOptions::very_small_gather_size).
constexpr int64_t kVerySmallGatherSize = 4;

// Operand dims a gather copies whole into an output dim (XLA's
// hlo_sharding_util::GetGatherOperandPassthroughDims): operand dim -> output dim.
std::map<int64_t, int64_t> PassthroughOperandToOutputDims(const HloInstruction* gather) {
  const GatherDimensionNumbers& d = gather->attrs().gather_dnums;
  const std::vector<int64_t>& sizes = gather->attrs().slice_sizes;
  const Shape& operand = gather->operand(0)->shape();
  std::map<int64_t, int64_t> out;
  int64_t skipped = 0;
  for (int64_t k = 0; k < operand.rank(); ++k) {
    if (Contains(d.collapsed_slice_dims, k) || Contains(d.operand_batching_dims, k)) {
      ++skipped;
      continue;
    }
    if (sizes[k] != operand.dimensions(k)) continue;
    out[k] = d.offset_dims[k - skipped];
  }
  return out;
}

std::vector<int64_t> PaddedDims(const HloInstruction* pad) {
  std::vector<int64_t> dims;
  const PaddingConfig& pc = pad->attrs().padding_config;
  for (int64_t k = 0; k < static_cast<int64_t>(pc.dimensions.size()); ++k) {
    const PaddingDimension& p = pc.dimensions[k];
    if (p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0) dims.push_back(k);
  }
  return dims;
}

// Start-indices batching dim -> output dim (XLA's
// GetStartIndicesDimToOutputDimForExplicitBatchingDims).
std::map<int64_t, int64_t> StartIndicesBatchingDimToOutputDim(const HloInstruction* gather) {
  const GatherDimensionNumbers& d = gather->attrs().gather_dnums;
  std::map<int64_t, int64_t> out;
  int64_t rank = gather->operand(1)->shape().rank();
  for (int64_t od = 0, sd = 0; od < gather->shape().rank(); ++od) {
    if (Contains(d.offset_dims, od)) continue;
    if (sd == d.index_vector_dim) ++sd;
    if (sd >= rank) break;
    if (Contains(d.start_indices_batching_dims, sd)) out[sd] = od;
    ++sd;
  }
  return out;
}

std::unique_ptr<HloInstruction> MakeGather(const Shape& shape, HloInstruction* operand, HloInstruction* indices,
                                           const HloInstruction* like, std::vector<int64_t> slice_sizes) {
  auto g = HloInstruction::Create(O::kGather, shape, {operand, indices});
  HloAttributes& a = g->mutable_attrs();
  a.gather_dnums = like->attrs().gather_dnums;
  a.slice_sizes = std::move(slice_sizes);
  a.indices_are_sorted = like->attrs().indices_are_sorted;
  return g;
}

// Reshapes between default (row-major) layouts keep the bytes in place.
bool ReshapeIsBitcast(const Shape& from, const Shape& to) {
  auto plain = [](const Shape& s) { return !s.has_layout() || s.layout().IsDefault(); };
  return plain(from) && plain(to);
}

void GatherRulesInto(std::vector<Rule>& rules) {
  // gather from a zero-element operand => 0
  rules.push_back(R(O::kGather, "gather of nothing => 0", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    if (Op(i, 0)->shape().element_count() != 0) return nullptr;
    return ctx.ScalarLike(i, 0);
  }));
  // gather from a one-element operand => broadcast
  rules.push_back(R(O::kGather, "gather of one element => broadcast", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* a = Op(i, 0);
    if (a->shape().element_count() != 1) return nullptr;
    if (!a->shape().IsScalar()) a = ctx.Add(HloInstruction::CreateReshape(Shape::Scalar(a->shape().element_type()), a));
    return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), a, {}));
  }));
  // gather from a tiny 1-D operand => chain of selects on index >= k
  rules.push_back(R(O::kGather, "tiny 1-D gather => selects", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    const Shape& os = Op(i, 0)->shape();
    const Shape& is = Op(i, 1)->shape();
    const GatherDimensionNumbers& d = i->attrs().gather_dnums;
    if (os.rank() != 1 || os.dimensions(0) > kVerySmallGatherSize || d.index_vector_dim != is.rank() ||
        d.collapsed_slice_dims.size() != 1) {
      return nullptr;
    }
    auto value = [&](int64_t k) {
      HloInstruction* s = ctx.Add(HloInstruction::CreateSlice(Shape(os.element_type(), {1}), Op(i, 0), {{k, k + 1, 1}}));
      HloInstruction* r = ctx.Add(HloInstruction::CreateReshape(Shape::Scalar(os.element_type()), s));
      return ctx.Add(HloInstruction::CreateBroadcast(i->shape(), r, {}));
    };
    HloInstruction* result = value(0);
    Shape pred = i->shape();
    pred.set_element_type(PrimitiveType::kPred);
    for (int64_t k = 0; k < os.dimensions(0); ++k) {
      HloInstruction* mask = ctx.Add(HloInstruction::CreateCompare(pred, Op(i, 1), ctx.ScalarLike(Op(i, 1), static_cast<double>(k)),
                                                                   ComparisonDirection::kGe));
      result = ctx.Add(HloInstruction::CreateTernary(i->shape(), O::kSelect, mask, value(k), result));
    }
    return result;
  }));
  // gather(pad(A)) padded only in passthrough (or matching batching) dims => pad(gather(A))
  rules.push_back(R(O::kGather, "gather(pad(A)) => pad(gather(A))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* pad = Op(i, 0);
    if (pad->opcode() != O::kPad) return nullptr;
    const GatherDimensionNumbers& d = i->attrs().gather_dnums;
    std::map<int64_t, int64_t> op_to_out = PassthroughOperandToOutputDims(i);
    std::vector<int64_t> padded = PaddedDims(pad);
    HloInstruction* indices = Op(i, 1);
    int64_t padded_batching = 0;
    for (int64_t od : padded) {
      if (op_to_out.count(od)) continue;
      auto it = std::find(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), od);
      if (it == d.operand_batching_dims.end() || indices->opcode() != O::kPad) return nullptr;
      int64_t sd = d.start_indices_batching_dims[it - d.operand_batching_dims.begin()];
      if (!(indices->attrs().padding_config.dimensions[sd] == pad->attrs().padding_config.dimensions[od])) return nullptr;
      ++padded_batching;
    }
    if (padded_batching > 0) {
      if (padded_batching != static_cast<int64_t>(PaddedDims(indices).size())) return nullptr;
      std::map<int64_t, int64_t> sd_to_out = StartIndicesBatchingDimToOutputDim(i);
      for (int64_t od : padded) {
        auto it = std::find(d.operand_batching_dims.begin(), d.operand_batching_dims.end(), od);
        if (it == d.operand_batching_dims.end()) continue;
        int64_t sd = d.start_indices_batching_dims[it - d.operand_batching_dims.begin()];
        op_to_out[od] = sd_to_out.at(sd);
      }
    }
    std::map<int64_t, int64_t> out_to_op;
    for (auto [k, v] : op_to_out) out_to_op[v] = k;
    const Shape& a = pad->operand(0)->shape();
    Shape gshape = i->shape();
    for (int64_t od : padded) gshape.set_dimensions(op_to_out[od], a.dimensions(od));
    std::vector<int64_t> sizes;
    for (int64_t k = 0; k < static_cast<int64_t>(i->attrs().slice_sizes.size()); ++k) {
      bool p = Contains(padded, k) && !Contains(d.operand_batching_dims, k);
      sizes.push_back(p ? a.dimensions(k) : i->attrs().slice_sizes[k]);
    }
    HloInstruction* g = ctx.Add(MakeGather(gshape, Op(pad, 0), padded_batching > 0 ? Op(indices, 0) : indices, i, sizes));
    PaddingConfig config;
    for (int64_t k = 0; k < i->shape().rank(); ++k) {
      PaddingDimension pd;
      auto it = out_to_op.find(k);
      if (it != out_to_op.end() && Contains(padded, it->second)) pd = pad->attrs().padding_config.dimensions[it->second];
      config.dimensions.push_back(pd);
    }
    return ctx.Add(HloInstruction::CreatePad(i->shape(), g, Op(pad, 1), config));
  }));
  // gather(reshape(pad(A))) with the padding in dims the reshape keeps and
  // the gather passes through => pad(gather(reshape(A)))
  rules.push_back(R(O::kGather, "gather(reshape(pad(A))) => pad(gather(reshape(A)))", [](HloInstruction* i, RuleContext& ctx) -> HloInstruction* {
    HloInstruction* reshape = Op(i, 0);
    if (reshape->opcode() != O::kReshape || !ReshapeIsBitcast(reshape->operand(0)->shape(), reshape->shape())) return nullptr;
    HloInstruction* pad = Op(reshape, 0);
    if (pad->opcode() != O::kPad) return nullptr;
    std::map<int64_t, int64_t> unmodified;
    for (auto [f, t] : DimensionsUnmodifiedByReshape(pad->shape(), reshape->shape())) unmodified[f] = t;
    std::map<int64_t, int64_t> op_to_out = PassthroughOperandToOutputDims(i);
    std::vector<int64_t> padded = PaddedDims(pad);
    std::map<int64_t, int64_t> reshape_to_padded;
    for (int64_t pd : padded) {
      if (!unmodified.count(pd)) return nullptr;
      reshape_to_padded[unmodified[pd]] = pd;
    }
    for (auto [rd, pd] : reshape_to_padded) {
      if (!op_to_out.count(rd)) return nullptr;
    }
    const Shape& a = pad->operand(0)->shape();
    Shape rshape = reshape->shape();
    Shape gshape = i->shape();
    for (int64_t pd : padded) {
      int64_t to = unmodified[pd];
      rshape.set_dimensions(to, a.dimensions(pd));
      gshape.set_dimensions(op_to_out[to], a.dimensions(pd));
    }
    HloInstruction* r = ctx.Add(HloInstruction::CreateReshape(Shape(rshape.element_type(), rshape.dimensions()), Op(pad, 0)));
    std::vector<int64_t> sizes;
    for (int64_t k = 0; k < static_cast<int64_t>(i->attrs().slice_sizes.size()); ++k) {
      auto it = reshape_to_padded.find(k);
      sizes.push_back(it != reshape_to_padded.end() ? a.dimensions(it->second) : i->attrs().slice_sizes[k]);
    }
    HloInstruction* g = ctx.Add(MakeGather(gshape, r, Op(i, 1), i, sizes));
    std::map<int64_t, int64_t> out_to_op;
    for (auto [k, v] : op_to_out) out_to_op[v] = k;
    PaddingConfig config;
    for (int64_t k = 0; k < i->shape().rank(); ++k) {
      PaddingDimension pd;
      auto it = out_to_op.find(k);
      if (it != out_to_op.end()) {
        auto jt = reshape_to_padded.find(it->second);
        if (jt != reshape_to_padded.end()) pd = pad->attrs().padding_config.dimensions[jt->second];
      }
      config.dimensions.push_back(pd);
    }
    return ctx.Add(HloInstruction::CreatePad(i->shape(), g, Op(pad, 1), config));
  }));
}

}  // namespace

std::vector<Rule> GatherRules() {
  std::vector<Rule> rules;
  GatherRulesInto(rules);
  return rules;
}

}  // namespace passlab::algsimp
