#include "passes/fusion/gpu_fusible.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// Allow-lists, not switches: an opcode added later is unfusible until
// someone checks that the CPU emitters handle it inside a fusion.
bool IsFusibleElementwiseOpcode(HloOpcode op) {
  static const auto* kOps = new absl::flat_hash_set<HloOpcode>{
      HloOpcode::kAbs, HloOpcode::kAdd, HloOpcode::kAnd, HloOpcode::kAtan2, HloOpcode::kBitcastConvert,
      HloOpcode::kCbrt, HloOpcode::kCeil, HloOpcode::kClamp, HloOpcode::kClz, HloOpcode::kCompare,
      HloOpcode::kConvert, HloOpcode::kCopy, HloOpcode::kCos, HloOpcode::kDivide, HloOpcode::kErf,
      HloOpcode::kExp, HloOpcode::kExpm1, HloOpcode::kFloor, HloOpcode::kIsFinite, HloOpcode::kLog,
      HloOpcode::kLog1p, HloOpcode::kLogistic, HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kMultiply,
      HloOpcode::kNegate, HloOpcode::kNot, HloOpcode::kOr, HloOpcode::kPopulationCount, HloOpcode::kPower,
      HloOpcode::kRemainder, HloOpcode::kRoundNearestAfz, HloOpcode::kRoundNearestEven, HloOpcode::kRsqrt,
      HloOpcode::kSelect, HloOpcode::kShiftLeft, HloOpcode::kShiftRightArithmetic,
      HloOpcode::kShiftRightLogical, HloOpcode::kSign, HloOpcode::kSin, HloOpcode::kSqrt,
      HloOpcode::kSubtract, HloOpcode::kTan, HloOpcode::kTanh, HloOpcode::kXor};
  return kOps->contains(op);
}

bool IsFusibleDataMovementOpcode(HloOpcode op) {
  static const auto* kOps = new absl::flat_hash_set<HloOpcode>{
      HloOpcode::kBitcast, HloOpcode::kBroadcast, HloOpcode::kConcatenate, HloOpcode::kDynamicSlice,
      HloOpcode::kIota,    HloOpcode::kPad,       HloOpcode::kReshape,     HloOpcode::kReverse,
      HloOpcode::kSlice,   HloOpcode::kTranspose};
  return kOps->contains(op);
}

bool HasEmittableOperandsAndResult(const HloInstruction& h) {
  if (!IsEmittableArrayShape(h.shape())) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!IsEmittableArrayShape(operand->shape())) return false;
  }
  return true;
}

bool IsPlainInstruction(const HloInstruction& h) {
  return !h.HasSideEffect() && h.control_predecessors().empty() && h.control_successors().empty();
}

void FlattenTuple(HloInstruction* root, std::vector<HloInstruction*>& out) {
  if (root->opcode() != HloOpcode::kTuple) {
    out.push_back(root);
    return;
  }
  for (HloInstruction* operand : root->operands()) FlattenTuple(operand, out);
}

// The fused parameter (or parameters) of `fusion` that read `operand`.
std::vector<int64_t> OperandIndices(const HloInstruction& fusion, const HloInstruction* operand) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    if (fusion.operand(i) == operand) out.push_back(i);
  }
  return out;
}

// The fused parameter of `fusion` for `operand`, added (with the operand) if
// there is none yet.
HloInstruction* ParameterFor(HloInstruction* fusion, HloInstruction* operand) {
  HloComputation* body = fusion->fused_instructions_computation();
  for (int64_t i = 0; i < fusion->operand_count(); ++i) {
    if (fusion->operand(i) == operand) return body->parameter_instruction(i);
  }
  int64_t n = body->num_parameters();
  HloInstruction* p =
      body->AddParameter(HloInstruction::CreateParameter(n, operand->shape(), StrCat("param_", n)));
  fusion->AppendOperand(operand);
  return p;
}

