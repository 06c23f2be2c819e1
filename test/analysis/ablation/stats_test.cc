#include "analysis/ablation/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace passlab {
namespace {

TEST(StatsTest, MedianOfOddEvenAndEmpty) {
  EXPECT_EQ(Median(std::vector<double>{5, 1, 3}), 3);
  EXPECT_EQ(Median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median(std::vector<double>{7}), 7);
  EXPECT_TRUE(std::isnan(Median(std::vector<double>{})));
}

TEST(StatsTest, QuantileInterpolatesLikeNumpy) {
  // numpy.percentile([1,2,3,4,10], [2.5, 97.5, 50, 33]) = [1.1, 9.4, 3.0, 2.32].
  std::vector<double> sorted = {1, 2, 3, 4, 10};
  EXPECT_NEAR(QuantileOfSorted(sorted, 0.025), 1.1, 1e-12);
  EXPECT_NEAR(QuantileOfSorted(sorted, 0.975), 9.4, 1e-12);
  EXPECT_NEAR(QuantileOfSorted(sorted, 0.5), 3.0, 1e-12);
  EXPECT_NEAR(QuantileOfSorted(sorted, 0.33), 2.32, 1e-12);
  EXPECT_EQ(QuantileOfSorted(sorted, 0), 1);
  EXPECT_EQ(QuantileOfSorted(sorted, 1), 10);
}

// Reference p-values from Debian bookworm's scipy 1.10.1:
//   scipy.stats.mannwhitneyu(a, b, alternative='two-sided', method=M)
// with M = 'exact' for samples without ties of size <= 10 and 'asymptotic'
// (use_continuity=True, the default) otherwise.
TEST(StatsTest, MannWhitneyExactSeparatedSamples) {
  MannWhitneyResult r = MannWhitneyU(std::vector<double>{1.1, 2.2, 3.3, 4.4, 5.5},
                                     std::vector<double>{6.6, 7.7, 8.8, 9.9, 10.1, 11.0});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, 0.004329004329004329, 1e-12);  // 2 / C(11,5)
}

TEST(StatsTest, MannWhitneyExactInterleavedSamples) {
  MannWhitneyResult r = MannWhitneyU(std::vector<double>{1, 4, 5, 8, 10, 13, 14},
                                     std::vector<double>{2, 3, 6, 7, 9, 11, 12, 15, 16});
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.u, 27);
  EXPECT_NEAR(r.p_value, 0.6805944055944056, 1e-12);
}

TEST(StatsTest, MannWhitneyNormalApproximationWithTies) {
  MannWhitneyResult r = MannWhitneyU(std::vector<double>{1, 2, 2, 3, 3, 3, 4, 5},
                                     std::vector<double>{3, 4, 4, 5, 6, 6, 7, 8, 9});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.u, 7);
  EXPECT_NEAR(r.p_value, 0.005580984136839312, 1e-12);
}

TEST(StatsTest, MannWhitneyNormalApproximationForLargeSamples) {
  std::vector<double> a, b;
  for (int x = 1; x < 31; x += 2) a.push_back(x);
  for (int x = 10; x < 40; x += 2) b.push_back(x + 0.5);
  MannWhitneyResult r = MannWhitneyU(a, b);
  EXPECT_FALSE(r.exact);  // 15 > kExactMannWhitneyLimit
  EXPECT_EQ(r.u, 55);
  EXPECT_NEAR(r.p_value, 0.01806662299891238, 1e-12);
  // The test is symmetric: swapping the samples gives the same p.
  EXPECT_NEAR(MannWhitneyU(b, a).p_value, r.p_value, 1e-15);
  EXPECT_EQ(MannWhitneyU(b, a).u, 15 * 15 - 55);
}

TEST(StatsTest, MannWhitneyDegenerateInputs) {
  EXPECT_EQ(MannWhitneyU(std::vector<double>{3, 3, 3}, std::vector<double>{3, 3}).p_value, 1);
  EXPECT_TRUE(std::isnan(MannWhitneyU(std::vector<double>{}, std::vector<double>{1}).p_value));
  // Identical samples without ties within each: U at its mean, p = 1.
  EXPECT_EQ(MannWhitneyU(std::vector<double>{1, 2}, std::vector<double>{1.5, 1.6}).p_value, 1);
}

