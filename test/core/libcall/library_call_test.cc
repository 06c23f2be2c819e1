// Library-call configs: target classification, backend_config parsing (XLA's
// wrapped and bare forms, proto-JSON strings for integers), ToJson round
// trips, and the shape checks of AnalyzeGemmCall / AnalyzeConvCall.
#include "core/libcall/library_call.h"

#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

// The root of a one-instruction module.
struct Parsed {
  std::unique_ptr<HloModule> module;
  const HloInstruction* root = nullptr;
};

Parsed ParseRoot(const std::string& text) {
  Parsed p;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return p;
  p.module = std::move(*m);
  p.root = p.module->entry_computation()->root_instruction();
  return p;
}

TEST(LibraryCallTargetTest, ClassifiesBothSpellings) {
  EXPECT_EQ(ClassifyLibraryCallTarget("__blas$gemm"), LibraryCallKind::kGemm);
  EXPECT_EQ(ClassifyLibraryCallTarget("__cublas$gemm"), LibraryCallKind::kGemm);
  EXPECT_EQ(ClassifyLibraryCallTarget("__dnn$convBackwardFilter"), LibraryCallKind::kConvBackwardFilter);
  EXPECT_EQ(ClassifyLibraryCallTarget("__cudnn$convBiasActivationForward"),
            LibraryCallKind::kConvBiasActivationForward);
  EXPECT_EQ(ClassifyLibraryCallTarget("__dnn$convSomethingElse"), std::nullopt);
  EXPECT_EQ(ClassifyLibraryCallTarget("Sharding"), std::nullopt);
  EXPECT_FALSE(IsConvolutionKind(LibraryCallKind::kGemm));
  EXPECT_TRUE(IsConvolutionKind(LibraryCallKind::kConvForward));
}

TEST(GemmBackendConfigTest, ParsesXlaWrappedConfig) {
  // As XLA:GPU prints it (int64 fields as strings, extra fields ignored).
  constexpr char kJson[] = R"({"operation_queue_id":"0","wait_on_operation_queues":[],
    "gemm_backend_config":{"alpha_real":2,"alpha_imag":0,"beta":0.5,
      "dot_dimension_numbers":{"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["1"],
        "lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]},
      "precision_config":{"operand_precision":["DEFAULT","HIGHEST"],"algorithm":"ALG_UNSET"},
      "epilogue":"BIAS_RELU","lhs_stride":"12","grad_x":false,"selected_algorithm":"3"},
    "force_earliest_schedule":false})";
  absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(kJson, "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->alpha_real, 2);
  EXPECT_EQ(c->beta, 0.5);
  EXPECT_EQ(c->dot_dimension_numbers.lhs_contracting_dimensions, std::vector<int64_t>{2});
  EXPECT_EQ(c->dot_dimension_numbers.rhs_batch_dimensions, std::vector<int64_t>{0});
  EXPECT_EQ(c->precision_config.operand_precision,
            (std::vector<PrecisionLevel>{PrecisionLevel::kDefault, PrecisionLevel::kHighest}));
  EXPECT_EQ(c->precision_config.algorithm, "");
  EXPECT_EQ(c->epilogue, GemmEpilogue::kBiasRelu);
  EXPECT_EQ(c->selected_algorithm, 3);
}

TEST(GemmBackendConfigTest, ToJsonRoundTrips) {
  GemmBackendConfig c;
  c.alpha_real = -1.5;
  c.beta = 1;
  c.dot_dimension_numbers.lhs_contracting_dimensions = {0};
  c.dot_dimension_numbers.rhs_contracting_dimensions = {1};
  c.precision_config.operand_precision = {PrecisionLevel::kHigh, PrecisionLevel::kDefault};
  c.epilogue = GemmEpilogue::kGelu;
  c.selected_algorithm = 0;
  std::string text = c.ToJson();
  EXPECT_NE(text.find("\"gemm_backend_config\""), std::string::npos);
  absl::StatusOr<GemmBackendConfig> back = ParseGemmBackendConfig(text, "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, c);
  EXPECT_EQ(back->ToJson(), text);
}

TEST(GemmBackendConfigTest, RejectsBadConfigsNamingTheInstruction) {
  Parsed p = ParseRoot(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT my_gemm = f32[2,4] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"epilogue":"SWISH"}}
})");
  ASSERT_NE(p.root, nullptr);
  absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(*p.root);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("my_gemm"), std::string_view::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("SWISH"), std::string_view::npos) << c.status().message();
  EXPECT_FALSE(ParseGemmBackendConfig("{not json", "x").ok());
  EXPECT_FALSE(ParseGemmBackendConfig(R"({"beta":"abc"})", "x").ok());
  EXPECT_FALSE(ParseGemmBackendConfig(R"({"dot_dimension_numbers":{"lhs_batch_dimensions":[true]}})", "x").ok());
}

TEST(GemmCallTest, AnalyzesOperandRolesAndSizes) {
  Parsed p = ParseRoot(R"(HloModule m
ENTRY e {
  a = f32[5,3,2] parameter(0)
  b = f32[5,3,7] parameter(1)
  c = f32[5,2,7] parameter(2)
  bias = f32[7] parameter(3)
  ROOT g = f32[5,2,7] custom-call(a, b, c, bias), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"beta":1,"epilogue":"BIAS","dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"]}}}
})");
  ASSERT_NE(p.root, nullptr);
  absl::StatusOr<GemmCall> call = AnalyzeGemmCall(*p.root);
  ASSERT_TRUE(call.ok()) << call.status().message();
  EXPECT_EQ(call->c_operand, 2);
  EXPECT_EQ(call->bias_operand, 3);
  EXPECT_EQ(call->batch, 5);
  EXPECT_EQ(call->m, 2);
  EXPECT_EQ(call->n, 7);
  EXPECT_EQ(call->k, 3);
}

