#include "passes/prepare/sanitize_constant_names.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "core/ir/hlo_module.h"
#include "core/ir/primitive_type.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAllowed(char c) { return IsLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'; }

// XLA's NameUniquer with a separator: hands out unique names, reading a
// numeric suffix after the separator as an id under the root before it.
class NameUniquer {
 public:
  explicit NameUniquer(std::string separator) : separator_(std::move(separator)) {}

  std::string GetUniqueName(std::string_view prefix) {
    std::string root = SanitizeHloName(prefix.empty() ? "name" : prefix);
    bool has_suffix = false;
    int64_t suffix = 0;
    size_t at = root.rfind(separator_);
    if (at != std::string::npos && at > 0 && at < root.size() - separator_.size()) {
      std::string_view digits = std::string_view(root).substr(at + separator_.size());
      int64_t value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (error == std::errc() && end == digits.data() + digits.size()) {
        has_suffix = true;
        suffix = value;
        root.resize(at);
      }
    }
    Ids& ids = ids_[root];
    suffix = ids.Register(suffix);
    if (suffix == 0) return has_suffix ? StrCat(root, separator_, 0) : root;
    return StrCat(root, separator_, suffix);
  }

 private:
  // The ids taken under one root: a taken id yields the smallest free one
  // from a running counter.
  struct Ids {
    int64_t Register(int64_t id) {
      if (used.insert(id).second) return id;
      while (!used.insert(next).second) ++next;
      return next++;
    }
    int64_t next = 0;
    std::set<int64_t> used;
  };
  std::string separator_;
  std::map<std::string, Ids> ids_;
};

}  // namespace

std::string SanitizeHloName(std::string_view name) {
  if (name.empty()) return "";
  std::string out(name);
  if (!IsLetter(out[0]) && out[0] != '_') out[0] = '_';
  for (size_t i = 1; i < out.size(); ++i) {
    if (!IsAllowed(out[i])) out[i] = '_';
  }
  // Primitive type names are keywords of the text format.
  if (PrimitiveTypeFromName(out).has_value() && out != "tuple" && out != "buffer") out += '_';
  // "__" prefixes are reserved by backends (except XLA's own).
  if (out.starts_with("__") && !out.starts_with("__xla_")) out[0] = 'a';
  return out;
}

absl::StatusOr<bool> SanitizeConstantNames::RunImpl(HloModule& module, PassRunContext*) {
  NameUniquer uniquer("_");
  // Non-constant names stay as they are; a constant clashing with one moves.
  for (const HloComputation* c : module.computations()) {
    c->ForEachInstruction([&](const HloInstruction* inst) {
      if (inst->opcode() != HloOpcode::kConstant) uniquer.GetUniqueName(inst->name());
    });
  }
  bool changed = false;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kConstant) continue;
      std::string symbol = inst->name();
      std::replace_if(
          symbol.begin(), symbol.end(), [](char ch) { return ch == '.' || ch == '-' || ch == ';'; }, '_');
      std::string name = uniquer.GetUniqueName(SanitizeHloName(symbol));
      module.RegisterInstructionName(name);
      if (name == inst->name()) continue;
      inst->SetName(name);
      changed = true;
    }
  }
  return changed;
}

}  // namespace passlab
