#include "passes/simplifiers/algebraic_simplifier.h"

#include <cmath>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/str_util.h"
#include "passes/simplifiers/algsimp_internal.h"

namespace passlab {
namespace algsimp {

HloInstruction* RuleContext::Add(std::unique_ptr<HloInstruction> inst) {
  if (inst->metadata().empty()) inst->set_metadata(anchor_->metadata());
  HloInstruction* added = anchor_->parent()->AddInstruction(std::move(inst));
  added_.push_back(added);
  return added;
}

HloInstruction* RuleContext::Constant(const Shape& shape, double value) {
  Literal scalar(Shape::Scalar(shape.element_type()));
  if (IsIntegralType(shape.element_type()) || shape.element_type() == PrimitiveType::kPred) {
    scalar.SetInt(0, static_cast<int64_t>(value));
  } else if (IsComplexType(shape.element_type())) {
    scalar.SetComplex(0, {value, 0});
  } else {
    scalar.SetDouble(0, value);
  }
  HloInstruction* c = Add(HloInstruction::CreateConstant(std::move(scalar)));
  if (shape.rank() == 0) return c;
  return Add(HloInstruction::CreateBroadcast(shape, c, {}));
}

HloComputation* RuleContext::ScalarReducer(HloOpcode op, PrimitiveType type) {
  auto key = std::make_pair(op, type);
  if (auto it = reducers_->find(key); it != reducers_->end()) return it->second;
  HloModule* m = module();
  Shape scalar = Shape::Scalar(type);
  auto c = std::make_unique<HloComputation>(StrCat(HloOpcodeString(op), "_", PrimitiveTypeName(type)));
  HloInstruction* x = c->AddParameter(HloInstruction::CreateParameter(0, scalar, "x"));
  HloInstruction* y = c->AddParameter(HloInstruction::CreateParameter(1, scalar, "y"));
  c->set_root_instruction(c->AddInstruction(HloInstruction::CreateBinary(scalar, op, x, y)));
  HloComputation* added = m->AddEmbeddedComputation(std::move(c));
  (*reducers_)[key] = added;
  return added;
}

namespace {

// Calls `pred` on every element of the constant `inst` unwraps to; false when
// it is not a constant with known values.
template <typename Pred>
bool AllElements(const HloInstruction* inst, Pred pred) {
  while (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsArray() || inst->literal().elided()) {
    return false;
  }
  const Literal& l = inst->literal();
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (!pred(l, i)) return false;
  }
  return true;
}

}  // namespace

bool IsAll(const HloInstruction* inst, double value) {
  PrimitiveType t = inst->shape().element_type();
  if (IsIntegralType(t) || t == PrimitiveType::kPred) {
    if (value != std::floor(value)) return false;
    auto v = static_cast<int64_t>(value);
    if (IsUnsignedIntegralType(t)) {
      if (v < 0) return false;
      return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetUint(i) == static_cast<uint64_t>(v); });
    }
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetInt(i) == v; });
  }
  if (IsComplexType(t)) {
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetComplex(i) == std::complex<double>(value, 0); });
  }
  return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetDouble(i) == value; });
}

namespace {

bool IsAllExtreme(const HloInstruction* inst, PrimitiveType type, bool max) {
  if (inst->shape().element_type() != type) return false;
  if (IsFloatingPointType(type)) {
    Literal probe(Shape::Scalar(type));
    probe.SetDouble(0, std::numeric_limits<double>::infinity());
    bool has_inf = std::isinf(probe.GetDouble(0));
    if (has_inf) {
      double want = max ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
      return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetDouble(i) == want; });
    }
    // Types without infinities saturate to their largest finite value.
    probe.SetDouble(0, max ? std::numeric_limits<double>::max() : std::numeric_limits<double>::lowest());
    double want = probe.GetDouble(0);
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetDouble(i) == want; });
  }
  if (type == PrimitiveType::kPred) {
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetInt(i) == (max ? 1 : 0); });
  }
  int bits = PrimitiveBitWidth(type);
  if (IsUnsignedIntegralType(type)) {
    uint64_t want = max ? (bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1) : 0;
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetUint(i) == want; });
  }
  if (IsSignedIntegralType(type)) {
    int64_t want = max ? (bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1)
                       : (bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1)));
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetInt(i) == want; });
  }
  return false;
}

}  // namespace

