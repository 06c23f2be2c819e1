// The runtime routines on the device (cuda_thunk.h): fft on cuFFT,
// cholesky on cuSOLVER, triangular-solve on cuBLAS and single-key sorts
// on a bitonic sort kernel of our own, each a GpuThunk of kind "routine"
// whose detail names the library or kernel. These are passlab's own
// implementations, independent of the CPU runtime's routines and of the
// evaluator, so `--check` on the GPU compares two implementations.
//
//   fft               one cufftPlanMany plan per thunk (made at build time,
//                     with its work area), trailing 1-3 dimensions in
//                     cuFFT's basic layout; IFFT and IRFFT scaled by 1/n
//                     afterwards (cuBLAS scal), as XLA's
//                     xla/backends/gpu/runtime/fft_thunk.cc does. IRFFT
//                     transforms a copy of its operand: cuFFT's out-of-place
//                     complex-to-real transforms overwrite their input.
//   cholesky          the operand copied to the result, cusolverDnXpotrf per
//                     matrix (workspace sized and allocated at build time),
//                     then a kernel that zeroes the other triangle and turns
//                     a matrix whose potrf failed into NaN (XLA's
//                     semantics; XLA:GPU does the same with a select after
//                     its cuSOLVER call, xla/service/gpu/transforms/
//                     cusolver_rewriter.cc).
//   triangular-solve  the right-hand side copied to the result, then one
//                     cublas?trsmBatched in place.
//   sort              a comparator that is one compare of operand k's two
//                     parameters (LT or GT, either order; FLOAT,
//                     TOTALORDER, SIGNED or UNSIGNED by the key's type):
//                     passlab_sort_rows sorts each line's (key, index)
//                     pairs in shared memory (lines up to kMaxSortLength),
//                     ties by index, so the sort is stable as the CPU
//                     routine's and the evaluator's; passlab_sort_gather
//                     then permutes every operand.
//
// Row-major buffers: the column-major libraries see each row-major matrix
// as its transpose. cholesky asks for the other triangle (A's bytes read
// column-major are A^T = conj(A), whose upper factor is the row-major lower
// one, as cholesky_routine.cc explains for LAPACK); triangular-solve solves
// the transposed system (op(A) X = B is X^T op(A)^T = B^T: the other side,
// the other triangle, the same op).
//
// What stays on the host (CreateRoutineThunk's UnimplementedError, the
// fallback's detail): topk and rng-bit-generator (no device routine here),
// f16/bf16 cholesky and triangular-solve (cuSOLVER / cuBLAS have no
// half-precision potrf / trsm), layouts other than row-major, sizes over
// 32-bit library arguments, and sorts with any other comparator, complex,
// f8 or sub-byte keys, or lines longer than kMaxSortLength.
//
// Built only with cuFFT, cuSOLVER and cuBLAS (PASSLAB_CUDA_MATH_LIBRARIES,
// core/CMakeLists.txt); without them every routine stays on the host.
#include "core/backends/cuda/cuda_thunk.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

#ifndef PASSLAB_CUDA_MATH_LIBRARIES

namespace passlab {

class CudaRoutineLibraries {};

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateRoutineThunk(const HloInstruction& inst, DeviceProgramContext&) {
  return absl::UnimplementedError(
      StrCat(HloOpcodeString(inst.opcode()), ": passlab was built without cuFFT / cuSOLVER / cuBLAS"));
}

}  // namespace passlab

#else  // PASSLAB_CUDA_MATH_LIBRARIES

#include "core/backends/cuda/cuda_routine_ptx.h"

#include <cublas_v2.h>
#include <cufft.h>
#include <cusolverDn.h>

#include <algorithm>
#include <array>
#include <limits>

namespace passlab {
namespace {

// The longest line passlab_sort_rows sorts: its (8-byte key, 4-byte index)
// pairs fill the 48 KiB of shared memory a block gets without opting in.
constexpr int64_t kMaxSortLength = 4096;

// Launch width of the element-wise kernels (grid-stride loops).
constexpr int64_t kThreadsPerBlock = 256;
constexpr int64_t kMaxBlocks = 65535;


// ---------------------------------------------------------------- status

absl::Status CheckFft(cufftResult r, std::string_view call) {
  if (r == CUFFT_SUCCESS) return absl::OkStatus();
  const char* name = "unknown cufftResult";
  switch (r) {
    case CUFFT_INVALID_PLAN: name = "CUFFT_INVALID_PLAN"; break;
    case CUFFT_ALLOC_FAILED: name = "CUFFT_ALLOC_FAILED"; break;
    case CUFFT_INVALID_TYPE: name = "CUFFT_INVALID_TYPE"; break;
    case CUFFT_INVALID_VALUE: name = "CUFFT_INVALID_VALUE"; break;
    case CUFFT_INTERNAL_ERROR: name = "CUFFT_INTERNAL_ERROR"; break;
    case CUFFT_EXEC_FAILED: name = "CUFFT_EXEC_FAILED"; break;
    case CUFFT_SETUP_FAILED: name = "CUFFT_SETUP_FAILED"; break;
    case CUFFT_INVALID_SIZE: name = "CUFFT_INVALID_SIZE"; break;
    case CUFFT_UNALIGNED_DATA: name = "CUFFT_UNALIGNED_DATA"; break;
    case CUFFT_INVALID_DEVICE: name = "CUFFT_INVALID_DEVICE"; break;
    case CUFFT_NO_WORKSPACE: name = "CUFFT_NO_WORKSPACE"; break;
    case CUFFT_NOT_IMPLEMENTED: name = "CUFFT_NOT_IMPLEMENTED"; break;
    case CUFFT_NOT_SUPPORTED: name = "CUFFT_NOT_SUPPORTED"; break;
    default: break;
  }
  absl::StatusCode code = r == CUFFT_ALLOC_FAILED ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  return absl::Status(code, StrCat(call, ": ", name, " (", static_cast<int>(r), ")"));
}

absl::Status CheckSolver(cusolverStatus_t s, std::string_view call) {
  if (s == CUSOLVER_STATUS_SUCCESS) return absl::OkStatus();
  const char* name = "unknown cusolverStatus_t";
  switch (s) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: name = "CUSOLVER_STATUS_NOT_INITIALIZED"; break;
    case CUSOLVER_STATUS_ALLOC_FAILED: name = "CUSOLVER_STATUS_ALLOC_FAILED"; break;
    case CUSOLVER_STATUS_INVALID_VALUE: name = "CUSOLVER_STATUS_INVALID_VALUE"; break;
    case CUSOLVER_STATUS_ARCH_MISMATCH: name = "CUSOLVER_STATUS_ARCH_MISMATCH"; break;
    case CUSOLVER_STATUS_EXECUTION_FAILED: name = "CUSOLVER_STATUS_EXECUTION_FAILED"; break;
    case CUSOLVER_STATUS_INTERNAL_ERROR: name = "CUSOLVER_STATUS_INTERNAL_ERROR"; break;
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: name = "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED"; break;
    case CUSOLVER_STATUS_NOT_SUPPORTED: name = "CUSOLVER_STATUS_NOT_SUPPORTED"; break;
    case CUSOLVER_STATUS_INVALID_WORKSPACE: name = "CUSOLVER_STATUS_INVALID_WORKSPACE"; break;
    default: break;
  }
  absl::StatusCode code =
      s == CUSOLVER_STATUS_ALLOC_FAILED ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  return absl::Status(code, StrCat(call, ": ", name, " (", static_cast<int>(s), ")"));
}

absl::Status CheckBlas(cublasStatus_t s, std::string_view call) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  absl::StatusCode code =
      s == CUBLAS_STATUS_ALLOC_FAILED ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  return absl::Status(code, StrCat(call, ": ", cublasGetStatusName(s)));
}

