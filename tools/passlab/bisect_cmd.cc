// passlab bisect: like LLVM's opt-bisect, finds the first pass run after
// which a check fails. The check is a user command (run with the optimized
// module's path appended; exit 0 = good) or, by default, the reference
// evaluator comparing the optimized module with the input on seeded random
// arguments.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "analysis/ir_diff.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_recorder.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"
#include "tools/passlab/commands.h"

namespace passlab {
namespace {

// Lets the first `limit` pass runs happen and remembers the last one.
class LimitObserver : public PassObserver {
 public:
  explicit LimitObserver(int64_t limit) : limit_(limit) {}
  bool ShouldRun(const PassRunInfo& info) override {
    if (count_ >= limit_) return false;
    ++count_;
    last_ = info;
    return true;
  }
  int64_t count() const { return count_; }
  const PassRunInfo& last() const { return last_; }

 private:
  int64_t limit_;
  int64_t count_ = 0;
  PassRunInfo last_;
};

struct Trial {
  bool ok = false;       // the check passed
  int64_t runs = 0;      // pass runs allowed and made
  PassRunInfo last;
  std::string text;      // the module after the allowed runs
  std::string why;
};

}  // namespace

void AddBisectCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("bisect", "Find the first pass run after which a check fails (like -opt-bisect-limit)");
  auto file = std::make_shared<std::string>();
  auto pipeline_name = std::make_shared<std::string>("default");
  auto check = std::make_shared<std::string>();
  auto seed = std::make_shared<int64_t>(1);
  auto tolerance = std::make_shared<double>(1e-5);
  cmd->add_option("FILE", *file, "HLO text file");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_option("--pipeline", *pipeline_name, "Named pipeline: gpu (today's XLA:GPU, the default) or gpu-2021 (seed 003's era)");
  cmd->add_option("--check", *check, "Command run as `CMD MODULE.hlo`; exit 0 means good (default: evaluator comparison)");
  cmd->add_option("--seed", *seed, "Seed of the random arguments for the evaluator check");
  cmd->add_option("--tolerance", *tolerance, "Absolute and relative tolerance of the evaluator check");
  cmd->callback([=, &result] {
    auto input = LoadVerifiedModule(*file, *source);
    if (!input.ok()) {
      result.exit_code = ReportError(input.status());
      return;
    }
    std::string input_text = PrintModule(**input);
    std::vector<Literal> args = MakeRandomArguments(*(*input)->entry_computation(), static_cast<uint64_t>(*seed));
    absl::StatusOr<Literal> reference;
    if (check->empty()) {
      reference = HloEvaluator().Evaluate(**input, args);
      if (!reference.ok()) {
        result.exit_code = ReportError(absl::Status(reference.status().code(),
            StrCat("the input does not evaluate, so the built-in check cannot run (use --check): ",
                   reference.status().message())));
        return;
      }
    }
    std::filesystem::path tmp = std::filesystem::temp_directory_path() / StrCat("passlab-bisect-", getpid(), ".hlo");
    auto run_trial = [&](int64_t limit) -> absl::StatusOr<Trial> {
      ASSIGN_OR_RETURN(auto module, LoadModule(*file, *source));
      ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline, BuildNamedPipeline(*pipeline_name));
      LimitObserver limiter(limit);
      pipeline->AddObserver(&limiter);
      Trial t;
      absl::StatusOr<bool> ran = pipeline->Run(*module);
      t.runs = limiter.count();
      t.last = limiter.last();
      if (!ran.ok()) {
        t.why = StrCat("the pipeline failed: ", ran.status().message());
        return t;
      }
      t.text = PrintModule(*module);
      if (!check->empty()) {
        std::ofstream(tmp) << t.text;
        int rc = std::system(StrCat(*check, " ", tmp.string(), " > /dev/null 2>&1").c_str());
        t.ok = rc == 0;
        if (!t.ok) t.why = StrCat("`", *check, "` exited with status ", WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
        return t;
      }
      absl::StatusOr<Literal> value = HloEvaluator().Evaluate(*module, args);
      if (!value.ok()) {
        t.why = StrCat("the optimized module does not evaluate: ", value.status().message());
        return t;
      }
      absl::Status same = CompareLiterals(*reference, *value, {.abs = *tolerance, .rel = *tolerance});
      t.ok = same.ok();
      if (!t.ok) t.why = std::string(same.message());
      return t;
    };
    absl::StatusOr<Trial> full = run_trial(std::numeric_limits<int64_t>::max());
    if (!full.ok()) {
      result.exit_code = ReportError(full.status());
      return;
    }
    fmt::print("pipeline '{}' makes {} pass runs\n", *pipeline_name, full->runs);
    if (full->ok) {
      fmt::print("the check passes after every pass run: nothing to bisect\n");
      std::filesystem::remove(tmp);
      return;
    }
    absl::StatusOr<Trial> none = run_trial(0);
    if (!none.ok() || !none->ok) {
      result.exit_code = ReportError(absl::FailedPreconditionError(
          StrCat("the check already fails on the input (", none.ok() ? none->why : std::string(none.status().message()),
                 "); nothing to bisect")));
      std::filesystem::remove(tmp);
      return;
    }
    // Invariant: limit `good` passes, `bad` fails.
    int64_t good = 0, bad = full->runs;
    Trial bad_trial = *full;
    while (bad - good > 1) {
      int64_t mid = good + (bad - good) / 2;
      absl::StatusOr<Trial> t = run_trial(mid);
      if (!t.ok()) {
        result.exit_code = ReportError(t.status());
        return;
      }
      fmt::print("  limit {:>4}: {}\n", mid, t->ok ? "good" : "bad");
      if (t->ok) {
        good = mid;
      } else {
        bad = mid;
        bad_trial = *t;
      }
    }
    absl::StatusOr<Trial> before = run_trial(good);
    const PassRunInfo& culprit = bad_trial.last;
    fmt::print("first bad pass run: #{} {} (@{} in {}, iteration {})\n", bad, culprit.pass_name,
               culprit.occurrence_id, culprit.pipeline_path, culprit.iteration);
    fmt::print("why: {}\n", bad_trial.why);
    if (before.ok()) {
      UnifiedDiffOptions o;
      o.before_label = StrCat("before ", culprit.pass_name);
      o.after_label = StrCat("after ", culprit.pass_name);
      fmt::print("IR diff of that run:\n{}", UnifiedDiff(before->text, bad_trial.text, o));
    }
    std::filesystem::remove(tmp);
  });
}

}  // namespace passlab
