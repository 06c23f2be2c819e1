// The solver calls (`__lapack$potrf`, `__blas$trsm`) on OpenBLAS against the
// evaluator: every algorithm ListAlgorithms offers matches the oracle, for
// both triangles, every transpose, both sides, unit diagonals and batches.
#include <gtest/gtest.h>

#include <cmath>

#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

// Deterministic values in [-1, 1].
double Value(uint64_t seed, int64_t i) {
  uint64_t s = (seed + 1) * 6364136223846793005ULL + static_cast<uint64_t>(i) * 1442695040888963407ULL;
  s ^= s >> 29;
  s *= 0xbf58476d1ce4e5b9ULL;
  return static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0;
}

// Batches of well-conditioned matrices: symmetric positive definite
// (x x^T + n I) or, for triangular solves, random with a dominant diagonal.
Literal Matrices(const Shape& shape, uint64_t seed, bool spd) {
  Literal l(Shape::Array(shape.element_type(), shape.dimensions()));
  int64_t rank = shape.rank(), m = shape.dimensions(rank - 2), n = shape.dimensions(rank - 1);
  int64_t batch = m * n == 0 ? 0 : l.element_count() / (m * n);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double v = Value(seed, b * m * n + i * n + j);
        if (spd) {
          v = 0;
          for (int64_t k = 0; k < n; ++k) v += Value(seed, b * n * n + i * n + k) * Value(seed, b * n * n + j * n + k);
        }
        if (i == j) v += spd ? static_cast<double>(n) : 4.0;
        l.SetDouble(b * m * n + i * n + j, v);
      }
    }
  }
  return l;
}

// Runs the module's root call with every listed algorithm on `args` and
// compares each result leaf with the evaluator's; returns the names listed.
std::vector<std::string> CheckAllAlgorithms(const std::string& text, const std::vector<Literal>& args, double tol) {
  std::vector<std::string> names;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return names;
  const HloInstruction* call = (*m)->entry_computation()->root_instruction();
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!want.ok()) return names;
  std::vector<Shape> leaves = LeafShapes(call->shape());
  absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*call);
  EXPECT_TRUE(algos.ok()) << algos.status().message();
  if (!algos.ok()) return names;
  for (const LibraryAlgorithm& a : *algos) {
    names.push_back(a.name);
    std::vector<std::vector<double>> storage;
    std::vector<void*> ptrs;
    auto add = [&](const Shape& s) {
      storage.emplace_back((s.byte_size() + 7) / 8 + 1, 0.0);
      ptrs.push_back(storage.back().data());
    };
    for (int64_t i = 0; i < call->operand_count(); ++i) {
      add(call->operand(i)->shape());
      EXPECT_TRUE(CopyLiteralToBuffer(args[i], call->operand(i)->shape(), ptrs.back()).ok());
    }
    for (const Shape& s : leaves) add(s);
    absl::StatusOr<int64_t> ns = RunLibraryCall(*call, a.id, ptrs);
    EXPECT_TRUE(ns.ok()) << a.name << ": " << ns.status().message();
    if (!ns.ok()) continue;
    for (size_t leaf = 0; leaf < leaves.size(); ++leaf) {
      absl::StatusOr<Literal> got = LiteralFromBuffer(leaves[leaf], ptrs[call->operand_count() + leaf]);
      EXPECT_TRUE(got.ok());
      if (!got.ok()) continue;
      const Literal& expected = call->shape().IsTuple() ? want->tuple_elements()[leaf] : *want;
      EXPECT_EQ(got->element_count(), expected.element_count());
      if (got->element_count() != expected.element_count()) continue;
      for (int64_t i = 0; i < got->element_count(); ++i) {
        double g = got->GetDouble(i), w = expected.GetDouble(i);
        EXPECT_LE(std::abs(g - w) / (1 + std::abs(w)), tol) << a.name << " leaf " << leaf << " element " << i;
      }
    }
  }
  return names;
}

std::string Potrf(const std::string& type, bool lower) {
  return StrCat("HloModule m\nENTRY e {\n  a = ", type, " parameter(0)\n  ROOT c = (", type,
                ", s32[2]) custom-call(a), custom_call_target=\"__lapack$potrf\", "
                "backend_config={\"cholesky_backend_config\":{\"lower\":",
                lower ? "true" : "false", "}}\n}\n");
}