// ---------------------------------------------------------------- shapes

bool IsRowMajor(const Shape& s) {
  if (!s.IsArray()) return false;
  if (!s.has_layout()) return true;
  const Layout& l = s.layout();
  if (!l.tiles().empty() || l.element_size_in_bits() != 0) return false;
  const std::vector<int64_t>& m2m = l.minor_to_major();
  if (m2m.empty()) return true;
  if (static_cast<int64_t>(m2m.size()) != s.rank()) return false;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (m2m[i] != s.rank() - 1 - i) return false;
  }
  return true;
}

// Unimplemented unless every operand and result leaf is a row-major array.
absl::Status CheckRowMajor(const HloInstruction& inst) {
  for (const HloInstruction* op : inst.operands()) {
    if (!IsRowMajor(op->shape())) {
      return absl::UnimplementedError(StrCat("operand layout ", op->shape().ToString(), " is not row-major"));
    }
  }
  for (const Shape& leaf : LeafShapes(inst.shape())) {
    if (!IsRowMajor(leaf)) return absl::UnimplementedError(StrCat("result layout ", leaf.ToString(), " is not row-major"));
  }
  return absl::OkStatus();
}

int64_t Aligned(int64_t bytes) { return (bytes + 255) / 256 * 256; }

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// Blocks of kThreadsPerBlock threads for a grid-stride loop over `count`.
unsigned BlocksFor(int64_t count) {
  return static_cast<unsigned>(std::clamp<int64_t>((count + kThreadsPerBlock - 1) / kThreadsPerBlock, 1, kMaxBlocks));
}

}  // namespace

// ---------------------------------------------------------------- libraries

// The handles and kernels the routine thunks of one executable share, each
// made on first use. Calls on a stream run one after another, and every
// thunk sets the handle's stream before its calls, so one handle serves
// both streams.
class CudaRoutineLibraries {
 public:
  explicit CudaRoutineLibraries(const CudaDevice& device) : device_(device) {}
  ~CudaRoutineLibraries() {
    if (blas_ != nullptr) cublasDestroy(blas_);
    if (solver_params_ != nullptr) cusolverDnDestroyParams(solver_params_);
    if (solver_ != nullptr) cusolverDnDestroy(solver_);
    if (module_ != nullptr) device_.api().cuModuleUnload(module_);
  }
  const CudaDevice& device() const { return device_; }

  absl::StatusOr<cublasHandle_t> Blas() {
    if (blas_ == nullptr) {
      RETURN_IF_ERROR(device_.Activate());
      RETURN_IF_ERROR(CheckBlas(cublasCreate(&blas_), "cublasCreate"));
    }
    return blas_;
  }

  absl::StatusOr<cusolverDnHandle_t> Solver() {
    if (solver_ == nullptr) {
      RETURN_IF_ERROR(device_.Activate());
      RETURN_IF_ERROR(CheckSolver(cusolverDnCreate(&solver_), "cusolverDnCreate"));
      RETURN_IF_ERROR(CheckSolver(cusolverDnCreateParams(&solver_params_), "cusolverDnCreateParams"));
    }
    return solver_;
  }
  cusolverDnParams_t solver_params() const { return solver_params_; }

  // passlab_sort_rows, passlab_sort_gather or passlab_cholesky_mask.
  absl::StatusOr<CUfunction> Kernel(const char* name) {
    if (module_ == nullptr) {
      constexpr unsigned kLogBytes = 8192;
      std::vector<char> log(kLogBytes, 0);
      CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
      void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kLogBytes))};
      absl::Status s = device_.Check(device_.api().cuModuleLoadDataEx(&module_, kCudaRoutinesPtx, 2, options, values),
                                     "cuModuleLoadData(runtime routine kernels)");
      if (!s.ok()) {
        module_ = nullptr;
        return absl::Status(s.code(), StrCat(s.message(), ": ", log.data()));
      }
    }
    CUfunction f = nullptr;
    RETURN_IF_ERROR(device_.Check(device_.api().cuModuleGetFunction(&f, module_, name),
                                  StrCat("cuModuleGetFunction(", name, ")")));
    return f;
  }

 private:
  const CudaDevice& device_;
  cublasHandle_t blas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cusolverDnParams_t solver_params_ = nullptr;
  CUmodule module_ = nullptr;
};

