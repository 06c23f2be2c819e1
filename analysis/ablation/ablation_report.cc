#include "analysis/ablation/ablation_report.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "analysis/json_schema.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
using json_schema::kVersionKey;
using json_schema::NumberJson;
using json_schema::Reader;
using json_schema::SchemaError;

// The outcomes in report order (report_internal.h kOutcomeOrder; repeated
// here so the document does not depend on the renderers).
// ("identical", the screen's untimed variants, is written only when there
// are any, after these: reports from before it existed read back unchanged.)
constexpr const char* kOutcomes[] = {"slower",      "faster",          "undecided",     "no-change", "wrong-result",
                                     "crash",       "timeout",         "verifier-failure", "compile-error",
                                     "required"};

// json_schema::Writer for ordered_json (keys in field order).
struct OrderedWriter : json_schema::BasicWriter<OrderedJson> {
  using BasicWriter::Nullable;
  // A variant's kernel_times_ns: integral nanoseconds as integers.
  void Nullable(const char* key, const std::optional<std::map<std::string, std::optional<double>>>& field) {
    if (!field.has_value()) {
      j[key] = nullptr;
      return;
    }
    OrderedJson& times = j[key] = OrderedJson::object();
    for (const auto& [name, ns] : *field) {
      times[name] = ns.has_value() ? OrderedJson(NumberJson(*ns)) : OrderedJson(nullptr);
    }
  }
};

template <typename V, typename K>
void KernelFields(V& v, K& k) {
  v.Required("name", k.name);
  v.Nullable("kind", k.kind);
  v.Nullable("detail", k.detail);
  v.Number("ns", k.ns);
  v.Nullable("calls", k.calls);
}

template <typename V, typename C>
void KernelChangeFields(V& v, C& c) {
  v.Required("name", c.name);
  v.Number("baseline_ns", c.baseline_ns);
  v.Number("variant_ns", c.variant_ns);
  v.Defaulted("change", c.change);
}

template <typename V, typename C>
void DiffCountFields(V& v, C& c) {
  v.Defaulted("added", c.added);
  v.Defaulted("removed", c.removed);
  v.Defaulted("changed", c.changed);
  v.Defaulted("same", c.same);
}

template <typename V, typename B>
void BaselineFields(V& v, B& b) {
  v.Defaulted("name", b.name);
  v.Number("median_ns", b.median_ns);
  v.Defaulted("samples_ns", b.samples_ns);
  v.Number("ci_half_width", b.ci_half_width);
  v.Number("compile_ms", b.compile_ms);
  v.Number("kernel_count", b.kernel_count);
  v.Number("bytes", b.bytes);
  v.Number("peak_rss_bytes", b.peak_rss_bytes);
  v.Defaulted("kernels", b.kernels);
  v.Defaulted("host_ops", b.host_ops);
  v.Nullable("trace", b.trace);
  v.Nullable("snapshot", b.snapshot);
}

// "disabled" (the same list as "passes") is written separately.
template <typename V, typename R>
void VariantFieldsBeforeDisabled(V& v, R& r) {
  v.Required("name", r.name);
  v.Defaulted("kind", r.kind);
  v.Defaulted("passes", r.passes);
}

