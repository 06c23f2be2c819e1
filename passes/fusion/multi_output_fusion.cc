#include "passes/fusion/multi_output_fusion.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/fusion/gpu_fusible.h"
#include "passes/fusion/gpu_performance_model.h"
#include "passes/gpu/reduction_utils.h"

namespace passlab {
namespace {

// XLA:GPU's limits (xla/service/gpu/gpu_fusible.{h,cc},
// ir_emission_utils.h) and the shared memory per block of the RTX A6000
// its multi-output fusion tests describe.
constexpr int64_t kMaxOperandsAndOutputs = 96;
constexpr int64_t kMaxUnnestedReductionOutputsPerFusion = 8;
constexpr int64_t kSharedMemoryPerBlock = 48 * 1024;
// MOF only pays off for a shared operand at least this big when the two
// fusions read disjoint slices of it.
constexpr int64_t kSmallSharedOperandBytes = 1024;

// ---------------------------------------------------------------- shapes

std::vector<int64_t> MinorToMajor(const Shape& shape) {
  return shape.has_layout() ? shape.layout().minor_to_major() : Layout::Default(shape.rank()).minor_to_major();
}

bool IsEffectiveScalar(const Shape& shape) { return shape.IsArray() && shape.element_count() == 1; }

// Same dimensions and layout, any element type.
bool EqualIgnoringElementType(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray()) return a == b;
  return a.dimensions() == b.dimensions() && MinorToMajor(a) == MinorToMajor(b);
}

// A transpose that keeps every element at its place in memory: the
// output's physical order, mapped through the permutation, is the input's
// (size-1 dimensions do not matter).
bool TransposeIsBitcast(const Shape& in, const Shape& out, const std::vector<int64_t>& perm) {
  std::vector<int64_t> in_order, out_order;
  for (int64_t d : MinorToMajor(in)) {
    if (in.dimensions()[d] != 1) in_order.push_back(d);
  }
  for (int64_t d : MinorToMajor(out)) {
    if (out.dimensions()[d] != 1) out_order.push_back(perm[d]);
  }
  return in_order == out_order;
}

// A reshape that keeps every element at its place in memory. Both shapes
// are cut into "atoms", the common refinement of their row-major
// dimensions; the reshape is a bitcast when the atoms lie in the same
// physical order in both.
bool ReshapeIsBitcast(const Shape& a, const Shape& b) {
  if (a.element_count() != b.element_count()) return false;
  std::vector<int64_t> a_dims, b_dims;  // non-degenerate, row-major
  for (int64_t d = 0; d < a.rank(); ++d) {
    if (a.dimensions()[d] != 1) a_dims.push_back(d);
  }
  for (int64_t d = 0; d < b.rank(); ++d) {
    if (b.dimensions()[d] != 1) b_dims.push_back(d);
  }
  // atom k belongs to a dimension a_of[k] and b dimension b_of[k].
  std::vector<int64_t> a_of, b_of;
  size_t i = 0, j = 0;
  int64_t ra = i < a_dims.size() ? a.dimensions()[a_dims[0]] : 1;
  int64_t rb = j < b_dims.size() ? b.dimensions()[b_dims[0]] : 1;
  while (i < a_dims.size() && j < b_dims.size()) {
    if (ra % rb != 0 && rb % ra != 0) return false;
    a_of.push_back(a_dims[i]);
    b_of.push_back(b_dims[j]);
    int64_t atom = std::min(ra, rb);
    ra /= atom;
    rb /= atom;
    if (ra == 1 && ++i < a_dims.size()) ra = a.dimensions()[a_dims[i]];
    if (rb == 1 && ++j < b_dims.size()) rb = b.dimensions()[b_dims[j]];
  }
  auto physical = [](const std::vector<int64_t>& owner, const std::vector<int64_t>& minor_to_major) {
    std::vector<int64_t> order;
    for (auto it = minor_to_major.rbegin(); it != minor_to_major.rend(); ++it) {
      for (size_t k = 0; k < owner.size(); ++k) {
        if (owner[k] == *it) order.push_back(static_cast<int64_t>(k));
      }
    }
    return order;
  };
  return physical(a_of, MinorToMajor(a)) == physical(b_of, MinorToMajor(b));
}

// XLA's ShapeUtil::IsReshapeOrTransposeBitcast, ignoring element types.
bool IsReshapeOrTransposeBitcast(const Shape& a, const Shape& b) {
  if (a.element_count() != b.element_count()) return false;
  if (ReshapeIsBitcast(a, b)) return true;
  if (a.rank() != b.rank()) return false;
  std::vector<int64_t> am = MinorToMajor(a), bm = MinorToMajor(b);
  for (int64_t k = 0; k < a.rank(); ++k) {
    if (a.dimensions()[am[k]] != b.dimensions()[bm[k]]) return false;
  }
  return true;
}

int64_t SubshapeCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t n = 1;
  for (const Shape& s : shape.tuple_shapes()) n += SubshapeCount(s);
  return n;
}

// ---------------------------------------------------------------- heroes

bool IsMultiOutputFusion(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion && h.fused_expression_root()->opcode() == HloOpcode::kTuple;
}
bool IsCustomFusion(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion && h.fusion_kind() == FusionKind::kCustom;
}
bool IsLoopFusion(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion && h.fusion_kind() == FusionKind::kLoop;
}

