// `__blas$gemm` on OpenBLAS (algorithm "blas") or oneDNN's sgemm ("onednn",
// f32 compute only). oneDNN's runs on the OpenMP threads its convolutions
// use: OpenBLAS's own threads, woken while those still spin after a
// convolution, share the cores with them, and a [8,1000]x[1000,512] gemm
// that takes 0.14 ms alone took 0.3-2.7 ms inside the ResNet-18 step (70-90
// us on oneDNN's). Each operand is viewed as a batch of matrices
// ([batch][rows][cols] with the dimension groups of the dot dimension
// numbers); a view whose offsets form arithmetic progressions with a unit
// stride on one side is handed to cblas_?gemm as is (transposed when its
// rows are the contiguous side), anything else (other layouts, bf16/f16) is
// packed into a row-major temporary of the compute type first. The result is
// written in place when its layout allows (computing C^T = B^T A^T for a
// column-major result), else through a temporary. beta, bias and the
// activation epilogue follow XLA: D = act(alpha*A*B + beta*C + bias). An
// operand without batch dimensions (GemmBroadcastFoldingRewriter's form) is
// read with batch stride 0.
#include "core/runtime/library_call_internal.h"

#include <cblas.h>
#include <dnnl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab::runtime_internal {
namespace {

// Offsets of one operand's (batch, rows, cols) groups.
struct Tables {
  std::vector<int64_t> batch, rows, cols;
};

Tables MakeTables(const Shape& s, const std::vector<int64_t>& b, const std::vector<int64_t>& r,
                  const std::vector<int64_t>& c) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  return Tables{GroupOffsets(s, strides, b), GroupOffsets(s, strides, r), GroupOffsets(s, strides, c)};
}

// How a [batch][rows][cols] operand reaches BLAS.
struct MatrixPlan {
  bool direct = false;  // the buffer itself; otherwise a packed row-major copy
  bool trans = false;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

MatrixPlan PlanMatrix(const Tables& t, bool same_type) {
  MatrixPlan p;
  int64_t rows = t.rows.size(), cols = t.cols.size();
  std::optional<int64_t> sb = OffsetProgression(t.batch), sr = OffsetProgression(t.rows),
                         sc = OffsetProgression(t.cols);
  if (same_type && sb && sr && sc) {
    p.batch_stride = *sb;
    if (cols <= 1 || *sc == 1) {
      p.ld = rows > 1 ? *sr : std::max<int64_t>(cols, 1);
      p.direct = p.ld >= std::max<int64_t>(cols, 1);
    } else if (rows <= 1 || *sr == 1) {
      p.trans = true;
      p.ld = cols > 1 ? *sc : std::max<int64_t>(rows, 1);
      p.direct = p.ld >= std::max<int64_t>(rows, 1);
    }
  }
  if (!p.direct) {
    p.trans = false;
    p.ld = std::max<int64_t>(cols, 1);
    // One packed matrix serves every batch of an operand without batch
    // dimensions (a folded broadcast).
    p.batch_stride = t.batch.size() > 1 ? rows * cols : 0;
  }
  return p;
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
  }
  return out;
}

std::vector<int64_t> Range(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t i = begin; i < end; ++i) out.push_back(i);
  return out;
}

double Gelu(double x) {
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// Row-major C = alpha * op(A) op(B) + beta * C on oneDNN.
absl::Status DnnGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                     const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (k == 0) {  // C = beta * C (oneDNN rejects an empty inner dimension)
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.0f : beta * c[i * ldc + j];
    }
    return absl::OkStatus();
  }
  dnnl_status_t status = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success) {
    return absl::InternalError(StrCat("oneDNN's sgemm failed (status ", static_cast<int>(status), ") for m=", m,
                                      " n=", n, " k=", k));
  }
  return absl::OkStatus();
}

