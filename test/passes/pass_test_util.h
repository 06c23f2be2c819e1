// Helpers for pass tests: HLO text in, run one pass through a pipeline (so
// the changed audit applies), CHECK-style patterns or "unchanged" out.
#ifndef PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_
#define PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {

struct PassResult {
  bool changed = false;
  std::unique_ptr<HloModule> module;
  std::string text;  // printed without metadata
};

inline PassResult RunPass(std::unique_ptr<HloPassInterface> pass, const std::string& hlo) {
  PassResult r;
  auto m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  // Every pass test also checks that the module computes the same values
  // before and after the pass (STYLE.md rule 10), on seeded random inputs.
  HloEvaluator evaluator;
  std::vector<Literal> args = MakeRandomArguments(*r.module->entry_computation(), 1234);
  absl::StatusOr<Literal> before = evaluator.Evaluate(*r.module, args);
  HloPassPipeline pipeline("test");
  pipeline.AddPass<HloPassFixBase>(std::move(pass), 1);
  absl::StatusOr<bool> changed = pipeline.Run(*r.module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  r.changed = changed.ok() && *changed;
  if (before.ok()) {
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(*r.module, args);
    EXPECT_TRUE(after.ok()) << "the module no longer evaluates: " << after.status().message();
    if (after.ok()) {
      absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-5});
      EXPECT_TRUE(same.ok()) << "the pass changed the computed values: " << same.message();
    }
  } else {
    // Only modules with side effects or not-yet-evaluated ops may skip.
    EXPECT_TRUE(absl::IsUnimplemented(before.status()))
        << "the input does not evaluate: " << before.status().message();
  }
  // The instructions' cached printer lines must still be right after the
  // pass edited them (a mutator that forgets to invalidate shows up here).
  PrintOptions uncached;
  uncached.use_line_cache = false;
  EXPECT_EQ(PrintModule(*r.module), PrintModule(*r.module, uncached))
      << "stale cached printer lines after the pass";
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  r.text = PrintModule(*r.module, options);
  return r;
}

// FileCheck-like: each pattern must appear, in order; "NOT:" patterns must
// not appear anywhere.
inline ::testing::AssertionResult Matches(const std::string& text,
                                          const std::vector<std::string>& patterns) {
  size_t pos = 0;
  for (const std::string& p : patterns) {
    if (p.rfind("NOT:", 0) == 0) {
      if (text.find(p.substr(4)) != std::string::npos) {
        return ::testing::AssertionFailure() << "found '" << p.substr(4) << "' in:\n" << text;
      }
      continue;
    }
    size_t at = text.find(p, pos);
    if (at == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << p << "' not found (in order) in:\n" << text;
    }
    pos = at + p.size();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_