// Shapes passlab's emitters compile (gpu_fusible.h's IsEmittableArrayShape;
// tuples of them): XLA's GPU emitters take more (s4, complex, tiled
// layouts), and a fusion the backend cannot compile must not be built.
bool EmittableShape(const Shape& shape) {
  if (!shape.IsTuple()) return IsEmittableArrayShape(shape);
  for (const Shape& s : shape.tuple_shapes()) {
    if (!EmittableShape(s)) return false;
  }
  return true;
}

bool EmittersTake(const HloInstruction& h) {
  if (!EmittableShape(h.shape())) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!EmittableShape(operand->shape())) return false;
  }
  if (h.opcode() != HloOpcode::kFusion) return true;
  for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) {
    if (!EmittableShape(i->shape())) return false;
  }
  return true;
}

// XLA's HloInstruction::IsFusible, and what passlab's emitters take.
bool IsFusible(const HloInstruction& h) {
  if (!EmittersTake(h)) return false;
  switch (h.opcode()) {
    case HloOpcode::kDomain:
    case HloOpcode::kParameter:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
      return false;
    case HloOpcode::kFusion:
    case HloOpcode::kMap:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      return true;
    case HloOpcode::kRng:
      return h.user_count() <= 1;
    default:
      return !h.HasSideEffect();
  }
}

// Ops between a fusion root and its hero that do not change the access
// pattern: elementwise ops (not layout-changing copies) and bitcasts.
bool IsIntermediate(const HloInstruction& h, int64_t allowed_operand_count) {
  if (h.operand_count() == 0 || h.operand_count() > allowed_operand_count) return false;
  if (h.IsElementwise()) {
    if (h.opcode() == HloOpcode::kCopy) return h.shape() == h.operand(0)->shape();
    return true;
  }
  switch (h.opcode()) {
    case HloOpcode::kBitcast: return true;
    case HloOpcode::kReshape: return ReshapeIsBitcast(h.operand(0)->shape(), h.shape());
    case HloOpcode::kTranspose: return TransposeIsBitcast(h.operand(0)->shape(), h.shape(), h.dimensions());
    default: return false;
  }
}

bool IsTiledTranspose(const HloInstruction& h) { return TiledTransposeSharedMemory(h).has_value(); }

// Inside a fused computation: an instruction of the fusion proper (its
// parameters stand for values outside).
bool InFusion(const HloInstruction* h, const HloComputation* fused) {
  return h->parent() == fused && h->opcode() != HloOpcode::kParameter;
}

// XLA's FindHero: the unique instruction satisfying `is_hero` among those
// reached from `root` through intermediate ops, provided only trivial ops
// use it on the way to the fusion root.
const HloInstruction* FindHero(const HloInstruction* root, bool (*is_hero)(const HloInstruction&)) {
  const HloComputation* fused = root->parent();
  const HloInstruction* hero = nullptr;
  std::deque<const HloInstruction*> queue = {root};
  absl::flat_hash_set<const HloInstruction*> seen = {root};
  while (!queue.empty()) {
    const HloInstruction* node = queue.front();
    queue.pop_front();
    if (is_hero(*node)) {
      if (hero != nullptr) return nullptr;
      hero = node;
      continue;
    }
    if (!IsIntermediate(*node, 3)) continue;
    for (const HloInstruction* operand : node->operands()) {
      if (InFusion(operand, fused) && seen.insert(operand).second) queue.push_back(operand);
    }
  }
  if (hero == nullptr) return nullptr;
  std::deque<const HloInstruction*> users(hero->users().begin(), hero->users().end());
  absl::flat_hash_set<const HloInstruction*> visited(users.begin(), users.end());
  while (!users.empty()) {
    const HloInstruction* u = users.front();
    users.pop_front();
    if (u->parent() != fused) continue;
    if (u->opcode() != HloOpcode::kTuple && u->opcode() != HloOpcode::kParameter && !IsIntermediate(*u, 3)) {
      return nullptr;
    }
    for (const HloInstruction* next : u->users()) {
      if (visited.insert(next).second) users.push_back(next);
    }
  }
  return hero;
}

bool IsConcatenate(const HloInstruction& h) { return h.opcode() == HloOpcode::kConcatenate; }

// XLA's FindNonTrivialHero for an instruction inside a fused computation.
const HloInstruction* FindNonTrivialHero(const HloInstruction* root) {
  if (!root->parent()->IsFusionComputation()) return root;
  const HloInstruction* hero = root;
  while (IsIntermediate(*hero, 1) && InFusion(hero->operand(0), root->parent())) hero = hero->operand(0);
  if (const HloInstruction* t = FindHero(hero, IsTiledTranspose)) return t;
  if (const HloInstruction* c = FindHero(hero, IsConcatenate)) return c;
  if (hero->opcode() != HloOpcode::kReduce) return root;
  return hero;
}

bool IsUnnestedReduction(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kReduce && IsReductionFromOrToContiguousDimensions(h);
}

bool IsRealReductionHero(const HloInstruction* root, const HloInstruction* hero) {
  if (!IsUnnestedReduction(*hero)) return false;
  return root == hero || IsReductionRaceFree(GetReductionKindAndContiguousComponents(*hero));
}

