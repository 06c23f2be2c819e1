// The shared text widgets: coloured HLO/MLIR lines with click-to-definition,
// a searchable virtualised text view, and the diff view. Only the visible
// lines are tokenized and drawn (ImGuiListClipper), so a module's size does
// not change the frame time.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cstdio>

#include "gui/panels.h"

namespace passlab::gui {
namespace {

// Lines longer than this are cut when drawn (huge constants).
constexpr size_t kMaxDrawnLine = 2000;

void FillLineBackground(ImU32 color) {
  ImVec2 p = ImGui::GetCursorScreenPos();
  float w = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetWindowWidth()) + ImGui::GetScrollX();
  ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + w, p.y + ImGui::GetTextLineHeightWithSpacing()), color);
}

int Digits(int64_t n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

}  // namespace

namespace colors {
ImVec4 ForToken(TokenKind kind) {
  switch (kind) {
    case TokenKind::kPlain: return ImVec4(0.85f, 0.86f, 0.88f, 1.0f);
    case TokenKind::kName: return ImVec4(0.55f, 0.78f, 1.0f, 1.0f);
    case TokenKind::kOpcode: return ImVec4(0.98f, 0.80f, 0.45f, 1.0f);
    case TokenKind::kType: return ImVec4(0.45f, 0.82f, 0.72f, 1.0f);
    case TokenKind::kNumber: return ImVec4(0.90f, 0.60f, 0.85f, 1.0f);
    case TokenKind::kKeyword: return ImVec4(0.80f, 0.55f, 1.0f, 1.0f);
    case TokenKind::kAttribute: return ImVec4(0.62f, 0.64f, 0.70f, 1.0f);
    case TokenKind::kString: return ImVec4(0.75f, 0.85f, 0.55f, 1.0f);
  }
  return ImVec4(1, 1, 1, 1);
}
}  // namespace colors

void DrawCodeLine(std::string_view line, const TextModel* model, TextViewState* view) {
  const bool cut = line.size() > kMaxDrawnLine;
  if (cut) line = line.substr(0, kMaxDrawnLine);
  std::vector<Token> tokens = TokenizeLine(line);
  if (tokens.empty()) {
    ImGui::TextUnformatted("");
    return;
  }
  bool first = true;
  for (const Token& t : tokens) {
    if (!first) ImGui::SameLine(0, 0);
    first = false;
    const char* b = line.data() + t.begin;
    const char* e = line.data() + t.end;
    ImGui::PushStyleColor(ImGuiCol_Text, colors::ForToken(t.kind));
    ImGui::TextUnformatted(b, e);
    ImGui::PopStyleColor();
    if (t.kind != TokenKind::kName || model == nullptr || view == nullptr || !ImGui::IsItemHovered()) continue;
    const int64_t def = model->FindDefinition(std::string_view(b, e - b));
    if (def < 0) continue;
    ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    ImGui::GetWindowDrawList()->AddLine(ImVec2(lo.x, hi.y - 1), ImVec2(hi.x, hi.y - 1),
                                        ImGui::GetColorU32(colors::ForToken(TokenKind::kName)));
    ImGui::SetMouseCursor(ImGuiMouseCursor_Hand);
    std::string_view target = model->lines[def];
    target.remove_prefix(std::min(target.find_first_not_of(' '), target.size()));
    ImGui::BeginTooltip();
    ImGui::TextColored(colors::kDim, "line %lld (click to jump)", static_cast<long long>(def + 1));
    ImGui::TextUnformatted(target.data(), target.data() + std::min<size_t>(target.size(), 160));
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      view->scroll_to_line = def;
      view->highlight_line = def;
    }
  }
  if (cut) {
    ImGui::SameLine(0, 0);
    ImGui::TextColored(colors::kDim, " … (line cut)");
  }
}

