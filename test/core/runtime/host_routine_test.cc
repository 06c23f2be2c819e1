// The runtime's host routines (core/runtime/host_routine.h) against the
// reference evaluator on seeded random inputs: sort (single-key fast path,
// general comparators, NaN and signed-zero ordering, layouts), topk (ties,
// NaNs, smallest), fft (every type, odd lengths, 1-3 dimensions), cholesky
// (lower, upper, complex, not positive definite), triangular-solve (every
// option), rng-bit-generator (philox, three-fry, default; bit-exact) and
// rng-get-and-update-state.
// Forms without an implementation fail when the executable is created.
#include "core/runtime/host_routine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"
#include "core/backends/cpu/executable.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

// Every element of two literals (tuples element by element) with the same
// bits.
void ExpectSameBits(const Literal& want, const Literal& got, const std::string& where = "") {
  ASSERT_EQ(want.shape().IsTuple(), got.shape().IsTuple()) << where;
  if (want.shape().IsTuple()) {
    ASSERT_EQ(want.tuple_elements().size(), got.tuple_elements().size()) << where;
    for (size_t i = 0; i < want.tuple_elements().size(); ++i) {
      ExpectSameBits(want.tuple_elements()[i], got.tuple_elements()[i], StrCat(where, "{", i, "}"));
    }
    return;
  }
  ASSERT_EQ(want.element_count(), got.element_count()) << where;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    ASSERT_EQ(want.GetBits(i), got.GetBits(i)) << where << " element " << i;
  }
}

struct Both {
  Literal want, got;
  std::vector<KernelRecord> records;
};

// Runs `text` on the runtime (no kernel compiler: every instruction must be
// a routine or an alias) and on the evaluator.
absl::StatusOr<Both> RunBoth(const std::string& text, std::vector<Literal> args = {}, uint64_t seed = 1) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  if (args.empty()) args = MakeRandomArguments(*(*m)->entry_computation(), seed);
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**m, KernelProvider());
  if (!exe.ok()) return exe.status();
  Both b;
  absl::StatusOr<Literal> got = (*exe)->Run(args, &b.records);
  if (!got.ok()) return got.status();
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  if (!want.ok()) return want.status();
  b.got = std::move(*got);
  b.want = std::move(*want);
  return b;
}

void ExpectBitExact(const std::string& text, std::vector<Literal> args = {}, uint64_t seed = 1) {
  absl::StatusOr<Both> b = RunBoth(text, std::move(args), seed);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ExpectSameBits(b->want, b->got);
  for (const KernelRecord& r : b->records) EXPECT_EQ(r.kind, KernelKind::kRuntimeRoutine) << r.name;
}

void ExpectClose(const std::string& text, std::vector<Literal> args, double tol, const std::string& what = "") {
  absl::StatusOr<Both> b = RunBoth(text, std::move(args));
  ASSERT_TRUE(b.ok()) << what << ": " << b.status().message();
  absl::Status same = CompareLiterals(b->want, b->got, {.abs = tol, .rel = tol});
  EXPECT_TRUE(same.ok()) << what << ": " << same.message();
}

// Random floats of `shape` with NaN, -NaN, +-0 and +-inf planted.
Literal FloatsWithSpecials(const Shape& shape, uint64_t seed) {
  Literal l = MakeRandomLiteral(shape, seed);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                             0.0, -0.0, std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (int64_t i = 0; i < l.element_count(); i += 3) l.SetDouble(i, specials[(i / 3 + seed) % 6]);
  // Repeated values for ties.
  for (int64_t i = 1; i < l.element_count(); i += 5) l.SetDouble(i, 0.5);
  return l;
}

std::string SortModule(const std::string& type, const std::string& dims, const std::string& direction,
                       const std::string& comparison_type, int64_t dimension) {
  return StrCat("HloModule s\ncmp {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                "[] parameter(1)\n  ROOT c = pred[] compare(a, b), direction=", direction, comparison_type,
                "\n}\nENTRY e {\n  x = ", type, "[", dims, "] parameter(0)\n  ROOT s = ", type, "[", dims,
                "] sort(x), dimensions={", dimension, "}, to_apply=cmp\n}\n");
}

