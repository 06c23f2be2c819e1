// Data-movement fusions read by convolution calls through views
// (core/backends/cpu/fusion_views.h): the view of each fused op chain
// addresses the same elements the evaluator computes, the program elides
// the fusion exactly where it may, and the calls' results equal the
// evaluator's for every convolution algorithm, with reversed spatial
// dimensions under padding lo != hi, strides and dilation.
//
// The shape is the one XLA's SwapConvolutionOperandsIfBeneficial
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc) leaves on
// ResNet-18's layer4: conv(transpose(reverse(w)), dy) with rhs_reversal.
#include "core/backends/cpu/fusion_views.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/backends/cpu/executable.h"
#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/text/hlo_parser.h"
#include "test/instruction_evaluator.h"

namespace passlab {
namespace {

// TEST-ONLY: a "compiled kernel" that evaluates the instruction (the
// fusions that are not elided).
class EvaluatorKernel : public CompiledKernel {
 public:
  EvaluatorKernel(const HloInstruction& inst, std::unique_ptr<InstructionEvaluator> ev)
      : name_(inst.name()), evaluator_(std::move(ev)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    absl::Status s = evaluator_->Run(buffers);
    EXPECT_TRUE(s.ok()) << name_ << ": " << s.message();
  }

 private:
  std::string name_;
  std::unique_ptr<InstructionEvaluator> evaluator_;
};

KernelProvider EvaluatorKernels() {
  return [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    ASSIGN_OR_RETURN(std::unique_ptr<InstructionEvaluator> ev, InstructionEvaluator::Create(inst));
    return std::unique_ptr<CompiledKernel>(new EvaluatorKernel(inst, std::move(ev)));
  };
}

Literal Random(const Shape& shape, uint64_t seed) {
  Literal l(Shape::Array(shape.element_type(), shape.dimensions()));
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    l.SetDouble(i, static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0);
  }
  return l;
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

const HloInstruction* Find(const HloModule& m, const std::string& name) {
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->name() == name) return i;
  }
  return nullptr;
}

// ---------------------------------------------------------------- views