namespace {

std::shared_ptr<CudaRoutineLibraries> RoutineLibraries(DeviceProgramContext& ctx) {
  if (ctx.routines == nullptr) ctx.routines = std::make_shared<CudaRoutineLibraries>(*ctx.device);
  return ctx.routines;
}

absl::Status Launch(GpuRunContext& ctx, CUfunction f, unsigned grid, unsigned block, unsigned shared,
                    std::vector<void*> params, std::string_view what) {
  return ctx.Check(ctx.api().cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shared, ctx.stream, params.data(), nullptr),
                   StrCat("cuLaunchKernel(", what, ")"));
}

absl::Status CopyOnDevice(GpuRunContext& ctx, CUdeviceptr to, CUdeviceptr from, int64_t bytes, std::string_view what) {
  if (to == from || bytes == 0) return absl::OkStatus();
  return ctx.Check(ctx.api().cuMemcpyDtoDAsync(to, from, bytes, ctx.stream), StrCat("cuMemcpyDtoDAsync(", what, ")"));
}

// ---------------------------------------------------------------- fft

class FftThunk : public GpuThunk {
 public:
  FftThunk(const HloInstruction& inst, std::shared_ptr<CudaRoutineLibraries> libs)
      : GpuThunk(inst), libs_(std::move(libs)) {}
  ~FftThunk() override {
    if (planned_) cufftDestroy(plan_);
  }

