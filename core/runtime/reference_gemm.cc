// The reference `__blas$gemm`: a batched triple loop over the dot dimension
// numbers, D[b, m, n] = act(alpha * sum_k A[b, m, k] B[b, k, n] + beta *
// C[b, m, n] + bias[n]) with the sums in f64 (complex<double> for c64/c128)
// and one rounding to the result type. Each operand is addressed through its
// own layout (offset tables per dimension group), so nothing is packed; an
// operand without batch dimensions is the same matrix for every batch.
#include <cmath>
#include <complex>
#include <cstring>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_internal.h"

namespace passlab::runtime_internal {
namespace {

using Complex = std::complex<double>;

bool RealType(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
}
bool ComplexType(PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; }

// Element `offset` of a buffer as T (a real element of a complex gemm has no
// imaginary part).
template <typename T>
T ReadValue(PrimitiveType type, const void* buffer, int64_t offset) {
  if constexpr (std::is_same_v<T, Complex>) {
    if (type == PrimitiveType::kC64) {
      const float* p = static_cast<const float*>(buffer) + 2 * offset;
      return Complex(p[0], p[1]);
    }
    if (type == PrimitiveType::kC128) {
      const double* p = static_cast<const double*>(buffer) + 2 * offset;
      return Complex(p[0], p[1]);
    }
  }
  return T(ReadFloat(type, buffer, offset));
}

template <typename T>
void WriteValue(PrimitiveType type, void* buffer, int64_t offset, T value) {
  if constexpr (std::is_same_v<T, Complex>) {
    if (type == PrimitiveType::kC64) {
      float* p = static_cast<float*>(buffer) + 2 * offset;
      p[0] = static_cast<float>(value.real());
      p[1] = static_cast<float>(value.imag());
    } else {
      double* p = static_cast<double*>(buffer) + 2 * offset;
      p[0] = value.real();
      p[1] = value.imag();
    }
  } else {
    WriteFloat(type, buffer, offset, value);
  }
}

// The dimensions of `rank` that are neither in `a` nor in `b`, in order.
std::vector<int64_t> OtherDims(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  }
  return out;
}

std::vector<int64_t> Iota(int64_t begin, int64_t end) {
  std::vector<int64_t> out;
  for (int64_t d = begin; d < end; ++d) out.push_back(d);
  return out;
}

// Element offsets of an operand's three dimension groups.
struct GroupTables {
  std::vector<int64_t> batch, first, second;
  int64_t Batch(int64_t b) const { return batch.size() == 1 ? batch[0] : batch[b]; }
};

GroupTables Tables(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& first,
                   const std::vector<int64_t>& second) {
  std::vector<int64_t> strides = PhysicalStrides(s);
  return GroupTables{GroupOffsets(s, strides, batch), GroupOffsets(s, strides, first), GroupOffsets(s, strides, second)};
}

double Gelu(double x) {
  // The tanh form (cuBLASLt's GELU epilogue, XLA's kGELU).
  return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

class ReferenceGemmRunner : public ReferenceRunnerBase {
 public:
  ReferenceGemmRunner(const HloInstruction& inst, LibraryAlgorithm algorithm, GemmCall call)
      : ReferenceRunnerBase(inst, std::move(algorithm)), call_(std::move(call)) {
    const DotDimensionNumbers& d = call_.config.dot_dimension_numbers;
    for (const HloInstruction* op : inst.operands()) types_.push_back(op->shape().element_type());
    const Shape& ls = inst.operand(0)->shape();
    const Shape& rs = inst.operand(1)->shape();
    // lhs [batch][m][k], rhs [batch][k][n], result and C [batch][m][n].
    lhs_ = Tables(ls, d.lhs_batch_dimensions,
                  OtherDims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions),
                  d.lhs_contracting_dimensions);
    rhs_ = Tables(rs, d.rhs_batch_dimensions, d.rhs_contracting_dimensions,
                  OtherDims(rs.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions));
    int64_t batch_dims = std::max(d.lhs_batch_dimensions.size(), d.rhs_batch_dimensions.size());
    int64_t m_dims = ls.rank() - d.lhs_batch_dimensions.size() - d.lhs_contracting_dimensions.size();
    int64_t rank = call_.result_shape.rank();
    auto result_tables = [&](const Shape& s) {
      return Tables(s, Iota(0, batch_dims), Iota(batch_dims, batch_dims + m_dims), Iota(batch_dims + m_dims, rank));
    };
    out_ = result_tables(call_.result_shape);
    if (call_.c_operand >= 0) c_ = result_tables(inst.operand(call_.c_operand)->shape());
    complex_ = ComplexType(call_.result_shape.element_type());
  }

  absl::Status Run(absl::Span<void* const> buffers) override {
    RETURN_IF_ERROR(CheckBuffers(buffers));
    return complex_ ? RunTyped<Complex>(buffers) : RunTyped<double>(buffers);
  }

 private:
  template <typename T>
  absl::Status RunTyped(absl::Span<void* const> buffers) {
    const GemmBackendConfig& config = call_.config;
    GemmEpilogue e = config.epilogue;
    bool relu = e == GemmEpilogue::kRelu || e == GemmEpilogue::kBiasRelu;
    bool gelu = e == GemmEpilogue::kGelu || e == GemmEpilogue::kBiasGelu;
    T alpha;
    if constexpr (std::is_same_v<T, Complex>) {
      if (relu || gelu) return absl::InvalidArgumentError(StrCat(name_, ": a complex gemm has no activation"));
      alpha = Complex(config.alpha_real, config.alpha_imag);
    } else {
      alpha = config.alpha_real;
    }
    const int64_t batch = call_.batch, m = call_.m, n = call_.n, k = call_.k;
    const int64_t last = call_.result_shape.rank() == 0 ? 1 : call_.result_shape.dimensions().back();
    const void* lhs = buffers[0];
    const void* rhs = buffers[1];
    void* out = buffers[operand_count_];
    PrimitiveType out_type = call_.result_shape.element_type();
    // Operands first, in case the result buffer is C's (an in-place update).
    std::vector<T> results(batch * m * n);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        int64_t row = lhs_.Batch(b) + lhs_.first[i];
        for (int64_t j = 0; j < n; ++j) {
          int64_t column = rhs_.Batch(b) + rhs_.second[j];
          T sum{};
          for (int64_t p = 0; p < k; ++p) {
            sum += ReadValue<T>(types_[0], lhs, row + lhs_.second[p]) *
                   ReadValue<T>(types_[1], rhs, column + rhs_.first[p]);
          }
          int64_t linear = (b * m + i) * n + j;
          T x = alpha * sum;
          if (call_.c_operand >= 0) {
            x += config.beta * ReadValue<T>(types_[call_.c_operand], buffers[call_.c_operand],
                                             c_.Batch(b) + c_.first[i] + c_.second[j]);
          }
          if (call_.bias_operand >= 0) {
            x += ReadValue<T>(types_[call_.bias_operand], buffers[call_.bias_operand], linear % last);
          }
          if constexpr (std::is_same_v<T, double>) {
            if (relu) x = x > 0 ? x : 0;
            if (gelu) x = Gelu(x);
          }
          results[linear] = x;
        }
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          WriteValue<T>(out_type, out, out_.Batch(b) + out_.first[i] + out_.second[j], results[(b * m + i) * n + j]);
        }
      }
    }
    return absl::OkStatus();
  }

  GemmCall call_;
  std::vector<PrimitiveType> types_;
  GroupTables lhs_, rhs_, out_, c_;
  bool complex_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceGemmRunner(const HloInstruction& inst,
                                                                             LibraryAlgorithm algorithm) {
  ASSIGN_OR_RETURN(GemmCall call, AnalyzeGemmCall(inst));
  bool complex = ComplexType(call.result_shape.element_type());
  if (!complex && !RealType(call.result_shape.element_type())) {
    return absl::UnimplementedError(StrCat(inst.name(), ": the reference gemm writes f16/bf16/f32/f64/c64/c128, not ",
                                           call.result_shape.ToString()));
  }
  RETURN_IF_ERROR(CheckPlainLayout(call.result_shape));
  for (const HloInstruction* op : inst.operands()) {
    PrimitiveType t = op->shape().element_type();
    if (!RealType(t) && !(complex && ComplexType(t))) {
      return absl::UnimplementedError(StrCat(inst.name(), ": the reference gemm reads ",
                                             complex ? "f16/bf16/f32/f64/c64/c128" : "f16/bf16/f32/f64",
                                             " operands, not ", op->shape().ToString()));
    }
    RETURN_IF_ERROR(CheckPlainLayout(op->shape()));
  }
  return std::unique_ptr<LibraryCallRunner>(new ReferenceGemmRunner(inst, std::move(algorithm), std::move(call)));
}

}  // namespace passlab::runtime_internal
