// The CUDA runtime's own routines (cuda_routine_thunk.cc): fft on cuFFT,
// cholesky on cuSOLVER, triangular-solve on cuBLAS and single-key sorts on
// the bitonic sort kernel, each against the evaluator on small, odd and
// batched shapes in f32 and f64, with no host fallback left in the
// executable. Forms the device does not take (a multi-key comparator, a
// line longer than the sort kernel's) stay on the host and say why. Every
// device test skips without a CUDA driver or device; the modules are
// checked to parse and evaluate everywhere.
#include <gtest/gtest.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/backends/cuda/cuda_executable.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

#define REQUIRE_CUDA_DEVICE()                                                                  \
  do {                                                                                         \
    absl::StatusOr<std::string> device = DescribeCudaDevice(0);                                \
    if (!device.ok()) GTEST_SKIP() << "needs a CUDA device: " << device.status().message(); \
  } while (0)

struct Outcome {
  std::string error;  // "" when the result matches the evaluator's
  std::vector<std::string> host_fallbacks;
  std::vector<KernelRecord> records;
  std::string program;
  bool graph_launched = false;  // the last run launched the captured step
};

// The arguments of `text`: random ones, or the tuple elements `prepare`
// (a module over random arguments) evaluates to.
absl::StatusOr<std::vector<Literal>> Arguments(const HloModule& module, const std::string& prepare) {
  if (prepare.empty()) return MakeRandomArguments(*module.entry_computation(), 7);
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> p, ParseHloModule(prepare));
  std::vector<Literal> random = MakeRandomArguments(*p->entry_computation(), 7);
  ASSIGN_OR_RETURN(Literal tuple, HloEvaluator().Evaluate(*p, random));
  std::vector<Literal> args;
  for (int64_t i = 0; i < module.entry_computation()->num_parameters(); ++i) args.push_back(tuple.tuple_elements()[i]);
  return args;
}

absl::StatusOr<Literal> Expected(const std::string& text, const std::string& prepare, std::vector<Literal>* args) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m, ParseHloModule(text));
  ASSIGN_OR_RETURN(*args, Arguments(*m, prepare));
  return HloEvaluator().Evaluate(*m, *args);
}

Outcome RunOnDevice(const std::string& text, double tol, const std::string& prepare = "") {
  Outcome out;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return Outcome{StrCat("parse: ", m.status().message())};
  std::vector<Literal> args;
  absl::StatusOr<Literal> expected = Expected(text, prepare, &args);
  if (!expected.ok()) return Outcome{StrCat("evaluate: ", expected.status().message())};
  absl::StatusOr<std::unique_ptr<CudaExecutable>> exe = CudaExecutable::Create(**m, nullptr);
  if (!exe.ok()) return Outcome{StrCat("create: ", exe.status().message())};
  out.program = (*exe)->ToString();
  out.host_fallbacks = (*exe)->HostFallbacks();
  absl::StatusOr<Literal> got = (*exe)->Run(args, &out.records);
  if (!got.ok()) {
    out.error = StrCat("run: ", got.status().message());
    return out;
  }
  if (absl::Status same = CompareLiterals(*expected, *got, {.abs = tol, .rel = tol}); !same.ok()) {
    out.error = StrCat("wrong result: ", same.message(), "\n", out.program);
    return out;
  }
  // Later runs reuse plans, workspaces and scratch buffers; without
  // records the second is captured into a CUDA graph (command_buffer) and
  // the third launches that graph.
  for (int run = 2; run <= 3; ++run) {
    absl::StatusOr<Literal> again = (*exe)->Run(args);
    if (!again.ok()) {
      out.error = StrCat("run ", run, ": ", again.status().message());
      return out;
    }
    if (!CompareLiterals(*got, *again, {.abs = 0, .rel = 0}).ok()) {
      out.error = StrCat("run ", run, " differs", (*exe)->last_run().graph_launched ? " (graph launch)" : "");
      return out;
    }
  }
  out.graph_launched = (*exe)->last_run().graph_launched;
  return out;
}

bool HasRoutine(const Outcome& o, std::string_view detail_prefix) {
  for (const KernelRecord& r : o.records) {
    if (r.kind == KernelKind::kRuntimeRoutine && r.detail.starts_with(detail_prefix)) return true;
  }
  return false;
}

