// The runtime's own convolution (core/runtime/reference_conv.h) against the
// evaluator, the oracle: random dim_labels, layouts, windows (stride,
// padding, lhs/rhs dilation, reversal), feature_group_count and
// batch_group_count. batch_group_count's meaning (output feature o reads
// input batch group o / (O / batch_group_count), a contiguous block of
// batches) is XLA's, xla/hlo/evaluator/hlo_evaluator_typed_visitor.h
// (HandleConvolutionWithLiterals).
#include "core/runtime/reference_conv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"
#include "core/text/hlo_parser.h"
#include "test/instruction_evaluator.h"

namespace passlab {
namespace {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  int64_t Next(int64_t n) {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state_ >> 33) % static_cast<uint64_t>(n));
  }
  double Value() { return static_cast<double>(Next(2001)) / 1000.0 - 1.0; }
  std::vector<double> Values(int64_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = Value();
    return v;
  }
  std::string Shuffled(std::string s) {
    for (int64_t i = static_cast<int64_t>(s.size()) - 1; i > 0; --i) std::swap(s[i], s[Next(i + 1)]);
    return s;
  }
  std::string Layout(int64_t rank) {
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    for (int64_t i = rank - 1; i > 0; --i) std::swap(perm[i], perm[Next(i + 1)]);
    return StrCat("{", Join(perm, ","), "}");
  }

 private:
  uint64_t state_;
};

// A random convolution as HLO text: input, filter and output shapes (with
// random layouts) and the attributes. `backward_form` keeps to what the
// library calls' backward directions take (no lhs dilation, no reversal,
// no batch groups).
struct RandomConv {
  std::string input, filter, output, attrs;
};

RandomConv MakeRandomConv(Random& r, const std::string& type, bool backward_form) {
  int64_t spatial = 1 + r.Next(3);
  int64_t fgc = 1, bgc = 1;
  switch (r.Next(3)) {
    case 1: fgc = 2 + r.Next(2); break;
    case 2:
      if (!backward_form) bgc = 2 + r.Next(2);
      break;
    default: break;
  }
  int64_t batch_out = 1 + r.Next(3), in_group = 1 + r.Next(3);
  int64_t out_features = fgc * bgc * (1 + r.Next(3));
  std::string sp = std::string("012").substr(0, spatial);
  std::string il = r.Shuffled("bf" + sp), kl = r.Shuffled("io" + sp), ol = r.Shuffled("bf" + sp);
  std::vector<int64_t> x(spatial), k(spatial), y(spatial);
  std::vector<std::string> size, stride, pad, lhs, rhs, rev;
  int64_t max_size = spatial == 3 ? 4 : 7;
  for (int64_t s = 0; s < spatial; ++s) {
    k[s] = 1 + r.Next(3);
    int64_t st = 1 + r.Next(3), ld = backward_form ? 1 : 1 + r.Next(3), rd = 1 + r.Next(2);
    int64_t pl = r.Next(4) - 1, ph = r.Next(4) - 1;
    x[s] = 1 + r.Next(max_size);
    int64_t span = (x[s] - 1) * ld + 1 + pl + ph - ((k[s] - 1) * rd + 1);
    if (span < 0) {  // keep the output non-empty: pad up to one window
      ph -= span;
      span = 0;
    }
    y[s] = span / st + 1;
    size.push_back(StrCat(k[s]));
    stride.push_back(StrCat(st));
    pad.push_back(StrCat(pl, "_", ph));
    lhs.push_back(StrCat(ld));
    rhs.push_back(StrCat(rd));
    rev.push_back(backward_form ? "0" : StrCat(r.Next(2)));
  }
  auto shape = [&](const std::string& labels, int64_t b, int64_t f, const std::vector<int64_t>& s) {
    std::vector<int64_t> d;
    for (char c : labels) d.push_back(c == 'b' || c == 'i' ? b : c == 'f' || c == 'o' ? f : s[c - '0']);
    return StrCat(type, "[", Join(d, ","), "]", r.Layout(d.size()));
  };
  RandomConv c;
  c.input = shape(il, batch_out * bgc, in_group * fgc, x);
  c.filter = shape(kl, in_group, out_features, k);
  c.output = shape(ol, batch_out, out_features, y);
  c.attrs = StrCat("window={size=", Join(size, "x"), " stride=", Join(stride, "x"), " pad=", Join(pad, "x"),
                   " lhs_dilate=", Join(lhs, "x"), " rhs_dilate=", Join(rhs, "x"), " rhs_reversal=", Join(rev, "x"),
                   "}, dim_labels=", il, "_", kl, "->", ol);
  if (fgc > 1) StrAppend(&c.attrs, ", feature_group_count=", fgc);
  if (bgc > 1) StrAppend(&c.attrs, ", batch_group_count=", bgc);
  return c;
}

