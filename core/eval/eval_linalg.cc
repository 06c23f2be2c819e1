// Linear algebra and FFT: cholesky, triangular-solve (in double or
// complex<double>, batched over leading dimensions) and fft (a direct DFT
// per transformed dimension: exact enough for an oracle, O(n^2)), and
// XLA's Householder QR custom calls (real types, in double).
#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

using Complex = std::complex<double>;

std::vector<Complex> ReadComplex(const Literal& l) {
  std::vector<Complex> v(l.element_count());
  for (int64_t i = 0, count = l.element_count(); i < count; ++i) v[i] = l.GetComplex(i);
  return v;
}

void WriteComplex(const std::vector<Complex>& v, Literal& out) {
  for (int64_t i = 0, count = out.element_count(); i < count; ++i) out.SetComplex(i, v[i]);
}

double Conj(double x) { return x; }
Complex Conj(Complex x) { return std::conj(x); }
double RealPart(double x) { return x; }
double RealPart(Complex x) { return x.real(); }

// A = L L^H (lower) or U^H U (upper), per trailing matrix; the other
// triangle is zero. Not positive definite: the matrix becomes NaN.
template <typename T>
void Cholesky(std::vector<T>& a, int64_t batch, int64_t n, bool lower) {
  for (int64_t b = 0; b < batch; ++b) {
    T* m = a.data() + b * n * n;
    // Work on the lower form: L[i][j] = m[i][j] (lower) or conj(m[j][i]).
    auto at = [&](int64_t i, int64_t j) -> T { return lower ? m[i * n + j] : Conj(m[j * n + i]); };
    std::vector<T> l(n * n, T{});
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      double d = RealPart(at(j, j));
      for (int64_t k = 0; k < j; ++k) d -= std::norm(l[j * n + k]);
      if (!(d > 0)) {
        ok = false;
        break;
      }
      l[j * n + j] = std::sqrt(d);
      for (int64_t i = j + 1; i < n; ++i) {
        T s = at(i, j);
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * Conj(l[j * n + k]);
        l[i * n + j] = s / l[j * n + j];
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T v = lower ? l[i * n + j] : Conj(l[j * n + i]);
        m[i * n + j] = ok ? v : T(std::nan(""));
      }
    }
  }
}

// Solves op(A) X = B (left_side) or X op(A) = B, A triangular per options.
template <typename T>
void TriangularSolve(const std::vector<T>& a, std::vector<T>& b, int64_t batch, int64_t m, int64_t n,
                     const TriangularSolveOptions& o) {
  int64_t k = o.left_side ? m : n;  // order of A
  for (int64_t bt = 0; bt < batch; ++bt) {
    const T* am = a.data() + bt * k * k;
    T* bm = b.data() + bt * m * n;
    // op(A) explicitly, only the referenced triangle of A.
    std::vector<T> opa(k * k, T{});
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        bool referenced = o.lower ? j <= i : j >= i;
        if (!referenced) continue;
        T v = i == j && o.unit_diagonal ? T(1) : am[i * k + j];
        switch (o.transpose_a) {
          case TriangularTranspose::kNoTranspose: opa[i * k + j] = v; break;
          case TriangularTranspose::kTranspose: opa[j * k + i] = v; break;
          case TriangularTranspose::kAdjoint: opa[j * k + i] = Conj(v); break;
        }
      }
    }
    bool op_lower = o.lower == (o.transpose_a == TriangularTranspose::kNoTranspose);
    if (o.left_side) {
      // Columns of X independently: op(A) x = b.
      for (int64_t col = 0; col < n; ++col) {
        for (int64_t s = 0; s < k; ++s) {
          int64_t i = op_lower ? s : k - 1 - s;
          T v = bm[i * n + col];
          for (int64_t j = 0; j < k; ++j) {
            if (j != i && (op_lower ? j < i : j > i)) v -= opa[i * k + j] * bm[j * n + col];
          }
          bm[i * n + col] = v / opa[i * k + i];
        }
      }
    } else {
      // Rows of X: x op(A) = b, i.e. sum_i x[i] opa[i][j] = b[j].
      for (int64_t row = 0; row < m; ++row) {
        for (int64_t s = 0; s < k; ++s) {
          int64_t j = op_lower ? k - 1 - s : s;
          T v = bm[row * n + j];
          for (int64_t i = 0; i < k; ++i) {
            if (i != j && (op_lower ? i > j : i < j)) v -= bm[row * n + i] * opa[i * k + j];
          }
          bm[row * n + j] = v / opa[j * k + j];
        }
      }
    }
  }
}

