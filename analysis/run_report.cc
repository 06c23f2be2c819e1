#include "analysis/run_report.h"

#include "analysis/json_schema.h"

namespace passlab {
namespace {

using Json = nlohmann::json;
using json_schema::Reader;
using json_schema::Writer;

template <typename V, typename K>
void KernelFields(V& v, K& k) {
  v.Required("name", k.name);
  v.Required("computation", k.computation);
  v.Required("kind", k.kind);
  v.Required("detail", k.detail);
  v.Required("calls", k.calls);
  v.Required("total_ns", k.total_ns);
  v.Required("median_ns", k.median_ns);
  v.Required("share", k.share);
  v.Required("bytes", k.bytes);
  v.Required("flops", k.flops);
  v.Required("estimate_ns", k.estimate_ns);
}

template <typename V, typename C>
void CheckFields(V& v, C& c) {
  v.Required("ok", c.ok);
  v.Optional("message", c.message);
  v.Required("verdict", c.verdict);
}

template <typename V, typename R>
void ReportFields(V& v, R& r) {
  v.Required("device", r.device);
  v.Required("pipeline", r.pipeline);
  v.Required("repeats", r.repeats);
  v.Required("optimize_ms", r.optimize_ms);
  v.Required("compile_ms", r.compile_ms);
  v.Required("kernel_ms_median", r.kernel_ms_median);
  v.Required("wall_ms_median", r.wall_ms_median);
  v.Required("kernel_ms", r.kernel_ms);
  v.Required("wall_ms", r.wall_ms);
  v.Required("arena_bytes", r.arena_bytes);
  v.Required("kernels", r.kernels);
  v.Required("inputs", r.inputs);
  v.Optional("device_description", r.device_description);
  v.Optional("kernel_envelope_ms", r.kernel_envelope_ms);
  v.Optional("traced_wall_ms", r.traced_wall_ms);
  v.Optional("host_fallbacks", r.host_fallbacks);
  v.Optional("command_buffer", r.command_buffer);
  v.Optional("tf32_library_calls", r.tf32_library_calls);
  v.Optional("peak_bytes", r.peak_bytes);
  v.Optional("kernel_cache_hits", r.kernel_cache_hits);
  v.Optional("kernel_cache_misses", r.kernel_cache_misses);
  v.Optional("kernel_cache_dir", r.kernel_cache_dir);
  v.Optional("persistent_cache_hits", r.persistent_cache_hits);
  v.Optional("persistent_cache_misses", r.persistent_cache_misses);
  v.Optional("cost_model", r.cost_model);
  v.Optional("check", r.check);
  v.Optional("expect", r.expect);
}

}  // namespace

void to_json(Json& j, const RunReportKernel& k) {
  j = Json::object();
  Writer writer{j};
  KernelFields(writer, k);
}

void from_json(const Json& j, RunReportKernel& k) {
  json_schema::RequireObject("kernel", j);
  Reader reader{"kernel", j};
  KernelFields(reader, k);
}

void to_json(Json& j, const RunReportCheck& c) {
  j = Json::object();
  Writer writer{j};
  CheckFields(writer, c);
}

void from_json(const Json& j, RunReportCheck& c) {
  json_schema::RequireObject("check", j);
  Reader reader{"check", j};
  CheckFields(reader, c);
}

void to_json(Json& j, const RunReport& r) {
  j = r.extra.is_object() ? r.extra : Json::object();
  Writer writer{j};
  ReportFields(writer, r);
  j[json_schema::kVersionKey] = kRunReportSchemaVersion;
}

void from_json(const Json& j, RunReport& r) {
  json_schema::RequireObject("run report", j);
  r.schema_version = json_schema::ReadVersion("run report", j);
  Reader reader{"run report", j};
  ReportFields(reader, r);
  r.extra = json_schema::ExtraKeys<RunReport>(j, [](auto& v, auto& x) { ReportFields(v, x); });
}

absl::StatusOr<RunReport> ParseRunReport(const Json& j, const std::string& where) {
  return json_schema::Parse<RunReport>(j, where);
}

}  // namespace passlab
