#include "core/backends/cuda/cuda_library_call.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/backends/cuda/cuda_library_plan.h"
#include "core/backends/cuda/cudnn_engines.h"

namespace passlab {
namespace {

absl::Status CheckBlas(cublasStatus_t s, std::string_view call) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  absl::StatusCode code = s == CUBLAS_STATUS_NOT_SUPPORTED ? absl::StatusCode::kUnimplemented
                                                           : absl::StatusCode::kInternal;
  return absl::Status(code, StrCat(call, ": ", cublasLtGetStatusName(s)));
}

absl::Status CheckDnn(cudnnStatus_t s, std::string_view call) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  absl::StatusCode code = s == CUDNN_STATUS_NOT_SUPPORTED || s == CUDNN_STATUS_BAD_PARAM
                              ? absl::StatusCode::kUnimplemented
                              : absl::StatusCode::kInternal;
  return absl::Status(code, StrCat(call, ": ", cudnnGetErrorString(s)));
}

cudaDataType_t BlasType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return CUDA_R_16F;
    case PrimitiveType::kBF16: return CUDA_R_16BF;
    case PrimitiveType::kF64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

cudnnDataType_t DnnType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return CUDNN_DATA_HALF;
    case PrimitiveType::kBF16: return CUDNN_DATA_BFLOAT16;
    case PrimitiveType::kF64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

