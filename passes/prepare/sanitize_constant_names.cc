#include "passes/prepare/sanitize_constant_names.h"

#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsSymbolChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string SanitizeSymbolName(std::string_view name) {
  std::string out;
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) out += '_';
  for (char c : name) out += IsSymbolChar(c) ? c : '_';
  return out;
}

absl::StatusOr<bool> SanitizeConstantNames::RunImpl(HloModule& module, PassRunContext*) {
  absl::flat_hash_set<std::string> taken;
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](const HloInstruction* inst) { taken.insert(inst->name()); });
  }
  // Constants become module-level symbols: unique across computations too.
  absl::flat_hash_set<std::string> symbols;
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kConstant) continue;
      std::string base = SanitizeSymbolName(inst->name());
      if (base == inst->name() && symbols.insert(base).second) continue;
      std::string name = base;
      for (int64_t n = 1; taken.contains(name); ++n) name = StrCat(base, "_", n);
      taken.insert(name);
      symbols.insert(name);
      module.RegisterInstructionName(name);
      inst->SetName(name);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
