// What the IR and Emitter panels draw, computed off the UI thread: a text
// split into lines with an index of definitions (HLO instructions and
// computations, MLIR values), a token split of one line for syntax colouring
// and click-to-definition, and a diff of two texts with its change blocks in
// both the unified and the side-by-side layout.
#ifndef PASSLAB_GUI_STATE_TEXT_MODEL_H_
#define PASSLAB_GUI_STATE_TEXT_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/ir_diff.h"

namespace passlab::gui {

enum class TokenKind { kPlain, kName, kOpcode, kType, kNumber, kKeyword, kAttribute, kString };

struct Token {
  TokenKind kind = TokenKind::kPlain;
  int32_t begin = 0;  // byte offsets into the line
  int32_t end = 0;
};

// Splits one line of HLO or MLIR text into coloured tokens that cover it.
std::vector<Token> TokenizeLine(std::string_view line);

struct TextModel {
  std::shared_ptr<const std::string> text;
  std::vector<std::string_view> lines;  // into *text
  // "%name" (or "@name") -> 0-based line of its definition.
  absl::flat_hash_map<std::string, int64_t> definitions;
  // 0-based line of its definition, or -1.
  int64_t FindDefinition(std::string_view name) const;
};

std::shared_ptr<const TextModel> BuildTextModel(std::shared_ptr<const std::string> text);

// Lines of `model` containing `needle` (case-insensitive), in order.
std::vector<int64_t> SearchLines(const TextModel& model, std::string_view needle);

struct DiffModel {
  std::shared_ptr<const std::string> before, after;
  std::vector<DiffLine> lines;  // the unified edit script
  // Side by side: each row pairs a before line with an after line (indices
  // into `lines`, -1 for a blank cell); removed and added runs are paired.
  struct Row {
    int64_t left = -1;
    int64_t right = -1;
  };
  std::vector<Row> rows;
  std::vector<int64_t> line_change_starts;  // indices into `lines` where a change block begins
  std::vector<int64_t> row_change_starts;   // the same blocks, as indices into `rows`
  int64_t added = 0;
  int64_t removed = 0;
  // For HLO: the structural diff (instructions added/removed/changed) and
  // its one-line summary; empty `structural_error` when both texts parsed.
  bool has_structural = false;
  StructuralDiff structural;
  std::string structural_error;
  std::string summary;
};

// `parse_hlo`: also parse both texts and diff them structurally.
std::shared_ptr<const DiffModel> BuildDiffModel(std::shared_ptr<const std::string> before,
                                                std::shared_ptr<const std::string> after, bool parse_hlo);

// The first change block after (or before, with !forward) position `at` in
// `starts`, wrapping around; -1 when there are no changes.
int64_t NextChange(const std::vector<int64_t>& starts, int64_t at, bool forward);

}  // namespace passlab::gui

#endif  // PASSLAB_GUI_STATE_TEXT_MODEL_H_
