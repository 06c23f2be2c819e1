// The ablation's correctness column, end to end: for each model at a tiny
// size, the optimized and compiled program (emitted kernels, library calls,
// routines on the CPU backend) computes what the reference evaluator
// computes on the unoptimized module — with the full pipeline, and with each
// registered pass disabled in turn ("optional means optional").
#include <gtest/gtest.h>

#include <set>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/str_util.h"
#include "core/backends/cpu/executable.h"
#include "models/model_registry.h"
#include "passes/pipelines/pipelines.h"
#include "test/e2e/e2e_util.h"
#include "passes/registry.h"

namespace passlab {
namespace {

struct TinyModel {
  const char* name;
  ModelOptions options;
};

// A variant's failure message, or "" when its outputs match the evaluator.
std::string RunVariant(const TinyModel& model, const std::string& pipeline_name, const std::string& disabled,
                       const Literal& expected, const std::vector<Literal>& args) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = BuildModel(model.name, model.options);
  if (!module.ok()) return std::string(module.status().message());
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(pipeline_name, disabled);
  if (!pipeline.ok()) return std::string(pipeline.status().message());
  if (absl::Status s = pipeline->pipeline->Run(**module).status(); !s.ok()) return StrCat("pipeline: ", s.message());
  absl::StatusOr<Literal> actual = RunOnCpu(**module, args);
  if (!actual.ok()) return std::string(actual.status().message());
  absl::Status same = CompareLiterals(expected, *actual, {.abs = 1e-3, .rel = 1e-3});
  return same.ok() ? "" : StrCat("wrong result: ", same.message());
}

void CheckEveryVariant(const TinyModel& model) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = BuildModel(model.name, model.options);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), 11);
  absl::StatusOr<Literal> expected = HloEvaluator().Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  // Today's XLA:GPU and the seed era's: each pass that runs in the
  // pipeline, disabled in turn.
  for (const char* pipeline_name : {"gpu", "gpu-2021"}) {
    EXPECT_EQ(RunVariant(model, pipeline_name, "", *expected, args), "")
        << model.name << " with the full " << pipeline_name << " pipeline";
    absl::StatusOr<std::unique_ptr<HloPassPipeline>> pipeline = BuildNamedPipeline(pipeline_name);
    ASSERT_TRUE(pipeline.ok());
    std::set<std::string> passes;
    for (const PassOccurrence& o : (*pipeline)->Occurrences()) passes.insert(o.pass_name);
    for (const std::string& pass : passes) {
      // A required pass (the registry says why) may stop the pipeline when
      // disabled, never compute a wrong result.
      const PassRegistryEntry* entry = FindRegisteredPass(pass);
      std::string outcome = RunVariant(model, pipeline_name, pass, *expected, args);
      if (entry != nullptr && entry->required && outcome.rfind("pipeline: ", 0) == 0) continue;
      EXPECT_EQ(outcome, "") << model.name << " with " << pass << " disabled in " << pipeline_name;
    }
  }
}

TEST(DisableEachPassTest, Mlp) {
  TinyModel m{"mlp", {}};
  m.options.batch = 4;
  m.options.depth = 2;
  m.options.width = 16;
  CheckEveryVariant(m);
}

TEST(DisableEachPassTest, Embedding) {
  TinyModel m{"embedding", {}};
  m.options.batch = 4;
  m.options.seq_len = 8;
  m.options.vocab = 50;
  m.options.width = 8;
  CheckEveryVariant(m);
}

TEST(DisableEachPassTest, LaplacePinn) {
  TinyModel m{"laplace_pinn", {}};
  m.options.image_size = 6;
  m.options.depth = 2;
  m.options.width = 8;
  CheckEveryVariant(m);
}

TEST(DisableEachPassTest, TransformerBlock) {
  TinyModel m{"transformer_block", {}};
  m.options.batch = 2;
  m.options.seq_len = 4;
  m.options.width = 16;
  m.options.heads = 2;
  CheckEveryVariant(m);
}

TEST(DisableEachPassTest, Gelu) {
  TinyModel m{"gelu", {}};
  m.options.batch = 2;
  m.options.seq_len = 3;
  m.options.width = 40;
  CheckEveryVariant(m);
}

// Convolutions (forward, backward-data, backward-filter), batch norm,
// max pool and its select-and-scatter gradient, SGD with momentum.
TEST(DisableEachPassTest, ResNet18) {
  TinyModel m{"resnet18", {}};
  m.options.batch = 2;
  m.options.image_size = 64;
  m.options.classes = 10;
  m.options.width = 8;
  CheckEveryVariant(m);
}

}  // namespace
}  // namespace passlab