struct Parsed {
  std::unique_ptr<HloModule> module;
  const HloInstruction* root = nullptr;
};

Parsed Parse(const std::string& text) {
  Parsed p;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
  if (!m.ok()) return p;
  p.module = std::move(*m);
  p.root = p.module->entry_computation()->root_instruction();
  return p;
}

ConvGeometry GeometryOf(const HloInstruction& conv) {
  return ConvGeometry{conv.operand(0)->shape(), conv.operand(1)->shape(), conv.shape(), *conv.attrs().conv_dnums,
                      conv.window(), conv.attrs().feature_group_count, conv.attrs().batch_group_count};
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// f64 buffers are the physical-order doubles ReferenceConvolution takes, so
// the evaluator runs on the very same arrays.
TEST(ReferenceConvTest, ForwardMatchesTheEvaluatorOnRandomConvolutions) {
  Random r(2026);
  int grouped = 0, batch_grouped = 0, dilated = 0, reversed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    RandomConv c = MakeRandomConv(r, "f64", /*backward_form=*/false);
    std::string text = StrCat("HloModule m\nENTRY e {\n  x = ", c.input, " parameter(0)\n  w = ", c.filter,
                              " parameter(1)\n  ROOT y = ", c.output, " convolution(x, w), ", c.attrs, "\n}\n");
    SCOPED_TRACE(StrCat("trial ", trial, ":\n", text));
    Parsed p = Parse(text);
    ASSERT_NE(p.root, nullptr);
    ConvGeometry g = GeometryOf(*p.root);
    ASSERT_TRUE(CheckConvGeometry(g).ok()) << CheckConvGeometry(g).message();
    grouped += g.feature_group_count > 1;
    batch_grouped += g.batch_group_count > 1;
    for (const WindowDimension& d : g.window.dimensions) {
      dilated += d.base_dilation > 1 && d.window_dilation > 1;
      reversed += d.window_reversal;
    }
    std::vector<double> x = r.Values(g.input.element_count()), w = r.Values(g.filter.element_count());
    std::vector<double> want(g.output.element_count()), got(want.size(), 7.0);
    absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(*p.root);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    std::vector<void*> buffers = {x.data(), w.data(), want.data()};
    ASSERT_TRUE((*ev)->Run(buffers).ok());
    ASSERT_TRUE(ReferenceConvolution(g, ConvUnknown::kOutput, x, w, absl::MakeSpan(got)).ok());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-9 * (1 + std::abs(want[i]))) << "element " << i;
    }
  }
  // The draw covers every attribute.
  EXPECT_GE(grouped, 50);
  EXPECT_GE(batch_grouped, 50);
  EXPECT_GE(dilated, 30);
  EXPECT_GE(reversed, 100);
}

