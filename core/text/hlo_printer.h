// The canonical printer for XLA's HLO text format. Output parses back with
// ParseHloModule to a structurally equal module, and printing is deterministic
// (instructions in post order, computations callees-first, entry last).
#ifndef PASSLAB_CORE_TEXT_HLO_PRINTER_H_
#define PASSLAB_CORE_TEXT_HLO_PRINTER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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

// One computation's canonical text, as PrintModule prints it between the
// computations before and after it: `header` ("\n[ENTRY ]%name (...) -> ...
// {\n"), the instruction lines in segments, `footer` ("}\n"). A segment is
// a run of consecutive lines (pieces: instruction lines shared with the
// instructions' line caches; raw text for async ops, whose text depends on
// the module) that ends where a line's hash has its low kSegmentBits bits
// set, so boundaries depend only on the text: an edit changes the segments
// around it and no others. The printer caches the text on the computation
// (HloComputation::text_cache) until the computation changes; a snapshot
// after a change reuses every segment of the previous snapshot whose lines
// are all still the instructions' current lines, so that it costs a check
// per line and new pieces only around the edits.
struct ComputationText {
  struct Piece {
    std::shared_ptr<const std::string> text;
    const HloInstruction* instruction = nullptr;  // a line's (identity only; null for raw text)
    bool line = false;  // an instruction line: printed as "  [ROOT ]<text>\n"
    bool root = false;
  };
  struct Segment {
    std::vector<Piece> pieces;
    size_t size = 0;        // of the joined text
    // The pieces' hashes in order (lines: their instructions' cached hashes,
    // after a marker for the root): the computation's hash is taken over
    // all of them, so it does not depend on where segments end.
    std::vector<uint64_t> hashes;
    bool reusable = true;   // only instruction lines (no raw text)
  };
  static constexpr int kSegmentBits = 5;  // 32 lines per segment on average
  // The header's text and what it was printed from, so that a later text
  // reuses it (an entry computation's header lists every parameter: often
  // longer than the lines a pass changed) while these stay the same. The
  // parameters' and the root's lines are held, so a line at the same
  // address is the same line: the same name and shape.
  struct Header {
    std::string text;
    uint64_t hash = 0;
    std::string name;
    bool entry = false;
    std::vector<std::shared_ptr<const std::string>> parameter_lines;
    const HloInstruction* root = nullptr;  // identity only
    std::shared_ptr<const std::string> root_line;
    std::optional<Shape> root_shape;
    // An entry computation's layout as the module line prints it
    // ("(f32[2]{0}, s32[])->f32[2]{0}"): the same parameters and root.
    std::string entry_layout;
  };

  const HloComputation* computation = nullptr;  // identity only, for reuse
  std::shared_ptr<const Header> header;
  std::string footer;
  std::vector<std::shared_ptr<const Segment>> segments;
  size_t size = 0;      // of the joined text
  uint64_t hash = 0;    // over the header's, the lines' (Segment::hashes) and the footer's hashes
  bool entry = false;   // printed as the entry computation ("ENTRY ")

  void AppendTo(std::string& out) const;
};

// A module's canonical text (PrintModule with the default options) kept as
// pieces: the module line, then one ComputationText per computation, each
// the one cached on its computation, shared rather than copied. Consecutive
// snapshots of a changing module therefore share every computation that did
// not change, and within a changed one every segment that did not change;
// taking a snapshot walks only the computations that changed. The text is
// joined on first use.
class ModuleText {
 public:
  const std::string& str() const;
  size_t size() const { return size_; }
  // CanonicalTextFingerprint of the module it was printed from.
  uint64_t fingerprint() const { return fingerprint_; }
  // Instruction lines printed to make this text (the rest were cached).
  int64_t lines_printed() const { return lines_printed_; }
  const std::vector<std::shared_ptr<const ComputationText>>& computations() const { return computations_; }

 private:
  friend std::shared_ptr<const ModuleText> PrintModuleText(const HloModule& module, const ModuleText* previous);

  std::string header_;
  std::vector<std::shared_ptr<const ComputationText>> computations_;
  size_t size_ = 0;
  int64_t lines_printed_ = 0;
  uint64_t fingerprint_ = 0;
  mutable std::once_flag joined_once_;
  mutable std::string joined_;
};

// `previous`: an earlier text of the same module (the last snapshot), whose
// segments the computations that changed since may reuse. Any earlier text
// is correct (reuse is checked line by line); a recent one saves the most.
std::shared_ptr<const ModuleText> PrintModuleText(const HloModule& module, const ModuleText* previous = nullptr);

// A 64-bit xxhash of the module's canonical text, computed over its pieces:
// the module line's hash and each computation's (ComputationText::hash: the
// text between instruction lines, and each line's hash, cached on the
// instruction with the line; large constants: their bytes). What
// PrintModuleText(module)->fingerprint() is, without keeping the text.
uint64_t CanonicalTextFingerprint(const HloModule& module);
std::string PrintComputation(const HloComputation& computation, const PrintOptions& options = {});
std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options = {});

// The instruction's canonical line (what PrintModule prints after any
// "ROOT "), from its cache, printed and cached when missing. Async ops print
// differently in different contexts (the sugar) and have none: nullptr.
const std::string* CanonicalInstructionLine(const HloInstruction& instruction);

// True when an async op's wrapped computation is exactly "parameters -> one
// op", so it can be printed with the op-start/op-done sugar (seed 001).
bool CanPrintAsyncSugar(const HloInstruction& async_op);

}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PRINTER_H_
