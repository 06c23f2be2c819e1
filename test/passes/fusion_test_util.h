// Shared by the fusion pass tests: counting fusions, and running a pass over
// XLA's test HLO corpus (../shared/corpus, read at test time; the tests skip
// when it is absent) checking that every module it changes still verifies,
// round-trips through the text format and, when small enough to evaluate,
// computes the same values.
#ifndef PASSLAB_TEST_PASSES_FUSION_TEST_UTIL_H_
#define PASSLAB_TEST_PASSES_FUSION_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/verify/shape_inference.h"
#include "test/corpus_util.h"
#include "test/passes/checked_pass_util.h"

namespace passlab {

inline int64_t CountOpcode(const HloComputation& c, HloOpcode op) {
  int64_t n = 0;
  for (const HloInstruction* i : c.instructions()) n += i->opcode() == op ? 1 : 0;
  return n;
}

inline int64_t CountFusions(const HloModule& m) { return CountOpcode(*m.entry_computation(), HloOpcode::kFusion); }

// The fusion computation holding an instruction named `name`* (prefix).
inline const HloComputation* FusedComputationWith(const HloModule& m, std::string_view opcode_name) {
  for (const HloComputation* c : m.computations()) {
    if (!c->IsFusionComputation()) continue;
    for (const HloInstruction* i : c->instructions()) {
      if (HloOpcodeString(i->opcode()) == opcode_name) return c;
    }
  }
  return nullptr;
}

inline constexpr int64_t kMaxCorpusInstructions = 4000;

struct CorpusRunStats {
  int modules = 0;    // parsed and verified before the pass
  int changed = 0;    // the pass changed them
  int evaluated = 0;  // of those, compared on the evaluator
};

// Largest array in the module, in elements (to keep evaluation quick).
inline int64_t LargestArray(const HloModule& m) {
  int64_t largest = 0;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      ForEachSubshape(i->shape(), [&](const Shape& s, const ShapeIndex&) {
        if (s.IsArray() && s.is_static()) largest = std::max(largest, s.element_count());
      });
    }
  }
  return largest;
}

// Runs `make_pipeline()` on every corpus module that parses and verifies:
// the pass must succeed, and a changed module must verify, round-trip and
// (small ones, up to `max_evaluations`) evaluate to the same values.
inline CorpusRunStats RunOnCorpus(const std::function<std::unique_ptr<HloPassInterface>()>& make_pass,
                                  int max_evaluations = 150) {
  CorpusRunStats stats;
  ParseOptions parse_options;
  parse_options.infer_shape = InferInstructionShape;
  for (const std::string& text : ReadCorpusTexts()) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "corpus.hlo", parse_options);
    // The corpus's few huge benchmark modules (~20k instructions) would
    // dominate the test's time.
    if (!m.ok() || (*m)->instruction_count() > kMaxCorpusInstructions || !VerifyModule(**m).ok()) continue;
    ++stats.modules;
    HloModule& module = **m;
    std::unique_ptr<HloModule> original = module.Clone();
    HloPassPipeline pipeline("corpus");
    pipeline.AddPass<HloPassFixBase>(make_pass(), 1);
    absl::StatusOr<bool> changed = pipeline.Run(module);
    EXPECT_TRUE(changed.ok()) << changed.status().message() << "\n" << text;
    if (!changed.ok() || !*changed) continue;
    ++stats.changed;
    absl::Status verified = VerifyModule(module);
    EXPECT_TRUE(verified.ok()) << verified.message() << "\n" << PrintModule(module);
    std::string printed = PrintModule(module);
    absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(printed, "printed.hlo", parse_options);
    EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << printed;
    if (reparsed.ok()) {
      EXPECT_EQ(PrintModule(**reparsed), printed);
    }
    if (stats.evaluated >= max_evaluations || LargestArray(module) > 4096) continue;
    std::vector<Literal> args = MakeRandomArguments(*original->entry_computation(), 7);
    // Random arguments can make a corpus loop run (nearly) forever; such
    // modules fail the first evaluation quickly and are skipped.
    EvaluatorOptions evaluator_options;
    evaluator_options.max_loop_iterations = 100000;
    absl::StatusOr<Literal> before = HloEvaluator(evaluator_options).Evaluate(*original, args);
    if (!before.ok()) continue;
    absl::StatusOr<Literal> after = HloEvaluator(evaluator_options).Evaluate(module, args);
    EXPECT_TRUE(after.ok()) << after.status().message() << "\n" << printed;
    if (!after.ok()) continue;
    ++stats.evaluated;
    absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-5, .rel = 1e-5});
    EXPECT_TRUE(same.ok()) << same.message() << "\n" << text << "\n" << printed;
  }
  return stats;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_FUSION_TEST_UTIL_H_