template <typename T>
void Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc) {
  CBLAS_TRANSPOSE transa = ta ? CblasTrans : CblasNoTrans, transb = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

template <typename T>
class BlasGemmRunner : public LibraryCallRunner {
 public:
  BlasGemmRunner(const HloInstruction& inst, GemmCall call, bool dnn) : call_(std::move(call)), dnn_(dnn) {
    name_ = inst.name();
    algorithm_ = dnn ? LibraryAlgorithm{kGemmDnn, "onednn"} : LibraryAlgorithm{kGemmBlas, "blas"};
    constexpr PrimitiveType kT = std::is_same_v<T, float> ? PrimitiveType::kF32 : PrimitiveType::kF64;
    const DotDimensionNumbers& d = call_.config.dot_dimension_numbers;
    const Shape& ls = inst.operand(0)->shape();
    const Shape& rs = inst.operand(1)->shape();
    lhs_type_ = ls.element_type();
    rhs_type_ = rs.element_type();
    out_type_ = call_.result_shape.element_type();
    lhs_ = MakeTables(ls, d.lhs_batch_dimensions, FreeDims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions),
                      d.lhs_contracting_dimensions);
    rhs_ = MakeTables(rs, d.rhs_batch_dimensions, d.rhs_contracting_dimensions,
                      FreeDims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions));
    int64_t nb = std::max(d.lhs_batch_dimensions.size(), d.rhs_batch_dimensions.size());
    int64_t nm = ls.rank() - d.lhs_batch_dimensions.size() - d.lhs_contracting_dimensions.size();
    int64_t rank = call_.result_shape.rank();
    auto out_tables = [&](const Shape& s) {
      return MakeTables(s, Range(0, nb), Range(nb, nb + nm), Range(nb + nm, rank));
    };
    out_ = out_tables(call_.result_shape);
    if (call_.c_operand >= 0) {
      c_shape_ = inst.operand(call_.c_operand)->shape();
      c_ = out_tables(c_shape_);
    }
    if (call_.bias_operand >= 0) bias_type_ = inst.operand(call_.bias_operand)->shape().element_type();
    a_plan_ = PlanMatrix(lhs_, lhs_type_ == kT);
    b_plan_ = PlanMatrix(rhs_, rhs_type_ == kT);
    // The result: row-major (unit stride along n) or column-major (unit
    // stride along m, computed as C^T = B^T A^T), else a temporary.
    std::optional<int64_t> sb = OffsetProgression(out_.batch), sm = OffsetProgression(out_.rows),
                           sn = OffsetProgression(out_.cols);
    int64_t m = call_.m, n = call_.n;
    if (out_type_ == kT && sb && sm && sn) {
      out_batch_stride_ = *sb;
      if (n <= 1 || *sn == 1) {
        ldc_ = m > 1 ? *sm : std::max<int64_t>(n, 1);
        out_direct_ = ldc_ >= std::max<int64_t>(n, 1);
      }
      if (!out_direct_ && (m <= 1 || *sm == 1)) {
        ldc_ = n > 1 ? *sn : std::max<int64_t>(m, 1);
        out_direct_ = out_transposed_ = ldc_ >= std::max<int64_t>(m, 1);
      }
    }
    if (!out_direct_) {
      out_transposed_ = false;
      ldc_ = std::max<int64_t>(n, 1);
      out_batch_stride_ = m * n;
    }
    int64_t batch = call_.batch;
    if (!a_plan_.direct) a_packed_.resize(lhs_.batch.size() * m * call_.k);
    if (!b_plan_.direct) b_packed_.resize(rhs_.batch.size() * call_.k * n);
    if (!out_direct_) out_temp_.resize(batch * m * n);
    flops_ = 2 * batch * m * n * call_.k;
    for (const HloInstruction* op : inst.operands()) bytes_read_ += op->shape().byte_size();
    bytes_written_ = call_.result_shape.byte_size();
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    int64_t operands = static_cast<int64_t>(call_.c_operand >= 0) + static_cast<int64_t>(call_.bias_operand >= 0) + 2;
    if (static_cast<int64_t>(buffers.size()) < operands + 1 || buffers[operands] == nullptr) {
      return absl::InvalidArgumentError(StrCat(name_, ": expected ", operands, " operand buffers and a result buffer"));
    }
    int64_t batch = call_.batch, m = call_.m, n = call_.n, k = call_.k;
    if (batch * m * n == 0) return absl::OkStatus();
    const T* a = a_plan_.direct ? static_cast<const T*>(buffers[0]) : Pack(buffers[0], lhs_type_, lhs_, a_packed_);
    const T* b = b_plan_.direct ? static_cast<const T*>(buffers[1]) : Pack(buffers[1], rhs_type_, rhs_, b_packed_);
    T* out = out_direct_ ? static_cast<T*>(buffers[operands]) : out_temp_.data();
    T beta = 0;
    if (call_.c_operand >= 0) {
      beta = static_cast<T>(call_.config.beta);
      LoadC(buffers[call_.c_operand], buffers[operands], out);
    }
    T alpha = static_cast<T>(call_.config.alpha_real);
    for (int64_t i = 0; i < batch; ++i) {
      const T* ai = a + i * a_plan_.batch_stride;
      const T* bi = b + i * b_plan_.batch_stride;
      T* ci = out + i * out_batch_stride_;
      if (out_transposed_) {
        RETURN_IF_ERROR(Multiply(!b_plan_.trans, !a_plan_.trans, n, m, k, alpha, bi, b_plan_.ld, ai, a_plan_.ld, beta,
                                 ci, ldc_));
      } else {
        RETURN_IF_ERROR(Multiply(a_plan_.trans, b_plan_.trans, m, n, k, alpha, ai, a_plan_.ld, bi, b_plan_.ld, beta,
                                 ci, ldc_));
      }
    }
    ApplyEpilogue(call_.bias_operand >= 0 ? buffers[call_.bias_operand] : nullptr, out);
    if (!out_direct_) Unpack(buffers[operands]);
    return absl::OkStatus();
  }

 private:
  absl::Status Multiply(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                        const T* b, int64_t ldb, T beta, T* c, int64_t ldc) const {
    if constexpr (std::is_same_v<T, float>) {
      if (dnn_) return DnnGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    }
    Gemm<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return absl::OkStatus();
  }

  // Offset of element (b, m, n) of the result as BLAS wrote it.
  int64_t OutOffset(int64_t b, int64_t m, int64_t n) const {
    if (!out_direct_) return (b * call_.m + m) * call_.n + n;
    return out_.batch[b] + out_.rows[m] + out_.cols[n];
  }

  const T* Pack(const void* src, PrimitiveType type, const Tables& t, std::vector<T>& dst) {
    int64_t rows = t.rows.size(), cols = t.cols.size();
    T* p = dst.data();
    for (size_t b = 0; b < t.batch.size(); ++b) {
      for (int64_t r = 0; r < rows; ++r) {
        int64_t base = t.batch[b] + t.rows[r];
        T* row = p + (static_cast<int64_t>(b) * rows + r) * cols;
        for (int64_t c = 0; c < cols; ++c) row[c] = static_cast<T>(ReadFloat(type, src, base + t.cols[c]));
      }
    }
    return p;
  }

  // out = C (beta * C is BLAS's part), skipped when C already is the result
  // buffer with the same placement (in-place accumulation). C of the
  // compute type is copied through typed pointers (a row at a time where
  // both sides are contiguous along n): read element by element through
  // ReadFloat, ResNet-50's [2048,1000] weight-gradient gemm with beta = 1
  // spent 5 of its 5.5 ms here.
  void LoadC(const void* c, const void* result_buffer, T* out) {
    PrimitiveType ct = c_shape_.element_type();
    if (out_direct_ && c == result_buffer && c_.batch == out_.batch && c_.rows == out_.rows && c_.cols == out_.cols &&
        ct == out_type_) {
      return;
    }
    const int64_t n_size = call_.n;
    if (ct == out_type_) {
      const T* src = static_cast<const T*>(c);
      const bool rows_contiguous = ColsContiguous(c_) && OutRowsContiguous();
      for (int64_t b = 0; b < call_.batch; ++b) {
        for (int64_t m = 0; m < call_.m; ++m) {
          const T* from = src + c_.batch[b] + c_.rows[m];
          if (rows_contiguous) {
            std::memcpy(out + OutOffset(b, m, 0), from, n_size * sizeof(T));
            continue;
          }
          for (int64_t n = 0; n < n_size; ++n) out[OutOffset(b, m, n)] = from[c_.cols[n]];
        }
      }
      return;
    }
    for (int64_t b = 0; b < call_.batch; ++b) {
      for (int64_t m = 0; m < call_.m; ++m) {
        for (int64_t n = 0; n < n_size; ++n) {
          out[OutOffset(b, m, n)] = static_cast<T>(ReadFloat(ct, c, c_.batch[b] + c_.rows[m] + c_.cols[n]));
        }
      }
    }
  }

  // Whether the result as BLAS writes it (the buffer or the temporary) is
  // contiguous along n.
  bool OutRowsContiguous() const { return !out_direct_ || (!out_transposed_ && ColsContiguous(out_)); }

  // Whether a table's n group is contiguous (offsets 0, 1, 2, ...).
  static bool ColsContiguous(const Tables& t) {
    std::optional<int64_t> s = OffsetProgression(t.cols);
    return t.cols.size() <= 1 || (s.has_value() && *s == 1);
  }

  // D = act(D + bias), the bias along the result's minor logical
  // dimension. Rows contiguous along n (a row-major result, or the
  // temporary) are walked through one pointer with the bias indexed by n
  // alone when each row starts at a multiple of the bias' length.
  void ApplyEpilogue(const void* bias, T* out) {
    GemmEpilogue e = call_.config.epilogue;
    bool relu = e == GemmEpilogue::kRelu || e == GemmEpilogue::kBiasRelu;
    bool gelu = e == GemmEpilogue::kGelu || e == GemmEpilogue::kBiasGelu;
    if (bias == nullptr && !relu && !gelu) return;
    int64_t last = call_.result_shape.rank() == 0 ? 1 : call_.result_shape.dimensions().back();
    std::vector<T> bias_values(last, T{0});
    if (bias != nullptr) {
      for (int64_t i = 0; i < last; ++i) bias_values[i] = static_cast<T>(ReadFloat(bias_type_, bias, i));
    }
    auto finish = [&](T x) {
      if (relu) x = std::max<T>(x, 0);
      if (gelu) x = static_cast<T>(Gelu(x));
      return x;
    };
    const int64_t n_size = call_.n;
    const bool rows_contiguous = OutRowsContiguous();
    if (rows_contiguous && last > 0 && n_size % last == 0) {
      std::vector<T> row_bias(n_size);
      for (int64_t n = 0; n < n_size; ++n) row_bias[n] = bias_values[n % last];
      for (int64_t b = 0; b < call_.batch; ++b) {
        for (int64_t m = 0; m < call_.m; ++m) {
          T* row = out + OutOffset(b, m, 0);
          for (int64_t n = 0; n < n_size; ++n) row[n] = finish(row[n] + row_bias[n]);
        }
      }
      return;
    }
    for (int64_t b = 0; b < call_.batch; ++b) {
      for (int64_t m = 0; m < call_.m; ++m) {
        int64_t row = (b * call_.m + m) * n_size;
        for (int64_t n = 0; n < n_size; ++n) {
          T& v = out[OutOffset(b, m, n)];
          v = finish(v + bias_values[(row + n) % last]);
        }
      }
    }
  }

  void Unpack(void* result) {
    for (int64_t b = 0; b < call_.batch; ++b) {
      for (int64_t m = 0; m < call_.m; ++m) {
        const T* row = out_temp_.data() + (b * call_.m + m) * call_.n;
        for (int64_t n = 0; n < call_.n; ++n) {
          WriteFloat(out_type_, result, out_.batch[b] + out_.rows[m] + out_.cols[n], row[n]);
        }
      }
    }
  }

  GemmCall call_;
  bool dnn_ = false;  // oneDNN's sgemm (T = float) instead of OpenBLAS
  PrimitiveType lhs_type_, rhs_type_, out_type_, bias_type_ = PrimitiveType::kF32;
  Shape c_shape_;
  Tables lhs_, rhs_, out_, c_;
  MatrixPlan a_plan_, b_plan_;
  bool out_direct_ = false, out_transposed_ = false;
  int64_t ldc_ = 0, out_batch_stride_ = 0;
  std::vector<T> a_packed_, b_packed_, out_temp_;
};