void DrawTextView(const char* id, const TextModel& model, TextViewState& view) {
  ImGui::PushID(id);
  ImGui::SetNextItemWidth(260);
  const bool enter = ImGui::InputTextWithHint("##search", "search (Enter: next)", &view.search,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  if (view.search != view.searched || view.searched_model != &model) {
    view.matches = SearchLines(model, view.search);
    view.searched = view.search;
    view.searched_model = &model;
    view.match_index = -1;
  }
  auto go = [&](int64_t delta) {
    if (view.matches.empty()) return;
    const int64_t n = static_cast<int64_t>(view.matches.size());
    view.match_index = view.match_index < 0 ? (delta > 0 ? 0 : n - 1) : (view.match_index + delta + n) % n;
    view.scroll_to_line = view.matches[view.match_index];
    view.highlight_line = view.scroll_to_line;
  };
  if (enter) {
    go(ImGui::GetIO().KeyShift ? -1 : 1);
    ImGui::SetKeyboardFocusHere(-1);
  }
  ImGui::SameLine();
  if (ImGui::ArrowButton("##prev", ImGuiDir_Up)) go(-1);
  ImGui::SameLine(0, 2);
  if (ImGui::ArrowButton("##next", ImGuiDir_Down)) go(1);
  ImGui::SameLine();
  if (!view.search.empty()) {
    ImGui::TextColored(view.matches.empty() ? colors::kBad : colors::kDim, "%lld/%zu lines",
                       static_cast<long long>(view.match_index + 1), view.matches.size());
  } else {
    ImGui::TextColored(colors::kDim, "%zu lines, %zu definitions", model.lines.size(), model.definitions.size());
  }

  ImGui::BeginChild(id, ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  const float lh = ImGui::GetTextLineHeightWithSpacing();
  if (view.scroll_to_line >= 0) {
    ImGui::SetScrollY(std::max(0.0f, view.scroll_to_line * lh - ImGui::GetWindowHeight() * 0.3f));
    view.scroll_to_line = -1;
  }
  const int digits = Digits(static_cast<int64_t>(model.lines.size()));
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(model.lines.size()), lh);
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      if (i == view.highlight_line) {
        FillLineBackground(colors::kHighlight);
      } else if (!view.matches.empty() && std::binary_search(view.matches.begin(), view.matches.end(), i)) {
        FillLineBackground(colors::kMatch);
      }
      ImGui::TextColored(colors::kDim, "%*d ", digits, i + 1);
      ImGui::SameLine(0, 0);
      DrawCodeLine(model.lines[i], &model, &view);
    }
  }
  ImGui::EndChild();
  ImGui::PopID();
}

