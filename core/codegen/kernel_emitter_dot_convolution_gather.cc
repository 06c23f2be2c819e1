// The index-mapping ops of the elemental emitter (see kernel_emitter.h):
// dot and direct convolution (a loop over the contracted elements per output
// element) and gather in XLA's general form.
#include "core/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace passlab {
namespace codegen_internal {

absl::StatusOr<Value> KernelEmitter::EmitDot(const HloInstruction* h, const Index& idx) {
  const DotDimensionNumbers& dn = h->attrs().dot_dnums;
  const Shape& ls = h->operand(0)->shape();
  const Shape& rs = h->operand(1)->shape();
  PrimitiveType t = h->shape().element_type();
  mlir::Type ct = ComputeType(t);
  Value zero = IsFloatingPointType(t) ? FConst(ct, 0) : IConst(ct, 0);
  std::vector<int64_t> bounds;
  for (int64_t d : dn.lhs_contracting_dimensions) bounds.push_back(ls.dimensions(d));
  auto free_dims = [](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        f.push_back(d);
      }
    }
    return f;
  };
  std::vector<int64_t> lfree = free_dims(ls, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  std::vector<int64_t> rfree = free_dims(rs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  ASSIGN_OR_RETURN(std::vector<Value> r, EmitLoopNest(
      bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
        Index li(ls.rank()), ri(rs.rank());
        size_t pos = 0;
        for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i, ++pos) {
          li[dn.lhs_batch_dimensions[i]] = idx[pos];
          ri[dn.rhs_batch_dimensions[i]] = idx[pos];
        }
        for (int64_t d : lfree) li[d] = idx[pos++];
        for (int64_t d : rfree) ri[d] = idx[pos++];
        for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i) {
          li[dn.lhs_contracting_dimensions[i]] = ivs[i];
          ri[dn.rhs_contracting_dimensions[i]] = ivs[i];
        }
        ASSIGN_OR_RETURN(Value a, EmitScalar(h->operand(0), li));
        ASSIGN_OR_RETURN(Value bv, EmitScalar(h->operand(1), ri));
        absl::StatusOr<Value> ac = Convert(a, h->operand(0)->shape().element_type(), t);
        absl::StatusOr<Value> bc = Convert(bv, h->operand(1)->shape().element_type(), t);
        if (!ac.ok()) return ac.status();
        if (!bc.ok()) return bc.status();
        if (t == PrimitiveType::kPred) {
          return std::vector<Value>{mlir::arith::OrIOp::create(b_, loc_, acc[0], And(*ac, *bc))};
        }
        if (IsFloatingPointType(t)) {
          Value p = mlir::arith::MulFOp::create(b_, loc_, *ac, *bc);
          return std::vector<Value>{mlir::arith::AddFOp::create(b_, loc_, acc[0], p)};
        }
        Value p = mlir::arith::MulIOp::create(b_, loc_, *ac, *bc);
        return std::vector<Value>{mlir::arith::AddIOp::create(b_, loc_, acc[0], p)};
      }));
  return Round(r[0], t);
}

