// End to end on a real training graph: one SGD step of ResNet-18 (batch 2,
// 32x32; test/eval_fixtures/gen_resnet18.py) verifies, evaluates in seconds
// and lowers the loss. Prints the time (issue 3 asks for it).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

TEST(ResNet18Test, TrainingStepEvaluatesAndLowersTheLoss) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/eval_fixtures/resnet18_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  absl::Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified.ok()) << verified.message();
  std::vector<Literal> args = MakeRandomArguments(*(*module)->entry_computation(), 7);
  // One-hot labels.
  Literal& labels = args[1];
  for (int64_t i = 0; i < labels.element_count(); ++i) labels.SetDouble(i, i % 10 == (i / 10) * 3 ? 1.0 : 0.0);
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> step1 = HloEvaluator().Evaluate(**module, args);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(step1.ok()) << step1.status().message();
  std::printf("ResNet-18 training step (batch 2, 32x32): %.2f s\n", seconds);
  double loss1 = step1->tuple_elements()[0].GetDouble(0);
  EXPECT_TRUE(std::isfinite(loss1));
  // Feed the updated weights back: the loss must go down.
  for (size_t i = 2; i < args.size(); ++i) args[i] = step1->tuple_elements()[i - 1];
  absl::StatusOr<Literal> step2 = HloEvaluator().Evaluate(**module, args);
  ASSERT_TRUE(step2.ok()) << step2.status().message();
  EXPECT_LT(step2->tuple_elements()[0].GetDouble(0), loss1);
}

}  // namespace
}  // namespace passlab
