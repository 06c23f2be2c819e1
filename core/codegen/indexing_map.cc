#include "core/codegen/indexing_map.h"

#include <algorithm>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

int64_t FloorDivInt(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }
int64_t ModInt(int64_t a, int64_t b) {
  int64_t r = a % b;
  return r < 0 ? r + b : r;
}

}  // namespace

AffineExpr AffineExpr::Constant(int64_t v) { return AffineExpr(Kind::kConstant, v); }
AffineExpr AffineExpr::Dim(int64_t i) { return AffineExpr(Kind::kDim, i); }
AffineExpr AffineExpr::Symbol(int64_t i) { return AffineExpr(Kind::kSymbol, i); }

AffineExpr AffineExpr::Binary(Kind kind, const AffineExpr& a, const AffineExpr& b) {
  AffineExpr e(kind, 0);
  e.lhs_ = std::make_shared<const AffineExpr>(a);
  e.rhs_ = std::make_shared<const AffineExpr>(b);
  return e;
}

AffineExpr AffineExpr::operator+(const AffineExpr& o) const {
  // c1 + c2 => c; x + 0 => x; constants go right; (x + c1) + c2 => x + (c1 + c2).
  if (kind_ == Kind::kConstant && o.kind_ == Kind::kConstant) return Constant(value_ + o.value_);
  if (o.kind_ == Kind::kConstant && o.value_ == 0) return *this;
  if (kind_ == Kind::kConstant && value_ == 0) return o;
  if (kind_ == Kind::kConstant) return o + *this;
  if (o.kind_ == Kind::kConstant && kind_ == Kind::kAdd && rhs_->kind_ == Kind::kConstant) {
    return *lhs_ + Constant(rhs_->value_ + o.value_);
  }
  return Binary(Kind::kAdd, *this, o);
}

AffineExpr AffineExpr::operator-(const AffineExpr& o) const { return *this + o * -1; }

AffineExpr AffineExpr::operator*(int64_t k) const {
  // x * 1 => x; x * 0 => 0; (x * a) * b => x * (a * b); (x + y) * k distributes.
  if (k == 1) return *this;
  if (k == 0) return Constant(0);
  if (kind_ == Kind::kConstant) return Constant(value_ * k);
  if (kind_ == Kind::kMul) return *lhs_ * (rhs_->value_ * k);
  if (kind_ == Kind::kAdd) return *lhs_ * k + *rhs_ * k;
  return Binary(Kind::kMul, *this, Constant(k));
}

AffineExpr AffineExpr::FloorDiv(int64_t k) const {
  if (k == 1) return *this;
  if (kind_ == Kind::kConstant) return Constant(FloorDivInt(value_, k));
  return Binary(Kind::kFloorDiv, *this, Constant(k));
}

AffineExpr AffineExpr::Mod(int64_t k) const {
  if (k == 1) return Constant(0);
  if (kind_ == Kind::kConstant) return Constant(ModInt(value_, k));
  return Binary(Kind::kMod, *this, Constant(k));
}

AffineExpr AffineExpr::Substitute(const std::vector<AffineExpr>& dims, const std::vector<AffineExpr>& symbols) const {
  switch (kind_) {
    case Kind::kConstant: return *this;
    case Kind::kDim: return dims[value_];
    case Kind::kSymbol: return symbols[value_];
    case Kind::kAdd: return lhs_->Substitute(dims, symbols) + rhs_->Substitute(dims, symbols);
    case Kind::kMul: return lhs_->Substitute(dims, symbols) * rhs_->value_;
    case Kind::kFloorDiv: return lhs_->Substitute(dims, symbols).FloorDiv(rhs_->value_);
    case Kind::kMod: return lhs_->Substitute(dims, symbols).Mod(rhs_->value_);
  }
  return *this;
}