void CollectFusionRoots(const HloInstruction* root, std::vector<const HloInstruction*>& out) {
  if (root->opcode() == HloOpcode::kGetTupleElement && root->operand(0)->opcode() == HloOpcode::kTuple) {
    CollectFusionRoots(root->operand(0)->operand(root->tuple_index()), out);
  } else if (root->opcode() == HloOpcode::kGetTupleElement) {
    out.push_back(root->operand(0));
  } else if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) CollectFusionRoots(operand, out);
  } else {
    out.push_back(root);
  }
}

std::vector<const HloInstruction*> FusionRoots(const HloInstruction& fusion) {
  std::vector<const HloInstruction*> out;
  CollectFusionRoots(fusion.fused_expression_root(), out);
  return out;
}

bool IsInputFusibleReduction(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* root : FusionRoots(h)) {
      if (IsRealReductionHero(root, FindNonTrivialHero(root))) return true;
    }
    return false;
  }
  return IsUnnestedReduction(h);
}

bool IsInputFusibleTranspose(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kBitcast || IsCustomFusion(h)) return false;
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* root : FusionRoots(h)) {
      if (IsTiledTranspose(*FindNonTrivialHero(root))) return true;
    }
    return false;
  }
  return IsTiledTranspose(h);
}

bool IsFusibleAsMultiOutputFusionRoot(const HloInstruction& h) {
  return IsFusible(h) && !IsCustomFusion(h) &&
         (IsInputFusibleReduction(h) || IsInputFusibleTranspose(h) || IsLoopFusion(h) || h.IsElementwise());
}

bool IsNestableVariadicReduction(const HloInstruction& h) {
  if (!h.shape().IsTuple()) return false;
  if (h.opcode() == HloOpcode::kReduce) return !IsUnnestedReduction(h);
  return IsLoopFusion(h) && h.fused_expression_root()->opcode() == HloOpcode::kReduce;
}

// The instruction whose iteration shape and emitter a (multi-output) fusion
// takes (XLA's GetRealHeroForMultiOutputFusion).
const HloInstruction* RealHeroForMultiOutputFusion(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kFusion) return &h;
  const HloInstruction* root = h.fused_expression_root();
  if (!IsMultiOutputFusion(h)) {
    const HloInstruction* hero = FindNonTrivialHero(root);
    if (IsRealReductionHero(root, hero) || IsTiledTranspose(*hero)) return hero;
    return root;
  }
  for (const HloInstruction* operand : root->operands()) {
    const HloInstruction* hero = FindNonTrivialHero(operand);
    if (IsRealReductionHero(operand, hero) || IsTiledTranspose(*hero)) return hero;
  }
  return root->operand(0);
}

// A path from a fused parameter to the root through intermediate ops only.
bool OnlyIntermediatesToRoot(const HloInstruction* param) {
  if (param->user_count() != 1) return false;
  const HloInstruction* h = param->users()[0];
  while (h->user_count() > 0) {
    if (!IsIntermediate(*h, 1)) return false;
    h = h->users()[0];
  }
  return true;
}

int64_t OperandIndex(const HloInstruction& user, const HloInstruction* operand) {
  for (int64_t i = 0; i < user.operand_count(); ++i) {
    if (user.operand(i) == operand) return i;
  }
  return -1;
}

// A copy that moves elements to another layout: the physical transpose
// that layout assignment leaves when it makes a transpose a bitcast. XLA
// runs layout normalization first, which turns such copies into
// transposes; passlab does not, so they count as transposes here.
bool IsLayoutChangingCopy(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kCopy || !h.shape().IsArray()) return false;
  const Shape& in = h.operand(0)->shape();
  const Shape& out = h.shape();
  if (!in.has_layout() || !out.has_layout()) return false;
  // The order of the dims that are not 1, minor to major.
  auto order = [](const Shape& s) {
    std::vector<int64_t> o;
    for (int64_t d : s.layout().minor_to_major()) {
      if (s.dimensions(d) != 1) o.push_back(d);
    }
    return o;
  };
  return order(in) != order(out);
}

// XLA's FusionHeroesAreCompatible: an empty string when the heroes may
// share a kernel, else why not.
std::string HeroesIncompatibility(const HloInstruction* hero1, const HloInstruction* hero2) {
  bool reduce1 = IsUnnestedReduction(*hero1), reduce2 = IsUnnestedReduction(*hero2);
  bool tiled1 = IsTiledTranspose(*hero1), tiled2 = IsTiledTranspose(*hero2);
  if ((reduce1 && IsLayoutChangingCopy(*hero2)) || (IsLayoutChangingCopy(*hero1) && reduce2)) {
    return "a transpose (a layout-changing copy) and a reduction";
  }
  bool nested1 = hero1->opcode() == HloOpcode::kTranspose && !tiled1;
  bool nested2 = hero2->opcode() == HloOpcode::kTranspose && !tiled2;
  if (reduce1 && reduce2) {
    ReductionDimensions a = GetReductionKindAndContiguousComponents(*hero1);
    ReductionDimensions b = GetReductionKindAndContiguousComponents(*hero2);
    if (a.is_row_reduction != b.is_row_reduction || a.dims != b.dims) return "tiled reductions with different shapes";
  } else if (tiled1 && tiled2) {
    std::optional<NormalizedTranspose> a = NormalizeTranspose(*hero1), b = NormalizeTranspose(*hero2);
    if (a->dims != b->dims || a->permutation != b->permutation) return "tiled transposes with different shapes";
  } else if (((tiled1 || reduce1) && nested2) || (nested1 && (tiled2 || reduce2))) {
    return "a nested transpose with an unnested hero";
  } else if ((tiled1 && reduce2) || (reduce1 && tiled2)) {
    return "a transpose and a reduction";
  }
  if (tiled1 || tiled2) {
    const HloInstruction* fusion1 = hero1->parent()->FusionInstruction();
    const HloInstruction* fusion2 = hero2->parent()->FusionInstruction();
    if (fusion1 != nullptr && fusion2 != nullptr) {
      if (tiled1 && fusion2->IsUserOf(fusion1)) {
        if (!OnlyIntermediatesToRoot(fusion2->fused_parameter(OperandIndex(*fusion2, fusion1)))) {
          return "tiled transpose would become untiled";
        }
      } else if (tiled2 && fusion1->IsUserOf(fusion2)) {
        if (!OnlyIntermediatesToRoot(fusion1->fused_parameter(OperandIndex(*fusion1, fusion2)))) {
          return "tiled transpose would become untiled";
        }
      }
    }
  }
  return "";
}