// Clones `producer` into `fusion`'s body, its operands read through fused
// parameters; returns the clone of its (root) value.
HloInstruction* CloneIntoFusion(HloInstruction* fusion, HloInstruction* producer) {
  HloComputation* body = fusion->fused_instructions_computation();
  if (producer->opcode() != HloOpcode::kFusion) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : producer->operands()) operands.push_back(ParameterFor(fusion, operand));
    return body->AddInstruction(producer->CloneWithNewOperands(producer->shape(), operands));
  }
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
  const HloComputation* inner = producer->fused_instructions_computation();
  for (int64_t i = 0; i < inner->num_parameters(); ++i) {
    clones[inner->parameter_instruction(i)] = ParameterFor(fusion, producer->mutable_operand(i));
  }
  for (HloInstruction* h : inner->MakeInstructionPostOrder()) {
    if (h->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : h->operands()) operands.push_back(clones.at(operand));
    clones[h] = body->AddInstruction(h->CloneWithNewOperands(h->shape(), operands));
  }
  return clones.at(inner->root_instruction());
}

// Removes `instruction` (and a fusion's body) when nothing uses it.
absl::Status RemoveIfUnused(HloInstruction* instruction) {
  if (instruction->user_count() != 0 || instruction->IsRoot()) return absl::OkStatus();
  HloComputation* fused =
      instruction->opcode() == HloOpcode::kFusion ? instruction->fused_instructions_computation() : nullptr;
  HloModule* module = instruction->GetModule();
  RETURN_IF_ERROR(instruction->parent()->RemoveInstruction(instruction));
  if (fused != nullptr && fused->FusionInstruction() == instruction) return module->RemoveEmbeddedComputation(fused);
  return absl::OkStatus();
}

// Makes `fusion`'s root a tuple of its output leaves (a multi-output
// fusion) if it is not one yet: its users then read element 0.
absl::Status MakeMultiOutput(HloInstruction* fusion) {
  HloComputation* body = fusion->fused_instructions_computation();
  HloInstruction* root = body->root_instruction();
  if (root->opcode() == HloOpcode::kTuple) return absl::OkStatus();
  if (root->shape().IsTuple()) {
    return absl::InternalError(StrCat("fusion: ", fusion->name(), " has a tuple-shaped root that is not a tuple"));
  }
  body->set_root_instruction(body->AddInstruction(HloInstruction::CreateTuple({root})));
  std::vector<HloInstruction*> users = fusion->users();
  bool was_root = fusion->IsRoot();
  *fusion->mutable_shape() = Shape::Tuple({root->shape()});
  HloInstruction* gte = fusion->parent()->AddInstruction(HloInstruction::CreateGetTupleElement(fusion, 0));
  RETURN_IF_ERROR(fusion->ReplaceUsesWith(users, gte));
  if (was_root) fusion->parent()->set_root_instruction(gte);
  return absl::OkStatus();
}

// Appends `value` (in `fusion`'s body) as a new output; returns its index.
int64_t AddOutput(HloInstruction* fusion, HloInstruction* value) {
  HloComputation* body = fusion->fused_instructions_computation();
  HloInstruction* old_root = body->root_instruction();
  std::vector<HloInstruction*> elements = old_root->operands();
  elements.push_back(value);
  HloInstruction* root = body->AddInstruction(HloInstruction::CreateTuple(elements));
  body->set_root_instruction(root);
  (void)body->RemoveInstruction(old_root);
  *fusion->mutable_shape() = root->shape();
  return static_cast<int64_t>(elements.size()) - 1;
}

// Points the users of `old_value` (outside `fusion`) at element `index`
// of `fusion`.
absl::Status RedirectUsers(HloInstruction* old_value, HloInstruction* fusion, int64_t index) {
  std::vector<HloInstruction*> users;
  for (HloInstruction* u : old_value->users()) {
    if (u != fusion) users.push_back(u);
  }
  bool was_root = old_value->IsRoot();
  if (users.empty() && !was_root) return absl::OkStatus();
  HloInstruction* gte = fusion->parent()->AddInstruction(HloInstruction::CreateGetTupleElement(fusion, index));
  RETURN_IF_ERROR(old_value->ReplaceUsesWith(users, gte));
  if (was_root) old_value->parent()->set_root_instruction(gte);
  return absl::OkStatus();
}

}  // namespace

