// Pass options and C++-matcher expectations of XLA's priority fusion tests
// (xla/backends/gpu/transforms/priority_fusion_test.cc: every fixture uses
// TestGpuDeviceInfo::RTXA6000DeviceInfo, passlab's "A6000" device, with
// count_multiple_input_accesses) and fusion wrapper tests
// (xla/backends/gpu/transforms/fusion_wrapper_test.cc, FileCheck only).
#include "analysis/conformance/case_table.h"

namespace passlab::conformance {

std::vector<CaseSpec> PriorityFusionCases() {
  std::vector<CaseSpec> r;
  r.push_back({"PriorityFusionTest.", {"device=A6000"}});
  r.push_back({"PriorityFusionWithTritonEnabledTest.", {"device=A6000"}});
  // EXPECT_THAT(root, GmockMatch(m::Fusion())); kind kLoop.
  r.push_back({"PriorityFusionTest.FuseWithSharedArgument", {},
               "CHECK: ENTRY\n"
               "CHECK: ROOT {{.*}} = f32[] fusion({{.*}}), kind=kLoop\n"});
  // The call stays; the called computation's root is a kLoop fusion.
  r.push_back({"PriorityFusionTest.FusionOnStreamAnnotatedComputation", {},
               "CHECK: ROOT {{.*}} = f32[] fusion({{.*}}), kind=kLoop\n"
               "CHECK: ENTRY\n"
               "CHECK: ROOT {{.*}} = f32[] call(\n"});
  // ROOT fusion(constant, parameter), kInput, fused root
  // scatter(parameter, parameter, broadcast(constant)).
  r.push_back({"PriorityFusionTest.DontFuseConstantIntoFirstOperandOfScatter", {},
               "CHECK: ROOT {{.*}} scatter({{%[^ ]+}}, {{%[^ ]+}}, {{%[^ ]+}})\n"
               "CHECK: ENTRY\n"
               "CHECK: ROOT {{.*}} = s32[1]{0} fusion({{%[^ ]+}}, {{%[^ ]+}}), kind=kInput\n"});
  return r;
}

}  // namespace passlab::conformance
