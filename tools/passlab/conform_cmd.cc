// passlab conform: run XLA's own pass unit tests (a JSON-lines case file,
// e.g. ../shared/corpus/xla_pass_tests.jsonl.gz) through passlab's passes
// and say, pass by pass, how many hold and why the others do not.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/conformance/conformance.h"
#include "analysis/conformance/xla_dump.h"
#include "core/ir/str_util.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "tools/passlab/commands.h"

namespace passlab {
namespace {

using conformance::CaseResult;
using conformance::PassTally;
using conformance::Verdict;

struct ConformOptions {
  std::string file;
  std::vector<std::string> passes;
  std::string test_filter;
  std::string format = "text";
  std::string ratchet;
  std::string filecheck;
  int64_t seed = 1;
  double eval_timeout_s = 10;
  bool no_eval = false;
  bool show_held = false;
  std::string xla_dump;           // --xla-dump DIR
  std::string pipeline = "gpu";   // the passes --xla-dump compares with
  std::string dump_pass_re = ".*";  // the --xla_dump_hlo_pass_re the dump was made with
  std::vector<std::string> pass_options;  // --pass-option PASS.OPTION=VALUE (with --xla-dump)
};

std::string Indent(std::string_view text, std::string_view prefix) {
  std::string out;
  for (std::string_view line : SplitAny(text, "\n")) StrAppend(&out, prefix, line, "\n");
  return out;
}

int Run(const ConformOptions& o) {
  absl::StatusOr<std::vector<conformance::Case>> cases = conformance::LoadCases(o.file);
  if (!cases.ok()) return ReportError(cases.status());
  std::set<std::string> in_file;
  for (const auto& c : *cases) in_file.insert(c.pass);
  for (const std::string& p : o.passes) {
    if (in_file.count(p) == 0) {
      return ReportError(absl::InvalidArgumentError(StrCat("--pass ", p, ": no case of that pass in ", o.file,
                                                           " (its passes: ", Join(in_file, ", "), ")")));
    }
  }
  conformance::RunOptions ro;
  ro.filecheck = o.filecheck.empty() ? conformance::FindFileCheck() : o.filecheck;
  ro.seed = static_cast<uint64_t>(o.seed);
  ro.evaluate = !o.no_eval;
  ro.eval_timeout_s = o.eval_timeout_s;
  std::vector<CaseResult> results;
  bool needs_filecheck = false;
  for (const auto& c : *cases) {
    if (!o.passes.empty() && std::find(o.passes.begin(), o.passes.end(), c.pass) == o.passes.end()) continue;
    if (!o.test_filter.empty() && c.test.find(o.test_filter) == std::string::npos) continue;
    needs_filecheck |= c.filecheck.has_value();
    results.push_back(conformance::RunCase(c, ro));
  }
  if (needs_filecheck && ro.filecheck.empty()) {
    return ReportError(absl::FailedPreconditionError(
        "FileCheck not found: install llvm-22-tools or set PASSLAB_FILECHECK / --filecheck"));
  }
  std::map<std::string, PassTally> tally = conformance::Tally(results);
  int64_t held = 0, total = 0, modelled_held = 0, modelled_total = 0;
  for (const auto& [pass, t] : tally) {
    held += t.held;
    total += t.total;
    if (t.modelled) {
      modelled_held += t.held;
      modelled_total += t.total;
    }
  }
  auto pct = [](int64_t a, int64_t b) { return b == 0 ? 0.0 : 100.0 * static_cast<double>(a) / static_cast<double>(b); };

  // The ratchet: each pass holds at least what the committed table says.
  std::vector<std::string> below;
  if (!o.ratchet.empty()) {
    auto floor = conformance::ReadRatchet(o.ratchet);
    if (!floor.ok()) return ReportError(floor.status());
    for (const auto& [pass, min_held] : *floor) {
      auto it = tally.find(pass);
      if (it == tally.end()) {
        if (o.passes.empty() && o.test_filter.empty()) {
          below.push_back(StrCat(pass, ": no case in the file (the ratchet wants ", min_held, ")"));
        }
        continue;
      }
      if (it->second.held < min_held) {
        below.push_back(StrCat(pass, ": ", it->second.held, " held, the ratchet wants at least ", min_held));
      }
    }
  }

  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["file"] = o.file;
    j["summary"] = {{"held", held},
                    {"total", total},
                    {"modelled_held", modelled_held},
                    {"modelled_total", modelled_total}};
    nlohmann::ordered_json passes = nlohmann::ordered_json::object();
    for (const auto& [pass, t] : tally) {
      passes[pass] = {{"held", t.held}, {"total", t.total}, {"modelled", t.modelled}};
    }
    j["passes"] = passes;
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const CaseResult& r : results) {
      arr.push_back({{"id", r.c->id},
                     {"line", r.c->line},
                     {"pass", r.c->pass},
                     {"test", r.c->test},
                     {"xla_file", r.c->xla_file},
                     {"verdict", std::string(conformance::VerdictName(r.verdict))},
                     {"held", r.verdict == Verdict::kHeld},
                     {"expect_changed", r.c->expect_changed},
                     {"changed", r.changed},
                     {"options", r.options},
                     {"evaluation", r.evaluation},
                     {"detail", r.detail}});
    }
    j["cases"] = arr;
    if (!o.ratchet.empty()) j["ratchet_failures"] = below;
    fmt::print("{}\n", j.dump(2));
  } else {
    fmt::print("{:<40} {:>5} {:>6}\n", "pass", "held", "total");
    for (const auto& [pass, t] : tally) {
      fmt::print("{:<40} {:>5} {:>6}{}\n", pass, t.held, t.total, t.modelled ? "" : "  (not modelled)");
    }
    fmt::print("{:<40} {:>5} {:>6}  ({:.1f}%)\n", "all cases", held, total, pct(held, total));
    fmt::print("{:<40} {:>5} {:>6}  ({:.1f}%)\n", "cases of passes passlab models", modelled_held, modelled_total,
               pct(modelled_held, modelled_total));
    bool header = false;
    for (const CaseResult& r : results) {
      if (r.verdict == Verdict::kHeld && !o.show_held) continue;
      if (r.verdict == Verdict::kNotModelled && !o.show_held) continue;  // summarised in the table
      if (!header) {
        fmt::print("\n{}:\n", o.show_held ? "cases" : "failures");
        header = true;
      }
      fmt::print("{} {} (line {}): {}\n", r.c->pass, r.c->test, r.c->line, conformance::VerdictName(r.verdict));
      if (!r.detail.empty()) fmt::print("{}", Indent(r.detail, "    "));
    }
    for (const std::string& b : below) fmt::print(stderr, "ratchet: {}\n", b);
  }
  return below.empty() ? 0 : 1;
}

