#include "passes/simplifiers/dot_merger.h"

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

// ---------------------------------------------------------------------------
// Small permutation helpers (transpose semantics: out[i] = in[perm[i]]).

std::vector<int64_t> Permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  out.reserve(perm.size());
  for (int64_t p : perm) out.push_back(dims[p]);
  return out;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The permutation that takes dimensions listed in `order` to ascending order:
// transpose(t, SortingPermutation(order)) lists them ascending.
std::vector<int64_t> SortingPermutation(const std::vector<int64_t>& order) {
  std::vector<int64_t> perm(order.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return order[a] < order[b]; });
  return perm;
}

// ---------------------------------------------------------------------------
// The dimensions of one dot operand by category (XLA's DotOperandDims). The
// batch and contracting lists are in pairing order (the dot's dimension
// numbers), the non-contracting list ascending.

enum Category { kBatch = 0, kNonContracting = 1, kContracting = 2 };

struct OperandDims {
  std::vector<int64_t> sizes;
  std::array<std::vector<int64_t>, 3> dims;

  static OperandDims FromDotOperand(const HloInstruction* dot, int operand) {
    const DotDimensionNumbers& n = dot->attrs().dot_dnums;
    OperandDims d;
    d.sizes = dot->operand(operand)->shape().dimensions();
    d.dims[kBatch] = operand == 0 ? n.lhs_batch_dimensions : n.rhs_batch_dimensions;
    d.dims[kContracting] = operand == 0 ? n.lhs_contracting_dimensions : n.rhs_contracting_dimensions;
    for (int64_t i = 0; i < static_cast<int64_t>(d.sizes.size()); ++i) {
      if (std::find(d.dims[kBatch].begin(), d.dims[kBatch].end(), i) == d.dims[kBatch].end() &&
          std::find(d.dims[kContracting].begin(), d.dims[kContracting].end(), i) == d.dims[kContracting].end()) {
        d.dims[kNonContracting].push_back(i);
      }
    }
    return d;
  }

  // The category of each dimension (-1 for none).
  std::vector<int> Categories() const {
    std::vector<int> categories(sizes.size(), -1);
    for (int c : {kBatch, kNonContracting, kContracting}) {
      for (int64_t d : dims[c]) categories[d] = c;
    }
    return categories;
  }

  int64_t TotalSize(Category c) const {
    int64_t p = 1;
    for (int64_t d : dims[c]) p *= sizes[d];
    return p;
  }

  // The dimensions of `c` larger than 1, in list order.
  std::vector<int64_t> Live(Category c) const {
    std::vector<int64_t> live;
    for (int64_t d : dims[c]) {
      if (sizes[d] != 1) live.push_back(d);
    }
    return live;
  }
  std::vector<int64_t> LiveSizes(Category c) const {
    std::vector<int64_t> out;
    for (int64_t d : Live(c)) out.push_back(sizes[d]);
    return out;
  }

  void Erase(int64_t dim) {
    for (std::vector<int64_t>& list : dims) {
      list.erase(std::remove(list.begin(), list.end(), dim), list.end());
      for (int64_t& d : list) d -= d > dim ? 1 : 0;
    }
    sizes.erase(sizes.begin() + dim);
  }

  void RemoveDegenerateDimensions() {
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
      if (sizes[i] == 1) Erase(i);
    }
  }

  // Merges list-consecutive dimensions of one category that are also
  // adjacent in the shape.
  void MergeAdjacentDimensions() {
    for (std::vector<int64_t>& list : dims) {
      for (int64_t i = static_cast<int64_t>(list.size()) - 1; i > 0; --i) {
        if (list[i - 1] + 1 != list[i]) continue;
        const int64_t d = list[i - 1];
        sizes[d] *= sizes[d + 1];
        Erase(d + 1);
      }
    }
  }

  // The same categories on a reshape of the operand, when the reshape only
  // splits and merges dimensions within a category (XLA's
  // DotOperandDims::Reshape); nullopt when it would mix categories.
  std::optional<OperandDims> Reshape(const std::vector<int64_t>& target) const {
    OperandDims merged = *this;
    merged.RemoveDegenerateDimensions();
    merged.MergeAdjacentDimensions();
    OperandDims out;
    out.sizes = target;
    const int64_t rank = static_cast<int64_t>(target.size());
    if (merged.sizes.empty()) {
      out.dims[kNonContracting].resize(rank);
      std::iota(out.dims[kNonContracting].begin(), out.dims[kNonContracting].end(), 0);
      return out;
    }
    // Merged dimension i covers target dimensions [mapping[i], mapping[i+1]).
    std::vector<int64_t> mapping(merged.sizes.size() + 1);
    mapping.back() = rank;
    int64_t t = 0;
    for (size_t i = 0; i < merged.sizes.size(); ++i) {
      mapping[i] = t;
      int64_t accumulated = 1;
      while (accumulated < merged.sizes[i] && t < rank) accumulated *= target[t++];
      if (accumulated != merged.sizes[i]) return std::nullopt;
    }
    for (int c : {kBatch, kNonContracting, kContracting}) {
      for (int64_t d : merged.dims[c]) {
        for (int64_t j = mapping[d]; j < mapping[d + 1]; ++j) out.dims[c].push_back(j);
      }
    }
    return out;
  }

  // These dimensions, seen on the operand of `inst` (a transpose or reshape
  // producing them); nullopt when categories would mix.
  std::optional<OperandDims> MapBackward(const HloInstruction* inst) const {
    if (inst->opcode() == HloOpcode::kTranspose) {
      OperandDims out;
      out.sizes = inst->operand(0)->shape().dimensions();
      for (int c : {kBatch, kNonContracting, kContracting}) {
        for (int64_t d : dims[c]) out.dims[c].push_back(inst->dimensions()[d]);
      }
      return out;
    }
    return Reshape(inst->operand(0)->shape().dimensions());
  }
};

