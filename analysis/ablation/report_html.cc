// The HTML rendering of an ablation report: one self-contained page (inline
// CSS and SVG, no scripts, no network) with the headline, two charts in the
// style of seed 003's figures 5-8, the tables and per-variant kernel diffs.
#include "analysis/ablation/report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "analysis/ablation/environment.h"
#include "analysis/ablation/heatmap.h"
#include "analysis/ablation/compile_cost.h"
#include "analysis/ablation/report_internal.h"

namespace passlab {
namespace {

using ordered_json = nlohmann::ordered_json;
using namespace ablation_internal;

// Markdown's `code` spans of an escaped text as <code> (the warnings are
// written for both renderers).
std::string CodeSpans(const std::string& escaped) {
  std::string out;
  bool open = false;
  for (char c : escaped) {
    if (c == '`') {
      out += open ? "</code>" : "<code>";
      open = !open;
    } else {
      out += c;
    }
  }
  if (open) out += "</code>";
  return out;
}

constexpr const char* kStyle = R"css(
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#ffffff; --panel:#f6f8fb;
  --slower:#c8102e; --faster:#1a7f37; --neutral:#8c96a8; --wrong:#7a1fa2; --fail:#b35900; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 "Segoe UI", "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
p.lead { color: var(--muted); margin: 0 0 18px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(128px, 1fr)); gap: 12px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.card .n { font-size: 26px; font-weight: 650; }
.legend { font-size: 13px; color: var(--muted); margin: 4px 0 0; }
.legend span.sw { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin: 0 4px 0 14px; vertical-align: -1px; }
.legend span.sw:first-child { margin-left: 0; }
.card .l { color: var(--muted); font-size: 13px; }
.card.slower .n { color: var(--slower); } .card.faster .n { color: var(--faster); }
.card.bad { background: #fbeff2; border-color: var(--slower); } .card.bad .n { color: var(--slower); }
.alarm { background: #fbeff2; border: 2px solid var(--slower); color: #7d0a1d; border-radius: 8px;
  padding: 12px 16px; margin: 16px 0; font-weight: 600; }
.note { background: var(--panel); border-left: 4px solid var(--neutral); padding: 8px 14px; margin: 12px 0; color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.files { white-space: nowrap; }
td.err { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; color: #3a3f4b; }
tr.wrong td { background: #f6ecfa; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12.5px; font-weight: 600;
  white-space: nowrap; color: #fff; background: var(--neutral); }
.badge.slower { background: var(--slower); } .badge.faster { background: var(--faster); }
.badge.wrong-result { background: var(--wrong); } .badge.required { background: #46627f; }
.badge.crash, .badge.timeout, .badge.compile-error, .badge.verifier-failure { background: var(--fail); }
.muted { color: var(--muted); }
figure { margin: 12px 0 24px; } figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; }
svg text { font-family: "Segoe UI", "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
details summary { cursor: pointer; font-weight: 600; }
details table { margin: 8px 0; }
.added { color: var(--slower); } .removed { color: var(--faster); }
code, pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: var(--panel); padding: 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-all; margin: 0; }
a { color: #1f5fbf; }
)css";

// Axis ticks at 1, 2 or 5 times a power of ten covering [low, high].
std::vector<double> NiceTicks(double low, double high, int target) {
  std::vector<double> ticks;
  double span = high - low;
  if (!(span > 0)) return {low};
  double raw = span / target;
  double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) {
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

std::string TickLabel(double value, double step, const char* suffix) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  return fmt::format("{:.{}f}{}", value, decimals, suffix);
}

std::string BarClass(const AblationReportVariant& v) {
  std::string outcome = v.outcome.value_or("");
  if (outcome == "wrong-result") return "var(--wrong)";
  if (outcome == "slower") return "var(--slower)";
  if (outcome == "faster") return "var(--faster)";
  return "var(--neutral)";
}

struct ChartRow {
  std::string label;
  double value, low, high;  // in the chart's unit
  std::string color;
  std::string note;  // right of the bar
};

constexpr int kLabelWidth = 300;
constexpr int kPlotWidth = 640;
constexpr int kRowHeight = 22;
constexpr int kTop = 34;

// Horizontal bars with optional whiskers; `reference` draws a dashed
// vertical line; `band` shades [-band, band] around zero.
std::string BarChart(const std::vector<ChartRow>& rows, double domain_low, double domain_high,
                     const char* unit, double reference, const std::string& reference_label,
                     double band) {
  int height = kTop + static_cast<int>(rows.size()) * kRowHeight + 30;
  int width = kLabelWidth + kPlotWidth + 150;
  auto x = [&](double value) {
    return kLabelWidth + (value - domain_low) / (domain_high - domain_low) * kPlotWidth;
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0} {1}\" width=\"100%\" "
      "style=\"max-width:{0}px\" role=\"img\">\n",
      width, height);
  std::vector<double> ticks = NiceTicks(domain_low, domain_high, 8);
  double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#e6e9ef\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" fill=\"#5b6475\" "
        "text-anchor=\"middle\">{4}</text>\n",
        x(t), kTop - 6, height - 26, height - 10, HtmlEscape(TickLabel(t, step, unit)));
  }
  if (band > 0) {
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#8c96a8\" "
        "fill-opacity=\"0.16\"/>\n",
        x(-band), kTop - 6, x(band) - x(-band), height - 26 - (kTop - 6));
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const ChartRow& r = rows[i];
    double y = kTop + static_cast<double>(i) * kRowHeight;
    if (i % 2 == 1) {
      svg += fmt::format(
          "<rect x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" fill=\"#f6f8fb\" "
          "fill-opacity=\"0.7\"/>\n",
          y - 2, width, kRowHeight);
    }
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"12.5\" text-anchor=\"end\" fill=\"#1d2330\">"
        "{}</text>\n",
        kLabelWidth - 8, y + 13, HtmlEscape(Excerpt(r.label, 44)));
    if (std::isnan(r.value)) continue;
    double zero = std::clamp(0.0, domain_low, domain_high);
    // A bar beyond the domain (an outlier the caller clipped the axis
    // below) ends at the edge with a break mark; its note gives the value.
    const bool clipped = r.value > domain_high;
    double x0 = x(zero), x1 = x(std::min(r.value, domain_high));
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" rx=\"2\"/>\n",
        std::min(x0, x1), y + 2, std::max(std::abs(x1 - x0), 1.0), kRowHeight - 8, r.color);
    if (clipped) {
      svg += fmt::format(
          "<path d=\"M{0:.1f} {1:.1f}L{2:.1f} {3:.1f}M{4:.1f} {1:.1f}L{5:.1f} {3:.1f}\" stroke=\"#ffffff\" "
          "stroke-width=\"2.5\"/>\n",
          x1 - 16, y + 1, x1 - 22, y + kRowHeight - 5, x1 - 9, x1 - 15);
    }
    if (!std::isnan(r.low) && !std::isnan(r.high) && !clipped) {
      double cy = y + 2 + (kRowHeight - 8) / 2.0;
      svg += fmt::format(
          "<path d=\"M{0:.1f} {1:.1f}H{2:.1f}M{0:.1f} {3:.1f}V{4:.1f}M{2:.1f} {3:.1f}V{4:.1f}\" "
          "stroke=\"#1d2330\" stroke-width=\"1.2\" fill=\"none\"/>\n",
          x(std::max(r.low, domain_low)), cy, x(std::min(r.high, domain_high)), cy - 4, cy + 4);
    }
    double right = std::max({x0, x1, std::isnan(r.high) || clipped ? x1 : x(std::min(r.high, domain_high))});
    svg += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11.5\" fill=\"#3a3f4b\">{}</text>\n",
        right + 6, y + 13, HtmlEscape(r.note));
  }
  if (!std::isnan(reference)) {
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#1d2330\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"12\" font-weight=\"600\" "
        "text-anchor=\"middle\" fill=\"#1d2330\">{4}</text>\n",
        x(reference), kTop - 8, height - 26, kTop - 14, HtmlEscape(reference_label));
  }
  svg += "</svg>\n";
  return svg;
}

