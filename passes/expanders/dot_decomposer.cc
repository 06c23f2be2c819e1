#include "passes/expanders/dot_decomposer.h"

#include <algorithm>
#include <numeric>

#include "core/ir/hlo_computation.h"

namespace passlab {
namespace {

std::vector<int64_t> Iota(int64_t n, int64_t start = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
  }
  return out;
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dimensions(d);
  return p;
}

// Transposes `x` to `order` and reshapes to `batch dims..., a, b`.
HloInstruction* Canonicalize(HloComputation* c, HloInstruction* x, const std::vector<int64_t>& order,
                             const std::vector<int64_t>& batch, int64_t a, int64_t b) {
  const Shape& s = x->shape();
  std::vector<int64_t> tdims;
  for (int64_t o : order) tdims.push_back(s.dimensions(o));
  HloInstruction* t = x;
  if (order != Iota(s.rank())) {
    t = c->AddInstruction(HloInstruction::CreateTranspose(Shape(s.element_type(), tdims), x, order));
  }
  std::vector<int64_t> rdims;
  for (int64_t d : batch) rdims.push_back(s.dimensions(d));
  rdims.push_back(a);
  rdims.push_back(b);
  if (rdims == tdims) return t;
  return c->AddInstruction(HloInstruction::CreateReshape(Shape(s.element_type(), rdims), t));
}

}  // namespace

bool IsCanonicalDot(const HloInstruction& dot) {
  const DotDimensionNumbers& d = dot.attrs().dot_dnums;
  int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  return dot.operand(0)->shape().rank() == nb + 2 && dot.operand(1)->shape().rank() == nb + 2 &&
         d.lhs_batch_dimensions == Iota(nb) && d.rhs_batch_dimensions == Iota(nb) &&
         d.lhs_contracting_dimensions == std::vector<int64_t>{nb + 1} &&
         d.rhs_contracting_dimensions == std::vector<int64_t>{nb};
}

bool DotDecomposer::InstructionMatchesPattern(HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kDot && inst->attrs().sparsity.empty() && !IsCanonicalDot(*inst) &&
         !IsComplexType(inst->shape().element_type());
}

absl::StatusOr<HloInstruction*> DotDecomposer::ExpandInstruction(HloInstruction* dot) {
  HloComputation* c = dot->parent();
  const DotDimensionNumbers& d = dot->attrs().dot_dnums;
  HloInstruction* lhs = dot->mutable_operand(0);
  HloInstruction* rhs = dot->mutable_operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  std::vector<int64_t> lf = FreeDims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
  std::vector<int64_t> rf = FreeDims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
  int64_t m = Product(ls, lf), k = Product(ls, d.lhs_contracting_dimensions), n = Product(rs, rf);
  std::vector<int64_t> lorder = d.lhs_batch_dimensions;
  lorder.insert(lorder.end(), lf.begin(), lf.end());
  lorder.insert(lorder.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  std::vector<int64_t> rorder = d.rhs_batch_dimensions;
  rorder.insert(rorder.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  rorder.insert(rorder.end(), rf.begin(), rf.end());
  HloInstruction* l = Canonicalize(c, lhs, lorder, d.lhs_batch_dimensions, m, k);
  HloInstruction* r = Canonicalize(c, rhs, rorder, d.rhs_batch_dimensions, k, n);
  int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  DotDimensionNumbers canonical;
  canonical.lhs_batch_dimensions = Iota(nb);
  canonical.rhs_batch_dimensions = Iota(nb);
  canonical.lhs_contracting_dimensions = {nb + 1};
  canonical.rhs_contracting_dimensions = {nb};
  std::vector<int64_t> out_dims;
  for (int64_t b : d.lhs_batch_dimensions) out_dims.push_back(ls.dimensions(b));
  out_dims.push_back(m);
  out_dims.push_back(n);
  HloInstruction* cdot = c->AddInstruction(HloInstruction::CreateDot(
      Shape(dot->shape().element_type(), out_dims), l, r, canonical, dot->attrs().precision_config));
  cdot->set_metadata(dot->metadata());
  if (cdot->shape().Compatible(dot->shape())) return cdot;
  return c->AddInstruction(HloInstruction::CreateReshape(dot->shape(), cdot));
}

}  // namespace passlab