// ---------------------------------------------------------------------------
// A chain of reshapes and transposes on one array, emitted in a short
// canonical form: at most reshape, transpose, reshape (XLA's ShapeTracker
// plays this role). Element types and layouts are not tracked: the chain
// keeps its input's element type and uses default layouts.

struct ShapeStep {
  bool transpose = false;
  std::vector<int64_t> values;  // target dims, or the permutation
};

// Whether factors of these sizes, in this order, can be cut (a factor may
// split in two) into consecutive runs of the target sizes.
bool SplitsAlong(const std::vector<int64_t>& factors, const std::vector<int64_t>& size,
                 const std::vector<int64_t>& target) {
  std::vector<int64_t> left;
  for (int64_t f : factors) left.push_back(size[f]);
  size_t pos = 0;
  for (int64_t t : target) {
    int64_t covered = 1;
    while (covered < t) {
      if (pos == left.size() || t % covered != 0) return false;
      const int64_t want = t / covered;
      if (left[pos] <= want) {
        if (want % left[pos] != 0) return false;
        covered *= left[pos++];
        continue;
      }
      if (left[pos] % want != 0) return false;
      left[pos] /= want;
      covered *= want;
    }
  }
  return pos == left.size();
}

class ShapeSteps {
 public:
  explicit ShapeSteps(std::vector<int64_t> in) : in_(in), out_(std::move(in)) {}

  const std::vector<int64_t>& out() const { return out_; }

  void Reshape(std::vector<int64_t> dims) {
    if (dims == out_) return;
    out_ = dims;
    steps_.push_back({false, std::move(dims)});
  }

  void Transpose(std::vector<int64_t> perm) {
    if (IsIdentity(perm)) return;
    out_ = Permute(out_, perm);
    steps_.push_back({true, std::move(perm)});
  }

  void AppendInstruction(const HloInstruction* inst) {
    if (inst->opcode() == HloOpcode::kTranspose) {
      Transpose(inst->dimensions());
    } else {
      Reshape(inst->shape().dimensions());
    }
  }

  // Applies `block` (whose input is out()[offset, offset + its rank)) to that
  // run of dimensions, leaving the others alone.
  void ApplyToBlock(int64_t offset, const ShapeSteps& block) {
    const std::vector<int64_t> prefix(out_.begin(), out_.begin() + offset);
    const std::vector<int64_t> suffix(out_.begin() + offset + static_cast<int64_t>(block.in_.size()), out_.end());
    for (const ShapeStep& step : block.steps_) {
      const int64_t block_rank = static_cast<int64_t>(out_.size() - prefix.size() - suffix.size());
      if (step.transpose) {
        std::vector<int64_t> perm(out_.size());
        std::iota(perm.begin(), perm.end(), 0);
        for (int64_t i = 0; i < block_rank; ++i) perm[offset + i] = offset + step.values[i];
        Transpose(std::move(perm));
        continue;
      }
      std::vector<int64_t> dims = prefix;
      dims.insert(dims.end(), step.values.begin(), step.values.end());
      dims.insert(dims.end(), suffix.begin(), suffix.end());
      Reshape(std::move(dims));
    }
  }

  // Adds the instructions of the canonical chain after `from`; returns the
  // last one (`from` itself when the chain is the identity).
  HloInstruction* Emit(HloInstruction* from) const {
    HloComputation* c = from->parent();
    const PrimitiveType type = from->shape().element_type();
    HloInstruction* current = from;
    std::vector<int64_t> dims = in_;
    for (const ShapeStep& step : Canonical()) {
      if (step.transpose) {
        dims = Permute(dims, step.values);
        current = c->AddInstruction(HloInstruction::CreateTranspose(Shape(type, dims), current, step.values));
      } else {
        dims = step.values;
        current = c->AddInstruction(HloInstruction::CreateReshape(Shape(type, dims), current));
      }
    }
    return current;
  }

 private:
  std::vector<ShapeStep> Canonical() const {
    if (std::optional<std::vector<ShapeStep>> factored = Factored(); factored.has_value()) return *factored;
    // Fallback: only fold neighbours of the same kind.
    std::vector<ShapeStep> out;
    for (const ShapeStep& step : steps_) {
      if (!out.empty() && out.back().transpose == step.transpose) {
        if (step.transpose) {
          out.back().values = Permute(out.back().values, step.values);
        } else {
          out.back().values = step.values;
        }
        continue;
      }
      out.push_back(step);
    }
    return out;
  }