  absl::Status Build(cufftType type, std::vector<int> length, int batch) {
    const HloInstruction& inst = instruction_;
    type_ = type;
    fft_type_ = inst.attrs().fft_type;
    length_ = length;
    batch_ = batch;
    int64_t n = 1;
    for (int l : length) n *= l;
    scale_ = n == 0 ? 1.0 : 1.0 / static_cast<double>(n);
    int64_t log2 = 0;
    while ((int64_t{1} << log2) < n) ++log2;
    flops_ = 5 * int64_t{batch} * n * log2;
    if (inst.shape().element_count() == 0 || inst.operand(0)->shape().element_count() == 0) return absl::OkStatus();
    RETURN_IF_ERROR(libs_->device().Activate());
    RETURN_IF_ERROR(CheckFft(cufftPlanMany(&plan_, static_cast<int>(length.size()), length.data(), nullptr, 1, 0,
                                           nullptr, 1, 0, type, batch),
                             StrCat("cufftPlanMany(", inst.name(), ")")));
    planned_ = true;
    if (inverse()) RETURN_IF_ERROR(libs_->Blas().status());
    if (type == CUFFT_C2R || type == CUFFT_Z2D) {
      ASSIGN_OR_RETURN(input_copy_, DeviceBuffer::Allocate(libs_->device(), BufferBytes(inst.operand(0)->shape()),
                                                           StrCat(inst.name(), " input copy")));
    }
    return absl::OkStatus();
  }

  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override {
    std::string lengths;
    for (size_t i = 0; i < length_.size(); ++i) StrAppend(&lengths, i == 0 ? "" : "x", length_[i]);
    return StrCat("cuFFT ", FftTypeString(fft_type_), " ", lengths, " x", batch_);
  }
  int64_t flops() const override { return flops_; }

  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    if (!planned_) return absl::OkStatus();
    std::vector<CUdeviceptr> b = Buffers(p, f);
    const std::string& name = instruction_.name();
    RETURN_IF_ERROR(CheckFft(cufftSetStream(plan_, ctx.stream), StrCat("cufftSetStream(", name, ")")));
    CUdeviceptr in = b[0];
    if (input_copy_.ptr() != 0) {
      RETURN_IF_ERROR(CopyOnDevice(ctx, input_copy_.ptr(), in, input_copy_.bytes(), name));
      in = input_copy_.ptr();
    }
    void* out = Ptr(b[1]);
    switch (type_) {
      case CUFFT_C2C:
        RETURN_IF_ERROR(CheckFft(cufftExecC2C(plan_, static_cast<cufftComplex*>(Ptr(in)),
                                              static_cast<cufftComplex*>(out), inverse() ? CUFFT_INVERSE : CUFFT_FORWARD),
                                 StrCat("cufftExecC2C(", name, ")")));
        break;
      case CUFFT_Z2Z:
        RETURN_IF_ERROR(CheckFft(cufftExecZ2Z(plan_, static_cast<cufftDoubleComplex*>(Ptr(in)),
                                              static_cast<cufftDoubleComplex*>(out),
                                              inverse() ? CUFFT_INVERSE : CUFFT_FORWARD),
                                 StrCat("cufftExecZ2Z(", name, ")")));
        break;
      case CUFFT_R2C:
        RETURN_IF_ERROR(CheckFft(cufftExecR2C(plan_, static_cast<cufftReal*>(Ptr(in)), static_cast<cufftComplex*>(out)),
                                 StrCat("cufftExecR2C(", name, ")")));
        break;
      case CUFFT_D2Z:
        RETURN_IF_ERROR(CheckFft(cufftExecD2Z(plan_, static_cast<cufftDoubleReal*>(Ptr(in)),
                                              static_cast<cufftDoubleComplex*>(out)),
                                 StrCat("cufftExecD2Z(", name, ")")));
        break;
      case CUFFT_C2R:
        RETURN_IF_ERROR(CheckFft(cufftExecC2R(plan_, static_cast<cufftComplex*>(Ptr(in)), static_cast<cufftReal*>(out)),
                                 StrCat("cufftExecC2R(", name, ")")));
        break;
      case CUFFT_Z2D:
        RETURN_IF_ERROR(CheckFft(cufftExecZ2D(plan_, static_cast<cufftDoubleComplex*>(Ptr(in)),
                                              static_cast<cufftDoubleReal*>(out)),
                                 StrCat("cufftExecZ2D(", name, ")")));
        break;
    }
    if (!inverse()) return absl::OkStatus();
    // 1/n on every real component of the result (a complex result is 2x as
    // many reals).
    const Shape& s = instruction_.shape();
    const int64_t reals = s.element_count() * (IsComplexType(s.element_type()) ? 2 : 1);
    if (!FitsInt(reals)) return absl::InternalError(StrCat(name, ": result too large for cublas?scal"));
    ASSIGN_OR_RETURN(cublasHandle_t blas, libs_->Blas());
    RETURN_IF_ERROR(CheckBlas(cublasSetStream(blas, ctx.stream), StrCat("cublasSetStream(", name, ")")));
    const bool f64 = s.element_type() == PrimitiveType::kF64 || s.element_type() == PrimitiveType::kC128;
    if (f64) {
      const double scale = scale_;
      return CheckBlas(cublasDscal(blas, static_cast<int>(reals), &scale, static_cast<double*>(out), 1),
                       StrCat("cublasDscal(", name, ")"));
    }
    const float scale = static_cast<float>(scale_);
    return CheckBlas(cublasSscal(blas, static_cast<int>(reals), &scale, static_cast<float*>(out), 1),
                     StrCat("cublasSscal(", name, ")"));
  }

 private:
  bool inverse() const { return fft_type_ == FftType::kIfft || fft_type_ == FftType::kIrfft; }

  std::shared_ptr<CudaRoutineLibraries> libs_;
  cufftHandle plan_ = 0;
  bool planned_ = false;
  cufftType type_ = CUFFT_C2C;
  FftType fft_type_ = FftType::kFft;
  std::vector<int> length_;
  int batch_ = 0;
  double scale_ = 1;
  int64_t flops_ = 0;
  DeviceBuffer input_copy_;
};

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateFftThunk(const HloInstruction& inst, DeviceProgramContext& ctx) {
  const Shape& in = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  const std::vector<int64_t>& length = inst.attrs().fft_length;
  const int64_t k = static_cast<int64_t>(length.size()), rank = in.rank();
  if (k < 1 || k > 3 || k > rank || !out.IsArray() || out.rank() != rank) {
    return absl::UnimplementedError("fft_length must name 1 to 3 trailing dimensions");
  }
  const FftType type = inst.attrs().fft_type;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = rank - k + j;
    const bool half_in = type == FftType::kIrfft && j == k - 1, half_out = type == FftType::kRfft && j == k - 1;
    if (in.dimensions(d) != (half_in ? length[j] / 2 + 1 : length[j]) ||
        out.dimensions(d) != (half_out ? length[j] / 2 + 1 : length[j])) {
      return absl::UnimplementedError(StrCat("fft_length does not fit ", in.ToString(), " -> ", out.ToString()));
    }
  }
  const PrimitiveType t = type == FftType::kRfft ? out.element_type() : in.element_type();
  const bool f64 = t == PrimitiveType::kC128;
  if (t != PrimitiveType::kC64 && !f64) return absl::UnimplementedError(StrCat("fft of ", PrimitiveTypeName(t)));
  const PrimitiveType real = f64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
  if (in.element_type() != (type == FftType::kRfft ? real : t) ||
      out.element_type() != (type == FftType::kIrfft ? real : t)) {
    return absl::UnimplementedError(StrCat("fft from ", PrimitiveTypeName(in.element_type()), " to ",
                                           PrimitiveTypeName(out.element_type())));
  }
  std::vector<int> n;
  for (int64_t l : length) {
    if (!FitsInt(l)) return absl::UnimplementedError("fft length over cufftPlanMany's int");
    n.push_back(static_cast<int>(l));
  }
  int64_t batch = 1;
  for (int64_t d = 0; d < rank - k; ++d) batch *= in.dimensions(d);
  if (!FitsInt(batch)) return absl::UnimplementedError("fft batch over cufftPlanMany's int");
  cufftType ct = CUFFT_C2C;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: ct = f64 ? CUFFT_Z2Z : CUFFT_C2C; break;
    case FftType::kRfft: ct = f64 ? CUFFT_D2Z : CUFFT_R2C; break;
    case FftType::kIrfft: ct = f64 ? CUFFT_Z2D : CUFFT_C2R; break;
  }
  auto thunk = std::make_unique<FftThunk>(inst, RoutineLibraries(ctx));
  RETURN_IF_ERROR(thunk->Build(ct, std::move(n), static_cast<int>(batch)));
  return thunk;
}

// ---------------------------------------------------------------- cholesky

class CholeskyThunk : public GpuThunk {
 public:
  CholeskyThunk(const HloInstruction& inst, std::shared_ptr<CudaRoutineLibraries> libs)
      : GpuThunk(inst), libs_(std::move(libs)) {}