// ---------------------------------------------------------------- modules

struct Case {
  std::string name, text, prepare;
  double tol = 1e-4;
};

std::string Entry(const std::string& body) { return StrCat("HloModule m\nENTRY e {\n", body, "}\n"); }

// FFT, IFFT, RFFT and IRFFT in 1-3 dimensions, batched, odd lengths (XLA's
// xla/tests/fft_test.cc covers the same kinds on small shapes).
std::vector<Case> FftCases() {
  std::vector<Case> cases;
  for (const char* c : {"c64", "c128"}) {
    const char* r = std::string(c) == "c64" ? "f32" : "f64";
    cases.push_back({StrCat("fft_1d_", c),
                     Entry(StrCat("  p = ", c, "[3,7] parameter(0)\n  ROOT f = ", c,
                                  "[3,7] fft(p), fft_type=FFT, fft_length={7}\n"))});
    cases.push_back({StrCat("ifft_2d_", c),
                     Entry(StrCat("  p = ", c, "[2,5,6] parameter(0)\n  ROOT f = ", c,
                                  "[2,5,6] fft(p), fft_type=IFFT, fft_length={5,6}\n"))});
    cases.push_back({StrCat("fft_3d_", c),
                     Entry(StrCat("  p = ", c, "[2,3,4,5] parameter(0)\n  ROOT f = ", c,
                                  "[2,3,4,5] fft(p), fft_type=FFT, fft_length={3,4,5}\n"))});
    // The operand is read again after the transform: it must be intact.
    cases.push_back({StrCat("rfft_2d_", r),
                     Entry(StrCat("  p = ", r, "[4,3,9] parameter(0)\n  f = ", c,
                                  "[4,3,5] fft(p), fft_type=RFFT, fft_length={3,9}\n  ROOT t = (", c, "[4,3,5], ", r,
                                  "[4,3,9]) tuple(f, p)\n"))});
    cases.push_back({StrCat("irfft_1d_even_", r),
                     Entry(StrCat("  p = ", c, "[5,5] parameter(0)\n  f = ", r,
                                  "[5,8] fft(p), fft_type=IRFFT, fft_length={8}\n  ROOT t = (", r, "[5,8], ", c,
                                  "[5,5]) tuple(f, p)\n"))});
    cases.push_back({StrCat("irfft_2d_odd_", r),
                     Entry(StrCat("  p = ", c, "[2,3,4] parameter(0)\n  f = ", r,
                                  "[2,3,7] fft(p), fft_type=IRFFT, fft_length={3,7}\n  ROOT t = (", r, "[2,3,7], ",
                                  c, "[2,3,4]) tuple(f, p)\n"))});
  }
  for (Case& c : cases) c.tol = 1e-3;
  return cases;
}

// Batches of symmetric positive definite matrices: x x^T + 2 I.
std::string SpdPrepare(const std::string& type, int64_t batch, int64_t n, bool also_negated) {
  std::string shape = StrCat(type, "[", batch, ",", n, ",", n, "]");
  std::string body = StrCat("  x = ", shape, " parameter(0)\n  g = ", shape,
                            " dot(x, x), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                            "rhs_contracting_dims={2}\n  i = s32[", batch, ",", n, ",", n,
                            "] iota(), iota_dimension=1\n  j = s32[", batch, ",", n, ",", n,
                            "] iota(), iota_dimension=2\n  eq = pred[", batch, ",", n, ",", n,
                            "] compare(i, j), direction=EQ\n  two = ", type, "[] constant(2)\n  zero = ", type,
                            "[] constant(0)\n  d2 = ", shape, " broadcast(two), dimensions={}\n  d0 = ", shape,
                            " broadcast(zero), dimensions={}\n  d = ", shape, " select(eq, d2, d0)\n  a = ", shape,
                            " add(g, d)\n");
  if (!also_negated) return Entry(StrCat(body, "  ROOT t = (", shape, ") tuple(a)\n"));
  // Negative definite matrices (potrf fails at the first pivot) after them.
  std::string both = StrCat(type, "[", 2 * batch, ",", n, ",", n, "]");
  return Entry(StrCat(body, "  na = ", shape, " negate(a)\n  c = ", both, " concatenate(a, na), dimensions={0}\n",
                      "  ROOT t = (", both, ") tuple(c)\n"));
}

// XLA's xla/tests/cholesky_test.cc: lower and upper, batched, f32 and f64;
// a matrix that is not positive definite becomes NaN.
std::vector<Case> CholeskyCases() {
  std::vector<Case> cases;
  for (const char* t : {"f32", "f64"}) {
    for (bool lower : {true, false}) {
      for (auto [batch, n] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {2, 17}}) {
        std::string shape = StrCat(t, "[", batch, ",", n, ",", n, "]");
        cases.push_back({StrCat("cholesky_", t, lower ? "_lower_" : "_upper_", batch, "x", n),
                         Entry(StrCat("  a = ", shape, " parameter(0)\n  ROOT l = ", shape,
                                      " cholesky(a), lower=", lower ? "true" : "false", "\n")),
                         SpdPrepare(t, batch, n, false)});
      }
      std::string shape = StrCat(t, "[4,6,6]");
      cases.push_back({StrCat("cholesky_", t, lower ? "_lower" : "_upper", "_not_positive_definite"),
                       Entry(StrCat("  a = ", shape, " parameter(0)\n  ROOT l = ", shape,
                                    " cholesky(a), lower=", lower ? "true" : "false", "\n")),
                       SpdPrepare(t, 2, 6, true)});
    }
  }
  return cases;
}