// The fusion `f` of a module whose entry is `p` -> `f`, evaluated on a
// source whose every element holds its own physical offset: the view must
// name, for each result element, the offset it came from.
void ExpectViewAddressesTheElements(const std::string& text) {
  SCOPED_TRACE(text);
  std::unique_ptr<HloModule> m = Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* fusion = m->entry_computation()->root_instruction();
  std::optional<StridedView> view = DataMovementView(*fusion);
  ASSERT_TRUE(view.has_value());
  const Shape& source = fusion->operand(0)->shape();
  std::vector<int64_t> ps = PhysicalStrides(source);
  Literal in(source);  // values are logical; the layout is the parameter's
  std::vector<int64_t> idx(source.rank(), 0);
  for (int64_t i = 0; i < in.element_count(); ++i) {
    int64_t offset = 0;
    for (int64_t k = 0; k < source.rank(); ++k) offset += idx[k] * ps[k];
    in.SetDouble(i, static_cast<double>(offset));
    for (int64_t k = source.rank() - 1; k >= 0; --k) {
      if (++idx[k] < source.dimensions(k)) break;
      idx[k] = 0;
    }
  }
  std::vector<Literal> args;
  args.push_back(std::move(in));
  absl::StatusOr<Literal> out = HloEvaluator().Evaluate(*m, args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Shape& shape = fusion->shape();
  ASSERT_EQ(view->strides.size(), static_cast<size_t>(shape.rank()));
  std::vector<int64_t> at(shape.rank(), 0);
  for (int64_t i = 0; i < out->element_count(); ++i) {
    int64_t offset = view->offset;
    for (int64_t k = 0; k < shape.rank(); ++k) offset += at[k] * view->strides[k];
    ASSERT_EQ(out->GetDouble(i), static_cast<double>(offset)) << "element " << i;
    for (int64_t k = shape.rank() - 1; k >= 0; --k) {
      if (++at[k] < shape.dimensions(k)) break;
      at[k] = 0;
    }
  }
}

std::string Fusion(const std::string& param, const std::string& body, const std::string& result) {
  return StrCat("HloModule m\nf {\n  p = ", param, " parameter(0)\n", body, "}\nENTRY e {\n  x = ", param,
                " parameter(0)\n  ROOT v = ", result, " fusion(x), kind=kLoop, calls=f\n}\n");
}

TEST(DataMovementViewTest, ReverseThenTransposeOfAWeight) {
  // The swapped convolution's input: f32[3,3,I,O] -> f32[O,3,3,I].
  ExpectViewAddressesTheElements(Fusion("f32[3,3,4,5]",
                                        "  r = f32[3,3,4,5] reverse(p), dimensions={0,1}\n"
                                        "  ROOT t = f32[5,3,3,4] transpose(r), dimensions={3,0,1,2}\n",
                                        "f32[5,3,3,4]"));
}

TEST(DataMovementViewTest, ReshapesSplitAndMergeReversedDimensions) {
  ExpectViewAddressesTheElements(Fusion("f32[2,12]",
                                        "  r = f32[2,12] reverse(p), dimensions={1}\n"
                                        "  s = f32[2,3,4] reshape(r)\n"
                                        "  t = f32[3,4,2] transpose(s), dimensions={1,2,0}\n"
                                        "  ROOT m = f32[12,1,2] reshape(t)\n",
                                        "f32[12,1,2]"));
  ExpectViewAddressesTheElements(Fusion("f32[2,3,4,5]",
                                        "  s = f32[6,20] reshape(p)\n"
                                        "  r = f32[6,20] reverse(s), dimensions={0,1}\n"
                                        "  ROOT t = f32[20,6] transpose(r), dimensions={1,0}\n",
                                        "f32[20,6]"));
}

TEST(DataMovementViewTest, BitcastsAndCopiesFollowLayouts) {
  // Source in a column-major layout; the bitcast reads its bytes as a
  // row-major f32[6,4]; the copy changes only the layout.
  ExpectViewAddressesTheElements(Fusion("f32[4,6]{0,1}",
                                        "  b = f32[6,4]{1,0} bitcast(p)\n"
                                        "  c = f32[6,4]{0,1} copy(b)\n"
                                        "  ROOT r = f32[6,4]{0,1} reverse(c), dimensions={0}\n",
                                        "f32[6,4]{0,1}"));
  ExpectViewAddressesTheElements(Fusion("f32[2,3,4]{1,2,0}",
                                        "  ROOT b = f32[2,4,3]{2,1,0} bitcast(p)\n", "f32[2,4,3]{2,1,0}"));
}

TEST(DataMovementViewTest, NoViewForArithmeticOrNonContiguousReshapes) {
  // Merging dimensions a transpose took apart needs a copy.
  std::unique_ptr<HloModule> m = Parse(Fusion("f32[3,4]",
                                               "  t = f32[4,3] transpose(p), dimensions={1,0}\n"
                                               "  ROOT s = f32[12] reshape(t)\n",
                                               "f32[12]"));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(DataMovementView(*m->entry_computation()->root_instruction()).has_value());
  m = Parse(Fusion("f32[3,4]",
                   "  n = f32[3,4] negate(p)\n"
                   "  ROOT t = f32[4,3] transpose(n), dimensions={1,0}\n",
                   "f32[4,3]"));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(DataMovementView(*m->entry_computation()->root_instruction()).has_value());
}

// ---------------------------------------------------------------- programs

struct Ran {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<Executable> executable;
};

// Builds and runs `text`, compares its result leaves with the evaluator's.
Ran RunAndCompare(const std::string& text, double tol = 1e-4) {
  Ran r;
  r.module = Parse(text);
  if (r.module == nullptr) return r;
  std::vector<Literal> args;
  for (const HloInstruction* p : r.module->entry_computation()->parameter_instructions()) {
    args.push_back(Random(p->shape(), p->parameter_number() + 1));
  }
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*r.module, args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(*r.module, EvaluatorKernels());
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!want.ok() || !e.ok()) return r;
  r.executable = std::move(*e);
  absl::StatusOr<Literal> got = r.executable->Run(args);
  EXPECT_TRUE(got.ok()) << got.status().message();
  if (!got.ok()) return r;
  std::vector<const Literal*> g, w;
  FlattenLeaves(*got, g);
  FlattenLeaves(*want, w);
  EXPECT_EQ(g.size(), w.size());
  double worst = 0;
  for (size_t leaf = 0; leaf < g.size() && leaf < w.size(); ++leaf) {
    EXPECT_EQ(g[leaf]->element_count(), w[leaf]->element_count());
    for (int64_t i = 0; i < g[leaf]->element_count() && i < w[leaf]->element_count(); ++i) {
      const double want_i = w[leaf]->GetDouble(i);
      worst = std::max(worst, std::abs(g[leaf]->GetDouble(i) - want_i) / (1 + std::abs(want_i)));
    }
  }
  EXPECT_LE(worst, tol);
  return r;
}