  absl::Status Build() {
    const Shape& s = instruction_.shape();
    const std::string& name = instruction_.name();
    n_ = s.dimensions(s.rank() - 1);
    batch_ = n_ == 0 ? 0 : s.element_count() / (n_ * n_);
    lower_ = instruction_.attrs().cholesky_lower;
    switch (s.element_type()) {
      case PrimitiveType::kF32: type_ = CUDA_R_32F; words_ = 1; nan_ = {0x7FC00000u, 0, 0, 0}; break;
      case PrimitiveType::kF64: type_ = CUDA_R_64F; words_ = 2; nan_ = {0, 0x7FF80000u, 0, 0}; break;
      case PrimitiveType::kC64: type_ = CUDA_C_32F; words_ = 2; nan_ = {0x7FC00000u, 0, 0, 0}; break;
      default: type_ = CUDA_C_64F; words_ = 4; nan_ = {0, 0x7FF80000u, 0, 0}; break;
    }
    if (batch_ == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(cusolverDnHandle_t solver, libs_->Solver());
    size_t device_bytes = 0, host_bytes = 0;
    RETURN_IF_ERROR(CheckSolver(cusolverDnXpotrf_bufferSize(solver, libs_->solver_params(), uplo(), n_, type_,
                                                            nullptr, n_, type_, &device_bytes, &host_bytes),
                                StrCat("cusolverDnXpotrf_bufferSize(", name, ")")));
    ASSIGN_OR_RETURN(workspace_, DeviceBuffer::Allocate(libs_->device(), static_cast<int64_t>(device_bytes),
                                                        StrCat(name, " potrf workspace")));
    host_workspace_.resize(host_bytes);
    ASSIGN_OR_RETURN(info_, DeviceBuffer::Allocate(libs_->device(), batch_ * static_cast<int64_t>(sizeof(int)),
                                                   StrCat(name, " potrf info")));
    ASSIGN_OR_RETURN(mask_, libs_->Kernel("passlab_cholesky_mask"));
    return absl::OkStatus();
  }

  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override {
    return StrCat("cuSOLVER potrf ", lower_ ? "lower " : "upper ", n_, "x", n_, " x", batch_);
  }
  int64_t flops() const override { return batch_ * n_ * n_ * n_ / 3; }
  std::string HostDependency() const override {
    return host_workspace_.empty() ? "" : StrCat(instruction_.name(), ": cusolverDnXpotrf uses a host workspace");
  }

  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    if (batch_ == 0) return absl::OkStatus();
    std::vector<CUdeviceptr> b = Buffers(p, f);
    const std::string& name = instruction_.name();
    const int64_t bytes = BufferBytes(instruction_.shape());
    RETURN_IF_ERROR(CopyOnDevice(ctx, b[1], b[0], bytes, name));
    ASSIGN_OR_RETURN(cusolverDnHandle_t solver, libs_->Solver());
    RETURN_IF_ERROR(CheckSolver(cusolverDnSetStream(solver, ctx.stream), StrCat("cusolverDnSetStream(", name, ")")));
    const int64_t matrix_bytes = bytes / batch_;
    for (int64_t i = 0; i < batch_; ++i) {
      RETURN_IF_ERROR(CheckSolver(
          cusolverDnXpotrf(solver, libs_->solver_params(), uplo(), n_, type_, Ptr(b[1] + i * matrix_bytes), n_, type_,
                           Ptr(workspace_.ptr()), static_cast<size_t>(workspace_.bytes()),
                           host_workspace_.empty() ? nullptr : host_workspace_.data(), host_workspace_.size(),
                           static_cast<int*>(Ptr(info_.ptr() + i * sizeof(int)))),
          StrCat("cusolverDnXpotrf(", name, ", matrix ", i, ")")));
    }
    CUdeviceptr a = b[1], info = info_.ptr();
    uint64_t count = static_cast<uint64_t>(instruction_.shape().element_count()), n = static_cast<uint64_t>(n_);
    uint32_t words = words_, lower = lower_ ? 1 : 0;
    std::array<uint32_t, 4> nan = nan_;
    return Launch(ctx, mask_, BlocksFor(count), kThreadsPerBlock, 0,
                  {&a, &info, &count, &n, &words, &lower, &nan[0], &nan[1], &nan[2], &nan[3]},
                  StrCat("passlab_cholesky_mask, ", name));
  }

 private:
  // Row-major lower is column-major upper (see the file comment).
  cublasFillMode_t uplo() const { return lower_ ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }

  std::shared_ptr<CudaRoutineLibraries> libs_;
  int64_t n_ = 0, batch_ = 0;
  bool lower_ = true;
  cudaDataType type_ = CUDA_R_32F;
  uint32_t words_ = 1;
  std::array<uint32_t, 4> nan_{};
  DeviceBuffer workspace_, info_;
  std::vector<uint8_t> host_workspace_;
  CUfunction mask_ = nullptr;
};

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateCholeskyThunk(const HloInstruction& inst, DeviceProgramContext& ctx) {
  const Shape& s = inst.shape();
  if (!s.IsArray() || s.rank() < 2 || s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2) ||
      inst.operand(0)->shape().dimensions() != s.dimensions() ||
      inst.operand(0)->shape().element_type() != s.element_type()) {
    return absl::UnimplementedError(StrCat("cholesky needs batches of square matrices, not ", s.ToString()));
  }
  const PrimitiveType t = s.element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kC64 && t != PrimitiveType::kC128) {
    return absl::UnimplementedError(StrCat("cuSOLVER has no potrf for ", PrimitiveTypeName(t)));
  }
  auto thunk = std::make_unique<CholeskyThunk>(inst, RoutineLibraries(ctx));
  RETURN_IF_ERROR(thunk->Build());
  return thunk;
}

// ---------------------------------------------------------------- triangular-solve

class TriangularSolveThunk : public GpuThunk {
 public:
  TriangularSolveThunk(const HloInstruction& inst, std::shared_ptr<CudaRoutineLibraries> libs)
      : GpuThunk(inst), libs_(std::move(libs)) {}