cublasLtEpilogue_t BlasEpilogue(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::kDefault: return CUBLASLT_EPILOGUE_DEFAULT;
    case GemmEpilogue::kBias: return CUBLASLT_EPILOGUE_BIAS;
    case GemmEpilogue::kRelu: return CUBLASLT_EPILOGUE_RELU;
    case GemmEpilogue::kBiasRelu: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case GemmEpilogue::kGelu: return CUBLASLT_EPILOGUE_GELU;
    case GemmEpilogue::kBiasGelu: return CUBLASLT_EPILOGUE_GELU_BIAS;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

// alpha/beta in the scale type (f64 for f64 problems, f32 otherwise).
struct Scale {
  float f = 0;
  double d = 0;
  const void* For(bool f64) const { return f64 ? static_cast<const void*>(&d) : static_cast<const void*>(&f); }
};
Scale MakeScale(double v) { return Scale{static_cast<float>(v), v}; }

// ---------------------------------------------------------------- cuBLASLt

class BlasLtGemm : public CudaLibraryCall {
 public:
  ~BlasLtGemm() override {
    for (cublasLtMatrixLayout_t l : {a_, b_, c_, d_}) {
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    }
    if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
    if (preference_ != nullptr) cublasLtMatmulPreferenceDestroy(preference_);
  }

  static absl::StatusOr<std::unique_ptr<BlasLtGemm>> Make(const HloInstruction& inst, CudaLibraries& libs) {
    ASSIGN_OR_RETURN(BlasLtGemmPlan plan, PlanBlasLtGemm(inst));
    std::unique_ptr<BlasLtGemm> g(new BlasLtGemm());
    g->name_ = inst.name();
    g->libs_ = &libs;
    g->p_ = plan;
    g->plan_ = BlasLtGemmPlanToString(plan);
    g->tf32_ = plan.tf32 && libs.allow_tf32();
    g->flops_ = plan.flops;
    if (absl::Status s = g->Describe(); !s.ok()) return absl::Status(s.code(), StrCat(inst.name(), ": ", s.message()));
    return g;
  }

  // The heuristic's candidates (at most kCudaGemmHeuristics).
  absl::StatusOr<std::vector<cublasLtMatmulHeuristicResult_t>> Candidates() {
    std::vector<cublasLtMatmulHeuristicResult_t> results(kCudaGemmHeuristics);
    int returned = 0;
    RETURN_IF_ERROR(
        CheckBlas(cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(libs_->blas_lt()), op_, a_, b_, c_, d_,
                                                 preference_, kCudaGemmHeuristics, results.data(), &returned),
                  StrCat("cublasLtMatmulAlgoGetHeuristic(", name_, ")")));
    results.resize(returned);
    if (results.empty()) {
      return absl::UnimplementedError(StrCat("cublasLtMatmulAlgoGetHeuristic(", name_, "): no algorithm for ", plan_));
    }
    return results;
  }

  absl::Status Choose(std::optional<int64_t> algorithm, int64_t selected) {
    ASSIGN_OR_RETURN(std::vector<cublasLtMatmulHeuristicResult_t> c, Candidates());
    int64_t index = 0;
    if (algorithm.has_value()) {
      if (*algorithm < 0 || *algorithm >= static_cast<int64_t>(c.size())) {
        return absl::InvalidArgumentError(StrCat(name_, ": cuBLASLt offers ", c.size(), " algorithms, not #",
                                                 *algorithm));
      }
      index = *algorithm;
    } else if (selected >= 0 && selected < static_cast<int64_t>(c.size())) {
      index = selected;
    }
    algo_ = c[index].algo;
    workspace_bytes_ = static_cast<int64_t>(c[index].workspaceSize);
    algorithm_ = LibraryAlgorithm{index, StrCat("cublasLt#", index)};
    return libs_->ReserveWorkspace(workspace_bytes_);
  }

  absl::Status Run(absl::Span<const CUdeviceptr> buffers, CUstream stream) override {
    auto ptr = [&](int64_t i) { return reinterpret_cast<void*>(buffers[i]); };
    int64_t result = operands_;  // the first result leaf
    if (static_cast<int64_t>(buffers.size()) <= result) {
      return absl::InvalidArgumentError(StrCat(name_, ": expected ", result, " operand buffers and a result"));
    }
    if (p_.m * p_.n * p_.batch == 0) return absl::OkStatus();
    if (p_.bias_buffer >= 0) {
      void* bias = ptr(p_.bias_buffer);
      RETURN_IF_ERROR(
          CheckBlas(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
                    "cublasLtMatmulDescSetAttribute(bias)"));
    }
    bool f64 = p_.compute == BlasLtComputeType::k64F;
    Scale alpha = MakeScale(p_.alpha), beta = MakeScale(p_.c_buffer >= 0 ? p_.beta : 0);
    // One call, or one per outer batch (BlasLtGemmPlan::outer_*).
    size_t calls = std::max<size_t>(p_.outer_d.size(), 1);
    auto at = [&](int64_t buffer, const std::vector<int64_t>& outer, const BlasLtMatrix& m, size_t i) {
      int64_t offset = outer.empty() ? 0 : outer[i] * PrimitiveByteWidth(m.type);
      return reinterpret_cast<void*>(buffers[buffer] + offset);
    };
    for (size_t i = 0; i < calls; ++i) {
      void* d = at(result, p_.outer_d, p_.d, i);
      const void* c = p_.c_buffer >= 0 ? at(p_.c_buffer, p_.outer_c, p_.c, i) : d;
      RETURN_IF_ERROR(
          CheckBlas(cublasLtMatmul(static_cast<cublasLtHandle_t>(libs_->blas_lt()), op_, alpha.For(f64),
                                   at(p_.a_buffer, p_.outer_a, p_.a, i), a_, at(p_.b_buffer, p_.outer_b, p_.b, i), b_,
                                   beta.For(f64), c, c_, d, d_, &algo_, reinterpret_cast<void*>(libs_->workspace()),
                                   workspace_bytes_, reinterpret_cast<cudaStream_t>(stream)),
                    StrCat("cublasLtMatmul(", name_, calls > 1 ? StrCat(", call ", i + 1, " of ", calls) : "", ")")));
    }
    return absl::OkStatus();
  }

  int64_t operands_ = 0;

 private:
  BlasLtGemm() = default;

  absl::Status Layout(cublasLtMatrixLayout_t& l, const BlasLtMatrix& m) {
    RETURN_IF_ERROR(CheckBlas(cublasLtMatrixLayoutCreate(&l, BlasType(m.type), m.rows, m.cols, m.ld),
                              "cublasLtMatrixLayoutCreate"));
    if (p_.batch == 1) return absl::OkStatus();
    int32_t count = static_cast<int32_t>(p_.batch);
    int64_t stride = m.batch_stride;
    RETURN_IF_ERROR(
        CheckBlas(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                  "cublasLtMatrixLayoutSetAttribute(batch count)"));
    return CheckBlas(
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
        "cublasLtMatrixLayoutSetAttribute(batch stride)");
  }

  absl::Status Describe() {
    bool f64 = p_.compute == BlasLtComputeType::k64F;
    RETURN_IF_ERROR(CheckBlas(
        cublasLtMatmulDescCreate(&op_,
                                 f64                                        ? CUBLAS_COMPUTE_64F
                                 : p_.tf32 && libs_->allow_tf32()           ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                            : CUBLAS_COMPUTE_32F,
                                 f64 ? CUDA_R_64F : CUDA_R_32F),
        "cublasLtMatmulDescCreate"));
    cublasOperation_t ta = p_.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p_.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtEpilogue_t epilogue = BlasEpilogue(p_.epilogue);
    struct Attr {
      cublasLtMatmulDescAttributes_t attr;
      const void* value;
      size_t size;
    };
    std::vector<Attr> attrs = {{CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)},
                               {CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)},
                               {CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)}};
    cudaDataType_t bias_type = BlasType(p_.bias_type);
    if (p_.bias_buffer >= 0) attrs.push_back({CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type)});
    for (const Attr& a : attrs) {
      RETURN_IF_ERROR(CheckBlas(cublasLtMatmulDescSetAttribute(op_, a.attr, a.value, a.size),
                                StrCat("cublasLtMatmulDescSetAttribute(", static_cast<int>(a.attr), ")")));
    }
    for (auto [layout, matrix] : {std::pair{&a_, &p_.a}, {&b_, &p_.b}, {&c_, &p_.c}, {&d_, &p_.d}}) {
      RETURN_IF_ERROR(Layout(*layout, *matrix));
    }
    RETURN_IF_ERROR(CheckBlas(cublasLtMatmulPreferenceCreate(&preference_), "cublasLtMatmulPreferenceCreate"));
    uint64_t max_workspace = uint64_t{64} << 20;
    return CheckBlas(cublasLtMatmulPreferenceSetAttribute(preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &max_workspace, sizeof(max_workspace)),
                     "cublasLtMatmulPreferenceSetAttribute");
  }

  std::string name_;
  CudaLibraries* libs_ = nullptr;
  BlasLtGemmPlan p_;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasLtMatmulPreference_t preference_ = nullptr;
  cublasLtMatmulAlgo_t algo_ = {};
};

