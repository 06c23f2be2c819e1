#include "models/mobilenet_v2.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "models/autodiff.h"

namespace passlab {
namespace {

MobileNetV2Config Tiny() {
  MobileNetV2Config c;
  c.batch = 2;
  c.image_size = 32;
  c.classes = 4;
  c.width_multiplier = 0.25;
  return c;
}

TEST(MobileNetV2Test, ParameterCountsMatchTorchvision) {
  // torchvision.models.mobilenet_v2(width_mult=w): sum(p.numel() for p in
  // model.parameters()) = 3,504,872 for w = 1 (its documented "num_params").
  MobileNetV2Config c;
  EXPECT_EQ(MobileNetV2ParameterCount(c), 3504872);
  // And the count agrees with the parameters the builder makes.
  for (double w : {1.0, 0.25, 1.4}) {
    c.width_multiplier = w;
    c.batch = 1;
    c.image_size = 32;
    auto m = BuildMobileNetV2(c);
    ASSERT_TRUE(m.ok()) << m.status();
    const HloComputation* e = (*m)->entry_computation();
    int64_t n = 0;
    // Trainable parameters come first, then as many momentum buffers.
    int64_t trainable = 0;
    for (const HloInstruction* p : e->parameter_instructions()) {
      trainable += p->name().find(".momentum") != std::string::npos;
    }
    for (int64_t i = 0; i < trainable; ++i) n += e->parameter_instruction(i)->shape().element_count();
    EXPECT_EQ(n, MobileNetV2ParameterCount(c)) << "width " << w;
  }
}

TEST(MobileNetV2Test, LayoutsAndDtypesVerifyAndRoundTrip) {
  for (ImageLayout layout : {ImageLayout::kNhwc, ImageLayout::kNchw}) {
    for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16, PrimitiveType::kF64}) {
      MobileNetV2Config c = Tiny();
      c.layout = layout;
      c.dtype = t;
      auto m = BuildMobileNetV2(c);
      ASSERT_TRUE(m.ok()) << m.status();
      SCOPED_TRACE(PrimitiveTypeName(t));
      ASSERT_TRUE(VerifyModule(**m).ok()) << VerifyModule(**m);
      std::string text = PrintModule(**m);
      auto parsed = ParseHloModule(text, "mobilenet_v2");
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(PrintModule(**parsed), text);
    }
  }
}

TEST(MobileNetV2Test, TrainStepSignatureAndOps) {
  auto m = BuildMobileNetV2(Tiny());
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  // 52 convolutions (stem, 16 expansions, 17 depthwise, 17 projections,
  // head) x (weight, bn scale, bn offset) + fc weight and bias = 158
  // parameters; 158 momentum buffers; 52 x 2 running statistics; images;
  // labels.
  EXPECT_EQ(e->num_parameters(), 158 + 158 + 104 + 2);
  EXPECT_EQ(e->root_instruction()->shape().tuple_shapes_size(), 1 + 158 + 158 + 104);
  EXPECT_EQ(e->parameter_instruction(e->num_parameters() - 2)->name(), "images");
  std::map<std::string, int64_t> counts = CountInstructionsByOpcode(**m);
  EXPECT_EQ(counts["batch-norm-training"], 52);
  EXPECT_EQ(counts["batch-norm-grad"], 52);
  // forward + backward-data (not for the stem's input) + backward-filter.
  EXPECT_EQ(counts["convolution"], 52 * 3 - 1);
  int64_t depthwise = 0, batch_grouped = 0;
  for (const HloInstruction* i : e->instructions()) {
    if (i->opcode() != HloOpcode::kConvolution) continue;
    depthwise += i->attrs().feature_group_count > 1;
    batch_grouped += i->attrs().batch_group_count > 1;
    EXPECT_FALSE(i->attrs().feature_group_count > 1 && i->attrs().batch_group_count > 1) << i->name();
  }
  // 17 forward + 17 backward-data depthwise, 17 batch-grouped backward-filter.
  EXPECT_EQ(depthwise, 34);
  EXPECT_EQ(batch_grouped, 17);
  // 11 residual adds at multiplier 0.25: torchvision's 10, plus the first
  // block's, whose 32 -> 16 channels both round to 8.
  int64_t residuals = 0;
  for (const HloInstruction* i : e->instructions()) {
    residuals += i->metadata().op_type == "AddV2";
    EXPECT_FALSE(i->metadata().op_type.empty()) << i->name();
    EXPECT_FALSE(i->metadata().op_name.empty()) << i->name();
  }
  EXPECT_EQ(residuals, 11);
}

