#include "analysis/ir_diff.h"

#include <dtl/dtl.hpp>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Hunks: ranges of the edit script with `context` common lines around changes.
std::vector<std::pair<size_t, size_t>> Hunks(const std::vector<DiffLine>& lines, int context) {
  std::vector<std::pair<size_t, size_t>> hunks;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].kind == DiffLine::Kind::kCommon) continue;
    size_t begin = i >= static_cast<size_t>(context) ? i - context : 0;
    size_t end = i;
    while (end < lines.size()) {
      // Extend while another change follows within 2*context common lines.
      size_t next = end + 1;
      size_t common = 0;
      while (next < lines.size() && lines[next].kind == DiffLine::Kind::kCommon &&
             common <= static_cast<size_t>(2 * context)) {
        ++next;
        ++common;
      }
      if (next < lines.size() && lines[next].kind != DiffLine::Kind::kCommon &&
          common <= static_cast<size_t>(2 * context)) {
        end = next;
      } else {
        break;
      }
    }
    size_t stop = std::min(lines.size(), end + 1 + context);
    if (!hunks.empty() && begin <= hunks.back().second) {
      hunks.back().second = stop;
    } else {
      hunks.push_back({begin, stop});
    }
    i = end;
  }
  return hunks;
}

std::string Fit(const std::string& s, int width) {
  if (static_cast<int>(s.size()) <= width) return s + std::string(width - s.size(), ' ');
  return s.substr(0, width - 1) + "~";
}

}  // namespace

std::vector<DiffLine> DiffLines(std::string_view before, std::string_view after) {
  std::vector<std::string> a = SplitLines(before);
  std::vector<std::string> b = SplitLines(after);
  dtl::Diff<std::string, std::vector<std::string>> diff(a, b);
  diff.compose();
  std::vector<DiffLine> out;
  for (const auto& [text, info] : diff.getSes().getSequence()) {
    DiffLine line;
    line.text = text;
    line.old_line = info.beforeIdx;
    line.new_line = info.afterIdx;
    switch (info.type) {
      case dtl::SES_COMMON: line.kind = DiffLine::Kind::kCommon; break;
      case dtl::SES_ADD: line.kind = DiffLine::Kind::kAdded; line.old_line = 0; break;
      case dtl::SES_DELETE: line.kind = DiffLine::Kind::kRemoved; line.new_line = 0; break;
    }
    out.push_back(std::move(line));
  }
  // Within each run of changes, list removals before additions (as diff -u
  // does; dtl may interleave them).
  for (size_t i = 0; i < out.size();) {
    if (out[i].kind == DiffLine::Kind::kCommon) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < out.size() && out[j].kind != DiffLine::Kind::kCommon) ++j;
    std::stable_partition(out.begin() + i, out.begin() + j,
                          [](const DiffLine& l) { return l.kind == DiffLine::Kind::kRemoved; });
    i = j;
  }
  return out;
}

std::string UnifiedDiff(std::string_view before, std::string_view after,
                        const UnifiedDiffOptions& options) {
  std::vector<DiffLine> lines = DiffLines(before, after);
  std::vector<std::pair<size_t, size_t>> hunks = Hunks(lines, options.context);
  if (hunks.empty()) return "";
  const char* red = options.color ? "\033[31m" : "";
  const char* green = options.color ? "\033[32m" : "";
  const char* cyan = options.color ? "\033[36m" : "";
  const char* reset = options.color ? "\033[0m" : "";
  std::string out = StrCat("--- ", options.before_label, "\n+++ ", options.after_label, "\n");
  for (auto [begin, end] : hunks) {
    int64_t old_start = 0, new_start = 0, old_count = 0, new_count = 0;
    for (size_t i = begin; i < end; ++i) {
      const DiffLine& l = lines[i];
      if (l.kind != DiffLine::Kind::kAdded) {
        if (old_start == 0) old_start = l.old_line;
        ++old_count;
      }
      if (l.kind != DiffLine::Kind::kRemoved) {
        if (new_start == 0) new_start = l.new_line;
        ++new_count;
      }
    }
    StrAppend(&out, cyan, "@@ -", old_start, ",", old_count, " +", new_start, ",", new_count, " @@",
              reset, "\n");
    for (size_t i = begin; i < end; ++i) {
      const DiffLine& l = lines[i];
      switch (l.kind) {
        case DiffLine::Kind::kCommon: StrAppend(&out, " ", l.text, "\n"); break;
        case DiffLine::Kind::kAdded: StrAppend(&out, green, "+", l.text, reset, "\n"); break;
        case DiffLine::Kind::kRemoved: StrAppend(&out, red, "-", l.text, reset, "\n"); break;
      }
    }
  }
  return out;
}

