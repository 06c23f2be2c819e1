// Library calls on OpenBLAS / oneDNN against the evaluator: every algorithm
// ListAlgorithms offers runs and matches the oracle, on odd shapes, unusual
// dim_labels and layouts, bf16/f64, epilogues and fused activations.
#include "core/runtime/library_call_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

Literal Random(const Shape& shape, uint64_t seed) {
  Literal l(Shape::Array(shape.element_type(), shape.dimensions()));
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    l.SetDouble(i, static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0);
  }
  return l;
}

// Buffers for one instruction: operands (filled from literals) then result
// leaves (zeroed).
struct Buffers {
  std::vector<std::vector<double>> storage;
  std::vector<void*> ptrs;
  void* Add(const Shape& s) {
    storage.emplace_back((s.byte_size() + 7) / 8 + 1, 0.0);
    ptrs.push_back(storage.back().data());
    return ptrs.back();
  }
};

struct Case {
  std::unique_ptr<HloModule> module;
  const HloInstruction* call = nullptr;
  std::vector<Literal> args;
  Literal expected;  // the evaluator's result leaf 0
};

Case Prepare(const std::string& text) {
  Case c;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return c;
  c.module = std::move(*m);
  c.call = c.module->entry_computation()->root_instruction();
  for (int64_t i = 0; i < c.call->operand_count(); ++i) c.args.push_back(Random(c.call->operand(i)->shape(), i + 1));
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*c.module, c.args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (want.ok()) c.expected = want->shape().IsTuple() ? want->tuple_elements()[0] : std::move(*want);
  return c;
}

// Runs `c` with `algorithm` and returns result leaf 0.
absl::StatusOr<Literal> RunWith(const Case& c, int64_t algorithm) {
  Buffers b;
  for (int64_t i = 0; i < c.call->operand_count(); ++i) {
    void* p = b.Add(c.call->operand(i)->shape());
    if (absl::Status s = CopyLiteralToBuffer(c.args[i], c.call->operand(i)->shape(), p); !s.ok()) return s;
  }
  std::vector<Shape> leaves = LeafShapes(c.call->shape());
  for (const Shape& s : leaves) b.Add(s);
  absl::StatusOr<int64_t> ns = RunLibraryCall(*c.call, algorithm, b.ptrs);
  if (!ns.ok()) return ns.status();
  EXPECT_GE(*ns, 0);
  return LiteralFromBuffer(leaves[0], b.ptrs[c.call->operand_count()]);
}

void ExpectClose(const Literal& got, const Literal& want, double tol, const std::string& what) {
  ASSERT_EQ(got.element_count(), want.element_count()) << what;
  double worst = 0;
  int64_t worst_i = 0;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    double err = std::abs(got.GetDouble(i) - want.GetDouble(i)) / (1 + std::abs(want.GetDouble(i)));
    if (!(err <= worst)) {
      worst = err;
      worst_i = i;
    }
  }
  EXPECT_LE(worst, tol) << what << ": element " << worst_i << " is " << got.GetDouble(worst_i) << ", expected "
                        << want.GetDouble(worst_i);
}

// Every listed algorithm matches the evaluator; returns the names listed.
std::vector<std::string> CheckAllAlgorithms(const std::string& text, double tol) {
  Case c = Prepare(text);
  std::vector<std::string> names;
  if (c.call == nullptr) return names;
  absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*c.call);
  EXPECT_TRUE(algos.ok()) << algos.status().message();
  if (!algos.ok()) return names;
  for (const LibraryAlgorithm& a : *algos) {
    names.push_back(a.name);
    absl::StatusOr<Literal> got = RunWith(c, a.id);
    EXPECT_TRUE(got.ok()) << a.name << ": " << got.status().message();
    if (got.ok()) ExpectClose(*got, c.expected, tol, a.name);
  }
  return names;
}

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string Gemm(const std::string& params, const std::string& operands, const std::string& result,
                 const std::string& config) {
  return StrCat("HloModule m\nENTRY e {\n", params, "\n  ROOT g = ", result, " custom-call(", operands,
                "), custom_call_target=\"__blas$gemm\", backend_config={\"gemm_backend_config\":", config, "}\n}\n");
}

constexpr char kMatmul[] =
    R"("dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]})";

// ---------------------------------------------------------------- gemm

TEST(GemmRunnerTest, OddSizesOnBlasAndReference) {
  std::vector<std::string> names =
      CheckAllAlgorithms(Gemm("  a = f32[37,29] parameter(0)\n  b = f32[29,41] parameter(1)", "a, b", "f32[37,41]",
                              StrCat("{", kMatmul, "}")),
                         1e-5);
  EXPECT_TRUE(Has(names, "blas"));
  EXPECT_TRUE(Has(names, "onednn"));
  EXPECT_TRUE(Has(names, "reference"));
}

TEST(GemmRunnerTest, BetaAccumulatesInPlaceWhenCIsTheResultBuffer) {
  // The beta*C fold lets the result share C's buffer: nothing is copied
  // and the gemm accumulates there; with separate buffers C is copied
  // first (row-major, and element by element into a column-major result).
  for (const std::string& result_layout : {std::string("{1,0}"), std::string("{0,1}")}) {
    Case c = Prepare(Gemm("  a = f32[33,17] parameter(0)\n  b = f32[17,45] parameter(1)\n  c = f32[33,45] parameter(2)",
                          "a, b, c", "f32[33,45]" + result_layout,
                          StrCat(R"({"alpha_real":0.5,"beta":1,)", kMatmul, "}")));
    ASSERT_NE(c.call, nullptr);
    absl::StatusOr<std::vector<LibraryAlgorithm>> algorithms = ListAlgorithms(*c.call);
    ASSERT_TRUE(algorithms.ok()) << algorithms.status().message();
    for (const LibraryAlgorithm& a : *algorithms) {
      // Separate buffers.
      absl::StatusOr<Literal> got = RunWith(c, a.id);
      ASSERT_TRUE(got.ok()) << a.name << ": " << got.status().message();
      ExpectClose(*got, c.expected, 1e-5, a.name + " " + result_layout);
      if (result_layout != "{1,0}") continue;
      // The result in C's buffer.
      Buffers b;
      for (int64_t i = 0; i < 3; ++i) {
        void* p = b.Add(c.call->operand(i)->shape());
        ASSERT_TRUE(CopyLiteralToBuffer(c.args[i], c.call->operand(i)->shape(), p).ok());
      }
      b.ptrs.push_back(b.ptrs[2]);
      ASSERT_TRUE(RunLibraryCall(*c.call, a.id, b.ptrs).ok()) << a.name;
      absl::StatusOr<Literal> in_place = LiteralFromBuffer(c.call->shape(), b.ptrs[2]);
      ASSERT_TRUE(in_place.ok());
      ExpectClose(*in_place, c.expected, 1e-5, a.name + " in place");
    }
  }
}

TEST(GemmRunnerTest, TransposedOperandsAndColumnMajorResult) {
  // lhs contracts its dim 0 (a transposed view), rhs is column-major, the
  // result column-major: all handed to BLAS without packing.
  CheckAllAlgorithms(
      Gemm("  a = f32[13,7] parameter(0)\n  b = f32[13,9]{0,1} parameter(1)", "a, b", "f32[7,9]{0,1}",
           R"({"dot_dimension_numbers":{"lhs_contracting_dimensions":["0"],"rhs_contracting_dimensions":["0"]}})"),
      1e-5);
}