TEST(MobileNetV2Test, BadConfigurationsAreErrors) {
  MobileNetV2Config c = Tiny();
  c.width_multiplier = 0;
  auto m = BuildMobileNetV2(c);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("must be positive"), std::string::npos) << m.status();
  c = Tiny();
  c.dtype = PrimitiveType::kS32;
  m = BuildMobileNetV2(c);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("dtype must be f32, bf16 or f64"), std::string::npos);
}

// The whole step's gradient against central differences of the loss, in
// f64 on the evaluator: the step's new momentum (zero old momentum) is
// grad + weight_decay * p, so grad = new_momentum - weight_decay * p. Checks
// a few elements of the stem, of a depthwise kernel, of a projection, of a
// batch-norm scale and of the classifier. Batch norm over 4 samples at the
// 1x1 and 2x2 late stages makes the loss strongly curved (gradients of
// ~100): a step of 1e-5 misses by up to 30%, 1e-7 agrees to 1e-5.
TEST(MobileNetV2Test, StepGradientMatchesFiniteDifferences) {
  MobileNetV2Config c = Tiny();
  c.dtype = PrimitiveType::kF64;
  c.batch = 4;
  c.image_size = 32;
  c.classes = 3;
  auto m = BuildMobileNetV2(c);
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  std::vector<Literal> args = MakeRandomArguments(*e, 5);
  int64_t trainable = 0;
  for (const HloInstruction* p : e->parameter_instructions()) trainable += p->name().find(".momentum") != std::string::npos;
  for (int64_t i = trainable; i < 2 * trainable; ++i) {
    for (int64_t j = 0; j < args[i].element_count(); ++j) args[i].SetDouble(j, 0);
  }
  HloEvaluator ev;
  auto base = ev.Evaluate(**m, args);
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(std::isfinite(base->tuple_elements()[0].GetDouble(0)));
  auto loss_at = [&](std::vector<Literal>& a) { return ev.Evaluate(**m, a)->tuple_elements()[0].GetDouble(0); };
  int checked = 0;
  for (int64_t i = 0; i < trainable; ++i) {
    const std::string& name = e->parameter_instruction(i)->name();
    bool wanted = name == "stem.conv.weight" || name == "block1.depthwise.weight" ||
                  name == "block3.project.weight" || name == "block5.depthwise.bn.scale" || name == "fc.weight";
    if (!wanted) continue;
    SCOPED_TRACE(name);
    const Literal& new_momentum = base->tuple_elements()[1 + trainable + i];
    int64_t n = args[i].element_count();
    for (int64_t j = 0; j < n; j += std::max<int64_t>(1, n / 3)) {
      double x0 = args[i].GetDouble(j);
      double grad = new_momentum.GetDouble(j) - c.weight_decay * x0;
      const double h = 1e-7;
      args[i].SetDouble(j, x0 + h);
      double up = loss_at(args);
      args[i].SetDouble(j, x0 - h);
      double down = loss_at(args);
      args[i].SetDouble(j, x0);
      double fd = (up - down) / (2 * h);
      EXPECT_NEAR(grad, fd, 1e-5 * std::max(1.0, std::fabs(fd))) << "element " << j;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15);
}

}  // namespace
}  // namespace passlab