// In-place DFT along dimension `dim` of a row-major complex array.
void Dft(std::vector<Complex>& v, const std::vector<int64_t>& dims, int64_t dim, bool inverse) {
  int64_t n = dims[dim];
  if (n == 0) return;
  int64_t inner = 1, outer = 1;
  for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
  for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
  std::vector<Complex> twiddle(n), line(n);
  for (int64_t k = 0; k < n; ++k) {
    double angle = (inverse ? 2 : -2) * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    twiddle[k] = {std::cos(angle), std::sin(angle)};
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      Complex* base = v.data() + o * n * inner + in;
      for (int64_t k = 0; k < n; ++k) {
        Complex s = 0;
        for (int64_t j = 0; j < n; ++j) s += base[j * inner] * twiddle[(j * k) % n];
        line[k] = inverse ? s / static_cast<double>(n) : s;
      }
      for (int64_t k = 0; k < n; ++k) base[k * inner] = line[k];
    }
  }
}

absl::StatusOr<Literal> Fft(const HloInstruction& inst, const Literal& x) {
  const Shape& shape = inst.shape();
  const std::vector<int64_t>& len = inst.attrs().fft_length;
  int64_t rank = x.shape().rank(), k = static_cast<int64_t>(len.size());
  if (k == 0 || k > rank) return absl::InvalidArgumentError("fft_length must name 1..rank dimensions");
  FftType type = inst.attrs().fft_type;
  std::vector<int64_t> dims = x.shape().dimensions();
  if (type == FftType::kRfft) {
    std::vector<Complex> v = ReadComplex(x);
    for (int64_t d = rank - k; d < rank; ++d) Dft(v, dims, d, false);
    // Keep the first n/2+1 entries of the last dimension.
    Literal out(shape);
    int64_t last = dims.back(), kept = shape.dimensions(rank - 1);
    for (int64_t i = 0, count = out.element_count(); i < count; ++i) {
      out.SetComplex(i, v[i / kept * last + i % kept]);
    }
    return out;
  }
  if (type == FftType::kIrfft) {
    // Inverse over the leading transformed dims on the half spectrum, then a
    // complex-to-real inverse along the last one using Hermitian symmetry.
    std::vector<Complex> v = ReadComplex(x);
    for (int64_t d = rank - k; d < rank - 1; ++d) Dft(v, dims, d, true);
    int64_t half = dims.back(), n = len.back();
    std::vector<int64_t> full_dims = dims;
    full_dims.back() = n;
    int64_t rows = half == 0 ? 0 : static_cast<int64_t>(v.size()) / half;
    std::vector<Complex> full(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        full[r * n + j] = j < half ? v[r * half + j] : std::conj(v[r * half + (n - j)]);
      }
    }
    Dft(full, full_dims, rank - 1, true);
    Literal out(shape);
    for (int64_t i = 0, count = out.element_count(); i < count; ++i) out.SetDouble(i, full[i].real());
    return out;
  }
  std::vector<Complex> v = ReadComplex(x);
  for (int64_t d = rank - k; d < rank; ++d) Dft(v, dims, d, type == FftType::kIfft);
  Literal out(shape);
  WriteComplex(v, out);
  return out;
}

