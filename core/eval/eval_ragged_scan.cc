// The evaluator's ragged-dot, scaled-dot and scan: each written from the op's
// definition (XLA's operation semantics and shape inference), element by
// element, independently of the expanders that lower them (RaggedDotRewriter,
// ScaledDotRewriter, ScanExpander), so that comparing a module before and
// after an expander checks the expander.
#include <algorithm>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "core/eval/eval_internal.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

// The operand's dims that are neither batch nor contracting, in order.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting,
                              const std::vector<int64_t>& also_excluded = {}) {
  std::vector<int64_t> free;
  for (int64_t i = 0; i < rank; ++i) {
    if (!absl::c_linear_search(batch, i) && !absl::c_linear_search(contracting, i) && !absl::c_linear_search(also_excluded, i)) free.push_back(i);
  }
  return free;
}

// Element `linear` of an array operand, widened to double (complex is
// rejected by the caller).
double At(const Literal& l, const Index& idx) { return l.GetDouble(l.LinearIndex(idx)); }

}  // namespace

// ragged-dot(lhs, rhs, group_sizes): the lhs ragged dimension is split into
// consecutive groups of group_sizes[..., g] rows. Three modes (XLA's
// InferRaggedDotOpShape):
//   non-contracting: [b,m,k] x [g,b,k,n] -> [b,m,n], row m uses rhs group g(m)
//                    (rows past the last group give 0);
//   contracting:     [b,m,k] x [b,k,n] -> [g,b,m,n], group g sums k in its range;
//   batch:           [b,m,k] x [b,k,n] -> [b,m,n], a dot per batch element.
// group_sizes is [prefix..., g] where prefix is the lhs batch dims (and, for
// the first two modes, the lhs free/contracting dims before the ragged one),
// or just [g], broadcast over the prefix.
absl::StatusOr<Literal> EvalRaggedDot(const HloInstruction& inst, Operands ops) {
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const Literal& sizes = *ops[2];
  if (IsComplexType(inst.shape().element_type()) || IsComplexType(lhs.shape().element_type())) {
    return absl::UnimplementedError("ragged-dot of complex numbers is not evaluated");
  }
  const HloAttributes& a = inst.attrs();
  const DotDimensionNumbers& d = a.dot_dnums;
  if (a.lhs_ragged_dims.size() != 1) {
    return absl::InvalidArgumentError("ragged-dot needs exactly one lhs ragged dimension");
  }
  const int64_t ragged = a.lhs_ragged_dims[0];
  const int64_t lhs_rank = lhs.shape().rank(), rhs_rank = rhs.shape().rank();
  enum { kNonContracting, kContracting, kBatch } mode =
      absl::c_linear_search(d.lhs_batch_dimensions, ragged)         ? kBatch
      : absl::c_linear_search(d.lhs_contracting_dimensions, ragged) ? kContracting
                                                       : kNonContracting;
  const std::vector<int64_t> lhs_free = FreeDims(lhs_rank, d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free =
      FreeDims(rhs_rank, d.rhs_batch_dimensions, d.rhs_contracting_dimensions, a.rhs_group_dims);
  const int64_t num_groups = sizes.shape().dimensions().back();

  // The group_sizes prefix: which lhs dims index it (before the ragged one).
  std::vector<int64_t> prefix = d.lhs_batch_dimensions;
  if (mode == kBatch) {
    prefix.resize(std::find(d.lhs_batch_dimensions.begin(), d.lhs_batch_dimensions.end(), ragged) -
                  d.lhs_batch_dimensions.begin());
  } else {
    const std::vector<int64_t>& kind = mode == kContracting ? d.lhs_contracting_dimensions : lhs_free;
    for (int64_t dim : kind) {
      if (dim == ragged) break;
      prefix.push_back(dim);
    }
  }
  const bool broadcast_sizes = sizes.shape().rank() == 1;
  // [start, end) of group g along the ragged dim, for the lhs index `li`.
  auto group_range = [&](const Index& li, int64_t g) -> std::pair<int64_t, int64_t> {
    Index si;
    if (!broadcast_sizes) {
      for (int64_t dim : prefix) si.push_back(li[dim]);
    }
    si.push_back(0);
    int64_t start = 0;
    for (int64_t j = 0; j < g; ++j) {
      si.back() = j;
      start += sizes.GetInt(sizes.LinearIndex(si));
    }
    si.back() = g;
    return {start, start + sizes.GetInt(sizes.LinearIndex(si))};
  };

  const Shape& os = inst.shape();
  Literal out(os);
  std::vector<int64_t> k_dims;
  for (int64_t c : d.lhs_contracting_dimensions) k_dims.push_back(lhs.shape().dimensions(c));
  Index li(lhs_rank), ri(rhs_rank);
  ForEachIndex(os.dimensions(), [&](const Index& oi, int64_t linear) {
    // Output dims: [g (contracting mode)], batch..., lhs free..., rhs free...
    size_t p = 0;
    int64_t group = -1;
    if (mode == kContracting) group = oi[p++];
    for (size_t b = 0; b < d.lhs_batch_dimensions.size(); ++b, ++p) {
      li[d.lhs_batch_dimensions[b]] = oi[p];
      ri[d.rhs_batch_dimensions[b]] = oi[p];
    }
    for (int64_t dim : lhs_free) li[dim] = oi[p++];
    for (int64_t dim : rhs_free) ri[dim] = oi[p++];
    // The contracting dims start at 0 for the group lookups below.
    for (int64_t c : d.lhs_contracting_dimensions) li[c] = 0;
    int64_t lo = 0, hi = 0;  // contracting mode: the group's range of the ragged k
    if (mode == kNonContracting) {
      int64_t row = li[ragged];
      for (int64_t g = 0; g < num_groups; ++g) {
        auto [s, e] = group_range(li, g);
        if (row >= s && row < e) group = g;
      }
      if (group < 0) {  // past the last group
        out.SetDouble(linear, 0);
        return;
      }
      ri[a.rhs_group_dims[0]] = group;
    } else if (mode == kContracting) {
      std::tie(lo, hi) = group_range(li, group);
    }
    double acc = 0;
    ForEachIndex(k_dims, [&](const Index& ki, int64_t) {
      for (size_t c = 0; c < ki.size(); ++c) {
        li[d.lhs_contracting_dimensions[c]] = ki[c];
        ri[d.rhs_contracting_dimensions[c]] = ki[c];
      }
      if (mode == kContracting && (li[ragged] < lo || li[ragged] >= hi)) return;
      acc += At(lhs, li) * At(rhs, ri);
    });
    if (IsIntegralType(os.element_type())) {
      out.SetInt(linear, static_cast<int64_t>(acc));
    } else {
      out.SetDouble(linear, acc);
    }
  });
  return out;
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale): each operand is multiplied by
// its scale, one scale element per block of operand_dim / scale_dim
// consecutive elements in every dim (a scalar scale leaves the operand as
// it is, as XLA's ScaledDotRewriter and verifier treat it), then a dot with
// the instruction's dimension numbers.
absl::StatusOr<Literal> EvalScaledDot(const HloInstruction& inst, Operands ops, int threads) {
  auto dequantize = [](const Literal& x, const Literal& scale) -> absl::StatusOr<Literal> {
    Literal out(Shape(PrimitiveType::kF64, x.shape().dimensions()));
    const bool scalar = scale.shape().rank() == 0;
    if (!scalar && scale.shape().rank() != x.shape().rank()) {
      return absl::InvalidArgumentError("a scale of scaled-dot must be a scalar or have its operand's rank");
    }
    std::vector<int64_t> block(x.shape().rank(), 1);
    for (int64_t i = 0; !scalar && i < x.shape().rank(); ++i) {
      int64_t sd = scale.shape().dimensions(i);
      if (sd == 0 || x.shape().dimensions(i) % sd != 0) {
        return absl::InvalidArgumentError(StrCat("scaled-dot: operand dimension ", i, " (",
                                                 x.shape().dimensions(i), ") is not a multiple of the scale's (",
                                                 sd, ")"));
      }
      block[i] = x.shape().dimensions(i) / sd;
    }
    Index si(x.shape().rank());
    ForEachIndex(x.shape().dimensions(), [&](const Index& xi, int64_t linear) {
      double v = x.GetDouble(linear);
      if (!scalar) {
        for (size_t i = 0; i < xi.size(); ++i) si[i] = xi[i] / block[i];
        v *= scale.GetDouble(scale.LinearIndex(si));
      }
      out.SetDouble(linear, v);
    });
    return out;
  };
  if (IsComplexType(ops[0]->shape().element_type()) || IsComplexType(ops[1]->shape().element_type())) {
    return absl::UnimplementedError("scaled-dot of complex numbers is not evaluated");
  }
  ASSIGN_OR_RETURN(Literal lhs, dequantize(*ops[0], *ops[2]));
  ASSIGN_OR_RETURN(Literal rhs, dequantize(*ops[1], *ops[3]));
  const Literal* dot_ops[] = {&lhs, &rhs};
  return EvalDot(inst, dot_ops, threads);
}

// scan(inputs..., inits...), to_apply(input slices..., carries...) ->
// (outputs..., new carries...): step i (or n-1-i when reversed) calls
// to_apply on the inputs' slices at i along the scan dimension and the
// carries; the outputs are stacked along the scan dimension and the last
// carries are returned after them (XLA's HloScanInstruction, ScanExpander).
absl::StatusOr<Literal> EvalScan(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  const HloAttributes& a = inst.attrs();
  const HloComputation* body = inst.to_apply();
  if (body == nullptr) return absl::InvalidArgumentError("scan without to_apply");
  if (inst.dimensions().size() != 1) return absl::InvalidArgumentError("scan needs exactly one dimension");
  const int64_t dim = inst.dimensions(0);
  const int64_t num_carries = a.num_carries;
  const int64_t num_inputs = static_cast<int64_t>(ops.size()) - num_carries;
  const Shape& shape = inst.shape();
  const int64_t num_results = shape.IsTuple() ? shape.tuple_shapes_size() : 1;
  const int64_t num_outputs = num_results - num_carries;
  auto result_shape = [&](int64_t i) -> const Shape& { return shape.IsTuple() ? shape.tuple_shapes(i) : shape; };
  int64_t n = 0;
  if (num_inputs > 0) {
    n = ops[0]->shape().dimensions(dim);
  } else if (num_outputs > 0) {
    n = result_shape(0).dimensions(dim);
  } else {
    return absl::InvalidArgumentError("scan has no inputs and no outputs: its length is unknown");
  }

  std::vector<Literal> carries;
  for (int64_t c = 0; c < num_carries; ++c) carries.push_back(*ops[num_inputs + c]);
  std::vector<Literal> outputs;
  for (int64_t o = 0; o < num_outputs; ++o) outputs.emplace_back(result_shape(o));

  for (int64_t step = 0; step < n; ++step) {
    const int64_t at = a.is_reverse ? n - 1 - step : step;
    std::vector<Literal> slices;
    for (int64_t i = 0; i < num_inputs; ++i) {
      const Literal& in = *ops[i];
      std::vector<int64_t> dims = in.shape().dimensions();
      dims.erase(dims.begin() + dim);
      Literal slice(Shape(in.shape().element_type(), dims));
      ForEachIndex(dims, [&](const Index& si, int64_t linear) {
        Index ii = si;
        ii.insert(ii.begin() + dim, at);
        CopyElement(slice, linear, in, in.LinearIndex(ii));
      });
      slices.push_back(std::move(slice));
    }
    std::vector<const Literal*> args;
    for (const Literal& s : slices) args.push_back(&s);
    for (const Literal& c : carries) args.push_back(&c);
    ASSIGN_OR_RETURN(Literal r, ctx.Call(*body, args));
    auto part = [&](int64_t i) -> const Literal& { return r.shape().IsTuple() ? r.tuple_elements()[i] : r; };
    for (int64_t o = 0; o < num_outputs; ++o) {
      const Literal& elem = part(o);
      Literal& dst = outputs[o];
      ForEachIndex(elem.shape().dimensions(), [&](const Index& ei, int64_t linear) {
        Index oi = ei;
        oi.insert(oi.begin() + dim, at);
        CopyElement(dst, dst.LinearIndex(oi), elem, linear);
      });
    }
    for (int64_t c = 0; c < num_carries; ++c) carries[c] = part(num_outputs + c);
  }
  if (!shape.IsTuple()) return num_outputs == 1 ? std::move(outputs[0]) : std::move(carries[0]);
  Literal out(shape);
  for (int64_t o = 0; o < num_outputs; ++o) out.tuple_elements()[o] = std::move(outputs[o]);
  for (int64_t c = 0; c < num_carries; ++c) out.tuple_elements()[num_outputs + c] = std::move(carries[c]);
  return out;
}

}  // namespace passlab::eval