TEST(SolverRunnerTest, PotrfBothTrianglesMatchTheEvaluator) {
  for (const std::string type : {"f32[2,5,5]", "f64[2,7,7]"}) {
    for (bool lower : {true, false}) {
      std::string text = Potrf(type, lower);
      auto m = ParseHloModule(text);
      ASSERT_TRUE(m.ok()) << m.status().message();
      std::vector<Literal> args;
      args.push_back(Matrices((*m)->entry_computation()->parameter_instruction(0)->shape(), 3, /*spd=*/true));
      std::vector<std::string> names = CheckAllAlgorithms(text, args, 1e-4);
      EXPECT_EQ(names, (std::vector<std::string>{"lapack", "reference"})) << type;
    }
  }
}

TEST(SolverRunnerTest, PotrfReportsTheFailingMinorLikeLapack) {
  // The second leading minor of [[1,2],[2,1]] is -3: info 2 from LAPACK and
  // from the evaluator alike (the factor is unspecified then).
  std::string text = R"(HloModule m
ENTRY e {
  a = f64[2,2] parameter(0)
  ROOT c = (f64[2,2], s32[]) custom-call(a), custom_call_target="__lapack$potrf",
      backend_config={"cholesky_backend_config":{"lower":true}}
})";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction* call = (*m)->entry_computation()->root_instruction();
  Literal a(Shape::Array(PrimitiveType::kF64, {2, 2}));
  for (int64_t i = 0; i < 4; ++i) a.SetDouble(i, (i == 0 || i == 3) ? 1.0 : 2.0);
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, {a});
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_EQ(want->tuple_elements()[1].GetInt(0), 2);
  std::vector<double> in(4), factor(4);
  int32_t info = -1;
  for (int64_t i = 0; i < 4; ++i) in[i] = a.GetDouble(i);
  std::vector<void*> ptrs = {in.data(), factor.data(), &info};
  absl::StatusOr<int64_t> ns = RunLibraryCall(*call, kSolverLibrary, ptrs);
  ASSERT_TRUE(ns.ok()) << ns.status().message();
  EXPECT_EQ(info, 2);
}

std::string Trsm(const std::string& a, const std::string& b, const std::string& options) {
  return StrCat("HloModule m\nENTRY e {\n  a = ", a, " parameter(0)\n  b = ", b, " parameter(1)\n  ROOT x = ", b,
                " custom-call(a, b), custom_call_target=\"__blas$trsm\", "
                "backend_config={\"triangular_solve_backend_config\":{",
                options, "}}\n}\n");
}

TEST(SolverRunnerTest, TrsmEveryOptionMatchesTheEvaluator) {
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          std::string a = left ? "f32[3,4,4]" : "f32[3,6,6]";
          std::string text = Trsm(a, "f32[3,4,6]",
                                  StrCat("\"left_side\":", left ? "true" : "false", ",\"lower\":",
                                         lower ? "true" : "false", ",\"unit_diagonal\":", unit ? "true" : "false",
                                         ",\"transpose_a\":\"", transpose, "\""));
          auto m = ParseHloModule(text);
          ASSERT_TRUE(m.ok()) << m.status().message();
          std::vector<Literal> args;
          args.push_back(Matrices((*m)->entry_computation()->parameter_instruction(0)->shape(), 5, false));
          args.push_back(Matrices((*m)->entry_computation()->parameter_instruction(1)->shape(), 6, false));
          std::vector<std::string> names = CheckAllAlgorithms(text, args, 1e-4);
          EXPECT_EQ(names, (std::vector<std::string>{"blas", "reference"})) << text;
        }
      }
    }
  }
}

TEST(SolverRunnerTest, ColumnMajorOperandsTakeTheReferenceOnly) {
  std::string text = Trsm("f64[4,4]{0,1}", "f64[4,2]", "\"left_side\":true,\"lower\":true");
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::vector<Literal> args;
  args.push_back(Matrices(Shape::Array(PrimitiveType::kF64, {4, 4}), 1, false));
  args.push_back(Matrices(Shape::Array(PrimitiveType::kF64, {4, 2}), 2, false));
  EXPECT_EQ(CheckAllAlgorithms(text, args, 1e-9), (std::vector<std::string>{"reference"}));
}

TEST(SolverRunnerTest, MalformedCallsNameTheInstruction) {
  auto m = ParseHloModule(Trsm("f32[4,4]", "f32[5,2]", "\"left_side\":true"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<TriangularSolveCall> call = AnalyzeTriangularSolveCall(*(*m)->entry_computation()->root_instruction());
  ASSERT_FALSE(call.ok());
  EXPECT_NE(std::string(call.status().message()).find("custom call x"), std::string::npos) << call.status().message();
}

}  // namespace
}  // namespace passlab