bool HasThunkFor(const Executable& e, const std::string& name) {
  for (const std::unique_ptr<Thunk>& t : e.program().thunks()) {
    if (t->instruction().name() == name) return true;
  }
  return false;
}

std::string Detail(const Executable& e, const std::string& name) {
  for (const std::unique_ptr<Thunk>& t : e.program().thunks()) {
    if (t->instruction().name() == name) return t->detail();
  }
  return "";
}

std::string Config(int64_t algorithm) {
  return StrCat(R"({"cudnn_conv_backend_config":{"activation_mode":"kNone","algorithm":{"algo_id":")", algorithm,
                R"("},"conv_result_scale":1.0,"side_input_scale":0.0}})");
}

// ResNet-18's layer4 swapped backward-input convolution, scaled down:
// w f32[3,3,I=6,O=5], dy f32[2,2,6,4].
std::string SwappedConv(int64_t algorithm) {
  return StrCat(R"(HloModule swapped
f {
  p = f32[3,3,6,5] parameter(0)
  r = f32[3,3,6,5] reverse(p), dimensions={0,1}
  ROOT t = f32[5,3,3,6] transpose(r), dimensions={3,0,1,2}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[2,2,6,4] parameter(1)
  v = f32[5,3,3,6] fusion(w), kind=kInput, calls=f
  c = (f32[5,2,2,4], u8[0]) custom-call(v, dy), window={size=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward", backend_config=)",
                Config(algorithm), R"(
  ROOT y = f32[5,2,2,4] get-tuple-element(c), index=0
})");
}

constexpr ConvAlgorithm kViewAlgorithms[] = {ConvAlgorithm::kAuto, ConvAlgorithm::kDirect,
                                             ConvAlgorithm::kAsBackwardFilter, ConvAlgorithm::kTapGemm,
                                             ConvAlgorithm::kIm2colGemm};

TEST(FusionViewsTest, SwappedConvolutionReadsTheWeightInPlaceOnEveryAlgorithm) {
  for (ConvAlgorithm a : kViewAlgorithms) {
    SCOPED_TRACE(ConvAlgorithmName(a));
    Ran r = RunAndCompare(SwappedConv(static_cast<int64_t>(a)));
    ASSERT_NE(r.executable, nullptr);
    EXPECT_FALSE(HasThunkFor(*r.executable, "v"));  // no kernel, no record
    EXPECT_EQ(Detail(*r.executable, "c"), StrCat("__dnn$convForward/", ConvAlgorithmName(a), ", v as a view of w"));
    std::vector<KernelRecord> records;
    std::vector<Literal> args;
    args.push_back(Random(Shape::Array(PrimitiveType::kF32, {3, 3, 6, 5}), 1));
    args.push_back(Random(Shape::Array(PrimitiveType::kF32, {2, 2, 6, 4}), 2));
    ASSERT_TRUE(r.executable->Execute(args, &records).ok());
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].name, "c");
  }
}

