// passlab conform: run XLA's own pass unit tests (a JSON-lines case file,
// e.g. ../shared/corpus/xla_pass_tests.jsonl.gz) through passlab's passes
// and say, pass by pass, how many hold and why the others do not.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "analysis/conformance/conformance.h"
#include "core/ir/str_util.h"
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

}  // namespace

void AddConformCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand(
      "conform", "Run XLA's pass unit tests (JSON lines) through passlab's passes: held/total per pass, and why");
  auto o = std::make_shared<ConformOptions>();
  cmd->add_option("CASES", o->file, "Case file: JSON lines, optionally gzip (e.g. ../shared/corpus/xla_pass_tests.jsonl.gz)")
      ->required();
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
  cmd->callback([o, &result] { result.exit_code = Run(*o); });
}

}  // namespace passlab