// Every option of XLA's xla/tests/triangular_solve_test.cc: left / right,
// lower / upper, NO_TRANSPOSE / TRANSPOSE, unit diagonal or not, batched
// with m != n; a is random plus 4 on the diagonal (well conditioned).
std::vector<Case> TriangularSolveCases() {
  std::vector<Case> cases;
  for (const char* t : {"f32", "f64"}) {
    for (bool left : {true, false}) {
      for (bool lower : {true, false}) {
        for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
          for (bool unit : {false, true}) {
            const int64_t batch = 2, m = 5, n = 3, k = left ? m : n;
            std::string a = StrCat(t, "[", batch, ",", k, ",", k, "]"), b = StrCat(t, "[", batch, ",", m, ",", n, "]");
            std::string prepare = Entry(StrCat(
                "  x = ", a, " parameter(0)\n  y = ", b, " parameter(1)\n  i = s32[", batch, ",", k, ",", k,
                "] iota(), iota_dimension=1\n  j = s32[", batch, ",", k, ",", k, "] iota(), iota_dimension=2\n",
                "  eq = pred[", batch, ",", k, ",", k, "] compare(i, j), direction=EQ\n  four = ", t,
                "[] constant(4)\n  zero = ", t, "[] constant(0)\n  d4 = ", a,
                " broadcast(four), dimensions={}\n  d0 = ", a, " broadcast(zero), dimensions={}\n  d = ", a,
                " select(eq, d4, d0)\n  w = ", a, " add(x, d)\n  ROOT r = (", a, ", ", b, ") tuple(w, y)\n"));
            cases.push_back(
                {StrCat("trsm_", t, left ? "_left" : "_right", lower ? "_lower_" : "_upper_", transpose,
                        unit ? "_unit" : ""),
                 Entry(StrCat("  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n  ROOT x = ", b,
                              " triangular-solve(a, b), left_side=", left ? "true" : "false",
                              ", lower=", lower ? "true" : "false", ", unit_diagonal=", unit ? "true" : "false",
                              ", transpose_a=", transpose, "\n")),
                 prepare});
          }
        }
      }
    }
  }
  return cases;
}

std::string Comparator(const std::string& type, const std::string& direction, int operands, int key,
                       bool swapped = false, const std::string& comparison = "") {
  std::string params;
  for (int i = 0; i < 2 * operands; ++i) {
    std::string t = i / 2 == key ? type : "s32";
    StrAppend(&params, "    p", i, " = ", t, "[] parameter(", i, ")\n");
  }
  int x = 2 * key, y = 2 * key + 1;
  if (swapped) std::swap(x, y);
  return StrCat("{\n", params, "    ROOT c = pred[] compare(p", x, ", p", y, "), direction=", direction,
                comparison.empty() ? "" : StrCat(", type=", comparison), " }");
}