TEST(FusionViewsTest, ReferenceAlgorithmKeepsTheFusion) {
  Ran r = RunAndCompare(SwappedConv(static_cast<int64_t>(ConvAlgorithm::kReference)));
  ASSERT_NE(r.executable, nullptr);
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
  EXPECT_EQ(Detail(*r.executable, "c"), "__dnn$convForward/reference");
}

// An input reversed along a strided, dilated, unevenly padded dimension: the
// runner turns the padding around (pl' = ph - r, ph' = pl + r). `rows` 7
// leaves r = 0 there, 8 leaves r = 1 (and pl' = -1).
std::string StridedReversedInput(int64_t rows, int64_t algorithm) {
  const int64_t out_rows = (rows + 2 - 4 - 1) / 2 + 1;
  return StrCat(R"(HloModule strided
f {
  p = f32[4,)", rows, R"(,6,3] parameter(0)
  t = f32[3,)", rows, R"(,6,4] transpose(p), dimensions={3,1,2,0}
  ROOT r = f32[3,)", rows, R"(,6,4] reverse(t), dimensions={1,2}
}
ENTRY e {
  x = f32[4,)", rows, R"(,6,3] parameter(0)
  k = f32[3,2,4,5] parameter(1)
  v = f32[3,)", rows, R"(,6,4] fusion(x), kind=kLoop, calls=f
  c = (f32[3,)", out_rows, R"(,6,5], u8[0]) custom-call(v, k), window={size=3x2 stride=2x1 pad=2_0x1_0 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward", backend_config=)",
                Config(algorithm), R"(
  ROOT y = f32[3,)", out_rows, R"(,6,5] get-tuple-element(c), index=0
})");
}

TEST(FusionViewsTest, ReversedInputUnderStrideDilationAndUnevenPadding) {
  for (int64_t rows : {7, 8}) {
    for (ConvAlgorithm a : kViewAlgorithms) {
      SCOPED_TRACE(StrCat(rows, " rows, ", ConvAlgorithmName(a)));
      Ran r = RunAndCompare(StridedReversedInput(rows, static_cast<int64_t>(a)));
      ASSERT_NE(r.executable, nullptr);
      // tap-gemm and im2col-gemm read any spatial reversal by offsets;
      // oneDNN's convolutions take the rewritten padding where it is not
      // negative.
      if (a == ConvAlgorithm::kTapGemm || a == ConvAlgorithm::kIm2colGemm ||
          (rows == 7 && a != ConvAlgorithm::kAsBackwardFilter)) {
        EXPECT_FALSE(HasThunkFor(*r.executable, "v"));
      }
    }
  }
}

TEST(FusionViewsTest, ReversedFilterTogglesTheWindowReversal) {
  // The filter (f32[3,3,4,2] 01io) read reversed in one spatial dimension
  // and transposed from an oi01 buffer.
  for (ConvAlgorithm a : kViewAlgorithms) {
    SCOPED_TRACE(ConvAlgorithmName(a));
    Ran r = RunAndCompare(StrCat(R"(HloModule filter
f {
  p = f32[2,4,3,3] parameter(0)
  t = f32[3,3,4,2] transpose(p), dimensions={2,3,1,0}
  ROOT r = f32[3,3,4,2] reverse(t), dimensions={1}
}
ENTRY e {
  x = f32[2,6,5,4] parameter(0)
  w = f32[2,4,3,3] parameter(1)
  v = f32[3,3,4,2] fusion(w), kind=kLoop, calls=f
  c = (f32[2,6,5,2], u8[0]) custom-call(x, v), window={size=3x3 pad=1_1x0_2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward", backend_config=)",
                                 Config(static_cast<int64_t>(a)), R"(
  ROOT y = f32[2,6,5,2] get-tuple-element(c), index=0
})"));
    ASSERT_NE(r.executable, nullptr);
    EXPECT_FALSE(HasThunkFor(*r.executable, "v"));
  }
}

// ResNet's strided layers' swapped backward-input convolutions, scaled
// down (fusion.80 -> custom-call.73 of the ResNet-18 step, fusion.211 ->
// custom-call.188 of ResNet-50's): the weight zero-padded in its spatial
// dimensions (1_2: the stride's remainder) and transposed into the input,
// read through a padded view as more window padding. `pad` on a feature
// dimension instead is not window padding: the fusion runs. tap-gemm reads
// the padded view too, skipping the (position, tap) pairs in the padding.
std::string PaddedTransposedInput(const std::string& padding, const std::string& padded, int64_t algorithm,
                                  const std::string& target = "__dnn$convForward") {
  const bool fused = target == "__dnn$convBiasActivationForward";
  return StrCat(R"(HloModule padded
f {
  p = f32[3,3,6,5] parameter(0)
  z = f32[] constant(0)
  q = )", padded, R"( pad(p, z), padding=)", padding, R"(
  ROOT t = f32[6,6,6,5] transpose(q), dimensions={2,0,1,3}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[3,3,5,4] parameter(1)
  b = f32[4] parameter(2)
  side = f32[6,4,4,4] parameter(3)
  v = f32[6,6,6,5] fusion(w), kind=kLoop, calls=f
  c = (f32[6,4,4,4], u8[0]) custom-call(v, dy)", fused ? ", b, side" : "",
                R"(), window={size=3x3 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, custom_call_target=")", target,
                R"(", backend_config=)",
                fused ? StrCat(R"({"cudnn_conv_backend_config":{"activation_mode":"kRelu","algorithm":{"algo_id":")",
                               algorithm, R"("},"conv_result_scale":1.0,"side_input_scale":0.5}})")
                      : Config(algorithm),
                R"(
  ROOT y = f32[6,4,4,4] get-tuple-element(c), index=0
})");
}

