// HLO text for the collective pass tests: the add and max reducers, and
// Module(header, entry) putting them between a module header and an entry.
#ifndef PASSLAB_TEST_PASSES_COLLECTIVES_COLLECTIVE_TEST_MODULES_H_
#define PASSLAB_TEST_PASSES_COLLECTIVES_COLLECTIVE_TEST_MODULES_H_

#include <string>

#include "test/passes/checked_pass_util.h"

namespace passlab {
namespace collective_test {

// checked_pass_util.h's f32 add reducer.
inline constexpr const char* kAdd = kAddF32Reducer;

inline constexpr char kMax[] = R"(
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

inline std::string Module(const std::string& header, const std::string& entry) {
  return header + "\n" + kAdd + kMax + entry;
}

}  // namespace collective_test
}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_COLLECTIVES_COLLECTIVE_TEST_MODULES_H_