// XLA's ShapesCompatibleForMultiOutputFusion: one parallel loop can compute
// both.
std::string LoopShapesIncompatibility(const HloInstruction& a, const HloInstruction& b) {
  const HloInstruction* hero1 = RealHeroForMultiOutputFusion(a);
  const HloInstruction* hero2 = RealHeroForMultiOutputFusion(b);
  if (std::string why = HeroesIncompatibility(hero1, hero2); !why.empty()) return why;
  auto loop_shape = [](const HloInstruction* element) -> const Shape& {
    const HloInstruction* hero = FindNonTrivialHero(element);
    if (IsUnnestedReduction(*element) || IsTiledTranspose(*hero)) return hero->operand(0)->shape();
    return element->shape();
  };
  const Shape& l1 = loop_shape(hero1);
  const Shape& l2 = loop_shape(hero2);
  if (EqualIgnoringElementType(l1, l2)) return "";
  if (!l1.IsTuple() && !l2.IsTuple() && IsReshapeOrTransposeBitcast(l1, l2)) return "";
  return "different loop shapes";
}

// ---------------------------------------------------------------- budget

int64_t SharedMemoryUsage(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    int64_t sum = 0;
    for (const HloInstruction* fused : h.fused_instructions_computation()->instructions()) {
      sum += SharedMemoryUsage(*fused);
    }
    return sum;
  }
  if (IsUnnestedReduction(h)) {
    int64_t bytes = 0;
    for (int64_t i = 0; i < h.operand_count() / 2; ++i) bytes += PrimitiveByteWidth(h.operand(i)->shape().element_type());
    if (GetReductionKindAndContiguousComponents(h).is_row_reduction) return 32 * bytes;
    constexpr int64_t kMaxVectorSize = 4;
    return 32 * (kMaxVectorSize * 32 + 1) * bytes;
  }
  return TiledTransposeSharedMemory(h).value_or(0);
}

int64_t UnnestedReductionCount(const HloInstruction& h) {
  if (IsUnnestedReduction(h)) return 1;
  if (h.opcode() != HloOpcode::kFusion) return 0;
  int64_t sum = 0;
  for (const HloInstruction* fused : h.fused_instructions_computation()->instructions()) {
    sum += UnnestedReductionCount(*fused);
  }
  return sum;
}

// XLA's FusionFitsInBudget (not a producer-consumer fusion): shared
// memory, unnested reductions, kernel operands plus outputs.
std::string BudgetExcess(const HloInstruction& a, const HloInstruction& b) {
  if (SharedMemoryUsage(a) + SharedMemoryUsage(b) > kSharedMemoryPerBlock) return "shared memory over budget";
  if (UnnestedReductionCount(a) + UnnestedReductionCount(b) > kMaxUnnestedReductionOutputsPerFusion) {
    return "too many unnested reductions";
  }
  int64_t outputs = SubshapeCount(a.shape()) + SubshapeCount(b.shape());
  if (a.operand_count() + b.operand_count() - 1 + outputs <= kMaxOperandsAndOutputs) return "";
  absl::flat_hash_set<const HloInstruction*> operands(a.operands().begin(), a.operands().end());
  operands.insert(b.operands().begin(), b.operands().end());
  operands.erase(&a);
  operands.erase(&b);
  if (static_cast<int64_t>(operands.size()) + outputs > kMaxOperandsAndOutputs) return "too many operands and outputs";
  return "";
}

// The slice through which `instruction` reads `parent`, if it reads it
// through exactly one.
const HloInstruction* UniqueSlice(const HloInstruction* parent, const HloInstruction* instruction) {
  if (instruction->opcode() == HloOpcode::kSlice) return instruction;
  if (instruction->opcode() != HloOpcode::kFusion) return nullptr;
  const HloInstruction* result = nullptr;
  for (int64_t i = 0; i < instruction->operand_count(); ++i) {
    if (instruction->operand(i) != parent) continue;
    if (result != nullptr) return nullptr;
    const HloInstruction* param = instruction->fused_parameter(i);
    if (param->user_count() != 1) return nullptr;
    result = UniqueSlice(param, param->users()[0]);
    if (result == nullptr) return nullptr;
  }
  return result;
}

