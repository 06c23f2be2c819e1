#include "analysis/ablation/compare.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "analysis/ablation/ablation_report.h"
#include "analysis/ablation/stats.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Num(const OrderedJson& v, const char* key) {
  if (!v.is_object() || !v.contains(key) || !v[key].is_number()) return kNaN;
  return v[key].get<double>();
}

// How a sweep is called in the table: pipeline, model and device, with the
// directory's name when that does not tell the sweeps apart.
std::vector<std::string> Labels(const std::vector<AblationReport>& reports, const std::vector<std::string>& dirs) {
  std::vector<std::string> labels;
  for (const AblationReport& r : reports) {
    const OrderedJson& m = r.manifest;
    std::string model = m.contains("model") && m["model"].is_object() ? m["model"].value("name", "")
                        : m.contains("model") && m["model"].is_string() ? m["model"].get<std::string>()
                                                                        : "";
    labels.push_back(StrCat(m.value("pipeline", "?"), " ", model, " ", m.value("device", "")));
  }
  std::set<std::string> distinct(labels.begin(), labels.end());
  if (distinct.size() != labels.size()) {
    for (size_t i = 0; i < labels.size(); ++i) {
      labels[i] = StrCat(std::filesystem::path(dirs[i]).filename().string(), " (", labels[i], ")");
    }
  }
  return labels;
}

// Flattened manifest fields ("model.batch": 8) for the differences.
void Flatten(const OrderedJson& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      Flatten(it.value(), prefix.empty() ? it.key() : StrCat(prefix, ".", it.key()), out);
    }
    return;
  }
  out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
}

std::string RatioCell(const OrderedJson& cell) {
  if (cell.is_null()) return "–";
  double r = Num(cell, "ratio");
  std::string outcome = cell.value("outcome", "");
  if (std::isnan(r)) return outcome.empty() ? "–" : outcome;
  std::string text = fmt::format("{:+.1f}%", 100 * (r - 1));
  double lo = Num(cell, "ci_low"), hi = Num(cell, "ci_high");
  if (!std::isnan(lo) && !std::isnan(hi)) text += fmt::format(" [{:+.1f}, {:+.1f}]", 100 * (lo - 1), 100 * (hi - 1));
  if (cell.value("significant", false)) text = StrCat("**", text, "**");
  if (outcome == "wrong-result") text += " WRONG";
  return text;
}

}  // namespace

OrderedJson CompareAblationReports(const std::vector<AblationReport>& reports, const std::vector<std::string>& labels) {
  OrderedJson out;
  out["schema"] = "passlab.ablation-compare/1";
  OrderedJson sweeps = OrderedJson::array();
  // variant name -> one cell per sweep (null where a sweep lacks it).
  std::map<std::string, std::vector<OrderedJson>> cells;
  std::vector<std::string> order;
  for (size_t s = 0; s < reports.size(); ++s) {
    const AblationReport& r = reports[s];
    const OrderedJson& manifest = r.manifest.is_object() ? r.manifest : OrderedJson::object();
    sweeps.push_back({{"label", labels[s]},
                      {"pipeline", manifest.value("pipeline", "")},
                      {"device", manifest.value("device", "")},
                      {"metric", r.metric},
                      {"baseline_median_ns", r.baseline.median_ns.value_or(kNaN)},
                      {"variants", r.variants.size()}});
    for (const AblationReportVariant& v : r.variants) {
      if (v.name.empty()) continue;
      auto [it, inserted] = cells.try_emplace(v.name, std::vector<OrderedJson>(reports.size()));
      if (inserted) order.push_back(v.name);
      OrderedJson cell;
      for (auto [key, x] : {std::pair<const char*, const std::optional<double>*>{"ratio", &v.ratio},
                            {"ci_low", &v.ci_low},
                            {"ci_high", &v.ci_high},
                            {"p_adjusted", &v.p_adjusted}}) {
        cell[key] = x->has_value() ? OrderedJson(**x) : OrderedJson(nullptr);
      }
      cell["significant"] = v.significant;
      cell["outcome"] = v.outcome.value_or("");
      it->second[s] = cell;
    }
  }
  out["sweeps"] = sweeps;
  // Largest effect in any sweep first.
  auto effect = [&](const std::string& name) {
    double e = 0;
    for (const OrderedJson& c : cells[name]) {
      double r = c.is_null() ? kNaN : Num(c, "ratio");
      if (!std::isnan(r) && r > 0) e = std::max(e, std::abs(std::log(r)));
    }
    return e;
  };
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return effect(a) > effect(b);
  });
  OrderedJson rows = OrderedJson::array();
  for (const std::string& name : order) rows.push_back({{"name", name}, {"sweeps", cells[name]}});
  out["variants"] = rows;

  // Each sweep against the first.
  OrderedJson agreement = OrderedJson::array();
  for (size_t s = 1; s < reports.size(); ++s) {
    std::vector<double> a, b;
    int64_t considered = 0, same_sign = 0;
    OrderedJson disagree = OrderedJson::array();
    for (const std::string& name : order) {
      const OrderedJson& x = cells[name][0];
      const OrderedJson& y = cells[name][s];
      if (x.is_null() || y.is_null()) continue;
      double rx = Num(x, "ratio"), ry = Num(y, "ratio");
      if (std::isnan(rx) || std::isnan(ry)) continue;
      a.push_back(rx);
      b.push_back(ry);
      if (!x.value("significant", false) && !y.value("significant", false)) continue;
      ++considered;
      if ((rx - 1) * (ry - 1) > 0) {
        ++same_sign;
      } else {
        disagree.push_back(name);
      }
    }
    double rho = SpearmanCorrelation(a, b);
    agreement.push_back({{"sweep", s},
                         {"against", 0},
                         {"common_variants", a.size()},
                         {"significant_in_either", considered},
                         {"same_sign", same_sign},
                         {"disagreeing", disagree},
                         {"spearman", std::isnan(rho) ? OrderedJson(nullptr) : OrderedJson(rho)}});
  }
  out["agreement"] = agreement;

  // Manifest fields whose values differ between the sweeps.
  std::vector<std::map<std::string, std::string>> flat(reports.size());
  std::set<std::string> keys;
  for (size_t s = 0; s < reports.size(); ++s) {
    Flatten(reports[s].manifest, "", flat[s]);
    for (const auto& [k, v] : flat[s]) keys.insert(k);
  }
  OrderedJson differences = OrderedJson::array();
  for (const std::string& k : keys) {
    std::vector<std::string> values;
    for (const auto& f : flat) values.push_back(f.count(k) ? f.at(k) : "(absent)");
    if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) continue;
    differences.push_back({{"field", k}, {"values", values}});
  }
  out["manifest_differences"] = differences;
  return out;
}

