// cholesky: A = L L^H (lower) or U^H U per trailing matrix through LAPACK's
// ?potrf (the Fortran symbols OpenBLAS exports). LAPACK is column-major: a
// row-major lower factor is the column-major upper factor of the same bytes
// (A's bytes read column-major are A^T = conj(L) L^T), so `lower` asks
// LAPACK for 'U' and upper for 'L'. As XLA defines it (and the evaluator
// computes it), the other triangle is zero and a matrix that is not
// positive definite becomes all NaN.
#include <cmath>
#include <complex>
#include <limits>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_routine_internal.h"
#include "core/runtime/matrix_batch.h"

extern "C" {
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void cpotrf_(const char* uplo, const int* n, std::complex<float>* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, std::complex<double>* a, const int* lda, int* info);
}

namespace passlab::routine_internal {
namespace {

template <typename T>
void Potrf(char uplo, int n, T* a, int* info) {
  if constexpr (std::is_same_v<T, float>) {
    spotrf_(&uplo, &n, a, &n, info);
  } else if constexpr (std::is_same_v<T, double>) {
    dpotrf_(&uplo, &n, a, &n, info);
  } else if constexpr (std::is_same_v<T, std::complex<float>>) {
    cpotrf_(&uplo, &n, a, &n, info);
  } else {
    zpotrf_(&uplo, &n, a, &n, info);
  }
}

template <typename T>
class CholeskyRoutine : public HostRoutine {
 public:
  CholeskyRoutine(const HloInstruction& inst)
      : name_(inst.name()), operand_(inst.operand(0)->shape()), result_(inst.shape()),
        lower_(inst.attrs().cholesky_lower) {
    n_ = result_.dimensions(result_.rank() - 1);
    batch_ = n_ == 0 ? 0 : result_.element_count() / (n_ * n_);
  }

  int64_t flops() const override { return batch_ * n_ * n_ * n_ / 3; }

  absl::Status Run(absl::Span<void* const> buffers) const override {
    std::vector<T> a = ReadMatrices<T>(operand_, buffers[0]);
    const int64_t nn = n_ * n_;
    const char uplo = lower_ ? 'U' : 'L';
    for (int64_t b = 0; b < batch_; ++b) {
      T* m = a.data() + b * nn;
      int info = 0;
      Potrf<T>(uplo, static_cast<int>(n_), m, &info);
      if (info < 0) return absl::InternalError(StrCat(name_, ": ?potrf rejected argument ", -info));
      for (int64_t i = 0; i < n_; ++i) {
        for (int64_t j = 0; j < n_; ++j) {
          if (info > 0) {
            m[i * n_ + j] = T(std::numeric_limits<double>::quiet_NaN());
          } else if (lower_ ? j > i : j < i) {
            m[i * n_ + j] = T(0);
          }
        }
      }
    }
    WriteMatrices<T>(result_, a, buffers[1]);
    return absl::OkStatus();
  }

 private:
  std::string name_;
  Shape operand_, result_;
  bool lower_;
  int64_t n_ = 0, batch_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateCholeskyRoutine(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  if (!s.IsArray() || s.rank() < 2 || s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2) ||
      inst.operand(0)->shape().dimensions() != s.dimensions()) {
    return Unimplemented(inst, StrCat("cholesky needs batches of square matrices, not ", s.ToString()));
  }
  if (s.dimensions(s.rank() - 1) > std::numeric_limits<int>::max()) return Unimplemented(inst, "matrix too large");
  switch (s.element_type()) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32: return std::unique_ptr<HostRoutine>(new CholeskyRoutine<float>(inst));
    case PrimitiveType::kF64: return std::unique_ptr<HostRoutine>(new CholeskyRoutine<double>(inst));
    case PrimitiveType::kC64: return std::unique_ptr<HostRoutine>(new CholeskyRoutine<std::complex<float>>(inst));
    case PrimitiveType::kC128: return std::unique_ptr<HostRoutine>(new CholeskyRoutine<std::complex<double>>(inst));
    default: return Unimplemented(inst, StrCat("cholesky of ", PrimitiveTypeName(s.element_type())));
  }
}

}  // namespace passlab::routine_internal
