// The median every report and front end uses (run, GUI, ablation
// statistics): the mean of the two middle values for even sizes; NaN when
// there are no values (a median of nothing is undefined, not 0).
#ifndef PASSLAB_ANALYSIS_MEDIAN_H_
#define PASSLAB_ANALYSIS_MEDIAN_H_

#include <span>

namespace passlab {

double Median(std::span<const double> values);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_MEDIAN_H_