  // Follows the elements as factors of the input's dimensions: a reshape
  // splits or groups factors, a transpose reorders them. The whole chain is
  // then: reshape the input into factor groups, transpose, reshape to the
  // output. Nullopt when a reshape does not split along factors.
  std::optional<std::vector<ShapeStep>> Factored() const {
    std::vector<int64_t> size;        // by factor id
    std::vector<int64_t> input_order;  // factor ids in input row-major order
    std::vector<std::vector<int64_t>> dims;
    for (int64_t s : in_) {
      if (s == 0) return std::nullopt;
      std::vector<int64_t> factors;
      if (s > 1) {
        factors.push_back(static_cast<int64_t>(size.size()));
        input_order.push_back(static_cast<int64_t>(size.size()));
        size.push_back(s);
      }
      dims.push_back(std::move(factors));
    }
    for (const ShapeStep& step : steps_) {
      if (step.transpose) {
        std::vector<std::vector<int64_t>> permuted;
        for (int64_t p : step.values) permuted.push_back(dims[p]);
        dims = std::move(permuted);
        continue;
      }
      std::vector<int64_t> flat;
      for (const std::vector<int64_t>& d : dims) flat.insert(flat.end(), d.begin(), d.end());
      const std::vector<int64_t>& target = step.values;
      std::vector<std::vector<int64_t>> next;
      size_t fi = 0, ti = 0;
      while (ti < target.size() || fi < flat.size()) {
        if (ti < target.size() && target[ti] == 1) {
          next.push_back({});
          ++ti;
          continue;
        }
        if (ti == target.size() || fi == flat.size() || target[ti] == 0) return std::nullopt;
        // The smallest run of factors and of target dimensions with equal
        // products.
        size_t fe = fi + 1, te = ti + 1;
        int64_t pf = size[flat[fi]], pt = target[ti];
        while (pf != pt) {
          if (pf < pt) {
            if (fe == flat.size()) return std::nullopt;
            pf *= size[flat[fe++]];
          } else {
            if (te == target.size() || target[te] == 0) return std::nullopt;
            pt *= target[te++];
          }
        }
        std::vector<int64_t> run(flat.begin() + fi, flat.begin() + fe);
        const std::vector<int64_t> run_target(target.begin() + ti, target.begin() + te);
        if (!SplitsAlong(run, size, run_target)) {
          // The factors do not split along the target: fuse them into one
          // factor, which needs them adjacent in the input too.
          auto first = std::find(input_order.begin(), input_order.end(), run[0]);
          for (size_t k = 1; k < run.size(); ++k) {
            if (first + static_cast<int64_t>(k) >= input_order.end() || *(first + k) != run[k]) return std::nullopt;
          }
          input_order.erase(first + 1, first + static_cast<int64_t>(run.size()));
          size[run[0]] = pf;
          run = {run[0]};
        }
        for (int64_t t : run_target) {
          std::vector<int64_t> factors;
          int64_t covered = 1;
          while (covered < t) {
            const int64_t want = t / covered;
            const int64_t f = run.front();
            if (size[f] > want) {
              // Split factor f into a major part (size want) and a minor one.
              const int64_t minor = static_cast<int64_t>(size.size());
              size.push_back(size[f] / want);
              size[f] = want;
              input_order.insert(std::find(input_order.begin(), input_order.end(), f) + 1, minor);
              run.insert(run.begin() + 1, minor);
            }
            factors.push_back(f);
            covered *= size[f];
            run.erase(run.begin());
          }
          next.push_back(std::move(factors));
        }
        fi = fe;
        ti = te;
      }
      dims = std::move(next);
    }
    std::vector<int64_t> in_pos(size.size());
    for (size_t i = 0; i < input_order.size(); ++i) in_pos[input_order[i]] = static_cast<int64_t>(i);
    std::vector<int64_t> in_dim(size.size());  // the input dimension holding each factor
    {
      size_t pos = 0;
      for (size_t d = 0; d < in_.size(); ++d) {
        int64_t covered = 1;
        while (covered < in_[d]) {
          covered *= size[input_order[pos]];
          in_dim[input_order[pos++]] = static_cast<int64_t>(d);
        }
      }
    }
    // Coarsest: runs of factors adjacent in both orders. Aligned: such runs
    // that also stay within one input and one output dimension, which keeps
    // a plain transpose a plain transpose.
    std::vector<ShapeStep> coarse = StepsForGroups(dims, size, in_pos, in_dim, /*aligned=*/false);
    if (coarse.size() <= 1) return coarse;
    std::vector<ShapeStep> aligned = StepsForGroups(dims, size, in_pos, in_dim, /*aligned=*/true);
    return aligned.size() <= coarse.size() ? aligned : coarse;
  }