// ---------------------------------------------------------------- cuDNN

std::vector<int> Ints(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

class DnnConvolution : public CudaLibraryCall {
 public:
  ~DnnConvolution() override {
    for (cudnnTensorDescriptor_t t : {x_, y_, bias_, side_, w_strided_, w_packed_}) {
      if (t != nullptr) cudnnDestroyTensorDescriptor(t);
    }
    if (w_ != nullptr) cudnnDestroyFilterDescriptor(w_);
    if (conv_ != nullptr) cudnnDestroyConvolutionDescriptor(conv_);
    if (activation_ != nullptr) cudnnDestroyActivationDescriptor(activation_);
  }

  static absl::StatusOr<std::unique_ptr<DnnConvolution>> Make(const HloInstruction& inst, CudaLibraries& libs) {
    ASSIGN_OR_RETURN(DnnConvPlan plan, PlanDnnConvolution(inst));
    std::unique_ptr<DnnConvolution> c(new DnnConvolution());
    c->name_ = inst.name();
    c->libs_ = &libs;
    c->p_ = plan;
    c->plan_ = DnnConvPlanToString(plan);
    c->tf32_ = plan.tf32 && libs.allow_tf32();
    c->flops_ = plan.flops;
    if (absl::Status s = c->Describe(); !s.ok()) return absl::Status(s.code(), StrCat(inst.name(), ": ", s.message()));
    return c;
  }

  struct Candidate {
    int64_t id = 0;
    int64_t workspace_bytes = 0;
    std::string name;
  };

  // Every algorithm the picker may time: the legacy API's, then the graph
  // API's engines (cudnn_engines.h; none where PASSLAB_CUDNN_ENGINES=0 or
  // the graph API does not take the problem).
  absl::StatusOr<std::vector<Candidate>> Candidates() {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> legacy = LegacyCandidates();
    std::vector<Candidate> out;
    if (legacy.ok()) {
      for (const auto& [id, bytes] : *legacy) out.push_back({id, bytes, StrCat("cudnn#", id)});
    }
    if (DnnGraphConvolution* g = Graph()) {
      absl::StatusOr<std::vector<DnnEngineChoice>> engines = g->Engines();
      if (engines.ok()) {
        for (const DnnEngineChoice& e : *engines) out.push_back({e.id, e.workspace_bytes, e.name});
      }
    }
    if (out.empty()) return legacy.status();
    return out;
  }

  // cuDNN's legacy algorithms for the problem that report success, with
  // their workspace sizes, in cuDNN's (heuristic) order.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> LegacyCandidates() {
    constexpr int kMax = 16;
    int returned = 0;
    std::vector<std::pair<int64_t, int64_t>> out;
    cudnnHandle_t h = handle();
    auto collect = [&](const auto& perf) {
      for (int i = 0; i < returned; ++i) {
        if (perf[i].status == CUDNN_STATUS_SUCCESS) out.emplace_back(perf[i].algo, perf[i].memory);
      }
    };
    absl::Status s;
    switch (p_.kind) {
      case LibraryCallKind::kConvBackwardInput: {
        cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
        s = CheckDnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w_, y_, conv_, x_, kMax, &returned, perf),
                     "cudnnGetConvolutionBackwardDataAlgorithm_v7");
        if (s.ok()) collect(perf);
        break;
      }
      case LibraryCallKind::kConvBackwardFilter: {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
        s = CheckDnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x_, y_, conv_, w_, kMax, &returned, perf),
                     "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
        if (s.ok()) collect(perf);
        break;
      }
      default: {
        cudnnConvolutionFwdAlgoPerf_t perf[kMax];
        s = CheckDnn(cudnnGetConvolutionForwardAlgorithm_v7(h, x_, w_, conv_, y_, kMax, &returned, perf),
                     "cudnnGetConvolutionForwardAlgorithm_v7");
        if (s.ok()) collect(perf);
        // The fused call with identity activation takes only this one.
        if (p_.kind == LibraryCallKind::kConvBiasActivationForward && p_.activation == ConvActivation::kNone) {
          std::erase_if(out, [](const auto& a) { return a.first != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM; });
        }
        break;
      }
    }
    if (!s.ok()) return absl::Status(s.code(), StrCat(name_, ": ", s.message()));
    if (out.empty()) return absl::UnimplementedError(StrCat(name_, ": cuDNN offers no algorithm for ", plan_));
    return out;
  }

  absl::Status Choose(std::optional<int64_t> algorithm, int64_t configured) {
    std::optional<int64_t> wanted = algorithm.has_value() ? algorithm : std::optional<int64_t>(configured);
    if (wanted && IsDnnEngineId(*wanted)) {
      DnnGraphConvolution* g = Graph();
      absl::StatusOr<DnnEngineChoice> e =
          g != nullptr ? g->Select(*wanted)
                       : absl::StatusOr<DnnEngineChoice>(absl::UnimplementedError(
                             DnnEnginesEnabled() ? graph_error_ : "cuDNN engines are off (PASSLAB_CUDNN_ENGINES=0)"));
      if (e.ok()) return UseEngine(*e);
      if (algorithm.has_value()) return absl::Status(e.status().code(), StrCat(name_, ": ", e.status().message()));
      // A configured engine this process cannot build: the legacy API's first choice.
    }
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> c = LegacyCandidates();
    if (!c.ok()) {
      // No legacy algorithm: the graph API's first engine, where it has one.
      DnnGraphConvolution* g = Graph();
      absl::StatusOr<std::vector<DnnEngineChoice>> engines =
          g != nullptr ? g->Engines() : absl::StatusOr<std::vector<DnnEngineChoice>>(c.status());
      if (algorithm.has_value() || !engines.ok() || engines->empty()) return c.status();
      ASSIGN_OR_RETURN(DnnEngineChoice e, g->Select(engines->front().id));
      return UseEngine(e);
    }
    const std::pair<int64_t, int64_t>* pick = &(*c)[0];
    auto found = std::find_if(c->begin(), c->end(), [&](const auto& a) { return wanted && a.first == *wanted; });
    if (found != c->end()) {
      pick = &*found;
    } else if (algorithm.has_value()) {
      return absl::InvalidArgumentError(StrCat(name_, ": cuDNN algorithm ", *algorithm, " cannot run ", plan_));
    }
    algorithm_ = LibraryAlgorithm{pick->first, StrCat("cudnn#", pick->first)};
    return Reserve(pick->second);
  }

  // Runs through the graph API's selected engine from now on.
  absl::Status UseEngine(const DnnEngineChoice& e) {
    use_graph_ = true;
    algorithm_ = LibraryAlgorithm{e.id, e.name};
    return Reserve(e.workspace_bytes);
  }

  absl::Status Reserve(int64_t workspace_bytes) {
    workspace_bytes_ = workspace_bytes;
    // A strided filter's packed copy lives after the algorithm's workspace.
    filter_offset_ = (workspace_bytes_ + 255) / 256 * 256;
    int64_t total = p_.w_order == DnnFilterOrder::kStrided ? filter_offset_ + p_.w_bytes : workspace_bytes_;
    return libs_->ReserveWorkspace(total);
  }

  absl::Status Run(absl::Span<const CUdeviceptr> buffers, CUstream stream) override {
    auto ptr = [&](int64_t i) { return reinterpret_cast<void*>(buffers[i]); };
    cudnnHandle_t h = handle();
    RETURN_IF_ERROR(CheckDnn(cudnnSetStream(h, reinterpret_cast<cudaStream_t>(stream)), "cudnnSetStream"));
    bool f64 = p_.type == PrimitiveType::kF64;
    Scale one = MakeScale(1), zero = MakeScale(0);
    void* ws = reinterpret_cast<void*>(libs_->workspace());
    size_t ws_bytes = workspace_bytes_;
    std::string call = StrCat(LibraryCallKindName(p_.kind), "(", name_, ")");
    void* w = ptr(p_.w_buffer);
    bool strided = p_.w_order == DnnFilterOrder::kStrided;
    if (strided) {
      void* packed = reinterpret_cast<void*>(libs_->workspace() + filter_offset_);
      if (p_.kind != LibraryCallKind::kConvBackwardFilter) {
        RETURN_IF_ERROR(CheckDnn(cudnnTransformTensor(h, one.For(f64), w_strided_, w, zero.For(f64), w_packed_, packed),
                                 StrCat("cudnnTransformTensor(", name_, " filter)")));
      }
      w = packed;
    }
    if (use_graph_) {
      void* x = ptr(p_.x_buffer);
      void* y = ptr(p_.y_buffer);
      absl::Status s = graph_->Execute(x, w, y, ws);
      if (!s.ok()) return absl::Status(s.code(), StrCat(call, " (", algorithm_.name, "): ", s.message()));
      if (p_.kind != LibraryCallKind::kConvBackwardFilter || !strided) return s;
      return CheckDnn(cudnnTransformTensor(h, one.For(f64), w_packed_, w, zero.For(f64), w_strided_, ptr(p_.w_buffer)),
                      StrCat("cudnnTransformTensor(", name_, " filter gradient)"));
    }
    if (p_.kind == LibraryCallKind::kConvBackwardFilter) {
      absl::Status s =
          CheckDnn(cudnnConvolutionBackwardFilter(h, one.For(f64), x_, ptr(p_.x_buffer), y_, ptr(p_.y_buffer), conv_,
                                                  static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm_.id), ws,
                                                  ws_bytes, zero.For(f64), w_, w),
                   call);
      if (!s.ok() || !strided) return s;
      return CheckDnn(cudnnTransformTensor(h, one.For(f64), w_packed_, w, zero.For(f64), w_strided_, ptr(p_.w_buffer)),
                      StrCat("cudnnTransformTensor(", name_, " filter gradient)"));
    }
    switch (p_.kind) {
      case LibraryCallKind::kConvForward:
        return CheckDnn(cudnnConvolutionForward(h, one.For(f64), x_, ptr(p_.x_buffer), w_, w, conv_,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_.id), ws, ws_bytes,
                                                zero.For(f64), y_, ptr(p_.y_buffer)),
                        call);
      case LibraryCallKind::kConvBackwardInput:
        return CheckDnn(cudnnConvolutionBackwardData(h, one.For(f64), w_, w, y_, ptr(p_.y_buffer),
                                                     conv_, static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm_.id),
                                                     ws, ws_bytes, zero.For(f64), x_, ptr(p_.x_buffer)),
                        call);
      default: {
        Scale alpha1 = MakeScale(p_.conv_scale);
        bool side = p_.side_input_buffer >= 0;
        Scale alpha2 = MakeScale(side ? p_.side_input_scale : 0);
        // Without a side input, z is y itself with a zero scale.
        cudnnTensorDescriptor_t z_desc = side ? side_ : y_;
        void* z = side ? ptr(p_.side_input_buffer) : ptr(p_.y_buffer);
        return CheckDnn(cudnnConvolutionBiasActivationForward(
                            h, alpha1.For(f64), x_, ptr(p_.x_buffer), w_, w, conv_,
                            static_cast<cudnnConvolutionFwdAlgo_t>(algorithm_.id), ws, ws_bytes, alpha2.For(f64),
                            z_desc, z, bias_, ptr(p_.bias_buffer), activation_, y_, ptr(p_.y_buffer)),
                        call);
      }
    }
  }

 private:
  DnnConvolution() = default;
  cudnnHandle_t handle() const { return static_cast<cudnnHandle_t>(libs_->dnn()); }

  absl::Status Tensor(cudnnTensorDescriptor_t& t, const DnnTensor& plan, PrimitiveType type) {
    RETURN_IF_ERROR(CheckDnn(cudnnCreateTensorDescriptor(&t), "cudnnCreateTensorDescriptor"));
    std::vector<int> dims = Ints(plan.dims), strides = Ints(plan.strides);
    return CheckDnn(cudnnSetTensorNdDescriptor(t, DnnType(type), static_cast<int>(dims.size()), dims.data(),
                                               strides.data()),
                    StrCat("cudnnSetTensorNdDescriptor([", Join(plan.dims, ","), "])"));
  }

  absl::Status Describe() {
    RETURN_IF_ERROR(Tensor(x_, p_.x, p_.type));
    RETURN_IF_ERROR(Tensor(y_, p_.y, p_.type));
    RETURN_IF_ERROR(CheckDnn(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor"));
    std::vector<int> w_dims = Ints(p_.w_dims);
    // The filter as cuDNN reads it (K,C,spatial... dims; KCRS or KRSC
    // strides): the filter itself, or a strided one's packed copy.
    std::vector<int64_t> order;  // dims from minor to major
    if (p_.packed_order == DnnFilterOrder::kKRSC) {
      order.push_back(1);
      for (int64_t i = static_cast<int64_t>(p_.w_dims.size()) - 1; i >= 2; --i) order.push_back(i);
      order.push_back(0);
    } else {
      for (int64_t i = static_cast<int64_t>(p_.w_dims.size()) - 1; i >= 0; --i) order.push_back(i);
    }
    packed_strides_.assign(p_.w_dims.size(), 1);
    int64_t packed_stride = 1;
    for (int64_t dim : order) {
      packed_strides_[dim] = packed_stride;
      packed_stride *= p_.w_dims[dim];
    }
    if (p_.w_order == DnnFilterOrder::kStrided) {
      RETURN_IF_ERROR(Tensor(w_strided_, DnnTensor{p_.w_dims, p_.w_strides}, p_.type));
      RETURN_IF_ERROR(Tensor(w_packed_, DnnTensor{p_.w_dims, packed_strides_}, p_.type));
    }
    RETURN_IF_ERROR(CheckDnn(
        cudnnSetFilterNdDescriptor(w_, DnnType(p_.type),
                                   p_.packed_order == DnnFilterOrder::kKRSC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                   static_cast<int>(w_dims.size()), w_dims.data()),
        "cudnnSetFilterNdDescriptor"));
    RETURN_IF_ERROR(CheckDnn(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor"));
    std::vector<int> pad = Ints(p_.padding), stride = Ints(p_.stride), dilation = Ints(p_.dilation);
    RETURN_IF_ERROR(
        CheckDnn(cudnnSetConvolutionNdDescriptor(conv_, static_cast<int>(pad.size()), pad.data(), stride.data(),
                                                 dilation.data(), p_.convolution_mode ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                                 DnnType(p_.compute)),
                 "cudnnSetConvolutionNdDescriptor"));
    RETURN_IF_ERROR(CheckDnn(cudnnSetConvolutionGroupCount(conv_, static_cast<int>(p_.groups)),
                             "cudnnSetConvolutionGroupCount"));
    // Tensor cores for f16/bf16, and TF32 for f32 where XLA allows it
    // (plan.tf32); otherwise f32/f64 in full precision, as the evaluator.
    RETURN_IF_ERROR(CheckDnn(cudnnSetConvolutionMathType(conv_, TensorMath() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH),
                             "cudnnSetConvolutionMathType"));
    if (p_.kind != LibraryCallKind::kConvBiasActivationForward) return absl::OkStatus();
    RETURN_IF_ERROR(Tensor(bias_, p_.bias, p_.type));
    if (p_.side_input_buffer >= 0) {
      RETURN_IF_ERROR(Tensor(side_, p_.side_input, p_.type));
    }
    cudnnActivationMode_t mode = CUDNN_ACTIVATION_IDENTITY;
    double coef = 0;
    switch (p_.activation) {
      case ConvActivation::kNone: mode = CUDNN_ACTIVATION_IDENTITY; break;
      case ConvActivation::kRelu: mode = CUDNN_ACTIVATION_RELU; break;
      case ConvActivation::kRelu6: mode = CUDNN_ACTIVATION_CLIPPED_RELU, coef = 6; break;
      case ConvActivation::kElu: mode = CUDNN_ACTIVATION_ELU, coef = 1; break;
      case ConvActivation::kTanh: mode = CUDNN_ACTIVATION_TANH; break;
      case ConvActivation::kSigmoid: mode = CUDNN_ACTIVATION_SIGMOID; break;
    }
    RETURN_IF_ERROR(CheckDnn(cudnnCreateActivationDescriptor(&activation_), "cudnnCreateActivationDescriptor"));
    return CheckDnn(cudnnSetActivationDescriptor(activation_, mode, CUDNN_NOT_PROPAGATE_NAN, coef),
                    "cudnnSetActivationDescriptor");
  }

  bool TensorMath() const {
    bool half = p_.type == PrimitiveType::kF16 || p_.type == PrimitiveType::kBF16;
    return half || (p_.tf32 && libs_->allow_tf32());
  }

  // The problem in cuDNN's graph API, built on first use; null where engines
  // are off or the graph API does not take it (graph_error_ says why).
  DnnGraphConvolution* Graph() {
    if (graph_ == nullptr && graph_error_.empty()) {
      if (!DnnEnginesEnabled()) {
        graph_error_ = "cuDNN engines are off (PASSLAB_CUDNN_ENGINES=0)";
        return nullptr;
      }
      absl::StatusOr<std::unique_ptr<DnnGraphConvolution>> g =
          DnnGraphConvolution::Make(p_, packed_strides_, handle(), TensorMath());
      if (g.ok()) {
        graph_ = *std::move(g);
      } else {
        graph_error_ = std::string(g.status().message());
      }
    }
    return graph_.get();
  }

  std::string name_;
  CudaLibraries* libs_ = nullptr;
  DnnConvPlan p_;
  std::vector<int64_t> packed_strides_;  // of the filter cuDNN reads
  std::unique_ptr<DnnGraphConvolution> graph_;
  std::string graph_error_;
  bool use_graph_ = false;  // the selected algorithm is a graph API engine
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, bias_ = nullptr, side_ = nullptr;
  cudnnTensorDescriptor_t w_strided_ = nullptr, w_packed_ = nullptr;  // kStrided filters
  int64_t filter_offset_ = 0;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t activation_ = nullptr;
};

}  // namespace

// ---------------------------------------------------------------- DeviceBuffer

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(const CudaDevice& device, int64_t bytes, std::string_view what) {
  DeviceBuffer b;
  b.device_ = &device;
  b.bytes_ = bytes;
  if (bytes == 0) return b;
  if (absl::Status s = device.Check(device.api().cuMemAlloc(&b.ptr_, static_cast<size_t>(bytes)),
                                    StrCat("cuMemAlloc(", what, ", ", bytes, " bytes)"));
      !s.ok()) {
    b.ptr_ = 0;
    return s;
  }
  return b;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this == &o) return *this;
  if (ptr_ != 0) device_->api().cuMemFree(ptr_);
  device_ = o.device_;
  ptr_ = o.ptr_;
  bytes_ = o.bytes_;
  o.ptr_ = 0;
  o.bytes_ = 0;
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != 0) device_->api().cuMemFree(ptr_);
}

