// dot and convolution. Both pack their operands into working buffers of the
// accumulation type (double for floats, uint64 for integers so overflow wraps
// as XLA's does, complex<double> for complex) and run one blocked kernel:
// four output rows at a time against a panel of four output columns, the
// panel packed contiguously, rows split across threads.
#include <algorithm>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab::eval {
namespace {

constexpr int64_t kRows = 4;   // output rows per kernel call
constexpr int64_t kPanel = 4;  // output columns per packed weight panel

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// Element i of a literal as the working type T, with the common element
// types read directly.
template <typename T>
class Reader {
 public:
  explicit Reader(const Literal& l) : l_(l), type_(l.shape().element_type()), data_(l.untyped_data()) {}
  T operator()(int64_t i) const {
    if constexpr (std::is_same_v<T, double>) {
      if (type_ == PrimitiveType::kF32) return reinterpret_cast<const float*>(data_)[i];
      if (type_ == PrimitiveType::kF64) return reinterpret_cast<const double*>(data_)[i];
      return l_.GetDouble(i);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
      return static_cast<uint64_t>(l_.GetInt(i));
    } else {
      return l_.GetComplex(i);
    }
  }

 private:
  const Literal& l_;
  PrimitiveType type_;
  const uint8_t* data_;
};

template <typename T>
void WriteElement(Literal& out, int64_t i, T v) {
  if constexpr (std::is_same_v<T, double>) {
    if (out.shape().element_type() == PrimitiveType::kF32) {
      reinterpret_cast<float*>(out.untyped_data())[i] = static_cast<float>(v);
    } else {
      out.SetDouble(i, v);
    }
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    out.SetInt(i, static_cast<int64_t>(v));
  } else {
    out.SetComplex(i, v);
  }
}

// A working buffer whose every element is written before it is read (no
// zero fill: these reach tens of megabytes).
template <typename T>
std::unique_ptr<T[]> Uninitialized(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// Where each element goes in (or comes from) a packed buffer: the offset of
// index idx is the sum over dimensions d of tables[d][idx[d]].
using OffsetTables = std::vector<std::vector<int64_t>>;

OffsetTables LinearTables(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  OffsetTables t(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    for (int64_t i = 0; i < dims[d]; ++i) t[d].push_back(i * strides[d]);
  }
  return t;
}

// Calls fn(base, linear) for each run of the innermost dimension: base is
// the offset of the run's other dimensions, linear its first element.
template <typename Fn>
void ForEachRun(const std::vector<int64_t>& dims, const OffsetTables& tables, Fn&& fn) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (n == 0) return;
  if (dims.empty()) {
    fn(int64_t{0}, int64_t{0});
    return;
  }
  int64_t rank = static_cast<int64_t>(dims.size()), inner = dims.back();
  Index idx(rank, 0);
  for (int64_t linear = 0; linear < n; linear += inner) {
    int64_t base = 0;
    for (int64_t d = 0; d + 1 < rank; ++d) base += tables[d][idx[d]];
    fn(base, linear);
    for (int64_t k = rank - 2; k >= 0; --k) {
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
    }
  }
}

// dst[offset(idx)] = src[idx] for every element.
template <typename T>
void PackInto(const Literal& src, const OffsetTables& tables, T* dst) {
  const std::vector<int64_t>& dims = src.shape().dimensions();
  if (dims.empty()) {
    if (src.element_count() == 1) dst[0] = Reader<T>(src)(0);
    return;
  }
  const std::vector<int64_t>& last = tables.back();
  int64_t inner = dims.back();
  if constexpr (std::is_same_v<T, double>) {
    if (src.shape().element_type() == PrimitiveType::kF32) {
      const float* p = src.data<float>().data();
      ForEachRun(dims, tables, [&](int64_t base, int64_t linear) {
        for (int64_t i = 0; i < inner; ++i) dst[base + last[i]] = p[linear + i];
      });
      return;
    }
  }
  Reader<T> read(src);
  ForEachRun(dims, tables, [&](int64_t base, int64_t linear) {
    for (int64_t i = 0; i < inner; ++i) dst[base + last[i]] = read(linear + i);
  });
}

// out[idx] = src[offset(idx)] for every element.
template <typename T>
void UnpackFrom(const T* src, const OffsetTables& tables, Literal& out) {
  const std::vector<int64_t>& dims = out.shape().dimensions();
  if (dims.empty()) {
    if (out.element_count() == 1) WriteElement(out, 0, src[0]);
    return;
  }
  const std::vector<int64_t>& last = tables.back();
  int64_t inner = dims.back();
  ForEachRun(dims, tables, [&](int64_t base, int64_t linear) {
    for (int64_t i = 0; i < inner; ++i) WriteElement(out, linear + i, src[base + last[i]]);
  });
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PASSLAB_EVAL_HAS_AVX_KERNEL 1
// The double kernel on 256-bit vectors: the same multiplies and adds in the
// same order per lane as the portable one (no FMA), so results are identical
// bit for bit whichever runs.
__attribute__((target("avx"))) void KernelDoubleAvx(int64_t taps, const double* const* x, const double* panel,
                                                    int64_t tap_stride, int64_t depth, double acc[kRows][kPanel]) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  for (int64_t t = 0; t < taps; ++t) {
    const double* x0 = x[t * kRows];
    const double* x1 = x[t * kRows + 1];
    const double* x2 = x[t * kRows + 2];
    const double* x3 = x[t * kRows + 3];
    const double* w = panel + t * tap_stride;
    for (int64_t c = 0; c < depth; ++c, w += kPanel) {
      __m256d wv = _mm256_loadu_pd(w);
      a0 = _mm256_add_pd(a0, _mm256_mul_pd(_mm256_broadcast_sd(x0 + c), wv));
      a1 = _mm256_add_pd(a1, _mm256_mul_pd(_mm256_broadcast_sd(x1 + c), wv));
      a2 = _mm256_add_pd(a2, _mm256_mul_pd(_mm256_broadcast_sd(x2 + c), wv));
      a3 = _mm256_add_pd(a3, _mm256_mul_pd(_mm256_broadcast_sd(x3 + c), wv));
    }
  }
  _mm256_storeu_pd(acc[0], a0);
  _mm256_storeu_pd(acc[1], a1);
  _mm256_storeu_pd(acc[2], a2);
  _mm256_storeu_pd(acc[3], a3);
}

bool HasAvx() {
  static const bool has = __builtin_cpu_supports("avx");
  return has;
}
#endif

// acc[r][j] = sum over taps t < taps and c < depth of x[t][r][c] * w[t][c][j]
// with w[t] = panel + t * tap_stride, each w[t][c] a run of kPanel values.
template <typename T>
void Kernel(int64_t taps, const T* const* x, const T* panel, int64_t tap_stride, int64_t depth, T acc[kRows][kPanel]) {
  if constexpr (std::is_same_v<T, double>) {
#ifdef PASSLAB_EVAL_HAS_AVX_KERNEL
    if (HasAvx()) {
      KernelDoubleAvx(taps, x, panel, tap_stride, depth, acc);
      return;
    }
#endif
    typedef double v2d __attribute__((vector_size(16)));
    v2d a00 = {0, 0}, a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00;
    for (int64_t t = 0; t < taps; ++t) {
      const double* x0 = x[t * kRows];
      const double* x1 = x[t * kRows + 1];
      const double* x2 = x[t * kRows + 2];
      const double* x3 = x[t * kRows + 3];
      const double* w = panel + t * tap_stride;
      for (int64_t c = 0; c < depth; ++c, w += kPanel) {
        v2d w0, w1;
        std::memcpy(&w0, w, sizeof(w0));
        std::memcpy(&w1, w + 2, sizeof(w1));
        v2d b0 = {x0[c], x0[c]}, b1 = {x1[c], x1[c]}, b2 = {x2[c], x2[c]}, b3 = {x3[c], x3[c]};
        a00 += b0 * w0;
        a01 += b0 * w1;
        a10 += b1 * w0;
        a11 += b1 * w1;
        a20 += b2 * w0;
        a21 += b2 * w1;
        a30 += b3 * w0;
        a31 += b3 * w1;
      }
    }
    const v2d* rows[kRows][2] = {{&a00, &a01}, {&a10, &a11}, {&a20, &a21}, {&a30, &a31}};
    for (int64_t r = 0; r < kRows; ++r) {
      for (int h = 0; h < 2; ++h) {
        acc[r][2 * h] = (*rows[r][h])[0];
        acc[r][2 * h + 1] = (*rows[r][h])[1];
      }
    }
  } else {
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t j = 0; j < kPanel; ++j) acc[r][j] = T{};
    }
    for (int64_t t = 0; t < taps; ++t) {
      const T* w = panel + t * tap_stride;
      for (int64_t c = 0; c < depth; ++c, w += kPanel) {
        for (int64_t r = 0; r < kRows; ++r) {
          T xv = x[t * kRows + r][c];
          for (int64_t j = 0; j < kPanel; ++j) acc[r][j] += xv * w[j];
        }
      }
    }
  }
}