std::string SideBySideDiff(std::string_view before, std::string_view after, int width, int context) {
  std::vector<DiffLine> lines = DiffLines(before, after);
  std::string out;
  for (auto [begin, end] : Hunks(lines, context)) {
    StrAppend(&out, std::string(width, '='), "=+=", std::string(width, '='), "\n");
    size_t i = begin;
    while (i < end) {
      if (lines[i].kind == DiffLine::Kind::kCommon) {
        StrAppend(&out, Fit(lines[i].text, width), " | ", Fit(lines[i].text, width), "\n");
        ++i;
        continue;
      }
      // Pair a run of removals with the following run of additions.
      std::vector<std::string> left, right;
      // (dtl may list the additions of a change before its removals.)
      while (i < end && lines[i].kind != DiffLine::Kind::kCommon) {
        (lines[i].kind == DiffLine::Kind::kRemoved ? left : right).push_back(lines[i].text);
        ++i;
      }
      size_t rows = std::max(left.size(), right.size());
      for (size_t r = 0; r < rows; ++r) {
        std::string l = r < left.size() ? left[r] : "";
        std::string rt = r < right.size() ? right[r] : "";
        char mark = r < left.size() && r < right.size() ? '|' : (r < left.size() ? '<' : '>');
        StrAppend(&out, Fit(l, width), " ", std::string(1, mark), " ", Fit(rt, width), "\n");
      }
    }
  }
  return out;
}

StructuralDiff DiffModules(const HloModule& before, const HloModule& after) {
  StructuralDiff d;
  PrintOptions no_meta;
  no_meta.print_metadata = false;
  // Text of an instruction without its name, for change detection.
  auto body = [&](const HloInstruction* i) {
    std::string t = PrintInstruction(*i, no_meta);
    size_t eq = t.find(" = ");
    return eq == std::string::npos ? t : t.substr(eq + 3);
  };
  d.opcode_delta = OpcodeCountDelta(CountInstructionsByOpcode(before), CountInstructionsByOpcode(after));
  for (const HloComputation* c : after.MakeComputationPostOrder()) {
    const HloComputation* old = before.GetComputationWithName(c->name());
    if (old == nullptr) {
      d.computations_added.push_back(c->name());
      for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
        d.added.push_back({c->name(), PrintInstruction(*i, no_meta)});
      }
      continue;
    }
    for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
      const HloInstruction* o = old->GetInstructionWithName(i->name());
      if (o == nullptr) {
        d.added.push_back({c->name(), PrintInstruction(*i, no_meta)});
        continue;
      }
      if (body(o) == body(i) && o->IsRoot() == i->IsRoot()) continue;
      InstructionChange change;
      change.computation = c->name();
      change.name = i->name();
      if (o->opcode() != i->opcode()) change.what.push_back("opcode");
      if (o->shape() != i->shape()) change.what.push_back("shape");
      bool operands_differ = o->operand_count() != i->operand_count();
      for (int64_t k = 0; !operands_differ && k < i->operand_count(); ++k) {
        operands_differ = o->operand(k)->name() != i->operand(k)->name();
      }
      if (operands_differ) change.what.push_back("operands");
      if (o->IsRoot() != i->IsRoot()) change.what.push_back("root");
      if (change.what.empty()) change.what.push_back("attributes");
      change.before = PrintInstruction(*o, no_meta);
      change.after = PrintInstruction(*i, no_meta);
      d.changed.push_back(std::move(change));
    }
  }
  for (const HloComputation* c : before.MakeComputationPostOrder()) {
    const HloComputation* now = after.GetComputationWithName(c->name());
    if (now == nullptr) {
      d.computations_removed.push_back(c->name());
      for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
        d.removed.push_back({c->name(), PrintInstruction(*i, no_meta)});
      }
      continue;
    }
    for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (now->GetInstructionWithName(i->name()) == nullptr) {
        d.removed.push_back({c->name(), PrintInstruction(*i, no_meta)});
      }
    }
  }
  return d;
}

std::string StructuralDiff::Summary() const {
  if (empty()) return "no change";
  std::string out = StrCat("+", added.size(), " -", removed.size(), " ~", changed.size(), " instructions");
  if (!computations_added.empty() || !computations_removed.empty()) {
    StrAppend(&out, ", +", computations_added.size(), " -", computations_removed.size(), " computations");
  }
  std::vector<std::pair<std::string, int64_t>> deltas(opcode_delta.begin(), opcode_delta.end());
  std::stable_sort(deltas.begin(), deltas.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second) > std::abs(b.second);
  });
  for (size_t i = 0; i < deltas.size() && i < 6; ++i) {
    StrAppend(&out, i == 0 ? "; " : ", ", deltas[i].first, " ", deltas[i].second > 0 ? "+" : "",
              deltas[i].second);
  }
  return out;
}

std::string StructuralDiff::ToString() const {
  std::string out = Summary() + "\n";
  for (const std::string& c : computations_added) StrAppend(&out, "+ computation ", c, "\n");
  for (const std::string& c : computations_removed) StrAppend(&out, "- computation ", c, "\n");
  for (const auto& [c, text] : removed) StrAppend(&out, "- [", c, "] ", text, "\n");
  for (const auto& [c, text] : added) StrAppend(&out, "+ [", c, "] ", text, "\n");
  for (const InstructionChange& ch : changed) {
    StrAppend(&out, "~ [", ch.computation, "] ", ch.name, " (", Join(ch.what, ", "), ")\n    was: ",
              ch.before, "\n    now: ", ch.after, "\n");
  }
  return out;
}

}  // namespace passlab