bool IsEmittableArrayShape(const Shape& shape) {
  if (!shape.IsArray() || !shape.is_static()) return false;
  if (shape.has_layout() && !shape.layout().tiles().empty()) return false;
  switch (shape.element_type()) {
    case PrimitiveType::kPred: case PrimitiveType::kS8: case PrimitiveType::kS16: case PrimitiveType::kS32:
    case PrimitiveType::kS64: case PrimitiveType::kU8: case PrimitiveType::kU16: case PrimitiveType::kU32:
    case PrimitiveType::kU64: case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

bool IsLoopFusibleOp(const HloInstruction& h) {
  if (!IsPlainInstruction(h) || !HasEmittableOperandsAndResult(h)) return false;
  if (h.opcode() == HloOpcode::kConstant) return h.shape().element_count() <= 1;
  if (h.opcode() == HloOpcode::kBitcastConvert &&
      PrimitiveBitWidth(h.shape().element_type()) != PrimitiveBitWidth(h.operand(0)->shape().element_type())) {
    return false;
  }
  return IsFusibleElementwiseOpcode(h.opcode()) || IsFusibleDataMovementOpcode(h.opcode());
}

namespace {

// A reducer the emitters inline: scalar parameters and elementwise ops on
// emittable shapes.
bool IsEmittableReducer(const HloComputation* reducer) {
  if (reducer == nullptr) return false;
  for (const HloInstruction* i : reducer->instructions()) {
    if (i->opcode() == HloOpcode::kParameter) {
      if (!IsEmittableArrayShape(i->shape())) return false;
      continue;
    }
    if (!IsLoopFusibleOp(*i)) return false;
  }
  return true;
}

bool IsFusibleReduceWindow(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kReduceWindow && h.operand_count() == 2 && IsPlainInstruction(h) &&
         HasEmittableOperandsAndResult(h) && IsEmittableReducer(h.to_apply());
}

}  // namespace

bool IsFusibleReduce(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kReduce || h.operand_count() != 2) return false;
  return IsPlainInstruction(h) && HasEmittableOperandsAndResult(h) && IsEmittableReducer(h.to_apply());
}

namespace {

// An op allowed inside the fused computations these passes build.
bool IsFusibleBodyOp(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kParameter) return IsEmittableArrayShape(h.shape());
  if (h.opcode() == HloOpcode::kTuple) return h.IsRoot();
  return IsLoopFusibleOp(h) || IsFusibleReduce(h) || IsFusibleReduceWindow(h);
}

}  // namespace

bool IsFusibleFusion(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kFusion || !IsPlainInstruction(h)) return false;
  if (h.fusion_kind() != FusionKind::kLoop && h.fusion_kind() != FusionKind::kInput) return false;
  if (!h.attrs().output_to_operand_aliasing.empty()) return false;
  // A fused computation shared by several fusions (the verifier rejects it)
  // cannot be edited for one of them.
  if (h.fused_instructions_computation()->FusionInstruction() != &h) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!IsEmittableArrayShape(operand->shape())) return false;
  }
  for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) {
    if (!IsFusibleBodyOp(*i)) return false;
    // Reduces and reduce-windows only as output leaves (heroes): inside a
    // kernel they would be recomputed for every element that reads them.
    if (i->opcode() == HloOpcode::kReduce || i->opcode() == HloOpcode::kReduceWindow) {
      for (const HloInstruction* u : i->users()) {
        if (u->opcode() != HloOpcode::kTuple) return false;
      }
    }
  }
  return true;
}

bool IsFusibleConsumer(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) return IsFusibleFusion(h);
  if (h.operand_count() == 0) return false;
  return IsLoopFusibleOp(h) || IsFusibleReduce(h) || IsFusibleReduceWindow(h);
}

bool IsFusibleProducer(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    return h.fusion_kind() == FusionKind::kLoop && h.shape().IsArray() && IsFusibleFusion(h) &&
           ReductionHero(h) == nullptr;
  }
  return IsLoopFusibleOp(h);
}