// The top of a chart's axis: `high`, unless the largest bar is more than 3x
// the next (conv-rewriter's ×22 in a ResNet sweep squeezes every other bar
// into a few pixels); then a little above the next one's extent, and
// BarChart draws the outlier broken at the edge.
double ClipOutlier(const std::vector<ChartRow>& rows, double high) {
  std::vector<double> extents;
  for (const ChartRow& r : rows) {
    if (std::isnan(r.value)) continue;
    extents.push_back(std::isnan(r.high) ? r.value : std::max(r.value, r.high));
  }
  if (extents.size() < 3) return high;
  std::sort(extents.rbegin(), extents.rend());
  if (!(extents[1] > 0) || extents[0] <= 3 * extents[1]) return high;
  return extents[1] * 1.15;
}

// Figure 1: the metric per variant, baseline as a vertical line (seed 003
// figures 5-6).
std::string TimeChart(const AblationReport& report, const std::vector<const AblationReportVariant*>& measured) {
  double base = Value(report.baseline.median_ns);
  std::vector<ChartRow> rows;
  double high = std::isnan(base) ? 0 : base / 1e6;
  for (const AblationReportVariant* v : measured) {
    double ms = Value(v->estimate_ns) / 1e6;
    double low = Value(v->ci_low) * base / 1e6;
    double up = Value(v->ci_high) * base / 1e6;
    rows.push_back({PassesWithKind(*v), ms, low, up, BarClass(*v), FormatMs(ms * 1e6)});
    if (!std::isnan(ms)) high = std::max(high, ms);
    if (!std::isnan(up)) high = std::max(high, up);
  }
  if (!(high > 0)) return "";
  return BarChart(rows, 0, ClipOutlier(rows, high) * 1.08, " ms", base / 1e6, "baseline " + FormatMs(base), 0);
}