TEST(GemmRunnerTest, BatchedWithScrambledLayoutsIsPacked) {
  CheckAllAlgorithms(Gemm("  a = f32[3,5,4]{0,2,1} parameter(0)\n  b = f32[6,3,5]{1,0,2} parameter(1)", "a, b",
                          "f32[3,4,6]{1,2,0}",
                          R"({"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["1"],
                              "lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["2"]}})"),
                     1e-5);
}

TEST(GemmRunnerTest, AlphaBetaBiasRelu) {
  CheckAllAlgorithms(Gemm("  a = f32[8,16] parameter(0)\n  b = f32[16,12] parameter(1)\n  c = f32[8,12]{0,1} "
                          "parameter(2)\n  bias = f32[12] parameter(3)",
                          "a, b, c, bias", "f32[8,12]",
                          StrCat("{", kMatmul, R"(,"alpha_real":0.75,"beta":-1.25,"epilogue":"BIAS_RELU"})")),
                     1e-5);
}

TEST(GemmRunnerTest, ColumnMajorResultWithBetaAndBiasGelu) {
  // C^T = B^T A^T path with C read through its own layout.
  CheckAllAlgorithms(Gemm("  a = f32[5,7] parameter(0)\n  b = f32[7,6] parameter(1)\n  c = f32[5,6] "
                          "parameter(2)\n  bias = f32[6] parameter(3)",
                          "a, b, c, bias", "f32[5,6]{0,1}",
                          StrCat("{", kMatmul, R"(,"alpha_real":2,"beta":0.5,"epilogue":"BIAS_GELU"})")),
                     1e-5);
  // f16 everywhere (through f32).
  CheckAllAlgorithms(Gemm("  a = f16[4,9] parameter(0)\n  b = f16[9,3] parameter(1)", "a, b", "f16[4,3]",
                          StrCat("{", kMatmul, "}")),
                     2e-3);
}

TEST(GemmRunnerTest, GeluEpilogueAndBf16Inputs) {
  CheckAllAlgorithms(Gemm("  a = bf16[9,10] parameter(0)\n  b = bf16[10,11] parameter(1)", "a, b", "f32[9,11]",
                          StrCat("{", kMatmul, R"(,"epilogue":"GELU"})")),
                     1e-5);
  // A bf16 result is rounded once, like the evaluator's.
  CheckAllAlgorithms(Gemm("  a = bf16[9,10] parameter(0)\n  b = bf16[10,11] parameter(1)", "a, b", "bf16[9,11]",
                          StrCat("{", kMatmul, "}")),
                     1e-2);
}

TEST(GemmRunnerTest, F64AndTupleResultWithWorkspace) {
  std::vector<std::string> names =
      CheckAllAlgorithms(Gemm("  a = f64[6,5] parameter(0)\n  b = f64[5,4] parameter(1)", "a, b",
                              "(f64[6,4], s8[64])", StrCat("{", kMatmul, "}")),
                         1e-12);
  EXPECT_TRUE(Has(names, "blas"));
  EXPECT_FALSE(Has(names, "onednn"));  // oneDNN's sgemm computes in f32 only
}

TEST(GemmRunnerTest, DegenerateDims) {
  CheckAllAlgorithms(Gemm("  a = f32[1,7] parameter(0)\n  b = f32[7,1] parameter(1)", "a, b", "f32[1,1]",
                          StrCat("{", kMatmul, "}")),
                     1e-5);
  CheckAllAlgorithms(Gemm("  a = f32[4,0] parameter(0)\n  b = f32[0,3] parameter(1)", "a, b", "f32[4,3]",
                          StrCat("{", kMatmul, "}")),
                     0);
}

// Random dimension numbers, sizes (1 to 5, so degenerate dims appear) and
// layouts for lhs, rhs, C and the result: every plan (direct, transposed,
// packed, column-major result) against the evaluator.
TEST(GemmRunnerTest, RandomDimensionNumbersAndLayouts) {
  uint64_t state = 12345;
  auto next = [&](int64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  auto layout = [&](int64_t rank) {
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    for (int64_t i = rank - 1; i > 0; --i) std::swap(perm[i], perm[next(i + 1)]);
    return StrCat("{", Join(perm, ","), "}");
  };
  for (int trial = 0; trial < 150; ++trial) {
    int64_t nb = next(3), nk = 1 + next(2), nm = next(3), nn = next(3);
    std::vector<int64_t> b(nb), k(nk), m(nm), n(nn);
    for (int64_t& x : b) x = 1 + next(4);
    for (int64_t& x : k) x = 1 + next(5);
    for (int64_t& x : m) x = 1 + next(5);
    for (int64_t& x : n) x = 1 + next(5);
    // lhs/rhs dims in a random order of their groups.
    auto shuffle_dims = [&](const std::vector<std::pair<char, int64_t>>& parts) {
      std::vector<std::pair<char, int64_t>> order = parts;
      for (int64_t i = static_cast<int64_t>(order.size()) - 1; i > 0; --i) std::swap(order[i], order[next(i + 1)]);
      return order;
    };
    std::vector<std::pair<char, int64_t>> lparts, rparts;
    for (int64_t i = 0; i < nb; ++i) lparts.push_back({'b', i}), rparts.push_back({'b', i});
    for (int64_t i = 0; i < nk; ++i) lparts.push_back({'k', i}), rparts.push_back({'k', i});
    for (int64_t i = 0; i < nm; ++i) lparts.push_back({'m', i});
    for (int64_t i = 0; i < nn; ++i) rparts.push_back({'n', i});
    std::vector<std::pair<char, int64_t>> lo = shuffle_dims(lparts), ro = shuffle_dims(rparts);
    auto size_of = [&](std::pair<char, int64_t> p) {
      return p.first == 'b' ? b[p.second] : p.first == 'k' ? k[p.second] : p.first == 'm' ? m[p.second] : n[p.second];
    };
    std::vector<int64_t> ldims, rdims, lb(nb), rb(nb), lk(nk), rk(nk), lm, rn;
    for (size_t i = 0; i < lo.size(); ++i) {
      ldims.push_back(size_of(lo[i]));
      if (lo[i].first == 'b') lb[lo[i].second] = i;
      if (lo[i].first == 'k') lk[lo[i].second] = i;
    }
    for (size_t i = 0; i < ro.size(); ++i) {
      rdims.push_back(size_of(ro[i]));
      if (ro[i].first == 'b') rb[ro[i].second] = i;
      if (ro[i].first == 'k') rk[ro[i].second] = i;
    }
    // Result: batch, lhs free dims in lhs order, rhs free dims in rhs order.
    std::vector<int64_t> out = b;
    for (const auto& p : lo) if (p.first == 'm') out.push_back(size_of(p));
    for (const auto& p : ro) if (p.first == 'n') out.push_back(size_of(p));
    auto ints = [](const std::vector<int64_t>& v) {
      std::vector<std::string> q;
      for (int64_t x : v) q.push_back(StrCat("\"", x, "\""));
      return StrCat("[", Join(q, ","), "]");
    };
    bool beta = next(2) == 1, bias = next(2) == 1 && !out.empty();
    const char* epilogues[] = {"DEFAULT", "RELU", "GELU"};
    std::string epilogue = epilogues[next(3)];
    if (bias) epilogue = epilogue == "DEFAULT" ? "BIAS" : StrCat("BIAS_", epilogue);
    std::string result = StrCat("f32[", Join(out, ","), "]", layout(out.size()));
    std::string params = StrCat("  a = f32[", Join(ldims, ","), "]", layout(ldims.size()), " parameter(0)\n  b = f32[",
                                Join(rdims, ","), "]", layout(rdims.size()), " parameter(1)");
    std::string operands = "a, b";
    if (beta) {
      StrAppend(&params, "\n  c = f32[", Join(out, ","), "]", layout(out.size()), " parameter(2)");
      operands += ", c";
    }
    if (bias) {
      StrAppend(&params, "\n  bias = f32[", out.back(), "] parameter(", beta ? 3 : 2, ")");
      operands += ", bias";
    }
    std::string config = StrCat(R"({"dot_dimension_numbers":{"lhs_batch_dimensions":)", ints(lb),
                                R"(,"rhs_batch_dimensions":)", ints(rb), R"(,"lhs_contracting_dimensions":)", ints(lk),
                                R"(,"rhs_contracting_dimensions":)", ints(rk), R"(},"alpha_real":1.5,"beta":)",
                                beta ? "-0.5" : "0", R"(,"epilogue":")", epilogue, R"("})");
    SCOPED_TRACE(StrCat("trial ", trial, ": ", params, " -> ", result, " ", config));
    std::vector<std::string> names = CheckAllAlgorithms(Gemm(params, operands, result, config), 1e-5);
    EXPECT_TRUE(Has(names, "blas"));
  }
}

// ---------------------------------------------------------------- convolution

std::string Conv(const std::string& target, const std::string& a, const std::string& b, const std::string& result,
                 const std::string& attrs, const std::string& extra_params = "", const std::string& extra_ops = "",
                 const std::string& config = "") {
  return StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n", extra_params,
                "  ROOT c = (", result, ", u8[0]) custom-call(a, b", extra_ops, "), ", attrs,
                ", custom_call_target=\"", target, "\"", config.empty() ? "" : StrCat(", backend_config=", config),
                "\n}\n");
}

