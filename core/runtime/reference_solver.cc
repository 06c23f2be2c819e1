// The reference solver calls, in plain loops with f64 arithmetic: not
// LAPACK/BLAS (the "lapack"/"blas" algorithm, solver_runner.cc), so that the
// two check each other.
//   __lapack$potrf: Cholesky-Banachiewicz, row by row, reading only the
//     requested triangle; info is LAPACK's (1 + the first column whose pivot
//     is not positive, 0 otherwise). Past a failed pivot the factor goes on
//     with NaN, as XLA leaves it unspecified.
//   __blas$trsm: op(A) X = B or X op(A) = B by forward or back substitution,
//     one column (left side) or row (right side) of B at a time.
// Matrices are addressed through their layouts (any plain layout).
#include <cmath>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_internal.h"

namespace passlab::runtime_internal {
namespace {

// Offsets of a [batch.., rows, cols] array: per batch, per row, per column.
struct MatrixTables {
  std::vector<int64_t> batch, rows, cols;
  int64_t At(int64_t b, int64_t i, int64_t j) const { return batch[b] + rows[i] + cols[j]; }
};

MatrixTables Matrices(const Shape& s) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d + 2 < s.rank(); ++d) batch_dims.push_back(d);
  return MatrixTables{GroupOffsets(s, strides, batch_dims), GroupOffsets(s, strides, {s.rank() - 2}),
                      GroupOffsets(s, strides, {s.rank() - 1})};
}

class ReferenceCholeskyRunner : public ReferenceRunnerBase {
 public:
  ReferenceCholeskyRunner(const HloInstruction& inst, LibraryAlgorithm algorithm, CholeskyCall call)
      : ReferenceRunnerBase(inst, std::move(algorithm)),
        call_(std::move(call)),
        a_type_(inst.operand(0)->shape().element_type()),
        a_(Matrices(inst.operand(0)->shape())),
        factor_(Matrices(call_.factor_shape)) {}

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(CheckBuffers(buffers));
    const int64_t n = call_.n;
    const bool lower = call_.lower;
    void* factor = buffers[1];
    int32_t* info = static_cast<int32_t*>(buffers[2]);
    std::vector<double> l(n * n);
    for (int64_t b = 0; b < call_.batch; ++b) {
      // A's lower triangle as (i, j), i >= j: A[i][j] itself, or A[j][i] when
      // only the upper triangle is given.
      auto a = [&](int64_t i, int64_t j) {
        return ReadFloat(a_type_, buffers[0], lower ? a_.At(b, i, j) : a_.At(b, j, i));
      };
      std::fill(l.begin(), l.end(), 0.0);
      int32_t failed = 0;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j <= i; ++j) {
          double sum = a(i, j);
          for (int64_t p = 0; p < j; ++p) sum -= l[i * n + p] * l[j * n + p];
          if (i != j) {
            l[i * n + j] = sum / l[j * n + j];
            continue;
          }
          if (!(sum > 0) && failed == 0) failed = static_cast<int32_t>(i + 1);
          l[i * n + i] = sum > 0 ? std::sqrt(sum) : NAN;
        }
      }
      if (info != nullptr) info[b] = failed;
      // L (lower) or U = L^T (upper); the other triangle zero. Written after
      // reading A, which may share the buffer.
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double v = lower ? (j <= i ? l[i * n + j] : 0.0) : (i <= j ? l[j * n + i] : 0.0);
          WriteFloat(call_.factor_shape.element_type(), factor, factor_.At(b, i, j), v);
        }
      }
    }
    return absl::OkStatus();
  }

 private:
  CholeskyCall call_;
  PrimitiveType a_type_;
  MatrixTables a_, factor_;
};

