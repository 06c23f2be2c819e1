// Statistics for ablation sweeps: is a variant really slower or faster than
// the baseline, and how sure are we?
//  - Median, and percentile-bootstrap 95% CIs of a median and of the ratio of
//    two medians (variant / baseline), with a fixed seed so the same samples
//    always give the same interval;
//  - the median of paired ratios (variant and baseline timed in the same
//    round) with its bootstrap CI, and the Wilcoxon signed-rank test of the
//    paired log ratios: what sweeps use, since pairing cancels drift;
//  - the two-sided Mann-Whitney U test (exact null distribution for small
//    samples without ties, normal approximation with tie and continuity
//    correction otherwise), matching scipy.stats.mannwhitneyu;
//  - Holm and Benjamini-Hochberg adjustment of p-values across variants.
// Everything here is deterministic: same input, same bytes out.
#ifndef PASSLAB_ANALYSIS_ABLATION_STATS_H_
#define PASSLAB_ANALYSIS_ABLATION_STATS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "analysis/median.h"

namespace passlab {


// Quantile q in [0,1] of sorted values with linear interpolation between
// order statistics (numpy's default "linear" method); NaN when empty.
double QuantileOfSorted(std::span<const double> sorted, double q);

struct BootstrapOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 0x5eed'ab1a'7e00'0001ULL;
};

struct ConfidenceInterval {
  double estimate;  // the statistic on the original samples
  double low;
  double high;
  // (high - low) / 2 / estimate: the half-width relative to the estimate
  // (0.01 = "within ±1%"); NaN when the estimate is 0 or undefined.
  double RelativeHalfWidth() const;
};

// Percentile bootstrap CI of the median of `samples`. All NaN when empty.
ConfidenceInterval BootstrapMedianCi(std::span<const double> samples,
                                     const BootstrapOptions& options = {});

// Percentile bootstrap CI of Median(variant) / Median(baseline): each
// resample draws both groups independently with replacement. All NaN when
// either group is empty or the baseline median is 0.
ConfidenceInterval BootstrapRatioOfMediansCi(std::span<const double> variant,
                                             std::span<const double> baseline,
                                             const BootstrapOptions& options = {});

struct MannWhitneyResult {
  double u = 0;        // U statistic of the first sample (R1 - n1(n1+1)/2)
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (small samples, no ties)
};

// Two-sided Mann-Whitney U test of `a` against `b`. Exact when both sizes
// are <= kExactMannWhitneyLimit and there are no ties; otherwise the normal
// approximation with tie correction and continuity correction (p clipped to
// 1). p is NaN when either sample is empty; 1 when all values are equal.
inline constexpr int kExactMannWhitneyLimit = 10;
MannWhitneyResult MannWhitneyU(std::span<const double> a, std::span<const double> b);

// Percentile bootstrap CI of the median of paired ratios variant[i] /
// baseline[i] (the two measured in the same round, so that drift in the
// machine's speed between rounds cancels): resamples draw whole pairs. All
// NaN when the sizes differ, are 0, or a baseline value is 0.
ConfidenceInterval BootstrapPairedRatioCi(std::span<const double> variant,
                                          std::span<const double> baseline,
                                          const BootstrapOptions& options = {});

// The ratio estimator of programs timed kernel by kernel (issue 27): each
// program's time is the sum over its kernels of that kernel's
// kKernelQuantile-quantile over the steps. Interference on a shared host
// only ever adds time, so a low quantile of each kernel is its least
// disturbed time; summing per kernel keeps a kernel's own change whole.
inline constexpr double kKernelQuantile = 0.25;

// Sum over `rows` (one row per kernel, one entry per step) of the
// q-quantile (QuantileOfSorted's interpolation) of each row's entries at
// `steps` (indices, repeats allowed). 0 when there are no rows; NaN when
// `steps` is empty.
double SumOfKernelQuantiles(const std::vector<std::vector<double>>& rows, std::span<const size_t> steps, double q);

// SumOfKernelQuantiles(variant) / SumOfKernelQuantiles(control) over all
// steps, with a percentile bootstrap CI that resamples whole `units` (each a
// list of step indices timed together, e.g. an ABBA pair, the same indices
// in both programs' rows). All NaN when there are no units, a row is
// shorter than a unit's index, or the control's sum is 0.
ConfidenceInterval BootstrapKernelQuantileRatioCi(const std::vector<std::vector<double>>& variant,
                                                  const std::vector<std::vector<double>>& control,
                                                  const std::vector<std::vector<size_t>>& units, double q,
                                                  const BootstrapOptions& options = {});

struct WilcoxonResult {
  double t_plus = 0;   // sum of the ranks of the positive differences
  int64_t n = 0;       // differences that are not zero
  double p_value = 1;  // two-sided
  bool exact = false;
};

// Two-sided Wilcoxon signed-rank test of paired differences against a median
// of 0. Zero differences are dropped (scipy's zero_method="wilcox"); exact
// null distribution when at most kExactWilcoxonLimit remain and their
// magnitudes have no ties, otherwise the normal approximation with tie
// correction and no continuity correction (scipy.stats.wilcoxon's defaults).
// p is NaN for no differences at all, 1 when every difference is zero.
inline constexpr int kExactWilcoxonLimit = 25;
WilcoxonResult WilcoxonSignedRank(std::span<const double> differences);

// The smallest p the two tests can give at these sample sizes (every
// difference of one sign; every sample of one side above the other): 2^(1-n)
// and 2 / C(a+b, a) where the exact distributions apply, the normal
// approximation's beyond. 1 when there is nothing to test. With too few
// repetitions this is above what the multiple-testing correction needs.
double SmallestWilcoxonP(int64_t n);

// Spearman's rank correlation of paired samples (midranks for ties): how
// alike two sweeps order their variants. NaN with fewer than three pairs or
// when either side is constant.
double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b);
double SmallestMannWhitneyP(int64_t a, int64_t b);

// Multiple-testing adjustments over a family of p-values, in input order.
// Both are monotone in the sorted p-values and clipped to 1. NaN entries (a
// test that was not run) stay NaN and do not count towards the family size.
std::vector<double> HolmAdjust(std::span<const double> p_values);
std::vector<double> BenjaminiHochbergAdjust(std::span<const double> p_values);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_STATS_H_