// ---------------------------------------------------------------- CudaLibraries

absl::StatusOr<std::unique_ptr<CudaLibraries>> CudaLibraries::Create(const CudaDevice& device) {
  RETURN_IF_ERROR(device.Activate());
  std::unique_ptr<CudaLibraries> l(new CudaLibraries(device));
  // NVIDIA's switch for the whole process, which cuBLAS and cuDNN obey too.
  const char* tf32_override = std::getenv("NVIDIA_TF32_OVERRIDE");
  l->allow_tf32_ = tf32_override == nullptr || std::string_view(tf32_override) != "0";
  cublasLtHandle_t lt = nullptr;
  RETURN_IF_ERROR(CheckBlas(cublasLtCreate(&lt), "cublasLtCreate"));
  l->blas_lt_ = lt;
  cudnnHandle_t dnn = nullptr;
  RETURN_IF_ERROR(CheckDnn(cudnnCreate(&dnn), "cudnnCreate"));
  l->dnn_ = dnn;
  return l;
}

CudaLibraries::~CudaLibraries() {
  if (blas_lt_ != nullptr) cublasLtDestroy(static_cast<cublasLtHandle_t>(blas_lt_));
  if (dnn_ != nullptr) cudnnDestroy(static_cast<cudnnHandle_t>(dnn_));
}