  absl::Status Build() {
    const Shape& s = instruction_.shape();
    options_ = instruction_.attrs().triangular_solve;
    m_ = s.dimensions(s.rank() - 2);
    n_ = s.dimensions(s.rank() - 1);
    k_ = options_.left_side ? m_ : n_;
    batch_ = m_ * n_ == 0 ? 0 : s.element_count() / (m_ * n_);
    element_bytes_ = PrimitiveByteWidth(s.element_type());
    if (batch_ == 0) return absl::OkStatus();
    RETURN_IF_ERROR(libs_->Blas().status());
    ASSIGN_OR_RETURN(pointers_, DeviceBuffer::Allocate(libs_->device(), 2 * batch_ * int64_t{sizeof(CUdeviceptr)},
                                                       StrCat(instruction_.name(), " trsm pointers")));
    ASSIGN_OR_RETURN(strided_pointers_, libs_->Kernel("passlab_strided_pointers"));
    return absl::OkStatus();
  }

  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override {
    const char* op = options_.transpose_a == TriangularTranspose::kNoTranspose ? "N"
                     : options_.transpose_a == TriangularTranspose::kTranspose ? "T"
                                                                               : "C";
    return StrCat("cuBLAS trsm ", options_.left_side ? "left " : "right ", options_.lower ? "lower " : "upper ", op,
                  options_.unit_diagonal ? " unit " : " ", m_, "x", n_, " x", batch_);
  }
  int64_t flops() const override { return batch_ * m_ * n_ * k_; }

  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    if (batch_ == 0) return absl::OkStatus();
    std::vector<CUdeviceptr> b = Buffers(p, f);
    const std::string& name = instruction_.name();
    RETURN_IF_ERROR(CopyOnDevice(ctx, b[2], b[1], BufferBytes(instruction_.shape()), name));
    // The batch's matrix pointers, a's then the result's, written on the
    // device (no host copy in the step, so it can be captured).
    for (int half = 0; half < 2; ++half) {
      CUdeviceptr out = pointers_.ptr() + half * batch_ * sizeof(CUdeviceptr), base = half == 0 ? b[0] : b[2];
      uint64_t stride = (half == 0 ? k_ * k_ : m_ * n_) * element_bytes_, count = batch_;
      RETURN_IF_ERROR(Launch(ctx, strided_pointers_, BlocksFor(batch_), kThreadsPerBlock, 0,
                             {&out, &base, &stride, &count}, StrCat("passlab_strided_pointers, ", name)));
    }
    ASSIGN_OR_RETURN(cublasHandle_t blas, libs_->Blas());
    RETURN_IF_ERROR(CheckBlas(cublasSetStream(blas, ctx.stream), StrCat("cublasSetStream(", name, ")")));
    // Column-major: X^T op(A)^T = B^T (left) or op(A)^T X^T = B^T (right).
    const cublasSideMode_t side = options_.left_side ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
    const cublasFillMode_t uplo = options_.lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const cublasOperation_t trans = options_.transpose_a == TriangularTranspose::kNoTranspose ? CUBLAS_OP_N
                                    : options_.transpose_a == TriangularTranspose::kTranspose ? CUBLAS_OP_T
                                                                                              : CUBLAS_OP_C;
    const cublasDiagType_t diag = options_.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const int m = static_cast<int>(n_), n = static_cast<int>(m_), lda = static_cast<int>(k_),
              ldb = static_cast<int>(n_), batch = static_cast<int>(batch_);
    void* a_array = Ptr(pointers_.ptr());
    void* b_array = Ptr(pointers_.ptr() + batch_ * sizeof(CUdeviceptr));
    const std::string call = StrCat("cublas?trsmBatched(", name, ")");
    switch (instruction_.shape().element_type()) {
      case PrimitiveType::kF32: {
        const float one = 1;
        return CheckBlas(cublasStrsmBatched(blas, side, uplo, trans, diag, m, n, &one,
                                            static_cast<const float* const*>(a_array), lda,
                                            static_cast<float* const*>(b_array), ldb, batch),
                         call);
      }
      case PrimitiveType::kF64: {
        const double one = 1;
        return CheckBlas(cublasDtrsmBatched(blas, side, uplo, trans, diag, m, n, &one,
                                            static_cast<const double* const*>(a_array), lda,
                                            static_cast<double* const*>(b_array), ldb, batch),
                         call);
      }
      case PrimitiveType::kC64: {
        const cuComplex one = make_cuComplex(1, 0);
        return CheckBlas(cublasCtrsmBatched(blas, side, uplo, trans, diag, m, n, &one,
                                            static_cast<const cuComplex* const*>(a_array), lda,
                                            static_cast<cuComplex* const*>(b_array), ldb, batch),
                         call);
      }
      default: {
        const cuDoubleComplex one = make_cuDoubleComplex(1, 0);
        return CheckBlas(cublasZtrsmBatched(blas, side, uplo, trans, diag, m, n, &one,
                                            static_cast<const cuDoubleComplex* const*>(a_array), lda,
                                            static_cast<cuDoubleComplex* const*>(b_array), ldb, batch),
                         call);
      }
    }
  }

 private:
  std::shared_ptr<CudaRoutineLibraries> libs_;
  TriangularSolveOptions options_;
  int64_t m_ = 0, n_ = 0, k_ = 0, batch_ = 0, element_bytes_ = 0;
  DeviceBuffer pointers_;
  CUfunction strided_pointers_ = nullptr;
};

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateTriangularSolveThunk(const HloInstruction& inst,
                                                                     DeviceProgramContext& ctx) {
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  const Shape& s = inst.shape();
  if (!s.IsArray() || s.rank() < 2 || a.rank() != s.rank() || b.dimensions() != s.dimensions() ||
      a.element_type() != s.element_type() || b.element_type() != s.element_type()) {
    return absl::UnimplementedError(StrCat("triangular-solve needs batches of matrices, not ", a.ToString(), ", ",
                                           b.ToString(), " -> ", s.ToString()));
  }
  const int64_t rank = s.rank();
  const int64_t k = inst.attrs().triangular_solve.left_side ? s.dimensions(rank - 2) : s.dimensions(rank - 1);
  if (a.dimensions(rank - 1) != k || a.dimensions(rank - 2) != k) {
    return absl::UnimplementedError(StrCat("a ", a.ToString(), " is not ", k, " x ", k));
  }
  for (int64_t d = 0; d + 2 < rank; ++d) {
    if (a.dimensions(d) != s.dimensions(d)) return absl::UnimplementedError("a's batch dimensions differ from b's");
  }
  int64_t batch = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!FitsInt(s.dimensions(d))) return absl::UnimplementedError("matrix over cuBLAS's int sizes");
    if (d + 2 < rank) batch *= s.dimensions(d);
  }
  if (!FitsInt(batch)) return absl::UnimplementedError("batch over cuBLAS's int batch count");
  const PrimitiveType t = s.element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kC64 && t != PrimitiveType::kC128) {
    return absl::UnimplementedError(StrCat("cuBLAS has no trsm for ", PrimitiveTypeName(t)));
  }
  auto thunk = std::make_unique<TriangularSolveThunk>(inst, RoutineLibraries(ctx));
  RETURN_IF_ERROR(thunk->Build());
  return thunk;
}