bool IsAllMaxValue(const HloInstruction* inst, PrimitiveType type) { return IsAllExtreme(inst, type, true); }
bool IsAllMinValue(const HloInstruction* inst, PrimitiveType type) { return IsAllExtreme(inst, type, false); }

bool IsEffectiveScalarConstant(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kConstant && inst->shape().IsArray() && inst->shape().element_count() == 1 &&
         !inst->literal().elided();
}

bool IsAllFpConstantPowerOf2(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  if (!IsEffectiveScalarConstant(inst) || IsComplex(inst)) return false;
  if (!IsFloat(inst) && !IsInt(inst)) return false;
  int exp = 0;
  double mantissa = std::frexp(inst->literal().GetDouble(0), &exp);
  return mantissa == 0.5 || mantissa == -0.5;
}

namespace {

bool AnyOperandComplex(const HloInstruction* inst) {
  for (const HloInstruction* op : inst->operands()) {
    if (op->shape().IsArray() && IsComplexType(op->shape().element_type())) return true;
  }
  return false;
}

}  // namespace

bool IsPositive(const HloInstruction* inst, const AlgebraicSimplifierOptions& options) {
  if (AnyOperandComplex(inst)) return false;
  PrimitiveType t = inst->shape().element_type();
  switch (inst->opcode()) {
    case HloOpcode::kGetTupleElement: {
      // Output 2 of cuDNN's batch-norm training call (the inverse stddev).
      const HloInstruction* call = inst->operand(0);
      return call->opcode() == HloOpcode::kCustomCall && !options.cudnn_batchnorm_forward_training_metadata.empty() &&
             call->custom_call_target() == options.cudnn_batchnorm_forward_training_metadata && inst->tuple_index() == 2;
    }
    case HloOpcode::kPower:
      if (IsSignedIntegralType(t)) return false;
      return IsPositive(inst->operand(0), options);
    case HloOpcode::kAbs:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSqrt:
      return IsPositive(inst->operand(0), options);
    case HloOpcode::kMultiply:
      if (IsSignedIntegralType(t)) return false;
      return inst->operand(0) == inst->operand(1) && IsPositive(inst->operand(0), options);
    default:
      return false;
  }
}

bool IsNonNegative(const HloInstruction* inst, const AlgebraicSimplifierOptions& options) {
  if (AnyOperandComplex(inst)) return false;
  PrimitiveType t = inst->shape().element_type();
  switch (inst->opcode()) {
    case HloOpcode::kMultiply:
      return inst->operand(0) == inst->operand(1) && !IsSignedIntegralType(t);
    case HloOpcode::kExp:
      return true;
    case HloOpcode::kIota: {
      if (!IsSignedIntegralType(t)) return true;
      int bits = PrimitiveBitWidth(t);
      if (bits >= 64) return true;
      return static_cast<uint64_t>(inst->shape().dimensions(inst->iota_dimension())) <= (uint64_t{1} << (bits - 1));
    }
    case HloOpcode::kAbs:
      if (!IsSignedIntegralType(t)) return true;
      return IsNonNegative(inst->operand(0), options);
    case HloOpcode::kBroadcast:
      return IsNonNegative(inst->operand(0), options);
    case HloOpcode::kConstant: {
      if (!IsEffectiveScalarConstant(inst) || IsComplexType(t) || t == PrimitiveType::kPred) return false;
      if (IsIntegralType(t)) return IsUnsignedIntegralType(t) || inst->literal().GetInt(0) >= 0;
      double v = inst->literal().GetDouble(0);
      return !std::signbit(v) && !std::isnan(v);
    }
    case HloOpcode::kMinimum:
      return IsNonNegative(inst->operand(0), options) && IsNonNegative(inst->operand(1), options);
    case HloOpcode::kMaximum:
      return IsNonNegative(inst->operand(0), options) || IsNonNegative(inst->operand(1), options);
    case HloOpcode::kPower:
      return !IsSignedIntegralType(t) && IsNonNegative(inst->operand(0), options);
    case HloOpcode::kSelect:
      return IsNonNegative(inst->operand(1), options) && IsNonNegative(inst->operand(2), options);
    default:
      return IsPositive(inst, options);
  }
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::optional<HloOpcode> ScalarReducerOpcode(const HloComputation* c) {
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* r = c->root_instruction();
  if (r->operand_count() != 2 || !r->shape().IsScalar()) return std::nullopt;
  const HloInstruction* p0 = c->parameter_instruction(0);
  const HloInstruction* p1 = c->parameter_instruction(1);
  if (!((r->operand(0) == p0 && r->operand(1) == p1) || (r->operand(0) == p1 && r->operand(1) == p0))) {
    return std::nullopt;
  }
  return r->opcode();
}

}  // namespace algsimp

