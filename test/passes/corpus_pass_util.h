// Corpus-driven pass checks: runs a pass over the XLA test HLO texts in
// ../shared/corpus that contain a given op, and checks that each module it
// changes still verifies and (for small modules) computes what it computed
// before, on seeded random inputs. Skips cleanly when the corpus is absent.
#ifndef PASSLAB_TEST_PASSES_CORPUS_PASS_UTIL_H_
#define PASSLAB_TEST_PASSES_CORPUS_PASS_UTIL_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "test/corpus_util.h"

namespace passlab {

struct CorpusPassStats {
  int candidates = 0;  // texts that parse and verify
  int changed = 0;     // ... that the pass changed
  int evaluated = 0;   // ... changed ones also compared on the evaluator
};

// Cheap enough for the evaluator: no loops or calls, every array at most
// `max_elements` elements, every dot or convolution at most 2^20
// multiply-adds.
inline bool SmallModule(const HloModule& m, int64_t max_elements) {
  for (HloComputation* c : m.computations()) {
    for (HloInstruction* i : c->instructions()) {
      HloOpcode op = i->opcode();
      if (op == HloOpcode::kWhile || op == HloOpcode::kCall || op == HloOpcode::kConditional ||
          op == HloOpcode::kFusion || op == HloOpcode::kSort) {
        return false;
      }
      if (op == HloOpcode::kDot || op == HloOpcode::kConvolution) {
        int64_t operand_elements = i->operand(0)->shape().element_count() + i->operand(1)->shape().element_count();
        if (i->shape().element_count() * operand_elements > (int64_t{1} << 24)) return false;
      }
      if (i->shape().IsArray() && i->shape().element_count() > max_elements) return false;
    }
  }
  return true;
}

inline bool HasLowPrecisionFloats(const HloModule& m) {
  for (HloComputation* c : m.computations()) {
    for (HloInstruction* i : c->instructions()) {
      PrimitiveType t = i->shape().IsArray() ? i->shape().element_type() : PrimitiveType::kF32;
      if (IsFloatingPointType(t) && t != PrimitiveType::kF32 && t != PrimitiveType::kF64) return true;
    }
  }
  return false;
}

// Runs `make_pass()` on each corpus text containing `needle`.
inline CorpusPassStats CheckPassOnCorpus(const std::string& needle,
                                         const std::function<std::unique_ptr<HloPassInterface>()>& make_pass,
                                         int64_t max_elements = 1 << 12) {
  CorpusPassStats stats;
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  for (const auto& [name, text] : CorpusTextsWith(needle)) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    ++stats.candidates;
    // A fused library call rounds once where the unfused ops rounded after
    // each step: low-precision results differ by more than rounding after a
    // cancelling sum, so only f32/f64 modules are compared.
    bool small = SmallModule(**m, max_elements) && !HasLowPrecisionFloats(**m);
    std::vector<Literal> args;
    absl::StatusOr<Literal> before = absl::UnimplementedError("not evaluated");
    if (small) {
      args = MakeRandomArguments(*(*m)->entry_computation(), 99);
      before = HloEvaluator().Evaluate(**m, args);
    }
    HloPassPipeline pipeline("corpus");
    pipeline.AddPass<HloPassFixBase>(make_pass(), 1);
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    EXPECT_TRUE(changed.ok()) << name << ": " << changed.status().message();
    if (!changed.ok() || !*changed) continue;
    ++stats.changed;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    if (!before.ok()) continue;
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    EXPECT_TRUE(after.ok()) << name << ": " << after.status().message();
    if (!after.ok()) continue;
    absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-3, .rel = 1e-3});
    EXPECT_TRUE(same.ok()) << name << ": " << same.message();
    ++stats.evaluated;
  }
  return stats;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_CORPUS_PASS_UTIL_H_
