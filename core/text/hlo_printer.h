// The canonical printer for XLA's HLO text format. Output parses back with
// ParseHloModule to a structurally equal module, and printing is deterministic
// (instructions in post order, computations callees-first, entry last).
#ifndef PASSLAB_CORE_TEXT_HLO_PRINTER_H_
#define PASSLAB_CORE_TEXT_HLO_PRINTER_H_

#include <string>

#include "core/ir/hlo_module.h"

namespace passlab {

struct PrintOptions {
  bool print_operand_shape = true;  // "add(f32[2]{0} %a, ...)"
  bool print_metadata = true;
  bool print_backend_config = true;
  bool print_percent = true;        // "%name"
  // Print async-start/update/done wrapping a single op as "op-start" etc.
  bool syntax_sugar_async_ops = true;
  // Print constants with more than this many elements as "{...}"; -1 never.
  int64_t max_constant_elements = -1;
  // Reuse (and fill) each instruction's cached line when printing with the
  // canonical options above; off only to check the cache.
  bool use_line_cache = true;
};

std::string PrintModule(const HloModule& module, const PrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {});
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});

// True when an async op's wrapped computation is exactly "parameters -> one
// op", so it can be printed with the op-start/op-done sugar (seed 001).
bool CanPrintAsyncSugar(const HloInstruction& async_op);

}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PRINTER_H_