int64_t AffineExpr::Evaluate(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const {
  switch (kind_) {
    case Kind::kConstant: return value_;
    case Kind::kDim: return dims[value_];
    case Kind::kSymbol: return symbols[value_];
    case Kind::kAdd: return lhs_->Evaluate(dims, symbols) + rhs_->Evaluate(dims, symbols);
    case Kind::kMul: return lhs_->Evaluate(dims, symbols) * rhs_->value_;
    case Kind::kFloorDiv: return FloorDivInt(lhs_->Evaluate(dims, symbols), rhs_->value_);
    case Kind::kMod: return ModInt(lhs_->Evaluate(dims, symbols), rhs_->value_);
  }
  return 0;
}

std::string AffineExpr::ToString() const {
  auto atomic = [](const AffineExpr& e) {
    return e.kind_ == Kind::kConstant || e.kind_ == Kind::kDim || e.kind_ == Kind::kSymbol;
  };
  auto wrap = [&](const AffineExpr& e) { return atomic(e) ? e.ToString() : StrCat("(", e.ToString(), ")"); };
  switch (kind_) {
    case Kind::kConstant: return StrCat(value_);
    case Kind::kDim: return StrCat("d", value_);
    case Kind::kSymbol: return StrCat("s", value_);
    case Kind::kAdd:
      if (rhs_->kind_ == Kind::kConstant && rhs_->value_ < 0) return StrCat(lhs_->ToString(), " - ", -rhs_->value_);
      if (lhs_->kind_ == Kind::kMul && lhs_->rhs_->value_ == -1 && rhs_->kind_ == Kind::kConstant) {
        return StrCat(rhs_->value_, " - ", wrap(*lhs_->lhs_));
      }
      if (rhs_->kind_ == Kind::kMul && rhs_->rhs_->value_ == -1) {
        return StrCat(lhs_->ToString(), " - ", wrap(*rhs_->lhs_));
      }
      return StrCat(lhs_->ToString(), " + ", rhs_->ToString());
    case Kind::kMul: return StrCat(wrap(*lhs_), " * ", rhs_->value_);
    case Kind::kFloorDiv: return StrCat(wrap(*lhs_), " floordiv ", rhs_->value_);
    case Kind::kMod: return StrCat(wrap(*lhs_), " mod ", rhs_->value_);
  }
  return "?";
}

bool AffineExpr::operator==(const AffineExpr& o) const {
  if (kind_ != o.kind_ || value_ != o.value_) return false;
  if (lhs_ == nullptr) return true;
  return *lhs_ == *o.lhs_ && *rhs_ == *o.rhs_;
}

IndexingMap::IndexingMap(std::vector<Interval> dim_ranges, std::vector<Interval> symbol_ranges,
                         std::vector<AffineExpr> results, std::vector<IndexingConstraint> constraints)
    : dim_ranges_(std::move(dim_ranges)), symbol_ranges_(std::move(symbol_ranges)), results_(std::move(results)),
      constraints_(std::move(constraints)) {}

IndexingMap IndexingMap::Identity(const std::vector<int64_t>& dims) {
  std::vector<Interval> ranges;
  std::vector<AffineExpr> results;
  for (size_t i = 0; i < dims.size(); ++i) {
    ranges.push_back({0, dims[i] - 1});
    results.push_back(AffineExpr::Dim(static_cast<int64_t>(i)));
  }
  return IndexingMap(ranges, {}, results);
}

bool IndexingMap::IsIdentity() const {
  if (!symbol_ranges_.empty() || !constraints_.empty() || results_.size() != dim_ranges_.size()) return false;
  for (size_t i = 0; i < results_.size(); ++i) {
    if (results_[i] != AffineExpr::Dim(static_cast<int64_t>(i))) return false;
  }
  return true;
}

bool IndexingMap::Contains(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < dim_ranges_[i].lower || dims[i] > dim_ranges_[i].upper) return false;
  }
  for (size_t i = 0; i < symbols.size(); ++i) {
    if (symbols[i] < symbol_ranges_[i].lower || symbols[i] > symbol_ranges_[i].upper) return false;
  }
  for (const IndexingConstraint& c : constraints_) {
    int64_t v = c.expr.Evaluate(dims, symbols);
    if (v < c.range.lower || v > c.range.upper) return false;
  }
  return true;
}