// Sorts the kernel takes: LT / GT (and compare(b, a)), float, total-order,
// signed and unsigned keys, values riding along, the sort dimension inner
// or outer, lines of 1 to 4096 elements; random floats are multiples of
// 1/64 and integers lie in [0, 8), so ties are many and stability shows.
std::vector<Case> SortCases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string body, std::string prepare = "") {
    cases.push_back({std::move(name), Entry(body), std::move(prepare), 0});
  };
  // Random keys and distinct values (their positions), so a stable sort
  // has one answer. Values come prepared: an iota in the module would run
  // on the host here (no kernel provider).
  auto keys_and_positions = [](const std::string& key, const std::string& dims, int64_t position_dim) {
    return Entry(StrCat("  k = ", key, "[", dims, "] parameter(0)\n  v = s32[", dims, "] iota(), iota_dimension=",
                        position_dim, "\n  ROOT t = (", key, "[", dims, "], s32[", dims, "]) tuple(k, v)\n"));
  };
  add("sort_f32_lt", "  p = f32[4,37] parameter(0)\n  ROOT s = f32[4,37] sort(p), dimensions={1}, to_apply=" +
                         Comparator("f32", "LT", 1, 0) + "\n");
  add("sort_f64_gt_outer_dimension",
      "  p = f64[33,3,2] parameter(0)\n  ROOT s = f64[33,3,2] sort(p), dimensions={0}, to_apply=" +
          Comparator("f64", "GT", 1, 0) + "\n");
  add("sort_f32_swapped_lt_is_descending",
      "  p = f32[5,64] parameter(0)\n  ROOT s = f32[5,64] sort(p), dimensions={1}, to_apply=" +
          Comparator("f32", "LT", 1, 0, true) + "\n");
  add("sort_f32_keys_s32_values_stable",
      "  k = f32[3,300] parameter(0)\n  v = s32[3,300] parameter(1)\n  ROOT s = (f32[3,300], "
      "s32[3,300]) sort(k, v), dimensions={1}, is_stable=true, to_apply=" +
          Comparator("f32", "LT", 2, 0) + "\n",
      keys_and_positions("f32", "3,300", 1));
  add("sort_s32_values_by_second_key",
      "  k = s32[2,7,9] parameter(0)\n  v = s32[2,7,9] parameter(1)\n  ROOT s = (s32[2,7,9], "
      "s32[2,7,9]) sort(v, k), dimensions={1}, to_apply=" +
          Comparator("s32", "GT", 2, 1) + "\n",
      keys_and_positions("s32", "2,7,9", 1));
  add("sort_u8_keys",
      "  p = u8[6,50] parameter(0)\n  v = s32[6,50] parameter(1)\n  ROOT s = (u8[6,50], "
      "s32[6,50]) sort(p, v), dimensions={1}, to_apply=" +
          Comparator("u8", "LT", 2, 0) + "\n",
      keys_and_positions("u8", "6,50", 1));
  add("sort_s64_lines_of_one", "  p = s64[9,1] parameter(0)\n  ROOT s = s64[9,1] sort(p), dimensions={1}, to_apply=" +
                                   Comparator("s64", "LT", 1, 0) + "\n");
  add("sort_f32_longest_line",
      "  p = f32[2,4096] parameter(0)\n  ROOT s = f32[2,4096] sort(p), dimensions={1}, to_apply=" +
          Comparator("f32", "LT", 1, 0) + "\n");
  // XLA's total order: -inf < -1 < -0 < +0 < 2 < inf < NaN.
  add("sort_f32_total_order",
      "  p = f32[2,8] constant({{2, -0, 0, nan, -inf, inf, -1, 0}, {nan, 1, -0, -inf, 0, 3, -2, inf}})\n"
      "  ROOT s = f32[2,8] sort(p), dimensions={1}, to_apply=" +
          Comparator("f32", "LT", 1, 0, false, "TOTALORDER") + "\n");
  add("sort_bf16_gt", "  p = bf16[3,40] parameter(0)\n  ROOT s = bf16[3,40] sort(p), dimensions={1}, to_apply=" +
                          Comparator("bf16", "GT", 1, 0) + "\n");
  return cases;
}

std::vector<Case> AllCases() {
  std::vector<Case> all;
  for (auto* cases : {&FftCases, &CholeskyCases, &TriangularSolveCases, &SortCases}) {
    for (Case& c : (*cases)()) all.push_back(std::move(c));
  }
  return all;
}