TEST(HostRoutineTest, SortsOneFloatKeyWithNanAndSignedZeroOrdering) {
  const Shape shape(PrimitiveType::kF32, {5, 24});
  for (const char* direction : {"LT", "GT"}) {
    for (const char* type : {", type=TOTALORDER", ""}) {
      for (int64_t dim : {0, 1}) {
        SCOPED_TRACE(StrCat(direction, type, " dim ", dim));
        ExpectBitExact(SortModule("f32", "5,24", direction, type, dim), {FloatsWithSpecials(shape, 3)});
      }
    }
  }
  // f64, bf16 and integer keys; swapped parameters (b < a).
  ExpectBitExact(SortModule("f64", "40", "LT", ", type=TOTALORDER", 0),
                 {FloatsWithSpecials(Shape(PrimitiveType::kF64, {40}), 5)});
  ExpectBitExact(SortModule("bf16", "3,16", "GT", ", type=TOTALORDER", 1),
                 {FloatsWithSpecials(Shape(PrimitiveType::kBF16, {3, 16}), 6)});
  ExpectBitExact(SortModule("s8", "4,33", "LT", "", 1), {}, 7);
  ExpectBitExact(SortModule("u16", "4,33", "GE", "", 0), {}, 8);
  ExpectBitExact(R"(HloModule swapped
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(b, a), direction=LT
}
ENTRY e {
  x = s32[3,20]{0,1} parameter(0)
  ROOT s = s32[3,20]{0,1} sort(x), dimensions={1}, to_apply=cmp
})");
}

TEST(HostRoutineTest, SortsByTheComparisonExpandersTotalOrderKey) {
  // What the pipelines make of compare(a, b), direction=GT, type=TOTALORDER:
  // one key per element, computed once (the single-key path).
  ExpectBitExact(R"(HloModule expanded
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  max = s32[] constant(2147483647)
  zero = s32[] constant(0)
  ia = s32[] bitcast-convert(a)
  na = pred[] compare(ia, zero), direction=LT, type=SIGNED
  ma = s32[] select(na, max, zero)
  ka = s32[] xor(ia, ma)
  ib = s32[] bitcast-convert(b)
  nb = pred[] compare(ib, zero), direction=LT, type=SIGNED
  mb = s32[] select(nb, max, zero)
  kb = s32[] xor(ib, mb)
  ROOT gt = pred[] compare(ka, kb), direction=GT, type=SIGNED
}
ENTRY e {
  x = f32[4,45] parameter(0)
  idx = s32[4,45] parameter(1)
  ROOT s = (f32[4,45], s32[4,45]) sort(x, idx), dimensions={1}, to_apply=cmp
})",
                 {FloatsWithSpecials(Shape(PrimitiveType::kF32, {4, 45}), 4),
                  MakeRandomLiteral(Shape(PrimitiveType::kS32, {4, 45}), 5, 1000)});
}