std::vector<int64_t> IndexingMap::Apply(const std::vector<int64_t>& dims, const std::vector<int64_t>& symbols) const {
  std::vector<int64_t> out;
  for (const AffineExpr& e : results_) out.push_back(e.Evaluate(dims, symbols));
  return out;
}

std::string IndexingMap::ToString() const {
  std::string s = "(";
  for (int64_t i = 0; i < num_dims(); ++i) s += StrCat(i ? ", d" : "d", i);
  s += ")";
  if (num_symbols() > 0) {
    s += "[";
    for (int64_t i = 0; i < num_symbols(); ++i) s += StrCat(i ? ", s" : "s", i);
    s += "]";
  }
  s += " -> (";
  for (size_t i = 0; i < results_.size(); ++i) s += StrCat(i ? ", " : "", results_[i].ToString());
  s += ")";
  std::vector<std::string> domain;
  for (int64_t i = 0; i < num_dims(); ++i) {
    domain.push_back(StrCat("d", i, " in [", dim_ranges_[i].lower, ", ", dim_ranges_[i].upper, "]"));
  }
  for (int64_t i = 0; i < num_symbols(); ++i) {
    domain.push_back(StrCat("s", i, " in [", symbol_ranges_[i].lower, ", ", symbol_ranges_[i].upper, "]"));
  }
  for (const IndexingConstraint& c : constraints_) {
    domain.push_back(StrCat(c.expr.ToString(), " in [", c.range.lower, ", ", c.range.upper, "]"));
  }
  if (!domain.empty()) s += ", domain: " + Join(domain, ", ");
  return s;
}

IndexingMap ComposeIndexingMaps(const IndexingMap& consumer, const IndexingMap& producer) {
  std::vector<AffineExpr> producer_symbols;
  for (int64_t j = 0; j < producer.num_symbols(); ++j) {
    producer_symbols.push_back(AffineExpr::Symbol(consumer.num_symbols() + j));
  }
  std::vector<AffineExpr> results;
  for (const AffineExpr& e : producer.results()) results.push_back(e.Substitute(consumer.results(), producer_symbols));
  std::vector<Interval> symbols = consumer.symbol_ranges();
  symbols.insert(symbols.end(), producer.symbol_ranges().begin(), producer.symbol_ranges().end());
  std::vector<IndexingConstraint> constraints = consumer.constraints();
  for (const IndexingConstraint& c : producer.constraints()) {
    constraints.push_back({c.expr.Substitute(consumer.results(), producer_symbols), c.range});
  }
  // The producer's dim ranges constrain the consumer's results unless they
  // obviously hold.
  for (int64_t i = 0; i < producer.num_dims(); ++i) {
    const AffineExpr& r = consumer.results()[i];
    const Interval& want = producer.dim_ranges()[i];
    if (r.kind() == AffineExpr::Kind::kDim) {
      const Interval& have = consumer.dim_ranges()[r.value()];
      if (have.lower >= want.lower && have.upper <= want.upper) continue;
    }
    if (r.kind() == AffineExpr::Kind::kConstant && r.value() >= want.lower && r.value() <= want.upper) continue;
    constraints.push_back({r, want});
  }
  return IndexingMap(consumer.dim_ranges(), symbols, results, constraints);
}

namespace {

std::vector<int64_t> MinorToMajorOf(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major().size()) == s.rank()) {
    return s.layout().minor_to_major();
  }
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// The index of `dims` (of a shape laid out as `mtm`) at linear position
// `linear` of that layout.
std::vector<AffineExpr> Delinearize(const AffineExpr& linear, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& mtm) {
  std::vector<AffineExpr> out(dims.size(), AffineExpr::Constant(0));
  int64_t stride = 1;
  for (size_t i = 0; i < mtm.size(); ++i) {
    int64_t d = mtm[i];
    AffineExpr e = linear.FloorDiv(stride);
    out[d] = i + 1 == mtm.size() ? e : e.Mod(dims[d]);
    stride *= dims[d];
  }
  return out;
}