// ---------------------------------------------------------------- dot

template <typename T>
Literal DotTyped(const HloInstruction& inst, const Literal& lhs, const Literal& rhs, int threads) {
  const DotDimensionNumbers& d = inst.attrs().dot_dnums;
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < rank; ++i) {
      if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
    }
    return out;
  };
  std::vector<int64_t> lf = free_dims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
  std::vector<int64_t> rf = free_dims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
  auto product = [](const Shape& s, const std::vector<int64_t>& dims) {
    int64_t p = 1;
    for (int64_t x : dims) p *= s.dimensions(x);
    return p;
  };
  int64_t B = product(ls, d.lhs_batch_dimensions), M = product(ls, lf), K = product(ls, d.lhs_contracting_dimensions),
          N = product(rs, rf), Np = RoundUp(N, kPanel);
  // Logical index -> position in the canonical [batch][free][contracting]
  // (lhs) and [batch][contracting][free] (rhs) orders.
  auto canonical_strides = [](const Shape& s, const std::vector<std::vector<int64_t>>& groups) {
    std::vector<int64_t> strides(s.rank(), 0);
    int64_t stride = 1;
    for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
      for (auto it = g->rbegin(); it != g->rend(); ++it) {
        strides[*it] = stride;
        stride *= s.dimensions(*it);
      }
    }
    return strides;
  };
  std::vector<int64_t> lstr = canonical_strides(ls, {d.lhs_batch_dimensions, lf, d.lhs_contracting_dimensions});
  std::unique_ptr<T[]> L = Uninitialized<T>(B * M * K);
  PackInto(lhs, LinearTables(ls.dimensions(), lstr), L.get());
  // rhs as [batch][K][N], then as panels [batch][N/kPanel][K][kPanel].
  std::vector<int64_t> rstr = canonical_strides(rs, {d.rhs_batch_dimensions, d.rhs_contracting_dimensions, rf});
  std::unique_ptr<T[]> flat = Uninitialized<T>(B * K * N);
  PackInto(rhs, LinearTables(rs.dimensions(), rstr), flat.get());
  std::unique_ptr<T[]> R = Uninitialized<T>(B * Np * K);
  if (N % kPanel != 0) std::fill(R.get(), R.get() + B * Np * K, T{});
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t k = 0; k < K; ++k) {
      const T* row = flat.get() + (b * K + k) * N;
      for (int64_t n = 0; n < N; ++n) R[((b * (Np / kPanel) + n / kPanel) * K + k) * kPanel + n % kPanel] = row[n];
    }
  }
  flat.reset();
  Literal out(inst.shape());
  std::vector<T> zeros(static_cast<size_t>(std::max<int64_t>(K, 1)), T{});
  int64_t blocks_per_batch = (M + kRows - 1) / kRows;
  auto work = [&](int64_t begin, int64_t end) {
    const T* x[kRows];
    T acc[kRows][kPanel];
    for (int64_t blk = begin; blk < end; ++blk) {
      int64_t b = blk / blocks_per_batch, m0 = blk % blocks_per_batch * kRows;
      for (int64_t r = 0; r < kRows; ++r) x[r] = m0 + r < M ? L.get() + (b * M + m0 + r) * K : zeros.data();
      for (int64_t p = 0; p < Np / kPanel; ++p) {
        Kernel<T>(1, x, R.get() + (b * (Np / kPanel) + p) * K * kPanel, 0, K, acc);
        for (int64_t r = 0; r < kRows && m0 + r < M; ++r) {
          for (int64_t j = 0; j < kPanel && p * kPanel + j < N; ++j) {
            WriteElement(out, (b * M + m0 + r) * N + p * kPanel + j, acc[r][j]);
          }
        }
      }
    }
  };
  ParallelFor(B * blocks_per_batch, B * M * N * K, threads, work);
  return out;
}

