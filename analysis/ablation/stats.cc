#include "analysis/ablation/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace passlab {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Uniform index in [0, n) from one 64-bit draw (Lemire's multiply-shift):
// unlike std::uniform_int_distribution, the same on every standard library.
size_t DrawIndex(std::mt19937_64& rng, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64);
}

// The median of a resample of `samples` drawn with replacement; `scratch`
// is reused between calls.
double ResampledMedian(std::span<const double> samples, std::mt19937_64& rng,
                       std::vector<double>& scratch) {
  scratch.resize(samples.size());
  for (double& x : scratch) x = samples[DrawIndex(rng, samples.size())];
  return Median(scratch);
}

ConfidenceInterval PercentileInterval(double estimate, std::vector<double>& statistics,
                                      double confidence) {
  std::sort(statistics.begin(), statistics.end());
  double tail = (1 - confidence) / 2;
  return {estimate, QuantileOfSorted(statistics, tail), QuantileOfSorted(statistics, 1 - tail)};
}

// Midranks (1-based) of the pooled samples, and the tie term sum(t^3 - t)
// over groups of t equal values.
struct Ranks {
  std::vector<double> rank;  // in pooled order: a's values, then b's
  double tie_term = 0;
};

Ranks RankPooled(std::span<const double> a, std::span<const double> b) {
  std::vector<double> pooled(a.begin(), a.end());
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::vector<size_t> order(pooled.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return pooled[x] < pooled[y]; });
  Ranks ranks;
  ranks.rank.resize(pooled.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && pooled[order[j + 1]] == pooled[order[i]]) ++j;
    double midrank = (static_cast<double>(i + 1) + static_cast<double>(j + 1)) / 2;
    for (size_t k = i; k <= j; ++k) ranks.rank[order[k]] = midrank;
    double t = static_cast<double>(j - i + 1);
    ranks.tie_term += t * t * t - t;
    i = j + 1;
  }
  return ranks;
}

// P(U >= u) under the null hypothesis for sample sizes n1, n2 without ties:
// counts of rank arrangements by U, from the recurrence
// c(m, n, k) = c(m-1, n, k-n) + c(m, n-1, k) (the largest value is either in
// the first sample, adding n to U, or in the second).
double ExactUpperTail(int n1, int n2, int u) {
  // counts[m][k] for the current n; built up column by column over n.
  int max_u = n1 * n2;
  std::vector<std::vector<double>> counts(n1 + 1, std::vector<double>(max_u + 1, 0));
  // n = 0: only U = 0, one arrangement, for every m.
  for (int m = 0; m <= n1; ++m) counts[m][0] = 1;
  for (int n = 1; n <= n2; ++n) {
    std::vector<std::vector<double>> next(n1 + 1, std::vector<double>(max_u + 1, 0));
    next[0][0] = 1;
    for (int m = 1; m <= n1; ++m) {
      for (int k = 0; k <= m * n; ++k) {
        double with_first = k >= n ? next[m - 1][k - n] : 0;
        next[m][k] = with_first + counts[m][k];
      }
    }
    counts = std::move(next);
  }
  double total = 0;
  double upper = 0;
  for (int k = 0; k <= max_u; ++k) {
    total += counts[n1][k];
    if (k >= u) upper += counts[n1][k];
  }
  return upper / total;
}

}  // namespace

double QuantileOfSorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return kNaN;
  double position = q * static_cast<double>(sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(position));
  size_t above = std::min(below + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

double ConfidenceInterval::RelativeHalfWidth() const {
  if (!(estimate != 0) || std::isnan(low) || std::isnan(high)) return kNaN;
  return (high - low) / 2 / std::abs(estimate);
}

ConfidenceInterval BootstrapMedianCi(std::span<const double> samples,
                                     const BootstrapOptions& options) {
  if (samples.empty()) return {kNaN, kNaN, kNaN};
  std::mt19937_64 rng(options.seed);
  std::vector<double> scratch;
  std::vector<double> medians(options.resamples);
  for (double& m : medians) m = ResampledMedian(samples, rng, scratch);
  return PercentileInterval(Median(samples), medians, options.confidence);
}

ConfidenceInterval BootstrapRatioOfMediansCi(std::span<const double> variant,
                                             std::span<const double> baseline,
                                             const BootstrapOptions& options) {
  if (variant.empty() || baseline.empty()) return {kNaN, kNaN, kNaN};
  double base = Median(baseline);
  if (base == 0) return {kNaN, kNaN, kNaN};
  std::mt19937_64 rng(options.seed);
  std::vector<double> scratch;
  std::vector<double> ratios;
  ratios.reserve(options.resamples);
  for (int i = 0; i < options.resamples; ++i) {
    double v = ResampledMedian(variant, rng, scratch);
    double b = ResampledMedian(baseline, rng, scratch);
    // A resampled baseline median of 0 has no ratio; skip that draw.
    if (b != 0) ratios.push_back(v / b);
  }
  return PercentileInterval(Median(variant) / base, ratios, options.confidence);
}

ConfidenceInterval BootstrapPairedRatioCi(std::span<const double> variant,
                                          std::span<const double> baseline,
                                          const BootstrapOptions& options) {
  if (variant.empty() || variant.size() != baseline.size()) return {kNaN, kNaN, kNaN};
  std::vector<double> ratios(variant.size());
  for (size_t i = 0; i < variant.size(); ++i) {
    if (baseline[i] == 0) return {kNaN, kNaN, kNaN};
    ratios[i] = variant[i] / baseline[i];
  }
  return BootstrapMedianCi(ratios, options);
}

namespace {

// The q-quantile of `values` (reordered), interpolated as QuantileOfSorted
// does, from two order statistics instead of a sort.
double QuantileInPlace(std::vector<double>& values, double q) {
  const double position = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(position);
  std::nth_element(values.begin(), values.begin() + lo, values.end());
  const double low = values[lo];
  if (lo + 1 >= values.size()) return low;
  const double high = *std::min_element(values.begin() + lo + 1, values.end());
  return low + (high - low) * (position - static_cast<double>(lo));
}

double SumOfQuantiles(const std::vector<std::vector<double>>& rows, std::span<const size_t> steps, double q,
                      std::vector<double>& scratch) {
  if (steps.empty()) return kNaN;
  double sum = 0;
  for (const std::vector<double>& row : rows) {
    scratch.clear();
    for (size_t i : steps) scratch.push_back(row[i]);
    sum += QuantileInPlace(scratch, q);
  }
  return sum;
}

}  // namespace

double SumOfKernelQuantiles(const std::vector<std::vector<double>>& rows, std::span<const size_t> steps, double q) {
  std::vector<double> scratch;
  return SumOfQuantiles(rows, steps, q, scratch);
}

ConfidenceInterval BootstrapKernelQuantileRatioCi(const std::vector<std::vector<double>>& variant,
                                                  const std::vector<std::vector<double>>& control,
                                                  const std::vector<std::vector<size_t>>& units, double q,
                                                  const BootstrapOptions& options) {
  std::vector<size_t> steps;
  for (const std::vector<size_t>& unit : units) steps.insert(steps.end(), unit.begin(), unit.end());
  if (steps.empty()) return {kNaN, kNaN, kNaN};
  const size_t last = *std::max_element(steps.begin(), steps.end());
  for (const auto* rows : {&variant, &control}) {
    for (const std::vector<double>& row : *rows) {
      if (row.size() <= last) return {kNaN, kNaN, kNaN};
    }
  }
  std::vector<double> scratch;
  const double base = SumOfQuantiles(control, steps, q, scratch);
  if (!(base > 0)) return {kNaN, kNaN, kNaN};
  const double estimate = SumOfQuantiles(variant, steps, q, scratch) / base;
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<size_t> pick(0, units.size() - 1);
  std::vector<double> ratios;
  ratios.reserve(options.resamples);
  std::vector<size_t> drawn;
  for (int r = 0; r < options.resamples; ++r) {
    drawn.clear();
    for (size_t u = 0; u < units.size(); ++u) {
      const std::vector<size_t>& unit = units[pick(rng)];
      drawn.insert(drawn.end(), unit.begin(), unit.end());
    }
    const double c = SumOfQuantiles(control, drawn, q, scratch);
    if (c > 0) ratios.push_back(SumOfQuantiles(variant, drawn, q, scratch) / c);
  }
  return PercentileInterval(estimate, ratios, options.confidence);
}

WilcoxonResult WilcoxonSignedRank(std::span<const double> differences) {
  WilcoxonResult result;
  if (differences.empty()) {
    result.p_value = kNaN;
    return result;
  }
  std::vector<double> magnitude;
  std::vector<bool> positive;
  for (double d : differences) {
    if (d == 0) continue;
    magnitude.push_back(std::abs(d));
    positive.push_back(d > 0);
  }
  result.n = static_cast<int64_t>(magnitude.size());
  if (magnitude.empty()) return result;  // all zero: no evidence of a difference
  Ranks ranks = RankPooled(magnitude, {});
  for (size_t i = 0; i < magnitude.size(); ++i) {
    if (positive[i]) result.t_plus += ranks.rank[i];
  }
  const double n = static_cast<double>(magnitude.size());
  const double total = n * (n + 1) / 2;
  if (ranks.tie_term == 0 && magnitude.size() <= static_cast<size_t>(kExactWilcoxonLimit)) {
    // counts[t]: subsets of the ranks 1..n whose sum is t (each equally
    // likely to be the positive ones under the null hypothesis).
    const int max_sum = static_cast<int>(total);
    std::vector<double> counts(max_sum + 1, 0.0);
    counts[0] = 1;
    for (int r = 1; r <= static_cast<int>(n); ++r) {
      for (int t = max_sum; t >= r; --t) counts[t] += counts[t - r];
    }
    const double all = std::pow(2.0, n);
    const int t = static_cast<int>(std::lround(std::min(result.t_plus, total - result.t_plus)));
    double lower = 0;
    for (int k = 0; k <= t; ++k) lower += counts[k];
    result.exact = true;
    result.p_value = std::min(1.0, 2 * lower / all);
    return result;
  }
  const double mean = total / 2;
  const double variance = n * (n + 1) * (2 * n + 1) / 24 - ranks.tie_term / 48;
  if (!(variance > 0)) {
    result.p_value = 1;
    return result;
  }
  const double z = std::abs(result.t_plus - mean) / std::sqrt(variance);
  result.p_value = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
  return result;
}

MannWhitneyResult MannWhitneyU(std::span<const double> a, std::span<const double> b) {
  MannWhitneyResult result;
  if (a.empty() || b.empty()) {
    result.p_value = kNaN;
    return result;
  }
  double n1 = static_cast<double>(a.size());
  double n2 = static_cast<double>(b.size());
  Ranks ranks = RankPooled(a, b);
  double r1 = std::accumulate(ranks.rank.begin(), ranks.rank.begin() + a.size(), 0.0);
  result.u = r1 - n1 * (n1 + 1) / 2;
  // Two-sided: the larger of U1 and U2 = n1*n2 - U1, doubled upper tail.
  double u_max = std::max(result.u, n1 * n2 - result.u);
  if (ranks.tie_term == 0 && a.size() <= kExactMannWhitneyLimit &&
      b.size() <= kExactMannWhitneyLimit) {
    result.exact = true;
    result.p_value =
        std::min(1.0, 2 * ExactUpperTail(static_cast<int>(a.size()), static_cast<int>(b.size()),
                                         static_cast<int>(std::lround(u_max))));
    return result;
  }
  double n = n1 + n2;
  double variance = n1 * n2 / 12 * ((n + 1) - ranks.tie_term / (n * (n - 1)));
  if (!(variance > 0)) {
    result.p_value = 1;  // every value equal: no evidence of a difference
    return result;
  }
  double z = (u_max - n1 * n2 / 2 - 0.5) / std::sqrt(variance);
  // Two-sided normal tail: 2 * (1 - Phi(z)) = erfc(z / sqrt(2)).
  result.p_value = std::clamp(std::erfc(z / std::sqrt(2.0)), 0.0, 1.0);
  return result;
}

namespace {

// Indices of the non-NaN p-values, sorted by p (stable: ties keep input order).
std::vector<size_t> SortedValid(std::span<const double> p_values) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p_values.size(); ++i) {
    if (!std::isnan(p_values[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return p_values[x] < p_values[y]; });
  return order;
}

}  // namespace

std::vector<double> HolmAdjust(std::span<const double> p_values) {
  std::vector<double> adjusted(p_values.size(), kNaN);
  std::vector<size_t> order = SortedValid(p_values);
  double m = static_cast<double>(order.size());
  // p_(i) * (m - i + 1) for the i-th smallest, made monotone by a running max.
  double running = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    double scaled = p_values[order[i]] * (m - static_cast<double>(i));
    running = std::max(running, std::min(1.0, scaled));
    adjusted[order[i]] = running;
  }
  return adjusted;
}

