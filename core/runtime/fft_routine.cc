// fft: FFT, IFFT, RFFT and IRFFT over the trailing 1-3 dimensions through
// KissFFT's C++ transform (kissfft.hh from Debian's libkissfft-dev,
// templated on the scalar: float for c64, double for c128). One
// dimension at a time on contiguous copies of each line; the inverse
// transforms scale by 1/n as XLA's do. RFFT transforms the last dimension
// first and keeps its n/2+1 non-redundant entries; IRFFT inverts the
// leading dimensions on the half spectrum, then the last one on its
// Hermitian extension (conj(x[n-j]) for j > n/2), keeping the real part.
#include <complex>
#include <cstring>

#include <kissfft.hh>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab::routine_internal {
namespace {

template <typename T>
class FftRoutine : public HostRoutine {
 public:
  using Complex = std::complex<T>;

  FftRoutine(const HloInstruction& inst)
      : input_(inst.operand(0)->shape()), output_(inst.shape()), type_(inst.attrs().fft_type),
        length_(inst.attrs().fft_length) {
    for (int64_t n : length_) plans_.emplace_back(static_cast<size_t>(std::max<int64_t>(n, 1)), inverse());
    int64_t n = 1;
    for (int64_t l : length_) n *= l;
    // 5 n log2(n) per transform, the usual FFT count.
    int64_t log2 = 0;
    while ((int64_t{1} << log2) < n) ++log2;
    flops_ = n == 0 ? 0 : 5 * (output_.element_count() / std::max<int64_t>(n, 1)) * n * log2;
  }

  int64_t flops() const override { return flops_; }

  absl::Status Run(absl::Span<void* const> buffers) const override {
    const int64_t rank = input_.rank(), k = static_cast<int64_t>(length_.size());
    std::vector<int64_t> dims = input_.dimensions();
    std::vector<Complex> v = ReadInput(buffers[0]);
    if (type_ == FftType::kFft || type_ == FftType::kIfft) {
      for (int64_t d = rank - k; d < rank; ++d) Transform(v, dims, d, plans_[d - (rank - k)], inverse());
    } else if (type_ == FftType::kRfft) {
      Transform(v, dims, rank - 1, plans_.back(), false);
      v = KeepFirst(v, dims, output_.dimensions(rank - 1));
      for (int64_t d = rank - k; d < rank - 1; ++d) Transform(v, dims, d, plans_[d - (rank - k)], false);
    } else {
      for (int64_t d = rank - k; d < rank - 1; ++d) Transform(v, dims, d, plans_[d - (rank - k)], true);
      v = HermitianExtension(v, dims, length_.back());
      Transform(v, dims, rank - 1, plans_.back(), true);
    }
    WriteOutput(v, buffers[1]);
    return absl::OkStatus();
  }

 private:
  bool inverse() const { return type_ == FftType::kIfft || type_ == FftType::kIrfft; }

  std::vector<Complex> ReadInput(const void* buffer) const {
    std::vector<uint8_t> packed = GatherRowMajor(input_, buffer);
    const int64_t n = input_.element_count();
    std::vector<Complex> v(n);
    if (IsComplexType(input_.element_type())) {
      std::memcpy(v.data(), packed.data(), n * sizeof(Complex));
    } else {
      const T* real = reinterpret_cast<const T*>(packed.data());
      for (int64_t i = 0; i < n; ++i) v[i] = Complex(real[i], 0);
    }
    return v;
  }

  void WriteOutput(const std::vector<Complex>& v, void* buffer) const {
    const int64_t n = output_.element_count();
    std::vector<uint8_t> packed(n * PrimitiveByteWidth(output_.element_type()));
    if (IsComplexType(output_.element_type())) {
      std::memcpy(packed.data(), v.data(), n * sizeof(Complex));
    } else {
      T* real = reinterpret_cast<T*>(packed.data());
      for (int64_t i = 0; i < n; ++i) real[i] = v[i].real();
    }
    ScatterRowMajor(output_, packed.data(), buffer);
  }