// ---------------------------------------------------------------- sort

// passlab_sort_rows' p_kind.
enum class SortKeyKind : uint32_t { kUnsigned = 0, kSigned = 1, kFloatTotalOrder = 2, kFloat = 3 };

struct SortKey {
  int64_t operand = 0;
  SortKeyKind kind = SortKeyKind::kUnsigned;
  bool descending = false;
};

// The comparator as "compare(operand k's a, operand k's b)" in LT or GT
// (either parameter order), or why not.
absl::StatusOr<SortKey> RecognizeSortKey(const HloInstruction& sort) {
  const HloComputation* c = sort.to_apply();
  if (c == nullptr) return absl::UnimplementedError("no comparator computation");
  const HloInstruction* root = c->root_instruction();
  if (root->opcode() != HloOpcode::kCompare || root->operand(0)->opcode() != HloOpcode::kParameter ||
      root->operand(1)->opcode() != HloOpcode::kParameter) {
    return absl::UnimplementedError("the comparator is not one compare of two parameters");
  }
  const int64_t x = root->operand(0)->parameter_number(), y = root->operand(1)->parameter_number();
  if (x / 2 != y / 2 || x == y || x / 2 >= sort.operand_count()) {
    return absl::UnimplementedError("the comparator compares parameters of different operands");
  }
  const ComparisonDirection d = root->attrs().comparison_direction;
  if (d != ComparisonDirection::kLt && d != ComparisonDirection::kGt) {
    return absl::UnimplementedError(StrCat("comparator direction ", ComparisonDirectionString(d), " (LT or GT only)"));
  }
  SortKey key;
  key.operand = x / 2;
  // compare(a, b) LT and compare(b, a) GT sort ascending.
  key.descending = (d == ComparisonDirection::kGt) == (x % 2 == 0);
  const PrimitiveType t = sort.operand(key.operand)->shape().element_type();
  switch (t) {
    case PrimitiveType::kPred:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64: key.kind = SortKeyKind::kUnsigned; break;
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64: key.kind = SortKeyKind::kSigned; break;
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      key.kind = root->attrs().comparison_type == ComparisonType::kTotalOrder ? SortKeyKind::kFloatTotalOrder
                                                                              : SortKeyKind::kFloat;
      break;
    default: return absl::UnimplementedError(StrCat("sort keys of ", PrimitiveTypeName(t)));
  }
  return key;
}

class SortThunk : public GpuThunk {
 public:
  SortThunk(const HloInstruction& inst, std::shared_ptr<CudaRoutineLibraries> libs, SortKey key)
      : GpuThunk(inst), libs_(std::move(libs)), key_(key) {}

  absl::Status Build() {
    const Shape& s = instruction_.operand(0)->shape();
    const int64_t dim = instruction_.dimensions(0);
    length_ = s.dimensions(dim);
    inner_ = 1;
    for (int64_t d = dim + 1; d < s.rank(); ++d) inner_ *= s.dimensions(d);
    count_ = s.element_count();
    rows_ = length_ == 0 ? 0 : count_ / length_;
    padded_ = 1;
    while (padded_ < length_) padded_ *= 2;
    if (count_ == 0) return absl::OkStatus();
    ASSIGN_OR_RETURN(sort_rows_, libs_->Kernel("passlab_sort_rows"));
    ASSIGN_OR_RETURN(gather_, libs_->Kernel("passlab_sort_gather"));
    int64_t staging = 0;
    for (const HloInstruction* op : instruction_.operands()) staging += Aligned(BufferBytes(op->shape()));
    ASSIGN_OR_RETURN(permutation_, DeviceBuffer::Allocate(libs_->device(), count_ * int64_t{sizeof(uint32_t)},
                                                          StrCat(instruction_.name(), " sort permutation")));
    ASSIGN_OR_RETURN(staging_, DeviceBuffer::Allocate(libs_->device(), staging,
                                                      StrCat(instruction_.name(), " sort staging")));
    return absl::OkStatus();
  }

  KernelKind kind() const override { return KernelKind::kRuntimeRoutine; }
  std::string detail() const override {
    return StrCat("bitonic sort ", rows_, " rows of ", length_, key_.descending ? " descending" : " ascending");
  }
  LaunchDims launch() const override { return LaunchDims{rows_, 1, 1, BlockSize(), 1, 1}; }
  int64_t shared_memory_bytes() const override { return padded_ * 12; }

