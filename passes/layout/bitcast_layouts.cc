#include "passes/layout/bitcast_layouts.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace passlab {
namespace {

// The array without its size-1 dimensions: their sizes, and the original
// index of each.
struct NonDegenerate {
  std::vector<int64_t> dims;
  std::vector<int64_t> original;
};

NonDegenerate DropDegenerate(const std::vector<int64_t>& dims) {
  NonDegenerate out;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (dims[d] != 1) {
      out.dims.push_back(dims[d]);
      out.original.push_back(d);
    }
  }
  return out;
}

// `layout` restricted to the dimensions of `kept`, renumbered.
std::vector<int64_t> ProjectMinorToMajor(const Layout& layout, const NonDegenerate& kept) {
  std::vector<int64_t> out;
  for (int64_t d : layout.minor_to_major()) {
    auto it = std::find(kept.original.begin(), kept.original.end(), d);
    if (it != kept.original.end()) out.push_back(it - kept.original.begin());
  }
  return out;
}

// XLA's ShapeUtil::AlignLayouts for arrays without size-1 dimensions: the
// output minor_to_major that makes the reshape `in` (laid out as `in_m2m`)
// -> `out` a bitcast, if one exists. The dimensions split into groups whose
// sizes multiply to the same product on both sides; each group's input
// dimensions must sit together in the input's physical order, logically
// major to minor, and the output's group takes the same place.
std::optional<std::vector<int64_t>> AlignLayouts(const std::vector<int64_t>& in, const std::vector<int64_t>& in_m2m,
                                                 const std::vector<int64_t>& out) {
  const int64_t n = in.size(), m = out.size();
  std::vector<int64_t> group_of(n), group_first_in, group_in_size, group_first_out, group_out_size;
  for (int64_t i = 0, j = 0; i < n || j < m;) {
    if (i >= n || j >= m) return std::nullopt;
    group_first_in.push_back(i);
    group_first_out.push_back(j);
    int64_t pi = in[i++], po = out[j++];
    while (pi != po) {
      if (pi < po) {
        if (i >= n) return std::nullopt;
        pi *= in[i++];
      } else {
        if (j >= m) return std::nullopt;
        po *= out[j++];
      }
    }
    const int64_t g = group_first_in.size() - 1;
    for (int64_t d = group_first_in[g]; d < i; ++d) group_of[d] = g;
    group_in_size.push_back(i - group_first_in[g]);
    group_out_size.push_back(j - group_first_out[g]);
  }
  std::vector<int64_t> physical(in_m2m.rbegin(), in_m2m.rend());
  std::vector<int64_t> out_major_to_minor;
  for (size_t k = 0; k < physical.size();) {
    const int64_t g = group_of[physical[k]];
    for (int64_t t = 0; t < group_in_size[g]; ++t) {
      if (k + t >= physical.size() || physical[k + t] != group_first_in[g] + t) return std::nullopt;
    }
    for (int64_t t = 0; t < group_out_size[g]; ++t) out_major_to_minor.push_back(group_first_out[g] + t);
    k += group_in_size[g];
  }
  return std::vector<int64_t>(out_major_to_minor.rbegin(), out_major_to_minor.rend());
}

bool HasZeroSizedDimension(const std::vector<int64_t>& dims) {
  return std::find(dims.begin(), dims.end(), 0) != dims.end();
}

}  // namespace

// Whether reshaping `in` laid out as `in_layout` into `out` laid out as
// `out_layout` keeps every element where it is.
bool ReshapeIsBitcast(const std::vector<int64_t>& in, const Layout& in_layout, const std::vector<int64_t>& out,
                      const Layout& out_layout) {
  NonDegenerate simple_in = DropDegenerate(in), simple_out = DropDegenerate(out);
  if (simple_in.dims.size() <= 1 && simple_out.dims.size() <= 1) return true;
  std::optional<std::vector<int64_t>> aligned =
      AlignLayouts(simple_in.dims, ProjectMinorToMajor(in_layout, simple_in), simple_out.dims);
  return aligned.has_value() && *aligned == ProjectMinorToMajor(out_layout, simple_out);
}

// XLA:GPU's reshape layout choice (AlignLayoutsGPU): the layout of `out`
// that makes the reshape from `in` (laid out as `in_layout`) a bitcast,
// keeping the size-1 dimensions where `template_layout` has them relative
// to the others, so that the fewest layouts change. Nothing when no layout
// makes it a bitcast or both sides are effectively vectors.
std::optional<Layout> ReshapeBitcastLayout(const std::vector<int64_t>& in, const Layout& in_layout,
                                           const std::vector<int64_t>& out, const Layout& template_layout) {
  if (HasZeroSizedDimension(in) || HasZeroSizedDimension(out)) return std::nullopt;
  NonDegenerate simple_in = DropDegenerate(in), simple_out = DropDegenerate(out);
  if (simple_in.dims.size() <= 1 && simple_out.dims.size() <= 1) return std::nullopt;
  std::optional<std::vector<int64_t>> aligned =
      AlignLayouts(simple_in.dims, ProjectMinorToMajor(in_layout, simple_in), simple_out.dims);
  if (!aligned.has_value()) return std::nullopt;
  // Size-1 dimensions minor to every other one, and those following each
  // non-degenerate dimension, as in the template.
  std::vector<int64_t> initial_ones;
  absl::flat_hash_map<int64_t, std::vector<int64_t>> follow;
  int64_t last = -1;
  for (int64_t d : template_layout.minor_to_major()) {
    if (out[d] != 1) {
      last = d;
    } else if (last == -1) {
      initial_ones.push_back(d);
    } else {
      follow[last].push_back(d);
    }
  }
  std::vector<int64_t> m2m = initial_ones;
  for (int64_t simple_d : *aligned) {
    const int64_t d = simple_out.original[simple_d];
    m2m.push_back(d);
    if (auto it = follow.find(d); it != follow.end()) m2m.insert(m2m.end(), it->second.begin(), it->second.end());
  }
  return Layout(std::move(m2m));
}

// The transpose's output layout that makes it a bitcast of its operand laid
// out as `operand_layout` (output dimension j is operand dimension
// dims[j]), and the operand layout for a given output layout.
Layout TransposeOutputLayout(const HloInstruction& transpose, const Layout& operand_layout) {
  const std::vector<int64_t>& dims = transpose.dimensions();
  std::vector<int64_t> inverse(dims.size());
  for (size_t j = 0; j < dims.size(); ++j) inverse[dims[j]] = j;
  std::vector<int64_t> m2m;
  for (int64_t d : operand_layout.minor_to_major()) m2m.push_back(inverse[d]);
  return Layout(std::move(m2m));
}

Layout TransposeOperandLayout(const HloInstruction& transpose, const Layout& output_layout) {
  std::vector<int64_t> m2m;
  for (int64_t d : output_layout.minor_to_major()) m2m.push_back(transpose.dimensions()[d]);
  return Layout(std::move(m2m));
}

// `layout` with dimension `dim` moved to the most major place (XLA's
// ShapeUtil::MoveDimToMajor).
Layout MoveDimToMajor(const Layout& layout, int64_t dim) {
  Layout out = layout;
  std::vector<int64_t>& m2m = out.mutable_minor_to_major();
  m2m.erase(std::remove(m2m.begin(), m2m.end(), dim), m2m.end());
  m2m.push_back(dim);
  return out;
}

}  // namespace passlab