  std::vector<ShapeStep> StepsForGroups(const std::vector<std::vector<int64_t>>& dims, const std::vector<int64_t>& size,
                                        const std::vector<int64_t>& in_pos, const std::vector<int64_t>& in_dim,
                                        bool aligned) const {
    std::vector<std::vector<int64_t>> groups;
    for (const std::vector<int64_t>& d : dims) {
      bool first_in_dim = true;
      for (int64_t f : d) {
        const bool joins = !groups.empty() && in_pos[groups.back().back()] + 1 == in_pos[f] &&
                           (!aligned || (!first_in_dim && in_dim[groups.back().back()] == in_dim[f]));
        if (joins) {
          groups.back().push_back(f);
        } else {
          groups.push_back({f});
        }
        first_in_dim = false;
      }
    }
    std::vector<int64_t> by_input(groups.size());
    std::iota(by_input.begin(), by_input.end(), 0);
    std::sort(by_input.begin(), by_input.end(),
              [&](int64_t a, int64_t b) { return in_pos[groups[a][0]] < in_pos[groups[b][0]]; });
    std::vector<int64_t> mid;
    for (int64_t g : by_input) {
      int64_t s = 1;
      for (int64_t f : groups[g]) s *= size[f];
      mid.push_back(s);
    }
    std::vector<int64_t> perm(groups.size());
    for (size_t j = 0; j < by_input.size(); ++j) perm[by_input[j]] = static_cast<int64_t>(j);
    std::vector<ShapeStep> steps;
    if (IsIdentity(perm)) {
      if (in_ != out_) steps.push_back({false, out_});
      return steps;
    }
    if (mid != in_) steps.push_back({false, mid});
    steps.push_back({true, perm});
    if (Permute(mid, perm) != out_) steps.push_back({false, out_});
    return steps;
  }

  std::vector<int64_t> in_;
  std::vector<int64_t> out_;
  std::vector<ShapeStep> steps_;
};

// ---------------------------------------------------------------------------
// Equivalence classes.

// A convert from a sub-byte type (s4, u4, ...) up the operand's chain of
// layout-only ops: XLA keeps such dots apart (the upcast fuses into the dot).
bool HasSubByteUpcast(const HloInstruction* inst) {
  while (inst->opcode() == HloOpcode::kTranspose || inst->opcode() == HloOpcode::kReshape ||
         inst->opcode() == HloOpcode::kBitcast || inst->opcode() == HloOpcode::kConvert) {
    const PrimitiveType from = inst->operand(0)->shape().element_type();
    if (inst->opcode() == HloOpcode::kConvert && from != PrimitiveType::kPred && PrimitiveBitWidth(from) < 8) {
      return true;
    }
    inst = inst->operand(0);
  }
  return false;
}

// Where a dot operand comes from: up its transposes and reshapes while they
// keep the categories apart.
struct OperandSource {
  HloInstruction* source = nullptr;
  OperandDims dims;                          // at the source
  std::vector<const HloInstruction*> chain;  // source -> operand, in order
};

OperandSource FindOperandSource(HloInstruction* dot, int operand) {
  OperandSource s;
  s.dims = OperandDims::FromDotOperand(dot, operand);
  s.source = dot->mutable_operand(operand);
  while (s.source->opcode() == HloOpcode::kTranspose || s.source->opcode() == HloOpcode::kReshape) {
    std::optional<OperandDims> mapped = s.dims.MapBackward(s.source);
    if (!mapped.has_value()) break;
    s.dims = std::move(*mapped);
    s.chain.push_back(s.source);
    s.source = s.source->mutable_operand(0);
  }
  std::reverse(s.chain.begin(), s.chain.end());
  return s;
}

struct DotUsage {
  HloInstruction* dot = nullptr;
  int shared = 0;  // operand index of the shared side
  OperandSource shared_src;
  OperandSource concat_src;
  int64_t concat_nc_size = 1;
  int tz = 0;  // trailing zero bits of concat_nc_size
};

std::string PrecisionKey(const PrecisionConfig& p) {
  std::string key = p.algorithm;
  for (PrecisionLevel level : p.operand_precision) key += "," + std::to_string(static_cast<int>(level));
  return key;
}

// Dots are mergeable when they read the same source with the same
// categories on its non-degenerate dimensions, and agree on types and
// precision (XLA's EquivalenceKey; passlab has no operation queues).
struct ClassKey {
  int64_t source_id = 0;
  std::vector<int> categories;
  PrimitiveType shared_type = PrimitiveType::kInvalid;
  PrimitiveType concat_type = PrimitiveType::kInvalid;
  PrimitiveType dot_type = PrimitiveType::kInvalid;
  std::string precision;
  bool operator<(const ClassKey& o) const {
    return std::tie(source_id, categories, shared_type, concat_type, dot_type, precision) <
           std::tie(o.source_id, o.categories, o.shared_type, o.concat_type, o.dot_type, o.precision);
  }
};

// Operand and control edges, plus the edges merges add; answers
// reachability with a memoised search per start node.
class DependencyGraph {
 public:
  explicit DependencyGraph(const HloComputation& c) {
    for (const HloInstruction* inst : c.MakeInstructionPostOrder()) {
      for (const HloInstruction* op : inst->operands()) successors_[op].push_back(inst);
      for (const HloInstruction* pred : inst->control_predecessors()) successors_[pred].push_back(inst);
    }
  }

  void AddEdge(const HloInstruction* from, const HloInstruction* to) {
    if (from == to) return;
    successors_[from].push_back(to);
    reachable_.clear();
  }

  std::vector<const HloInstruction*> Successors(const HloInstruction* x) const {
    auto it = successors_.find(x);
    return it == successors_.end() ? std::vector<const HloInstruction*>{} : it->second;
  }

  bool Connected(const HloInstruction* a, const HloInstruction* b) { return Reaches(a, b) || Reaches(b, a); }