absl::Status CudaLibraries::ReserveWorkspace(int64_t bytes) {
  if (bytes <= workspace_.bytes()) return absl::OkStatus();
  workspace_ = DeviceBuffer();
  ASSIGN_OR_RETURN(DeviceBuffer b, DeviceBuffer::Allocate(device_, bytes, "library workspace"));
  workspace_ = std::move(b);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- CudaLibraryCall

absl::StatusOr<std::unique_ptr<CudaLibraryCall>> CudaLibraryCall::Create(const HloInstruction& inst,
                                                                         CudaLibraries& libraries,
                                                                         std::optional<int64_t> algorithm) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return absl::InvalidArgumentError(StrCat(inst.name(), " is not a library call"));
  if (*kind == LibraryCallKind::kGemm) {
    ASSIGN_OR_RETURN(GemmBackendConfig config, ParseGemmBackendConfig(inst));
    ASSIGN_OR_RETURN(std::unique_ptr<BlasLtGemm> g, BlasLtGemm::Make(inst, libraries));
    g->operands_ = inst.operand_count();
    RETURN_IF_ERROR(g->Choose(algorithm, config.selected_algorithm));
    return std::unique_ptr<CudaLibraryCall>(std::move(g));
  }
  if (IsConvolutionKind(*kind)) {
    ASSIGN_OR_RETURN(ConvBackendConfig config, ParseConvBackendConfig(inst));
    ASSIGN_OR_RETURN(std::unique_ptr<DnnConvolution> c, DnnConvolution::Make(inst, libraries));
    RETURN_IF_ERROR(c->Choose(algorithm, config.algo_id));
    return std::unique_ptr<CudaLibraryCall>(std::move(c));
  }
  return absl::UnimplementedError(
      StrCat(inst.name(), ": no GPU library for ", LibraryCallKindName(*kind), " (runs on the host)"));
}