TEST(HostRoutineTest, SortsSeveralOperandsWithAGeneralComparator) {
  // StableSortExpander's tie breaker over an iota, on a column-major key.
  ExpectBitExact(R"(HloModule multi
cmp {
  k0 = s32[] parameter(0)
  k1 = s32[] parameter(1)
  v0 = f32[] parameter(2)
  v1 = f32[] parameter(3)
  i0 = s32[] parameter(4)
  i1 = s32[] parameter(5)
  lt = pred[] compare(k0, k1), direction=LT
  gt = pred[] compare(k1, k0), direction=LT
  same = pred[] compare(lt, gt), direction=EQ
  tie = pred[] compare(i0, i1), direction=LT
  ROOT r = pred[] select(same, tie, lt)
}
ENTRY e {
  k = s32[17,3]{0,1} parameter(0)
  v = f32[17,3] parameter(1)
  i = s32[17,3] parameter(2)
  ROOT s = (s32[17,3]{0,1}, f32[17,3], s32[17,3]) sort(k, v, i), dimensions={0}, to_apply=cmp
})");
  // Lexicographic: a u8 key, then a descending f16 one (through f32), with
  // and / or / not and a constant.
  ExpectBitExact(R"(HloModule lexicographic
cmp {
  a0 = u8[] parameter(0)
  a1 = u8[] parameter(1)
  b0 = f16[] parameter(2)
  b1 = f16[] parameter(3)
  c0 = c64[] parameter(4)
  c1 = c64[] parameter(5)
  lt = pred[] compare(a0, a1), direction=LT
  eq = pred[] compare(a0, a1), direction=EQ
  w0 = f32[] convert(b0)
  w1 = f32[] convert(b1)
  n0 = f32[] negate(w0)
  n1 = f32[] negate(w1)
  gt = pred[] compare(n0, n1), direction=LT, type=TOTALORDER
  t = pred[] constant(true)
  nt = pred[] not(t)
  tie = pred[] and(eq, gt)
  either = pred[] or(lt, tie)
  ROOT r = pred[] or(either, nt)
}
ENTRY e {
  a = u8[2,31] parameter(0)
  b = f16[2,31] parameter(1)
  c = c64[2,31] parameter(2)
  ROOT s = (u8[2,31], f16[2,31], c64[2,31]) sort(a, b, c), dimensions={1}, to_apply=cmp, is_stable=true
})",
                 {MakeRandomLiteral(Shape(PrimitiveType::kU8, {2, 31}), 9, 3),
                  FloatsWithSpecials(Shape(PrimitiveType::kF16, {2, 31}), 10),
                  MakeRandomLiteral(Shape(PrimitiveType::kC64, {2, 31}), 11)});
}

TEST(HostRoutineTest, SortWithAnUnsupportedComparatorIsUnimplemented) {
  absl::StatusOr<Both> b = RunBoth(R"(HloModule add
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  z = f32[] constant(0)
  ROOT c = pred[] compare(s, z), direction=LT
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=cmp
})");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsUnimplemented(b.status())) << b.status().message();
  EXPECT_NE(b.status().message().find("s (sort)"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("(add)"), std::string::npos) << b.status().message();
}

TEST(HostRoutineTest, TopkBreaksTiesByLowerIndexAndOrdersNans) {
  for (const char* largest : {"true", "false"}) {
    SCOPED_TRACE(largest);
    ExpectBitExact(StrCat(R"(HloModule topk
ENTRY e {
  x = f32[6,40] parameter(0)
  ROOT t = (f32[6,7], s32[6,7]) topk(x), k=7, largest=)",
                          largest, "\n}\n"),
                   {FloatsWithSpecials(Shape(PrimitiveType::kF32, {6, 40}), 12)});
    // Small integers: many ties.
    ExpectBitExact(StrCat(R"(HloModule topk_ints
ENTRY e {
  x = s32[3,2,25] parameter(0)
  ROOT t = (s32[3,2,25], s32[3,2,25]) topk(x), k=25, largest=)",
                          largest, "\n}\n"),
                   {MakeRandomLiteral(Shape(PrimitiveType::kS32, {3, 2, 25}), 13, 3)});
  }
  ExpectBitExact(R"(HloModule topk_u8
ENTRY e {
  x = u8[50] parameter(0)
  ROOT t = (u8[4], s32[4]) topk(x), k=4, largest=true
})");
}