// Figure 2: normalized change (ratio - 1, %) with the ±threshold band,
// significant bars coloured, CI whiskers (seed 003 figures 7-8).
std::string ChangeChart(const AblationReport& report, const std::vector<const AblationReportVariant*>& measured) {
  double threshold = report.threshold * 100;
  double low = -threshold * 2, high = threshold * 2;
  std::vector<ChartRow> rows;
  for (const AblationReportVariant* v : measured) {
    double change = (Value(v->ratio) - 1) * 100;
    double lo = (Value(v->ci_low) - 1) * 100;
    double hi = (Value(v->ci_high) - 1) * 100;
    for (double x : {change, lo, hi}) {
      if (std::isnan(x)) continue;
      low = std::min(low, x);
      high = std::max(high, x);
    }
    std::string note = FormatChange(Value(v->ratio));
    if (v->significant) note += " *";
    rows.push_back({PassesWithKind(*v), change, lo, hi, BarClass(*v), note});
  }
  if (rows.empty()) return "";
  high = std::max(ClipOutlier(rows, high), threshold * 2);
  double pad = (high - low) * 0.06;
  return BarChart(rows, low - pad, high + pad, "%", 0, "0%", threshold);
}

std::string Legend(bool band) {
  std::string out = "<div class=\"legend\">";
  for (auto [color, label] :
       {std::pair<const char*, const char*>{"var(--slower)", "significantly slower"},
        {"var(--faster)", "significantly faster"},
        {"var(--neutral)", "no significant change"},
        {"var(--wrong)", "wrong result"}}) {
    out += fmt::format("<span class=\"sw\" style=\"background:{}\"></span>{}", color, label);
  }
  if (band) {
    out += "<span class=\"sw\" style=\"background:#8c96a8;opacity:0.3\"></span>noise threshold";
  }
  out +=
      "<span class=\"sw\" style=\"background:none;border-top:2px solid #1d2330;height:0;"
      "border-radius:0\"></span>95% CI</div>\n";
  return out;
}

// `label`: the words shown (OutcomeLabel when empty).
std::string Badge(std::string_view outcome, std::string_view label = "") {
  return fmt::format("<span class=\"badge {}\">{}</span>", HtmlEscape(outcome),
                     HtmlEscape(label.empty() ? OutcomeLabel(outcome) : std::string(label)));
}