TEST(GemmCallTest, RejectsMismatchedShapes) {
  // Wrong result dims.
  Parsed p = ParseRoot(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT g = f32[4,2] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  ASSERT_NE(p.root, nullptr);
  EXPECT_FALSE(AnalyzeGemmCall(*p.root).ok());
  // beta != 0 without a C operand.
  Parsed q = ParseRoot(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  ROOT g = f32[2,4] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  ASSERT_NE(q.root, nullptr);
  absl::StatusOr<GemmCall> r = AnalyzeGemmCall(*q.root);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("expected 3 operands"), std::string_view::npos) << r.status().message();
  // Contracting sizes differ.
  Parsed s = ParseRoot(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[4,4] parameter(1)
  ROOT g = f32[2,4] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  ASSERT_NE(s.root, nullptr);
  EXPECT_FALSE(AnalyzeGemmCall(*s.root).ok());
}

TEST(ConvBackendConfigTest, ParsesXlaConfigAndRoundTrips) {
  constexpr char kJson[] = R"({"operation_queue_id":"0","cudnn_conv_backend_config":{
    "activation_mode":"kRelu","conv_result_scale":0.5,"side_input_scale":1,"leakyrelu_alpha":0,
    "algorithm":{"algo_id":"2","math_type":"DEFAULT_MATH","tuning_knobs":{"3":"0","2":"1"},
      "is_cudnn_frontend":true,"workspace_size":"64"}}})";
  absl::StatusOr<ConvBackendConfig> c = ParseConvBackendConfig(kJson, "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->activation_mode, ConvActivation::kRelu);
  EXPECT_EQ(c->conv_result_scale, 0.5);
  EXPECT_EQ(c->side_input_scale, 1);
  EXPECT_EQ(c->algo_id, 2);
  EXPECT_EQ(c->algorithm(), ConvAlgorithm::kWinograd);
  EXPECT_EQ(c->workspace_size, 64);
  EXPECT_EQ(c->tuning_knobs, (std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {3, 0}}));
  absl::StatusOr<ConvBackendConfig> back = ParseConvBackendConfig(c->ToJson(), "test");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, *c);
}

TEST(ConvBackendConfigTest, RejectsUnknownActivationAndAlgorithmName) {
  EXPECT_FALSE(ParseConvBackendConfig(R"({"activation_mode":"kSwish"})", "x").ok());
  EXPECT_FALSE(ParseConvBackendConfig(R"({"algorithm":{"name":"fft"}})", "x").ok());
  EXPECT_FALSE(ParseConvBackendConfig(R"({"algorithm":{"name":"direct","algo_id":"2"}})", "x").ok());
  absl::StatusOr<ConvBackendConfig> named = ParseConvBackendConfig(R"({"algorithm":{"name":"reference"}})", "x");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->algorithm(), ConvAlgorithm::kReference);
  absl::StatusOr<ConvBackendConfig> empty = ParseConvBackendConfig("", "x");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->algorithm(), std::nullopt);
}

TEST(ConvCallTest, AssignsRolesPerKind) {
  Parsed fwd = ParseRoot(R"(HloModule m
ENTRY e {
  x = f32[2,7,7,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = (f32[2,4,4,8], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
})");
  ASSERT_NE(fwd.root, nullptr);
  absl::StatusOr<ConvCall> f = AnalyzeConvCall(*fwd.root);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->input_shape.dimensions(), (std::vector<int64_t>{2, 7, 7, 3}));
  EXPECT_EQ(f->output_shape.dimensions(), (std::vector<int64_t>{2, 4, 4, 8}));
  Parsed bwd = ParseRoot(R"(HloModule m
ENTRY e {
  dy = f32[2,4,4,8] parameter(0)
  x = f32[2,7,7,3] parameter(1)
  ROOT c = (f32[3,3,3,8], u8[16]) custom-call(x, dy), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardFilter"
})");
  ASSERT_NE(bwd.root, nullptr);
  absl::StatusOr<ConvCall> b = AnalyzeConvCall(*bwd.root);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->filter_shape.dimensions(), (std::vector<int64_t>{3, 3, 3, 8}));
  EXPECT_EQ(b->scratch_bytes, 16);
}

TEST(ConvCallTest, RejectsWrongOutputSizeAndArrayResult) {
  Parsed bad = ParseRoot(R"(HloModule m
ENTRY e {
  x = f32[2,7,7,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = (f32[2,5,5,8], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
})");
  ASSERT_NE(bad.root, nullptr);
  absl::StatusOr<ConvCall> r = AnalyzeConvCall(*bad.root);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gives 4"), std::string_view::npos) << r.status().message();
  Parsed array = ParseRoot(R"(HloModule m
ENTRY e {
  x = f32[2,7,7,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = f32[2,4,4,8] custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
})");
  ASSERT_NE(array.root, nullptr);
  EXPECT_FALSE(AnalyzeConvCall(*array.root).ok());
  // Activation on a plain forward call belongs to the fused target.
  Parsed act = ParseRoot(R"(HloModule m
ENTRY e {
  x = f32[2,7,7,3] parameter(0)
  w = f32[3,3,3,8] parameter(1)
  ROOT c = (f32[2,4,4,8], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward", backend_config={"activation_mode":"kRelu"}
})");
  ASSERT_NE(act.root, nullptr);
  EXPECT_FALSE(AnalyzeConvCall(*act.root).ok());
}

}  // namespace
}  // namespace passlab