template <typename T>
std::vector<T> Read(const Literal& l) {
  if constexpr (std::is_same_v<T, double>) {
    return ToDoubles(l);
  } else {
    return ReadComplex(l);
  }
}

template <typename T>
void Write(const std::vector<T>& v, Literal& out) {
  if constexpr (std::is_same_v<T, double>) {
    FromDoubles(v, out);
  } else {
    WriteComplex(v, out);
  }
}

template <typename T>
absl::StatusOr<Literal> Matrices(const HloInstruction& inst, Operands ops) {
  const Shape& shape = inst.shape();
  int64_t rank = shape.rank();
  if (rank < 2) return absl::InvalidArgumentError("needs matrices (rank >= 2)");
  int64_t m = shape.dimensions(rank - 2), n = shape.dimensions(rank - 1);
  int64_t batch = m * n == 0 ? 0 : shape.element_count() / (m * n);
  Literal out(shape);
  if (inst.opcode() == HloOpcode::kCholesky) {
    if (m != n) return absl::InvalidArgumentError("cholesky needs square matrices");
    std::vector<T> a = Read<T>(*ops[0]);
    Cholesky(a, batch, n, inst.attrs().cholesky_lower);
    Write(a, out);
    return out;
  }
  std::vector<T> a = Read<T>(*ops[0]), b = Read<T>(*ops[1]);
  TriangularSolve(a, b, batch, m, n, inst.attrs().triangular_solve);
  Write(b, out);
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalLinearAlgebra(const HloInstruction& inst, Operands ops) {
  if (inst.opcode() == HloOpcode::kFft) return Fft(inst, *ops[0]);
  if (IsComplexType(inst.shape().element_type())) return Matrices<Complex>(inst, ops);
  return Matrices<double>(inst, ops);
}

}  // namespace passlab::eval

// ---------------------------------------------------------------- Householder QR

namespace passlab::eval {
namespace {

// The reflector of column j of the m x n matrix `a` (rows j..m-1), LAPACK's
// dlarfg: H = I - tau v v^T with v[j] = 1 maps the column to beta e_j.
//   alpha = a[j][j], sigma = sum_{i>j} a[i][j]^2, mu = sqrt(alpha^2 + sigma)
//   beta = -sign(alpha) mu (sign(0) = +1), tau = (beta - alpha) / beta,
//   v[i] = a[i][j] / (alpha - beta) for i > j;
// sigma == 0: H = I (tau = 0, beta = alpha, v's tail zero).
void HouseholderQr(double* a, double* taus, int64_t m, int64_t n) {
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    double alpha = a[j * n + j], sigma = 0;
    for (int64_t i = j + 1; i < m; ++i) sigma += a[i * n + j] * a[i * n + j];
    double tau = 0, beta = alpha;
    if (sigma != 0) {
      double mu = std::sqrt(alpha * alpha + sigma);
      beta = alpha >= 0 ? -mu : mu;
      tau = (beta - alpha) / beta;
      for (int64_t i = j + 1; i < m; ++i) a[i * n + j] /= alpha - beta;
    }
    // The trailing columns: a -= tau v (v^T a).
    for (int64_t c = j + 1; c < n; ++c) {
      double dot = a[j * n + c];
      for (int64_t i = j + 1; i < m; ++i) dot += a[i * n + j] * a[i * n + c];
      a[j * n + c] -= tau * dot;
      for (int64_t i = j + 1; i < m; ++i) a[i * n + c] -= tau * a[i * n + j] * dot;
    }
    a[j * n + j] = beta;
    taus[j] = tau;
  }
}

// Q = H_0 H_1 ... H_{k-1}, its first n columns, from the reflectors below
// the diagonal of the m x n matrix `a` (orgqr): applied right to left to
// the first n columns of the identity.
void HouseholderProduct(const double* a, const double* taus, double* q, int64_t m, int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t c = 0; c < n; ++c) q[i * n + c] = i == c ? 1 : 0;
  }
  for (int64_t j = k - 1; j >= 0; --j) {
    for (int64_t c = 0; c < n; ++c) {
      double dot = q[j * n + c];
      for (int64_t i = j + 1; i < m; ++i) dot += a[i * n + j] * q[i * n + c];
      q[j * n + c] -= taus[j] * dot;
      for (int64_t i = j + 1; i < m; ++i) q[i * n + c] -= taus[j] * a[i * n + j] * dot;
    }
  }
}

}  // namespace