TEST(FusionViewsTest, ZeroPaddedTransposedInputIsMoreWindowPadding) {
  for (const std::string target : {"__dnn$convForward", "__dnn$convBiasActivationForward"}) {
    for (ConvAlgorithm a : kViewAlgorithms) {
      SCOPED_TRACE(StrCat(target, " ", ConvAlgorithmName(a)));
      Ran r = RunAndCompare(
          PaddedTransposedInput("1_2x1_2x0_0x0_0", "f32[6,6,6,5]", static_cast<int64_t>(a), target));
      ASSERT_NE(r.executable, nullptr);
      EXPECT_FALSE(HasThunkFor(*r.executable, "v"));
      EXPECT_EQ(Detail(*r.executable, "c"), StrCat(target, "/", ConvAlgorithmName(a), ", v as a view of w"));
    }
  }
}

// ResNet-18's custom-call.73 whole, scaled down: the input a padded view of
// the weight (fusion.80), the filter the output gradient with the stride's
// holes as interior padding, transposed (fusion.306: not a view, it runs),
// fused with bias, side input and relu. tap-gemm skips the holes (read
// from the filter fusion's root) and the view's padding; every algorithm
// matches the evaluator.
TEST(FusionViewsTest, TapGemmOnThePaddedViewAndTheStrideHolesOfTheFilter) {
  for (ConvAlgorithm a : kViewAlgorithms) {
    SCOPED_TRACE(ConvAlgorithmName(a));
    Ran r = RunAndCompare(StrCat(R"(HloModule holes
f {
  p = f32[3,3,6,5] parameter(0)
  z = f32[] constant(0)
  q = f32[6,6,6,5] pad(p, z), padding=1_2x1_2x0_0x0_0
  ROOT t = f32[6,6,6,5] transpose(q), dimensions={2,0,1,3}
}
g {
  p = f32[4,2,2,5] parameter(0)
  n = f32[4,2,2,5] negate(p)
  z = f32[] constant(0)
  q = f32[4,3,3,5] pad(n, z), padding=0_0x0_0_1x0_0_1x0_0
  ROOT t = f32[3,3,5,4] transpose(q), dimensions={1,2,3,0}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[4,2,2,5] parameter(1)
  b = f32[4] parameter(2)
  side = f32[6,4,4,4] parameter(3)
  v = f32[6,6,6,5] fusion(w), kind=kLoop, calls=f
  k = f32[3,3,5,4] fusion(dy), kind=kLoop, calls=g
  c = (f32[6,4,4,4], u8[0]) custom-call(v, k, b, side), window={size=3x3 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","algorithm":{"algo_id":")",
                                 static_cast<int64_t>(a), R"("},"conv_result_scale":1.0,"side_input_scale":0.5}}
  ROOT y = f32[6,4,4,4] get-tuple-element(c), index=0
})"));
    ASSERT_NE(r.executable, nullptr);
    EXPECT_FALSE(HasThunkFor(*r.executable, "v"));
    EXPECT_TRUE(HasThunkFor(*r.executable, "k"));
    EXPECT_EQ(Detail(*r.executable, "c"),
              StrCat("__dnn$convBiasActivationForward/", ConvAlgorithmName(a), ", v as a view of w"));
  }
}

