// Every registered model verifies and round-trips; the GELU module equals
// seed 000's; whole-model gradients of the training steps match finite
// differences (f64); optimizer steps lower the loss on the evaluator.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "models/embedding.h"
#include "models/gelu.h"
#include "models/laplace_pinn.h"
#include "models/mlp.h"
#include "models/model_registry.h"
#include "models/resnet.h"
#include "models/transformer.h"

namespace passlab {
namespace {

constexpr PrimitiveType kF64 = PrimitiveType::kF64;

void ExpectVerifiesAndRoundTrips(const HloModule& m) {
  absl::Status v = VerifyModule(m);
  ASSERT_TRUE(v.ok()) << v;
  std::string text = PrintModule(m);
  auto parsed = ParseHloModule(text, m.name());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(PrintModule(**parsed), text);
}

ModelOptions TinyOptions(const ModelInfo& info) {
  ModelOptions o;
  auto takes = [&](const char* n) { return std::find(info.options.begin(), info.options.end(), n) != info.options.end(); };
  if (takes("batch")) o.batch = 2;
  if (takes("image-size")) o.image_size = info.name == "laplace_pinn" ? 5 : 16;
  if (takes("classes")) o.classes = 3;
  if (takes("width")) o.width = info.name.rfind("resnet", 0) == 0 ? 8 : 8;
  if (takes("seq-len")) o.seq_len = 4;
  if (takes("vocab")) o.vocab = 7;
  if (takes("depth")) o.depth = 2;
  return o;
}

TEST(ModelRegistryTest, EveryModelVerifiesAndRoundTripsTinyAndDefault) {
  std::vector<std::string> names;
  for (const ModelInfo& info : ModelRegistry()) {
    names.push_back(info.name);
    SCOPED_TRACE(info.name);
    auto tiny = BuildModel(info.name, TinyOptions(info));
    ASSERT_TRUE(tiny.ok()) << tiny.status();
    ExpectVerifiesAndRoundTrips(**tiny);
    auto full = BuildModel(info.name, {});
    ASSERT_TRUE(full.ok()) << full.status();
    EXPECT_TRUE(VerifyModule(**full).ok());
  }
  for (const char* n : {"embedding", "gelu", "laplace_pinn", "mlp", "resnet101", "resnet152", "resnet18",
                        "resnet34", "resnet50", "resnet50-inference", "transformer_block"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(ModelRegistryTest, UnknownModelAndUnknownOptionAreErrors) {
  auto m = BuildModel("resnet51", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("unknown model 'resnet51'; known models: embedding"), std::string::npos)
      << m.status();
  ModelOptions o;
  o.layout = ImageLayout::kNchw;
  m = BuildModel("gelu", o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("model 'gelu' does not take --layout"), std::string::npos);
  ModelOptions bad;
  bad.dtype = PrimitiveType::kBF16;
  m = BuildModel("laplace_pinn", bad);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("dtype must be f32 or f64"), std::string::npos);
  ModelOptions heads;
  heads.heads = 3;
  heads.width = 8;
  m = BuildModel("transformer_block", heads);
  EXPECT_FALSE(m.ok());
}

TEST(GeluTest, EqualsSeed000Module) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/hlo/gelu.hlo");
  std::stringstream ss;
  ss << in.rdbuf();
  auto seed = ParseHloModule(ss.str(), "gelu.hlo");
  ASSERT_TRUE(seed.ok()) << seed.status();
  auto built = BuildGelu({});
  ASSERT_TRUE(built.ok()) << built.status();
  PrintOptions no_metadata;
  no_metadata.print_metadata = false;
  EXPECT_EQ(PrintModule(**built, no_metadata), PrintModule(**seed, no_metadata));
  EXPECT_TRUE(VerifyModule(**built).ok());
  // And it computes the same values.
  GeluConfig small;
  small.batch = 2;
  small.seq_len = 3;
  small.width = 5;
  auto m = BuildGelu(small);
  ASSERT_TRUE(m.ok());
  Literal x = MakeRandomLiteral(Shape(PrimitiveType::kBF16, {2, 3, 5}), 3);
  auto y = HloEvaluator().Evaluate(**m, {x});
  ASSERT_TRUE(y.ok()) << y.status();
  for (int64_t i = 0; i < 30; ++i) {
    double v = x.GetDouble(i);
    double expect = v * 0.5 * (1 + std::tanh(0.79785 * (v + 0.044708 * v * v * v)));
    EXPECT_NEAR(y->GetDouble(i), expect, 0.02 * std::max(1.0, std::fabs(expect)));
  }
}

// The training step with zero momentum returns p' = p - lr (g + wd p), so
// g = (p - p') / lr - wd p; compare with central differences of the loss.
void CheckTrainStepGradient(const HloModule& m, std::vector<Literal> args, int64_t num_params, double lr,
                            double wd, int64_t samples_per_param = 3, double tolerance = 1e-5) {
  for (int64_t i = num_params; i < 2 * num_params; ++i) {
    for (int64_t j = 0; j < args[i].element_count(); ++j) args[i].SetDouble(j, 0);
  }
  HloEvaluator ev;
  auto base = ev.Evaluate(m, args);
  ASSERT_TRUE(base.ok()) << base.status();
  const double h = 1e-6;
  for (int64_t i = 0; i < num_params; ++i) {
    const Literal& updated = base->tuple_elements()[1 + i];
    int64_t n = args[i].element_count();
    for (int64_t s = 0; s < samples_per_param; ++s) {
      int64_t j = (s * 7919 + i * 31) % n;
      double p = args[i].GetDouble(j);
      double g = (p - updated.GetDouble(j)) / lr - wd * p;
      args[i].SetDouble(j, p + h);
      double up = ev.Evaluate(m, args)->tuple_elements()[0].GetDouble(0);
      args[i].SetDouble(j, p - h);
      double down = ev.Evaluate(m, args)->tuple_elements()[0].GetDouble(0);
      args[i].SetDouble(j, p);
      double fd = (up - down) / (2 * h);
      EXPECT_NEAR(g, fd, tolerance * std::max(1.0, std::fabs(fd)))
          << "parameter " << m.entry_computation()->parameter_instruction(i)->name() << " element " << j;
    }
  }
}

TEST(TrainStepGradientTest, Mlp) {
  MlpConfig c;
  c.batch = 3; c.features = 5; c.depth = 2; c.width = 4; c.classes = 3; c.dtype = kF64;
  auto m = BuildMlp(c);
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 5);
  CheckTrainStepGradient(**m, std::move(args), 6, c.learning_rate, 1e-4);
}

TEST(TrainStepGradientTest, TransformerBlock) {
  TransformerConfig c;
  c.batch = 2; c.seq_len = 3; c.width = 4; c.heads = 2; c.dtype = kF64;
  auto m = BuildTransformerBlock(c);
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 6);
  CheckTrainStepGradient(**m, std::move(args), 16, c.learning_rate, 0);
}

TEST(TrainStepGradientTest, Embedding) {
  EmbeddingConfig c;
  c.batch = 2; c.seq_len = 5; c.vocab = 4; c.width = 3; c.classes = 3; c.dtype = kF64;
  auto m = BuildEmbeddingModel(c);
  ASSERT_TRUE(m.ok()) << m.status();
  std::map<std::string, int64_t> counts = CountInstructionsByOpcode(**m);
  EXPECT_EQ(counts["gather"], 1);
  EXPECT_EQ(counts["scatter"], 1);
  std::vector<Literal> args = MakeRandomArguments(*(*m)->entry_computation(), 7);
  // Ids with repeats; every row of the table appears.
  for (int64_t j = 0; j < 10; ++j) args[6].SetInt(j, j % 4 == 3 ? 1 : j % 4);
  args[6].SetInt(9, 3);
  CheckTrainStepGradient(**m, std::move(args), 3, c.learning_rate, 0, 6);
}

TEST(TrainStepGradientTest, ResNet18TinyF64) {
  ResNetConfig c;
  c.depth = 18; c.batch = 2; c.image_size = 8; c.classes = 3; c.base_width = 2; c.dtype = kF64;
  auto m = BuildResNet(c);
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  std::vector<Literal> args = MakeRandomArguments(*e, 8);
  for (int64_t i = 0; i < e->num_parameters(); ++i) {
    const std::string& n = e->parameter_instruction(i)->name();
    if (n.find("running_var") != std::string::npos || n.find(".bn.scale") != std::string::npos) {
      for (int64_t j = 0; j < args[i].element_count(); ++j) args[i].SetDouble(j, 1 + 0.25 * args[i].GetDouble(j));
    }
  }
  // Check the stem, a middle block, the downsample path and the classifier.
  std::vector<int64_t> checked;
  CheckTrainStepGradient(**m, std::move(args), 62, c.learning_rate, c.weight_decay, 2, 1e-4);
}

TEST(LaplacePinnTest, AdamStepsLowerTheLoss) {
  LaplacePinnConfig c;
  c.grid = 6; c.depth = 2; c.width = 8; c.learning_rate = 0.01;
  auto m = BuildLaplacePinn(c);
  ASSERT_TRUE(m.ok()) << m.status();
  ExpectVerifiesAndRoundTrips(**m);
  const HloComputation* e = (*m)->entry_computation();
  int64_t np = 6;
  ASSERT_EQ(e->num_parameters(), 3 * np + 1);
  std::vector<Literal> args = MakeRandomArguments(*e, 9);
  for (int64_t i = np; i < 3 * np; ++i) {
    for (int64_t j = 0; j < args[i].element_count(); ++j) args[i].SetDouble(j, 0);
  }
  args[3 * np].SetDouble(0, 1);  // step t = 1
  HloEvaluator ev;
  std::vector<double> losses;
  for (int step = 0; step < 4; ++step) {
    auto out = ev.Evaluate(**m, args);
    ASSERT_TRUE(out.ok()) << out.status();
    losses.push_back(out->tuple_elements()[0].GetDouble(0));
    for (int64_t i = 0; i < 3 * np + 1; ++i) args[i] = std::move(out->tuple_elements()[1 + i]);
  }
  EXPECT_FLOAT_EQ(args[3 * np].GetDouble(0), 5);
  for (int s = 1; s < 4; ++s) EXPECT_LT(losses[s], losses[s - 1]) << "step " << s;
}

// The PINN's Laplacian: for u = tanh(x w1 + y w2) w3 + b (one hidden unit),
// check the residual term against the closed form.
TEST(LaplacePinnTest, LaplacianMatchesClosedForm) {
  LaplacePinnConfig c;
  c.grid = 3; c.depth = 1; c.width = 1; c.dtype = kF64;
  auto m = BuildLaplacePinn(c);
  ASSERT_TRUE(m.ok()) << m.status();
  const HloComputation* e = (*m)->entry_computation();
  std::vector<Literal> args = MakeRandomArguments(*e, 2);
  const double w1 = 0.7, w2 = -0.4, b0 = 0.1, w3 = 1.3, b1 = 0.2;
  args[0] = Literal::FromDoubles(Shape(kF64, {2, 1}), {w1, w2});
  args[1] = Literal::FromDoubles(Shape(kF64, {1}), {b0});
  args[2] = Literal::FromDoubles(Shape(kF64, {1, 1}), {w3});
  args[3] = Literal::FromDoubles(Shape(kF64, {1}), {b1});
  args[12].SetDouble(0, 1);
  auto out = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(out.ok()) << out.status();
  double residual = 0, boundary = 0;
  auto u = [&](double x, double y) { return std::tanh(x * w1 + y * w2 + b0) * w3 + b1; };
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double t = std::tanh(i * 0.5 * w1 + j * 0.5 * w2 + b0);
      double lap = -2 * t * (1 - t * t) * w3 * (w1 * w1 + w2 * w2);
      residual += lap * lap / 9;
    }
  }
  for (int k = 0; k < 3; ++k) {
    double s = k * 0.5;
    double pts[4][2] = {{s, 0}, {s, 1}, {0, s}, {1, s}};
    for (auto& p : pts) {
      double d = u(p[0], p[1]) - (p[0] * p[0] - p[1] * p[1]);
      boundary += d * d / 12;
    }
  }
  EXPECT_NEAR(out->tuple_elements()[0].GetDouble(0), residual + boundary, 1e-12);
}

TEST(ModelMetadataTest, EveryInstructionHasOpTypeAndName) {
  for (const char* name : {"laplace_pinn", "transformer_block", "embedding", "mlp"}) {
    auto m = BuildModel(name, TinyOptions(*FindModel(name)));
    ASSERT_TRUE(m.ok()) << m.status();
    for (const HloComputation* c : (*m)->computations()) {
      for (const HloInstruction* i : c->instructions()) {
        EXPECT_FALSE(i->metadata().op_type.empty()) << name << " " << i->name();
        EXPECT_FALSE(i->metadata().op_name.empty()) << name << " " << i->name();
      }
    }
  }
}

}  // namespace
}  // namespace passlab
