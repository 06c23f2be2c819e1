#include "gui/state/text_model.h"

#include <algorithm>
#include <cctype>

#include "core/ir/primitive_type.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/verify/shape_inference.h"

namespace passlab::gui {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '$';
}
bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

bool IsKeyword(std::string_view w) {
  static constexpr std::string_view kKeywords[] = {"HloModule", "ENTRY", "ROOT", "func.func", "module",
                                                   "return", "true", "false"};
  return std::find(std::begin(kKeywords), std::end(kKeywords), w) != std::end(kKeywords);
}

// MLIR element and container types ("f32", "i64", "index", "tensor<...>").
bool IsMlirType(std::string_view w) {
  if (w == "index" || w == "tensor" || w == "memref" || w == "vector" || w == "f16" || w == "bf16" ||
      w == "f32" || w == "f64") {
    return true;
  }
  return w.size() >= 2 && w[0] == 'i' && std::all_of(w.begin() + 1, w.end(), [](char c) { return std::isdigit(c); });
}

// The end of a bracketed run starting at `i` (line[i] is `open`), or the line end.
size_t SkipBalanced(std::string_view line, size_t i, char open, char close) {
  int depth = 0;
  for (; i < line.size(); ++i) {
    if (line[i] == open) ++depth;
    if (line[i] == close && --depth == 0) return i + 1;
  }
  return line.size();
}

void Push(std::vector<Token>& out, TokenKind kind, size_t begin, size_t end) {
  if (begin >= end) return;
  if (!out.empty() && out.back().kind == kind && out.back().end == static_cast<int32_t>(begin)) {
    out.back().end = static_cast<int32_t>(end);
    return;
  }
  out.push_back({kind, static_cast<int32_t>(begin), static_cast<int32_t>(end)});
}

// The name a definition line defines: "%x = ...", "ROOT %x = ...",
// "%comp (p: f32[]) -> ... {", "ENTRY %main ... {", "func.func @f(...".
std::string_view DefinedName(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string_view::npos) return {};
  std::string_view rest = line.substr(i);
  for (std::string_view prefix : {"ROOT ", "ENTRY ", "func.func private ", "func.func "}) {
    if (rest.substr(0, prefix.size()) == prefix) rest.remove_prefix(prefix.size());
  }
  if (rest.empty() || (rest[0] != '%' && rest[0] != '@')) return {};
  size_t e = 1;
  while (e < rest.size() && IsNameChar(rest[e])) ++e;
  std::string_view name = rest.substr(0, e);
  std::string_view after = rest.substr(e);
  if (after.substr(0, 3) == " = " || after.substr(0, 2) == " (" || after.substr(0, 1) == "(" ||
      after.substr(0, 2) == " {" || after.substr(0, 2) == ":") {
    return name;
  }
  // "%0:2 = " (MLIR multi-result values).
  if (!after.empty() && after[0] == ':' && after.find(" = ") != std::string_view::npos) return name;
  return {};
}

}  // namespace

std::vector<Token> TokenizeLine(std::string_view line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == '%' || c == '@' || c == '^') {
      size_t e = i + 1;
      while (e < line.size() && IsNameChar(line[e])) ++e;
      Push(out, TokenKind::kName, i, e);
      i = e;
      continue;
    }
    if (c == '"') {
      size_t e = i + 1;
      while (e < line.size() && line[e] != '"') e += line[e] == '\\' ? 2 : 1;
      e = std::min(e + 1, line.size());
      Push(out, TokenKind::kString, i, e);
      i = e;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '-' && i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1])) &&
         (i == 0 || !IsNameChar(line[i - 1])))) {
      size_t e = i + 1;
      while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '.' ||
                                 ((line[e] == '-' || line[e] == '+') && (line[e - 1] == 'e' || line[e - 1] == 'E')))) {
        ++e;
      }
      Push(out, TokenKind::kNumber, i, e);
      i = e;
      continue;
    }
    if (IsWordStart(c)) {
      size_t e = i + 1;
      while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_' ||
                                 line[e] == '.' || line[e] == '-')) {
        ++e;
      }
      // A trailing '-' belongs to the punctuation ("->").
      while (e > i + 1 && line[e - 1] == '-') --e;
      std::string_view w = line.substr(i, e - i);
      char next = e < line.size() ? line[e] : '\0';
      if (IsKeyword(w)) {
        Push(out, TokenKind::kKeyword, i, e);
      } else if (next == '[' && (PrimitiveTypeFromName(w).has_value() || w == "token")) {
        // HLO shape: type[dims]{layout}.
        size_t s = SkipBalanced(line, e, '[', ']');
        if (s < line.size() && line[s] == '{') s = SkipBalanced(line, s, '{', '}');
        Push(out, TokenKind::kType, i, s);
        e = s;
      } else if (next == '<' && IsMlirType(w)) {
        e = SkipBalanced(line, e, '<', '>');
        Push(out, TokenKind::kType, i, e);
      } else if (IsMlirType(w)) {
        Push(out, TokenKind::kType, i, e);
      } else if (next == '(') {
        Push(out, TokenKind::kOpcode, i, e);
      } else if (next == '=') {
        Push(out, TokenKind::kAttribute, i, e);
      } else if (w.find('.') != std::string_view::npos && !w.ends_with('.')) {
        Push(out, TokenKind::kOpcode, i, e);  // MLIR "arith.addf"
      } else {
        Push(out, TokenKind::kPlain, i, e);
      }
      i = e;
      continue;
    }
    Push(out, TokenKind::kPlain, i, i + 1);
    ++i;
  }
  return out;
}