// Two fusions reading disjoint slices of a large shared operand gain
// nothing from sharing a kernel.
bool ReadDisjointSlices(const HloInstruction& a, const HloInstruction& b, const HloInstruction* parent) {
  if (parent->shape().IsTuple() || parent->shape().byte_size() < kSmallSharedOperandBytes) return false;
  const HloInstruction* s1 = UniqueSlice(parent, &a);
  const HloInstruction* s2 = UniqueSlice(parent, &b);
  if (s1 == nullptr || s2 == nullptr) return false;
  for (int64_t d = 0; d < parent->shape().rank(); ++d) {
    const SliceDimension& x = s1->attrs().slice[d];
    const SliceDimension& y = s2->attrs().slice[d];
    if (!(x.start < y.limit && y.start < x.limit)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- producers

// An array output of the producer is written over one of its inputs
// (dynamic-update-slice or scatter in place, through bitcasts and tuples).
bool IsInPlaceOp(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kDynamicUpdateSlice || h.opcode() == HloOpcode::kScatter;
}

const HloInstruction* SkipBitcasts(const HloInstruction* h) {
  while (h->opcode() == HloOpcode::kBitcast) h = h->operand(0);
  return h;
}

bool HasInPlaceOutputs(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kFusion) return IsInPlaceOp(h);
  std::vector<const HloInstruction*> sources;
  const HloInstruction* root = h.fused_expression_root();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* operand : root->operands()) sources.push_back(SkipBitcasts(operand));
  } else {
    sources.push_back(SkipBitcasts(root));
  }
  for (const HloInstruction* source : sources) {
    if (IsInPlaceOp(*source) && SkipBitcasts(source->operand(0))->opcode() == HloOpcode::kParameter) return true;
  }
  return false;
}

bool IsPhysicallyTransposing(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* fused : h.fused_instructions_computation()->instructions()) {
      if (IsPhysicallyTransposing(*fused)) return true;
    }
  }
  return h.opcode() == HloOpcode::kCopy ||
         (h.opcode() == HloOpcode::kTranspose &&
          !TransposeIsBitcast(h.operand(0)->shape(), h.shape(), h.dimensions()));
}

bool IsUniversallyLoopFusible(const HloInstruction& h) {
  if (h.IsElementwise() && h.operand_count() > 0 && h.opcode() != HloOpcode::kCopy) return true;
  switch (h.opcode()) {
    case HloOpcode::kCopy: return !IsTiledTranspose(h);
    case HloOpcode::kFusion: return h.fusion_kind() == FusionKind::kLoop;
    case HloOpcode::kBitcast:
      return PrimitiveBitWidth(h.shape().element_type()) == PrimitiveBitWidth(h.operand(0)->shape().element_type());
    case HloOpcode::kBroadcast:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:
    case HloOpcode::kPad:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kReshape:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
      return true;
    default:
      return false;
  }
}

bool IsLoopFusibleAsProducer(const HloInstruction& h) {
  if (!IsFusible(h)) return false;
  if (h.opcode() == HloOpcode::kIota || h.opcode() == HloOpcode::kConstant) return true;
  if (h.opcode() == HloOpcode::kReduce) return !h.shape().IsTuple();
  return IsUniversallyLoopFusible(h);
}

bool IsProducerMultiOutputFusible(const HloInstruction& producer) {
  return !IsMultiOutputFusion(producer) && !HasInPlaceOutputs(producer) && IsLoopFusibleAsProducer(producer) &&
         !IsPhysicallyTransposing(producer);
}

// Multi-output fusions first, then fusions, then unfused ops.
int FusionPriority(const HloInstruction* h) {
  if (IsMultiOutputFusion(*h)) return 2;
  return h->opcode() == HloOpcode::kFusion ? 1 : 0;
}

bool IsInputFusible(const HloInstruction& h) {
  bool scatter = h.opcode() == HloOpcode::kScatter ||
                 (h.opcode() == HloOpcode::kFusion && h.fusion_kind() == FusionKind::kInput &&
                  h.fused_expression_root()->opcode() == HloOpcode::kScatter);
  return IsFusible(h) && (IsInputFusibleReduction(h) || scatter || IsInputFusibleTranspose(h));
}

// ---------------------------------------------------------------- edits

// The fused parameter of `fusion` reading `operand`, added when missing.
HloInstruction* CallParameterFor(HloInstruction* fusion, HloInstruction* operand) {
  HloComputation* body = fusion->fused_instructions_computation();
  for (int64_t i = 0; i < fusion->operand_count(); ++i) {
    if (fusion->operand(i) == operand) return body->parameter_instruction(i);
  }
  int64_t n = body->num_parameters();
  HloInstruction* p = body->AddParameter(HloInstruction::CreateParameter(n, operand->shape(), StrCat("param_", n)));
  fusion->AppendOperand(operand);
  return p;
}

// Replaces every use of `from` by `to`, which may have another shape (a
// fusion turned multi-output hands its users a get-tuple-element).
absl::Status RedirectAllUses(HloInstruction* from, HloInstruction* to) {
  bool was_root = from->IsRoot();
  std::vector<HloInstruction*> users = from->users();
  for (HloInstruction* user : users) {
    if (user != to) user->ReplaceUsesOfOperand(from, to);
  }
  if (was_root) from->parent()->set_root_instruction(to);
  return absl::OkStatus();
}