bool IsExpensive(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) {
      if (IsExpensive(*i)) return true;
    }
    return false;
  }
  static const auto* kExpensive = new absl::flat_hash_set<HloOpcode>{
      HloOpcode::kAtan2, HloOpcode::kCbrt,     HloOpcode::kCos,          HloOpcode::kErf,
      HloOpcode::kExp,   HloOpcode::kExpm1,    HloOpcode::kLog,          HloOpcode::kLog1p,
      HloOpcode::kLogistic, HloOpcode::kPower, HloOpcode::kSin,          HloOpcode::kTan,
      HloOpcode::kTanh,  HloOpcode::kReduce,   HloOpcode::kReduceWindow, HloOpcode::kDot,
      HloOpcode::kConvolution, HloOpcode::kCustomCall};
  if (kExpensive->contains(h.opcode())) return true;
  // Division and square roots are cheap for f32/f16/bf16 on GPUs (XLA:GPU's
  // exception); integer division and f64 are not.
  bool division = h.opcode() == HloOpcode::kDivide || h.opcode() == HloOpcode::kRemainder ||
                  h.opcode() == HloOpcode::kSqrt || h.opcode() == HloOpcode::kRsqrt;
  if (!division || !h.shape().IsArray()) return false;
  PrimitiveType t = h.shape().element_type();
  return t != PrimitiveType::kF32 && t != PrimitiveType::kF16 && t != PrimitiveType::kBF16;
}

namespace {

bool ReusesElementsThrough(const HloInstruction& user, const HloInstruction* value) {
  if (user.opcode() == HloOpcode::kReduceWindow) return true;
  return user.opcode() == HloOpcode::kBroadcast && user.shape().element_count() > value->shape().element_count();
}

// Whether the value of `value` inside a fused computation is read more than
// once per element along any path to the root.
bool FusedValueReused(const HloInstruction* value) {
  if (value->user_count() > 1) return true;
  for (const HloInstruction* u : value->users()) {
    if (ReusesElementsThrough(*u, value)) return true;
    if (u->opcode() != HloOpcode::kTuple && FusedValueReused(u)) return true;
  }
  return false;
}

}  // namespace

bool ReusesOperandElements(const HloInstruction& consumer, const HloInstruction* operand) {
  if (consumer.opcode() != HloOpcode::kFusion) return ReusesElementsThrough(consumer, operand);
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (consumer.operand(i) == operand && FusedValueReused(consumer.fused_parameter(i))) return true;
  }
  return false;
}

int64_t FusedInstructionCount(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion ? h.fused_instructions_computation()->instruction_count() : 1;
}

int64_t MergedOperandCount(const HloInstruction& a, const HloInstruction& b) {
  absl::flat_hash_set<const HloInstruction*> operands;
  for (const HloInstruction* o : a.operands()) {
    if (o != &b) operands.insert(o);
  }
  for (const HloInstruction* o : b.operands()) {
    if (o != &a) operands.insert(o);
  }
  return static_cast<int64_t>(operands.size());
}

int64_t OutputCount(const HloInstruction& h) {
  int64_t n = 0;
  ForEachSubshape(h.shape(), [&](const Shape& s, const ShapeIndex&) { n += s.IsTuple() ? 0 : 1; });
  return n;
}

const HloInstruction* ReductionHero(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kReduce) return &h;
  if (h.opcode() != HloOpcode::kFusion) return nullptr;
  std::vector<HloInstruction*> roots;
  FlattenTuple(h.fused_expression_root(), roots);
  for (const HloInstruction* r : roots) {
    if (r->opcode() == HloOpcode::kReduce) return r;
  }
  return nullptr;
}

const Shape& IterationShape(const HloInstruction& h) {
  if (const HloInstruction* hero = ReductionHero(h)) return hero->operand(0)->shape();
  if (h.opcode() == HloOpcode::kFusion && h.shape().IsTuple()) {
    std::vector<HloInstruction*> roots;
    FlattenTuple(h.fused_expression_root(), roots);
    return roots.front()->shape();
  }
  return h.shape();
}

bool IsReachable(const HloInstruction* from, const HloInstruction* to) {
  std::vector<const HloInstruction*> stack = {from};
  absl::flat_hash_set<const HloInstruction*> seen = {from};
  while (!stack.empty()) {
    const HloInstruction* h = stack.back();
    stack.pop_back();
    auto visit = [&](const HloInstruction* next) {
      if (next == to) return true;
      if (seen.insert(next).second) stack.push_back(next);
      return false;
    };
    for (const HloInstruction* u : h->users()) {
      if (visit(u)) return true;
    }
    for (const HloInstruction* u : h->control_successors()) {
      if (visit(u)) return true;
    }
  }
  return false;
}