TEST(FusionViewsTest, ASideInputFusionRunsAndTheInputIsStillAView) {
  // The side input is a transpose too, but no runner reads a side input
  // through a view: it is materialized, and the input stays a view.
  for (ConvAlgorithm a : {ConvAlgorithm::kDirect, ConvAlgorithm::kAsBackwardFilter}) {
    SCOPED_TRACE(ConvAlgorithmName(a));
    Ran r = RunAndCompare(StrCat(R"(HloModule side
f {
  p = f32[3,3,6,5] parameter(0)
  z = f32[] constant(0)
  q = f32[6,6,6,5] pad(p, z), padding=1_2x1_2x0_0x0_0
  ROOT t = f32[6,6,6,5] transpose(q), dimensions={2,0,1,3}
}
g {
  p = f32[4,4,4,6] parameter(0)
  ROOT t = f32[6,4,4,4] transpose(p), dimensions={3,1,2,0}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[3,3,5,4] parameter(1)
  b = f32[4] parameter(2)
  s = f32[4,4,4,6] parameter(3)
  v = f32[6,6,6,5] fusion(w), kind=kLoop, calls=f
  side = f32[6,4,4,4] fusion(s), kind=kLoop, calls=g
  c = (f32[6,4,4,4], u8[0]) custom-call(v, dy, b, side), window={size=3x3 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"activation_mode":"kNone","algorithm":{"algo_id":")",
                                 static_cast<int64_t>(a), R"("},"conv_result_scale":1.0,"side_input_scale":1.0}}
  ROOT y = f32[6,4,4,4] get-tuple-element(c), index=0
})"));
    ASSERT_NE(r.executable, nullptr);
    EXPECT_FALSE(HasThunkFor(*r.executable, "v"));
    EXPECT_TRUE(HasThunkFor(*r.executable, "side"));
  }
}