class ReferenceTriangularSolveRunner : public ReferenceRunnerBase {
 public:
  ReferenceTriangularSolveRunner(const HloInstruction& inst, LibraryAlgorithm algorithm, TriangularSolveCall call)
      : ReferenceRunnerBase(inst, std::move(algorithm)),
        call_(std::move(call)),
        a_type_(inst.operand(0)->shape().element_type()),
        b_type_(inst.operand(1)->shape().element_type()),
        x_type_(inst.shape().element_type()),
        a_(Matrices(inst.operand(0)->shape())),
        b_(Matrices(inst.operand(1)->shape())),
        x_(Matrices(inst.shape())) {}

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(CheckBuffers(buffers));
    const TriangularSolveOptions& o = call_.options;
    const int64_t m = call_.m, n = call_.n, k = call_.k;
    // op(A) is transposed (ADJOINT is the transpose of a real matrix).
    const bool transposed = o.transpose_a != TriangularTranspose::kNoTranspose;
    // Left: op(A) x = b for each column. Right: X op(A) = B is
    // op(A)^T x = b for each row, so the matrix solved with is A transposed
    // once more.
    const bool solve_transposed = o.left_side ? transposed : !transposed;
    // The matrix solved with is lower triangular when A's triangle is lower
    // and it is not transposed, or upper and transposed.
    const bool forward = o.lower != solve_transposed;
    std::vector<double> t(k * k), x(m * n);
    for (int64_t batch = 0; batch < call_.batch; ++batch) {
      // T: the triangle of A that is read (the unit diagonal assumed when
      // asked), transposed when solve_transposed.
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          bool inside = o.lower ? j <= i : j >= i;
          double v = !inside ? 0.0 : (i == j && o.unit_diagonal ? 1.0 : ReadFloat(a_type_, buffers[0], a_.At(batch, i, j)));
          t[solve_transposed ? j * k + i : i * k + j] = v;
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) x[i * n + j] = ReadFloat(b_type_, buffers[1], b_.At(batch, i, j));
      }
      // Vector v of length k inside x: element e at x[start + e * step].
      int64_t vectors = o.left_side ? n : m;
      for (int64_t v = 0; v < vectors; ++v) {
        int64_t start = o.left_side ? v : v * n, step = o.left_side ? n : 1;
        for (int64_t s = 0; s < k; ++s) {
          int64_t e = forward ? s : k - 1 - s;
          double sum = x[start + e * step];
          if (forward) {
            for (int64_t p = 0; p < e; ++p) sum -= t[e * k + p] * x[start + p * step];
          } else {
            for (int64_t p = e + 1; p < k; ++p) sum -= t[e * k + p] * x[start + p * step];
          }
          x[start + e * step] = sum / t[e * k + e];
        }
      }
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) WriteFloat(x_type_, buffers[2], x_.At(batch, i, j), x[i * n + j]);
      }
    }
    return absl::OkStatus();
  }

 private:
  TriangularSolveCall call_;
  PrimitiveType a_type_, b_type_, x_type_;
  MatrixTables a_, b_, x_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceSolverRunner(const HloInstruction& inst,
                                                                               LibraryAlgorithm algorithm) {
  for (const HloInstruction* op : inst.operands()) RETURN_IF_ERROR(CheckPlainLayout(op->shape()));
  for (const Shape& s : LeafShapes(inst.shape())) RETURN_IF_ERROR(CheckPlainLayout(s));
  if (ClassifyLibraryCall(inst) == LibraryCallKind::kCholesky) {
    ASSIGN_OR_RETURN(CholeskyCall call, AnalyzeCholeskyCall(inst));
    return std::unique_ptr<LibraryCallRunner>(new ReferenceCholeskyRunner(inst, std::move(algorithm), std::move(call)));
  }
  ASSIGN_OR_RETURN(TriangularSolveCall call, AnalyzeTriangularSolveCall(inst));
  return std::unique_ptr<LibraryCallRunner>(
      new ReferenceTriangularSolveRunner(inst, std::move(algorithm), std::move(call)));
}

}  // namespace passlab::runtime_internal