AffineExpr Linearize(int64_t rank, const std::vector<int64_t>& dims, const std::vector<int64_t>& mtm) {
  // Major to minor, so that row-major reads "d0 * 6 + d1".
  std::vector<int64_t> strides(rank, 1);
  int64_t stride = 1;
  for (int64_t d : mtm) {
    strides[d] = stride;
    stride *= dims[d];
  }
  AffineExpr linear = AffineExpr::Constant(0);
  for (auto it = mtm.rbegin(); it != mtm.rend(); ++it) linear = linear + AffineExpr::Dim(*it) * strides[*it];
  return linear;
}

std::vector<int64_t> RowMajor(int64_t rank) {
  std::vector<int64_t> m;
  for (int64_t d = rank - 1; d >= 0; --d) m.push_back(d);
  return m;
}

}  // namespace

absl::StatusOr<IndexingMap> ComputeOutputToInputIndexing(const HloInstruction& h, int64_t operand) {
  if (operand < 0 || operand >= h.operand_count()) {
    return absl::InvalidArgumentError(StrCat("indexing: ", h.name(), " has no operand ", operand));
  }
  const Shape& out = h.shape().IsTuple() ? h.shape().tuple_shapes(0) : h.shape();
  const Shape& in = h.operand(operand)->shape();
  if (!out.IsArray() || !in.IsArray()) {
    return absl::UnimplementedError(StrCat("indexing: ", h.name(), ": tuple-shaped operand or result"));
  }
  std::vector<Interval> dims;
  for (int64_t d : out.dimensions()) dims.push_back({0, d - 1});
  std::vector<AffineExpr> results;
  auto dim = [](int64_t i) { return AffineExpr::Dim(i); };
  auto scalar = [&]() { return IndexingMap(dims, {}, {}); };
  if (in.rank() == 0) return scalar();
  if (h.IsElementwise()) return IndexingMap::Identity(out.dimensions());
  switch (h.opcode()) {
    case HloOpcode::kBroadcast:
      for (int64_t d : h.dimensions()) results.push_back(dim(d));
      return IndexingMap(dims, {}, results);
    case HloOpcode::kTranspose: {
      results.assign(in.rank(), AffineExpr::Constant(0));
      for (int64_t i = 0; i < out.rank(); ++i) results[h.dimensions(i)] = dim(i);
      return IndexingMap(dims, {}, results);
    }
    case HloOpcode::kReshape: {
      AffineExpr linear = Linearize(out.rank(), out.dimensions(), RowMajor(out.rank()));
      return IndexingMap(dims, {}, Delinearize(linear, in.dimensions(), RowMajor(in.rank())));
    }
    case HloOpcode::kBitcast: {
      AffineExpr linear = Linearize(out.rank(), out.dimensions(), MinorToMajorOf(out));
      return IndexingMap(dims, {}, Delinearize(linear, in.dimensions(), MinorToMajorOf(in)));
    }
    case HloOpcode::kSlice:
      for (int64_t d = 0; d < out.rank(); ++d) {
        const SliceDimension& s = h.attrs().slice[d];
        results.push_back(dim(d) * s.stride + AffineExpr::Constant(s.start));
      }
      return IndexingMap(dims, {}, results);
    case HloOpcode::kReverse:
      for (int64_t d = 0; d < out.rank(); ++d) {
        bool reversed = std::find(h.dimensions().begin(), h.dimensions().end(), d) != h.dimensions().end();
        results.push_back(reversed ? AffineExpr::Constant(out.dimensions(d) - 1) - dim(d) : dim(d));
      }
      return IndexingMap(dims, {}, results);
    case HloOpcode::kPad: {
      std::vector<IndexingConstraint> constraints;
      for (int64_t d = 0; d < out.rank(); ++d) {
        const PaddingDimension& p = h.attrs().padding_config.dimensions[d];
        AffineExpr rel = dim(d) - AffineExpr::Constant(p.edge_padding_low);
        int64_t step = p.interior_padding + 1;
        results.push_back(rel.FloorDiv(step));
        constraints.push_back({rel, {0, (in.dimensions(d) - 1) * step}});
        if (step > 1) constraints.push_back({rel.Mod(step), {0, 0}});
      }
      return IndexingMap(dims, {}, results, constraints);
    }
    case HloOpcode::kConcatenate: {
      int64_t cd = h.concatenate_dimension(), offset = 0;
      for (int64_t i = 0; i < operand; ++i) offset += h.operand(i)->shape().dimensions(cd);
      for (int64_t d = 0; d < out.rank(); ++d) {
        results.push_back(d == cd ? dim(d) - AffineExpr::Constant(offset) : dim(d));
      }
      dims[cd] = {offset, offset + in.dimensions(cd) - 1};
      return IndexingMap(dims, {}, results);
    }
    case HloOpcode::kDynamicSlice: {
      std::vector<Interval> symbols;
      for (int64_t d = 0; d < out.rank(); ++d) {
        results.push_back(dim(d) + AffineExpr::Symbol(d));
        symbols.push_back({0, in.dimensions(d) - out.dimensions(d)});
      }
      return IndexingMap(dims, symbols, results);
    }
    case HloOpcode::kDynamicUpdateSlice: {
      if (operand == 0) return IndexingMap::Identity(out.dimensions());
      std::vector<Interval> symbols;
      std::vector<IndexingConstraint> constraints;
      for (int64_t d = 0; d < out.rank(); ++d) {
        AffineExpr rel = dim(d) - AffineExpr::Symbol(d);
        results.push_back(rel);
        symbols.push_back({0, out.dimensions(d) - in.dimensions(d)});
        constraints.push_back({rel, {0, in.dimensions(d) - 1}});
      }
      return IndexingMap(dims, symbols, results, constraints);
    }
    case HloOpcode::kReduce: {
      std::vector<Interval> symbols;
      int64_t kept = 0;
      for (int64_t d = 0; d < in.rank(); ++d) {
        bool reduced = std::find(h.dimensions().begin(), h.dimensions().end(), d) != h.dimensions().end();
        if (reduced) {
          results.push_back(AffineExpr::Symbol(static_cast<int64_t>(symbols.size())));
          symbols.push_back({0, in.dimensions(d) - 1});
        } else {
          results.push_back(dim(kept++));
        }
      }
      return IndexingMap(dims, symbols, results);
    }
    case HloOpcode::kDot: {
      const DotDimensionNumbers& dn = h.attrs().dot_dnums;
      const auto& batch = operand == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
      const auto& contracting = operand == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
      int64_t lhs_free = h.operand(0)->shape().rank() - static_cast<int64_t>(dn.lhs_batch_dimensions.size()) -
                         static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
      int64_t next_free = static_cast<int64_t>(batch.size()) + (operand == 0 ? 0 : lhs_free);
      results.assign(in.rank(), AffineExpr::Constant(0));
      std::vector<Interval> symbols;
      for (size_t i = 0; i < batch.size(); ++i) results[batch[i]] = dim(static_cast<int64_t>(i));
      for (size_t i = 0; i < contracting.size(); ++i) {
        results[contracting[i]] = AffineExpr::Symbol(static_cast<int64_t>(i));
        symbols.push_back({0, in.dimensions(contracting[i]) - 1});
      }
      for (int64_t d = 0; d < in.rank(); ++d) {
        if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
          results[d] = dim(next_free++);
        }
      }
      return IndexingMap(dims, symbols, results);
    }
    case HloOpcode::kGather: {
      const GatherDimensionNumbers& g = h.attrs().gather_dnums;
      const Shape& operand_shape = h.operand(0)->shape();
      const Shape& indices = h.operand(1)->shape();
      bool canonical = indices.rank() == 2 && g.index_vector_dim == 1 && g.collapsed_slice_dims.empty() &&
                       g.operand_batching_dims.empty() &&
                       static_cast<int64_t>(g.offset_dims.size()) == operand_shape.rank() &&
                       static_cast<int64_t>(g.start_index_map.size()) == indices.dimensions(1);
      for (size_t i = 0; canonical && i < g.offset_dims.size(); ++i) canonical &= g.offset_dims[i] == int64_t(i) + 1;
      if (!canonical) {
        return absl::UnimplementedError(StrCat("indexing: ", h.name(), ": gather not in canonical form"));
      }
      if (operand == 1) {
        return IndexingMap(dims, {{0, indices.dimensions(1) - 1}}, {dim(0), AffineExpr::Symbol(0)});
      }
      std::vector<Interval> symbols;
      for (int64_t d = 0; d < operand_shape.rank(); ++d) {
        auto k = std::find(g.start_index_map.begin(), g.start_index_map.end(), d);
        if (k == g.start_index_map.end()) {
          results.push_back(dim(d + 1));
          continue;
        }
        results.push_back(dim(d + 1) + AffineExpr::Symbol(static_cast<int64_t>(symbols.size())));
        symbols.push_back({0, operand_shape.dimensions(d) - h.attrs().slice_sizes[d]});
      }
      return IndexingMap(dims, symbols, results);
    }
    case HloOpcode::kAbs: case HloOpcode::kAdd: case HloOpcode::kAddDependency: case HloOpcode::kAfterAll:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll: case HloOpcode::kAnd: case HloOpcode::kAsyncDone: case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate: case HloOpcode::kAtan2: case HloOpcode::kBatchNormGrad:
    case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining: case HloOpcode::kBitcastConvert:
    case HloOpcode::kCall: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kCholesky:
    case HloOpcode::kClamp: case HloOpcode::kClz: case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCompare: case HloOpcode::kComplex:
    case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
    case HloOpcode::kConvolution: case HloOpcode::kCopy: case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart: case HloOpcode::kCos: case HloOpcode::kCustomCall: case HloOpcode::kDivide:
    case HloOpcode::kDomain: case HloOpcode::kDynamicReshape: case HloOpcode::kErf: case HloOpcode::kExp:
    case HloOpcode::kExpm1: case HloOpcode::kFft: case HloOpcode::kFloor: case HloOpcode::kFusion:
    case HloOpcode::kGetDimensionSize: case HloOpcode::kGetTupleElement: case HloOpcode::kImag:
    case HloOpcode::kInfeed: case HloOpcode::kIota: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kMap: case HloOpcode::kMaximum:
    case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kNegate: case HloOpcode::kNot:
    case HloOpcode::kOptimizationBarrier: case HloOpcode::kOr: case HloOpcode::kOutfeed:
    case HloOpcode::kParameter: case HloOpcode::kPartitionId: case HloOpcode::kPopulationCount:
    case HloOpcode::kPower: case HloOpcode::kRaggedAllToAll: case HloOpcode::kReal: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kReducePrecision: case HloOpcode::kReduceScatter:
    case HloOpcode::kReduceWindow: case HloOpcode::kRemainder: case HloOpcode::kReplicaId:
    case HloOpcode::kRng: case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
    case HloOpcode::kScatter: case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kSetDimensionSize:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic: case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSort: case HloOpcode::kSqrt:
    case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kTan:
    case HloOpcode::kTanh: case HloOpcode::kTopK: case HloOpcode::kTriangularSolve: case HloOpcode::kTuple:
    case HloOpcode::kWhile: case HloOpcode::kXor:
    case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kMulhi:
    case HloOpcode::kRaggedDot: case HloOpcode::kScaledDot: case HloOpcode::kScan:
      return absl::UnimplementedError(
          StrCat("indexing: no indexing map for '", HloOpcodeString(h.opcode()), "' (", h.name(), ")"));
  }
  return absl::InternalError("indexing: unreachable");
}

}  // namespace passlab
