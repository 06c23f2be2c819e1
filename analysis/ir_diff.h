// IR diffs between two HLO modules (or two texts):
//  - a line diff of canonical text (Debian's dtl computes the edit script),
//    rendered unified ("diff -u" style, with context) or side by side;
//  - a structural diff matching instructions by (computation, name):
//    added, removed, and changed (opcode, operands, shape, attributes);
//  - a one-line summary per pass ("+3 -5 ~2: fusion +2, multiply -3").
#ifndef PASSLAB_ANALYSIS_IR_DIFF_H_
#define PASSLAB_ANALYSIS_IR_DIFF_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_module.h"

namespace passlab {

struct DiffLine {
  enum class Kind { kCommon, kAdded, kRemoved };
  Kind kind;
  std::string text;
  int64_t old_line = 0;  // 1-based; 0 when absent (added)
  int64_t new_line = 0;  // 1-based; 0 when absent (removed)
};

// The edit script of two texts, line by line.
std::vector<DiffLine> DiffLines(std::string_view before, std::string_view after);

struct UnifiedDiffOptions {
  int context = 3;
  bool color = false;  // ANSI colours (LLVM's -print-changed=cdiff)
  std::string before_label = "before";
  std::string after_label = "after";
};
// "--- before / +++ after / @@ -a,b +c,d @@" hunks; empty when equal.
std::string UnifiedDiff(std::string_view before, std::string_view after,
                        const UnifiedDiffOptions& options = {});
// Two columns of `width` characters each, "|" between, changed rows marked.
std::string SideBySideDiff(std::string_view before, std::string_view after, int width = 80,
                           int context = 3);

struct InstructionChange {
  std::string computation;
  std::string name;
  std::vector<std::string> what;  // "opcode", "operands", "shape", "attributes"
  std::string before;             // instruction text
  std::string after;
};

struct StructuralDiff {
  std::vector<std::pair<std::string, std::string>> added;    // (computation, instruction text)
  std::vector<std::pair<std::string, std::string>> removed;
  std::vector<InstructionChange> changed;
  std::vector<std::string> computations_added;
  std::vector<std::string> computations_removed;
  std::map<std::string, int64_t> opcode_delta;  // after - before, non-zero only
  bool empty() const {
    return added.empty() && removed.empty() && changed.empty() && computations_added.empty() &&
           computations_removed.empty();
  }
  // "+3 -5 ~2 instructions; fusion +2, multiply -3"
  std::string Summary() const;
  // Human-readable listing of everything above.
  std::string ToString() const;
};

StructuralDiff DiffModules(const HloModule& before, const HloModule& after);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_IR_DIFF_H_