bool ReachabilityQuery::Reaches(const HloInstruction* from, const HloInstruction* to) {
  if (!valid_) {
    position_.clear();
    int64_t i = 0;
    for (const HloInstruction* h : computation_.MakeInstructionPostOrder()) position_[h] = i++;
    valid_ = true;
  }
  int64_t limit = position_.at(to);
  if (position_.at(from) >= limit) return false;
  std::vector<const HloInstruction*> stack = {from};
  absl::flat_hash_set<const HloInstruction*> seen = {from};
  while (!stack.empty()) {
    const HloInstruction* h = stack.back();
    stack.pop_back();
    for (const auto* edges : {&h->users(), &h->control_successors()}) {
      for (const HloInstruction* next : *edges) {
        if (next == to) return true;
        if (position_.at(next) < limit && seen.insert(next).second) stack.push_back(next);
      }
    }
  }
  return false;
}

std::vector<HloComputation*> ProgramComputations(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> programs;
  std::vector<HloComputation*> order = module.MakeComputationPostOrder();
  // Callers come after callees: walk from the entry down.
  programs.insert(module.entry_computation());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!programs.contains(*it)) continue;
    for (const HloInstruction* h : (*it)->instructions()) {
      HloOpcode op = h->opcode();
      if (op != HloOpcode::kWhile && op != HloOpcode::kConditional && op != HloOpcode::kCall) continue;
      for (const HloComputation* c : h->called_computations()) programs.insert(c);
    }
  }
  std::vector<HloComputation*> out;
  for (HloComputation* c : order) {
    if (programs.contains(c)) out.push_back(c);
  }
  return out;
}

bool OutputsHaveDimensions(const HloInstruction& h, const std::vector<int64_t>& dims) {
  bool same = true;
  ForEachSubshape(h.shape(), [&](const Shape& s, const ShapeIndex&) {
    if (s.IsArray() && s.dimensions() != dims) same = false;
  });
  return same;
}

bool SameIterationSpace(const HloInstruction& a, const HloInstruction& b) {
  const HloInstruction* ra = ReductionHero(a);
  const HloInstruction* rb = ReductionHero(b);
  if ((ra == nullptr) != (rb == nullptr)) return false;
  if (ra != nullptr) {
    if (ra->operand(0)->shape().dimensions() != rb->operand(0)->shape().dimensions() ||
        ra->dimensions() != rb->dimensions()) {
      return false;
    }
  }
  const std::vector<int64_t>& dims = IterationShape(a).dimensions();
  if (ra == nullptr && IterationShape(b).dimensions() != dims) return false;
  const std::vector<int64_t>& out = ra != nullptr ? ra->shape().dimensions() : dims;
  return OutputsHaveDimensions(a, out) && OutputsHaveDimensions(b, out);
}

bool WithinMultiOutputLimits(const HloInstruction& a, const HloInstruction& b) {
  return MergedOperandCount(a, b) + OutputCount(a) + OutputCount(b) <= kMaxOperandsAndOutputsPerFusion &&
         FusedInstructionCount(a) + FusedInstructionCount(b) <= kMaxInstructionsPerFusion;
}

FusionKind KindForRoot(const HloInstruction& root) {
  std::vector<HloInstruction*> roots;
  FlattenTuple(const_cast<HloInstruction*>(&root), roots);
  for (const HloInstruction* r : roots) {
    if (r->opcode() == HloOpcode::kReduce) return FusionKind::kInput;
  }
  return FusionKind::kLoop;
}

absl::StatusOr<HloInstruction*> WrapInFusion(HloInstruction* instruction, FusionKind kind) {
  HloComputation* computation = instruction->parent();
  HloModule* module = computation->parent();
  HloComputation* body =
      module->AddEmbeddedComputation(std::make_unique<HloComputation>("fused_computation"));
  std::vector<HloInstruction*> operands;
  std::vector<HloInstruction*> parameters;
  for (HloInstruction* operand : instruction->operands()) {
    auto it = std::find(operands.begin(), operands.end(), operand);
    if (it != operands.end()) {
      parameters.push_back(parameters[it - operands.begin()]);
      continue;
    }
    int64_t n = static_cast<int64_t>(operands.size());
    operands.push_back(operand);
    parameters.push_back(
        body->AddParameter(HloInstruction::CreateParameter(n, operand->shape(), StrCat("param_", n))));
  }
  // `parameters` is per operand slot; the clone reads them in slot order.
  body->set_root_instruction(body->AddInstruction(instruction->CloneWithNewOperands(instruction->shape(), parameters)));
  HloInstruction* fusion = computation->AddInstruction(
      HloInstruction::CreateFusion(instruction->shape(), kind, operands, body), "fusion");
  fusion->set_metadata(instruction->metadata());
  RETURN_IF_ERROR(computation->ReplaceInstruction(instruction, fusion));
  return fusion;
}