template <typename V, typename R>
void VariantFields(V& v, R& r) {
  v.Nullable("disable", r.disable);
  v.Nullable("enable_only", r.enable_only);
  v.Defaulted("status", r.status);
  v.Nullable("outcome", r.outcome);
  v.Number("median_ns", r.median_ns);
  v.Defaulted("samples_ns", r.samples_ns);
  v.Number("ratio", r.ratio);
  v.Number("ci_low", r.ci_low);
  v.Number("ci_high", r.ci_high);
  v.Number("ci_half_width", r.ci_half_width);
  v.Optional("pairs", r.pairs);
  v.Defaulted("comparison", r.comparison);
  v.Number("control_median_ns", r.control_median_ns);
  v.Number("estimate_ns", r.estimate_ns);
  v.Number("p_value", r.p_value);
  v.Number("p_adjusted", r.p_adjusted);
  v.Defaulted("significant", r.significant);
  v.Number("compile_ms", r.compile_ms);
  v.Number("kernel_count", r.kernel_count);
  v.Number("bytes", r.bytes);
  v.Number("peak_rss_bytes", r.peak_rss_bytes);
  v.Nullable("check", r.check);
  v.Nullable("error", r.error);
  v.Nullable("failed_pass", r.failed_pass);
  v.Nullable("signal", r.signal);
  v.Nullable("timeout_s", r.timeout_s);
  v.Nullable("required_reason", r.required_reason);
  v.Defaulted("kernel_diff", r.kernel_diff);
  v.Defaulted("host_ops", r.host_ops);
  v.Nullable("kernel_diff_counts", r.kernel_diff_counts);
  v.Nullable("kernel_times_ns", r.kernel_times_ns);
  v.Nullable("ir_diff", r.ir_diff);
  v.Nullable("injected_delay", r.injected_delay);
  v.Nullable("snapshot", r.snapshot);
  v.Nullable("trace", r.trace);
  v.Number("p_holm", r.p_holm);
  v.Number("p_bh", r.p_bh);
  v.Defaulted("significant_holm", r.significant_holm);
  v.Defaulted("significant_bh", r.significant_bh);
  v.Defaulted("large_but_uncorrected", r.large_but_uncorrected);
}

template <typename V, typename C>
void AaCopyFields(V& v, C& c) {
  v.Required("name", c.name);
  v.Defaulted("status", c.status);
  v.Number("ratio", c.ratio);
  v.Number("ci_low", c.ci_low);
  v.Number("ci_high", c.ci_high);
  v.Nullable("pairs", c.pairs);
  v.Number("p_value", c.p_value);
  v.Number("p_adjusted", c.p_adjusted);
  v.Defaulted("significant", c.significant);
}

template <typename V, typename A>
void AaFields(V& v, A& a) {
  v.Defaulted("copies", a.copies);
  v.Nullable("measured_band", a.measured_band);
  v.Nullable("max_ci_deviation", a.max_ci_deviation);
  v.Nullable("band", a.band);
  v.Defaulted("band_source", a.band_source);
}

template <typename V, typename P>
void PairFields(V& v, P& p) {
  v.Required("variant", p.variant);
  v.Defaulted("a", p.a);
  v.Defaulted("b", p.b);
  v.Number("ratio_a", p.ratio_a);
  v.Number("ratio_b", p.ratio_b);
  v.Number("ratio_ab", p.ratio_ab);
  v.Number("interaction", p.interaction);
  v.Nullable("outcome", p.outcome);
}

// compile_cost's numbers are written as computed (Nullable: 1.0 stays 1.0).
template <typename V, typename T>
void CompileTimesFields(V& v, T& t) {
  v.Nullable("compile_ms", t.compile_ms);
  v.Nullable("optimize_ms", t.optimize_ms);
  v.Nullable("backend_ms", t.backend_ms);
  v.Nullable("autotune_ms", t.autotune_ms);
  v.Nullable("kernel_cache_hits", t.kernel_cache_hits);
  v.Nullable("kernel_cache_misses", t.kernel_cache_misses);
  v.Optional("kernel_cache_persistent_hits", t.kernel_cache_persistent_hits);
}

template <typename V, typename B>
void CompileCostBaselineFields(V& v, B& b) {
  CompileTimesFields(v, b.times);
  v.Defaulted("records_with_pass_times", b.records_with_pass_times);
}

template <typename V, typename P>
void PassTimeFields(V& v, P& p) {
  v.Required("pass", p.pass);
  v.Nullable("ms", p.ms);
  v.Nullable("runs", p.runs);
}

