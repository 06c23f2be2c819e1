// Indexing maps (seed 000): for an instruction's output index, which element
// of an operand it reads — an affine map from output dims (d0, d1, ...) and
// symbols (s0, ... : runtime values or reduction/window loops) to the
// operand's index, plus the domain: a range per dim and symbol and extra
// constraints (e.g. pad's "(d0 - 1) mod 2 == 0").
//
// Example: transpose [20,40] -> [40,20] reads operand (d0, d1) -> (d1, d0)
// with d0 in [0, 39], d1 in [0, 19]. Maps compose (consumer after producer)
// so that a fusion's root index can be traced to each parameter, and compare
// structurally after simplification (the partitioner's "indexes it the same
// way"). Own small representation, no MLIR.
#ifndef PASSLAB_CORE_CODEGEN_INDEXING_MAP_H_
#define PASSLAB_CORE_CODEGEN_INDEXING_MAP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace passlab {

class HloInstruction;

// An affine expression over dims and symbols, kept simplified (constants
// folded, x*1 and x+0 dropped, floordiv/mod by 1 removed).
class AffineExpr {
 public:
  enum class Kind { kConstant, kDim, kSymbol, kAdd, kMul, kFloorDiv, kMod };

  static AffineExpr Constant(int64_t v);
  static AffineExpr Dim(int64_t i);
  static AffineExpr Symbol(int64_t i);

  Kind kind() const { return kind_; }
  int64_t value() const { return value_; }  // constant value, or dim/symbol id
  const AffineExpr& lhs() const { return *lhs_; }
  const AffineExpr& rhs() const { return *rhs_; }

  AffineExpr operator+(const AffineExpr& o) const;
  AffineExpr operator-(const AffineExpr& o) const;
  AffineExpr operator*(int64_t k) const;
  AffineExpr FloorDiv(int64_t k) const;
  AffineExpr Mod(int64_t k) const;

  // Replaces dims and symbols by expressions.
  AffineExpr Substitute(const std::vector<AffineExpr>& dims, const std::vector<AffineExpr>& symbols) const;
  // Evaluates at given dim and symbol values.
  int64_t Evaluate(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const;

  std::string ToString() const;  // "d0 * 3 + s1"
  bool operator==(const AffineExpr& o) const;
  bool operator!=(const AffineExpr& o) const { return !(*this == o); }

 private:
  AffineExpr(Kind kind, int64_t value) : kind_(kind), value_(value) {}
  static AffineExpr Binary(Kind kind, const AffineExpr& a, const AffineExpr& b);
  Kind kind_;
  int64_t value_ = 0;
  std::shared_ptr<const AffineExpr> lhs_, rhs_;
};

struct Interval {
  int64_t lower = 0;
  int64_t upper = 0;  // inclusive
  bool operator==(const Interval&) const = default;
};

struct IndexingConstraint {
  AffineExpr expr;
  Interval range;
  bool operator==(const IndexingConstraint&) const = default;
};

class IndexingMap {
 public:
  IndexingMap(std::vector<Interval> dim_ranges, std::vector<Interval> symbol_ranges,
              std::vector<AffineExpr> results, std::vector<IndexingConstraint> constraints = {});
  // The identity on a shape's dims.
  static IndexingMap Identity(const std::vector<int64_t>& dims);

  const std::vector<AffineExpr>& results() const { return results_; }
  const std::vector<Interval>& dim_ranges() const { return dim_ranges_; }
  const std::vector<Interval>& symbol_ranges() const { return symbol_ranges_; }
  const std::vector<IndexingConstraint>& constraints() const { return constraints_; }
  int64_t num_dims() const { return static_cast<int64_t>(dim_ranges_.size()); }
  int64_t num_symbols() const { return static_cast<int64_t>(symbol_ranges_.size()); }

  bool IsIdentity() const;
  // Whether (dims, symbols) is in the domain (ranges and constraints).
  bool Contains(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const;
  std::vector<int64_t> Apply(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const;

  // "(d0, d1)[s0] -> (d1, d0 + s0), domain: d0 in [0, 39], ..., s0 in [0, 3]"
  std::string ToString() const;
  bool operator==(const IndexingMap& o) const = default;

 private:
  std::vector<Interval> dim_ranges_;
  std::vector<Interval> symbol_ranges_;
  std::vector<AffineExpr> results_;
  std::vector<IndexingConstraint> constraints_;
};

// `consumer` maps X's index to Y's, `producer` maps Y's index to Z's; the
// result maps X's index to Z's (symbols of both, consumer's first).
IndexingMap ComposeIndexingMaps(const IndexingMap& consumer, const IndexingMap& producer);

// The map from `instruction`'s output index to operand `operand`'s index.
// Covers elementwise ops, broadcast, transpose, reshape, bitcast, slice,
// reverse, pad, concatenate, iota (no operands), dynamic-slice,
// dynamic-update-slice, reduce, and gather in canonical form (indices
// [N, K] with index_vector_dim 1, offsets after the batch dim, no
// collapsed dims beyond start_index_map).
absl::StatusOr<IndexingMap> ComputeOutputToInputIndexing(const HloInstruction& instruction, int64_t operand);

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_INDEXING_MAP_H_