absl::StatusOr<std::vector<LibraryAlgorithm>> ListCudaAlgorithms(const HloInstruction& inst,
                                                                 CudaLibraries& libraries) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return absl::InvalidArgumentError(StrCat(inst.name(), " is not a library call"));
  std::vector<LibraryAlgorithm> out;
  if (*kind == LibraryCallKind::kGemm) {
    ASSIGN_OR_RETURN(std::unique_ptr<BlasLtGemm> g, BlasLtGemm::Make(inst, libraries));
    ASSIGN_OR_RETURN(std::vector<cublasLtMatmulHeuristicResult_t> c, g->Candidates());
    for (size_t i = 0; i < c.size(); ++i) out.push_back({static_cast<int64_t>(i), StrCat("cublasLt#", i)});
    return out;
  }
  if (IsConvolutionKind(*kind)) {
    ASSIGN_OR_RETURN(std::unique_ptr<DnnConvolution> conv, DnnConvolution::Make(inst, libraries));
    ASSIGN_OR_RETURN(auto c, conv->Candidates());
    for (const auto& candidate : c) out.push_back({candidate.id, candidate.name});
    return out;
  }
  return absl::UnimplementedError(StrCat(inst.name(), ": no GPU library for ", LibraryCallKindName(*kind)));
}

}  // namespace passlab