// Links to a row's files (relative paths in the sweep directory).
std::string Links(const std::optional<std::string>& ir_diff, const std::optional<std::string>& snapshot,
                  const std::optional<std::string>& trace) {
  std::string out;
  for (auto [field, label] : {std::pair<const std::optional<std::string>*, const char*>{&ir_diff, "IR diff"},
                              {&snapshot, "HLO"},
                              {&trace, "trace"}}) {
    std::string path = field->value_or("");
    if (path.empty()) continue;
    out += fmt::format("{}<a href=\"{}\">{}</a>", out.empty() ? "" : " · ", HtmlEscape(path), label);
  }
  return out.empty() ? "<span class=\"muted\">–</span>" : out;
}
std::string Links(const AblationReportVariant& v) { return Links(v.ir_diff, v.snapshot, v.trace); }

std::string CheckCell(const AblationReportVariant& v) {
  const ordered_json check = v.check.value_or(ordered_json());
  if (!check.is_object() || !check.contains("ok") || !check["ok"].is_boolean()) {
    return "<span class=\"muted\">–</span>";
  }
  if (!check["ok"].get<bool>()) {
    if (!check.value("shares_baseline_mismatch", false)) return "<b style=\"color:var(--wrong)\">MISMATCH</b>";
    const int more = check.value("outputs_beyond_baseline", 0);
    return more > 0 ? fmt::format("<span title=\"misses the evaluator as the baseline does, and in {} output(s) the "
                                  "baseline matches, each by no more than the baseline's worst norm-wise "
                                  "error\">as baseline (+{})</span>",
                                  more, more)
                    : std::string("<span title=\"misses the evaluator no more than the baseline does\">as baseline</span>");
  }
  std::string reference = TextField(check, "reference");
  return reference.empty()
             ? "ok"
             : "<span title=\"outputs match the " + HtmlEscape(reference) + "\">ok</span>";
}

}  // namespace