// Adjusted by hand. p = {0.01, 0.04, 0.03, 0.005}, sorted 0.005 < 0.01 < 0.03 < 0.04:
//   Holm: 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06, 1*0.04 = 0.04 -> running max 0.06.
//   BH:   0.005*4/1 = 0.02, 0.01*4/2 = 0.02, 0.03*4/3 = 0.04, 0.04*4/4 = 0.04 (running min
//         from the top changes nothing).
// Reference values from scipy.stats.wilcoxon (Debian bookworm's scipy
// 1.10.1, default arguments); t_plus is the sum of the positive ranks.
TEST(StatsTest, WilcoxonExactSmallSample) {
  std::vector<double> d = {0.952, -0.147, 1.022, 0.43, 0.62, 0.59, 0.49, -0.08, 0.01};
  WilcoxonResult r = WilcoxonSignedRank(d);
  EXPECT_TRUE(r.exact);
  EXPECT_EQ(r.n, 9);
  EXPECT_EQ(r.t_plus, 40);
  EXPECT_NEAR(r.p_value, 0.0390625, 1e-12);
  // Mirrored differences: same p.
  for (double& x : d) x = -x;
  EXPECT_NEAR(WilcoxonSignedRank(d).p_value, 0.0390625, 1e-12);
}

TEST(StatsTest, WilcoxonDropsZerosAndCorrectsForTies) {
  WilcoxonResult r = WilcoxonSignedRank(std::vector<double>{1, -2, 2, 3, -3, 3, 0, 4, 5, -1, 6, 2});
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.n, 11);
  EXPECT_EQ(r.t_plus, 53.5);
  EXPECT_NEAR(r.p_value, 0.0671256895206043, 1e-12);
}

TEST(StatsTest, WilcoxonNormalApproximationForLargeSamples) {
  std::vector<double> d = {
      2.340919,  -2.255665, 0.718099,  -0.26777,  -0.152649, 0.084403,  -1.719986, 0.068068,
      -0.565213, 3.623,     0.525787,  -0.052631, 0.018713,  -0.368046, -0.755151, -0.090801,
      0.781945,  0.061446,  1.257759,  0.100198,  0.32426,   1.845821,  0.845106,  -0.205229,
      0.117161,  0.840525,  2.235088,  0.03038,   0.056441,  1.302314,  -0.58646,  0.00828,
      1.182539,  0.88035,   0.391517,  0.970104,  -2.528162, 1.321307,  -0.659645, -1.36862,
      0.576446,  1.000545,  -0.144767, -0.776406, 0.326125,  0.247253,  1.705598,  1.047408,
      0.493816,  1.411633,  0.094477,  -0.6259,   0.884058,  0.882538,  0.085171,  -0.482809,
      0.529154,  -2.193894, 0.990125,  0.791368};
  WilcoxonResult r = WilcoxonSignedRank(d);
  EXPECT_FALSE(r.exact);
  EXPECT_EQ(r.t_plus, 1251);
  EXPECT_NEAR(r.p_value, 0.013379732514095138, 1e-12);
}

TEST(StatsTest, WilcoxonDegenerateInputs) {
  EXPECT_TRUE(std::isnan(WilcoxonSignedRank(std::vector<double>{}).p_value));
  EXPECT_EQ(WilcoxonSignedRank(std::vector<double>{0, 0, 0}).p_value, 1);
  // One positive difference: the smallest two-sided exact p is 1.
  EXPECT_EQ(WilcoxonSignedRank(std::vector<double>{0.5}).p_value, 1);
}

TEST(StatsTest, PairedRatioCancelsDriftThatRatioOfMediansDoesNot) {
  // Both drift by ±30% from round to round; the variant is 2% slower in
  // every round. The paired CI is exact; the unpaired one is wide.
  std::vector<double> baseline, variant;
  for (int i = 0; i < 40; ++i) {
    double speed = 1 + 0.3 * std::sin(i * 0.7);
    baseline.push_back(100 * speed);
    variant.push_back(102 * speed);
  }
  ConfidenceInterval paired = BootstrapPairedRatioCi(variant, baseline);
  EXPECT_NEAR(paired.estimate, 1.02, 1e-12);
  EXPECT_NEAR(paired.RelativeHalfWidth(), 0, 1e-12);
  EXPECT_GT(BootstrapRatioOfMediansCi(variant, baseline).RelativeHalfWidth(), 0.05);
  EXPECT_TRUE(std::isnan(BootstrapPairedRatioCi(variant, std::vector<double>{1, 2}).estimate));
  baseline[3] = 0;
  EXPECT_TRUE(std::isnan(BootstrapPairedRatioCi(variant, baseline).estimate));
}

