// Every select-and-scatter in XLA's test HLO corpus compiles to the native
// kernel (no reference routine) and, run whole on the CPU backend, gives the
// evaluator's results: padding-only windows, a scalar one, strided and
// overlapping windows from XLA's own tests.
#include <gtest/gtest.h>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/backends/cpu/executable.h"
#include "core/text/hlo_parser.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "test/corpus_util.h"

namespace passlab {
namespace {

TEST(SelectAndScatterCorpusTest, EveryOneCompilesAndMatchesTheEvaluator) {
  std::vector<std::string> texts = ReadCorpusTexts();
  if (texts.empty()) GTEST_SKIP() << "no corpus at ../shared/corpus";
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int compiled = 0, run = 0;
  for (const std::string& text : texts) {
    if (text.find("select-and-scatter") == std::string::npos) continue;
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "corpus.hlo", options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    CpuCompileOptions copts;
    copts.num_threads = 1;
    CpuKernelCompiler compiler(copts);
    for (const HloComputation* c : (*m)->computations()) {
      for (const HloInstruction* i : c->instructions()) {
        if (i->opcode() != HloOpcode::kSelectAndScatter) continue;
        absl::StatusOr<std::unique_ptr<CompiledKernel>> k = compiler.Compile(*i);
        EXPECT_TRUE(k.ok()) << k.status().message() << "\n" << text;
        if (k.ok()) {
          EXPECT_EQ((*k)->emitter_kind(), EmitterKind::kSelectAndScatter);
        }
        ++compiled;
      }
    }
    std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
    absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(expected.ok()) << expected.status().message() << "\n" << text;
    auto exe = Executable::Create(**m, [&](const HloInstruction& i) { return compiler.Compile(i); });
    ASSERT_TRUE(exe.ok()) << exe.status().message() << "\n" << text;
    absl::StatusOr<Literal> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << actual.status().message() << "\n" << text;
    absl::Status same = CompareLiterals(*expected, *actual, {.abs = 1e-5, .rel = 1e-5});
    EXPECT_TRUE(same.ok()) << same.message() << "\n" << text;
    ++run;
  }
  std::printf("select-and-scatter in the corpus: %d compiled, %d modules run\n", compiled, run);
  EXPECT_GE(compiled, 4);
  EXPECT_GE(run, 4);
}

}  // namespace
}  // namespace passlab