std::vector<double> BenjaminiHochbergAdjust(std::span<const double> p_values) {
  std::vector<double> adjusted(p_values.size(), kNaN);
  std::vector<size_t> order = SortedValid(p_values);
  double m = static_cast<double>(order.size());
  // p_(i) * m / i for the i-th smallest, made monotone by a running min from
  // the largest down.
  double running = 1;
  for (size_t i = order.size(); i-- > 0;) {
    double scaled = p_values[order[i]] * m / static_cast<double>(i + 1);
    running = std::min(running, scaled);
    adjusted[order[i]] = running;
  }
  return adjusted;
}

double SmallestWilcoxonP(int64_t n) {
  if (n <= 0) return 1;
  if (n <= kExactWilcoxonLimit) return std::min(1.0, std::ldexp(1.0, static_cast<int>(1 - n)));
  double nd = static_cast<double>(n);
  double z = (nd * (nd + 1) / 4) / std::sqrt(nd * (nd + 1) * (2 * nd + 1) / 24);
  return std::erfc(z / std::sqrt(2.0));
}

double SmallestMannWhitneyP(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 1;
  if (a <= kExactMannWhitneyLimit && b <= kExactMannWhitneyLimit) {
    double arrangements = 1;  // C(a+b, a)
    for (int64_t i = 1; i <= a; ++i) arrangements = arrangements * static_cast<double>(b + i) / static_cast<double>(i);
    return std::min(1.0, 2 / arrangements);
  }
  double ad = static_cast<double>(a), bd = static_cast<double>(b);
  double z = (ad * bd / 2 - 0.5) / std::sqrt(ad * bd * (ad + bd + 1) / 12);  // MannWhitneyU's continuity correction
  return std::erfc(z / std::sqrt(2.0));
}

double SpearmanCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 3) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> ra = RankPooled(a, {}).rank, rb = RankPooled(b, {}).rank;
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va == 0 || vb == 0) return std::numeric_limits<double>::quiet_NaN();
  return cov / std::sqrt(va * vb);
}

}  // namespace passlab