TEST(StatsTest, HolmAndBenjaminiHochberg) {
  std::vector<double> p = {0.01, 0.04, 0.03, 0.005};
  std::vector<double> holm = HolmAdjust(p);
  std::vector<double> bh = BenjaminiHochbergAdjust(p);
  std::vector<double> holm_expected = {0.03, 0.06, 0.06, 0.02};
  std::vector<double> bh_expected = {0.02, 0.04, 0.04, 0.02};
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_NEAR(holm[i], holm_expected[i], 1e-12) << i;
    EXPECT_NEAR(bh[i], bh_expected[i], 1e-12) << i;
  }
}

// p = {0.5, 0.6}: Holm 2*0.5 = 1.0 then max(1.0, 0.6) -> both 1 (clipped);
// BH 0.6*2/2 = 0.6, min(0.5*2/1, 0.6) = 0.6 -> both 0.6 (monotone).
// p = {0.02, 0.01, 0.9}: BH 0.9*3/3 = 0.9, 0.02*3/2 = 0.03, 0.01*3/1 = 0.03.
TEST(StatsTest, AdjustmentsAreMonotoneAndClipped) {
  std::vector<double> p = {0.5, 0.6};
  EXPECT_EQ(HolmAdjust(p), (std::vector<double>{1, 1}));
  std::vector<double> bh = BenjaminiHochbergAdjust(p);
  EXPECT_NEAR(bh[0], 0.6, 1e-12);
  EXPECT_NEAR(bh[1], 0.6, 1e-12);
  bh = BenjaminiHochbergAdjust(std::vector<double>{0.02, 0.01, 0.9});
  EXPECT_NEAR(bh[0], 0.03, 1e-12);
  EXPECT_NEAR(bh[1], 0.03, 1e-12);
  EXPECT_NEAR(bh[2], 0.9, 1e-12);
}

TEST(StatsTest, AdjustmentsSkipMissingPValues) {
  double nan = std::nan("");
  std::vector<double> holm = HolmAdjust(std::vector<double>{nan, 0.01, 0.02});
  EXPECT_TRUE(std::isnan(holm[0]));
  EXPECT_NEAR(holm[1], 0.02, 1e-12);  // family of 2: 2*0.01, then max(0.02, 1*0.02)
  EXPECT_NEAR(holm[2], 0.02, 1e-12);
  EXPECT_TRUE(HolmAdjust(std::vector<double>{}).empty());
}

TEST(StatsTest, BootstrapRatioOfConstantSamplesIsExact) {
  ConfidenceInterval ci =
      BootstrapRatioOfMediansCi(std::vector<double>{2, 2, 2}, std::vector<double>{1, 1, 1, 1});
  EXPECT_EQ(ci.estimate, 2);
  EXPECT_EQ(ci.low, 2);
  EXPECT_EQ(ci.high, 2);
  EXPECT_EQ(ci.RelativeHalfWidth(), 0);
}

TEST(StatsTest, BootstrapRatioCoversTheTrueRatioAndIsDeterministic) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> baseline, variant;
  for (int i = 0; i < 40; ++i) baseline.push_back(100 * (1 + noise(rng)));
  for (int i = 0; i < 40; ++i) variant.push_back(105 * (1 + noise(rng)));
  ConfidenceInterval ci = BootstrapRatioOfMediansCi(variant, baseline);
  EXPECT_NEAR(ci.estimate, Median(variant) / Median(baseline), 1e-15);
  EXPECT_LT(ci.low, 1.05);
  EXPECT_GT(ci.high, 1.05);
  EXPECT_GT(ci.low, 1.0);  // 5% apart with 1% noise: clearly separated
  EXPECT_LE(ci.low, ci.estimate);
  EXPECT_GE(ci.high, ci.estimate);
  EXPECT_LT(ci.RelativeHalfWidth(), 0.01);
  ConfidenceInterval again = BootstrapRatioOfMediansCi(variant, baseline);
  EXPECT_EQ(again.low, ci.low);
  EXPECT_EQ(again.high, ci.high);
  // A different seed gives a (slightly) different interval.
  ConfidenceInterval other = BootstrapRatioOfMediansCi(variant, baseline, {.seed = 7});
  EXPECT_TRUE(other.low != ci.low || other.high != ci.high);
  // More noise, wider interval.
  std::vector<double> noisy = variant;
  for (size_t i = 0; i < noisy.size(); i += 2) noisy[i] *= 1.2;
  EXPECT_GT(BootstrapRatioOfMediansCi(noisy, baseline).RelativeHalfWidth(), ci.RelativeHalfWidth());
}