TEST(FusionViewsTest, KeepsTheFusionOfPaddingThatIsNotWindowPadding) {
  // Padding of the transposed input's batch dimension (the weight's
  // input features), and interior padding: no view takes them.
  Ran r = RunAndCompare(R"(HloModule batch_padded
f {
  p = f32[6,6,3,5] parameter(0)
  z = f32[] constant(0)
  q = f32[6,6,6,5] pad(p, z), padding=0_0x0_0x1_2x0_0
  ROOT t = f32[6,6,6,5] transpose(q), dimensions={2,0,1,3}
}
ENTRY e {
  w = f32[6,6,3,5] parameter(0)
  dy = f32[3,3,5,4] parameter(1)
  v = f32[6,6,6,5] fusion(w), kind=kLoop, calls=f
  c = (f32[6,4,4,4], u8[0]) custom-call(v, dy), window={size=3x3}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT y = f32[6,4,4,4] get-tuple-element(c), index=0
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
  r = RunAndCompare(R"(HloModule interior
f {
  p = f32[3,3,6,5] parameter(0)
  z = f32[] constant(0)
  q = f32[5,6,6,5] pad(p, z), padding=0_0_1x1_2x0_0x0_0
  ROOT t = f32[6,5,6,5] transpose(q), dimensions={2,0,1,3}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[3,3,5,4] parameter(1)
  v = f32[6,5,6,5] fusion(w), kind=kLoop, calls=f
  c = (f32[6,3,4,4], u8[0]) custom-call(v, dy), window={size=3x3}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT y = f32[6,3,4,4] get-tuple-element(c), index=0
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
}

TEST(FusionViewsTest, KeepsFusionsWithOtherUsersOrReversedFeatures) {
  // A user that is not a convolution call: the fusion runs.
  Ran r = RunAndCompare(R"(HloModule other
f {
  p = f32[3,3,6,5] parameter(0)
  ROOT t = f32[5,3,3,6] transpose(p), dimensions={3,0,1,2}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[2,2,6,4] parameter(1)
  v = f32[5,3,3,6] fusion(w), kind=kInput, calls=f
  c = (f32[5,2,2,4], u8[0]) custom-call(v, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  y = f32[5,2,2,4] get-tuple-element(c), index=0
  n = f32[5,3,3,6] negate(v)
  ROOT out = (f32[5,2,2,4], f32[5,3,3,6]) tuple(y, n)
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
  // A reversed feature dimension: no algorithm reads it, the fusion runs.
  r = RunAndCompare(R"(HloModule feature
f {
  p = f32[3,3,6,5] parameter(0)
  r = f32[3,3,6,5] reverse(p), dimensions={2}
  ROOT t = f32[5,3,3,6] transpose(r), dimensions={3,0,1,2}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[2,2,6,4] parameter(1)
  v = f32[5,3,3,6] fusion(w), kind=kInput, calls=f
  c = (f32[5,2,2,4], u8[0]) custom-call(v, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  ROOT y = f32[5,2,2,4] get-tuple-element(c), index=0
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
}

TEST(FusionViewsTest, KeepsTheFusionWhenItsSourceIsOverwrittenBeforeTheLastRead) {
  // a's buffer is updated in place by the dynamic-update-slice, scheduled
  // between the fusion and the second convolution (its update needs the
  // first): reading a through a view there would see the new values.
  Ran r = RunAndCompare(R"(HloModule hazard
f {
  p = f32[3,3,6,5] parameter(0)
  ROOT t = f32[5,3,3,6] transpose(p), dimensions={3,0,1,2}
}
ENTRY e {
  w = f32[3,3,6,5] parameter(0)
  dy = f32[2,2,6,4] parameter(1)
  one = f32[] constant(1)
  a = f32[3,3,6,5] add(w, f32[3,3,6,5] broadcast(one), dimensions={})
  v = f32[5,3,3,6] fusion(a), kind=kInput, calls=f
  c1 = (f32[5,2,2,4], u8[0]) custom-call(v, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  y1 = f32[5,2,2,4] get-tuple-element(c1), index=0
  s = f32[1,1,1,4] slice(y1), slice={[0:1], [0:1], [0:1], [0:4]}
  u = f32[1,1,1,5] pad(s, one), padding=0_0x0_0x0_0x0_1
  zero = s32[] constant(0)
  d = f32[3,3,6,5] dynamic-update-slice(a, u, zero, zero, zero, zero)
  c2 = (f32[5,2,2,4], u8[0]) custom-call(v, dy), window={size=2x2}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  y2 = f32[5,2,2,4] get-tuple-element(c2), index=0
  ROOT out = (f32[3,3,6,5], f32[5,2,2,4], f32[5,2,2,4]) tuple(d, y2, y1)
})");
  ASSERT_NE(r.executable, nullptr);
  const BufferAssignment& a = r.executable->buffer_assignment();
  ASSERT_TRUE(a.IsInPlace(Find(*r.module, "d")));
  const std::vector<const HloInstruction*>& order = a.schedule();
  auto step = [&](const std::string& name) {
    return std::find(order.begin(), order.end(), Find(*r.module, name)) - order.begin();
  };
  ASSERT_LT(step("v"), step("d"));
  ASSERT_LT(step("d"), step("c2"));
  EXPECT_TRUE(HasThunkFor(*r.executable, "v"));
}

}  // namespace
}  // namespace passlab