absl::Status FuseProducer(HloInstruction* fusion, HloInstruction* producer, bool multi_output) {
  std::vector<int64_t> slots = OperandIndices(*fusion, producer);
  if (slots.empty()) {
    return absl::InternalError(StrCat("fusion: ", producer->name(), " is not an operand of ", fusion->name()));
  }
  HloInstruction* clone = CloneIntoFusion(fusion, producer);
  HloComputation* body = fusion->fused_instructions_computation();
  for (int64_t slot : slots) {
    RETURN_IF_ERROR(body->parameter_instruction(slot)->ReplaceAllUsesWith(clone));
  }
  // Drop the producer's slots (now unused), highest first.
  for (auto it = slots.rbegin(); it != slots.rend(); ++it) {
    RETURN_IF_ERROR(body->RemoveParameter(*it));
    fusion->RemoveOperandAt(*it);
  }
  if (multi_output && (producer->user_count() > 0 || producer->IsRoot())) {
    RETURN_IF_ERROR(MakeMultiOutput(fusion));
    int64_t index = AddOutput(fusion, clone);
    RETURN_IF_ERROR(RedirectUsers(producer, fusion, index));
  }
  return RemoveIfUnused(producer);
}

absl::Status MergeSibling(HloInstruction* fusion, HloInstruction* sibling) {
  RETURN_IF_ERROR(MakeMultiOutput(fusion));
  std::vector<HloInstruction*> values;
  if (sibling->opcode() == HloOpcode::kFusion) {
    // Clone the sibling's body; its outputs are the clones of its root
    // leaves.
    HloComputation* body = fusion->fused_instructions_computation();
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
    const HloComputation* inner = sibling->fused_instructions_computation();
    for (int64_t i = 0; i < inner->num_parameters(); ++i) {
      clones[inner->parameter_instruction(i)] = ParameterFor(fusion, sibling->mutable_operand(i));
    }
    for (HloInstruction* h : inner->MakeInstructionPostOrder()) {
      if (h->opcode() == HloOpcode::kParameter || (h->opcode() == HloOpcode::kTuple && h->IsRoot())) continue;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* operand : h->operands()) operands.push_back(clones.at(operand));
      clones[h] = body->AddInstruction(h->CloneWithNewOperands(h->shape(), operands));
    }
    std::vector<HloInstruction*> leaves;
    FlattenTuple(inner->root_instruction(), leaves);
    for (HloInstruction* leaf : leaves) values.push_back(clones.at(leaf));
  } else {
    values.push_back(CloneIntoFusion(fusion, sibling));
  }
  std::vector<int64_t> indices;
  for (HloInstruction* v : values) indices.push_back(AddOutput(fusion, v));
  if (!sibling->shape().IsTuple()) {
    RETURN_IF_ERROR(RedirectUsers(sibling, fusion, indices.front()));
    return RemoveIfUnused(sibling);
  }
  // A multi-output sibling: its users are get-tuple-elements (of flat
  // tuples, as these passes build them).
  std::vector<HloInstruction*> users = sibling->users();
  for (HloInstruction* u : users) {
    if (u->opcode() != HloOpcode::kGetTupleElement) {
      return absl::InternalError(StrCat("fusion: ", sibling->name(), " is used by a non-get-tuple-element ",
                                        u->name()));
    }
    u->ReplaceOperandWith(0, fusion);
    u->set_index(indices.at(u->tuple_index()));
  }
  if (sibling->IsRoot()) {
    return absl::InternalError(StrCat("fusion: multi-output ", sibling->name(), " is a root"));
  }
  return RemoveIfUnused(sibling);
}

}  // namespace passlab