// XLA's CloneAndAppendInstructionIntoCalledComputation: clones `inst` into
// `fusion`; when it was an operand, the fused parameter reading it now reads
// the clone. With `add_output` (and other users left), the clone becomes
// one more output of `fusion` and those users read it from there.
absl::StatusOr<HloInstruction*> CloneIntoFusion(HloInstruction* fusion, HloInstruction* inst, bool add_output) {
  HloComputation* body = fusion->fused_instructions_computation();
  HloInstruction* clone = body->AddInstruction(inst->CloneWithNewOperands(inst->shape(), inst->operands()));
  for (int64_t i = 0; i < fusion->operand_count(); ++i) {
    if (fusion->operand(i) != inst) continue;
    RETURN_IF_ERROR(body->parameter_instruction(i)->ReplaceAllUsesWith(clone));
    RETURN_IF_ERROR(body->RemoveParameter(i));
    fusion->RemoveOperandAt(i);
    if (inst->user_count() == 0 && !inst->IsRoot()) add_output = false;
    break;
  }
  for (int64_t i = 0; i < clone->operand_count(); ++i) {
    clone->ReplaceOperandWith(i, CallParameterFor(fusion, clone->mutable_operand(i)));
  }
  if (!add_output) return clone;
  HloInstruction* root = body->root_instruction();
  std::vector<HloInstruction*> elements;
  bool new_tuple = root->opcode() != HloOpcode::kTuple;
  if (new_tuple) {
    elements.push_back(root);
  } else {
    elements = root->operands();
  }
  elements.push_back(clone);
  HloInstruction* tuple = body->AddInstruction(HloInstruction::CreateTuple(elements));
  body->set_root_instruction(tuple);
  if (!new_tuple) {
    RETURN_IF_ERROR(body->RemoveInstruction(root));
  }
  HloComputation* parent = fusion->parent();
  if (new_tuple) {
    // The fusion's old single value is now element 0.
    std::vector<HloInstruction*> users = fusion->users();
    bool was_root = fusion->IsRoot();
    *fusion->mutable_shape() = tuple->shape();
    HloInstruction* gte = parent->AddInstruction(HloInstruction::CreateGetTupleElement(fusion, 0));
    RETURN_IF_ERROR(fusion->ReplaceUsesWith(users, gte));
    if (was_root) parent->set_root_instruction(gte);
  } else {
    *fusion->mutable_shape() = tuple->shape();
  }
  HloInstruction* gte = parent->AddInstruction(
      HloInstruction::CreateGetTupleElement(fusion, static_cast<int64_t>(elements.size()) - 1));
  RETURN_IF_ERROR(RedirectAllUses(inst, gte));
  return clone;
}

// XLA's MergeFusionInstructionIntoMultiOutput: `merged`'s fused
// instructions are cloned (named "<name>.clone") next to `fusion`, then
// fused into it from the root down; the values other instructions still
// read become outputs of `fusion`.
absl::Status MergeFusionIntoMultiOutput(HloInstruction* fusion, HloInstruction* merged) {
  HloComputation* parent = fusion->parent();
  HloComputation* inner = merged->fused_instructions_computation();
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> old_to_new;
  std::vector<HloInstruction*> unfused;
  absl::flat_hash_set<const HloInstruction*> new_roots;
  std::vector<std::pair<const HloInstruction*, int64_t>> old_outputs;
  const HloInstruction* inner_root = inner->root_instruction();
  for (HloInstruction* h : inner->MakeInstructionPostOrder()) {
    if (h->opcode() == HloOpcode::kParameter) {
      old_to_new[h] = merged->mutable_operand(h->parameter_number());
      continue;
    }
    if (h == inner_root && h->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* gte : merged->users()) {
        if (gte->opcode() != HloOpcode::kGetTupleElement) {
          return absl::InternalError(StrCat("multi_output_fusion: ", merged->name(), " has a non-tuple user"));
        }
        old_outputs.push_back({h->operand(gte->tuple_index()), gte->tuple_index()});
        bool outside_user = gte->IsRoot();
        for (const HloInstruction* u : gte->users()) outside_user |= u != fusion;
        if (outside_user) new_roots.insert(old_to_new.at(old_outputs.back().first));
      }
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* operand : h->operands()) operands.push_back(old_to_new.at(operand));
    std::unique_ptr<HloInstruction> clone = h->CloneWithNewOperands(h->shape(), operands);
    clone->SetName(StrCat(h->name(), ".clone"));
    HloInstruction* added = parent->AddInstruction(std::move(clone));
    unfused.push_back(added);
    old_to_new[h] = added;
  }
  if (inner_root->opcode() == HloOpcode::kTuple) {
    for (const auto& [old_root, index] : old_outputs) {
      HloInstruction* new_root = old_to_new.at(old_root);
      std::vector<HloInstruction*> users = merged->users();
      for (HloInstruction* gte : users) {
        if (gte->tuple_index() != index) continue;
        RETURN_IF_ERROR(RedirectAllUses(gte, new_root));
        RETURN_IF_ERROR(parent->RemoveInstruction(gte));
      }
    }
  } else {
    HloInstruction* root = unfused.empty() ? merged->mutable_operand(inner_root->parameter_number()) : unfused.back();
    new_roots.insert(root);
    RETURN_IF_ERROR(RedirectAllUses(merged, root));
  }
  RETURN_IF_ERROR(parent->RemoveInstruction(merged));
  RETURN_IF_ERROR(parent->parent()->RemoveEmbeddedComputation(inner));
  for (auto it = unfused.rbegin(); it != unfused.rend(); ++it) {
    HloInstruction* h = *it;
    ASSIGN_OR_RETURN(HloInstruction* clone, CloneIntoFusion(fusion, h, new_roots.contains(h)));
    RETURN_IF_ERROR(parent->RemoveInstruction(h));
  }
  return absl::OkStatus();
}

