#include "core/pass/pass_filter.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>

#include "core/ir/close_matches.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

bool HasRegexCharacters(std::string_view s) {
  return s.find_first_of(".*+?[]()|^$\\{}") != std::string_view::npos;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  for (std::string_view c : SplitAny(path, "/")) {
    if (!c.empty()) out.emplace_back(c);
  }
  return out;
}

}  // namespace

PassFilterTerm::PassFilterTerm(PassFilterTerm&&) noexcept = default;
PassFilterTerm& PassFilterTerm::operator=(PassFilterTerm&&) noexcept = default;
PassFilterTerm::~PassFilterTerm() = default;

absl::StatusOr<PassFilterTerm> PassFilterTerm::Parse(std::string_view raw) {
  PassFilterTerm t;
  std::string_view text = raw;
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  t.text_ = std::string(text);
  if (text.empty()) return absl::InvalidArgumentError("empty pass filter");
  if (text.front() == '@') {
    if (!SimpleAtoi(text.substr(1), &t.id_) || t.id_ < 0) {
      return absl::InvalidArgumentError(StrCat("pass filter '", text, "': expected @<occurrence id>"));
    }
    return t;
  }
  if (HasRegexCharacters(text)) {
    t.regex_ = std::make_unique<re2::RE2>(re2::StringPiece(text.data(), text.size()), re2::RE2::Quiet);
    if (!t.regex_->ok()) {
      return absl::InvalidArgumentError(
          StrCat("pass filter '", text, "' is not a valid regular expression: ", t.regex_->error()));
    }
    return t;
  }
  std::string_view name = text;
  size_t colon = name.rfind(':');
  if (colon != std::string_view::npos) {
    if (!SimpleAtoi(name.substr(colon + 1), &t.occurrence_) || t.occurrence_ < 0) {
      return absl::InvalidArgumentError(StrCat("pass filter '", text, "': expected name:<occurrence>"));
    }
    name = name.substr(0, colon);
  }
  size_t slash = name.rfind('/');
  if (slash != std::string_view::npos) {
    t.path_suffix_ = std::string(name.substr(0, slash));
    name = name.substr(slash + 1);
  }
  t.name_ = std::string(name);
  if (t.name_.empty()) return absl::InvalidArgumentError(StrCat("pass filter '", text, "' has no name"));
  return t;
}

bool PassFilterTerm::MatchesParts(int64_t id, const std::string& path, const std::string& name,
                                  int64_t occurrence_index) const {
  if (id_ >= 0) return id == id_;
  if (regex_ != nullptr) {
    return re2::RE2::FullMatch(name, *regex_) || re2::RE2::FullMatch(StrCat(path, "/", name), *regex_);
  }
  if (occurrence_ >= 0 && (name != name_ || occurrence_index != occurrence_)) return false;
  if (!path_suffix_.empty()) {
    std::string full = StrCat("/", path, "/");
    return name == name_ && full.size() >= path_suffix_.size() + 2 &&
           full.find(StrCat("/", path_suffix_, "/")) != std::string::npos;
  }
  if (name == name_) return true;
  // A bare name also selects every pass inside a pipeline of that name.
  if (occurrence_ < 0) {
    for (const std::string& c : Components(path)) {
      if (c == name_) return true;
    }
  }
  return false;
}

bool PassFilterTerm::Matches(const PassOccurrence& o) const {
  return MatchesParts(o.id, o.pipeline_path, o.pass_name, o.occurrence_index);
}

bool PassFilterTerm::Matches(const PassRunInfo& r) const {
  return MatchesParts(r.occurrence_id, r.pipeline_path, r.pass_name, r.occurrence_index);
}

absl::StatusOr<std::vector<PassFilterTerm>> ParsePassFilterList(std::string_view list) {
  std::vector<PassFilterTerm> terms;
  if (list.empty()) return terms;
  for (std::string_view part : SplitAny(list, ",")) {
    ASSIGN_OR_RETURN(PassFilterTerm t, PassFilterTerm::Parse(part));
    terms.push_back(std::move(t));
  }
  return terms;
}

absl::Status ValidatePassFilters(const std::vector<PassFilterTerm>& terms,
                                 const std::vector<PassOccurrence>& occurrences) {
  std::set<std::string> known;
  for (const PassOccurrence& o : occurrences) {
    known.insert(o.pass_name);
    for (const std::string& c : Components(o.pipeline_path)) known.insert(c);
  }
  for (const PassFilterTerm& t : terms) {
    if (t.is_regex()) continue;
    bool any = std::any_of(occurrences.begin(), occurrences.end(),
                           [&](const PassOccurrence& o) { return t.Matches(o); });
    if (any) continue;
    std::vector<std::pair<int, std::string>> close;
    std::string bare = t.text();
    bare = bare.substr(bare.rfind('/') == std::string::npos ? 0 : bare.rfind('/') + 1);
    bare = bare.substr(0, bare.find(':'));
    for (const std::string& k : known) {
      int d = EditDistance(bare, k);
      if (d <= std::max<int>(2, static_cast<int>(bare.size()) / 3) ||
          k.find(bare) != std::string::npos || (!k.empty() && bare.find(k) != std::string::npos)) {
        close.push_back({d, k});
      }
    }
    std::sort(close.begin(), close.end());
    std::string hint;
    for (size_t i = 0; i < close.size() && i < 5; ++i) StrAppend(&hint, i ? ", " : "", close[i].second);
    return absl::InvalidArgumentError(StrCat(
        "pass filter '", t.text(), "' matches no pass in the pipeline",
        hint.empty() ? " (see --list-passes)" : StrCat("; did you mean: ", hint, "?")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PassFilterObserver>> PassFilterObserver::Create(
    std::string_view disable, std::string_view enable_only, bool disable_all,
    const std::vector<PassOccurrence>& occurrences) {
  if (!disable.empty() && !enable_only.empty()) {
    return absl::InvalidArgumentError("--disable and --enable-only cannot be used together");
  }
  if (disable_all && !disable.empty()) {
    return absl::InvalidArgumentError("--disable-all and --disable cannot be used together");
  }
  PassFilterMode mode = disable_all ? PassFilterMode::kDisableAll
                        : !enable_only.empty() ? PassFilterMode::kEnableOnly
                                               : PassFilterMode::kDisable;
  ASSIGN_OR_RETURN(std::vector<PassFilterTerm> terms,
      ParsePassFilterList(mode == PassFilterMode::kEnableOnly ? enable_only : disable));
  RETURN_IF_ERROR(ValidatePassFilters(terms, occurrences));
  return std::make_unique<PassFilterObserver>(mode, std::move(terms));
}

bool PassFilterObserver::ShouldRun(const PassRunInfo& info) {
  bool matched = std::any_of(terms_.begin(), terms_.end(),
                             [&](const PassFilterTerm& t) { return t.Matches(info); });
  switch (mode_) {
    case PassFilterMode::kDisableAll: return false;
    case PassFilterMode::kEnableOnly: return matched;
    case PassFilterMode::kDisable: return !matched;
  }
  return true;
}

bool PassFilterObserver::Enabled(const PassOccurrence& o) const {
  bool matched = std::any_of(terms_.begin(), terms_.end(),
                             [&](const PassFilterTerm& t) { return t.Matches(o); });
  switch (mode_) {
    case PassFilterMode::kDisableAll: return false;
    case PassFilterMode::kEnableOnly: return matched;
    case PassFilterMode::kDisable: return !matched;
  }
  return true;
}

}  // namespace passlab