TEST(HostRoutineTest, FftMatchesTheDftForEveryTypeAndOddLengths) {
  struct Case {
    const char* what;
    std::string text;
  };
  const Case cases[] = {
      {"fft c64 odd", "x = c64[4,15] parameter(0)\n  ROOT f = c64[4,15] fft(x), fft_type=FFT, fft_length={15}"},
      {"ifft c128 2d", "x = c128[3,5,7] parameter(0)\n  ROOT f = c128[3,5,7] fft(x), fft_type=IFFT, fft_length={5,7}"},
      {"fft c64 3d", "x = c64[2,3,4,6] parameter(0)\n  ROOT f = c64[2,3,4,6] fft(x), fft_type=FFT, fft_length={3,4,6}"},
      {"rfft f32 2d", "x = f32[2,9,10] parameter(0)\n  ROOT f = c64[2,9,6] fft(x), fft_type=RFFT, fft_length={9,10}"},
      {"rfft f64 odd", "x = f64[3,11] parameter(0)\n  ROOT f = c128[3,6] fft(x), fft_type=RFFT, fft_length={11}"},
      {"irfft c64 even", "x = c64[2,6,5] parameter(0)\n  ROOT f = f32[2,6,8] fft(x), fft_type=IRFFT, fft_length={6,8}"},
      {"irfft c128 odd", "x = c128[3,4] parameter(0)\n  ROOT f = f64[3,7] fft(x), fft_type=IRFFT, fft_length={7}"},
      {"irfft c64 3d", "x = c64[3,2,5,3] parameter(0)\n  ROOT f = f32[3,2,5,5] fft(x), fft_type=IRFFT, fft_length={2,5,5}"},
      {"layout", "x = c64[8,3]{0,1} parameter(0)\n  ROOT f = c64[8,3]{0,1} fft(x), fft_type=FFT, fft_length={3}"},
  };
  for (const Case& c : cases) ExpectClose(StrCat("HloModule fft\nENTRY e {\n  ", c.text, "\n}\n"), {}, 1e-4, c.what);
}

void SetReal(Literal& l, int64_t i, double v) {
  if (IsComplexType(l.shape().element_type())) {
    l.SetComplex(i, v);
  } else {
    l.SetDouble(i, v);
  }
}

// A batch of Hermitian positive definite matrices X X^H + n I.
Literal PositiveDefinite(PrimitiveType type, int64_t batch, int64_t n, uint64_t seed) {
  Literal x = MakeRandomLiteral(Shape(type, {batch, n, n}), seed);
  Literal a(Shape(type, {batch, n, n}));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        std::complex<double> s = i == j ? static_cast<double>(n) : 0.0;
        for (int64_t k = 0; k < n; ++k) {
          s += x.GetComplex((b * n + i) * n + k) * std::conj(x.GetComplex((b * n + j) * n + k));
        }
        if (IsComplexType(type)) {
          a.SetComplex((b * n + i) * n + j, s);
        } else {
          a.SetDouble((b * n + i) * n + j, s.real());
        }
      }
    }
  }
  return a;
}

TEST(HostRoutineTest, CholeskyLowerUpperComplexAndNotPositiveDefinite) {
  for (const char* type : {"f32", "f64", "c64", "c128"}) {
    for (const char* lower : {"true", "false"}) {
      PrimitiveType t = *PrimitiveTypeFromName(type);
      Literal a = PositiveDefinite(t, 3, 6, 14);
      // Batch member 1 is not positive definite: all NaN, as XLA defines.
      SetReal(a, (1 * 6 + 2) * 6 + 2, -50.0);
      ExpectClose(StrCat("HloModule c\nENTRY e {\n  a = ", type, "[3,6,6] parameter(0)\n  ROOT l = ", type,
                         "[3,6,6] cholesky(a), lower=", lower, "\n}\n"),
                  {std::move(a)}, 1e-4, StrCat(type, " lower=", lower));
    }
  }
  // A column-major operand.
  Literal batch = PositiveDefinite(PrimitiveType::kF32, 1, 5, 15);
  Literal a(Shape(PrimitiveType::kF32, {5, 5}));
  for (int64_t i = 0; i < 25; ++i) a.SetDouble(i, batch.GetDouble(i));
  ExpectClose("HloModule c\nENTRY e {\n  a = f32[5,5]{0,1} parameter(0)\n  ROOT l = f32[5,5] cholesky(a), lower=true\n}\n",
              {std::move(a)}, 1e-4, "layout");
}