absl::StatusOr<Literal> EvalHouseholderCall(const HloInstruction& inst, Operands ops, EvalContext&) {
  const std::string& target = inst.custom_call_target();
  const bool qr = target == "Qr";
  const size_t want_operands = qr ? 1 : 2;
  if (ops.size() != want_operands || !ops[0]->shape().IsArray() || ops[0]->shape().rank() < 2) {
    return absl::InvalidArgumentError(StrCat("custom call \"", target, "\" (", inst.name(), ") takes ",
                                             want_operands, " operand(s), the first a batch of matrices"));
  }
  const Shape& a_shape = ops[0]->shape();
  if (!IsFloatingPointType(a_shape.element_type())) {
    return absl::UnimplementedError(StrCat("custom call \"", target, "\" (", inst.name(), ") of ",
                                           PrimitiveTypeName(a_shape.element_type())));
  }
  const int64_t rank = a_shape.rank();
  const int64_t m = a_shape.dimensions(rank - 2), n = a_shape.dimensions(rank - 1);
  const int64_t batch = m * n == 0 ? 0 : a_shape.element_count() / (m * n);
  std::vector<double> a = ToDoubles(*ops[0]);
  if (qr) {
    const int64_t k = std::min(m, n);
    if (!inst.shape().IsTuple() || inst.shape().tuple_shapes().size() != 2) {
      return absl::InvalidArgumentError(StrCat("custom call \"Qr\" (", inst.name(), ") must return (a, taus)"));
    }
    std::vector<double> taus(batch * k);
    for (int64_t b = 0; b < batch; ++b) HouseholderQr(a.data() + b * m * n, taus.data() + b * k, m, n);
    Literal a_out(inst.shape().tuple_shapes(0)), taus_out(inst.shape().tuple_shapes(1));
    if (a_out.element_count() != static_cast<int64_t>(a.size()) ||
        taus_out.element_count() != static_cast<int64_t>(taus.size())) {
      return absl::InvalidArgumentError(StrCat("custom call \"Qr\" (", inst.name(), "): result shape ",
                                               inst.shape().ToString(), " does not fit ", a_shape.ToString()));
    }
    FromDoubles(a, a_out);
    FromDoubles(taus, taus_out);
    return Literal::Tuple({std::move(a_out), std::move(taus_out)});
  }
  const Shape& taus_shape = ops[1]->shape();
  const int64_t k = taus_shape.rank() == rank - 1 ? taus_shape.dimensions(rank - 2) : -1;
  if (k < 0 || k > n || n > m || batch * k != taus_shape.element_count() ||
      inst.shape().element_count() != a_shape.element_count()) {
    return absl::InvalidArgumentError(StrCat("custom call \"", target, "\" (", inst.name(),
                                             ") needs a[..., m, n] with m >= n and taus[..., k] with k <= n, got ",
                                             a_shape.ToString(), " and ", taus_shape.ToString()));
  }
  std::vector<double> taus = ToDoubles(*ops[1]);
  std::vector<double> q(a.size());
  for (int64_t b = 0; b < batch; ++b) {
    HouseholderProduct(a.data() + b * m * n, taus.data() + b * k, q.data() + b * m * n, m, n, k);
  }
  Literal out(inst.shape());
  FromDoubles(q, out);
  return out;
}

}  // namespace passlab::eval