// The backward directions are the forward's adjoints:
// <y, conv(x, w)> = <x, backward_input(y, w)> = <w, backward_filter(x, y)>
// for random x, w, y; with lhs dilation, reversal and both group counts,
// where the library calls cannot take them.
TEST(ReferenceConvTest, BackwardDirectionsAreTheForwardsAdjoints) {
  Random r(11);
  for (int trial = 0; trial < 200; ++trial) {
    RandomConv c = MakeRandomConv(r, "f64", /*backward_form=*/false);
    std::string text = StrCat("HloModule m\nENTRY e {\n  x = ", c.input, " parameter(0)\n  w = ", c.filter,
                              " parameter(1)\n  ROOT y = ", c.output, " convolution(x, w), ", c.attrs, "\n}\n");
    SCOPED_TRACE(StrCat("trial ", trial, ":\n", text));
    Parsed p = Parse(text);
    ASSERT_NE(p.root, nullptr);
    ConvGeometry g = GeometryOf(*p.root);
    std::vector<double> x = r.Values(g.input.element_count()), w = r.Values(g.filter.element_count()),
                        y = r.Values(g.output.element_count());
    std::vector<double> fwd(y.size()), dx(x.size()), dw(w.size());
    ASSERT_TRUE(ReferenceConvolution(g, ConvUnknown::kOutput, x, w, absl::MakeSpan(fwd)).ok());
    ASSERT_TRUE(ReferenceConvolution(g, ConvUnknown::kInput, y, w, absl::MakeSpan(dx)).ok());
    ASSERT_TRUE(ReferenceConvolution(g, ConvUnknown::kFilter, x, y, absl::MakeSpan(dw)).ok());
    double want = Dot(y, fwd);
    double scale = 1 + static_cast<double>(x.size() + w.size() + y.size());
    EXPECT_NEAR(Dot(x, dx), want, 1e-9 * scale);
    EXPECT_NEAR(Dot(w, dw), want, 1e-9 * scale);
  }
}

TEST(ReferenceConvTest, MismatchedShapesAreErrors) {
  Parsed p = Parse(
      "HloModule m\nENTRY e {\n  x = f32[1,5,5,2] parameter(0)\n  w = f32[3,3,2,4] parameter(1)\n"
      "  ROOT y = f32[1,3,3,4] convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f\n}\n");
  ASSERT_NE(p.root, nullptr);
  ConvGeometry g = GeometryOf(*p.root);
  EXPECT_TRUE(CheckConvGeometry(g).ok());
  g.output = Shape::Array(PrimitiveType::kF32, {1, 4, 3, 4});
  absl::Status s = CheckConvGeometry(g);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output spatial dimension 0 should be 3"), std::string::npos) << s.message();
  g = GeometryOf(*p.root);
  g.feature_group_count = 2;
  EXPECT_FALSE(CheckConvGeometry(g).ok());
  std::vector<double> a(49), b(72), out(36);  // the input has 50 elements
  EXPECT_FALSE(ReferenceConvolution(GeometryOf(*p.root), ConvUnknown::kOutput, a, b, absl::MakeSpan(out)).ok());
}