int64_t TextModel::FindDefinition(std::string_view name) const {
  auto it = definitions.find(std::string(name));
  return it == definitions.end() ? -1 : it->second;
}

std::shared_ptr<const TextModel> BuildTextModel(std::shared_ptr<const std::string> text) {
  auto m = std::make_shared<TextModel>();
  m->text = std::move(text);
  std::string_view t = *m->text;
  size_t start = 0;
  while (start < t.size()) {
    size_t nl = t.find('\n', start);
    if (nl == std::string_view::npos) nl = t.size();
    m->lines.push_back(t.substr(start, nl - start));
    start = nl + 1;
  }
  for (size_t i = 0; i < m->lines.size(); ++i) {
    std::string_view name = DefinedName(m->lines[i]);
    if (!name.empty()) m->definitions.emplace(std::string(name), static_cast<int64_t>(i));
  }
  return m;
}

std::vector<int64_t> SearchLines(const TextModel& model, std::string_view needle) {
  std::vector<int64_t> out;
  if (needle.empty()) return out;
  auto eq = [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); };
  for (size_t i = 0; i < model.lines.size(); ++i) {
    std::string_view l = model.lines[i];
    if (std::search(l.begin(), l.end(), needle.begin(), needle.end(), eq) != l.end()) {
      out.push_back(static_cast<int64_t>(i));
    }
  }
  return out;
}

std::shared_ptr<const DiffModel> BuildDiffModel(std::shared_ptr<const std::string> before,
                                                std::shared_ptr<const std::string> after, bool parse_hlo) {
  auto d = std::make_shared<DiffModel>();
  d->before = std::move(before);
  d->after = std::move(after);
  d->lines = DiffLines(*d->before, *d->after);
  // Side-by-side rows: a run of removed lines followed by a run of added
  // lines is paired row by row; common lines fill both cells.
  const int64_t n = static_cast<int64_t>(d->lines.size());
  int64_t i = 0;
  while (i < n) {
    const DiffLine::Kind k = d->lines[i].kind;
    if (k == DiffLine::Kind::kCommon) {
      d->rows.push_back({i, i});
      ++i;
      continue;
    }
    d->line_change_starts.push_back(i);
    d->row_change_starts.push_back(static_cast<int64_t>(d->rows.size()));
    std::vector<int64_t> removed, added;
    while (i < n && d->lines[i].kind != DiffLine::Kind::kCommon) {
      (d->lines[i].kind == DiffLine::Kind::kRemoved ? removed : added).push_back(i);
      ++i;
    }
    d->removed += static_cast<int64_t>(removed.size());
    d->added += static_cast<int64_t>(added.size());
    for (size_t r = 0; r < std::max(removed.size(), added.size()); ++r) {
      d->rows.push_back({r < removed.size() ? removed[r] : -1, r < added.size() ? added[r] : -1});
    }
  }
  d->summary = StrCat("+", d->added, " -", d->removed, " lines");
  if (parse_hlo) {
    ParseOptions options;
    options.infer_shape = InferInstructionShape;
    auto a = ParseHloModule(*d->before, "before", options);
    auto b = ParseHloModule(*d->after, "after", options);
    if (a.ok() && b.ok()) {
      d->has_structural = true;
      d->structural = DiffModules(**a, **b);
      d->summary = d->structural.Summary();
    } else {
      d->structural_error = std::string((a.ok() ? b.status() : a.status()).message());
    }
  }
  return d;
}

int64_t NextChange(const std::vector<int64_t>& starts, int64_t at, bool forward) {
  if (starts.empty()) return -1;
  if (forward) {
    auto it = std::upper_bound(starts.begin(), starts.end(), at);
    return it == starts.end() ? starts.front() : *it;
  }
  auto it = std::lower_bound(starts.begin(), starts.end(), at);
  return it == starts.begin() ? starts.back() : *(it - 1);
}

}  // namespace passlab::gui