template <typename V, typename R>
void CompileCostRowFields(V& v, R& r) {
  v.Required("variant", r.variant);
  v.Defaulted("kind", r.kind);
  v.Defaulted("passes", r.passes);
  v.Nullable("pass_ms", r.pass_ms);
  v.Nullable("pass_runs", r.pass_runs);
  CompileTimesFields(v, r.times);
  v.Nullable("compile_delta_ms", r.compile_delta_ms);
  v.Nullable("ratio", r.ratio);
  v.Nullable("ci_low", r.ci_low);
  v.Nullable("ci_high", r.ci_high);
  v.Defaulted("significant", r.significant);
  v.Nullable("outcome", r.outcome);
  v.Defaulted("clear_effect", r.clear_effect);
  v.Defaulted("quadrant", r.quadrant);
}

template <typename V, typename C>
void CostFields(V& v, C& c) {
  v.Defaulted("baseline", c.baseline);
  v.Defaulted("pass_times", c.pass_times);
  v.Nullable("cost_split_ms", c.cost_split_ms);
  v.Defaulted("rows", c.rows);
}

// "outcomes" is written separately (in kOutcomes order).
template <typename V, typename S>
void SummaryFieldsBeforeOutcomes(V& v, S& s) {
  v.Defaulted("variants", s.variants);
  v.Defaulted("measured", s.measured);
  v.Defaulted("significant", s.significant);
}

template <typename V, typename S>
void SummaryFields(V& v, S& s) {
  v.Defaulted("failures", s.failures);
  v.Defaulted("shared_baseline_mismatches", s.shared_baseline_mismatches);
  v.Defaulted("host_op_variants", s.host_op_variants);
  v.Number("median_ci_half_width", s.median_ci_half_width);
  v.Number("max_ci_half_width", s.max_ci_half_width);
  v.Nullable("max_ci_half_width_variant", s.max_ci_half_width_variant);
}

template <typename V, typename R>
void ReportFields(V& v, R& r) {
  v.Required("schema", r.schema);
  v.Defaulted("manifest", r.manifest);
  v.Defaulted("metric", r.metric);
  v.Defaulted("threshold", r.threshold);
  v.Defaulted("correction", r.correction);
  v.Defaulted("alpha", r.alpha);
  v.Defaulted("baseline", r.baseline);
  v.Defaulted("variants", r.variants);
  v.Defaulted("aa", r.aa);
  v.Defaulted("pairs", r.pairs);
  v.Nullable("compile_cost", r.compile_cost);
  v.Defaulted("summary", r.summary);
  v.Defaulted("warnings", r.warnings);
}

// Reads `fields` of a nested document `doc`.
template <typename T, typename Fields>
void ReadFields(const char* doc, const Json& j, T& out, Fields fields) {
  json_schema::RequireObject(doc, j);
  Reader reader{doc, j};
  fields(reader, out);
}

template <typename T, typename Fields>
void WriteFields(OrderedJson& j, const T& in, Fields fields) {
  j = OrderedJson::object();
  OrderedWriter writer{j};
  fields(writer, in);
}

}  // namespace

bool AblationReportVariant::CheckFailed() const {
  if (!check.has_value() || !check->is_object()) return false;
  auto ok = check->find("ok");
  return ok != check->end() && ok->is_boolean() && !ok->get<bool>();
}

bool AblationReportVariant::SharesBaselineMismatch() const {
  return check.has_value() && check->is_object() && check->value("shares_baseline_mismatch", false);
}