bool BlasType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

}  // namespace

bool BlasSupports(const HloInstruction& inst, const GemmCall& call) {
  if (!BlasType(call.result_shape.element_type())) return false;
  for (const HloInstruction* op : inst.operands()) {
    if (!BlasType(op->shape().element_type()) || !CheckPlainLayout(op->shape()).ok()) return false;
  }
  return CheckPlainLayout(call.result_shape).ok();
}

// Whether the gemm computes in f64 (any f64 operand or result).
bool ComputesInF64(const HloInstruction& inst, const GemmCall& call) {
  bool f64 = call.result_shape.element_type() == PrimitiveType::kF64;
  for (const HloInstruction* op : inst.operands()) f64 = f64 || op->shape().element_type() == PrimitiveType::kF64;
  return f64;
}

bool DnnGemmSupports(const HloInstruction& inst, const GemmCall& call) {
  return BlasSupports(inst, call) && !ComputesInF64(inst, call);
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateBlasGemmRunner(const HloInstruction& inst, GemmCall call) {
  if (!BlasSupports(inst, call)) {
    return absl::UnimplementedError(StrCat(inst.name(), ": OpenBLAS runs f32/f64 (and bf16/f16 through f32) gemms ",
                                           "with plain layouts, not ", inst.shape().ToString()));
  }
  if (ComputesInF64(inst, call)) {
    return std::unique_ptr<LibraryCallRunner>(new BlasGemmRunner<double>(inst, std::move(call), /*dnn=*/false));
  }
  return std::unique_ptr<LibraryCallRunner>(new BlasGemmRunner<float>(inst, std::move(call), /*dnn=*/false));
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateDnnGemmRunner(const HloInstruction& inst, GemmCall call) {
  if (!DnnGemmSupports(inst, call)) {
    return absl::UnimplementedError(StrCat(inst.name(), ": oneDNN's sgemm runs f32 (and bf16/f16 through f32) gemms ",
                                           "with plain layouts, not ", inst.shape().ToString()));
  }
  return std::unique_ptr<LibraryCallRunner>(new BlasGemmRunner<float>(inst, std::move(call), /*dnn=*/true));
}

}  // namespace passlab::runtime_internal