// ---------------------------------------------------------------- convolution

template <typename T>
absl::StatusOr<Literal> ConvolutionTyped(const HloInstruction& inst, const Literal& lhs, const Literal& rhs, int threads) {
  const ConvolutionDimensionNumbers& d = *inst.attrs().conv_dnums;
  const Window& w = inst.window();
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const Shape& os = inst.shape();
  int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
  if (static_cast<int64_t>(w.dimensions.size()) != spatial) {
    return absl::InvalidArgumentError("the window does not have one dimension per spatial dimension");
  }
  int64_t fgc = inst.attrs().feature_group_count, bgc = inst.attrs().batch_group_count;
  int64_t C = ls.dimensions(d.input_feature_dimension), N_in = ls.dimensions(d.input_batch_dimension);
  int64_t I = rs.dimensions(d.kernel_input_feature_dimension), O = rs.dimensions(d.kernel_output_feature_dimension);
  int64_t N_out = os.dimensions(d.output_batch_dimension);
  int64_t G = fgc * bgc;
  if (fgc < 1 || bgc < 1 || O % G != 0 || (fgc > 1 && C != I * fgc) || (bgc > 1 && N_in != N_out * bgc)) {
    return absl::InvalidArgumentError(StrCat("inconsistent convolution: ", C, " input features, kernel ", I, "x", O,
                                             ", feature_group_count=", fgc, ", batch_group_count=", bgc));
  }
  int64_t Og = O / G, Op = RoundUp(Og, kPanel), panels = Op / kPanel;
  std::vector<int64_t> in_sp(spatial), k_sp(spatial), out_sp(spatial);
  int64_t S_in = 1, S_out = 1, taps = 1;
  for (int64_t s = 0; s < spatial; ++s) {
    in_sp[s] = ls.dimensions(d.input_spatial_dimensions[s]);
    k_sp[s] = rs.dimensions(d.kernel_spatial_dimensions[s]);
    out_sp[s] = os.dimensions(d.output_spatial_dimensions[s]);
    S_in *= in_sp[s];
    S_out *= out_sp[s];
    taps *= k_sp[s];
  }
  std::vector<int64_t> in_sp_stride = RowMajorStrides(in_sp), k_sp_stride = RowMajorStrides(k_sp),
                       out_sp_stride = RowMajorStrides(out_sp);
  // Input packed channels-last: [batch][spatial][C].
  std::unique_ptr<T[]> X = Uninitialized<T>(N_in * S_in * C);
  {
    std::vector<int64_t> strides(ls.rank(), 0);
    strides[d.input_batch_dimension] = S_in * C;
    strides[d.input_feature_dimension] = 1;
    for (int64_t k = 0; k < spatial; ++k) strides[d.input_spatial_dimensions[k]] = in_sp_stride[k] * C;
    PackInto(lhs, LinearTables(ls.dimensions(), strides), X.get());
  }
  // Kernel packed as [group][panel][tap][I][kPanel], taps in window order
  // (reversed dimensions read the kernel backwards).
  // Zeros only where panels run past the group's output features.
  std::unique_ptr<T[]> W = Uninitialized<T>(G * panels * taps * I * kPanel);
  if (Og % kPanel != 0) std::fill(W.get(), W.get() + G * panels * taps * I * kPanel, T{});
  {
    OffsetTables tables(rs.rank());
    for (int64_t k = 0; k < spatial; ++k) {
      for (int64_t i = 0; i < k_sp[k]; ++i) {
        int64_t tap = w.dimensions[k].window_reversal ? k_sp[k] - 1 - i : i;
        tables[d.kernel_spatial_dimensions[k]].push_back(tap * k_sp_stride[k] * I * kPanel);
      }
    }
    for (int64_t c = 0; c < I; ++c) tables[d.kernel_input_feature_dimension].push_back(c * kPanel);
    for (int64_t o = 0; o < O; ++o) {
      int64_t g = o / Og, j = o % Og;
      tables[d.kernel_output_feature_dimension].push_back((g * panels + j / kPanel) * taps * I * kPanel + j % kPanel);
    }
    PackInto(rhs, tables, W.get());
  }
  // For each spatial dim: input coordinate of (output coordinate, tap), or -1.
  std::vector<std::vector<int64_t>> coord(spatial);
  for (int64_t s = 0; s < spatial; ++s) {
    const WindowDimension& wd = w.dimensions[s];
    coord[s].assign(out_sp[s] * k_sp[s], -1);
    for (int64_t o = 0; o < out_sp[s]; ++o) {
      for (int64_t k = 0; k < k_sp[s]; ++k) {
        int64_t pos = o * wd.stride - wd.padding_low + k * wd.window_dilation;
        if (pos < 0 || pos % wd.base_dilation != 0) continue;
        pos /= wd.base_dilation;
        if (pos < in_sp[s]) coord[s][o * k_sp[s] + k] = pos;
      }
    }
  }
  int64_t rows = N_out * S_out, blocks = (rows + kRows - 1) / kRows;
  std::unique_ptr<T[]> Y = Uninitialized<T>(rows * O);
  std::vector<T> zeros(static_cast<size_t>(std::max<int64_t>(C, 1)), T{});
  auto work = [&](int64_t begin, int64_t end) {
    // Offsets into X of (tap, row), -1 for padding.
    std::vector<int64_t> offset(taps * kRows);
    std::vector<const T*> x(taps * kRows);
    std::vector<int64_t> out_coord(spatial), k_coord(spatial);
    T acc[kRows][kPanel];
    for (int64_t blk = begin; blk < end; ++blk) {
      for (int64_t r = 0; r < kRows; ++r) {
        int64_t row = blk * kRows + r;
        if (row >= rows) {
          for (int64_t t = 0; t < taps; ++t) offset[t * kRows + r] = -1;
          continue;
        }
        int64_t n = row / S_out, so = row % S_out;
        for (int64_t s = 0; s < spatial; ++s) out_coord[s] = so / out_sp_stride[s] % out_sp[s];
        for (int64_t t = 0; t < taps; ++t) {
          int64_t pos = 0;
          for (int64_t s = 0; s < spatial && pos >= 0; ++s) {
            int64_t c = coord[s][out_coord[s] * k_sp[s] + t / k_sp_stride[s] % k_sp[s]];
            pos = c < 0 ? -1 : pos + c * in_sp_stride[s];
          }
          offset[t * kRows + r] = pos < 0 ? -1 : (n * S_in + pos) * C;
        }
      }
      for (int64_t g = 0; g < G; ++g) {
        int64_t shift = (bgc > 1 ? g * N_out * S_in * C : 0) + (fgc > 1 ? g * I : 0);
        for (int64_t i = 0; i < taps * kRows; ++i) x[i] = offset[i] < 0 ? zeros.data() : X.get() + offset[i] + shift;
        for (int64_t p = 0; p < panels; ++p) {
          Kernel<T>(taps, x.data(), W.get() + (g * panels + p) * taps * I * kPanel, I * kPanel, I, acc);
          for (int64_t r = 0; r < kRows && blk * kRows + r < rows; ++r) {
            for (int64_t j = 0; j < kPanel && p * kPanel + j < Og; ++j) {
              Y[(blk * kRows + r) * O + g * Og + p * kPanel + j] = acc[r][j];
            }
          }
        }
      }
    }
  };
  ParallelFor(blocks, rows * O * taps * I, threads, work);
  Literal out(os);
  std::vector<int64_t> out_strides(os.rank(), 0);
  out_strides[d.output_batch_dimension] = S_out * O;
  out_strides[d.output_feature_dimension] = 1;
  for (int64_t k = 0; k < spatial; ++k) out_strides[d.output_spatial_dimensions[k]] = out_sp_stride[k] * O;
  UnpackFrom(Y.get(), LinearTables(os.dimensions(), out_strides), out);
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const HloInstruction& inst, Operands ops, int threads) {
  if (!inst.attrs().sparsity.empty()) return absl::UnimplementedError("sparse dot is not evaluated");
  PrimitiveType t = inst.shape().element_type();
  if (IsComplexType(t)) return DotTyped<std::complex<double>>(inst, *ops[0], *ops[1], threads);
  if (IsIntegralType(t) || t == PrimitiveType::kPred) return DotTyped<uint64_t>(inst, *ops[0], *ops[1], threads);
  return DotTyped<double>(inst, *ops[0], *ops[1], threads);
}

absl::StatusOr<Literal> EvalConvolution(const HloInstruction& inst, Operands ops, int threads) {
  if (!inst.attrs().conv_dnums.has_value()) return absl::InvalidArgumentError("convolution without dim_labels");
  PrimitiveType t = inst.shape().element_type();
  if (IsComplexType(t)) return ConvolutionTyped<std::complex<double>>(inst, *ops[0], *ops[1], threads);
  if (IsIntegralType(t) || t == PrimitiveType::kPred) return ConvolutionTyped<uint64_t>(inst, *ops[0], *ops[1], threads);
  return ConvolutionTyped<double>(inst, *ops[0], *ops[1], threads);
}

}  // namespace passlab::eval
