#include "core/ir/hlo_equal.h"

#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool Fail(std::string* difference, std::string message) {
  if (difference != nullptr) *difference = std::move(message);
  return false;
}

bool NamesEqual(const std::vector<HloInstruction*>& a, const std::vector<HloInstruction*>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->name() != b[i]->name()) return false;
  }
  return true;
}

bool InstructionsEqual(const HloInstruction& a, const HloInstruction& b, std::string* difference) {
  std::string where = StrCat("instruction '", a.name(), "'");
  if (a.name() != b.name()) return Fail(difference, StrCat(where, " vs '", b.name(), "': names differ"));
  if (a.opcode() != b.opcode()) return Fail(difference, StrCat(where, ": opcodes differ"));
  if (a.shape() != b.shape()) {
    return Fail(difference, StrCat(where, ": shapes differ (", a.shape().ToString(), " vs ",
                                   b.shape().ToString(), ")"));
  }
  if (!NamesEqual(a.operands(), b.operands())) return Fail(difference, StrCat(where, ": operands differ"));
  if (!NamesEqual(a.control_predecessors(), b.control_predecessors())) {
    return Fail(difference, StrCat(where, ": control predecessors differ"));
  }
  if (a.called_computations().size() != b.called_computations().size()) {
    return Fail(difference, StrCat(where, ": called computation counts differ"));
  }
  for (size_t i = 0; i < a.called_computations().size(); ++i) {
    const HloComputation* ca = a.called_computations()[i];
    const HloComputation* cb = b.called_computations()[i];
    if ((ca == nullptr) != (cb == nullptr) || (ca != nullptr && ca->name() != cb->name())) {
      return Fail(difference, StrCat(where, ": called computations differ"));
    }
  }
  if (a.index() != b.index() || a.dimensions() != b.dimensions() ||
      (a.opcode() == HloOpcode::kFusion && a.fusion_kind() != b.fusion_kind()) ||
      a.async_execution_thread() != b.async_execution_thread()) {
    return Fail(difference, StrCat(where, ": index, dimensions, fusion kind or thread differ"));
  }
  if (a.has_literal() != b.has_literal() || (a.has_literal() && a.literal() != b.literal())) {
    return Fail(difference, StrCat(where, ": literals differ"));
  }
  if (a.metadata() != b.metadata()) return Fail(difference, StrCat(where, ": metadata differs"));
  if (a.raw_backend_config() != b.raw_backend_config()) {
    return Fail(difference, StrCat(where, ": backend_config differs"));
  }
  if (a.has_sharding() != b.has_sharding() || (a.has_sharding() && a.sharding() != b.sharding())) {
    return Fail(difference, StrCat(where, ": sharding differs"));
  }
  if (a.frontend_attributes() != b.frontend_attributes()) {
    return Fail(difference, StrCat(where, ": frontend attributes differ"));
  }
  if (!(a.attrs() == b.attrs())) return Fail(difference, StrCat(where, ": attributes differ"));
  if (a.IsRoot() != b.IsRoot()) return Fail(difference, StrCat(where, ": root-ness differs"));
  return true;
}

}  // namespace

bool StructurallyEqual(const HloModule& a, const HloModule& b, std::string* difference) {
  if (a.name() != b.name()) return Fail(difference, "module names differ");
  // The entry layout is compared below as derived (printing makes it explicit).
  HloModuleConfig config_a = a.config(), config_b = b.config();
  config_a.entry_computation_layout.reset();
  config_b.entry_computation_layout.reset();
  if (!(config_a == config_b)) return Fail(difference, "module configurations differ");
  if (a.is_scheduled() != b.is_scheduled()) return Fail(difference, "is_scheduled differs");
  if (a.entry_computation_layout() != b.entry_computation_layout()) {
    return Fail(difference, "entry computation layouts differ");
  }
  std::vector<HloComputation*> ca = a.MakeComputationPostOrder();
  std::vector<HloComputation*> cb = b.MakeComputationPostOrder();
  if (ca.size() != cb.size()) {
    return Fail(difference, StrCat("computation counts differ (", ca.size(), " vs ", cb.size(), ")"));
  }
  for (size_t i = 0; i < ca.size(); ++i) {
    const HloComputation& x = *ca[i];
    const HloComputation& y = *cb[i];
    std::string where = StrCat("computation '", x.name(), "'");
    if (x.name() != y.name()) return Fail(difference, StrCat(where, " vs '", y.name(), "': names differ"));
    if (x.execution_thread() != y.execution_thread() ||
        x.IsFusionComputation() != y.IsFusionComputation() ||
        x.IsEntryComputation() != y.IsEntryComputation()) {
      return Fail(difference, StrCat(where, ": thread, fusion or entry status differs"));
    }
    if (!NamesEqual(x.parameter_instructions(), y.parameter_instructions())) {
      return Fail(difference, StrCat(where, ": parameters differ"));
    }
    std::vector<HloInstruction*> ix = x.MakeInstructionPostOrder();
    std::vector<HloInstruction*> iy = y.MakeInstructionPostOrder();
    if (ix.size() != iy.size()) return Fail(difference, StrCat(where, ": instruction counts differ"));
    for (size_t j = 0; j < ix.size(); ++j) {
      if (!InstructionsEqual(*ix[j], *iy[j], difference)) {
        if (difference != nullptr) *difference = StrCat(where, ": ", *difference);
        return false;
      }
    }
  }
  return true;
}

}  // namespace passlab