// XLA's FuseInstructionIntoMultiOutput for an unfused op, which is then
// removed.
absl::Status FuseOpIntoMultiOutput(HloInstruction* fusion, HloInstruction* op) {
  ASSIGN_OR_RETURN(HloInstruction* clone, CloneIntoFusion(fusion, op, /*add_output=*/true));
  return fusion->parent()->RemoveInstruction(op);
}

// ---------------------------------------------------------------- the pass

class MultiOutputFuser {
 public:
  MultiOutputFuser(HloComputation& computation, HloPassInterface& pass, const DeviceDescription* device)
      : computation_(computation), pass_(pass), reachability_(computation), device_(device) {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    std::vector<HloInstruction*> order = computation_.MakeInstructionPostOrder();
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = static_cast<int64_t>(i);
    absl::flat_hash_set<const HloInstruction*> removed;
    computation_.set_removal_listener([&removed](const HloInstruction* h) { removed.insert(h); });
    absl::Status status = absl::OkStatus();
    // Uses before defs: the get-tuple-elements a fusion adds land before
    // the instructions still to visit.
    for (auto it = order.rbegin(); it != order.rend() && status.ok(); ++it) {
      HloInstruction* producer = *it;
      if (removed.contains(producer)) continue;
      if (producer->opcode() == HloOpcode::kConstant || IsCustomFusion(*producer)) continue;
      absl::StatusOr<bool> siblings = FuseSiblings(producer, removed);
      if (!siblings.ok()) {
        status = siblings.status();
        break;
      }
      changed |= *siblings;
      absl::StatusOr<bool> consumer = FuseIntoConsumer(producer);
      if (!consumer.ok()) {
        status = consumer.status();
        break;
      }
      changed |= *consumer;
    }
    computation_.set_removal_listener(nullptr);
    if (!status.ok()) return status;
    return changed;
  }

 private:
  bool IsSiblingCandidate(const HloInstruction& h) {
    if (h.users().empty() || !IsFusibleAsMultiOutputFusionRoot(h) || IsNestableVariadicReduction(h)) return false;
    if (!IsMultiOutputFusion(h)) return true;
    for (const HloInstruction* u : h.users()) {
      if (u->opcode() != HloOpcode::kGetTupleElement) return false;
    }
    return true;
  }

  // The users of `h` in the order of the printed module (post-order; what a
  // dumped and re-read module's users lists hold), instructions made by this
  // pass after the others in the order they were made: ties between equal
  // candidates then fall the same way on a module and on its dump.
  std::vector<HloInstruction*> UsersInTextOrder(const HloInstruction* h) {
    std::vector<HloInstruction*> users = h->users();
    auto key = [&](const HloInstruction* u) {
      auto it = position_.find(u);
      return it != position_.end() ? std::make_pair(0, it->second) : std::make_pair(1, u->unique_id());
    };
    std::stable_sort(users.begin(), users.end(),
                     [&](const HloInstruction* a, const HloInstruction* b) { return key(a) < key(b); });
    return users;
  }

  bool Connected(const HloInstruction* a, const HloInstruction* b) {
    return reachability_.Reaches(a, b) || reachability_.Reaches(b, a);
  }

  // XLA's FuseSiblings: the users of `parent` that can share its read.
  absl::StatusOr<bool> FuseSiblings(HloInstruction* parent, const absl::flat_hash_set<const HloInstruction*>& removed) {
    if (IsEffectiveScalar(parent->shape())) return false;
    std::vector<HloInstruction*> siblings;
    for (HloInstruction* u : UsersInTextOrder(parent)) {
      if (IsSiblingCandidate(*u)) siblings.push_back(u);
    }
    std::stable_sort(siblings.begin(), siblings.end(),
                     [](const HloInstruction* a, const HloInstruction* b) { return FusionPriority(a) > FusionPriority(b); });
    bool changed = false;
    for (size_t i = 0; i < siblings.size(); ++i) {
      if (siblings[i]->opcode() != HloOpcode::kFusion) continue;
      for (size_t j = i + 1; j < siblings.size();) {
        HloInstruction* remaining = siblings[i];
        HloInstruction* fused = siblings[j];
        if (Connected(remaining, fused) || !LoopShapesIncompatibility(*remaining, *fused).empty() ||
            ReadDisjointSlices(*remaining, *fused, parent) || !LegalToFuse(*remaining, *fused)) {
          ++j;
          continue;
        }
        if (fused->opcode() == HloOpcode::kFusion) {
          bool input = fused->fusion_kind() == FusionKind::kInput;
          RETURN_IF_ERROR(MergeFusionIntoMultiOutput(remaining, fused));
          if (input) remaining->set_fusion_kind(FusionKind::kInput);
        } else {
          RETURN_IF_ERROR(FuseOpIntoMultiOutput(remaining, fused));
        }
        pass_.BumpCounter("sibling fused into a multi-output fusion");
        changed = true;
        siblings.erase(siblings.begin() + j);
        reachability_.Invalidate();
      }
    }
    return changed;
  }