// Direct convolution: each output element sums over the window taps and
// the input features of its group (feature and batch groups as the
// evaluator defines them).
absl::StatusOr<Value> KernelEmitter::EmitConvolution(const HloInstruction* h, const Index& idx) {
  const ConvolutionDimensionNumbers& d = *h->attrs().conv_dnums;
  const Shape& ls = h->operand(0)->shape();
  const Shape& rs = h->operand(1)->shape();
  const Window& w = h->window();
  PrimitiveType t = h->shape().element_type();
  mlir::Type ct = ComputeType(t);
  int64_t fgc = h->attrs().feature_group_count, bgc = h->attrs().batch_group_count;
  int64_t I = rs.dimensions(d.kernel_input_feature_dimension);
  int64_t O = rs.dimensions(d.kernel_output_feature_dimension);
  int64_t n_out = h->shape().dimensions(d.output_batch_dimension);
  int64_t og = std::max<int64_t>(1, O / (fgc * bgc));
  size_t spatial = d.input_spatial_dimensions.size();
  Value o = idx[d.output_feature_dimension];
  Value n = idx[d.output_batch_dimension];
  Value g = Div(o, og);
  Value in_batch = bgc > 1 ? Add(Mul(g, n_out), n) : n;
  Value feature_base = fgc > 1 ? Mul(g, I) : C(0);
  Value zero = IsFloatingPointType(t) ? FConst(ct, 0) : IConst(ct, 0);
  std::vector<int64_t> bounds;
  for (size_t s = 0; s < spatial; ++s) bounds.push_back(rs.dimensions(d.kernel_spatial_dimensions[s]));
  bounds.push_back(I);
  ASSIGN_OR_RETURN(std::vector<Value> r, EmitLoopNest(
      bounds, {zero}, [&](const Index& ivs, const std::vector<Value>& acc) -> absl::StatusOr<std::vector<Value>> {
        Index li(ls.rank()), ri(rs.rank());
        Value c = ivs[spatial];
        li[d.input_batch_dimension] = in_batch;
        li[d.input_feature_dimension] = Add(feature_base, c);
        ri[d.kernel_input_feature_dimension] = c;
        ri[d.kernel_output_feature_dimension] = o;
        Value in_bounds = mlir::arith::ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
        for (size_t s = 0; s < spatial; ++s) {
          const WindowDimension& wd = w.dimensions[s];
          Value k = ivs[s];
          Value pos = Sub(Add(Mul(idx[d.output_spatial_dimensions[s]], wd.stride), Mul(k, wd.window_dilation)),
                          C(wd.padding_low));
          Value ok = Cmp(mlir::arith::CmpIPredicate::sge, pos, C(0));
          Value q = Select(ok, pos, C(0));
          if (wd.base_dilation > 1) {
            ok = And(ok, Cmp(mlir::arith::CmpIPredicate::eq, Rem(q, wd.base_dilation), C(0)));
            q = Div(q, wd.base_dilation);
          }
          ok = And(ok, Cmp(mlir::arith::CmpIPredicate::slt, q, C(ls.dimensions(d.input_spatial_dimensions[s]))));
          in_bounds = And(in_bounds, ok);
          li[d.input_spatial_dimensions[s]] = q;
          ri[d.kernel_spatial_dimensions[s]] = wd.window_reversal ? Sub(C(bounds[s] - 1), k) : k;
        }
        ASSIGN_OR_RETURN(Value next, EmitIf(
            in_bounds, ct,
            [&]() -> absl::StatusOr<Value> {
              ASSIGN_OR_RETURN(Value a, EmitScalar(h->operand(0), li));
              ASSIGN_OR_RETURN(Value bv, EmitScalar(h->operand(1), ri));
              absl::StatusOr<Value> ac = Convert(a, ls.element_type(), t);
              absl::StatusOr<Value> bc = Convert(bv, rs.element_type(), t);
              if (!ac.ok()) return ac.status();
              if (!bc.ok()) return bc.status();
              if (IsFloatingPointType(t)) {
                return Value(mlir::arith::AddFOp::create(b_, loc_, acc[0], mlir::arith::MulFOp::create(b_, loc_, *ac, *bc)));
              }
              return Value(mlir::arith::AddIOp::create(b_, loc_, acc[0], mlir::arith::MulIOp::create(b_, loc_, *ac, *bc)));
            },
            [&]() -> absl::StatusOr<Value> { return acc[0]; }));
        return std::vector<Value>{next};
      }));
  return Round(r[0], t);
}

// Gather in XLA's general form: batch dims of the output walk the start
// indices, offset dims walk the slice, starts are clamped so the slice
// fits (operand batching dims follow their indices dims).
absl::StatusOr<Value> KernelEmitter::EmitGather(const HloInstruction* h, const Index& idx) {
  const GatherDimensionNumbers& g = h->attrs().gather_dnums;
  const Shape& os = h->operand(0)->shape();
  const Shape& is = h->operand(1)->shape();
  const Shape& out = h->shape();
  auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<int64_t> batch_out;
  for (int64_t d = 0; d < out.rank(); ++d) {
    if (!contains(g.offset_dims, d)) batch_out.push_back(d);
  }
  Index ind(is.rank());
  size_t b = 0;
  for (int64_t d = 0; d < is.rank(); ++d) {
    if (d == g.index_vector_dim) continue;
    ind[d] = idx[batch_out[b++]];
  }
  Index in(os.rank());
  size_t off = 0;
  for (int64_t d = 0; d < os.rank(); ++d) {
    bool no_offset = contains(g.collapsed_slice_dims, d) || contains(g.operand_batching_dims, d);
    in[d] = no_offset ? C(0) : idx[g.offset_dims[off++]];
  }
  for (size_t k = 0; k < g.start_index_map.size(); ++k) {
    int64_t d = g.start_index_map[k];
    Index at = ind;
    if (g.index_vector_dim < is.rank()) at[g.index_vector_dim] = C(static_cast<int64_t>(k));
    ASSIGN_OR_RETURN(Value v, EmitScalar(h->operand(1), at));
    Value i = IsSignedIntegralType(is.element_type())
                  ? Value(mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), v))
                  : Value(mlir::arith::IndexCastUIOp::create(b_, loc_, b_.getIndexType(), v));
    Value start = mlir::arith::MaxSIOp::create(
        b_, loc_, C(0), Min(i, C(os.dimensions(d) - h->attrs().slice_sizes[d])));
    in[d] = Add(in[d], start);
  }
  for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
    in[g.operand_batching_dims[i]] = ind[g.start_indices_batching_dims[i]];
  }
  return EmitScalar(h->operand(0), in);
}

}  // namespace codegen_internal
}  // namespace passlab