const AblationReportVariant* AblationReport::FindVariant(const std::string& name) const {
  for (const AblationReportVariant& v : variants) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

void to_json(OrderedJson& j, const AblationReportKernel& k) {
  WriteFields(j, k, [](auto& v, auto& x) { KernelFields(v, x); });
}
void from_json(const Json& j, AblationReportKernel& k) {
  ReadFields("kernel", j, k, [](auto& v, auto& x) { KernelFields(v, x); });
}

void to_json(OrderedJson& j, const AblationKernelChange& c) {
  WriteFields(j, c, [](auto& v, auto& x) { KernelChangeFields(v, x); });
  if (c.host) j["host"] = true;
}
void from_json(const Json& j, AblationKernelChange& c) {
  ReadFields("kernel change", j, c, [](auto& v, auto& x) { KernelChangeFields(v, x); });
  std::optional<bool> host;
  Reader{"kernel change", j}.Optional("host", host);
  c.host = host.value_or(false);
}

void to_json(OrderedJson& j, const AblationKernelDiffCounts& c) {
  WriteFields(j, c, [](auto& v, auto& x) { DiffCountFields(v, x); });
}
void from_json(const Json& j, AblationKernelDiffCounts& c) {
  ReadFields("kernel_diff_counts", j, c, [](auto& v, auto& x) { DiffCountFields(v, x); });
}

void to_json(OrderedJson& j, const AblationReportBaseline& b) {
  WriteFields(j, b, [](auto& v, auto& x) { BaselineFields(v, x); });
}
void from_json(const Json& j, AblationReportBaseline& b) {
  ReadFields("baseline", j, b, [](auto& v, auto& x) { BaselineFields(v, x); });
}

void to_json(OrderedJson& j, const AblationReportVariant& r) {
  j = OrderedJson::object();
  OrderedWriter writer{j};
  VariantFieldsBeforeDisabled(writer, r);
  j["disabled"] = r.passes;
  VariantFields(writer, r);
  for (const auto& [key, value] : r.extra.items()) j[key] = value;
}
void from_json(const Json& j, AblationReportVariant& r) {
  auto fields = [](auto& v, auto& x) {
    VariantFieldsBeforeDisabled(v, x);
    VariantFields(v, x);
  };
  ReadFields("variant", j, r, fields);
  // Hand-written reports may list the passes only as "disabled".
  if (!j.contains("passes") && j.contains("disabled")) json_schema::ReadValue("variant", "disabled", j["disabled"], r.passes);
  Json extra = json_schema::ExtraKeys<AblationReportVariant>(j, fields);
  extra.erase("disabled");
  r.extra = std::move(extra);
}

void to_json(OrderedJson& j, const AblationAaCopy& c) {
  WriteFields(j, c, [](auto& v, auto& x) { AaCopyFields(v, x); });
}
void from_json(const Json& j, AblationAaCopy& c) {
  ReadFields("aa copy", j, c, [](auto& v, auto& x) { AaCopyFields(v, x); });
}

void to_json(OrderedJson& j, const AblationAaSection& a) {
  WriteFields(j, a, [](auto& v, auto& x) { AaFields(v, x); });
}
void from_json(const Json& j, AblationAaSection& a) {
  ReadFields("aa", j, a, [](auto& v, auto& x) { AaFields(v, x); });
}

void to_json(OrderedJson& j, const AblationPairInteraction& p) {
  WriteFields(j, p, [](auto& v, auto& x) { PairFields(v, x); });
}
void from_json(const Json& j, AblationPairInteraction& p) {
  ReadFields("pair", j, p, [](auto& v, auto& x) { PairFields(v, x); });
}

std::string AblationCompileCostRow::PassesLabel() const {
  std::string label;
  for (const std::string& p : passes) label += (label.empty() ? "" : " + ") + p;
  return label.empty() ? variant : label;
}

void to_json(OrderedJson& j, const AblationCompileCostBaseline& b) {
  WriteFields(j, b, [](auto& v, auto& x) { CompileCostBaselineFields(v, x); });
}
void from_json(const Json& j, AblationCompileCostBaseline& b) {
  ReadFields("compile_cost baseline", j, b, [](auto& v, auto& x) { CompileCostBaselineFields(v, x); });
}

void to_json(OrderedJson& j, const AblationPassTime& p) {
  WriteFields(j, p, [](auto& v, auto& x) { PassTimeFields(v, x); });
}
void from_json(const Json& j, AblationPassTime& p) {
  ReadFields("pass time", j, p, [](auto& v, auto& x) { PassTimeFields(v, x); });
}

void to_json(OrderedJson& j, const AblationCompileCostRow& r) {
  WriteFields(j, r, [](auto& v, auto& x) { CompileCostRowFields(v, x); });
}
void from_json(const Json& j, AblationCompileCostRow& r) {
  ReadFields("compile_cost row", j, r, [](auto& v, auto& x) { CompileCostRowFields(v, x); });
  // Reports from before "clear_effect": only significance counted.
  if (!j.contains("clear_effect") || j["clear_effect"].is_null()) r.clear_effect = r.significant;
}

void to_json(OrderedJson& j, const AblationCompileCost& c) {
  WriteFields(j, c, [](auto& v, auto& x) { CostFields(v, x); });
}
void from_json(const Json& j, AblationCompileCost& c) {
  ReadFields("compile_cost", j, c, [](auto& v, auto& x) { CostFields(v, x); });
}

void to_json(OrderedJson& j, const AblationReportSummary& s) {
  j = OrderedJson::object();
  OrderedWriter writer{j};
  SummaryFieldsBeforeOutcomes(writer, s);
  OrderedJson& outcomes = j["outcomes"] = OrderedJson::object();
  for (const char* o : kOutcomes) {
    auto it = s.outcomes.find(o);
    outcomes[o] = it == s.outcomes.end() ? 0 : it->second;
  }
  for (const auto& [o, n] : s.outcomes) {
    if (!outcomes.contains(o)) outcomes[o] = n;
  }
  SummaryFields(writer, s);
}
void from_json(const Json& j, AblationReportSummary& s) {
  ReadFields("summary", j, s, [](auto& v, auto& x) {
    SummaryFieldsBeforeOutcomes(v, x);
    v.Defaulted("outcomes", x.outcomes);
    SummaryFields(v, x);
  });
}

void to_json(OrderedJson& j, const AblationReport& r) {
  j = OrderedJson::object();
  OrderedWriter writer{j};
  writer.Required("schema", r.schema);
  j[kVersionKey] = kAblationReportSchemaVersion;
  ReportFields(writer, r);
  for (const auto& [key, value] : r.extra.items()) j[key] = value;
}

void from_json(const Json& j, AblationReport& r) {
  json_schema::RequireObject("report", j);
  r.schema_version = json_schema::ReadVersion("report", j);
  Reader reader{"report", j};
  ReportFields(reader, r);
  if (!r.schema.starts_with("passlab.ablation/")) {
    throw SchemaError(StrCat("report has schema '", r.schema, "', not passlab.ablation/N"));
  }
  r.extra = json_schema::ExtraKeys<AblationReport>(j, [](auto& v, auto& x) { ReportFields(v, x); });
}

absl::StatusOr<AblationReport> ParseAblationReport(const Json& j, const std::string& where) {
  return json_schema::Parse<AblationReport>(j, where);
}

absl::StatusOr<AblationReport> ParseAblationReport(const OrderedJson& j, const std::string& where) {
  absl::StatusOr<AblationReport> report = ParseAblationReport(Json(j), where);
  if (!report.ok()) return report;
  // The open sub-documents keep their key order (the reader went through
  // nlohmann::json, which sorts keys). Parsing succeeded, so the keys exist
  // where the report has them.
  report->manifest = j.at("manifest");
  const OrderedJson& variants = j.at("variants");
  for (size_t i = 0; i < report->variants.size(); ++i) {
    if (auto check = variants[i].find("check"); check != variants[i].end() && !check->is_null()) {
      report->variants[i].check = *check;
    }
  }
  return report;
}

absl::StatusOr<AblationReport> ReadAblationReport(const std::string& path) {
  ASSIGN_OR_RETURN(Json j, json_schema::ReadJsonFile(path, "report"));
  return ParseAblationReport(j, path);
}

}  // namespace passlab
