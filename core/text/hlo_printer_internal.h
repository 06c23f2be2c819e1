// The HLO text printer's internals, shared by its files (not a public
// header: core/text/hlo_printer.h is). Split by what they print:
//   hlo_printer.cc             modules, computations, instruction lines,
//                              operands and constants; the public functions
//   hlo_printer_attributes.cc  each opcode's attributes in XLA's order, the
//                              plain ones through the attribute table
//                              (hlo_attribute_table.h) the parser reads with
//   hlo_printer_text.cc        snapshots (ModuleText): computation texts in
//                              reusable segments, line caches, fingerprints,
//                              the helper thread
#ifndef PASSLAB_CORE_TEXT_HLO_PRINTER_INTERNAL_H_
#define PASSLAB_CORE_TEXT_HLO_PRINTER_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_attribute_table.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace text_internal {

// The instruction's fingerprint without its cache (hlo_printer_text.cc).
uint64_t InstructionFingerprintUncached(const HloInstruction& inst);

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options), canonical_(Canonical()) {}

  std::string& out() { return out_; }

  void Name(std::string_view name) {
    if (options_.print_percent) out_ += '%';
    out_ += name;
  }

  // ---- Modules and computations (hlo_printer.cc) ----
  // The module: its line, then each computation (callees first). Collecting
  // chunks (PrintModuleText), the computations come first, so that the
  // module line can take the entry's layout from the entry's header.
  void Module(const HloModule& module);
  // "HloModule name, attributes...\n". `entry`: the entry computation's
  // text, whose header knows the entry computation layout.
  void ModuleLine(const HloModule& module, const ComputationText* entry);
  // Computations printed inline as async sugar are skipped. Only a
  // computation wrapped by exactly one async-start can be (sugar gives each
  // start its own computation when parsed back).
  void FindSugaredComputations(const HloModule& module);
  void Computation(const HloComputation& c);
  void ComputationHeader(const HloComputation& c);
  void ComputationFooter(const HloComputation& c);

  // ---- Snapshots (hlo_printer_text.cc) ----
  // chunks_: each computation's text, in order. When several changed, the
  // helper thread builds some of them with a second printer: computations
  // are independent (each writes only its own instructions' lines and its
  // own text cache; the previous text and the sugar are only read).
  void Chunks(const std::vector<const HloComputation*>& computations);
  // Whether the computation's cached text is still its text (the cache is
  // dropped on every change, but not when the entry moves: "ENTRY ").
  static bool TextCacheValid(const HloComputation& c) {
    const std::shared_ptr<const ComputationText>& cached = c.text_cache();
    return cached != nullptr && cached->entry == c.IsEntryComputation();
  }
  // The computation's canonical text: its cache when still valid, else
  // built (segments of the previous text reused where every line still
  // matches, new lines printed) and cached, unless an async op in it prints
  // differently in different modules (the sugar).
  std::shared_ptr<const ComputationText> ComputationChunk(const HloComputation& c);
  // A computation's header for ComputationText, with what it was printed
  // from (the lines of its parameters and root are cached by now).
  std::shared_ptr<const ComputationText::Header> NewHeader(const HloComputation& c);
  // Whether `header` is what ComputationHeader prints for `c` now: the same
  // name, entry flag, parameters (their lines: names and shapes) and root
  // shape (layouts included, though the header leaves them out).
  static bool HeaderStillRight(const ComputationText::Header& header, const HloComputation& c);
  // The walk behind PrintModuleText (and CanonicalTextFingerprint): the
  // module line, then each computation's text (ComputationChunk), reusing
  // segments of `previous`.
  void CollectChunks(const ModuleText* previous);
  std::string& header() { return header_; }
  std::vector<std::shared_ptr<const ComputationText>>& chunks() { return chunks_; }
  int64_t lines_printed() const { return lines_printed_; }
  static uint64_t InstructionFingerprint(const HloInstruction& inst) {
    if (inst.fingerprint_valid()) return inst.cached_fingerprint();
    const uint64_t f = InstructionFingerprintUncached(inst);
    inst.set_cached_fingerprint(f);
    return f;
  }

  // ---- Instruction lines (hlo_printer.cc) ----
  // The canonical options (all defaults): the only ones whose lines are
  // cached on the instructions.
  bool Canonical() const;
  void Instruction(const HloInstruction& inst);
  // The instruction's cached line, printed and cached when missing.
  std::shared_ptr<const std::string> SharedLine(const HloInstruction& inst);
  void InstructionBody(const HloInstruction& inst);
  // An operand's shape and a space: copied from the operand's own cached
  // line ("%name = SHAPE opcode(...") when it has one, as printing it again
  // costs more than finding it; array shapes print without spaces, which
  // the check of what follows confirms. Not while another thread may be
  // printing the operand's line (set_operand_lines(false)).
  void set_operand_lines(bool use) { operand_lines_ = use; }
  void OperandShape(const HloInstruction& op);
  static bool IsAsync(HloOpcode op) {
    return op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
           op == HloOpcode::kAsyncDone;
  }
  void Constant(const Literal& literal);

  // ---- Attributes (hlo_printer_attributes.cc) ----
  void Attr(std::string_view name, std::string_view value) {
    StrAppend(&out_, ", ", name, "=", value);
  }
  // Attr(name, StrCat(value)) without the temporary string.
  template <typename T>
  void AttrNumber(std::string_view name, T value) {
    StrAppend(&out_, ", ", name, "=");
    absl::StrAppend(&out_, value);
  }
  // A plain attribute through its row of the attribute table.
  void Attr(const AttributeSpec& row, const HloInstruction& inst) { AppendAttribute(out_, row, inst); }
  void OpcodeAttributes(const HloInstruction& inst);
  void Precision(const HloInstruction& inst);
  void ConvAttributes(const HloInstruction& inst);
  void Aliasing(const HloAttributes& a);
  void CustomCallAttributes(const HloInstruction& inst);
  void CalledComputations(const HloInstruction& inst);
  void GenericAttributes(const HloInstruction& inst);

 private:
  const PrintOptions& options_;
  const bool canonical_;
  std::string out_;
  bool collect_chunks_ = false;        // PrintModuleText: the module line and
  std::string header_;                 // one ComputationText per computation
  std::vector<std::shared_ptr<const ComputationText>> chunks_;
  // The previous text's computations (segments to reuse), by identity.
  absl::flat_hash_map<const HloComputation*, const ComputationText*> previous_;
  int64_t lines_printed_ = 0;
  bool operand_lines_ = true;
  bool module_context_ = false;
  absl::flat_hash_set<const HloComputation*> sugared_;
};

}  // namespace text_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PRINTER_INTERNAL_H_
