// Shared bits of the gather/scatter/rng/float/dot/reduction pass tests:
// reducers, and a check that a pass's output verifies and round-trips
// through the text format (print(parse(print(m))) == print(m)).
#ifndef PASSLAB_TEST_PASSES_CHECKED_PASS_UTIL_H_
#define PASSLAB_TEST_PASSES_CHECKED_PASS_UTIL_H_

#include <string>

#include "core/verify/hlo_verifier.h"
#include "test/passes/pass_test_util.h"

namespace passlab {

inline constexpr char kAddF32Reducer[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

inline constexpr char kAddS32Reducer[] = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

inline void ExpectModuleVerifies(const PassResult& r) {
  ASSERT_NE(r.module, nullptr);
  absl::Status s = VerifyModule(*r.module);
  EXPECT_TRUE(s.ok()) << s.message() << "\n" << r.text;
  PrintOptions options;
  options.print_metadata = false;
  std::string printed = PrintModule(*r.module, options);
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(printed, "roundtrip.hlo");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << printed;
  EXPECT_EQ(PrintModule(**reparsed, options), printed);
}

inline int64_t CountReduces(const HloModule& m) {
  int64_t n = 0;
  for (HloInstruction* i : m.entry_computation()->instructions()) n += i->opcode() == HloOpcode::kReduce ? 1 : 0;
  return n;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_CHECKED_PASS_UTIL_H_
