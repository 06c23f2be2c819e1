// Shared by the ablation report's builder and its renderers (report.cc,
// report_text.cc, report_html.cc): outcome order and the wording and number
// formats every rendering uses, so the Markdown, CSV and HTML agree.
#ifndef PASSLAB_ANALYSIS_ABLATION_REPORT_INTERNAL_H_
#define PASSLAB_ANALYSIS_ABLATION_REPORT_INTERNAL_H_

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/ablation/ablation_report.h"

namespace passlab::ablation_internal {

// Every outcome, in report order: measured ones, then failures (the
// surprising ones first; "required" is expected, so last).
inline constexpr const char* kOutcomeOrder[] = {"slower",           "faster",        "undecided",    "no-change",
                                                "wrong-result",     "identical",     "crash",        "timeout",
                                                "verifier-failure", "compile-error", "required"};
// A variant that compiles to the baseline's program (the runner's screen,
// runner.h skip_identical): ratio exactly 1, untimed; neither measured nor
// a failure. The tables list such variants by name instead of in rows.
inline constexpr const char* kIdenticalOutcome = "identical";
// Paired ratios a percentile-bootstrap CI needs; with fewer the report
// shows none.
inline constexpr size_t kMinPairsForCi = 4;
// Index in kOutcomeOrder; unknown outcomes after all of them.
int OutcomeRank(std::string_view outcome);
bool IsFailureOutcome(std::string_view outcome);
// "slower", "no change", "WRONG RESULT", "compile error", ...
std::string OutcomeLabel(std::string_view outcome);

// The verdict the tables show: OutcomeLabel, except "likely slower" /
// "likely faster" for an undecided variant whose whole 95% CI lies beyond the
// threshold and the A/A band ("large_but_uncorrected").
std::string VerdictLabel(const AblationReportVariant& variant);
// The adjusted-p column's header and cell: the chosen correction's p, then
// the other's with "*" when significant under it: "0.0625 / BH 0.0156*".
std::string AdjustedPHeader(const AblationReport& report);
std::string AdjustedPCell(const AblationReport& report, const AblationReportVariant& variant);
// A number of the report; NaN when it is unknown.
inline double Value(const std::optional<double>& x) { return x.value_or(std::numeric_limits<double>::quiet_NaN()); }
// A field of an open JSON part (the manifest, a check) as a
// number; NaN when missing or not a number.
double NumberField(const nlohmann::ordered_json& object, const char* key);
// A field as text: strings as-is, other values as JSON, "" when missing/null.
std::string TextField(const nlohmann::ordered_json& object, const char* key);

// "12.345 ms" from nanoseconds; "–" for NaN.
// Text for HTML content and attribute values: & < > " ' escaped.
std::string HtmlEscape(std::string_view text);

std::string FormatMs(double ns);
// Ratio as a signed percent change: 1.1234 -> "+12.3%"; "–" for NaN.
std::string FormatChange(double ratio);
// "[+10.1%, +14.5%]" from ratio bounds; "" when unknown.
std::string FormatCi(double low, double high);
// "0.0231", "<0.0001"; "–" for NaN.
std::string FormatP(double p);
// "±0.4%" from a relative half-width; "–" for NaN.
std::string FormatHalfWidth(double half_width);
// Integers with thousands separators ("1,234,567"); "–" for NaN.
std::string FormatCount(double n);
// Bytes as "12.3 MB"; "–" for NaN.
std::string FormatBytes(double bytes);

// Whitespace collapsed to single spaces, cut at `max` characters with "…".
std::string Excerpt(std::string_view text, size_t max);
// The passes a variant changes, joined by " + " (its name when none).
std::string PassesLabel(const AblationReportVariant& variant);
// PassesLabel with the variant's kind unless it is disable-one:
// "fusion + fusion_merger (pair)".
std::string PassesWithKind(const AblationReportVariant& variant);
// What the variant does, in words: "pipeline without fusion", "minimal
// pipeline plus fusion", ...
std::string VariantDescription(const AblationReportVariant& variant);
// Why a failed (or required) variant has no timing, in one line.
std::string FailureDetail(const AblationReportVariant& variant, size_t max);
// One sentence naming what was swept and on what, from the manifest:
// "model resnet18 (batch 8), pipeline gpu, device cpu".
std::string SweepSubject(const AblationReport& report);
// The significant disable-one/-occurrence variants with the given outcome
// ("slower" or "faster"), largest effect first, at most `max`.
std::vector<const AblationReportVariant*> StrongestEffects(const AblationReport& report, std::string_view outcome,
                                                          size_t max);
// The variants that run operations on the host which the baseline runs on
// the device: {PassesLabel, "op1, op2"} each, in the report's order.
std::vector<std::pair<std::string, std::string>> HostOpVariants(const AblationReport& report);
// Where each Slurm array task ran (the manifest's "tasks"; none for a local
// sweep): one row per task, cells task, state, variants ("8/8"), node,
// machine ("AMD EPYC, 64 cores; GPU none, driver none").
std::vector<std::vector<std::string>> SlurmTaskRows(const AblationReport& report);
// The human name of the metric: "total kernel time per step".
std::string MetricDescription(std::string_view metric);
// The A/A band the verdicts used and where it came from, one sentence
// (report.aa): "A/A band ±0.42% (this sweep's 6 A/A copies): ...".
std::string AaBandSentence(const AblationReport& report);
// "N variants compile to the baseline's program (...): a, b." with each
// variant's passes between `quote`s (Markdown: "`"); empty when none.
std::string IdenticalSentence(const AblationReport& report, std::string_view quote);
// The A/A copies' rows: copy, change, 95% CI, p (adj.), verdict.
std::vector<std::vector<std::string>> AaCopyRows(const AblationReport& report);

}  // namespace passlab::ablation_internal

#endif  // PASSLAB_ANALYSIS_ABLATION_REPORT_INTERNAL_H_