void ExpectOnDevice(const Case& c, std::string_view detail_prefix) {
  Outcome o = RunOnDevice(c.text, c.tol, c.prepare);
  EXPECT_EQ(o.error, "") << c.name;
  EXPECT_TRUE(o.host_fallbacks.empty()) << c.name << ": " << (o.host_fallbacks.empty() ? "" : o.host_fallbacks[0]);
  EXPECT_TRUE(HasRoutine(o, detail_prefix)) << c.name << "\n" << o.program;
  // No host work in the step: it is captured and replayed as a CUDA graph.
  EXPECT_TRUE(o.graph_launched) << c.name;
}

// ---------------------------------------------------------------- tests

TEST(CudaRoutineThunkTest, FftRunsOnCufft) {
  REQUIRE_CUDA_DEVICE();
  for (const Case& c : FftCases()) ExpectOnDevice(c, "cuFFT ");
}

TEST(CudaRoutineThunkTest, CholeskyRunsOnCusolver) {
  REQUIRE_CUDA_DEVICE();
  for (const Case& c : CholeskyCases()) ExpectOnDevice(c, "cuSOLVER potrf ");
}

TEST(CudaRoutineThunkTest, TriangularSolveRunsOnCublas) {
  REQUIRE_CUDA_DEVICE();
  for (const Case& c : TriangularSolveCases()) ExpectOnDevice(c, "cuBLAS trsm ");
}

TEST(CudaRoutineThunkTest, SingleKeySortsRunOnTheSortKernel) {
  REQUIRE_CUDA_DEVICE();
  for (const Case& c : SortCases()) ExpectOnDevice(c, "bitonic sort ");
}

// Lines longer than the kernel's shared memory holds, and comparators that
// are not one compare of one operand, stay on the host and say why.
TEST(CudaRoutineThunkTest, OtherSortsStayOnTheHost) {
  REQUIRE_CUDA_DEVICE();
  Outcome o = RunOnDevice(Entry("  p = f32[4097] parameter(0)\n  ROOT s = f32[4097] sort(p), dimensions={0}, to_apply=" +
                        Comparator("f32", "LT", 1, 0) + "\n"),
                  0);
  EXPECT_EQ(o.error, "");
  ASSERT_EQ(o.host_fallbacks.size(), 1u) << o.program;
  EXPECT_NE(o.host_fallbacks[0].find("sort (no device sort: sort lines of 4097 elements"), std::string::npos)
      << o.host_fallbacks[0];
  // Two keys: a lexicographic comparator.
  o = RunOnDevice(Entry("  a = s32[3,20] parameter(0)\n  b = s32[3,20] parameter(1)\n"
                "  ROOT s = (s32[3,20], s32[3,20]) sort(a, b), dimensions={1}, to_apply={\n"
                "    a0 = s32[] parameter(0)\n    a1 = s32[] parameter(1)\n    b0 = s32[] parameter(2)\n"
                "    b1 = s32[] parameter(3)\n    lt = pred[] compare(a0, a1), direction=LT\n"
                "    eq = pred[] compare(a0, a1), direction=EQ\n    lt2 = pred[] compare(b0, b1), direction=LT\n"
                "    tie = pred[] and(eq, lt2)\n    ROOT r = pred[] or(lt, tie) }\n"),
          0);
  EXPECT_EQ(o.error, "");
  ASSERT_EQ(o.host_fallbacks.size(), 1u) << o.program;
  EXPECT_NE(o.host_fallbacks[0].find("not one compare of two parameters"), std::string::npos) << o.host_fallbacks[0];
}

// Runs without a device: every module above parses and evaluates (with its
// prepared arguments), so the device tests check what they claim.
TEST(CudaRoutineThunkTest, DeviceTestModulesParseAndEvaluate) {
  std::vector<Case> cases = AllCases();
  EXPECT_GT(cases.size(), 80u);
  for (const Case& c : cases) {
    std::vector<Literal> args;
    absl::StatusOr<Literal> expected = Expected(c.text, c.prepare, &args);
    EXPECT_TRUE(expected.ok()) << c.name << ": " << expected.status().message() << "\n" << c.text << c.prepare;
  }
}

}  // namespace
}  // namespace passlab
