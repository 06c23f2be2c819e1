// SanitizeConstantNames ("sanitize-constant-names", as XLA:GPU's
// xla/backends/gpu/transforms/sanitize_constant_names.cc): renames the
// constants so that their names are legal LLVM/PTX symbols, unique in the
// module, before they are emitted as globals: '.', '-' and ';' become '_',
// then XLA's NameUniquer sanitizing applies (a first character that is not
// a letter or '_' becomes '_', other characters outside [A-Za-z0-9_.-]
// become '_', a primitive type name gets a '_' appended, a leading "__"
// other than "__xla_" becomes "a_"), and the name is uniquified with "_N"
// suffixes against every non-constant name and the constants renamed
// before it (XLA's NameUniquer with separator "_": "x_3" counts as x's
// suffix 3). Unlike XLA, which reports a change whenever the module has a
// constant, `changed` is true only when a name changed.
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

// `name` as XLA's NameUniquer::GetSanitizedName makes it a legal HLO name.
std::string SanitizeHloName(std::string_view name);

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_SANITIZE_CONSTANT_NAMES_H_
