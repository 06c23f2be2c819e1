// SanitizeConstantNames ("sanitize-constant-names"): renames every constant
// whose name is not a legal LLVM/PTX symbol ([A-Za-z_][A-Za-z0-9_]*), as
// XLA:GPU does before emitting constants as globals: '.', '-' and any other
// character become '_', a leading digit gets a '_' prefix, and a name taken
// by another instruction gets a "_N" suffix. Constant names end up unique
// across the whole module (XLA text scopes names per computation; symbols
// are module-wide), so a legal name a constant of another computation
// already has is suffixed too.
//
// Runs last-but-one in ir-emit-prepare (nothing renames or adds constants
// after it). Optional: the CPU backend keeps constants in host buffers, not
// named symbols.
#ifndef PASSLAB_PASSES_PREPARE_SANITIZE_CONSTANT_NAMES_H_
#define PASSLAB_PASSES_PREPARE_SANITIZE_CONSTANT_NAMES_H_

#include <string>
#include <string_view>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class SanitizeConstantNames : public HloModulePass {
 public:
  std::string_view name() const override { return "sanitize-constant-names"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

// `name` with every character outside [A-Za-z0-9_] replaced by '_' and a '_'
// prefix when it would start with a digit (or be empty).
std::string SanitizeSymbolName(std::string_view name);

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_SANITIZE_CONSTANT_NAMES_H_
