// The conformance runner: XLA's own pass unit tests as the specification of
// passlab's passes. Each case is run the way XLA's
// HloHardwareIndependentTestBase::RunAndFilecheckHloRewrite runs it
// (xla/hlo/testlib/hlo_hardware_independent_test_base.cc): parse and verify
// the module, run the one pass (by XLA's name, with the options the XLA test
// sets: case_table.h), compare the "changed" answer, print the module as
// XLA's HloModule::ToString does (HloPrintOptions() with large constants:
// no operand shapes) and match the test's FileCheck directives with LLVM's
// FileCheck (as xla/hlo/testlib/filecheck.cc calls it). Beyond XLA's test, a
// case also needs the structure its C++ matchers check (transcribed into the
// case table) and the same values before and after the pass on the
// evaluator. A case of a pass passlab does not have fails ("not modelled").
#ifndef PASSLAB_ANALYSIS_CONFORMANCE_CONFORMANCE_H_
#define PASSLAB_ANALYSIS_CONFORMANCE_CONFORMANCE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace passlab::conformance {

// One line of a case file (the shared corpus's xla_pass_tests.jsonl.gz).
struct Case {
  int64_t line = 0;          // 1-based line in the file
  std::string id;
  std::string xla_file;      // the XLA test file it came from
  std::string test;          // "AlgebraicSimplifierTest.ExpOfZero"
  std::string pass;          // XLA's name() of the pass
  std::string hlo;
  bool expect_changed = false;
  std::optional<std::string> filecheck;  // XLA's directives, if the test has any
};

// Reads a JSON-lines file, gzip-compressed or not. Errors name the file and
// the line (not JSON, a missing or mistyped field).
absl::StatusOr<std::vector<Case>> LoadCases(const std::string& path);

enum class Verdict {
  kHeld,
  kNotModelled,       // passlab has no pass of that name
  kParseError,        // the input does not parse
  kVerifyError,       // the input parses but does not verify
  kBadOptions,        // the case table sets an option the pass does not take
  kPassError,         // the pass returned an error
  kChangedDiffers,    // "changed" differs from XLA's
  kFileCheckFailed,   // XLA's FileCheck directives do not match
  kExpectationFailed, // the transcribed C++-matcher structure does not match
  kOutputVerifyError, // the module after the pass does not verify
  kValuesDiffer,      // the evaluator gives other values after the pass
};
std::string_view VerdictName(Verdict verdict);

struct CaseResult {
  const Case* c = nullptr;
  Verdict verdict = Verdict::kHeld;
  std::string detail;         // why, for a failure (first FileCheck error, ...)
  bool changed = false;       // what passlab's pass answered
  std::string evaluation;     // "equal", or why the values were not compared
  std::vector<std::string> options;  // the options the case ran with
};

struct RunOptions {
  std::string filecheck;       // FileCheck binary; empty: FindFileCheck()
  uint64_t seed = 1;           // seed of the random arguments
  bool evaluate = true;        // compare values before/after on the evaluator
  // Modules whose instructions hold more elements than this in all are not
  // evaluated (the evaluator is a slow reference).
  int64_t max_eval_elements = int64_t{1} << 22;
  // The evaluation runs in a child process: one that takes longer than this
  // (a sort or a reduce-window the reference walks element by element) or
  // crashes is reported as not compared, or as a failure when only the
  // module after the pass fails.
  double eval_timeout_s = 10;
};

// LLVM's FileCheck: $PASSLAB_FILECHECK, /usr/lib/llvm-22/bin/FileCheck,
// FileCheck-22 or FileCheck on PATH; empty when none exists.
std::string FindFileCheck();

CaseResult RunCase(const Case& c, const RunOptions& options);

// Per pass: cases held and total, in pass-name order.
struct PassTally {
  int64_t held = 0;
  int64_t total = 0;
  bool modelled = true;
};
std::map<std::string, PassTally> Tally(const std::vector<CaseResult>& results);

// The committed ratchet: "pass held" lines ('#' comments); each pass must
// hold at least this many cases.
absl::StatusOr<std::map<std::string, int64_t>> ReadRatchet(const std::string& path);

}  // namespace passlab::conformance

#endif  // PASSLAB_ANALYSIS_CONFORMANCE_CONFORMANCE_H_