  absl::Status Run(const DeviceProgram& p, DeviceFrame& f, GpuRunContext& ctx) override {
    if (count_ == 0) return absl::OkStatus();
    std::vector<CUdeviceptr> b = Buffers(p, f);
    const std::string& name = instruction_.name();
    const size_t n = instruction_.operand_count();
    {
      CUdeviceptr in = b[key_.operand], perm = permutation_.ptr();
      uint64_t length = length_, inner = inner_;
      uint32_t width = PrimitiveByteWidth(instruction_.operand(key_.operand)->shape().element_type());
      uint32_t kind = static_cast<uint32_t>(key_.kind), descending = key_.descending ? 1 : 0;
      uint32_t padded = static_cast<uint32_t>(padded_);
      RETURN_IF_ERROR(Launch(ctx, sort_rows_, static_cast<unsigned>(rows_), BlockSize(),
                             static_cast<unsigned>(padded_ * 12),
                             {&in, &perm, &length, &inner, &width, &kind, &descending, &padded},
                             StrCat("passlab_sort_rows, ", name)));
    }
    // Operands whose buffer holds a result are gathered from copies made
    // before any result is written.
    std::vector<CUdeviceptr> from(b.begin(), b.begin() + n);
    int64_t offset = 0;
    for (size_t k = 0; k < n; ++k) {
      const int64_t bytes = BufferBytes(instruction_.operand(k)->shape());
      if (std::find(b.begin() + n, b.end(), b[k]) == b.end()) continue;
      RETURN_IF_ERROR(CopyOnDevice(ctx, staging_.ptr() + offset, b[k], bytes, name));
      from[k] = staging_.ptr() + offset;
      offset += Aligned(bytes);
    }
    for (size_t k = 0; k < n; ++k) {
      CUdeviceptr in = from[k], out = b[n + k], perm = permutation_.ptr();
      uint64_t count = count_, length = length_, inner = inner_;
      uint32_t width = PrimitiveByteWidth(instruction_.operand(k)->shape().element_type());
      RETURN_IF_ERROR(Launch(ctx, gather_, BlocksFor(count_), kThreadsPerBlock, 0,
                             {&out, &in, &perm, &count, &length, &inner, &width},
                             StrCat("passlab_sort_gather, ", name, " operand ", k)));
    }
    return absl::OkStatus();
  }

 private:
  unsigned BlockSize() const { return static_cast<unsigned>(std::clamp<int64_t>(padded_, 32, 1024)); }

  std::shared_ptr<CudaRoutineLibraries> libs_;
  SortKey key_;
  int64_t length_ = 0, inner_ = 1, count_ = 0, rows_ = 0, padded_ = 1;
  CUfunction sort_rows_ = nullptr, gather_ = nullptr;
  DeviceBuffer permutation_, staging_;
};

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateSortThunk(const HloInstruction& inst, DeviceProgramContext& ctx) {
  if (inst.operand_count() == 0 || inst.dimensions().size() != 1) {
    return absl::UnimplementedError("sort needs operands and one sort dimension");
  }
  const Shape& shape = inst.operand(0)->shape();
  const int64_t dim = inst.dimensions(0);
  if (dim < 0 || dim >= shape.rank()) return absl::UnimplementedError(StrCat("sort dimension ", dim, " out of range"));
  std::vector<Shape> results = LeafShapes(inst.shape());
  if (static_cast<int64_t>(results.size()) != inst.operand_count()) {
    return absl::UnimplementedError("one result per operand expected");
  }
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    const Shape& op = inst.operand(k)->shape();
    if (op.dimensions() != shape.dimensions() || results[k].dimensions() != shape.dimensions() ||
        results[k].element_type() != op.element_type()) {
      return absl::UnimplementedError("sort operands and results of different shapes");
    }
    const int width = PrimitiveByteWidth(op.element_type());
    if (width != 1 && width != 2 && width != 4 && width != 8) {
      return absl::UnimplementedError(StrCat("sort of ", PrimitiveTypeName(op.element_type()), " elements"));
    }
  }
  if (shape.dimensions(dim) > kMaxSortLength) {
    return absl::UnimplementedError(
        StrCat("sort lines of ", shape.dimensions(dim), " elements (the device sort takes up to ", kMaxSortLength, ")"));
  }
  if (shape.element_count() / std::max<int64_t>(shape.dimensions(dim), 1) > std::numeric_limits<int32_t>::max()) {
    return absl::UnimplementedError("more sort lines than one grid holds");
  }
  ASSIGN_OR_RETURN(SortKey key, RecognizeSortKey(inst));
  auto thunk = std::make_unique<SortThunk>(inst, RoutineLibraries(ctx), key);
  RETURN_IF_ERROR(thunk->Build());
  return thunk;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuThunk>> CreateRoutineThunk(const HloInstruction& inst, DeviceProgramContext& ctx) {
  auto with_why = [&](absl::StatusOr<std::unique_ptr<GpuThunk>> t) -> absl::StatusOr<std::unique_ptr<GpuThunk>> {
    if (t.ok() || !absl::IsUnimplemented(t.status())) return t;
    return absl::UnimplementedError(StrCat("no device ", HloOpcodeString(inst.opcode()), ": ", t.status().message()));
  };
  switch (inst.opcode()) {
    case HloOpcode::kFft:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kSort:
      if (absl::Status s = CheckRowMajor(inst); !s.ok()) return with_why(s);
      break;
    default: break;
  }
  switch (inst.opcode()) {
    case HloOpcode::kFft: return with_why(CreateFftThunk(inst, ctx));
    case HloOpcode::kCholesky: return with_why(CreateCholeskyThunk(inst, ctx));
    case HloOpcode::kTriangularSolve: return with_why(CreateTriangularSolveThunk(inst, ctx));
    case HloOpcode::kSort: return with_why(CreateSortThunk(inst, ctx));
    default:
      return absl::UnimplementedError(StrCat("no device implementation of ", HloOpcodeString(inst.opcode()),
                                             " (runtime routine)"));
  }
}

}  // namespace passlab

#endif  // PASSLAB_CUDA_MATH_LIBRARIES
