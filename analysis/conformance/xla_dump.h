// Conformance against a real XLA's per-pass dumps: the runs of XLA's passes
// recorded by `--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*` become test
// cases. XLA's HloPassPipeline writes the module after every pass as
// `module_<id>.<name>.<step>.<pipeline>.after_<pass>.before_<next>.txt`
// (xla/hlo/pass/hlo_pass_pipeline.cc, MaybeDumpHloAndSaveFilenames;
// xla/service/dump.cc, DumpHloModuleBetweenPassesIfEnabled), so consecutive
// steps of one module bracket one pass: step N ends "before_P", step N+1 is
// "<pipeline>.after_P.before_...". For each such run of a pass passlab
// models, passlab's pass (the instance at the same place in passlab's
// pipeline, with that place's options) runs on XLA's module before it, and
// the result is compared with XLA's module after it structurally:
// instruction by instruction, names, metadata and backend configs ignored.
//
// Beside the pass runs, a dump holds the module before and after the whole
// compilation (`*.before_optimizations.txt`, `*.after_optimizations.txt`):
// passlab's pipeline compiles the first, and the fusions of its result are
// compared with XLA's final ones (count, kinds, heroes, library calls).
//
// passlab writes the same file names (`passlab opt` with the same XLA_FLAGS),
// so its own dumps are the test input when no XLA dump is at hand.
#ifndef PASSLAB_ANALYSIS_CONFORMANCE_XLA_DUMP_H_
#define PASSLAB_ANALYSIS_CONFORMANCE_XLA_DUMP_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab::conformance {

// One pass run found in a dump directory.
struct DumpPassRun {
  std::string module;       // "module_0001.jit_train_step"
  int64_t step = 0;         // the step of the module after the pass
  std::string pipeline;     // the innermost pipeline ("simplification")
  std::string pass;         // XLA's name() of the pass ("algsimp")
  std::string before_file;  // paths
  std::string after_file;
};

// How the dump was made, which decides which neighbouring files bracket one
// pass run.
enum class DumpPassFilter {
  // --xla_dump_hlo_pass_re=.* exactly: XLA then writes a module after a pass
  // only when the pass changed it (xla/hlo/pass/hlo_pass_pipeline.cc,
  // `pass_changed || dump_regex != ".*"`), and at every pipeline's start.
  // Two consecutive dumps of one pipeline bracket the pass named in the
  // second: the passes run between them changed nothing.
  kChangedOnly,
  // Any other regex: XLA writes after every matching pass, changed or not;
  // only dumps whose names say they are neighbours (the first's "before_P"
  // is the second's "after_P") bracket a pass.
  kNeighboursOnly,
};

// The pass runs in `dir`, in module and step order. An error when the
// directory cannot be read or holds no per-pass dump.
absl::StatusOr<std::vector<DumpPassRun>> FindDumpPassRuns(const std::string& dir,
                                                          DumpPassFilter filter = DumpPassFilter::kChangedOnly);

// The module's structure as text with every name replaced by its position
// (computations in call order from the entry, instructions in post order,
// parameters by number; a fused computation's parameters in the order its
// body reaches them, its fusions' operands permuted alike), without the
// module's name, metadata or backend configs: equal for modules that differ
// only in names and in the order of fusion operands.
// `with_schedule` false: a scheduled module as if unscheduled (instructions
// in post order, not in the schedule's order).
std::string CanonicalStructure(const HloModule& module, bool with_schedule = true);

enum class DumpOutcome {
  kAgrees,       // passlab's pass gives XLA's module after it
  kDiffers,      // it gives another module
  // The same instructions in another schedule: a scheduler's ties break by
  // the order of the computation's instruction list, which parsing a dump
  // changes (for XLA's schedulers as for passlab's), so this is reported
  // apart from kDiffers.
  kOrderDiffers,
  // The same live instructions and computations: the two differ only in
  // what DCE removes (dead instructions, computations nothing calls), which
  // XLA's passes often leave for the next DCE. Reported apart, not agreed.
  kDeadCodeDiffers,
  kNotModelled,  // passlab's pipeline has no such pass in such a pipeline
  kInputError,   // a dump file does not parse or verify
  kPassError,    // passlab's pass returned an error
};
std::string_view DumpOutcomeName(DumpOutcome outcome);

struct DumpRunResult {
  DumpPassRun run;
  DumpOutcome outcome = DumpOutcome::kAgrees;
  bool xla_changed = false;      // XLA's module after differs from before
  bool passlab_changed = false;  // passlab's pass answered "changed"
  std::string passlab_place;     // "gpu/optimization/simplification/algsimp (@12)"
  std::string detail;            // why, for anything but kAgrees
};

struct DumpCheckOptions {
  std::string pipeline = "gpu";  // passlab's pipeline that supplies the passes
  std::vector<std::string> passes;  // only these XLA pass names (empty: all)
  // PASS.OPTION=VALUE settings for the pipeline (as `opt --pass-option`),
  // e.g. layout-assignment.xla_filter_layout=true for XLA:GPU's filters.
  std::vector<std::string> pass_options;
};

// Runs every pass run of `runs` through passlab's pass and compares.
absl::StatusOr<std::vector<DumpRunResult>> CheckDumpPassRuns(const std::vector<DumpPassRun>& runs,
                                                             const DumpCheckOptions& options);

// Per pass: how many of its runs agree, differ, ... (kNotModelled runs
// counted under their pass too).
struct DumpPassTally {
  int64_t runs = 0, agrees = 0, differs = 0, order_differs = 0, dead_code_differs = 0, not_modelled = 0, errors = 0;
  int64_t xla_changed = 0;  // runs where XLA's pass changed the module
};
std::map<std::string, DumpPassTally> TallyDumpRuns(const std::vector<DumpRunResult>& results);

// What the fusions of an optimized module are: per fusion kind and hero
// ("kLoop/add", "kInput/reduce", "kCustom/...", a multi-output fusion's
// heroes joined by "+"), the library calls by target with XLA's cuBLAS/cuDNN
// prefixes and passlab's BLAS/DNN ones mapped to one name ("gemm",
// "convForward"), and the totals.
struct FusionCensus {
  int64_t fusions = 0;
  int64_t library_calls = 0;
  int64_t entry_instructions = 0;
  std::map<std::string, int64_t> by_kind_hero;
  std::map<std::string, int64_t> library_by_target;
};
FusionCensus TakeFusionCensus(const HloModule& module);

// XLA's final module beside passlab's for one dumped module.
struct FinalFusionComparison {
  std::string module;  // "module_0001.jit_train_step"
  FusionCensus xla, passlab;
};
// Finds `*.before_optimizations.txt` and `*.after_optimizations.txt` pairs in
// `dir` and compiles each "before" with passlab's `pipeline`.
absl::StatusOr<std::vector<FinalFusionComparison>> CompareFinalFusions(
    const std::string& dir, const std::string& pipeline, const std::vector<std::string>& pass_options = {});

}  // namespace passlab::conformance

#endif  // PASSLAB_ANALYSIS_CONFORMANCE_XLA_DUMP_H_
