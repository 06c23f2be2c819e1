#include "models/resnet.h"

#include <gtest/gtest.h>

#include <chrono>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

ResNetConfig Tiny(int depth) {
  ResNetConfig c;
  c.depth = depth;
  c.batch = 2;
  c.image_size = 32;
  c.classes = 4;
  return c;
}

void ExpectVerifiesAndRoundTrips(const HloModule& m) {
  ASSERT_TRUE(VerifyModule(m).ok()) << VerifyModule(m);
  std::string text = PrintModule(m);
  auto parsed = ParseHloModule(text, "resnet");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(PrintModule(**parsed), text);
}

TEST(ResNetTest, ParameterCountsMatchTorchvision) {
  ResNetConfig c;
  c.classes = 1000;
  c.depth = 50;
  EXPECT_EQ(*ResNetParameterCount(c), 25557032);
  c.depth = 18;
  EXPECT_EQ(*ResNetParameterCount(c), 11689512);
  c.depth = 34;
  EXPECT_EQ(*ResNetParameterCount(c), 21797672);
  c.depth = 101;
  EXPECT_EQ(*ResNetParameterCount(c), 44549160);
  c.depth = 152;
  EXPECT_EQ(*ResNetParameterCount(c), 60192808);
}

TEST(ResNetTest, EveryDepthLayoutAndDtypeVerifiesAndRoundTrips) {
  for (int depth : {18, 34, 50, 101, 152}) {
    for (ImageLayout layout : {ImageLayout::kNhwc, ImageLayout::kNchw}) {
      for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16}) {
        for (bool inference : {false, true}) {
          // The deep ones share every layer kind with ResNet-50: one variant each.
          if (depth > 50 && (layout != ImageLayout::kNhwc || t != PrimitiveType::kF32 || inference)) continue;
          ResNetConfig c = Tiny(depth);
          c.layout = layout;
          c.dtype = t;
          c.inference = inference;
          auto m = BuildResNet(c);
          ASSERT_TRUE(m.ok()) << m.status();
          SCOPED_TRACE(testing::Message() << depth << " " << PrimitiveTypeName(t) << " inference=" << inference);
          ExpectVerifiesAndRoundTrips(**m);
        }
      }
    }
  }
}

TEST(ResNetTest, TrainStepSignature) {
  auto m = BuildResNet(Tiny(18));
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  // 20 convolutions (17 + 3 downsample) x 3 + fc weight and bias = 62 params;
  // 62 momentum buffers; 20 x 2 running statistics; images; labels.
  EXPECT_EQ(e->num_parameters(), 62 + 62 + 40 + 2);
  EXPECT_EQ(e->root_instruction()->shape().tuple_shapes_size(), 1 + 62 + 62 + 40);
  EXPECT_EQ(e->parameter_instruction(e->num_parameters() - 2)->name(), "images");
  std::map<std::string, int64_t> counts = CountInstructionsByOpcode(**m);
  EXPECT_EQ(counts["batch-norm-training"], 20);
  EXPECT_EQ(counts["batch-norm-grad"], 20);
  EXPECT_EQ(counts["select-and-scatter"], 1);
  // forward + backward-data (not for the stem's input) + backward-filter.
  EXPECT_EQ(counts["convolution"], 20 * 3 - 1);
  // Every instruction has metadata naming its layer.
  for (const HloComputation* c : (*m)->computations()) {
    for (const HloInstruction* i : c->instructions()) {
      EXPECT_FALSE(i->metadata().op_type.empty()) << i->name();
      EXPECT_FALSE(i->metadata().op_name.empty()) << i->name();
    }
  }
}