  // XLA's LegalToFuse for siblings (`a` is a fusion).
  bool LegalToFuse(const HloInstruction& a, const HloInstruction& b) {
    if (a.fused_expression_root()->opcode() == HloOpcode::kDynamicUpdateSlice ||
        (b.opcode() == HloOpcode::kFusion && b.fused_expression_root()->opcode() == HloOpcode::kDynamicUpdateSlice)) {
      return false;
    }
    return BudgetExcess(a, b).empty();
  }

  // No other operand of `consumer` depends on `producer` (fusing would
  // make a cycle). Nor does a control predecessor: the fusion inherits it,
  // and one that reads the producer's value would then wait on the fusion
  // that computes it (XLA's OperandReachableFromProducer checks operands
  // only; the corpus's copy_insertion_test module with a control
  // predecessor showed the cycle).
  bool OperandReachableFromProducer(const HloInstruction* producer, const HloInstruction* consumer) {
    for (const auto* predecessors : {&consumer->operands(), &consumer->control_predecessors()}) {
      for (const HloInstruction* p : *predecessors) {
        if (p != producer && reachability_.Reaches(producer, p)) return true;
      }
    }
    return false;
  }

  bool ProducerCandidateIsFusible(const HloInstruction* producer, const HloInstruction* consumer) {
    if (!IsFusibleAsMultiOutputFusionRoot(*consumer) || !LoopShapesIncompatibility(*consumer, *producer).empty() ||
        OperandReachableFromProducer(producer, consumer) || !BudgetExcess(*producer, *consumer).empty()) {
      return false;
    }
    if (device_ == nullptr) return true;
    // XLA: "will generate too large IR", "will execute slower if fused". A
    // model per question: the fusions before it changed the kernels.
    GpuPerformanceModel model(*device_);
    if (model.ProducerConsumerMergedTooLarge(*producer, *consumer)) return false;
    GpuPerformanceModel::RunTimes t = model.EstimateRunTimesForMultiOutputFusion(*producer, *consumer);
    return t.time_fused <= t.time_unfused;
  }

  // XLA's producer-consumer multi-output fusion of `producer` into its
  // preferred user.
  absl::StatusOr<bool> FuseIntoConsumer(HloInstruction* producer) {
    if (!IsProducerMultiOutputFusible(*producer)) return false;
    // With one user that is not a multi-output fusion, FusionMerger already
    // decided against it.
    if (producer->user_count() == 1 && !IsMultiOutputFusion(*producer->users()[0])) return false;
    HloInstruction* consumer = nullptr;
    for (HloInstruction* u : UsersInTextOrder(producer)) {
      if (!ProducerCandidateIsFusible(producer, u)) continue;
      if (consumer == nullptr || FusionPriority(u) > FusionPriority(consumer)) consumer = u;
    }
    if (consumer == nullptr) return false;
    HloInstruction* fusion = consumer;
    if (consumer->opcode() != HloOpcode::kFusion) {
      FusionKind kind = IsInputFusible(*consumer) || IsInputFusible(*producer) ? FusionKind::kInput : FusionKind::kLoop;
      ASSIGN_OR_RETURN(HloInstruction* wrapped, WrapInFusion(consumer, kind));
      fusion = wrapped;
    }
    if (producer->opcode() == HloOpcode::kFusion) {
      RETURN_IF_ERROR(MergeFusionIntoMultiOutput(fusion, producer));
    } else {
      RETURN_IF_ERROR(FuseOpIntoMultiOutput(fusion, producer));
    }
    pass_.BumpCounter("producer fused into its consumer as an extra output");
    reachability_.Invalidate();
    return true;
  }

  HloComputation& computation_;
  HloPassInterface& pass_;
  ReachabilityQuery reachability_;
  absl::flat_hash_map<const HloInstruction*, int64_t> position_;  // in the post-order Run visits
  const DeviceDescription* device_;  // null: no cost checks
};

// XLA's GetFusibleComputations: not fused computations, and not those other
// ops call (reducers, sort comparators, called functions); while and
// conditional bodies are.
std::vector<HloComputation*> FusibleComputations(const HloModule& module) {
  std::vector<HloComputation*> order = module.MakeComputationPostOrder();
  absl::flat_hash_set<const HloComputation*> excluded;
  for (const HloComputation* c : order) {
    for (const HloInstruction* h : c->instructions()) {
      HloOpcode op = h->opcode();
      if (op == HloOpcode::kWhile || op == HloOpcode::kConditional || op == HloOpcode::kFusion) continue;
      for (const HloComputation* called : h->called_computations()) excluded.insert(called);
    }
  }
  std::vector<HloComputation*> out;
  for (HloComputation* c : order) {
    if (!c->IsFusionComputation() && !excluded.contains(c)) out.push_back(c);
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> GpuMultiOutputFusion::RunImpl(HloModule& module, PassRunContext*) {
  std::optional<DeviceDescription> device;
  if (!options_.device.empty()) {
    absl::StatusOr<DeviceDescription> d = DeviceByName(options_.device);
    if (!d.ok()) return absl::InvalidArgumentError(StrCat("multi_output_fusion: ", std::string(d.status().message())));
    device = *d;
  }
  bool changed = false;
  for (HloComputation* computation : FusibleComputations(module)) {
    ASSIGN_OR_RETURN(bool c, MultiOutputFuser(*computation, *this, device.has_value() ? &*device : nullptr).Run());
    changed |= c;
  }
  return changed;
}

}  // namespace passlab
