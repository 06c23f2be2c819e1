// triangular-solve: op(A) X = B (left_side) or X op(A) = B per trailing
// matrix through BLAS ?trsm (cblas, row-major, from OpenBLAS), every XLA
// option mapped straight: left_side -> side, lower -> uplo, unit_diagonal
// -> diag, transpose_a NO_TRANSPOSE / TRANSPOSE / ADJOINT -> NoTrans /
// Trans / ConjTrans. Only A's referenced triangle is read.
#include <cblas.h>

#include <complex>
#include <limits>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_routine_internal.h"
#include "core/runtime/matrix_batch.h"

namespace passlab::routine_internal {
namespace {

template <typename T>
class TriangularSolveRoutine : public HostRoutine {
 public:
  TriangularSolveRoutine(const HloInstruction& inst)
      : a_shape_(inst.operand(0)->shape()), b_shape_(inst.operand(1)->shape()), result_(inst.shape()),
        options_(inst.attrs().triangular_solve) {
    m_ = result_.dimensions(result_.rank() - 2);
    n_ = result_.dimensions(result_.rank() - 1);
    k_ = options_.left_side ? m_ : n_;
    batch_ = m_ * n_ == 0 ? 0 : result_.element_count() / (m_ * n_);
  }

  int64_t flops() const override { return batch_ * m_ * n_ * k_; }

  absl::Status Run(absl::Span<void* const> buffers) const override {
    std::vector<T> a = ReadMatrices<T>(a_shape_, buffers[0]);
    std::vector<T> x = ReadMatrices<T>(b_shape_, buffers[1]);
    const CBLAS_SIDE side = options_.left_side ? CblasLeft : CblasRight;
    const CBLAS_UPLO uplo = options_.lower ? CblasLower : CblasUpper;
    const CBLAS_TRANSPOSE trans = options_.transpose_a == TriangularTranspose::kNoTranspose ? CblasNoTrans
                                  : options_.transpose_a == TriangularTranspose::kTranspose ? CblasTrans
                                                                                            : CblasConjTrans;
    const CBLAS_DIAG diag = options_.unit_diagonal ? CblasUnit : CblasNonUnit;
    const blasint m = static_cast<blasint>(m_), n = static_cast<blasint>(n_), k = static_cast<blasint>(k_);
    for (int64_t i = 0; i < batch_; ++i) {
      const T* am = a.data() + i * k_ * k_;
      T* xm = x.data() + i * m_ * n_;
      if constexpr (std::is_same_v<T, float>) {
        cblas_strsm(CblasRowMajor, side, uplo, trans, diag, m, n, 1.0f, am, k, xm, n);
      } else if constexpr (std::is_same_v<T, double>) {
        cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, m, n, 1.0, am, k, xm, n);
      } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        const std::complex<float> one(1);
        cblas_ctrsm(CblasRowMajor, side, uplo, trans, diag, m, n, &one, am, k, xm, n);
      } else {
        const std::complex<double> one(1);
        cblas_ztrsm(CblasRowMajor, side, uplo, trans, diag, m, n, &one, am, k, xm, n);
      }
    }
    WriteMatrices<T>(result_, x, buffers[2]);
    return absl::OkStatus();
  }

 private:
  Shape a_shape_, b_shape_, result_;
  TriangularSolveOptions options_;
  int64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateTriangularSolveRoutine(const HloInstruction& inst) {
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  const Shape& s = inst.shape();
  if (!s.IsArray() || s.rank() < 2 || a.rank() != s.rank() || b.dimensions() != s.dimensions()) {
    return Unimplemented(inst, StrCat("triangular-solve needs batches of matrices, not ", a.ToString(), ", ",
                                      b.ToString(), " -> ", s.ToString()));
  }
  const int64_t rank = s.rank();
  const int64_t k = inst.attrs().triangular_solve.left_side ? s.dimensions(rank - 2) : s.dimensions(rank - 1);
  if (a.dimensions(rank - 1) != k || a.dimensions(rank - 2) != k) {
    return Unimplemented(inst, StrCat("a ", a.ToString(), " is not ", k, " x ", k));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (s.dimensions(d) > std::numeric_limits<int>::max()) return Unimplemented(inst, "matrix too large");
  }
  switch (s.element_type()) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32: return std::unique_ptr<HostRoutine>(new TriangularSolveRoutine<float>(inst));
    case PrimitiveType::kF64: return std::unique_ptr<HostRoutine>(new TriangularSolveRoutine<double>(inst));
    case PrimitiveType::kC64:
      return std::unique_ptr<HostRoutine>(new TriangularSolveRoutine<std::complex<float>>(inst));
    case PrimitiveType::kC128:
      return std::unique_ptr<HostRoutine>(new TriangularSolveRoutine<std::complex<double>>(inst));
    default: return Unimplemented(inst, StrCat("triangular-solve of ", PrimitiveTypeName(s.element_type())));
  }
}

}  // namespace passlab::routine_internal
