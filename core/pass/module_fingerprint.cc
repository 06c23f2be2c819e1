#include "core/pass/module_fingerprint.h"

#include "core/text/hlo_printer.h"

namespace passlab {

uint64_t ModuleFingerprint(const HloModule& module) {
  // Nothing anywhere changed since the last fingerprint of this module.
  const uint64_t generation = IrGeneration();
  if (module.fingerprint_cached_at(generation)) return module.cached_fingerprint();
  const uint64_t fingerprint = CanonicalTextFingerprint(module);
  module.set_cached_fingerprint(generation, fingerprint);
  return fingerprint;
}

}  // namespace passlab