TEST(HostRoutineTest, TriangularSolveEveryOption) {
  for (const char* type : {"f32", "c128"}) {
    for (bool left : {true, false}) {
      for (bool lower : {true, false}) {
        for (bool unit : {true, false}) {
          for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
            PrimitiveType t = *PrimitiveTypeFromName(type);
            // A well-conditioned triangle: the diagonal away from zero.
            Literal a = MakeRandomLiteral(Shape(t, {2, left ? 4 : 5, left ? 4 : 5}), 16);
            const int64_t k = left ? 4 : 5;
            for (int64_t b = 0; b < 2; ++b) {
              for (int64_t i = 0; i < k; ++i) SetReal(a, (b * k + i) * k + i, 3.0 + i);
            }
            std::string what = StrCat(type, " left=", left, " lower=", lower, " unit=", unit, " ", transpose);
            ExpectClose(StrCat("HloModule t\nENTRY e {\n  a = ", type, "[2,", k, ",", k, "] parameter(0)\n  b = ", type,
                               "[2,4,5] parameter(1)\n  ROOT x = ", type, "[2,4,5] triangular-solve(a, b), left_side=",
                               left ? "true" : "false", ", lower=", lower ? "true" : "false",
                               ", unit_diagonal=", unit ? "true" : "false", ", transpose_a=", transpose, "\n}\n"),
                        {std::move(a), MakeRandomLiteral(Shape(t, {2, 4, 5}), 17)}, 1e-4, what);
          }
        }
      }
    }
  }
}

TEST(HostRoutineTest, RngBitGeneratorIsBitExactForEveryAlgorithm) {
  const std::pair<const char*, const char*> cases[] = {
      {"rng_philox", "(u64[2], u32[3,5])"},      {"rng_philox", "(u64[3], u64[7])"},
      {"rng_philox", "(u64[3], u8[13])"},        {"rng_default", "(u64[2], s32[2,3,3])"},
      {"rng_three_fry", "(u64[2], u32[5,6])"},   {"rng_three_fry", "(u64[2], u32[3,5])"},
      {"rng_three_fry", "(u64[2], u64[4,3])"},   {"rng_three_fry", "(u64[2], u16[])"},
  };
  for (const auto& [algorithm, shape] : cases) {
    SCOPED_TRACE(StrCat(algorithm, " ", shape));
    std::string state = std::string(shape).substr(1, std::string(shape).find(',') - 1);
    ExpectBitExact(StrCat("HloModule r\nENTRY e {\n  s = ", state, " parameter(0)\n  ROOT r = ", shape,
                          " rng-bit-generator(s), algorithm=", algorithm, "\n}\n"),
                   {state == "u64[2]" ? Literal::Vector<uint64_t>({0x0123456789abcdefULL, ~uint64_t{0} - 3})
                                      : Literal::Vector<uint64_t>({42, ~uint64_t{0} - 1, 7})});
  }
}

TEST(HostRoutineTest, RngStateStartsAtTheEvaluatorsSeedAndAdvancesPerRun) {
  const std::string text = R"(HloModule s
ENTRY e {
  ROOT s = u64[2] rng-get-and-update-state(), delta=8
})";
  ExpectBitExact(text);
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**m, KernelProvider());
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  for (uint64_t run = 0; run < 3; ++run) {
    absl::StatusOr<Literal> got = (*exe)->Run({}, nullptr);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(got->GetBits(0), 42 + 8 * run);
    EXPECT_EQ(got->GetBits(1), 0u);
  }
}

TEST(HostRoutineTest, AnOpWithoutImplementationFailsWhenTheExecutableIsCreated) {
  absl::StatusOr<Both> b = RunBoth(R"(HloModule qr
ENTRY e {
  a = f32[5,3] parameter(0)
  ROOT qr = (f32[5,3], f32[3]) custom-call(a), custom_call_target="Qr"
})");
  ASSERT_FALSE(b.ok());
  EXPECT_TRUE(absl::IsUnimplemented(b.status())) << b.status().message();
  EXPECT_NE(b.status().message().find("qr (custom-call)"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("Qr"), std::string::npos) << b.status().message();
  // A routine's unsupported form names the instruction and the op.
  b = RunBoth(R"(HloModule topk
ENTRY e {
  x = c64[8] parameter(0)
  ROOT t = (c64[2], s32[2]) topk(x), k=2, largest=true
})");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("t (topk)"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace passlab