namespace {

std::vector<algsimp::Rule> AllRules() {
  std::vector<algsimp::Rule> rules;
  for (auto list : {algsimp::ArithmeticRules(), algsimp::ShapeRules(), algsimp::ReduceRules(), algsimp::DotRules(),
                    algsimp::GatherRules()}) {
    for (algsimp::Rule& r : list) rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace

std::vector<std::string_view> AlgebraicSimplifier::RuleNames() {
  std::vector<std::string_view> names;
  for (const algsimp::Rule& r : AllRules()) names.push_back(r.name);
  return names;
}

namespace {

// One option: its spec and where it lives in the struct.
struct OptionField {
  PassOptionSpec spec;
  bool AlgebraicSimplifierOptions::*field;
};

const std::vector<OptionField>& OptionFields() {
  using O = AlgebraicSimplifierOptions;
  static const auto* fields = new std::vector<OptionField>{
      {{"is_layout_sensitive", PassOptionType::kBool, "false", "Keep layouts exactly; skip rules that cannot."}, &O::is_layout_sensitive},
      {{"run_to_fixed_point", PassOptionType::kBool, "true", "Repeat sweeps until nothing changes."}, &O::run_to_fixed_point},
      {{"enable_fast_math", PassOptionType::kBool, "false", "Allow rewrites exact only without NaN/Inf."}, &O::enable_fast_math},
      {{"enable_floats_are_real", PassOptionType::kBool, "false", "Reassociate floats as reals."}, &O::enable_floats_are_real},
      {{"minmax_propagate_nan", PassOptionType::kBool, "true", "min/max propagate NaN (enables max(x,-inf) => x for floats)."}, &O::minmax_propagate_nan},
      {{"enable_dot_strength_reduction", PassOptionType::kBool, "true", "Rewrite degenerate dots to multiply/reduce."}, &O::enable_dot_strength_reduction},
      {{"enable_dot_to_multiply_rewrite", PassOptionType::kBool, "true", "Rewrite dots without contraction to multiply."}, &O::enable_dot_to_multiply_rewrite},
      {{"enable_sink_broadcast", PassOptionType::kBool, "true", "Sink broadcasts below elementwise ops."}, &O::enable_sink_broadcast},
      {{"enable_broadcast_degenerate_dimension", PassOptionType::kBool, "true", "Drop degenerate dims of broadcast operands."}, &O::enable_broadcast_degenerate_dimension},
      {{"enable_window_reduce_to_reduce_replacement", PassOptionType::kBool, "true", "Rewrite reduce-windows that are reduces."}, &O::enable_window_reduce_to_reduce_replacement},
      {{"enable_reduce_of_reshape", PassOptionType::kBool, "true", "Move reduces above reshapes."}, &O::enable_reduce_of_reshape},
      {{"unconditionally_simplify_reduce_of_transpose_or_reshape", PassOptionType::kBool, "false", "Move reduces above any transpose/reshape."}, &O::unconditionally_simplify_reduce_of_transpose_or_reshape},
      {{"enable_unconditional_reduce_of_concat_replacement", PassOptionType::kBool, "true", "Split reduces of concatenates whose operands differ in shape."}, &O::enable_unconditional_reduce_of_concat_replacement},
      {{"enable_dynamic_update_slice_to_pad_replacement", PassOptionType::kBool, "true", "Rewrite DUS of a broadcast to pad."}, &O::enable_dynamic_update_slice_to_pad_replacement},
      {{"disable_dynamic_slice_to_slice_conversion", PassOptionType::kBool, "false", "Keep dynamic-slices with constant starts."}, &O::disable_dynamic_slice_to_slice_conversion},
      {{"use_convert_constant_folding", PassOptionType::kBool, "false", "Fold convert(constant)."}, &O::use_convert_constant_folding},
      {{"rewrite_no_op_bitcast_convert_to_bitcast", PassOptionType::kBool, "false", "Layout sensitive: bitcast-converts that move no bits become bitcasts."}, &O::rewrite_no_op_bitcast_convert_to_bitcast},
      {{"enable_remove_no_op_reduce_precision", PassOptionType::kBool, "false", "Remove reduce-precision to the operand's precision."}, &O::enable_remove_no_op_reduce_precision},
      {{"supports_non_canonical_dots", PassOptionType::kBool, "true", "Allow rewrites that produce non-canonical dots."}, &O::supports_non_canonical_dots},
      {{"enable_move_dot_param_to_rhs", PassOptionType::kBool, "false", "Move parameter-like dot operands to the right."}, &O::enable_move_dot_param_to_rhs},
      {{"enable_scalar_multiply_reduction", PassOptionType::kBool, "false", "Move scalar multipliers around a convolution to its smallest side."}, &O::enable_scalar_multiply_reduction},
      {{"enable_conv_operand_swap", PassOptionType::kBool, "true", "Swap a convolution's operands when the kernel is the larger side."}, &O::enable_conv_operand_swap},
      {{"executing_on_cpu", PassOptionType::kBool, "false", "Target CPU (divide by broadcast as multiply; fewer dot strength reductions)."}, &O::executing_on_cpu},
      {{"use_associative_reordering", PassOptionType::kBool, "false", "Reorder dot chains and dots of reverse/pad/broadcast."}, &O::use_associative_reordering},
      {{"raise_slice_and_reduce_through_dot", PassOptionType::kBool, "false", "Move slices and reduces of dots onto the operands."}, &O::raise_slice_and_reduce_through_dot},
      {{"rewrite_reshape_transpose_as_slice_concatenate", PassOptionType::kBool, "true", "Depth-to-space reshape/transpose chains become concatenates of slices."}, &O::rewrite_reshape_transpose_as_slice_concatenate},
      {{"enable_hoist_transpose_of_reshape", PassOptionType::kBool, "false", "Hoist transposes above reshapes."}, &O::enable_hoist_transpose_of_reshape},
  };
  return *fields;
}

// The options that are text.
struct StringOptionField {
  PassOptionSpec spec;
  std::string AlgebraicSimplifierOptions::*field;
};

const std::vector<StringOptionField>& StringOptionFields() {
  using O = AlgebraicSimplifierOptions;
  static const auto* fields = new std::vector<StringOptionField>{
      {{"cudnn_batchnorm_forward_training_metadata", PassOptionType::kString, "",
        "Custom-call target whose output 2 is positive (cuDNN batch-norm training)."},
       &O::cudnn_batchnorm_forward_training_metadata},
      {{"gpu_compute_capability", PassOptionType::kString, "",
        "CUDA compute capability (\"8.0\"): run as XLA's GpuAlgebraicSimplifier (bf16/tf32 dot algorithms); "
        "empty: the generic simplifier."},
       &O::gpu_compute_capability},
      {{"conv_is_lowerable_callback", PassOptionType::kString, "",
        "Which convolutions an operand swap may produce: empty (any) or \"conv-rewriter\" (those the GPU conv "
        "rewriter lowers to a library call)."},
       &O::conv_is_lowerable_callback},
  };
  return *fields;
}

// The options that are numbers.
struct FloatOptionField {
  PassOptionSpec spec;
  double AlgebraicSimplifierOptions::*field;
};

const std::vector<FloatOptionField>& FloatOptionFields() {
  using O = AlgebraicSimplifierOptions;
  static const auto* fields = new std::vector<FloatOptionField>{
      {{"associative_reordering_threshold", PassOptionType::kFloat, "2.0", "Flop ratio a dot reordering must beat."},
       &O::associative_reordering_threshold},
      {{"raise_slice_and_reduce_through_dot_threshold", PassOptionType::kFloat, "2.0", "Flop ratio raising a reduce through a dot must beat."},
       &O::raise_slice_and_reduce_through_dot_threshold},
  };
  return *fields;
}

}  // namespace

std::vector<PassOptionSpec> AlgebraicSimplifier::OptionSpecs() {
  std::vector<PassOptionSpec> specs;
  for (const OptionField& f : OptionFields()) specs.push_back(f.spec);
  for (const FloatOptionField& f : FloatOptionFields()) specs.push_back(f.spec);
  for (const StringOptionField& f : StringOptionFields()) specs.push_back(f.spec);
  return specs;
}

AlgebraicSimplifierOptions AlgebraicSimplifier::OptionsFrom(const PassOptionValues& values) {
  AlgebraicSimplifierOptions options;
  for (const OptionField& f : OptionFields()) options.*f.field = values.GetBool(f.spec.name);
  for (const FloatOptionField& f : FloatOptionFields()) options.*f.field = values.GetFloat(f.spec.name);
  for (const StringOptionField& f : StringOptionFields()) options.*f.field = values.GetString(f.spec.name);
  return options;
}

namespace {

// Removes what an abandoned rule added (users first).
void RemoveAbandoned(HloComputation* c, const std::vector<HloInstruction*>& added) {
  for (auto it = added.rbegin(); it != added.rend(); ++it) {
    if ((*it)->user_count() == 0 && *it != c->root_instruction()) {
      absl::Status s = c->RemoveInstruction(*it);
      (void)s;
    }
  }
}

}  // namespace

absl::StatusOr<bool> AlgebraicSimplifier::RunImpl(HloModule& module, PassRunContext*) {
  if (!options_.conv_is_lowerable_callback.empty() && options_.conv_is_lowerable_callback != "conv-rewriter") {
    return absl::InvalidArgumentError(StrCat("algsimp option conv_is_lowerable_callback: unknown callback '",
                                             options_.conv_is_lowerable_callback,
                                             "' (known: empty, \"conv-rewriter\")"));
  }
  static const auto* by_opcode = [] {
    auto* m = new absl::flat_hash_map<HloOpcode, std::vector<algsimp::Rule>>();
    for (algsimp::Rule& r : AllRules()) (*m)[r.opcode].push_back(std::move(r));
    return m;
  }();
  bool changed = false;
  algsimp::RuleContext::ReducerCache reducers;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (int sweep = 0; sweep < AlgebraicSimplifierOptions::kMaxSweeps; ++sweep) {
      bool sweep_changed = false;
      absl::flat_hash_set<const HloInstruction*> removed;
      c->set_removal_listener([&](const HloInstruction* i) { removed.insert(i); });
      for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
        if (removed.contains(inst)) continue;
        auto it = by_opcode->find(inst->opcode());
        if (it == by_opcode->end()) continue;
        for (const algsimp::Rule& rule : it->second) {
          algsimp::RuleContext ctx(inst, options_, &reducers);
          HloInstruction* replacement = rule.apply(inst, ctx);
          if (replacement == nullptr) {
            RemoveAbandoned(c, ctx.added());
            continue;
          }
          BumpCounter(rule.name);
          sweep_changed = true;
          if (replacement == inst) break;  // edited in place
          if (!replacement->shape().Compatible(inst->shape())) {
            c->set_removal_listener(nullptr);
            return absl::InternalError(StrCat("algsimp rule '", rule.name, "' changed the shape of '", inst->name(),
                                              "' from ", inst->shape().ToString(), " to ",
                                              replacement->shape().ToString()));
          }
          // A new instruction takes the replaced one's layout.
          if (replacement->shape() != inst->shape() && replacement->user_count() == 0 &&
              replacement->opcode() != HloOpcode::kParameter && !options_.is_layout_sensitive) {
            bool is_new = false;
            for (HloInstruction* a : ctx.added()) is_new |= a == replacement;
            if (is_new) *replacement->mutable_shape() = inst->shape();
          }
          if (absl::Status s = c->ReplaceInstruction(inst, replacement); !s.ok()) {
            c->set_removal_listener(nullptr);
            return s;
          }
          break;
        }
      }
      c->set_removal_listener(nullptr);
      changed |= sweep_changed;
      if (!sweep_changed || !options_.run_to_fixed_point) break;
    }
  }
  return changed;
}

}  // namespace passlab