// The library calls' "reference" algorithm in every direction (fused bias,
// side input and activation included) on f64, f32, bf16 and f16 against the
// evaluator's meaning of the call (core/eval/eval_library_call.cc).
TEST(ReferenceConvTest, LibraryCallsInEveryDirectionMatchTheEvaluator) {
  Random r(99);
  const char* types[] = {"f64", "f32", "bf16", "f16"};
  const char* activations[] = {"kNone", "kRelu", "kRelu6", "kElu", "kTanh", "kSigmoid"};
  for (int trial = 0; trial < 120; ++trial) {
    std::string type = types[trial % 4];
    RandomConv c = MakeRandomConv(r, type, /*backward_form=*/true);
    int kind = r.Next(4);
    std::string text;
    auto module = [&](const std::string& target, const std::string& a, const std::string& b,
                      const std::string& result, const std::string& extra_params, const std::string& extra_ops,
                      const std::string& config) {
      return StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n", extra_params,
                    "  ROOT c = (", result, ", u8[0]) custom-call(a, b", extra_ops, "), ", c.attrs,
                    ", custom_call_target=\"", target, "\", backend_config=", config, "\n}\n");
    };
    std::string scale = StrCat(R"({"cudnn_conv_backend_config":{"conv_result_scale":)", 0.5 + r.Next(3));
    if (kind == 0) text = module("__dnn$convForward", c.input, c.filter, c.output, "", "", scale + "}}");
    if (kind == 1) text = module("__dnn$convBackwardInput", c.output, c.filter, c.input, "", "", scale + "}}");
    if (kind == 2) text = module("__dnn$convBackwardFilter", c.input, c.output, c.filter, "", "", scale + "}}");
    if (kind == 3) {
      Parsed probe = Parse(StrCat("HloModule m\nENTRY e {\n  ROOT o = ", c.output, " parameter(0)\n}\n"));
      ASSERT_NE(probe.root, nullptr);
      const Shape& out = probe.root->shape();
      // The output feature dimension: 'f' in the output labels.
      std::string labels = c.attrs.substr(c.attrs.find("->") + 2);
      labels = labels.substr(0, labels.find(','));
      int64_t features = out.dimensions(labels.find('f'));
      bool side = r.Next(2) == 1;
      std::string params = StrCat("  bias = ", type, "[", features, "] parameter(2)\n");
      if (side) StrAppend(&params, "  side = ", type, "[", Join(out.dimensions(), ","), "]", r.Layout(out.rank()),
                          " parameter(3)\n");
      text = module("__dnn$convBiasActivationForward", c.input, c.filter, c.output, params,
                    side ? ", bias, side" : ", bias",
                    StrCat(scale, R"(,"side_input_scale":)", side ? "0.75" : "0", R"(,"activation_mode":")",
                           activations[r.Next(6)], "\"}}"));
    }
    SCOPED_TRACE(StrCat("trial ", trial, ":\n", text));
    Parsed p = Parse(text);
    ASSERT_NE(p.root, nullptr);
    const HloInstruction& call = *p.root;
    std::vector<std::vector<uint64_t>> storage;
    std::vector<void*> ref_buffers, eval_buffers;
    for (const HloInstruction* op : call.operands()) {
      Literal l(Shape::Array(op->shape().element_type(), op->shape().dimensions()));
      for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, r.Value());
      storage.emplace_back(BufferBytes(op->shape()) / 8 + 1, 0);
      ASSERT_TRUE(CopyLiteralToBuffer(l, op->shape(), storage.back().data()).ok());
      ref_buffers.push_back(storage.back().data());
      eval_buffers.push_back(storage.back().data());
    }
    std::vector<Shape> leaves = LeafShapes(call.shape());
    for (const Shape& s : leaves) {
      storage.emplace_back(BufferBytes(s) / 8 + 1, 0);
      ref_buffers.push_back(storage.back().data());
      storage.emplace_back(BufferBytes(s) / 8 + 1, 0);
      eval_buffers.push_back(storage.back().data());
    }
    absl::StatusOr<std::vector<LibraryAlgorithm>> algorithms = ListAlgorithms(call);
    ASSERT_TRUE(algorithms.ok()) << algorithms.status().message();
    ASSERT_EQ(algorithms->back().name, "reference");
    absl::StatusOr<int64_t> ran = RunLibraryCall(call, algorithms->back().id, ref_buffers);
    ASSERT_TRUE(ran.ok()) << ran.status().message();
    absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(call);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    ASSERT_TRUE((*ev)->Run(eval_buffers).ok());
    size_t result = call.operand_count();
    absl::StatusOr<Literal> got = LiteralFromBuffer(leaves[0], ref_buffers[result]);
    absl::StatusOr<Literal> want = LiteralFromBuffer(leaves[0], eval_buffers[result]);
    ASSERT_TRUE(got.ok() && want.ok());
    // Both round once from f64; half types may still differ by one ulp.
    double tol = type == "bf16" ? 1e-2 : type == "f16" ? 2e-3 : type == "f32" ? 1e-6 : 1e-12;
    for (int64_t i = 0; i < want->element_count(); ++i) {
      ASSERT_NEAR(got->GetDouble(i), want->GetDouble(i), tol * (1 + std::abs(want->GetDouble(i)))) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace passlab