std::string RenderAblationHtml(const AblationReport& report) {
  const AblationReportSummary& summary = report.summary;
  const AblationReportBaseline& baseline = report.baseline;
  auto count = [&](const char* outcome) {
    auto it = summary.outcomes.find(outcome);
    return it == summary.outcomes.end() ? int64_t{0} : it->second;
  };
  const std::string& metric = report.metric;
  double threshold = report.threshold;
  std::string correction = report.correction == "bh" ? "Benjamini-Hochberg" : "Holm";
  double baseline_count = Value(baseline.kernel_count);

  std::vector<const AblationReportVariant*> measured, failed;
  for (const AblationReportVariant& v : report.variants) {
    if (v.outcome == kIdenticalOutcome) continue;  // listed by name (IdenticalSentence)
    (IsFailureOutcome(v.outcome.value_or("")) ? failed : measured).push_back(&v);
  }

  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>Pass ablation report</title>\n<style>";
  h += kStyle;
  h += "</style>\n</head>\n<body>\n<main>\n<h1>Pass ablation report</h1>\n";
  h += fmt::format(
      "<p class=\"lead\">{}. Each variant is the compiler pipeline with one or more passes "
      "disabled (add-one variants: only the required passes plus one); every variant was "
      "compiled, run, checked and timed against the unmodified pipeline, the "
      "<b>baseline</b>. Metric: <b>{}</b>.</p>\n",
      HtmlEscape(SweepSubject(report)), HtmlEscape(MetricDescription(metric)));

  if (count("wrong-result") > 0) {
    h += "<div class=\"alarm\">⚠ Wrong result: ";
    bool first = true;
    for (const AblationReportVariant* v : measured) {
      if (v->outcome != "wrong-result") continue;
      h += (first ? "" : ", ") + std::string("<code>") + HtmlEscape(v->name) + "</code>";
      first = false;
    }
    h += " computed outputs that do not match the reference. A pass whose absence changes the "
         "answer is needed for correctness, or the pipeline has a bug. See "
         "<a href=\"#wrong\">Wrong results</a>.</div>\n";
  }
  for (const std::string& w : report.warnings) {
    h += "<div class=\"alarm\">Warning: " + CodeSpans(HtmlEscape(w)) + "</div>\n";
  }

  auto card = [&](const std::string& css, int64_t n, const std::string& label) {
    h += fmt::format(
        "<div class=\"card {}\"><div class=\"n\">{}</div><div class=\"l\">{}</div></div>", css, n,
        label);
  };
  h += "<div class=\"cards\">";
  card("", summary.variants, "variants swept");
  card("slower", count("slower"), "significantly slower");
  card("faster", count("faster"), "significantly faster");
  card("", count("no-change"), "no significant change");
  if (count(kIdenticalOutcome) > 0) card("", count(kIdenticalOutcome), "identical programs (not timed)");
  if (count("undecided") > 0) {
    card("", count("undecided"),
         "undecided (too few repetitions) or likely slower / faster (CI beyond, not significant)");
  }
  card(count("wrong-result") > 0 ? "bad" : "", count("wrong-result"), "wrong results");
  card(summary.failures > 0 ? "bad" : "", summary.failures, "failures (crash, timeout, verifier, compile)");
  card("", count("required"), "required passes (not disabled)");
  h += "</div>\n";
  h += fmt::format(
      "<p>Baseline: <b>{}</b> (median of {} samples, 95% CI {}{}). A change counts as "
      "<b>significant</b> when the Wilcoxon signed-rank test of its paired ratios to the "
      "baseline (the baseline program timed right beside it in its own process, so drift and "
      "differences between processes cancel) gives a {}-adjusted "
      "p&nbsp;&lt;&nbsp;{:g} <i>and</i> the median ratio differs from 1 by more than {:g}%. {}</p>\n",
      FormatMs(Value(baseline.median_ns)), baseline.samples_ns.size(), FormatHalfWidth(Value(baseline.ci_half_width)),
      baseline.snapshot.value_or("").empty() && baseline.trace.value_or("").empty()
          ? ""
          : "; " + Links(std::nullopt, baseline.snapshot, baseline.trace),
      correction, report.alpha, threshold * 100,
      std::isnan(Value(summary.median_ci_half_width))
          ? std::string("No ratio has a 95% CI: too few paired ratios per variant for a bootstrap.")
          : fmt::format("Precision reached: each ratio's 95% CI is within {} (median over variants), {} at worst.",
                        FormatHalfWidth(Value(summary.median_ci_half_width)),
                        FormatHalfWidth(Value(summary.max_ci_half_width))));

  std::string effects;
  for (auto [outcome, verb] :
       {std::pair<const char*, const char*>{
            "slower", "Passes that help most (the program is slower without them)"},
        {"faster", "Passes that hurt (the program is faster without them)"}}) {
    std::vector<const AblationReportVariant*> top = StrongestEffects(report, outcome, 5);
    if (top.empty()) continue;
    effects += fmt::format("<li>{}: ", verb);
    for (size_t i = 0; i < top.size(); ++i) {
      effects += fmt::format("{}<b>{}</b> ({})", i ? ", " : "", HtmlEscape(PassesLabel(*top[i])),
                             FormatChange(Value(top[i]->ratio)));
    }
    effects += ".</li>\n";
  }
  if (summary.host_op_variants > 0) {
    effects += fmt::format("<li><b>{} variant(s) run operations on the host</b> that the baseline runs on the "
                           "device (no device implementation for what the variant produces; their host time counts "
                           "as kernel time): ",
                           summary.host_op_variants);
    bool first = true;
    for (const auto& [label, ops] : HostOpVariants(report)) {
      effects += fmt::format("{}<b>{}</b> ({})", first ? "" : ", ", HtmlEscape(label), HtmlEscape(ops));
      first = false;
    }
    effects += ".</li>\n";
  }
  if (std::string band = AaBandSentence(report); !band.empty()) effects += "<li>" + HtmlEscape(band) + "</li>\n";
  if (std::string identical = IdenticalSentence(report, ""); !identical.empty()) {
    effects += "<li>" + HtmlEscape(identical) + "</li>\n";
  }
  if (!effects.empty()) h += "<ul>\n" + effects + "</ul>\n";
  if (std::vector<std::vector<std::string>> rows = AaCopyRows(report); !rows.empty()) {
    const AblationAaSection& aa = report.aa;
    h += fmt::format(
        "<h2>A/A calibration</h2>\n<p class=\"muted\">Each copy is the baseline itself, compiled and timed exactly "
        "as a variant (its own worker processes, beside its control). Largest |ratio − 1|: {}; widest 95% CI end: "
        "{} from 1.</p>\n<table>\n<tr><th>Copy</th><th>Change</th><th>95% CI</th><th>p (adj.)</th><th>Verdict</th></tr>\n",
        FormatHalfWidth(Value(aa.measured_band)), FormatHalfWidth(Value(aa.max_ci_deviation)));
    for (const std::vector<std::string>& r : rows) {
      h += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", HtmlEscape(r[0]),
                       HtmlEscape(r[1]), HtmlEscape(r[2]), HtmlEscape(r[3]), HtmlEscape(r[4]));
    }
    h += "</table>\n";
  }

  if (!measured.empty()) {
    h += "<h2>Time per variant</h2>\n<figure>\n" + Legend(false) + TimeChart(report, measured);
    h += fmt::format(
        "<figcaption>The {} of each variant at the baseline's speed: the baseline median times the "
        "variant's paired ratio (whiskers: 95% CI); the dashed line is the baseline. Red: significantly slower without the pass (the pass helps); green: "
        "significantly faster; purple: wrong result; grey: no significant change.</figcaption>\n"
        "</figure>\n",
        HtmlEscape(MetricDescription(metric)));
    h += "<h2>Change against the baseline</h2>\n<figure>\n" + Legend(true) +
         ChangeChart(report, measured);
    h += fmt::format(
        "<figcaption>Variant / baseline − 1, with 95% CI whiskers. The grey band is the ±{:g}% "
        "noise threshold; coloured bars (marked *) are significant changes.</figcaption>\n"
        "</figure>\n",
        threshold * 100);
  }

  h += "<h2>Variants</h2>\n<p class=\"muted\">Change: the variant's median over the baseline's, "
       "minus 1 (positive: slower without the pass). Check: the variant's outputs compared with "
       "the reference (the evaluator, or the baseline for big models). Files: the IR diff of the "
       "disabled pass's occurrences, the HLO snapshot and the Chrome "
       "trace.</p>\n<table>\n<thead><tr><th class=\"num\">#</th><th>Passes</th>"
       "<th>Outcome</th><th class=\"num\" title=\"baseline median × ratio\">Time</th><th class=\"num\">Change</th>"
       "<th class=\"num\">95% CI</th><th class=\"num\" title=\"adjusted p: the chosen correction's, then "
       "the other's (* = significant under it)\">" +
       HtmlEscape(AdjustedPHeader(report)) +
       "</th><th class=\"num\">Kernels</th>"
       "<th class=\"num\">Compile</th><th>Check</th><th>Files</th></tr></thead>\n<tbody>\n";
  int n = 0;
  for (const AblationReportVariant* v : measured) {
    double count_k = Value(v->kernel_count);
    std::string kernels = FormatCount(count_k);
    if (!std::isnan(count_k) && !std::isnan(baseline_count) && count_k != baseline_count) {
      kernels += fmt::format(" ({:+.0f})", count_k - baseline_count);
    }
    double compile = Value(v->compile_ms);
    h += fmt::format(
        "<tr{}><td class=\"num\">{}</td><td title=\"{}\">{}</td><td>{}</td><td "
        "class=\"num\">{}</td>"
        "<td class=\"num\"><b>{}</b></td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td "
        "class=\"files\">{}</td></tr>\n",
        v->outcome == "wrong-result" ? " class=\"wrong\"" : "", ++n,
        HtmlEscape(VariantDescription(*v)), HtmlEscape(PassesWithKind(*v)), Badge(v->outcome.value_or(""), VerdictLabel(*v)),
        FormatMs(Value(v->estimate_ns)), FormatChange(Value(v->ratio)),
        HtmlEscape(FormatCi(Value(v->ci_low), Value(v->ci_high))),
        HtmlEscape(AdjustedPCell(report, *v)), kernels,
        std::isnan(compile) ? "–" : fmt::format("{:.0f} ms", compile), CheckCell(*v), Links(*v));
  }
  if (measured.empty())
    h += "<tr><td colspan=\"11\" class=\"muted\">No variant was measured.</td></tr>\n";
  h += "</tbody>\n</table>\n";

  h += "<h2>Failures and required passes</h2>\n";
  if (failed.empty()) {
    h += "<p>Every variant compiled and ran.</p>\n";
  } else {
    h += "<p class=\"muted\">A <b>required</b> pass was not disabled: the pipeline cannot produce "
         "runnable code without it (the reason says why). The other rows are variants that did "
         "not finish: the error is what the child process reported.</p>\n";
    h += "<table>\n<thead><tr><th>Passes</th><th>Outcome</th><th>Failed pass</th><th>Why</th>"
         "<th>Files</th></tr></thead>\n<tbody>\n";
    for (const AblationReportVariant* v : failed) {
      // The excerpt on one line; the whole error text (a stack trace, say)
      // behind a disclosure when the excerpt had to cut or join lines.
      std::string error = v->error.value_or("");
      std::string full;
      if (error.size() > 400 || error.find('\n') != std::string::npos) {
        full = "<details><summary>full error</summary><pre>" + HtmlEscape(error) + "</pre></details>";
      }
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td class=\"err\">{}{}</td><td>{}</td></tr>\n",
          HtmlEscape(PassesWithKind(*v)), Badge(v->outcome.value_or(""), VerdictLabel(*v)),
          HtmlEscape(v->failed_pass.value_or("")), HtmlEscape(FailureDetail(*v, 400)), full, Links(*v));
    }
    h += "</tbody>\n</table>\n";
  }

  h += "<h2 id=\"wrong\">Wrong results</h2>\n";
  if (count("wrong-result") == 0) {
    h += summary.shared_baseline_mismatches > 0
             ? fmt::format("<p>None of their own: {} variant(s) miss the evaluator only as the baseline does "
                           "(marked <i>as baseline</i>).</p>\n",
                           summary.shared_baseline_mismatches)
             : std::string("<p>None: every variant that ran matched its reference.</p>\n");
  } else {
    h += "<table>\n<thead><tr><th>Variant</th><th>What the check found</th><th>Reference</th>"
         "<th>Files</th></tr></thead>\n<tbody>\n";
    for (const AblationReportVariant* v : measured) {
      if (v->outcome != "wrong-result") continue;
      const ordered_json check = v->check.value_or(ordered_json());
      h += fmt::format(
          "<tr class=\"wrong\"><td><b>{}</b><br><span class=\"muted\">{}</span></td>"
          "<td class=\"err\">{}</td><td>{}</td><td>{}</td></tr>\n",
          HtmlEscape(v->name), HtmlEscape(VariantDescription(*v)),
          HtmlEscape(Excerpt(TextField(check, "message"), 600)), HtmlEscape(TextField(check, "reference")),
          Links(*v));
    }
    h += "</tbody>\n</table>\n";
  }

  if (!report.pairs.empty()) {
    h += "<h2>Pair interactions</h2>\n<p class=\"muted\">Interaction = (ratio<sub>ab</sub> − 1) − "
         "((ratio<sub>a</sub> − 1) + (ratio<sub>b</sub> − 1)), in percentage points. Positive: "
         "disabling both costs more than the two alone (each pass covers for the other); "
         "negative: their effects overlap.</p>\n";
    h += "<table>\n<thead><tr><th>Pass a</th><th>Pass b</th><th class=\"num\">Without a</th>"
         "<th class=\"num\">Without b</th><th class=\"num\">Without both</th>"
         "<th class=\"num\">Interaction</th></tr></thead>\n<tbody>\n";
    for (const AblationPairInteraction& p : report.pairs) {
      double interaction = Value(p.interaction);
      h += fmt::format(
          "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\"><b>{}</b></td></tr>\n",
          HtmlEscape(p.a), HtmlEscape(p.b), FormatChange(Value(p.ratio_a)), FormatChange(Value(p.ratio_b)),
          FormatChange(Value(p.ratio_ab)),
          std::isnan(interaction) ? "–" : fmt::format("{:+.1f} pp", interaction * 100));
    }
    h += "</tbody>\n</table>\n";
  }

  h += "<h2>Kernel differences</h2>\n<p class=\"muted\">Kernels of each variant matched by name "
       "against the baseline's: <span class=\"added\">added</span> (exists only without the "
       "pass), <span class=\"removed\">removed</span> (exists only because the pass ran), "
       "changed (time moved by more than 5%). Largest differences first.</p>\n";
  bool any = false;
  std::vector<std::string> unchanged;
  for (const AblationReportVariant* v : measured) {
    const std::vector<AblationKernelChange>& diff = v->kernel_diff;
    if (diff.empty()) continue;
    const AblationKernelDiffCounts counts = v->kernel_diff_counts.value_or(AblationKernelDiffCounts{});
    int64_t changes = counts.added + counts.removed + counts.changed;
    if (changes == 0) {
      unchanged.push_back(PassesWithKind(*v));
      continue;
    }
    any = true;
    h += fmt::format(
        "<details><summary>{} — {} {} <span class=\"muted\">({} added, {} removed, "
        "{} changed, {} unchanged)</span></summary>\n",
        HtmlEscape(PassesWithKind(*v)), Badge(v->outcome.value_or(""), VerdictLabel(*v)),
        FormatChange(Value(v->ratio)), counts.added, counts.removed, counts.changed, counts.same);
    h += "<table>\n<thead><tr><th>Kernel</th><th>Change</th><th class=\"num\">Baseline</th>"
         "<th class=\"num\">Variant</th><th class=\"num\">Δ</th></tr></thead>\n<tbody>\n";
    for (const AblationKernelChange& k : diff) {
      const std::string& change = k.change;
      if (change == "same") continue;
      double b = Value(k.baseline_ns), after = Value(k.variant_ns);
      double delta = (std::isnan(after) ? 0 : after) - (std::isnan(b) ? 0 : b);
      h += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"{}\">{}{}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}</td><td class=\"num\">{}{}</td></tr>\n",
          HtmlEscape(k.name), HtmlEscape(change), HtmlEscape(change), k.host ? " <b>on the host</b>" : "", FormatMs(b),
          FormatMs(after), delta > 0 ? "+" : "", FormatMs(delta));
    }
    h += "</tbody>\n</table>\n" + Links(*v) + "\n</details>\n";
  }
  if (!unchanged.empty()) {
    h += "<p class=\"muted\">Same kernels, each within 5% of the baseline's time: ";
    for (size_t i = 0; i < unchanged.size(); ++i) h += (i ? ", " : "") + HtmlEscape(unchanged[i]);
    h += ".</p>\n";
  }
  if (!any && unchanged.empty()) h += "<p>No kernel lists were recorded.</p>\n";

  h += RenderHeatmapHtml(report);

  h += RenderCompileCostHtml(report);
  h += "<h2>How this was run</h2>\n";
  if (std::vector<std::vector<std::string>> tasks = SlurmTaskRows(report); !tasks.empty()) {
    h += "<p>A Slurm job array: each task timed its variants against its own baseline, on its node.</p>\n"
         "<table>\n<thead><tr><th>Task</th><th>State</th><th>Variants</th><th>Node</th><th>Machine</th></tr></thead>\n"
         "<tbody>\n";
    for (const std::vector<std::string>& row : tasks) {
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", HtmlEscape(row[0]),
                       HtmlEscape(row[1]), HtmlEscape(row[2]), HtmlEscape(row[3]), HtmlEscape(row[4]));
    }
    h += "</tbody>\n</table>\n";
  }
  h += "<table>\n<tbody>\n";
  for (const auto& [key, value] : report.manifest.items()) {
    if (key == "tasks") continue;  // the table above
    if (key == "argv") continue;   // "command", as a list
    // Nested objects (machine, environment) a row per field: "environment.versions.cudnn".
    for (const auto& [field, text] : FlattenJsonFields(key, value)) {
      h += fmt::format("<tr><th style=\"width:220px\">{}</th><td><pre>{}</pre></td></tr>\n", HtmlEscape(field),
                       HtmlEscape(text));
    }
  }
  h += "</tbody>\n</table>\n";
  h += fmt::format(
      "<p class=\"muted\">Schema <code>{}</code>. Machine-readable: "
      "<a href=\"report.json\">report.json</a>, <a href=\"report.csv\">report.csv</a>, "
      "<a href=\"gbench.json\">gbench.json</a> (Google Benchmark format).</p>\n",
      HtmlEscape(report.schema));
  h += "</main>\n</body>\n</html>\n";
  return h;
}

}  // namespace passlab
