// The solver calls on OpenBLAS: `__lapack$potrf` on LAPACK's ?potrf (the
// Fortran symbols OpenBLAS exports; LAPACK is column-major, so a row-major
// lower factor is LAPACK's upper one of the same bytes) and `__blas$trsm`
// on cblas_?trsm (row-major directly). Both run per matrix of the batch on
// row-major (default-layout) buffers; other layouts take the reference.
#include "core/runtime/library_call_internal.h"

#include <cblas.h>

#include <cmath>
#include <cstring>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

extern "C" {
// LAPACK (column-major), exported by OpenBLAS.
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
}

namespace passlab::runtime_internal {
namespace {

bool RowMajor(const Shape& s) { return !s.has_layout() || s.layout().IsDefault(); }

template <typename T>
void Potrf(char uplo, int n, T* a, int* info) {
  if constexpr (std::is_same_v<T, float>) {
    spotrf_(&uplo, &n, a, &n, info);
  } else {
    dpotrf_(&uplo, &n, a, &n, info);
  }
}

class PotrfRunner : public LibraryCallRunner {
 public:
  PotrfRunner(const HloInstruction& inst, CholeskyCall call) : call_(std::move(call)) {
    name_ = inst.name();
    algorithm_ = {kSolverLibrary, "lapack"};
    bytes_read_ = call_.factor_shape.byte_size();
    bytes_written_ = call_.factor_shape.byte_size() + 4 * call_.batch;
    flops_ = call_.batch * call_.n * call_.n * call_.n / 3;
    f64_ = call_.factor_shape.element_type() == PrimitiveType::kF64;
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    if (f64_) return RunTyped<double>(buffers);
    return RunTyped<float>(buffers);
  }

 private:
  template <typename T>
  absl::Status RunTyped(absl::Span<void* const> buffers) {
    const int64_t n = call_.n, nn = n * n;
    const T* a = static_cast<const T*>(buffers[0]);
    T* factor = static_cast<T*>(buffers[1]);
    int32_t* info = static_cast<int32_t*>(buffers[2]);
    if (nn * call_.batch > 0 && factor != a) std::memcpy(factor, a, sizeof(T) * nn * call_.batch);
    // Row-major lower (A = L L^T) is column-major upper on the same bytes.
    const char uplo = call_.lower ? 'U' : 'L';
    for (int64_t b = 0; b < call_.batch; ++b) {
      T* m = factor + b * nn;
      int lapack_info = 0;
      if (n > 0) Potrf<T>(uplo, static_cast<int>(n), m, &lapack_info);
      if (lapack_info < 0) {
        return absl::InternalError(StrCat(name_, ": ?potrf rejected argument ", -lapack_info));
      }
      info[b] = lapack_info;
      // The other triangle is zero (LAPACK leaves it as it was).
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (call_.lower ? j > i : j < i) m[i * n + j] = T(0);
        }
      }
    }
    return absl::OkStatus();
  }

  CholeskyCall call_;
  bool f64_ = false;
};

class TrsmRunner : public LibraryCallRunner {
 public:
  TrsmRunner(const HloInstruction& inst, TriangularSolveCall call) : call_(std::move(call)) {
    name_ = inst.name();
    algorithm_ = {kSolverLibrary, "blas"};
    bytes_read_ = inst.operand(0)->shape().byte_size() + inst.operand(1)->shape().byte_size();
    bytes_written_ = inst.shape().byte_size();
    flops_ = call_.batch * call_.m * call_.n * call_.k;
    f64_ = inst.shape().element_type() == PrimitiveType::kF64;
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    if (f64_) return RunTyped<double>(buffers);
    return RunTyped<float>(buffers);
  }

 private:
  template <typename T>
  absl::Status RunTyped(absl::Span<void* const> buffers) {
    const TriangularSolveOptions& o = call_.options;
    const int64_t m = call_.m, n = call_.n, k = call_.k;
    const T* a = static_cast<const T*>(buffers[0]);
    const T* b = static_cast<const T*>(buffers[1]);
    T* x = static_cast<T*>(buffers[2]);
    if (m * n * call_.batch > 0 && x != b) std::memcpy(x, b, sizeof(T) * m * n * call_.batch);
    if (m == 0 || n == 0) return absl::OkStatus();
    CBLAS_SIDE side = o.left_side ? CblasLeft : CblasRight;
    CBLAS_UPLO uplo = o.lower ? CblasLower : CblasUpper;
    CBLAS_TRANSPOSE trans = o.transpose_a == TriangularTranspose::kNoTranspose ? CblasNoTrans
                            : o.transpose_a == TriangularTranspose::kTranspose ? CblasTrans
                                                                               : CblasConjTrans;
    CBLAS_DIAG diag = o.unit_diagonal ? CblasUnit : CblasNonUnit;
    for (int64_t i = 0; i < call_.batch; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        cblas_strsm(CblasRowMajor, side, uplo, trans, diag, m, n, 1.0f, a + i * k * k, k, x + i * m * n, n);
      } else {
        cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, m, n, 1.0, a + i * k * k, k, x + i * m * n, n);
      }
    }
    return absl::OkStatus();
  }

  TriangularSolveCall call_;
  bool f64_ = false;
};

// Every operand and result leaf row-major.
bool AllRowMajor(const HloInstruction& inst) {
  for (const HloInstruction* op : inst.operands()) {
    if (!RowMajor(op->shape())) return false;
  }
  for (const Shape& leaf : LeafShapes(inst.shape())) {
    if (leaf.IsArray() && !RowMajor(leaf)) return false;
  }
  return true;
}

}  // namespace

bool SolverLibrarySupports(const HloInstruction& inst) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind || !IsSolverKind(*kind) || !AllRowMajor(inst)) return false;
  if (*kind == LibraryCallKind::kCholesky) {
    absl::StatusOr<CholeskyCall> call = AnalyzeCholeskyCall(inst);
    return call.ok() && call->n <= INT32_MAX;
  }
  return AnalyzeTriangularSolveCall(inst).ok();
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateSolverLibraryRunner(const HloInstruction& inst) {
  if (!SolverLibrarySupports(inst)) {
    return absl::UnimplementedError(StrCat(inst.name(), ": the solver library takes f32/f64 row-major matrices"));
  }
  if (ClassifyLibraryCall(inst) == LibraryCallKind::kCholesky) {
    ASSIGN_OR_RETURN(CholeskyCall call, AnalyzeCholeskyCall(inst));
    return std::unique_ptr<LibraryCallRunner>(new PotrfRunner(inst, std::move(call)));
  }
  ASSIGN_OR_RETURN(TriangularSolveCall call, AnalyzeTriangularSolveCall(inst));
  return std::unique_ptr<LibraryCallRunner>(new TrsmRunner(inst, std::move(call)));
}

}  // namespace passlab::runtime_internal