TEST(ConvRunnerTest, ResnetLikeForwardOnEveryAlgorithm) {
  std::vector<std::string> names =
      CheckAllAlgorithms(Conv("__dnn$convForward", "f32[2,9,9,8]", "f32[3,3,8,16]", "f32[2,9,9,16]",
                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                         1e-4);
  EXPECT_TRUE(Has(names, "auto"));
  EXPECT_TRUE(Has(names, "direct"));
  EXPECT_TRUE(Has(names, "reference"));
}

TEST(ConvRunnerTest, BenchmarkShapeOnEveryAlgorithm) {
  // The shape bench/runtime_bench.cc times (ResNet's 64-channel stage).
  CheckAllAlgorithms(Conv("__dnn$convForward", "f32[8,16,16,64]", "f32[3,3,64,64]", "f32[8,16,16,64]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     1e-4);
  CheckAllAlgorithms(Conv("__dnn$convBackwardInput", "f32[8,16,16,64]", "f32[3,3,64,64]", "f32[8,16,16,64]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     1e-4);
  CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", "f32[8,16,16,64]", "f32[8,16,16,64]", "f32[3,3,64,64]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     1e-4);
}

// Random dim_labels, layouts, sizes, strides, padding, dilation and groups,
// for every kind: oneDNN sees the buffers only through strides, so this is
// where a mix-up of dimensions would show.
TEST(ConvRunnerTest, RandomDimLabelsLayoutsAndWindows) {
  uint64_t state = 777;
  auto next = [&](int64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  auto shuffled = [&](std::string chars) {
    for (int64_t i = static_cast<int64_t>(chars.size()) - 1; i > 0; --i) std::swap(chars[i], chars[next(i + 1)]);
    return chars;
  };
  auto layout = [&](int64_t rank) {
    std::vector<int64_t> perm(rank);
    for (int64_t i = 0; i < rank; ++i) perm[i] = i;
    for (int64_t i = rank - 1; i > 0; --i) std::swap(perm[i], perm[next(i + 1)]);
    return StrCat("{", Join(perm, ","), "}");
  };
  const char* kinds[] = {"__dnn$convForward", "__dnn$convBackwardInput", "__dnn$convBackwardFilter"};
  int on_dnn = 0;
  for (int trial = 0; trial < 24; ++trial) {
    int64_t spatial = 1 + next(2), groups = 1 + next(2);
    int64_t batch = 1 + next(3), in_f = groups * (1 + next(3)), out_f = groups * (1 + next(3));
    std::string sp = spatial == 1 ? "0" : "01";
    std::string il = shuffled("bf" + sp), kl = shuffled("io" + sp), ol = shuffled("bf" + sp);
    std::vector<int64_t> x(spatial), k(spatial), y(spatial), st(spatial), pl(spatial), ph(spatial), dl(spatial);
    std::vector<std::string> size, stride, pad, dil;
    for (int64_t i = 0; i < spatial; ++i) {
      k[i] = 1 + next(3);
      dl[i] = 1 + next(2);
      st[i] = 1 + next(2);
      pl[i] = next(3);
      ph[i] = next(3);
      x[i] = (k[i] - 1) * dl[i] + 1 + next(6);
      y[i] = (x[i] + pl[i] + ph[i] - (k[i] - 1) * dl[i] - 1) / st[i] + 1;
      size.push_back(StrCat(k[i]));
      stride.push_back(StrCat(st[i]));
      pad.push_back(StrCat(pl[i], "_", ph[i]));
      dil.push_back(StrCat(dl[i]));
    }
    auto dims = [&](const std::string& labels, int64_t b, int64_t f, const std::vector<int64_t>& s) {
      std::vector<int64_t> d;
      for (char c : labels) d.push_back(c == 'b' || c == 'o' ? b : c == 'f' || c == 'i' ? f : s[c - '0']);
      return StrCat("f32[", Join(d, ","), "]", layout(d.size()));
    };
    std::string in = dims(il, batch, in_f, x), filter = dims(kl, out_f, in_f / groups, k), out = dims(ol, batch, out_f, y);
    std::string attrs = StrCat("window={size=", Join(size, "x"), " stride=", Join(stride, "x"), " pad=", Join(pad, "x"),
                               " rhs_dilate=", Join(dil, "x"), "}, dim_labels=", il, "_", kl, "->", ol,
                               groups > 1 ? StrCat(", feature_group_count=", groups) : "");
    std::string kind = kinds[trial % 3];
    std::string text = kind == kinds[0]   ? Conv(kind, in, filter, out, attrs)
                       : kind == kinds[1] ? Conv(kind, out, filter, in, attrs)
                                          : Conv(kind, in, out, filter, attrs);
    SCOPED_TRACE(StrCat("trial ", trial, ": ", text));
    std::vector<std::string> names = CheckAllAlgorithms(text, 1e-4);
    EXPECT_TRUE(Has(names, "reference"));
    on_dnn += Has(names, "auto");
  }
  EXPECT_GE(on_dnn, 20) << "oneDNN took only " << on_dnn << " of 24 problems";
}

TEST(ConvRunnerTest, StridedGroupedDilatedForwardNchw) {
  CheckAllAlgorithms(Conv("__dnn$convForward", "f32[1,6,11,10]", "f32[4,3,3,2]", "f32[1,4,4,5]",
                          "window={size=3x2 stride=2x2 pad=1_0x0_1 rhs_dilate=2x1}, dim_labels=bf01_oi01->bf01, "
                          "feature_group_count=2"),
                     1e-4);
}

TEST(ConvRunnerTest, WindowReversalFlipsTheFilter) {
  // Reversed along one spatial dimension only, filter in a scrambled layout.
  std::vector<std::string> names =
      CheckAllAlgorithms(Conv("__dnn$convForward", "f32[2,3,7,6]", "f32[3,2,3,4]{0,2,3,1}", "f32[2,4,7,6]",
                              "window={size=3x2 pad=1_1x0_1 rhs_reversal=1x0}, dim_labels=bf01_01io->bf01"),
                         1e-4);
  EXPECT_TRUE(Has(names, "direct"));
  CheckAllAlgorithms(Conv("__dnn$convForward", "bf16[1,5,5,4]", "bf16[3,3,4,4]", "bf16[1,5,5,4]",
                          "window={size=3x3 pad=1_1x1_1 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f"),
                     2e-2);
}

TEST(ConvRunnerTest, TapGemmOnSwappedAndSparselyReachedConvolutions) {
  // XLA's swapped backward-input convolution on ResNet-18's layer4
  // (SwapConvolutionOperandsIfBeneficial), scaled down: 2x2 taps over a
  // 3x3 input, batch 24, with the window reversed.
  std::vector<std::string> names =
      CheckAllAlgorithms(Conv("__dnn$convForward", "f32[24,3,3,16]", "f32[2,2,16,8]", "f32[24,2,2,8]",
                              "window={size=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f"),
                         1e-4);
  EXPECT_TRUE(Has(names, "tap-gemm"));
  // Dilation 3 over a 2-wide input padded 2_2: output column 1 reaches no
  // input (zeros); scrambled layouts; a result scale.
  names = CheckAllAlgorithms(
      Conv("__dnn$convForward", "f32[3,5,2,4]{0,3,2,1}", "f32[4,2,2,3]{2,3,1,0}", "f32[3,3,6,3]{3,0,1,2}",
           "window={size=2x2 pad=1_1x2_2 rhs_dilate=1x3 rhs_reversal=0x1}, dim_labels=b01f_i01o->b10f", "", "",
           R"({"cudnn_conv_backend_config":{"activation_mode":"kNone","conv_result_scale":0.5,"side_input_scale":0.0}})"),
      1e-4);
  EXPECT_TRUE(Has(names, "tap-gemm"));
  // Not for backward kinds, nor past kMaxProducts products (64x64 x 9).
  names = CheckAllAlgorithms(Conv("__dnn$convBackwardInput", "f32[1,4,4,2]", "f32[3,3,2,2]", "f32[1,4,4,2]",
                                  "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                             1e-4);
  EXPECT_FALSE(Has(names, "tap-gemm"));
  Case big = Prepare(Conv("__dnn$convForward", "f32[1,64,64,1]", "f32[3,3,1,1]", "f32[1,64,64,1]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_NE(big.call, nullptr);
  absl::StatusOr<std::vector<LibraryAlgorithm>> listed = ListAlgorithms(*big.call);
  ASSERT_TRUE(listed.ok());
  for (const LibraryAlgorithm& a : *listed) EXPECT_NE(a.name, "tap-gemm");
  // tap-gemm recorded (from the pickers' cache, whose key does not see the
  // producers' zeros that made it fit a like call) where it does not take
  // the call: oneDNN's own choice runs instead of a compile error; asked
  // for by name, it is refused.
  Case recorded = Prepare(Conv("__dnn$convForward", "f32[1,64,64,1]", "f32[3,3,1,1]", "f32[1,64,64,1]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "", "",
                               R"({"cudnn_conv_backend_config":{"activation_mode":"kNone","conv_result_scale":1.0,)"
                               R"("side_input_scale":0.0,"algorithm":{"algo_id":"5","name":"tap-gemm"}}})"));
  ASSERT_NE(recorded.call, nullptr);
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> fallback = LibraryCallRunner::Create(*recorded.call);
  ASSERT_TRUE(fallback.ok()) << fallback.status().message();
  EXPECT_NE((*fallback)->algorithm().name, "tap-gemm");
  EXPECT_TRUE(absl::IsUnimplemented(LibraryCallRunner::Create(*recorded.call, 5).status()));
}

// A convolution whose operands the module computes (zero pads whose
// zeros tap-gemm skips): the module's root is tuple(result, operand 0,
// operand 1, ...) of the call `c`. The evaluator gives the expected result
// and the operands' values; every listed algorithm runs on those values.
std::vector<std::string> CheckComputedOperands(const std::string& text, double tol) {
  std::vector<std::string> names;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return names;
  const HloComputation* entry = (*m)->entry_computation();
  const HloInstruction* root = entry->root_instruction();
  const HloInstruction* call = root->operand(0)->operand(0);
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    args.push_back(Random(entry->parameter_instruction(i)->shape(), i + 1));
  }
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!want.ok()) return names;
  absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*call);
  EXPECT_TRUE(algos.ok()) << algos.status().message();
  if (!algos.ok()) return names;
  for (const LibraryAlgorithm& a : *algos) {
    names.push_back(a.name);
    Buffers b;
    for (int64_t i = 0; i < call->operand_count(); ++i) {
      void* p = b.Add(call->operand(i)->shape());
      EXPECT_TRUE(CopyLiteralToBuffer(want->tuple_elements()[i + 1], call->operand(i)->shape(), p).ok());
    }
    std::vector<Shape> leaves = LeafShapes(call->shape());
    for (const Shape& s : leaves) b.Add(s);
    absl::StatusOr<int64_t> ns = RunLibraryCall(*call, a.id, b.ptrs);
    EXPECT_TRUE(ns.ok()) << a.name << ": " << ns.status().message();
    if (!ns.ok()) continue;
    absl::StatusOr<Literal> got = LiteralFromBuffer(leaves[0], b.ptrs[call->operand_count()]);
    EXPECT_TRUE(got.ok());
    if (got.ok()) ExpectClose(*got, want->tuple_elements()[0], tol, a.name);
  }
  return names;
}

// ResNet's strided layers' swapped backward-input convolution as XLA:GPU
// leaves it, scaled down (ResNet-18's custom-call.73): the input is the
// weight zero-padded 1_2 and transposed, the filter the output gradient
// with the stride's holes as interior padding (XLA's conv padding
// legalization materializes the base dilation, conv_padding_legalization.cc),
// transposed; fused with bias, side input and relu. tap-gemm runs only the
// 5x5 of 12x12 (position, tap) pairs that meet real elements.
std::string SwappedStridedBackwardInput(const std::string& target, const std::string& interior) {
  const bool fused = target == "__dnn$convBiasActivationForward";
  return StrCat(R"(HloModule swapped
ENTRY e {
  wt = f32[3,3,6,5] parameter(0)
  g = f32[4,2,2,5] parameter(1)
  z = f32[] constant(0)
  xp = f32[6,6,6,5] pad(wt, z), padding=1_2x1_2x0_0x0_0
  x = f32[6,6,6,5] transpose(xp), dimensions={2,0,1,3}
  gp = f32[4,)", interior, R"(,5] pad(g, z), padding=0_0x0_0_)", interior == "3,3" ? "1x0_0_1" : "3x0_0_3",
                R"(x0_0
  w = f32[)", interior, R"(,5,4] transpose(gp), dimensions={1,2,3,0}
)", fused ? "  bias = f32[4] parameter(2)\n  side = f32[6,4,4,4] parameter(3)\n" : "",
                "  c = (f32[6,4,4,4], u8[0]) custom-call(x, w", fused ? ", bias, side" : "", "), window={size=",
                interior == "3,3" ? "3x3" : "5x5", R"( pad=0_)", interior == "3,3" ? "0x0_0" : "2x0_2",
                R"( rhs_reversal=1x1}, dim_labels=b01f_01io->b01f, custom_call_target=")", target, "\"",
                fused ? R"(, backend_config={"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":0.75,"side_input_scale":0.5}})"
                      : "",
                R"(
  y = f32[6,4,4,4] get-tuple-element(c), index=0
  ROOT r = (f32[6,4,4,4], f32[6,6,6,5], f32[)", interior, R"(,5,4])", fused ? ", f32[4], f32[6,4,4,4]" : "",
                ") tuple(y, x, w", fused ? ", bias, side" : "", R"()
})");
}

TEST(ConvRunnerTest, TapGemmSkipsStructuralZerosOfSwappedStridedConvolutions) {
  for (const std::string target : {"__dnn$convForward", "__dnn$convBiasActivationForward"}) {
    SCOPED_TRACE(target);
    std::vector<std::string> names = CheckComputedOperands(SwappedStridedBackwardInput(target, "3,3"), 1e-4);
    EXPECT_TRUE(Has(names, "tap-gemm"));
    EXPECT_TRUE(Has(names, "reference"));
    // Stride 4's holes: 5x5 taps over 4x4 positions are 400 products, past
    // kMaxProducts; only the 2x2 real taps' (at most 64) are run, so
    // tap-gemm is listed only where it skips the zeros. Result row and
    // column 0 meet only zeros (fused: act(side * scale + bias) there).
    names = CheckComputedOperands(SwappedStridedBackwardInput(target, "5,5"), 1e-4);
    EXPECT_TRUE(Has(names, "tap-gemm"));
  }
}

TEST(ConvRunnerTest, TapGemmWithDilationsStridesAndUnevenPadding) {
  // Base dilation (oneDNN has none: tap-gemm and the reference only),
  // window dilation, strides, padding low != high, a reversal.
  std::vector<std::string> names = CheckAllAlgorithms(
      Conv("__dnn$convForward", "f32[3,4,5,6]", "f32[3,2,6,4]", "f32[3,4,14,4]",
           "window={size=3x2 stride=2x1 pad=2_1x0_3 lhs_dilate=2x3 rhs_dilate=1x2 rhs_reversal=1x0}, "
           "dim_labels=b01f_01io->b01f"),
      1e-4);
  EXPECT_TRUE(Has(names, "tap-gemm"));
  EXPECT_FALSE(Has(names, "direct"));
  // Fused: result scale, bias, side input, relu; dilations and strides.
  names = CheckAllAlgorithms(
      Conv("__dnn$convBiasActivationForward", "f32[2,7,6,5]", "f32[3,3,5,4]", "f32[2,3,3,4]",
           "window={size=3x3 stride=2x2 pad=1_2x0_1 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f",
           "  bias = f32[4] parameter(2)\n  side = f32[2,3,3,4] parameter(3)\n", ", bias, side",
           R"({"cudnn_conv_backend_config":{"conv_result_scale":0.5,"side_input_scale":2,"activation_mode":"kRelu"}})"),
      1e-4);
  EXPECT_TRUE(Has(names, "tap-gemm"));
  // Bias and tanh without a side input.
  names = CheckAllAlgorithms(Conv("__dnn$convBiasActivationForward", "f32[4,3,3,6]", "f32[2,2,6,5]", "f32[4,2,2,5]",
                                  "window={size=2x2}, dim_labels=b01f_01io->b01f", "  bias = f32[5] parameter(2)\n",
                                  ", bias", R"({"cudnn_conv_backend_config":{"activation_mode":"kTanh"}})"),
                             1e-4);
  EXPECT_TRUE(Has(names, "tap-gemm"));
  // A side input in another layout than the result's is not taken.
  names = CheckAllAlgorithms(
      Conv("__dnn$convBiasActivationForward", "f32[2,3,3,4]", "f32[2,2,4,8]", "f32[2,2,2,8]",
           "window={size=2x2}, dim_labels=b01f_01io->b01f",
           "  bias = f32[8] parameter(2)\n  side = f32[2,2,2,8]{0,3,2,1} parameter(3)\n", ", bias, side",
           R"({"cudnn_conv_backend_config":{"side_input_scale":1,"activation_mode":"kRelu"}})"),
      1e-4);
  EXPECT_FALSE(Has(names, "tap-gemm"));
}

// im2col-gemm: one product of the gathered input patches with the filter.
// The weight gradient XLA leaves as a forward convolution
// (gpu_conv_rewriter.cc's MatchBackwardFilter takes a window no larger
// than the result for a forward convolution), as in ResNet-18's layer4
// scaled down: batch = the layer's input features, features = its batch,
// a 2x2 window over 2x2 padded to a 3x3 result; fused with the weight
// decay as side input, as XLA's cudnn_fused_conv_rewriter.cc fuses it.
TEST(ConvRunnerTest, Im2colGemmOnWeightGradientsLeftAsForwardConvolutions) {
  const std::string fused_params = "  bias = f32[16] parameter(2)\n  side = f32[24,3,3,16] parameter(3)\n";
  for (const char* config :
       {R"({"cudnn_conv_backend_config":{"activation_mode":"kNone","side_input_scale":0.5}})",
        R"({"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":0.75,"side_input_scale":2}})"}) {
    SCOPED_TRACE(config);
    std::vector<std::string> names =
        CheckAllAlgorithms(Conv("__dnn$convBiasActivationForward", "f32[24,2,2,4]", "f32[16,2,2,4]",
                                "f32[24,3,3,16]", "window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_o01i->b01f",
                                fused_params, ", bias, side", config),
                           1e-4);
    EXPECT_TRUE(Has(names, "im2col-gemm"));
  }
  // Bias and a result scale without a side input (the bias goes into the
  // product, divided by the scale oneDNN applies to both), tanh.
  std::vector<std::string> names = CheckAllAlgorithms(
      Conv("__dnn$convBiasActivationForward", "f32[3,4,4,6]", "f32[3,3,6,5]", "f32[3,4,4,5]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "  bias = f32[5] parameter(2)\n", ", bias",
           R"({"cudnn_conv_backend_config":{"activation_mode":"kTanh","conv_result_scale":0.5}})"),
      1e-4);
  EXPECT_TRUE(Has(names, "im2col-gemm"));
  // An OIHW filter: the input features outside the taps in the matrix.
  names = CheckAllAlgorithms(Conv("__dnn$convForward", "f32[2,5,5,3]", "f32[4,3,3,3]", "f32[2,5,5,4]",
                                  "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f"),
                             1e-4);
  EXPECT_TRUE(Has(names, "im2col-gemm"));
  // Strides, both dilations, uneven padding and a reversal, 1-D.
  names = CheckAllAlgorithms(Conv("__dnn$convForward", "f32[3,9,4]", "f32[3,4,2]", "f32[3,8,2]",
                                  "window={size=3 stride=2 pad=2_1 lhs_dilate=2 rhs_dilate=2 rhs_reversal=1}, "
                                  "dim_labels=b0f_0io->b0f"),
                             1e-4);
  EXPECT_TRUE(Has(names, "im2col-gemm"));
}

// A 1x1 convolution without stride over a dense input: the input is the
// product's matrix already and is read in place (no gather); with a stride
// its rows are gathered.
TEST(ConvRunnerTest, Im2colGemmReadsA1x1ConvolutionsInputInPlace) {
  for (const char* stride : {"1x1", "2x2"}) {
    SCOPED_TRACE(stride);
    const std::string out = std::string(stride) == "1x1" ? "f32[2,6,6,5]" : "f32[2,3,3,5]";
    std::vector<std::string> names = CheckAllAlgorithms(
        Conv("__dnn$convBiasActivationForward", "f32[2,6,6,8]", "f32[1,1,8,5]", out,
             StrCat("window={size=1x1 stride=", stride, "}, dim_labels=b01f_01io->b01f"),
             StrCat("  bias = f32[5] parameter(2)\n  side = ", out, " parameter(3)\n"), ", bias, side",
             R"({"cudnn_conv_backend_config":{"activation_mode":"kRelu","conv_result_scale":0.5,"side_input_scale":2}})"),
        1e-4);
    EXPECT_TRUE(Has(names, "im2col-gemm"));
  }
  // The result in the input's own buffer, which is also the side input
  // (result = relu(conv(x) + 2x + bias) written over x): the side input
  // goes into the result first, so the runner reads a copy of the input.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(
      Conv("__dnn$convBiasActivationForward", "f32[2,4,4,8]", "f32[1,1,8,8]", "f32[2,4,4,8]",
           "window={size=1x1}, dim_labels=b01f_01io->b01f",
           "  bias = f32[8] parameter(2)\n  side = f32[2,4,4,8] parameter(3)\n", ", bias, side",
           R"({"cudnn_conv_backend_config":{"activation_mode":"kRelu","side_input_scale":2}})"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* call = (*m)->entry_computation()->root_instruction();
  std::vector<Literal> args;
  for (int64_t i = 0; i < 3; ++i) args.push_back(Random(call->operand(i)->shape(), i + 1));
  args.push_back(args[0]);  // the side input is the input
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  Buffers b;
  for (int64_t i = 0; i < 3; ++i) {
    void* p = b.Add(call->operand(i)->shape());
    ASSERT_TRUE(CopyLiteralToBuffer(args[i], call->operand(i)->shape(), p).ok());
  }
  std::vector<void*> ptrs = {b.ptrs[0], b.ptrs[1], b.ptrs[2], b.ptrs[0], b.ptrs[0]};
  absl::StatusOr<int64_t> ns = RunLibraryCall(*call, static_cast<int64_t>(ConvAlgorithm::kIm2colGemm), ptrs);
  ASSERT_TRUE(ns.ok()) << ns.status().message();
  absl::StatusOr<Literal> got = LiteralFromBuffer(call->operand(0)->shape(), b.ptrs[0]);
  ASSERT_TRUE(got.ok());
  ExpectClose(*got, want->tuple_elements()[0], 1e-4, "im2col-gemm in place");
}

// Filter gradients as one product of the gathered input patches with the
// output gradient (A^T dy), input gradients as one product dy w^T added
// into the input's positions: 1x1 without stride (read and written in
// place), 3x3 with padding and stride, a dilated window, an OIHW filter.
TEST(ConvRunnerTest, Im2colGemmOnFilterAndInputGradients) {
  struct Shapes {
    const char *x, *dy, *w, *attrs;
  };
  const Shapes cases[] = {
      {"f32[4,2,2,16]", "f32[4,2,2,24]", "f32[1,1,16,24]", "window={size=1x1}, dim_labels=b01f_01io->b01f"},
      {"f32[2,7,7,3]", "f32[2,4,4,5]", "f32[3,3,3,5]",
       "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
      {"f32[2,9,8,4]", "f32[2,5,8,6]", "f32[3,1,4,6]",
       "window={size=3x1 pad=0_0x0_0 rhs_dilate=2x1}, dim_labels=b01f_01io->b01f"},
      {"f32[2,5,5,3]", "f32[2,5,5,4]", "f32[4,3,3,3]", "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_oi01->b01f"},
  };
  for (const Shapes& c : cases) {
    SCOPED_TRACE(c.attrs);
    std::vector<std::string> names =
        CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", c.x, c.dy, c.w, c.attrs), 1e-4);
    EXPECT_TRUE(Has(names, "im2col-gemm"));
    // The input gradient of the same convolution: C = dy w^T, added into
    // the input's positions (in place for the 1x1).
    names = CheckAllAlgorithms(Conv("__dnn$convBackwardInput", c.dy, c.w, c.x, c.attrs), 1e-4);
    EXPECT_TRUE(Has(names, "im2col-gemm"));
  }
  // A 1x1 input gradient with stride 2: the positions between are zeros.
  std::vector<std::string> names =
      CheckAllAlgorithms(Conv("__dnn$convBackwardInput", "f32[2,3,3,8]", "f32[1,1,4,8]", "f32[2,6,6,4]",
                              "window={size=1x1 stride=2x2}, dim_labels=b01f_01io->b01f"),
                         1e-4);
  EXPECT_TRUE(Has(names, "im2col-gemm"));
}

TEST(ConvRunnerTest, Im2colGemmListedOnlyWhereItIsOneProduct) {
  auto listed = [](const std::string& text) {
    Case c = Prepare(text);
    std::vector<std::string> names;
    if (c.call == nullptr) return names;
    absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*c.call);
    EXPECT_TRUE(algos.ok()) << algos.status().message();
    if (algos.ok()) {
      for (const LibraryAlgorithm& a : *algos) names.push_back(a.name);
    }
    return names;
  };
  // Grouped.
  EXPECT_FALSE(Has(listed(Conv("__dnn$convForward", "f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,5,5,6]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2")),
                   "im2col-gemm"));
  // A result whose rows are not equally spaced (NCHW, several features).
  EXPECT_FALSE(Has(listed(Conv("__dnn$convForward", "f32[2,3,5,5]", "f32[4,3,3,3]", "f32[2,4,5,5]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01")),
                   "im2col-gemm"));
  // A filter whose input features lie between its spatial dimensions.
  EXPECT_FALSE(Has(listed(Conv("__dnn$convForward", "f32[2,5,5,4]", "f32[3,3,4,5]{3,1,2,0}", "f32[2,5,5,5]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")),
                   "im2col-gemm"));
  // Patches past kMaxGatheredBytes (16384 rows x 576 columns, 37.7 MB).
  EXPECT_FALSE(Has(listed(Conv("__dnn$convForward", "f32[1,128,128,64]", "f32[3,3,64,1]", "f32[1,128,128,1]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f")),
                   "im2col-gemm"));
  // Grouped gradients.
  EXPECT_FALSE(Has(listed(Conv("__dnn$convBackwardInput", "f32[1,4,4,4]", "f32[3,3,2,4]", "f32[1,4,4,4]",
                               "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2")),
                   "im2col-gemm"));
}

TEST(ConvRunnerTest, BackwardInputAndFilterOddShapes) {
  // Forward: x f32[2,7,7,3] (b01f), w f32[3,3,3,5] (01io), y f32[2,4,4,5].
  CheckAllAlgorithms(Conv("__dnn$convBackwardInput", "f32[2,4,4,5]", "f32[3,3,3,5]", "f32[2,7,7,3]",
                          "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     1e-4);
  CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", "f32[2,7,7,3]", "f32[2,4,4,5]", "f32[3,3,3,5]",
                          "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     1e-4);
  // Grouped, dilated, NCHW with a non-default layout on the input.
  CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", "f32[3,4,9,8]{1,3,2,0}", "f32[3,6,7,7]", "f32[6,2,3,2]",
                          "window={size=3x2 rhs_dilate=2x1 pad=1_1x0_0}, dim_labels=bf01_oi01->bf01, "
                          "feature_group_count=2"),
                     1e-4);
  CheckAllAlgorithms(Conv("__dnn$convBackwardInput", "f32[3,6,7,7]", "f32[6,2,3,2]", "f32[3,4,9,8]",
                          "window={size=3x2 rhs_dilate=2x1 pad=1_1x0_0}, dim_labels=bf01_oi01->bf01, "
                          "feature_group_count=2"),
                     1e-4);
}

// Depthwise (channels = groups, one input feature per group), as in
// MobileNetV2: each direction, stride 1 and 2, NHWC and NCHW, on every
// algorithm listed; oneDNN takes all of them (its depthwise kernels).
TEST(ConvRunnerTest, DepthwiseEveryDirectionOnEveryAlgorithm) {
  struct Shapes {
    const char *x, *w, *y, *attrs;
  };
  const Shapes cases[] = {
      {"f32[2,9,9,8]", "f32[3,3,1,8]", "f32[2,9,9,8]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8"},
      {"f32[2,9,9,8]", "f32[3,3,1,8]", "f32[2,5,5,8]",
       "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8"},
      // Channel multiplier 2 (16 outputs from 8 channels), NCHW.
      {"f32[3,8,10,7]", "f32[16,1,3,3]", "f32[3,16,5,4]",
       "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=8"},
  };
  for (const Shapes& c : cases) {
    SCOPED_TRACE(c.attrs);
    std::vector<std::string> fwd = CheckAllAlgorithms(Conv("__dnn$convForward", c.x, c.w, c.y, c.attrs), 1e-4);
    std::vector<std::string> bwd_input =
        CheckAllAlgorithms(Conv("__dnn$convBackwardInput", c.y, c.w, c.x, c.attrs), 1e-4);
    std::vector<std::string> bwd_filter =
        CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", c.x, c.y, c.w, c.attrs), 1e-4);
    for (const std::vector<std::string>* names : {&fwd, &bwd_input, &bwd_filter}) {
      EXPECT_TRUE(Has(*names, "auto"));
      EXPECT_TRUE(Has(*names, "reference"));
    }
  }
}

// Grouped (4 groups of 4 channels to 8 outputs), each direction, every
// algorithm, with a filter in a scrambled layout.
TEST(ConvRunnerTest, GroupedEveryDirectionOnEveryAlgorithm) {
  const char* attrs = "window={size=3x3 stride=2x1 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4";
  const char *x = "f32[2,7,6,16]", *w = "f32[3,3,4,8]{2,3,0,1}", *y = "f32[2,4,6,8]";
  for (const char* target : {"__dnn$convForward", "__dnn$convBackwardInput", "__dnn$convBackwardFilter"}) {
    SCOPED_TRACE(target);
    std::string text = std::string(target) == "__dnn$convForward"         ? Conv(target, x, w, y, attrs)
                       : std::string(target) == "__dnn$convBackwardInput" ? Conv(target, y, w, x, attrs)
                                                                           : Conv(target, x, y, w, attrs);
    std::vector<std::string> names = CheckAllAlgorithms(text, 1e-4);
    EXPECT_TRUE(Has(names, "auto"));
  }
}

TEST(ConvRunnerTest, FusedBiasSideInputRelu) {
  CheckAllAlgorithms(Conv("__dnn$convBiasActivationForward", "f32[2,6,6,4]", "f32[3,3,4,8]", "f32[2,6,6,8]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
                          "  bias = f32[8] parameter(2)\n  side = f32[2,6,6,8]{0,3,2,1} parameter(3)\n", ", bias, side",
                          R"({"cudnn_conv_backend_config":{"conv_result_scale":0.5,"side_input_scale":2,"activation_mode":"kRelu"}})"),
                     1e-4);
  CheckAllAlgorithms(Conv("__dnn$convBiasActivationForward", "f32[1,5,5,3]", "f32[1,1,3,4]", "f32[1,5,5,4]",
                          "window={size=1x1}, dim_labels=b01f_01io->b01f", "  bias = f32[4] parameter(2)\n", ", bias",
                          R"({"cudnn_conv_backend_config":{"activation_mode":"kTanh"}})"),
                     1e-4);
}

TEST(ConvRunnerTest, Bf16ThroughF32AndF64OnlyOnReference) {
  CheckAllAlgorithms(Conv("__dnn$convForward", "bf16[1,5,5,4]", "bf16[3,3,4,4]", "bf16[1,5,5,4]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     2e-2);
  std::vector<std::string> names = CheckAllAlgorithms(
      Conv("__dnn$convForward", "f64[1,5,5,2]", "f64[3,3,2,3]", "f64[1,3,3,3]",
           "window={size=3x3}, dim_labels=b01f_01io->b01f"),
      1e-12);
  EXPECT_EQ(names, std::vector<std::string>{"reference"});
}

TEST(ConvRunnerTest, EmptyOperandsGiveZerosOrNothing) {
  // No input features: the result is all zeros (the reference computes it).
  std::vector<std::string> names =
      CheckAllAlgorithms(Conv("__dnn$convForward", "f32[2,5,5,0]", "f32[3,3,0,4]", "f32[2,5,5,4]",
                              "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                         0);
  EXPECT_EQ(names, std::vector<std::string>{"reference"});
  // Empty batch: the filter gradient is all zeros.
  CheckAllAlgorithms(Conv("__dnn$convBackwardFilter", "f32[0,5,5,3]", "f32[0,5,5,4]", "f32[3,3,3,4]",
                          "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
                     0);
}

TEST(ConvRunnerTest, WinogradListedOnlyWhereValid) {
  // Strided: never winograd.
  Case strided = Prepare(Conv("__dnn$convForward", "f32[1,8,8,4]", "f32[3,3,4,4]", "f32[1,4,4,4]",
                              "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_NE(strided.call, nullptr);
  absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*strided.call);
  ASSERT_TRUE(algos.ok()) << algos.status().message();
  for (const LibraryAlgorithm& a : *algos) EXPECT_NE(a.name, "winograd");
  absl::StatusOr<Literal> r = RunWith(strided, static_cast<int64_t>(ConvAlgorithm::kWinograd));
  EXPECT_FALSE(r.ok());
}

// as-backward-filter: a forward convolution run through oneDNN's
// filter-gradient primitive (batch and features exchanged), on the shapes
// XLA's operand swap (SwapConvolutionOperandsIfBeneficial in
// xla/hlo/transforms/simplifiers/algebraic_simplifier.cc) and batch-as-feature
// weight gradients leave: a window as large as the input, padding, window
// reversal, strides and dilations (which trade places), odd layouts, the
// fused epilogue (bias, side input, activation) and bf16.
TEST(ConvRunnerTest, ForwardAsBackwardFilterMatchesTheEvaluator) {
  const std::string kFused = "__dnn$convBiasActivationForward";
  const std::string kForward = "__dnn$convForward";
  struct Problem {
    std::string target, a, b, out, attrs, extra_params, extra_ops, config;
    double tol;
  };
  const std::vector<Problem> problems = {
      // ResNet-18's layer4 weight gradient at 64x64, scaled down: batch as
      // feature, window 2x2 over a 2x2 input padded to a 3x3 result, plus
      // weight decay as the side input.
      {kFused, "f32[16,2,2,4]", "f32[2,2,4,24]", "f32[16,3,3,24]",
       "window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "  bias = f32[24] parameter(2)\n"
       "  side = f32[16,3,3,24] parameter(3)\n", ", bias, side",
       R"({"cudnn_conv_backend_config":{"side_input_scale":0.0001,"activation_mode":"kNone"}})", 1e-4},
      // The operand swap of a 3x3 convolution on 2x2 activations: the
      // reversed weights as the input, the activations as a reversed window.
      {kForward, "f32[24,3,3,16]", "f32[2,2,16,3]", "f32[24,2,2,3]",
       "window={size=2x2 rhs_reversal=1x1}, dim_labels=b01f_01io->b01f", "", "", "", 1e-4},
      // Stride 2 with a remainder left unread and dilation 2, NCHW, the
      // filter in a scrambled layout, reversed along one dimension.
      {kForward, "f32[5,6,8,9]", "f32[7,6,3,2]{0,2,3,1}", "f32[5,7,2,5]",
       "window={size=3x2 stride=2x2 pad=0_0x1_0 rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=bf01_oi01->bf01", "",
       "", "", 1e-4},
      // One spatial dimension, fused ReLU with a side input in another
      // layout and no bias effect beyond its broadcast.
      {kFused, "f32[9,5,3]", "f32[4,3,6]", "f32[9,5,6]", "window={size=4 pad=1_2}, dim_labels=b0f_0io->b0f",
       "  bias = f32[6] parameter(2)\n  side = f32[9,5,6]{0,2,1} parameter(3)\n", ", bias, side",
       R"({"cudnn_conv_backend_config":{"side_input_scale":-1.5,"activation_mode":"kRelu"}})", 1e-4},
      // bf16 through f32, tanh, no side input.
      {kFused, "bf16[6,3,3,4]", "bf16[2,2,4,5]", "bf16[6,4,4,5]",
       "window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "  bias = bf16[5] parameter(2)\n", ", bias",
       R"({"cudnn_conv_backend_config":{"activation_mode":"kTanh"}})", 2e-2},
  };
  for (const Problem& p : problems) {
    std::string text = Conv(p.target, p.a, p.b, p.out, p.attrs, p.extra_params, p.extra_ops, p.config);
    SCOPED_TRACE(text);
    std::vector<std::string> names = CheckAllAlgorithms(text, p.tol);
    EXPECT_TRUE(Has(names, "as-backward-filter"));
    EXPECT_EQ(names.back(), "reference");
  }
  // Not offered: backward kinds, grouped convolutions, a result scale.
  const std::vector<std::string> refused = {
      Conv("__dnn$convBackwardFilter", "f32[2,5,5,3]", "f32[2,5,5,4]", "f32[3,3,3,4]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
      Conv("__dnn$convBackwardInput", "f32[2,5,5,4]", "f32[3,3,3,4]", "f32[2,5,5,3]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
      Conv(kForward, "f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,5,5,6]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2"),
      Conv(kForward, "f32[2,5,5,4]", "f32[3,3,4,6]", "f32[2,5,5,6]",
           "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f", "", "",
           R"({"cudnn_conv_backend_config":{"conv_result_scale":0.5}})"),
  };
  for (const std::string& text : refused) {
    SCOPED_TRACE(text);
    std::vector<std::string> names = CheckAllAlgorithms(text, 1e-4);
    EXPECT_FALSE(Has(names, "as-backward-filter"));
    EXPECT_EQ(names.back(), "reference");
  }
  // Asked for explicitly where it does not apply: an error, not a signal.
  Case grouped = Prepare(refused[2]);
  ASSERT_NE(grouped.call, nullptr);
  absl::StatusOr<Literal> r = RunWith(grouped, static_cast<int64_t>(ConvAlgorithm::kAsBackwardFilter));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("as-backward-filter"), std::string::npos) << r.status().message();
}

TEST(LibraryCallRunnerTest, TimeAlgorithmsComparesAndPicksTheFastest) {
  Case c = Prepare(Conv("__dnn$convForward", "f32[2,9,9,8]", "f32[3,3,8,16]", "f32[2,9,9,16]",
                        "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"));
  ASSERT_NE(c.call, nullptr);
  Buffers b;
  for (int64_t i = 0; i < c.call->operand_count(); ++i) {
    ASSERT_TRUE(CopyLiteralToBuffer(c.args[i], c.call->operand(i)->shape(), b.Add(c.call->operand(i)->shape())).ok());
  }
  for (const Shape& s : LeafShapes(c.call->shape())) b.Add(s);
  absl::StatusOr<std::vector<AlgorithmTiming>> t = TimeAlgorithms(*c.call, b.ptrs, 2, /*include_reference=*/true);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_GE(t->size(), 3u);  // auto, direct, ..., reference
  EXPECT_EQ(t->back().algorithm.name, "reference");
  for (const AlgorithmTiming& a : *t) {
    EXPECT_TRUE(a.status.ok()) << a.algorithm.name << ": " << a.status.message();
    EXPECT_GT(a.median_ns, 0);
    EXPECT_LT(a.max_rel_error, 1e-4) << a.algorithm.name;
  }
  absl::StatusOr<LibraryAlgorithm> best = FastestAlgorithm(*t);
  ASSERT_TRUE(best.ok());
  // The last run's output is in the buffers and right.
  absl::StatusOr<Literal> out = LiteralFromBuffer(LeafShapes(c.call->shape())[0], b.ptrs[2]);
  ASSERT_TRUE(out.ok());
  ExpectClose(*out, c.expected, 1e-4, "after timing");
  // A disagreeing algorithm is flagged; none running is an error.
  std::vector<AlgorithmTiming> fake = {{{0, "a"}, absl::OkStatus(), 50, 0},
                                       {{1, "b"}, absl::InternalError("differs"), 10, 0.5},
                                       {{2, "c"}, absl::OkStatus(), 20, 0}};
  EXPECT_EQ(FastestAlgorithm(fake)->name, "c");
  fake[0].status = fake[2].status = absl::UnavailableError("x");
  EXPECT_FALSE(FastestAlgorithm(fake).ok());
}

TEST(LibraryCallRunnerTest, ConfigAlgorithmIsUsedAndBadIdsAreErrors) {
  Case c = Prepare(Conv("__dnn$convForward", "f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,3,3,3]",
                        "window={size=3x3}, dim_labels=b01f_01io->b01f", "", "",
                        R"({"cudnn_conv_backend_config":{"algorithm":{"algo_id":"3"}}})"));
  ASSERT_NE(c.call, nullptr);
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(*c.call);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  EXPECT_EQ((*runner)->algorithm().name, "reference");
  EXPECT_EQ((*runner)->flops(), 2 * 9 * 3 * 2 * 9);
  EXPECT_FALSE(LibraryCallRunner::Create(*c.call, 17).ok());
  // A cuDNN algorithm id recorded by XLA:GPU means the default here (3 would
  // be passlab's reference).
  Case xla = Prepare(Conv("__cudnn$convForward", "f32[1,5,5,2]", "f32[3,3,2,3]", "f32[1,3,3,3]",
                          "window={size=3x3}, dim_labels=b01f_01io->b01f", "", "",
                          R"({"cudnn_conv_backend_config":{"algorithm":{"algo_id":"3","math_type":"DEFAULT_MATH"}}})"));
  ASSERT_NE(xla.call, nullptr);
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> dflt = LibraryCallRunner::Create(*xla.call);
  ASSERT_TRUE(dflt.ok()) << dflt.status().message();
  EXPECT_EQ((*dflt)->algorithm().name, "auto");
  // Not a library call.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
})");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<std::vector<LibraryAlgorithm>> none = ListAlgorithms(*(*m)->entry_computation()->root_instruction());
  EXPECT_FALSE(none.ok());
}

}  // namespace
}  // namespace passlab