  // In place along dimension `dim` of the row-major array `v` of `dims`.
  static void Transform(std::vector<Complex>& v, const std::vector<int64_t>& dims, int64_t dim,
                        const kissfft<T>& plan, bool inverse) {
    const int64_t n = dims[dim];
    if (n == 0 || v.empty()) return;
    int64_t inner = 1, outer = 1;
    for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
    for (int64_t d = 0; d < dim; ++d) outer *= dims[d];
    const T scale = T(1) / static_cast<T>(n);
    std::vector<Complex> line(n), out(n);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        Complex* base = v.data() + o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) line[j] = base[j * inner];
        plan.transform(line.data(), out.data());
        for (int64_t j = 0; j < n; ++j) base[j * inner] = inverse ? out[j] * scale : out[j];
      }
    }
  }

  // The first `kept` entries of the last dimension.
  static std::vector<Complex> KeepFirst(const std::vector<Complex>& v, std::vector<int64_t>& dims, int64_t kept) {
    const int64_t last = dims.back(), rows = last == 0 ? 0 : static_cast<int64_t>(v.size()) / last;
    std::vector<Complex> out(rows * kept);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < kept && j < last; ++j) out[r * kept + j] = v[r * last + j];
    }
    dims.back() = kept;
    return out;
  }

  // Each row of the half spectrum extended to `n` entries.
  static std::vector<Complex> HermitianExtension(const std::vector<Complex>& v, std::vector<int64_t>& dims,
                                                 int64_t n) {
    const int64_t half = dims.back(), rows = half == 0 ? 0 : static_cast<int64_t>(v.size()) / half;
    std::vector<Complex> out(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        out[r * n + j] = j < half ? v[r * half + j] : std::conj(v[r * half + (n - j)]);
      }
    }
    dims.back() = n;
    return out;
  }

  Shape input_, output_;
  FftType type_;
  std::vector<int64_t> length_;
  std::vector<kissfft<T>> plans_;  // per transformed dimension
  int64_t flops_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateFftRoutine(const HloInstruction& inst) {
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  const std::vector<int64_t>& length = inst.attrs().fft_length;
  const int64_t k = static_cast<int64_t>(length.size()), rank = in.rank();
  if (k < 1 || k > 3 || k > rank) return Unimplemented(inst, "fft_length must name 1 to 3 trailing dimensions");
  if (!out.IsArray() || out.rank() != rank) return Unimplemented(inst, "fft keeps the operand's rank");
  const FftType type = inst.attrs().fft_type;
  // Every transformed dimension has its fft_length, but the half-spectrum
  // one of RFFT's result and IRFFT's operand (n/2+1).
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = rank - k + j;
    const bool half_in = type == FftType::kIrfft && j == k - 1, half_out = type == FftType::kRfft && j == k - 1;
    const int64_t want_in = half_in ? length[j] / 2 + 1 : length[j];
    const int64_t want_out = half_out ? length[j] / 2 + 1 : length[j];
    if (in.dimensions(d) != want_in || out.dimensions(d) != want_out) {
      return Unimplemented(inst, StrCat("fft_length does not fit ", in.ToString(), " -> ", out.ToString()));
    }
  }
  const PrimitiveType t = type == FftType::kRfft ? out.element_type() : in.element_type();
  const PrimitiveType real = t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
  const PrimitiveType want_in = type == FftType::kRfft ? real : t;
  const PrimitiveType want_out = type == FftType::kIrfft ? real : t;
  if (in.element_type() != want_in || out.element_type() != want_out) {
    return Unimplemented(inst, StrCat("fft from ", PrimitiveTypeName(in.element_type()), " to ",
                                      PrimitiveTypeName(out.element_type())));
  }
  if (t == PrimitiveType::kC64) return std::unique_ptr<HostRoutine>(new FftRoutine<float>(inst));
  if (t == PrimitiveType::kC128) return std::unique_ptr<HostRoutine>(new FftRoutine<double>(inst));
  return Unimplemented(inst, StrCat("fft of ", PrimitiveTypeName(t)));
}

}  // namespace passlab::routine_internal
