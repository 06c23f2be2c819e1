// Wording and number formats shared by the ablation report renderings.
#include "analysis/ablation/report_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/ir/str_util.h"

namespace passlab::ablation_internal {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kMissing = "–";

}  // namespace

int OutcomeRank(std::string_view outcome) {
  int rank = 0;
  for (const char* o : kOutcomeOrder) {
    if (outcome == o) return rank;
    ++rank;
  }
  return rank;
}

bool IsFailureOutcome(std::string_view outcome) {
  return OutcomeRank(outcome) > OutcomeRank(kIdenticalOutcome);
}

std::string OutcomeLabel(std::string_view outcome) {
  if (outcome == "no-change") return "no change";
  if (outcome == kIdenticalOutcome) return "identical program";
  if (outcome == "undecided") return "undecided (too few repetitions)";
  if (outcome == "wrong-result") return "WRONG RESULT";
  if (outcome == "compile-error") return "compile error";
  if (outcome == "verifier-failure") return "verifier failure";
  return std::string(outcome);
}

double NumberField(const nlohmann::ordered_json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return kNaN;
  return it->get<double>();
}

std::string TextField(const nlohmann::ordered_json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  return it->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string FormatMs(double ns) {
  if (std::isnan(ns)) return kMissing;
  double ms = ns / 1e6;
  if (std::abs(ms) >= 100) return fmt::format("{:.1f} ms", ms);
  if (std::abs(ms) >= 1) return fmt::format("{:.3f} ms", ms);
  return fmt::format("{:.4f} ms", ms);
}

std::string FormatChange(double ratio) {
  if (std::isnan(ratio)) return kMissing;
  return fmt::format("{:+.1f}%", (ratio - 1) * 100);
}

std::string FormatCi(double low, double high) {
  if (std::isnan(low) || std::isnan(high)) return "";
  return fmt::format("[{:+.1f}%, {:+.1f}%]", (low - 1) * 100, (high - 1) * 100);
}

std::string FormatP(double p) {
  if (std::isnan(p)) return kMissing;
  if (p < 1e-4) return "<0.0001";
  return fmt::format("{:.4f}", p);
}

std::string FormatHalfWidth(double half_width) {
  if (std::isnan(half_width)) return kMissing;
  return fmt::format("±{:.2f}%", half_width * 100);
}

std::string FormatCount(double n) {
  if (std::isnan(n)) return kMissing;
  std::string digits = fmt::format("{:.0f}", std::abs(n));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string FormatBytes(double bytes) {
  if (std::isnan(bytes)) return kMissing;
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int unit = 0;
  while (std::abs(bytes) >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[unit]);
}

std::string Excerpt(std::string_view text, size_t max) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  if (out.size() <= max) return out;
  size_t cut = max;
  // Do not cut inside a UTF-8 sequence.
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  return out.substr(0, cut) + "…";
}

std::string PassesLabel(const AblationReportVariant& variant) {
  std::string out;
  for (const std::string& p : variant.passes) {
    if (!out.empty()) out += " + ";
    out += p;
  }
  return out.empty() ? variant.name : out;
}

std::string PassesWithKind(const AblationReportVariant& variant) {
  const std::string& kind = variant.kind;
  std::string label = PassesLabel(variant);
  if (kind.empty() || kind == "disable-one") return label;
  return label + " (" + kind + ")";
}

std::string VariantDescription(const AblationReportVariant& variant) {
  const std::string& kind = variant.kind;
  std::string passes = PassesLabel(variant);
  std::string disable = variant.disable.value_or("");
  if (kind == "disable-one") return "full pipeline without " + passes;
  if (kind == "disable-occurrence") {
    return "full pipeline without " + passes + (disable.empty() ? "" : " at " + disable);
  }
  if (kind == "add-one") return "required passes only, plus " + passes;
  if (kind == "pair") return "full pipeline without " + passes;
  if (!disable.empty()) return "pipeline with --disable " + disable;
  std::string enable_only = variant.enable_only.value_or("");
  if (!enable_only.empty()) return "pipeline with only " + enable_only;
  return passes;
}

std::string FailureDetail(const AblationReportVariant& variant, size_t max) {
  std::string outcome = variant.outcome.value_or("");
  std::string error = variant.error.value_or("");
  if (outcome == "required") {
    std::string reason = variant.required_reason.value_or("");
    return Excerpt(reason.empty() ? error : reason, max);
  }
  std::string prefix;
  if (outcome == "crash" && variant.signal.has_value()) {
    int signal = static_cast<int>(*variant.signal);
    const char* names[] = {"",        "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL",  "SIGTRAP",
                           "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV"};
    prefix = signal > 0 && signal <= 11 ? fmt::format("signal {} ({})", signal, names[signal])
                                        : fmt::format("signal {}", signal);
  }
  if (outcome == "timeout") {
    double limit = Value(variant.timeout_s);
    prefix = std::isnan(limit) ? "no result before the time limit"
                               : fmt::format("no result after {:g} s", limit);
  }
  if (!prefix.empty() && !error.empty()) prefix += ": ";
  return Excerpt(prefix + error, max);
}

std::string SweepSubject(const AblationReport& report) {
  const nlohmann::ordered_json& m = report.manifest;
  std::vector<std::string> parts;
  auto add = [&](const char* key, const char* label) {
    if (!m.is_object() || !m.contains(key) || m[key].is_null()) return;
    const auto& value = m[key];
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_object() && value.contains("name") && value["name"].is_string()) {
      text = value["name"].get<std::string>();
      std::vector<std::string> options;
      for (const auto& [k, v] : value.items()) {
        if (k == "name") continue;
        options.push_back(k + " " + (v.is_string() ? v.get<std::string>() : v.dump()));
      }
      if (!options.empty()) {
        text += " (";
        for (size_t i = 0; i < options.size(); ++i) text += (i ? ", " : "") + options[i];
        text += ")";
      }
    } else {
      text = value.dump();
    }
    parts.push_back(std::string(label) + " " + Excerpt(text, 120));
  };
  add("model", "model");
  add("hlo", "HLO file");
  add("pipeline", "pipeline");
  add("device", "device");
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out.empty() ? "(the manifest names no model or pipeline)" : out;
}

