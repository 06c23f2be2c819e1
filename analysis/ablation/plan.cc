#include "analysis/ablation/plan.h"

#include <cctype>
#include <fstream>
#include <set>

#include "core/ir/str_util.h"
#include "core/pass/pass_filter.h"
#include "passes/registry.h"

namespace passlab {
namespace {

std::string_view StripWhitespace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string IdList(const std::vector<PassOccurrence>& occurrences, const std::set<std::string>& names) {
  std::vector<std::string> ids;
  for (const PassOccurrence& o : occurrences) {
    if (names.count(o.pass_name)) ids.push_back(StrCat("@", o.id));
  }
  return Join(ids, ",");
}

std::string RequiredReason(std::string_view pass) {
  const PassRegistryEntry* e = FindRegisteredPass(pass);
  if (e == nullptr || !e->required) return "";
  return std::string(e->required_reason.empty() ? "the registry marks it required" : e->required_reason);
}

}  // namespace

nlohmann::json AblationVariant::ToJson() const {
  nlohmann::json j;
  j["name"] = name;
  j["kind"] = kind;
  j["passes"] = passes;
  j["disable"] = disable;
  j["enable_only"] = enable_only;
  if (required) {
    j["required"] = true;
    j["required_reason"] = required_reason;
  }
  return j;
}

absl::StatusOr<AblationVariant> AblationVariant::FromJson(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) {
    return absl::InvalidArgumentError(StrCat("not a variant: ", j.dump()));
  }
  AblationVariant v;
  v.name = j["name"];
  v.kind = j.value("kind", "file");
  if (j.contains("passes")) v.passes = j["passes"].get<std::vector<std::string>>();
  v.disable = j.value("disable", "");
  v.enable_only = j.value("enable_only", "");
  v.required = j.value("required", false);
  v.required_reason = j.value("required_reason", "");
  return v;
}

std::vector<std::string> LeafPassNames(const std::vector<PassOccurrence>& occurrences) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const PassOccurrence& o : occurrences) {
    if (seen.insert(o.pass_name).second) names.push_back(o.pass_name);
  }
  return names;
}

std::vector<AblationVariant> PlanDisableOne(const std::vector<PassOccurrence>& occurrences, bool per_occurrence) {
  std::vector<AblationVariant> plan;
  if (!per_occurrence) {
    for (const std::string& name : LeafPassNames(occurrences)) {
      AblationVariant v;
      v.name = StrCat("disable ", name);
      v.kind = "disable-one";
      v.passes = {name};
      v.disable = IdList(occurrences, {name});
      v.required_reason = RequiredReason(name);
      v.required = !v.required_reason.empty();
      plan.push_back(std::move(v));
    }
    return plan;
  }
  for (const PassOccurrence& o : occurrences) {
    AblationVariant v;
    v.name = StrCat("disable ", o.pass_name, ":", o.occurrence_index, " (@", o.id, ")");
    v.kind = "disable-occurrence";
    v.passes = {o.pass_name};
    v.disable = StrCat("@", o.id);
    v.required_reason = RequiredReason(o.pass_name);
    v.required = !v.required_reason.empty();
    plan.push_back(std::move(v));
  }
  return plan;
}

std::vector<AblationVariant> PlanAddOne(const std::vector<PassOccurrence>& occurrences) {
  std::set<std::string> required;
  for (const std::string& name : LeafPassNames(occurrences)) {
    if (!RequiredReason(name).empty()) required.insert(name);
  }
  std::vector<AblationVariant> plan;
  for (const std::string& name : LeafPassNames(occurrences)) {
    if (required.count(name)) continue;
    std::set<std::string> enabled = required;
    enabled.insert(name);
    AblationVariant v;
    v.name = StrCat("add ", name);
    v.kind = "add-one";
    v.passes = {name};
    v.enable_only = IdList(occurrences, enabled);
    plan.push_back(std::move(v));
  }
  return plan;
}

std::vector<AblationVariant> PlanAaCopies(int copies) {
  std::vector<AblationVariant> plan;
  for (int i = 1; i <= copies; ++i) {
    AblationVariant v;
    v.name = StrCat("aa-copy-", i);
    v.kind = kAaVariantKind;
    plan.push_back(std::move(v));
  }
  return plan;
}

absl::StatusOr<std::vector<AblationVariant>> ReadVariantFile(const std::string& path,
                                                             const std::vector<PassOccurrence>& occurrences) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("cannot open variant file '", path, "'"));
  std::vector<AblationVariant> plan;
  std::set<std::string> names;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::string_view text = StripWhitespace(line);
    if (text.empty()) continue;
    auto where = [&] { return StrCat(path, ":", lineno, ": "); };
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) {
      return absl::InvalidArgumentError(StrCat(where(), "expected 'NAME: FILTERS' or 'NAME: enable-only FILTERS'"));
    }
    AblationVariant v;
    v.kind = "file";
    v.name = std::string(StripWhitespace(text.substr(0, colon)));
    std::string_view filters = StripWhitespace(text.substr(colon + 1));
    if (v.name.empty()) return absl::InvalidArgumentError(StrCat(where(), "empty variant name"));
    if (!names.insert(v.name).second) {
      return absl::InvalidArgumentError(StrCat(where(), "variant '", v.name, "' is defined twice"));
    }
    constexpr std::string_view kEnableOnly = "enable-only";
    const bool enable_only = filters.substr(0, kEnableOnly.size()) == kEnableOnly;
    if (enable_only) filters = StripWhitespace(filters.substr(kEnableOnly.size()));
    if (filters.empty()) return absl::InvalidArgumentError(StrCat(where(), "variant '", v.name, "' has no filters"));
    absl::StatusOr<std::unique_ptr<PassFilterObserver>> check =
        PassFilterObserver::Create(enable_only ? "" : filters, enable_only ? filters : "", false, occurrences);
    if (!check.ok()) return absl::InvalidArgumentError(StrCat(where(), check.status().message()));
    (enable_only ? v.enable_only : v.disable) = std::string(filters);
    for (std::string_view f : SplitAny(filters, ",")) {
      if (!StripWhitespace(f).empty()) v.passes.emplace_back(StripWhitespace(f));
    }
    plan.push_back(std::move(v));
  }
  if (plan.empty()) return absl::InvalidArgumentError(StrCat(path, ": no variants"));
  return plan;
}

}  // namespace passlab