// passlab conform --xla-dump DIR: XLA's per-pass dumps as test cases.
int RunDump(const ConformOptions& o) {
  absl::StatusOr<std::vector<conformance::DumpPassRun>> runs = conformance::FindDumpPassRuns(
      o.xla_dump, o.dump_pass_re == ".*" ? conformance::DumpPassFilter::kChangedOnly
                                         : conformance::DumpPassFilter::kNeighboursOnly);
  if (!runs.ok()) return ReportError(runs.status());
  conformance::DumpCheckOptions options;
  options.pipeline = o.pipeline;
  options.passes = o.passes;
  options.pass_options = o.pass_options;
  absl::StatusOr<std::vector<conformance::DumpRunResult>> results = conformance::CheckDumpPassRuns(*runs, options);
  if (!results.ok()) return ReportError(results.status());
  absl::StatusOr<std::vector<conformance::FinalFusionComparison>> finals =
      conformance::CompareFinalFusions(o.xla_dump, o.pipeline, o.pass_options);
  if (!finals.ok()) return ReportError(finals.status());
  std::map<std::string, conformance::DumpPassTally> tally = conformance::TallyDumpRuns(*results);
  conformance::DumpPassTally all;
  for (const auto& [pass, t] : tally) {
    all.runs += t.runs;
    all.agrees += t.agrees;
    all.differs += t.differs;
    all.order_differs += t.order_differs;
    all.dead_code_differs += t.dead_code_differs;
    all.not_modelled += t.not_modelled;
    all.errors += t.errors;
    all.xla_changed += t.xla_changed;
  }
  auto census_json = [](const conformance::FusionCensus& c) {
    return nlohmann::ordered_json{{"fusions", c.fusions},
                                  {"library_calls", c.library_calls},
                                  {"entry_instructions", c.entry_instructions},
                                  {"by_kind_hero", c.by_kind_hero},
                                  {"library_by_target", c.library_by_target}};
  };
  if (o.format == "json") {
    nlohmann::ordered_json j;
    j["dump"] = o.xla_dump;
    j["pipeline"] = o.pipeline;
    j["summary"] = {{"runs", all.runs}, {"agrees", all.agrees}, {"differs", all.differs},
                    {"order_differs", all.order_differs}, {"dead_code_differs", all.dead_code_differs},
                    {"not_modelled", all.not_modelled}, {"errors", all.errors}};
    nlohmann::ordered_json passes = nlohmann::ordered_json::object();
    for (const auto& [pass, t] : tally) {
      passes[pass] = {{"runs", t.runs}, {"agrees", t.agrees}, {"differs", t.differs},
                      {"order_differs", t.order_differs}, {"dead_code_differs", t.dead_code_differs},
                      {"not_modelled", t.not_modelled}, {"errors", t.errors}, {"xla_changed", t.xla_changed}};
    }
    j["passes"] = passes;
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto& r : *results) {
      arr.push_back({{"module", r.run.module}, {"step", r.run.step}, {"pipeline", r.run.pipeline},
                     {"pass", r.run.pass}, {"outcome", std::string(conformance::DumpOutcomeName(r.outcome))},
                     {"xla_changed", r.xla_changed}, {"passlab_changed", r.passlab_changed},
                     {"passlab_place", r.passlab_place}, {"detail", r.detail}});
    }
    j["runs"] = arr;
    nlohmann::ordered_json fin = nlohmann::ordered_json::array();
    for (const auto& f : *finals) {
      fin.push_back({{"module", f.module}, {"xla", census_json(f.xla)}, {"passlab", census_json(f.passlab)}});
    }
    j["final_fusions"] = fin;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("{:<40} {:>5} {:>7} {:>7} {:>13} {:>7} {:>12}\n", "pass (XLA's name)", "runs", "agree", "differ",
             "not modelled", "errors", "XLA changed");
  for (const auto& [pass, t] : tally) {
    fmt::print("{:<40} {:>5} {:>7} {:>7} {:>13} {:>7} {:>12}\n", pass, t.runs, t.agrees, t.differs, t.not_modelled,
               t.errors, t.xla_changed);
  }
  int64_t modelled = all.runs - all.not_modelled;
  fmt::print("{:<40} {:>5} {:>7} {:>7} {:>13} {:>7} {:>12}\n", "all pass runs", all.runs, all.agrees, all.differs,
             all.not_modelled, all.errors, all.xla_changed);
  fmt::print("runs of passes passlab models: {} of {} agree ({:.1f}%)", all.agrees, modelled,
             modelled == 0 ? 0.0 : 100.0 * static_cast<double>(all.agrees) / static_cast<double>(modelled));
  if (all.dead_code_differs > 0) {
    fmt::print("; {} more differ only in dead code (what the next DCE removes)", all.dead_code_differs);
  }
  if (all.order_differs > 0) {
    fmt::print("; {} more give the same instructions in another order (a schedule's ties)", all.order_differs);
  }
  fmt::print("\n");
  bool header = false;
  for (const auto& r : *results) {
    if (r.outcome == conformance::DumpOutcome::kAgrees || r.outcome == conformance::DumpOutcome::kNotModelled) {
      if (!o.show_held) continue;
    }
    if (!header) {
      fmt::print("\n{}:\n", o.show_held ? "runs" : "runs that do not agree");
      header = true;
    }
    fmt::print("{} step {} {}/{}: {}{}\n", r.run.module, r.run.step, r.run.pipeline, r.run.pass,
               conformance::DumpOutcomeName(r.outcome), r.passlab_place.empty() ? "" : StrCat(" (", r.passlab_place, ")"));
    if (!r.detail.empty()) fmt::print("{}", Indent(r.detail, "    "));
  }
  for (const auto& f : *finals) {
    fmt::print("\nfinal module {}: fusions XLA {} / passlab {}, library calls XLA {} / passlab {}\n", f.module,
               f.xla.fusions, f.passlab.fusions, f.xla.library_calls, f.passlab.library_calls);
    std::set<std::string> keys;
    for (const auto& [k, n] : f.xla.by_kind_hero) keys.insert(k);
    for (const auto& [k, n] : f.passlab.by_kind_hero) keys.insert(k);
    for (const auto& [k, n] : f.xla.library_by_target) keys.insert("library/" + k);
    for (const auto& [k, n] : f.passlab.library_by_target) keys.insert("library/" + k);
    fmt::print("  {:<48} {:>6} {:>8}\n", "kind/hero", "XLA", "passlab");
    for (const std::string& k : keys) {
      auto count = [&](const conformance::FusionCensus& c) -> int64_t {
        const auto& m = k.rfind("library/", 0) == 0 ? c.library_by_target : c.by_kind_hero;
        auto it = m.find(k.rfind("library/", 0) == 0 ? k.substr(8) : k);
        return it == m.end() ? 0 : it->second;
      };
      fmt::print("  {:<48} {:>6} {:>8}\n", k, count(f.xla), count(f.passlab));
    }
  }
  return 0;
}

}  // namespace

void AddConformCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "conform", "Run XLA's pass unit tests (JSON lines) through passlab's passes: held/total per pass, and why");
  auto o = std::make_shared<ConformOptions>();
  cmd->add_option("CASES", o->file, "Case file: JSON lines, optionally gzip (e.g. ../shared/corpus/xla_pass_tests.jsonl.gz)");
  cmd->add_option("--xla-dump", o->xla_dump,
                  "Instead of a case file: a directory XLA dumped with --xla_dump_to=DIR --xla_dump_hlo_pass_re=.* "
                  "(every pass run of a pass passlab models is compared with passlab's pass, and the final fusions)");
  cmd->add_option("--pass-option", o->pass_options,
                  "With --xla-dump: PASS.OPTION=VALUE for passlab's pipeline (repeatable; e.g. "
                  "layout-assignment.xla_filter_layout=true for XLA:GPU's OHWI filters)");
  cmd->add_option("--xla-dump-pass-re", o->dump_pass_re,
                  "With --xla-dump: the --xla_dump_hlo_pass_re it was made with (default .*, with which XLA dumps "
                  "only after passes that changed the module; with any other, only neighbouring dumps bracket a pass)");
  cmd->add_option("--pipeline", o->pipeline, "With --xla-dump: passlab's pipeline whose passes (and options) to use")
      ->check(CLI::IsMember(PipelineNames()));
  cmd->add_option("--pass", o->passes, "Only the cases of this pass (XLA's name; repeatable)");
  cmd->add_option("--test", o->test_filter, "Only cases whose XLA test name contains this text");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--ratchet", o->ratchet,
                  "File of 'PASS HELD' lines: exit 1 when a pass holds fewer cases than its line says");
  cmd->add_option("--filecheck", o->filecheck, "LLVM FileCheck binary (default: llvm-22's)");
  cmd->add_option("--seed", o->seed, "Seed of the evaluator's random arguments")->check(NonNegative());
  cmd->add_flag("--no-eval", o->no_eval, "Do not compare values before/after on the evaluator");
  cmd->add_option("--eval-timeout", o->eval_timeout_s, "Seconds the evaluator may take for one case (then: not compared)")
      ->check(Positive());
  cmd->add_flag("--show-held", o->show_held, "List every case, not only the failures");
  cmd->callback([o, &result] {
    if (o->file.empty() == o->xla_dump.empty()) {
      result.exit_code = ReportError(absl::InvalidArgumentError(
          "conform: give either a case file (CASES) or --xla-dump DIR, not both or neither"));
      return;
    }
    result.exit_code = o->xla_dump.empty() ? Run(*o) : RunDump(*o);
  });
}

}  // namespace passlab
