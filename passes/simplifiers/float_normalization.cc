#include "passes/simplifiers/float_normalization.h"

#include <algorithm>
#include <initializer_list>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/hlo_dce.h"

namespace passlab {
namespace {

bool OneOf(HloOpcode opcode, std::initializer_list<HloOpcode> opcodes) {
  return std::find(opcodes.begin(), opcodes.end(), opcode) != opcodes.end();
}

// Leaves of `shape` whose element type is `type`.
int64_t CountLeaves(const Shape& shape, PrimitiveType type) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += CountLeaves(s, type);
    return n;
  }
  return shape.element_type() == type ? 1 : 0;
}

Shape WithElementType(const Shape& shape, PrimitiveType type) {
  Shape s = shape;
  s.set_element_type(type);
  return s;
}

class Normalizer {
 public:
  Normalizer(const FloatSupport& support, bool allow_excess_precision, HloModule& module)
      : support_(support), allow_excess_precision_(allow_excess_precision), module_(module), low_(support.LowPrecisionType()), high_(support.HighPrecisionType()) {}

  bool changed() const { return changed_; }

  absl::Status Run() {
    std::vector<HloComputation*> computations = module_.MakeComputationPostOrder();
    for (HloComputation* c : computations) {
      if (c->IsFusionComputation()) continue;
      for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
        if (Skipped(*inst)) continue;
        absl::Status s = IsMultiOutput(*inst) ? HandleMultipleOutputs(inst) : Handle(inst);
        if (!s.ok()) {
          return absl::Status(s.code(), StrCat("normalizing '", inst->name(), "': ", s.message()));
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  // The instructions XLA's FloatNormalization leaves alone, and those with
  // tuples (not modelled here).
  bool Skipped(const HloInstruction& inst) const {
    if (OneOf(inst.opcode(), {HloOpcode::kTuple, HloOpcode::kGetTupleElement, HloOpcode::kConstant,
                              HloOpcode::kDomain, HloOpcode::kParameter, HloOpcode::kFusion, HloOpcode::kConvert,
                              HloOpcode::kCall, HloOpcode::kCustomCall, HloOpcode::kWhile, HloOpcode::kConditional,
                              HloOpcode::kBitcastConvert}) ||
        inst.HasSideEffect()) {
      return true;
    }
    if (!inst.shape().IsArray() && !IsMultiOutput(inst)) return true;
    for (const HloInstruction* op : inst.operands()) {
      if (!op->shape().IsArray()) return true;
    }
    for (const HloComputation* c : inst.called_computations()) {
      if (!c->root_instruction()->shape().IsArray()) return true;
      for (const HloInstruction* p : c->parameter_instructions()) {
        if (!p->shape().IsArray()) return true;
      }
    }
    return false;
  }

  // Sort (and the collectives) with one array output per array operand:
  // each output is handled with its operand (XLA's HandleMultipleOutputs).
  static bool IsMultiOutput(const HloInstruction& inst) {
    if (!OneOf(inst.opcode(), {HloOpcode::kSort, HloOpcode::kAllReduce, HloOpcode::kReduceScatter}) ||
        !inst.shape().IsTuple() || inst.shape().tuple_shapes_size() != inst.operand_count()) {
      return false;
    }
    for (const Shape& s : inst.shape().tuple_shapes()) {
      if (!s.IsArray()) return false;
    }
    return true;
  }

  absl::Status HandleMultipleOutputs(HloInstruction* inst) {
    const int64_t n = inst->operand_count();
    int64_t high = 0, low = 0;
    bool unsupported_operand = false, unsupported_output = false;
    for (int64_t i = 0; i < n; ++i) {
      PrimitiveType in = inst->operand(i)->shape().element_type();
      PrimitiveType out = inst->shape().tuple_shapes(i).element_type();
      high += (in == high_) + (out == high_);
      low += (in == low_) + (out == low_);
      unsupported_operand = unsupported_operand || (in == low_ && !support_.SupportsLowPrecisionOperand(*inst, i));
      unsupported_output = unsupported_output || (out == low_ && !support_.SupportsLowPrecisionOutput(*inst));
    }
    if (low == 0) return absl::OkStatus();
    const bool mixed_ok = support_.SupportsMixedPrecisions(*inst);
    for (int64_t i = 0; i < n; ++i) {
      if (inst->operand(i)->shape().element_type() != low_) continue;
      bool convert = !support_.SupportsLowPrecisionOperand(*inst, i) ||
                     (!mixed_ok && (unsupported_operand || unsupported_output || high > 0));
      if (!convert) continue;
      ConvertOperand(inst, i, low_, high_);
      ++high;
      --low;
    }
    if (!unsupported_output && (mixed_ok || high == 0 || low == 0)) return absl::OkStatus();

    // Outputs in the high type (converted back for the users); comparators
    // and reducers with low-type parameters get high-type clones.
    std::vector<HloComputation*> low_comps;
    bool collective = OneOf(inst->opcode(), {HloOpcode::kAllReduce, HloOpcode::kReduceScatter});
    if (!collective) {
      for (HloComputation* c : inst->called_computations()) {
        bool has_low = c->root_instruction()->shape().element_type() == low_;
        for (const HloInstruction* p : c->parameter_instructions()) has_low = has_low || p->shape().element_type() == low_;
        if (has_low) low_comps.push_back(c);
      }
    }
    Shape wide_shape = inst->shape();
    for (Shape& s : wide_shape.mutable_tuple_shapes()) {
      if (s.element_type() == low_) s.set_element_type(high_);
    }
    HloComputation* comp = inst->parent();
    HloInstruction* wide = comp->AddInstruction(inst->CloneWithNewOperands(wide_shape, inst->operands()));
    wide->set_metadata(inst->metadata());
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < n; ++i) {
      HloInstruction* gte = comp->AddInstruction(HloInstruction::CreateGetTupleElement(wide, i));
      const Shape& original = inst->shape().tuple_shapes(i);
      elements.push_back(original.element_type() == gte->shape().element_type()
                             ? gte
                             : comp->AddInstruction(HloInstruction::CreateConvert(original, gte)));
    }
    HloInstruction* tuple = comp->AddInstruction(HloInstruction::CreateTuple(elements));
    std::string name = inst->name();
    inst->CopyControlDependenciesTo(wide);
    inst->DropAllControlDeps();
    RETURN_IF_ERROR(comp->ReplaceInstruction(inst, tuple));
    wide->SetName(name);
    for (HloComputation* c : low_comps) {
      HloComputation* clone = HighPrecisionClone(c);
      for (int64_t k = 0; k < static_cast<int64_t>(wide->called_computations().size()); ++k) {
        if (wide->called_computations()[k] == c) wide->set_called_computation(k, clone);
      }
    }
    changed_ = true;
    return absl::OkStatus();
  }

  // `x` converted to `to` (a convert's operand when x = convert(y) with y of
  // type `to` the low type: widening is exact, so narrowing it back is y).
  HloInstruction* ConvertTo(HloInstruction* x, PrimitiveType to) {
    if (x->opcode() == HloOpcode::kConvert && x->operand(0)->shape().element_type() == to && to == low_) {
      return x->mutable_operand(0);
    }
    HloInstruction* c = x->parent()->AddInstruction(
        HloInstruction::CreateConvert(WithElementType(x->shape(), to), x));
    c->set_metadata(x->metadata());
    return c;
  }

  void ConvertOperand(HloInstruction* inst, int64_t i, PrimitiveType from, PrimitiveType to) {
    HloInstruction* operand = inst->mutable_operand(i);
    if (operand->shape().element_type() != from) return;
    inst->ReplaceOperandWith(i, ConvertTo(operand, to));
    changed_ = true;
  }

  // Recreates `inst` with a high-precision result followed by a convert back
  // to the low type for its users; returns the new instruction.
  absl::StatusOr<HloInstruction*> ChangeOutputToHigh(HloInstruction* inst) {
    if (inst->shape().element_type() != low_) return inst;
    HloComputation* c = inst->parent();
    std::string name = inst->name();
    HloInstruction* wide = c->AddInstruction(
        inst->CloneWithNewOperands(WithElementType(inst->shape(), high_), inst->operands()));
    wide->set_metadata(inst->metadata());
    HloInstruction* back = c->AddInstruction(HloInstruction::CreateConvert(inst->shape(), wide));
    back->set_metadata(inst->metadata());
    // Excess precision is allowed (XLA's default): a user that widens the
    // result again reads the wide value directly.
    std::vector<HloInstruction*> users = inst->users();
    for (HloInstruction* user : users) {
      if (allow_excess_precision_ && user->opcode() == HloOpcode::kConvert &&
          user->shape().element_type() == high_) {
        RETURN_IF_ERROR(user->ReplaceAllUsesWith(wide));
      }
    }
    inst->CopyControlDependenciesTo(wide);
    inst->DropAllControlDeps();
    RETURN_IF_ERROR(c->ReplaceInstruction(inst, back));
    wide->SetName(name);
    changed_ = true;
    return wide;
  }

  // A copy of `comp` taking and returning the high type where it had the
  // low type; the body still computes as before (converts at the edges).
  HloComputation* HighPrecisionClone(HloComputation* comp) {
    HloComputation* clone = module_.AddEmbeddedComputation(
        std::make_unique<HloComputation>(StrCat(comp->name(), "_", PrimitiveTypeName(high_))));
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* p : comp->parameter_instructions()) {
      const Shape& s = p->shape();
      HloInstruction* np = clone->AddParameter(HloInstruction::CreateParameter(
          p->parameter_number(), s.element_type() == low_ ? WithElementType(s, high_) : s, p->name()));
      map[p] = s.element_type() == low_ ? ConvertTo(np, low_) : np;
    }
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kParameter) continue;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
      HloInstruction* copy = clone->AddInstruction(inst->CloneWithNewOperands(inst->shape(), operands));
      copy->set_metadata(inst->metadata());
      map[inst] = copy;
    }
    HloInstruction* root = map.at(comp->root_instruction());
    clone->set_root_instruction(root->shape().element_type() == low_ ? ConvertTo(root, high_) : root);
    return clone;
  }

  absl::Status Handle(HloInstruction* inst) {
    int64_t high = 0, low = 0;
    auto count = [&](const Shape& s) {
      high += CountLeaves(s, high_);
      low += CountLeaves(s, low_);
    };
    for (const HloInstruction* op : inst->operands()) count(op->shape());
    count(inst->shape());
    // Reducers of collectives must not be touched (XLA).
    bool collective = OneOf(inst->opcode(), {HloOpcode::kAllReduce, HloOpcode::kReduceScatter});
    std::vector<HloComputation*> low_comps;
    if (!collective) {
      for (HloComputation* c : inst->called_computations()) {
        int64_t before = low;
        count(c->root_instruction()->shape());
        for (const HloInstruction* p : c->parameter_instructions()) count(p->shape());
        if (low > before) low_comps.push_back(c);
      }
    }

    // Operands the backend cannot read in the low type.
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      if (inst->operand(i)->shape().element_type() == low_ && !support_.SupportsLowPrecisionOperand(*inst, i)) {
        ConvertOperand(inst, i, low_, high_);
        --low;
        ++high;
      }
    }
    // A result the backend cannot produce in the low type.
    if (inst->shape().element_type() == low_ && !support_.SupportsLowPrecisionOutput(*inst)) {
      ASSIGN_OR_RETURN(HloInstruction* wide, ChangeOutputToHigh(inst));
      inst = wide;
      --low;
      ++high;
    }
    if (support_.SupportsMixedPrecisions(*inst) || low == 0 || high == 0) return absl::OkStatus();

    // Mixed but not supported: all low if the high operands only reach the
    // output at its (low) precision...
    if (inst->called_computations().empty() && inst->shape().element_type() == low_) {
      bool can_use_low = true;
      for (int64_t i = 0; i < inst->operand_count() && can_use_low; ++i) {
        if (inst->operand(i)->shape().element_type() == low_) continue;
        can_use_low = FloatSupport::EffectiveOperandPrecisionIsOutputPrecision(*inst, i) &&
                      support_.SupportsLowPrecisionOperand(*inst, i);
      }
      if (can_use_low) {
        for (int64_t i = 0; i < inst->operand_count(); ++i) ConvertOperand(inst, i, high_, low_);
        return absl::OkStatus();
      }
    }
    // ... else all high, reducers included.
    ASSIGN_OR_RETURN(HloInstruction* wide, ChangeOutputToHigh(inst));
    inst = wide;
    for (int64_t i = 0; i < inst->operand_count(); ++i) ConvertOperand(inst, i, low_, high_);
    for (HloComputation* c : low_comps) {
      HloComputation* clone = HighPrecisionClone(c);
      for (int64_t k = 0; k < static_cast<int64_t>(inst->called_computations().size()); ++k) {
        if (inst->called_computations()[k] == c) inst->set_called_computation(k, clone);
      }
      changed_ = true;
    }
    return absl::OkStatus();
  }

  const FloatSupport& support_;
  bool allow_excess_precision_;
  HloModule& module_;
  PrimitiveType low_, high_;
  bool changed_ = false;
};

}  // namespace

FloatNormalization::FloatNormalization(FloatNormalizationOptions options)
    : support_(options.support != nullptr ? std::move(options.support) : std::make_shared<GpuFloatSupport>()),
      allow_excess_precision_(options.allow_excess_precision),
      name_(StrCat("float-normalization-", PrimitiveTypeName(support_->LowPrecisionType()))) {}

absl::StatusOr<bool> FloatNormalization::RunImpl(HloModule& module, PassRunContext*) {
  Normalizer normalizer(*support_, allow_excess_precision_, module);
  RETURN_IF_ERROR(normalizer.Run());
  if (!normalizer.changed()) return false;
  // Converts made dead (excess precision, replaced operands) go now, as XLA
  // runs DCE after this pass.
  if (absl::StatusOr<bool> dce = HloDCE().Run(module); !dce.ok()) return dce.status();
  return true;
}

}  // namespace passlab