TEST(StatsTest, BootstrapOfEmptyOrZeroBaselineIsUndefined) {
  EXPECT_TRUE(std::isnan(BootstrapRatioOfMediansCi(std::vector<double>{1}, {}).estimate));
  EXPECT_TRUE(
      std::isnan(BootstrapRatioOfMediansCi(std::vector<double>{1}, std::vector<double>{0, 0}).low));
  ConfidenceInterval median = BootstrapMedianCi(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(median.estimate, 5);
  EXPECT_GE(median.low, 1);
  EXPECT_LE(median.low, 5);
  EXPECT_GE(median.high, 5);
  EXPECT_LE(median.high, 9);
}

}  // namespace
}  // namespace passlab

namespace passlab {
namespace {

// The smallest possible p is what the tests give for the most lopsided data.
TEST(StatsTest, SmallestPossiblePIsTheMostLopsidedSamplesP) {
  for (int n : {1, 5, 10, 30}) {
    std::vector<double> all_positive;
    for (int i = 0; i < n; ++i) all_positive.push_back(0.01 * (i + 1));
    EXPECT_NEAR(SmallestWilcoxonP(n), WilcoxonSignedRank(all_positive).p_value, 1e-12) << n;
  }
  EXPECT_DOUBLE_EQ(SmallestWilcoxonP(5), 0.0625);
  EXPECT_DOUBLE_EQ(SmallestWilcoxonP(0), 1);
  for (auto [a, b] : std::vector<std::pair<int, int>>{{3, 3}, {5, 10}, {20, 20}}) {
    std::vector<double> low, high;
    for (int i = 0; i < a; ++i) low.push_back(i);
    for (int i = 0; i < b; ++i) high.push_back(100 + i);
    EXPECT_NEAR(SmallestMannWhitneyP(a, b), MannWhitneyU(high, low).p_value, 1e-12) << a << "," << b;
  }
  EXPECT_DOUBLE_EQ(SmallestMannWhitneyP(3, 3), 0.1);
}

// The per-kernel quantile estimator (issue 27): additive interference in
// some steps leaves each kernel's lower quartile alone, so two identical
// programs disturbed in different steps compare at 1; a kernel 10% slower
// in every step moves the ratio by its share of the sum.
TEST(StatsTest, KernelQuantileRatioIgnoresInterferenceAndKeepsRealChanges) {
  const size_t steps = 16;
  auto rows = [&](double slowdown, size_t disturbed_phase) {
    std::vector<std::vector<double>> r(2, std::vector<double>(steps));
    for (size_t i = 0; i < steps; ++i) {
      const double jitter = 1 + 0.001 * static_cast<double>(i % 3);
      r[0][i] = 300 * jitter * slowdown;  // the kernel the variant changes
      r[1][i] = 700 * jitter;
      if (i % 4 == disturbed_phase) {     // another process ran: +40% on both
        r[0][i] *= 1.4;
        r[1][i] *= 1.4;
      }
    }
    return r;
  };
  std::vector<std::vector<size_t>> units;
  for (size_t i = 0; i < steps; i += 2) units.push_back({i, i + 1});
  const ConfidenceInterval aa = BootstrapKernelQuantileRatioCi(rows(1.0, 0), rows(1.0, 3), units, kKernelQuantile);
  EXPECT_NEAR(aa.estimate, 1.0, 1e-9);
  EXPECT_LE(aa.low, 1.0);
  EXPECT_GE(aa.high, 1.0);
  EXPECT_LT(aa.RelativeHalfWidth(), 0.005);
  const ConfidenceInterval slower = BootstrapKernelQuantileRatioCi(rows(1.1, 0), rows(1.0, 3), units, kKernelQuantile);
  EXPECT_NEAR(slower.estimate, 1.03, 1e-9);  // 10% of 300 / 1000
  EXPECT_GT(slower.low, 1.02);
  // The sum itself: quartiles of {1..8} and {10, 20, 30, 40} (numpy's linear).
  const std::vector<size_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_DOUBLE_EQ(SumOfKernelQuantiles({{1, 2, 3, 4, 5, 6, 7, 8}, {10, 20, 30, 40, 10, 20, 30, 40}}, all, 0.25),
                   2.75 + 17.5);
  EXPECT_TRUE(std::isnan(SumOfKernelQuantiles({{1}}, {}, 0.25)));
  // A unit past a row's end: no estimate.
  EXPECT_TRUE(std::isnan(BootstrapKernelQuantileRatioCi({{1, 2}}, {{1, 2}}, {{0, 5}}, 0.25).estimate));
}

}  // namespace
}  // namespace passlab