 private:
  bool Reaches(const HloInstruction* from, const HloInstruction* to) {
    if (from == to) return true;
    auto [it, inserted] = reachable_.try_emplace(from);
    if (inserted) {
      std::vector<const HloInstruction*> stack = {from};
      while (!stack.empty()) {
        const HloInstruction* x = stack.back();
        stack.pop_back();
        auto s = successors_.find(x);
        if (s == successors_.end()) continue;
        for (const HloInstruction* y : s->second) {
          if (it->second.insert(y).second) stack.push_back(y);
        }
      }
    }
    return it->second.contains(to);
  }

  absl::flat_hash_map<const HloInstruction*, std::vector<const HloInstruction*>> successors_;
  absl::flat_hash_map<const HloInstruction*, absl::flat_hash_set<const HloInstruction*>> reachable_;
};

// Rebuilds a run of transposes/reshapes under `chain_start` (a user of a
// slice of a merged dot) in canonical form: the transposes and reshapes the
// merge added and those the program had often cancel.
absl::Status SimplifyConsumerChain(HloInstruction* chain_start) {
  if (chain_start->operand_count() != 1) return absl::OkStatus();
  HloInstruction* producer = chain_start->mutable_operand(0);
  ShapeSteps steps(producer->shape().dimensions());
  std::vector<HloInstruction*> chain;
  for (HloInstruction* current = chain_start;
       current->opcode() == HloOpcode::kTranspose || current->opcode() == HloOpcode::kReshape;
       current = current->users()[0]) {
    if (!current->control_predecessors().empty() || !current->control_successors().empty()) break;
    steps.AppendInstruction(current);
    chain.push_back(current);
    if (current->user_count() != 1) break;
  }
  if (chain.empty()) return absl::OkStatus();
  HloInstruction* root = steps.Emit(producer);
  RETURN_IF_ERROR(chain.back()->ReplaceAllUsesWith(root));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    RETURN_IF_ERROR(producer->parent()->RemoveInstruction(*it));
  }
  return absl::OkStatus();
}

class ComputationMerger {
 public:
  ComputationMerger(HloComputation& c, int64_t max_size) : c_(c), max_size_(max_size) {}

  absl::StatusOr<bool> Run() {
    std::map<ClassKey, std::vector<DotUsage>> classes;
    for (HloInstruction* inst : c_.instructions()) {
      if (inst->opcode() != HloOpcode::kDot || inst->operand_count() != 2 || !inst->attrs().sparsity.empty() ||
          !inst->control_predecessors().empty() || !inst->control_successors().empty() ||
          HasSubByteUpcast(inst->operand(0)) || HasSubByteUpcast(inst->operand(1))) {
        continue;
      }
      OperandSource lhs = FindOperandSource(inst, 0);
      OperandSource rhs = FindOperandSource(inst, 1);
      for (int shared : {0, 1}) {
        const OperandSource& s = shared == 0 ? lhs : rhs;
        const OperandSource& other = shared == 0 ? rhs : lhs;
        OperandDims canonical = s.dims;
        canonical.RemoveDegenerateDimensions();
        ClassKey key{s.source->unique_id(),
                     canonical.Categories(),
                     inst->operand(shared)->shape().element_type(),
                     inst->operand(1 - shared)->shape().element_type(),
                     inst->shape().element_type(),
                     PrecisionKey(inst->attrs().precision_config)};
        DotUsage usage{inst, shared, s, other, other.dims.TotalSize(kNonContracting), 0};
        usage.tz = std::countr_zero(static_cast<uint64_t>(usage.concat_nc_size));
        classes[key].push_back(std::move(usage));
      }
    }
    std::erase_if(classes, [](const auto& kv) { return kv.second.size() < 2; });
    if (classes.empty()) return false;
    for (auto& [key, usages] : classes) {
      std::sort(usages.begin(), usages.end(), [](const DotUsage& a, const DotUsage& b) {
        return std::make_pair(a.concat_nc_size, a.dot->unique_id()) <
               std::make_pair(b.concat_nc_size, b.dot->unique_id());
      });
    }

    graph_.emplace(c_);
    std::vector<HloInstruction*> merged_dots;
    for (auto& [key, usages] : classes) {
      while (true) {
        ASSIGN_OR_RETURN(HloInstruction* merged, MergeCluster(usages));
        if (merged == nullptr) break;
        merged_dots.push_back(merged);
      }
    }

    for (auto& [id, pair] : replacements_) {
      RETURN_IF_ERROR(pair.first->ReplaceAllUsesWith(pair.second));
    }
    for (auto& [id, pair] : replacements_) {
      RETURN_IF_ERROR(c_.RemoveInstructionAndUnusedOperands(pair.first));
    }
    for (HloInstruction* dot : merged_dots) {
      for (HloInstruction* slice : std::vector<HloInstruction*>(dot->users())) {
        if (slice->opcode() != HloOpcode::kSlice) continue;
        for (HloInstruction* user : std::vector<HloInstruction*>(slice->users())) {
          RETURN_IF_ERROR(SimplifyConsumerChain(user));
        }
      }
    }
    return !replacements_.empty();
  }

 private:
  absl::StatusOr<HloInstruction*> MergeCluster(const std::vector<DotUsage>& usages) {
    std::vector<DotUsage> compatible;
    for (const DotUsage& u : usages) {
      if (!merged_.contains(u.dot)) compatible.push_back(u);
    }
    if (compatible.size() < 2) return nullptr;
    std::vector<DotUsage> group = FindDotsToMerge(compatible);
    if (group.size() < 2) return nullptr;
    return Merge(group);
  }

