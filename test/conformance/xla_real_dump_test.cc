// Real XLA as the spec, without a GPU: the per-pass dump that JAX 0.11.2's
// XLA wrote compiling the ResNet-50 training step (bench/jax_resnet_step.py,
// batch 8, 64x64, f32) on an NVIDIA H200 with --xla_dump_to
// --xla_dump_hlo_pass_re=.* (bench/xla_ablation.py --dump; scripts/xla-yardstick.sh),
// committed as test/conformance/data/xla_resnet50_step_h200.tar.xz (the step
// module's files only). With the regex exactly ".*", XLA writes a module after
// a pass only when the pass changed it (xla/hlo/pass/hlo_pass_pipeline.cc,
// RunPassesInternal: `pass_changed || dump_regex != ".*"`), so consecutive
// files of one pipeline bracket the pass named in the second.
//
// Every run of a pass passlab models goes through passlab's pass (as its `gpu`
// pipeline configures it at that place) on XLA's module before it and is
// compared with XLA's module after it; test/conformance/xla_dump_ratchet.txt
// says how many runs of each pass must agree (the ratchet only goes up). And
// passlab's `gpu` pipeline on XLA's unoptimized module is compared with
// XLA:GPU's final module: library calls by target and fusions, within the
// ratchet's bounds (which only go down).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/conformance/xla_dump.h"

namespace passlab::conformance {
namespace {

namespace fs = std::filesystem;

const fs::path kData = fs::path(PASSLAB_SOURCE_DIR) / "test/conformance/data/xla_resnet50_step_h200.tar.xz";
const fs::path kRatchet = fs::path(PASSLAB_SOURCE_DIR) / "test/conformance/xla_dump_ratchet.txt";

class RealXlaDump : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("passlab_real_xla_dump_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    const std::string command = "tar xJf '" + kData.string() + "' -C '" + dir_->string() + "'";
    extracted_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string DumpDir() { return (*dir_ / "xla_resnet50_step_h200").string(); }
  static fs::path* dir_;
  static bool extracted_;
};
fs::path* RealXlaDump::dir_ = nullptr;
bool RealXlaDump::extracted_ = false;

// passlab's `gpu` pipeline configured as XLA:GPU compiles for Hopper: NHWC
// convolutions' filters in OHWI (HeuristicLayoutAssignment,
// xla/backends/gpu/transforms/layout_assignment.cc), which passlab's default
// leaves off for its CPU backend (a weight transpose per step).
DumpCheckOptions XlaGpuOptions() {
  DumpCheckOptions o;
  o.pass_options = {"layout-assignment.xla_filter_layout=true"};
  return o;
}

std::map<std::string, int64_t> ReadRatchet() {
  std::map<std::string, int64_t> out;
  std::ifstream in(kRatchet);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string pass;
    int64_t agrees = 0;
    if (fields >> pass >> agrees) out[pass] = agrees;
  }
  return out;
}

TEST_F(RealXlaDump, EveryModelledPassHoldsItsRatchet) {
  ASSERT_TRUE(extracted_) << "could not unpack " << kData;
  absl::StatusOr<std::vector<DumpPassRun>> runs = FindDumpPassRuns(DumpDir());
  ASSERT_TRUE(runs.ok()) << runs.status();
  // The runs XLA's dump brackets: the dump's own property (any change of the
  // pairing rules shows here first).
  EXPECT_EQ(runs->size(), 47u);
  absl::StatusOr<std::vector<DumpRunResult>> results = CheckDumpPassRuns(*runs, XlaGpuOptions());
  ASSERT_TRUE(results.ok()) << results.status();
  std::map<std::string, DumpPassTally> tally = TallyDumpRuns(*results);
  const std::map<std::string, int64_t> ratchet = ReadRatchet();
  ASSERT_FALSE(ratchet.empty()) << "no lines in " << kRatchet;
  for (const auto& [pass, want] : ratchet) {
    if (pass.rfind("final.", 0) == 0) continue;
    auto it = tally.find(pass);
    ASSERT_NE(it, tally.end()) << pass << " has no run in the dump";
    EXPECT_GE(it->second.agrees, want) << pass << ": " << it->second.agrees << " of " << it->second.runs
                                       << " runs agree with XLA's, the ratchet says " << want;
  }
  int64_t modelled = 0, agrees = 0, errors = 0;
  for (const auto& [pass, t] : tally) {
    modelled += t.runs - t.not_modelled;
    agrees += t.agrees;
    errors += t.errors;
  }
  // No run of a modelled pass fails to parse or to run: every one is a verdict.
  EXPECT_EQ(errors, 0);
  EXPECT_GE(modelled, 31);
  std::printf("real XLA dump: %lld of %lld runs of passes passlab models agree\n", static_cast<long long>(agrees),
              static_cast<long long>(modelled));
}

TEST_F(RealXlaDump, PasslabsPipelineMakesXlasLibraryCalls) {
  ASSERT_TRUE(extracted_) << "could not unpack " << kData;
  absl::StatusOr<std::vector<FinalFusionComparison>> finals =
      CompareFinalFusions(DumpDir(), "gpu", XlaGpuOptions().pass_options);
  ASSERT_TRUE(finals.ok()) << finals.status();
  ASSERT_EQ(finals->size(), 1u);
  const FinalFusionComparison& f = (*finals)[0];
  // XLA:GPU's final module of the step (the dump's own property).
  EXPECT_EQ(f.xla.fusions, 898);
  EXPECT_EQ(f.xla.library_calls, 158);
  // How far passlab's final module is from XLA's: library calls by target
  // (|passlab - XLA| summed over targets) and fusions. The ratchet file's
  // "final.*" lines are upper bounds: they only go down.
  int64_t library_off = 0;
  std::map<std::string, int64_t> targets = f.xla.library_by_target;
  for (const auto& [target, n] : f.passlab.library_by_target) targets.emplace(target, 0);
  for (const auto& [target, n] : targets) {
    auto count = [&](const std::map<std::string, int64_t>& by) {
      auto it = by.find(target);
      return it == by.end() ? int64_t{0} : it->second;
    };
    library_off += std::llabs(count(f.passlab.library_by_target) - count(f.xla.library_by_target));
    std::printf("library calls %-28s XLA %4lld  passlab %4lld\n", target.c_str(),
                static_cast<long long>(count(f.xla.library_by_target)),
                static_cast<long long>(count(f.passlab.library_by_target)));
  }
  const int64_t fusions_off = std::llabs(f.passlab.fusions - f.xla.fusions);
  std::printf("fusions: XLA %lld, passlab %lld\n", static_cast<long long>(f.xla.fusions),
              static_cast<long long>(f.passlab.fusions));
  const std::map<std::string, int64_t> ratchet = ReadRatchet();
  ASSERT_TRUE(ratchet.count("final.library_calls_off") && ratchet.count("final.fusions_off"));
  EXPECT_LE(library_off, ratchet.at("final.library_calls_off"));
  EXPECT_LE(fusions_off, ratchet.at("final.fusions_off"));
}

}  // namespace
}  // namespace passlab::conformance