absl::StatusOr<OrderedJson> CompareAblationSweeps(const std::vector<std::string>& dirs) {
  if (dirs.size() < 2) {
    return absl::InvalidArgumentError(StrCat("--compare needs two or more sweep directories, got ", dirs.size()));
  }
  std::vector<AblationReport> reports;
  for (const std::string& dir : dirs) {
    const std::string path = StrCat(dir, "/report.json");
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(StrCat(path, ": cannot read (not a finished sweep directory?)"));
    std::stringstream text;
    text << in.rdbuf();
    Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return absl::InvalidArgumentError(StrCat(path, ": not JSON"));
    absl::StatusOr<AblationReport> report = ParseAblationReport(j, path);
    if (!report.ok()) {
      return absl::InvalidArgumentError(
          StrCat("not a passlab ablation report (schema passlab.ablation/N): ", report.status().message()));
    }
    reports.push_back(*std::move(report));
  }
  return CompareAblationReports(reports, Labels(reports, dirs));
}

std::string RenderComparisonMarkdown(const OrderedJson& c) {
  std::string out = "# Sweeps side by side\n\n";
  const OrderedJson& sweeps = c["sweeps"];
  for (size_t s = 0; s < sweeps.size(); ++s) {
    double base = Num(sweeps[s], "baseline_median_ns");
    out += fmt::format("{}. **{}**: {} variants, metric {}, baseline median {}\n", s + 1,
                       sweeps[s].value("label", ""), sweeps[s].value("variants", 0), sweeps[s].value("metric", ""),
                       std::isnan(base) ? std::string("–") : fmt::format("{:.4f} ms", base / 1e6));
  }
  out += "\nChange when the variant's pass is disabled, with its 95% CI; **bold** = significant.\n\n| variant |";
  for (const OrderedJson& s : sweeps) out += StrCat(" ", s.value("label", ""), " |");
  out += "\n|---|";
  for (size_t s = 0; s < sweeps.size(); ++s) out += "---|";
  out += "\n";
  for (const OrderedJson& row : c["variants"]) {
    out += StrCat("| ", row.value("name", ""), " |");
    for (const OrderedJson& cell : row["sweeps"]) out += StrCat(" ", RatioCell(cell), " |");
    out += "\n";
  }
  out += "\n## Agreement with sweep 1\n\n";
  for (const OrderedJson& a : c["agreement"]) {
    size_t s = a.value("sweep", 0);
    std::string rho = a["spearman"].is_number() ? fmt::format("{:.2f}", a["spearman"].get<double>()) : "n/a";
    out += fmt::format(
        "- **{}**: {} variants measured by both; of the {} significant in either, {} change in the same direction; "
        "Spearman rank correlation of the ratios {}",
        sweeps[s].value("label", ""), a.value("common_variants", 0), a.value("significant_in_either", 0),
        a.value("same_sign", 0), rho);
    if (!a["disagreeing"].empty()) {
      std::vector<std::string> names;
      for (const OrderedJson& n : a["disagreeing"]) names.push_back(n.get<std::string>());
      out += StrCat("; opposite: ", Join(names, ", "));
    }
    out += ".\n";
  }
  out += "\n## What differs in the manifests\n\n";
  if (c["manifest_differences"].empty()) out += "Nothing.\n";
  for (const OrderedJson& d : c["manifest_differences"]) {
    std::vector<std::string> values;
    for (const OrderedJson& v : d["values"]) values.push_back(StrCat("`", v.get<std::string>(), "`"));
    out += StrCat("- ", d.value("field", ""), ": ", Join(values, " / "), "\n");
  }
  return out;
}

}  // namespace passlab