  // XLA's greedy grouping: seeds in increasing n; members added in
  // increasing n while the merged size fits, n stays within 20x of the
  // seed's, they are independent of the members, and the shared operand's
  // saved reads are worth it. The first group of two or more wins, ordered
  // by decreasing power of two dividing n, then decreasing n.
  std::vector<DotUsage> FindDotsToMerge(const std::vector<DotUsage>& dots) {
    constexpr double kFlopsPerByte = 290.0;
    constexpr int64_t kMaxNonContractingRatio = 20;
    constexpr double kMinSavingsRatio = 1e-5;
    const DotUsage& first = dots.front();
    const OperandDims shared_dims = OperandDims::FromDotOperand(first.dot, first.shared);
    const int64_t batch = shared_dims.TotalSize(kBatch);
    const int64_t shared_nc = shared_dims.TotalSize(kNonContracting);
    const int64_t contracting = shared_dims.TotalSize(kContracting);
    const Shape& shared_shape = first.dot->operand(first.shared)->shape();
    const int64_t shared_op_bytes =
        (shared_shape.element_count() * PrimitiveBitWidth(shared_shape.element_type()) + 7) / 8;
    const int64_t concat_and_out_bytes_per_nc =
        batch * (contracting * PrimitiveByteWidth(first.dot->operand(1 - first.shared)->shape().element_type()) +
                 shared_nc * PrimitiveByteWidth(first.dot->shape().element_type()));
    const double cost_per_nc =
        2.0 * batch * shared_nc * contracting / kFlopsPerByte + static_cast<double>(concat_and_out_bytes_per_nc);

    for (size_t i = 0; i < dots.size(); ++i) {
      std::vector<DotUsage> group = {dots[i]};
      int64_t sum_nc = dots[i].concat_nc_size;
      const int64_t max_allowed_nc = sum_nc * kMaxNonContractingRatio;
      for (size_t j = i + 1; j < dots.size(); ++j) {
        if (concat_and_out_bytes_per_nc * sum_nc > max_size_) break;
        const DotUsage& candidate = dots[j];
        if (candidate.concat_nc_size > max_allowed_nc) break;
        bool connected = false;
        for (const DotUsage& member : group) connected = connected || graph_->Connected(member.dot, candidate.dot);
        if (connected) continue;
        const int64_t next_sum = sum_nc + candidate.concat_nc_size;
        const double runtime = cost_per_nc * static_cast<double>(next_sum) +
                               static_cast<double>(group.size() + 1) * static_cast<double>(shared_op_bytes);
        if (static_cast<double>(shared_op_bytes) * static_cast<double>(group.size()) / runtime <= kMinSavingsRatio) {
          continue;
        }
        group.push_back(candidate);
        sum_nc = next_sum;
      }
      if (group.size() >= 2) {
        std::sort(group.begin(), group.end(), [](const DotUsage& a, const DotUsage& b) {
          return std::make_tuple(b.tz, b.concat_nc_size, a.dot->unique_id()) <
                 std::make_tuple(a.tz, a.concat_nc_size, b.dot->unique_id());
        });
        return group;
      }
    }
    return {};
  }