// The ablation-size model builds, verifies and prints quickly (timings are
// in bench/model_bench.cc; here only that it works at full size).
TEST(ResNetTest, ResNet50Batch256At224BuildsAndPrints) {
  ResNetConfig c;
  c.depth = 50;
  c.batch = 256;
  c.image_size = 224;
  auto start = std::chrono::steady_clock::now();
  auto m = BuildResNet(c);
  ASSERT_TRUE(m.ok()) << m.status();
  std::string text = PrintModule(**m);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(VerifyModule(**m).ok());
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->shape().tuple_shapes(0), Shape::Scalar(PrimitiveType::kF32));
  const HloInstruction* images = (*m)->entry_computation()->parameter_instruction(
      (*m)->entry_computation()->num_parameters() - 2);
  EXPECT_EQ(images->shape().dimensions(), (std::vector<int64_t>{256, 224, 224, 3}));
  std::map<std::string, int64_t> counts = CountInstructionsByOpcode(**m);
  EXPECT_EQ(counts["batch-norm-training"], 53);
  EXPECT_EQ(counts["convolution"], 53 * 3 - 1);
  RecordProperty("instructions", static_cast<int>((*m)->instruction_count()));
  RecordProperty("build_and_print_ms", static_cast<int>(seconds * 1000));
}

TEST(ResNetTest, UnknownDepthIsAnError) {
  ResNetConfig c = Tiny(19);
  auto m = BuildResNet(c);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("depth must be"), std::string::npos);
}

// One SGD step on the evaluator lowers the loss on a tiny fixed batch
// (ResNet-18, batch 2, 32x32, base width 16 to keep the evaluator fast).
TEST(ResNetTest, OneSgdStepLowersTheLoss) {
  ResNetConfig c = Tiny(18);
  c.image_size = 32;
  c.base_width = 16;
  c.learning_rate = 0.002;
  auto m = BuildResNet(c);
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  // Plain [-1, 1) values (not MakeRandomArguments' training-state shapes),
  // then this test's own init: weights scaled down, momentum and stats zero,
  // unit BN scale.
  std::vector<Literal> args;
  for (int64_t i = 0; i < e->num_parameters(); ++i) {
    args.push_back(MakeRandomLiteral(e->parameter_instruction(i)->shape(), 7 * 1000003 + i));
  }
  int64_t np = 62;
  for (int64_t i = 0; i < e->num_parameters(); ++i) {
    const HloInstruction* p = e->parameter_instruction(i);
    Literal& l = args[i];
    const std::string& n = p->name();
    for (int64_t j = 0; j < l.element_count(); ++j) {
      if (i >= np && i < 2 * np) l.SetDouble(j, 0);                      // momentum
      else if (n.find("running_var") != std::string::npos) l.SetDouble(j, 1);
      else if (n.find("running_mean") != std::string::npos) l.SetDouble(j, 0);
      else if (n.find(".bn.scale") != std::string::npos) l.SetDouble(j, 1);
      else if (n.find(".bn.offset") != std::string::npos) l.SetDouble(j, 0);
      else if (n.find(".weight") != std::string::npos) l.SetDouble(j, l.GetDouble(j) * 0.2);
    }
  }
  // Labels: one-hot of class (b % 4).
  Literal& labels = args.back();
  for (int64_t j = 0; j < labels.element_count(); ++j) labels.SetDouble(j, 0);
  for (int64_t b = 0; b < 2; ++b) labels.SetDouble(b * 4 + b, 1);
  HloEvaluator ev;
  auto out1 = ev.Evaluate(**m, args);
  ASSERT_TRUE(out1.ok()) << out1.status();
  double loss1 = out1->tuple_elements()[0].GetDouble(0);
  for (int64_t i = 0; i < np; ++i) args[i] = std::move(out1->tuple_elements()[1 + i]);
  auto out2 = ev.Evaluate(**m, args);
  ASSERT_TRUE(out2.ok()) << out2.status();
  double loss2 = out2->tuple_elements()[0].GetDouble(0);
  EXPECT_TRUE(std::isfinite(loss1));
  EXPECT_LT(loss2, loss1) << "loss did not go down: " << loss1 << " -> " << loss2;
}

}  // namespace
}  // namespace passlab
