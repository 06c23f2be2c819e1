// The fusion passes must never build a fusion the CPU backend cannot
// compile (their legality rules live in passes/fusion/gpu_fusible.h, which
// may not link the code generator): on XLA's test HLO corpus, every fusion
// the fusion and horizontal-fusion sub-pipelines create passes
// CpuKernelCompiler::CheckCompilable, and a sample of them compiles and runs
// on the CPU backend with the evaluator's results.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/backends/cpu/executable.h"
#include "core/text/hlo_parser.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "test/corpus_util.h"
#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

// Fusions in the module that the input did not have (by name).
std::vector<const HloInstruction*> NewFusions(const HloModule& module, const absl::flat_hash_set<std::string>& old) {
  std::vector<const HloInstruction*> out;
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kFusion && !old.contains(i->name())) out.push_back(i);
    }
  }
  return out;
}

int64_t LargestArray(const HloModule& m) {
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

TEST(FusionCompilesTest, EveryFusionTheFusionPipelinesBuildCompiles) {
  std::vector<std::string> texts = ReadCorpusTexts();
  if (texts.empty()) GTEST_SKIP() << "no corpus at ../shared/corpus";
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int modules = 0, fusions = 0, executed = 0;
  constexpr int kMaxExecuted = 25;
  for (const std::string& text : texts) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "corpus.hlo", options);
    if (!m.ok() || (*m)->instruction_count() > 4000 || !VerifyModule(**m).ok()) continue;
    HloModule& module = **m;
    absl::flat_hash_set<std::string> old;
    for (const HloComputation* c : module.computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (i->opcode() == HloOpcode::kFusion) old.insert(i->name());
      }
    }
    std::unique_ptr<HloModule> original = module.Clone();
    std::unique_ptr<HloPassPipeline> fusion = gpu2021::BuildFusionPipeline();
    if (!fusion->Run(module).ok() || !gpu2021::BuildHorizontalFusionPipeline()->Run(module).ok()) {
      ADD_FAILURE() << "the fusion pipelines failed on\n" << text;
      continue;
    }
    ++modules;
    std::vector<const HloInstruction*> created = NewFusions(module, old);
    for (const HloInstruction* f : created) {
      ++fusions;
      absl::Status s = CpuKernelCompiler::CheckCompilable(*f);
      EXPECT_TRUE(s.ok()) << s.message() << "\n" << text;
    }
    // Compile and run a few small modules whole (every kernel, including
    // the new fusions) against the evaluator on the unfused module.
    if (created.empty() || executed >= kMaxExecuted || old.size() > 0 || LargestArray(module) > 4096) continue;
    std::vector<Literal> args = MakeRandomArguments(*original->entry_computation(), 3);
    absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(*original, args);
    if (!expected.ok()) continue;
    CpuCompileOptions copts;
    copts.num_threads = 1;
    CpuKernelCompiler compiler(copts);
    auto exe = Executable::Create(module, [&](const HloInstruction& i) { return compiler.Compile(i); });
    if (!exe.ok()) continue;  // ops the runtime has no path for (collectives, ...)
    absl::StatusOr<Literal> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << text;
    absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-3, .rel = 1e-3});
    EXPECT_TRUE(same.ok()) << same.message() << "\n" << text;
    ++executed;
  }
  std::printf("fusion pipelines on the corpus: %d modules, %d fusions created (all compilable), %d modules run\n",
              modules, fusions, executed);
  EXPECT_GT(fusions, 1000);
  EXPECT_GT(executed, 10);
}

}  // namespace
}  // namespace passlab