void DrawDiffView(const char* id, const DiffModel& diff, DiffViewState& view, const TextModel* after_model,
                  TextViewState* after_view) {
  ImGui::PushID(id);
  const std::vector<int64_t>& starts = view.side_by_side ? diff.row_change_starts : diff.line_change_starts;
  const int64_t blocks = static_cast<int64_t>(starts.size());
  if (view.model != &diff) {
    view.model = &diff;
    view.current_change = blocks > 0 ? 0 : -1;
    view.scroll_to = blocks > 0 ? 0 : -1;
  }
  if (ImGui::RadioButton("side by side", view.side_by_side) && !view.side_by_side) {
    view.side_by_side = true;
    view.scroll_to = view.current_change;
  }
  ImGui::SameLine();
  if (ImGui::RadioButton("unified", !view.side_by_side) && view.side_by_side) {
    view.side_by_side = false;
    view.scroll_to = view.current_change;
  }
  ImGui::SameLine(0, 20);
  ImGui::BeginDisabled(blocks == 0);
  // The layout may have changed above; the blocks are the same in both.
  const std::vector<int64_t>& s = view.side_by_side ? diff.row_change_starts : diff.line_change_starts;
  auto jump = [&](bool forward) {
    const int64_t at = view.current_change >= 0 ? s[view.current_change] : -1;
    const int64_t next = NextChange(s, at, forward);
    view.current_change = std::lower_bound(s.begin(), s.end(), next) - s.begin();
    view.scroll_to = view.current_change;
  };
  if (ImGui::Button("< prev change") || (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
                                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_UpArrow)) &&
                                         ImGui::GetIO().KeyAlt)) {
    jump(false);
  }
  ImGui::SameLine();
  if (ImGui::Button("next change >") || (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
                                         ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_DownArrow)) &&
                                         ImGui::GetIO().KeyAlt)) {
    jump(true);
  }
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (blocks == 0) {
    ImGui::TextColored(colors::kDim, "no changes");
  } else {
    ImGui::Text("change %lld/%lld", static_cast<long long>(view.current_change + 1), static_cast<long long>(blocks));
    ImGui::SameLine();
    ImGui::TextColored(colors::kGood, "+%lld", static_cast<long long>(diff.added));
    ImGui::SameLine();
    ImGui::TextColored(colors::kBad, "-%lld", static_cast<long long>(diff.removed));
    ImGui::SameLine();
    ImGui::TextColored(colors::kDim, "lines");
  }

  const float lh = ImGui::GetTextLineHeightWithSpacing();
  auto scroll_if_asked = [&](const std::vector<int64_t>& st) {
    if (view.scroll_to < 0 || view.scroll_to >= static_cast<int64_t>(st.size())) return;
    ImGui::SetScrollY(std::max(0.0f, st[view.scroll_to] * lh - ImGui::GetWindowHeight() * 0.25f));
    view.scroll_to = -1;
  };
  if (view.side_by_side) {
    const ImGuiTableFlags flags = ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_BordersInnerV |
                                  ImGuiTableFlags_BordersOuter | ImGuiTableFlags_Resizable;
    if (ImGui::BeginTable("##sbs", 2, flags)) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("before", ImGuiTableColumnFlags_WidthFixed, ImGui::GetContentRegionAvail().x * 0.5f);
      ImGui::TableSetupColumn("after", ImGuiTableColumnFlags_WidthFixed, ImGui::GetContentRegionAvail().x * 0.5f);
      ImGui::TableHeadersRow();
      scroll_if_asked(diff.row_change_starts);
      ImGuiListClipper clipper;
      clipper.Begin(static_cast<int>(diff.rows.size()), lh);
      while (clipper.Step()) {
        for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
          const DiffModel::Row& row = diff.rows[r];
          ImGui::TableNextRow();
          for (int side = 0; side < 2; ++side) {
            ImGui::TableSetColumnIndex(side);
            const int64_t li = side == 0 ? row.left : row.right;
            if (li < 0) {
              ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, IM_COL32(60, 60, 66, 90));
              ImGui::TextUnformatted("");
              continue;
            }
            const DiffLine& l = diff.lines[li];
            if (l.kind == DiffLine::Kind::kAdded) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, colors::kAdded);
            if (l.kind == DiffLine::Kind::kRemoved) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, colors::kRemoved);
            ImGui::TextColored(colors::kDim, "%5lld ", static_cast<long long>(side == 0 ? l.old_line : l.new_line));
            ImGui::SameLine(0, 0);
            DrawCodeLine(l.text, nullptr, nullptr);
          }
        }
      }
      ImGui::EndTable();
    }
  } else {
    ImGui::BeginChild("##unified", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
    scroll_if_asked(diff.line_change_starts);
    ImGuiListClipper clipper;
    clipper.Begin(static_cast<int>(diff.lines.size()), lh);
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        const DiffLine& l = diff.lines[i];
        char mark = ' ';
        if (l.kind == DiffLine::Kind::kAdded) {
          FillLineBackground(colors::kAdded);
          mark = '+';
        } else if (l.kind == DiffLine::Kind::kRemoved) {
          FillLineBackground(colors::kRemoved);
          mark = '-';
        }
        char nums[48];
        std::snprintf(nums, sizeof(nums), "%5s %5s %c ", l.old_line ? std::to_string(l.old_line).c_str() : "",
                      l.new_line ? std::to_string(l.new_line).c_str() : "", mark);
        ImGui::TextColored(colors::kDim, "%s", nums);
        ImGui::SameLine(0, 0);
        // Names in added/common lines jump to their definition in the after text.
        const bool in_after = l.kind != DiffLine::Kind::kRemoved;
        DrawCodeLine(l.text, in_after ? after_model : nullptr, in_after ? after_view : nullptr);
      }
    }
    ImGui::EndChild();
  }
  ImGui::PopID();
}

void DrawComputing(const char* what) {
  const char spin[] = "|/-\\";
  ImGui::TextColored(colors::kWarn, "%c computing %s…", spin[static_cast<int>(ImGui::GetTime() * 8) % 4], what);
}

void Badge(const char* text, const ImVec4& color) {
  ImGui::SameLine(0, 6);
  ImVec2 p = ImGui::GetCursorScreenPos();
  ImVec2 size = ImGui::CalcTextSize(text);
  ImVec4 bg = color;
  bg.w = 0.22f;
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x - 3, p.y), ImVec2(p.x + size.x + 3, p.y + size.y + 1),
                                            ImGui::GetColorU32(bg), 3.0f);
  ImGui::TextColored(color, "%s", text);
}

}  // namespace passlab::gui