std::vector<const AblationReportVariant*> StrongestEffects(const AblationReport& report, std::string_view outcome,
                                                          size_t max) {
  std::vector<const AblationReportVariant*> out;
  for (const AblationReportVariant& v : report.variants) {
    const std::string& kind = v.kind;
    if (v.outcome.value_or("") != outcome) continue;
    if (kind == "disable-one" || kind == "disable-occurrence") out.push_back(&v);
  }
  // Variants are sorted by ratio, largest first: the fastest come last.
  if (outcome == "faster") std::reverse(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

std::vector<std::pair<std::string, std::string>> HostOpVariants(const AblationReport& report) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const AblationReportVariant& v : report.variants) {
    if (v.host_ops.empty()) continue;
    std::string ops;
    for (const std::string& op : v.host_ops) ops += (ops.empty() ? "" : ", ") + op;
    out.emplace_back(PassesLabel(v), ops);
  }
  return out;
}

std::vector<std::vector<std::string>> SlurmTaskRows(const AblationReport& report) {
  std::vector<std::vector<std::string>> rows;
  const nlohmann::ordered_json& m = report.manifest;
  if (!m.is_object() || !m.contains("tasks") || !m["tasks"].is_array()) return rows;
  auto text = [](const nlohmann::ordered_json& j, const char* key) {
    if (!j.is_object() || !j.contains(key)) return std::string("–");
    const auto& v = j[key];
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array()) {
      std::string joined;
      for (const auto& x : v) joined += (joined.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
      return joined;
    }
    return v.dump();
  };
  for (const auto& t : m["tasks"]) {
    const nlohmann::ordered_json& machine = t.is_object() && t.contains("machine") ? t["machine"] : nlohmann::ordered_json();
    std::string where = machine.is_object()
                            ? fmt::format("{}, {} cores; GPU {}, driver {}", text(machine, "cpu"), text(machine, "cores"),
                                          text(machine, "gpu"), Excerpt(text(machine, "gpu_driver"), 60))
                            : "–";
    rows.push_back({text(t, "task"), text(t, "state"), fmt::format("{}/{}", text(t, "done"), text(t, "variants")),
                    text(t, "node"), where});
  }
  return rows;
}

std::string MetricDescription(std::string_view metric) {
  if (metric == "kernel_ns") return "total kernel time per step (each kernel's outlying steps capped where the records hold per-kernel times)";
  if (metric == "kernel_raw_ns") return "total kernel time per step";
  if (metric == "kernel_cpu_ns") return "the kernels' process CPU time per step (each kernel's outlying steps capped where the records hold per-kernel times)";
  if (metric == "kernel_copy_ns") return "kernel + copy time per step";
  if (metric == "wall_ns") return "wall time per step";
  return std::string(metric);
}

std::string AaBandSentence(const AblationReport& report) {
  const double threshold = report.threshold;
  const AblationAaSection& aa = report.aa;
  const std::string& source = aa.band_source;
  const double band = Value(aa.band);
  if (std::isnan(band)) {
    return fmt::format("A/A band: {}; a change counts beyond the {:g}% threshold alone.", source, threshold * 100);
  }
  return fmt::format("A/A band {} ({}): a change counts only beyond {} (the larger of the {:g}% threshold and "
                     "the band, the spread of variants whose program is the baseline's).",
                     FormatHalfWidth(band), source, FormatHalfWidth(std::max(band, threshold)), threshold * 100);
}

std::string IdenticalSentence(const AblationReport& report, std::string_view quote) {
  std::vector<std::string> names;
  for (const AblationReportVariant& v : report.variants) {
    if (v.outcome == kIdenticalOutcome) names.push_back(StrCat(quote, PassesLabel(v), quote));
  }
  if (names.empty()) return "";
  return fmt::format("{} variant{} compile{} to the baseline's program (the optimized module is the same, so the "
                     "effect is exactly none; recorded as identical, not timed): {}.",
                     names.size(), names.size() == 1 ? "" : "s", names.size() == 1 ? "s" : "", Join(names, ", "));
}

std::vector<std::vector<std::string>> AaCopyRows(const AblationReport& report) {
  std::vector<std::vector<std::string>> rows;
  for (const AblationAaCopy& c : report.aa.copies) {
    const bool ok = c.status == "ok";
    std::string verdict = !ok            ? OutcomeLabel(c.status)
                          : c.significant ? "significant (the measurement is biased)"
                                          : "no significant change";
    rows.push_back({c.name, FormatChange(Value(c.ratio)), FormatCi(Value(c.ci_low), Value(c.ci_high)),
                    FormatP(Value(c.p_adjusted)), verdict});
  }
  return rows;
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace passlab::ablation_internal