  HloInstruction* Merge(const std::vector<DotUsage>& group) {
    const DotUsage& first = group.front();
    int64_t lhs_count = 0;
    for (const DotUsage& u : group) lhs_count += u.shared == 0 ? 1 : 0;
    // The shared operand goes on the side it was on more often (rhs on a tie).
    const bool shared_is_lhs = static_cast<int64_t>(group.size()) < 2 * lhs_count;

    // The shared operand: the source without size-1 dimensions, adjacent
    // contracting dimensions collapsed into one.
    HloInstruction* source = first.shared_src.source;
    const std::vector<int> source_categories = first.shared_src.dims.Categories();
    std::vector<int64_t> target_sizes;
    std::vector<int> target_categories;
    for (size_t d = 0; d < source_categories.size(); ++d) {
      if (source->shape().dimensions(d) == 1) continue;
      target_sizes.push_back(source->shape().dimensions(d));
      target_categories.push_back(source_categories[d]);
    }
    std::vector<int64_t> contracting_positions;
    for (size_t i = 0; i < target_categories.size(); ++i) {
      if (target_categories[i] == kContracting) contracting_positions.push_back(static_cast<int64_t>(i));
    }
    const bool collapse = contracting_positions.size() > 1 &&
                          contracting_positions.back() - contracting_positions.front() + 1 ==
                              static_cast<int64_t>(contracting_positions.size());
    if (collapse) {
      const int64_t begin = contracting_positions.front();
      const int64_t end = contracting_positions.back() + 1;
      int64_t collapsed = 1;
      for (int64_t i = begin; i < end; ++i) collapsed *= target_sizes[i];
      target_sizes[begin] = collapsed;
      target_sizes.erase(target_sizes.begin() + begin + 1, target_sizes.begin() + end);
      target_categories.erase(target_categories.begin() + begin + 1, target_categories.begin() + end);
    }
    HloInstruction* shared_op = source;
    if (target_sizes != source->shape().dimensions()) {
      shared_op = c_.AddInstruction(
          HloInstruction::CreateReshape(Shape(source->shape().element_type(), target_sizes), source));
    }
    std::array<std::vector<int64_t>, 3> target_dims;  // positions in shared_op, ascending
    for (size_t i = 0; i < target_categories.size(); ++i) {
      target_dims[target_categories[i]].push_back(static_cast<int64_t>(i));
    }
    const int64_t batch_rank = static_cast<int64_t>(target_dims[kBatch].size());
    const int64_t contracting_rank = static_cast<int64_t>(target_dims[kContracting].size());
    std::vector<int64_t> batch_sizes, contracting_sizes, free_sizes;
    for (int64_t d : target_dims[kBatch]) batch_sizes.push_back(target_sizes[d]);
    for (int64_t d : target_dims[kContracting]) contracting_sizes.push_back(target_sizes[d]);
    for (int64_t d : target_dims[kNonContracting]) free_sizes.push_back(target_sizes[d]);

    // The other operands, as [batch, n, contracting] with the shared
    // operand's batch and contracting dimensions, or [batch, contracting, n]
    // when the first dot's other operand ends in a free dimension.
    const std::vector<int> first_concat_categories =
        OperandDims::FromDotOperand(first.dot, 1 - first.shared).Categories();
    const bool contracting_is_minor =
        !first_concat_categories.empty() && first_concat_categories.back() == kContracting;
    std::vector<HloInstruction*> concat_operands;
    std::vector<int64_t> ns;
    for (const DotUsage& u : group) {
      const OperandDims other = OperandDims::FromDotOperand(u.dot, 1 - u.shared);
      const OperandDims& at_source = u.shared_src.dims;
      ShapeSteps steps(u.concat_src.source->shape().dimensions());
      for (const HloInstruction* inst : u.concat_src.chain) steps.AppendInstruction(inst);
      // Drop size-1 dimensions, then order [batch, free, contracting].
      std::vector<int64_t> live_position(other.sizes.size(), -1);
      std::vector<int64_t> live_sizes;
      for (size_t d = 0; d < other.sizes.size(); ++d) {
        if (other.sizes[d] == 1) continue;
        live_position[d] = static_cast<int64_t>(live_sizes.size());
        live_sizes.push_back(other.sizes[d]);
      }
      steps.Reshape(live_sizes);
      std::vector<int64_t> perm;
      for (Category c : {kBatch, kNonContracting, kContracting}) {
        for (int64_t d : other.Live(c)) perm.push_back(live_position[d]);
      }
      steps.Transpose(perm);
      // Batch: undo the shared side's reshapes, then sort like the source.
      const std::vector<int64_t> source_batch = at_source.Live(kBatch);
      ShapeSteps batch(other.LiveSizes(kBatch));
      batch.Reshape(at_source.LiveSizes(kBatch));
      batch.Transpose(SortingPermutation(source_batch));
      steps.ApplyToBlock(0, batch);
      // Free dimensions: flattened into one.
      const int64_t n = other.TotalSize(kNonContracting);
      ShapeSteps free(other.LiveSizes(kNonContracting));
      free.Reshape({n});
      steps.ApplyToBlock(batch_rank, free);
      // Contracting: as batch, then collapsed like the shared operand.
      ShapeSteps contracting(other.LiveSizes(kContracting));
      contracting.Reshape(at_source.LiveSizes(kContracting));
      contracting.Transpose(SortingPermutation(at_source.Live(kContracting)));
      if (collapse) contracting.Reshape({Product(contracting_sizes)});
      steps.ApplyToBlock(batch_rank + 1, contracting);
      if (!contracting_is_minor) {
        std::vector<int64_t> to_free_minor(batch_rank + 1 + contracting_rank);
        std::iota(to_free_minor.begin(), to_free_minor.end(), 0);
        std::rotate(to_free_minor.begin() + batch_rank, to_free_minor.begin() + batch_rank + 1, to_free_minor.end());
        steps.Transpose(to_free_minor);
      }
      concat_operands.push_back(steps.Emit(u.concat_src.source));
      ns.push_back(n);
    }
    const int64_t concat_dim = contracting_is_minor ? batch_rank : batch_rank + contracting_rank;
    std::vector<int64_t> concat_sizes = concat_operands[0]->shape().dimensions();
    concat_sizes[concat_dim] = std::accumulate(ns.begin(), ns.end(), int64_t{0});
    HloInstruction* concat = c_.AddInstruction(HloInstruction::CreateConcatenate(
        Shape(concat_operands[0]->shape().element_type(), concat_sizes), concat_operands, concat_dim));

    // The merged dot.
    std::array<std::vector<int64_t>, 3> concat_dims;
    concat_dims[kBatch].resize(batch_rank);
    std::iota(concat_dims[kBatch].begin(), concat_dims[kBatch].end(), 0);
    concat_dims[kNonContracting] = {concat_dim};
    for (int64_t i = 0; i < contracting_rank; ++i) {
      concat_dims[kContracting].push_back(contracting_is_minor ? batch_rank + 1 + i : batch_rank + i);
    }
    const auto& lhs_dims = shared_is_lhs ? target_dims : concat_dims;
    const auto& rhs_dims = shared_is_lhs ? concat_dims : target_dims;
    DotDimensionNumbers dnums;
    dnums.lhs_batch_dimensions = lhs_dims[kBatch];
    dnums.rhs_batch_dimensions = rhs_dims[kBatch];
    dnums.lhs_contracting_dimensions = lhs_dims[kContracting];
    dnums.rhs_contracting_dimensions = rhs_dims[kContracting];
    const int64_t n_total = concat_sizes[concat_dim];
    std::vector<int64_t> dot_sizes = batch_sizes;
    if (shared_is_lhs) {
      dot_sizes.insert(dot_sizes.end(), free_sizes.begin(), free_sizes.end());
      dot_sizes.push_back(n_total);
    } else {
      dot_sizes.push_back(n_total);
      dot_sizes.insert(dot_sizes.end(), free_sizes.begin(), free_sizes.end());
    }
    HloInstruction* lhs = shared_is_lhs ? shared_op : concat;
    HloInstruction* rhs = shared_is_lhs ? concat : shared_op;
    HloInstruction* new_dot = c_.AddInstruction(
        HloInstruction::CreateDot(Shape(first.dot->shape().element_type(), dot_sizes), lhs, rhs, dnums,
                                  first.dot->attrs().precision_config));
    for (const DotUsage& u : group) {
      if (u.dot->metadata().op_name.empty()) continue;
      new_dot->set_metadata(u.dot->metadata());
      break;
    }
    for (const DotUsage& u : group) {
      graph_->AddEdge(u.dot, new_dot);
      for (const HloInstruction* succ : graph_->Successors(u.dot)) graph_->AddEdge(new_dot, succ);
    }

    // Each result: its slice, brought back to the dot's own dimensions.
    const int64_t slice_dim = shared_is_lhs ? static_cast<int64_t>(dot_sizes.size()) - 1 : batch_rank;
    int64_t slice_start = 0;
    for (size_t i = 0; i < group.size(); ++i) {
      const DotUsage& u = group[i];
      std::vector<SliceDimension> slice;
      for (int64_t s : dot_sizes) slice.push_back({0, s, 1});
      slice[slice_dim] = {slice_start, slice_start + ns[i], 1};
      std::vector<int64_t> slice_sizes = dot_sizes;
      slice_sizes[slice_dim] = ns[i];
      slice_start += ns[i];
      HloInstruction* sliced = c_.AddInstruction(HloInstruction::CreateSlice(
          Shape(new_dot->shape().element_type(), slice_sizes), new_dot, std::move(slice)));

      const OperandDims shared_at_dot = OperandDims::FromDotOperand(u.dot, u.shared);
      const OperandDims other = OperandDims::FromDotOperand(u.dot, 1 - u.shared);
      const OperandDims& at_source = u.shared_src.dims;
      ShapeSteps steps(slice_sizes);
      ShapeSteps batch(batch_sizes);
      batch.Transpose(InversePermutation(SortingPermutation(at_source.Live(kBatch))));
      batch.Reshape(shared_at_dot.LiveSizes(kBatch));
      steps.ApplyToBlock(0, batch);
      int64_t offset = static_cast<int64_t>(shared_at_dot.Live(kBatch).size());
      ShapeSteps shared_free(free_sizes);
      shared_free.Transpose(InversePermutation(SortingPermutation(at_source.Live(kNonContracting))));
      shared_free.Reshape(shared_at_dot.LiveSizes(kNonContracting));
      ShapeSteps other_free({ns[i]});
      other_free.Reshape(other.LiveSizes(kNonContracting));
      const int64_t shared_free_rank = static_cast<int64_t>(shared_at_dot.Live(kNonContracting).size());
      const int64_t other_free_rank = static_cast<int64_t>(other.Live(kNonContracting).size());
      if (shared_is_lhs) {
        steps.ApplyToBlock(offset, shared_free);
        steps.ApplyToBlock(offset + shared_free_rank, other_free);
      } else {
        steps.ApplyToBlock(offset, other_free);
        steps.ApplyToBlock(offset + other_free_rank, shared_free);
      }
      if ((u.shared == 0) != shared_is_lhs) {
        const int64_t first_rank = shared_is_lhs ? shared_free_rank : other_free_rank;
        const int64_t second_rank = shared_is_lhs ? other_free_rank : shared_free_rank;
        std::vector<int64_t> swap(offset);
        std::iota(swap.begin(), swap.end(), 0);
        for (int64_t k = 0; k < second_rank; ++k) swap.push_back(offset + first_rank + k);
        for (int64_t k = 0; k < first_rank; ++k) swap.push_back(offset + k);
        steps.Transpose(swap);
      }
      steps.Reshape(u.dot->shape().dimensions());
      replacements_[u.dot->unique_id()] = {u.dot, steps.Emit(sliced)};
      merged_.insert(u.dot);
    }
    return new_dot;
  }

  HloComputation& c_;
  int64_t max_size_;
  std::optional<DependencyGraph> graph_;
  // Original dot -> its replacement, by the original's unique id.
  std::map<int64_t, std::pair<HloInstruction*, HloInstruction*>> replacements_;
  absl::flat_hash_set<const HloInstruction*> merged_;
};

}  // namespace

absl::StatusOr<bool> DotMerger::RunImpl(HloModule& module, PassRunContext*) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    ASSIGN_OR_RETURN(bool merged, ComputationMerger(*c, options_.max_size_to_merge).Run());
    if (merged) BumpCounter("merged computations");
    changed = changed || merged;
  }
  return changed;
}

}  // namespace passlab
