#include "core/backends/cuda/cudnn_engines.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <set>
#include <string_view>
#include <utility>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// The unique ids of the graph's three tensors (the variant pack's keys).
constexpr int64_t kX = 1, kW = 2, kY = 3;
// Byte alignment promised for every data pointer: buffer assignment aligns
// buffers to 64 bytes, cuMemAlloc to 256, the packed filter's scratch to 256.
constexpr int64_t kAlignment = 16;

absl::Status CheckGraph(cudnnStatus_t s, std::string_view what) {
  if (s == CUDNN_STATUS_SUCCESS) return absl::OkStatus();
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  // NOT_SUPPORTED (3000-3999) and BAD_PARAM (2000-2999): cuDNN does not take
  // the problem this way; anything else is an error of the library.
  int family = static_cast<int>(s) / 1000;
  absl::StatusCode code = family == 2 || family == 3 ? absl::StatusCode::kUnimplemented : absl::StatusCode::kInternal;
  std::string message = StrCat(what, ": ", cudnnGetErrorString(s));
  if (detail[0] != 0) message = StrCat(message, " (", std::string_view(detail), ")");
  return absl::Status(code, message);
}

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  Desc() = default;
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&& o) noexcept {
    if (this != &o) {
      Reset();
      d_ = std::exchange(o.d_, nullptr);
    }
    return *this;
  }
  ~Desc() { Reset(); }
  static absl::StatusOr<Desc> Create(cudnnBackendDescriptorType_t type, std::string_view what) {
    Desc d;
    RETURN_IF_ERROR(CheckGraph(cudnnBackendCreateDescriptor(type, &d.d_), StrCat("cudnnBackendCreateDescriptor(", what, ")")));
    return d;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t release() { return std::exchange(d_, nullptr); }

 private:
  void Reset() {
    if (d_ != nullptr) cudnnBackendDestroyDescriptor(d_);
    d_ = nullptr;
  }
  cudnnBackendDescriptor_t d_ = nullptr;
};

template <typename T>
absl::Status Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                 const T* values, int64_t count, std::string_view what) {
  return CheckGraph(cudnnBackendSetAttribute(d, name, type, count, values), StrCat("cudnnBackendSetAttribute(", what, ")"));
}

absl::Status Finalize(cudnnBackendDescriptor_t d, std::string_view what) {
  return CheckGraph(cudnnBackendFinalize(d), StrCat("cudnnBackendFinalize(", what, ")"));
}

cudnnDataType_t GraphType(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return CUDNN_DATA_HALF;
    case PrimitiveType::kBF16: return CUDNN_DATA_BFLOAT16;
    case PrimitiveType::kF64: return CUDNN_DATA_DOUBLE;
    default: return CUDNN_DATA_FLOAT;
  }
}

absl::StatusOr<Desc> Tensor(int64_t uid, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
                            PrimitiveType type) {
  ASSIGN_OR_RETURN(Desc t, Desc::Create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor"));
  cudnnDataType_t dt = GraphType(type);
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt, 1, "tensor type"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(),
                      static_cast<int64_t>(dims.size()), "tensor dims"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(),
                      static_cast<int64_t>(strides.size()), "tensor strides"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid, 1, "tensor uid"));
  RETURN_IF_ERROR(Set(t.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &kAlignment, 1, "tensor alignment"));
  RETURN_IF_ERROR(Finalize(t.get(), StrCat("tensor [", Join(dims, ","), "]")));
  return t;
}

}  // namespace

bool DnnEnginesEnabled() {
  const char* v = std::getenv("PASSLAB_CUDNN_ENGINES");
  return v == nullptr || std::string_view(v) != "0";
}

// An engine config from the heuristics, with what the filter and the name
// need to know about it.
struct DnnGraphConvolution::Config {
  Desc cfg;
  int64_t engine = -1;  // cuDNN's global engine index
  std::vector<std::pair<int64_t, int64_t>> knobs;
  std::vector<cudnnBackendNumericalNote_t> notes;
  bool runtime_compiled = false;  // CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION
  bool Has(cudnnBackendNumericalNote_t n) const { return std::find(notes.begin(), notes.end(), n) != notes.end(); }
  std::string Name() const {
    std::vector<std::string> k;
    for (const auto& [type, value] : knobs) k.push_back(StrCat(type, ":", value));
    return StrCat("cudnn-engine#", engine, "{", Join(k, ","), "}");
  }
};

DnnGraphConvolution::~DnnGraphConvolution() {
  if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
  if (config_ != nullptr) cudnnBackendDestroyDescriptor(config_);
  if (pack_ != nullptr) cudnnBackendDestroyDescriptor(pack_);
  // The graph refers to the operation, which refers to the tensors: last first.
  for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) cudnnBackendDestroyDescriptor(*it);
}

absl::StatusOr<std::unique_ptr<DnnGraphConvolution>> DnnGraphConvolution::Make(const DnnConvPlan& p,
                                                                               const std::vector<int64_t>& w_strides,
                                                                               cudnnHandle_t handle, bool tensor_math) {
  if (p.kind == LibraryCallKind::kConvBiasActivationForward) {
    return absl::UnimplementedError("the fused bias-activation convolution goes through the legacy API");
  }
  std::unique_ptr<DnnGraphConvolution> g(new DnnGraphConvolution());
  g->handle_ = handle;
  g->tensor_math_ = tensor_math;
  g->f32_ = p.type == PrimitiveType::kF32;
  auto keep = [&](Desc d) {
    g->owned_.push_back(d.release());
    return g->owned_.back();
  };
  ASSIGN_OR_RETURN(Desc xd, Tensor(kX, p.x.dims, p.x.strides, p.type));
  ASSIGN_OR_RETURN(Desc wd, Tensor(kW, p.w_dims, w_strides, p.type));
  ASSIGN_OR_RETURN(Desc yd, Tensor(kY, p.y.dims, p.y.strides, p.type));
  cudnnBackendDescriptor_t x = keep(std::move(xd)), w = keep(std::move(wd)), y = keep(std::move(yd));

  ASSIGN_OR_RETURN(Desc cd, Desc::Create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution"));
  cudnnBackendDescriptor_t conv = keep(std::move(cd));
  int64_t spatial = static_cast<int64_t>(p.stride.size());
  cudnnDataType_t compute = GraphType(p.compute);
  cudnnConvolutionMode_t mode = p.convolution_mode ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial, 1, "spatial dims"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute, 1, "compute type"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode, 1, "mode"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, p.dilation.data(), spatial, "dilations"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, p.stride.data(), spatial, "strides"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, p.padding.data(), spatial, "padding"));
  RETURN_IF_ERROR(Set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, p.padding.data(), spatial, "padding"));
  RETURN_IF_ERROR(Finalize(conv, "convolution"));

  cudnnBackendDescriptorType_t op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR;
  cudnnBackendAttributeName_t ax = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                              aw = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                              ay = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                              aconv = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                              aalpha = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                              abeta = CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA;
  if (p.kind == LibraryCallKind::kConvBackwardInput) {
    op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR;
    ax = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, aw = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W;
    ay = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, aconv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC;
    aalpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, abeta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA;
  } else if (p.kind == LibraryCallKind::kConvBackwardFilter) {
    op_type = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR;
    ax = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, aw = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW;
    ay = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, aconv = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC;
    aalpha = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, abeta = CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA;
  }
  ASSIGN_OR_RETURN(Desc od, Desc::Create(op_type, "convolution operation"));
  cudnnBackendDescriptor_t op = keep(std::move(od));
  RETURN_IF_ERROR(Set(op, ax, CUDNN_TYPE_BACKEND_DESCRIPTOR, &x, 1, "x"));
  RETURN_IF_ERROR(Set(op, aw, CUDNN_TYPE_BACKEND_DESCRIPTOR, &w, 1, "w"));
  RETURN_IF_ERROR(Set(op, ay, CUDNN_TYPE_BACKEND_DESCRIPTOR, &y, 1, "y"));
  RETURN_IF_ERROR(Set(op, aconv, CUDNN_TYPE_BACKEND_DESCRIPTOR, &conv, 1, "convolution"));
  if (p.type == PrimitiveType::kF64) {
    double alpha = 1, beta = 0;
    RETURN_IF_ERROR(Set(op, aalpha, CUDNN_TYPE_DOUBLE, &alpha, 1, "alpha"));
    RETURN_IF_ERROR(Set(op, abeta, CUDNN_TYPE_DOUBLE, &beta, 1, "beta"));
  } else {
    float alpha = 1, beta = 0;
    RETURN_IF_ERROR(Set(op, aalpha, CUDNN_TYPE_FLOAT, &alpha, 1, "alpha"));
    RETURN_IF_ERROR(Set(op, abeta, CUDNN_TYPE_FLOAT, &beta, 1, "beta"));
  }
  RETURN_IF_ERROR(Finalize(op, "convolution operation"));

  ASSIGN_OR_RETURN(Desc gd, Desc::Create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph"));
  g->graph_ = keep(std::move(gd));
  RETURN_IF_ERROR(Set(g->graph_, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, &op, 1, "graph ops"));
  RETURN_IF_ERROR(Set(g->graph_, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle, 1, "graph handle"));
  RETURN_IF_ERROR(Finalize(g->graph_, "operation graph"));
  return g;
}

absl::StatusOr<std::vector<DnnGraphConvolution::Config>> DnnGraphConvolution::Heuristics(int mode) {
  ASSIGN_OR_RETURN(Desc heur, Desc::Create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics"));
  auto heur_mode = static_cast<cudnnBackendHeurMode_t>(mode);
  RETURN_IF_ERROR(Set(heur.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, &graph_, 1,
                      "heuristics graph"));
  RETURN_IF_ERROR(Set(heur.get(), CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heur_mode, 1, "heuristics mode"));
  RETURN_IF_ERROR(Finalize(heur.get(), "engine heuristics"));
  int64_t count = 0;
  RETURN_IF_ERROR(CheckGraph(
      cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
      "cudnnBackendGetAttribute(heuristics count)"));
  std::vector<Config> configs(static_cast<size_t>(std::max<int64_t>(count, 0)));
  std::vector<cudnnBackendDescriptor_t> raw;
  for (Config& c : configs) {
    ASSIGN_OR_RETURN(c.cfg, Desc::Create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
    raw.push_back(c.cfg.get());
  }
  int64_t got = 0;
  if (count > 0) {
    RETURN_IF_ERROR(CheckGraph(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                        CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
                               "cudnnBackendGetAttribute(heuristics results)"));
  }
  configs.resize(static_cast<size_t>(std::clamp<int64_t>(got, 0, count)));
  for (Config& c : configs) {
    absl::StatusOr<Desc> engine = Desc::Create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine");
    if (!engine.ok()) return engine.status();
    cudnnBackendDescriptor_t e = engine->get();
    int64_t n = 0;
    if (cudnnBackendGetAttribute(c.cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) !=
        CUDNN_STATUS_SUCCESS) {
      continue;  // engine stays -1: dropped by Engines()
    }
    cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &c.engine);
    c.notes.resize(CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
    n = 0;
    if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, c.notes.data()) != CUDNN_STATUS_SUCCESS) {
      n = 0;
    }
    c.notes.resize(static_cast<size_t>(std::clamp<int64_t>(n, 0, CUDNN_NUMERICAL_NOTE_TYPE_COUNT)));
    cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    n = 0;
    if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &n, behavior) == CUDNN_STATUS_SUCCESS) {
      for (int64_t i = 0; i < std::min<int64_t>(n, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT); ++i) {
        c.runtime_compiled |= behavior[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      }
    }
    std::vector<Desc> choices;
    std::vector<cudnnBackendDescriptor_t> choice_raw;
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
      ASSIGN_OR_RETURN(Desc k, Desc::Create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice"));
      choice_raw.push_back(k.get());
      choices.push_back(std::move(k));
    }
    n = 0;
    if (cudnnBackendGetAttribute(c.cfg.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 CUDNN_KNOB_TYPE_COUNTS, &n, choice_raw.data()) == CUDNN_STATUS_SUCCESS) {
      for (int64_t i = 0; i < std::min<int64_t>(n, CUDNN_KNOB_TYPE_COUNTS); ++i) {
        cudnnBackendKnobType_t type{};
        int64_t value = 0, m = 0;
        if (cudnnBackendGetAttribute(choice_raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &m,
                                     &type) == CUDNN_STATUS_SUCCESS &&
            cudnnBackendGetAttribute(choice_raw[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &m,
                                     &value) == CUDNN_STATUS_SUCCESS) {
          c.knobs.emplace_back(static_cast<int64_t>(type), value);
        }
      }
      std::sort(c.knobs.begin(), c.knobs.end());
    }
  }
  return configs;
}

absl::StatusOr<DnnEngineChoice> DnnGraphConvolution::BuildPlan(Config& c, int64_t id) {
  ASSIGN_OR_RETURN(Desc plan, Desc::Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan"));
  cudnnBackendDescriptor_t cfg = c.cfg.get();
  RETURN_IF_ERROR(Set(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle_, 1, "plan handle"));
  RETURN_IF_ERROR(Set(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, &cfg, 1,
                      "plan engine config"));
  RETURN_IF_ERROR(Finalize(plan.get(), StrCat("execution plan of ", c.Name())));
  DnnEngineChoice choice;
  choice.id = id;
  choice.name = c.Name();
  int64_t n = 0;
  RETURN_IF_ERROR(CheckGraph(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                      CUDNN_TYPE_INT64, 1, &n, &choice.workspace_bytes),
                             "cudnnBackendGetAttribute(workspace size)"));
  if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
  plan_ = plan.release();
  return choice;
}

namespace {

// XLA's GenericEngineFilter (cuda_dnn.cc), with XLA's defaults: engines that
// down-convert their inputs always go; tensor-core engines go where tensor
// math is off (f32 without TF32); Winograd and nondeterministic engines stay
// (TF_ENABLE_WINOGRAD_NONFUSED defaults to on, xla_gpu_deterministic_ops to
// off). Unlike XLA, engines that compile their kernel at run time (NVRTC,
// seconds per plan) go too, unless PASSLAB_CUDNN_ENGINES=all.
bool RuntimeCompiledAllowed() {
  const char* v = std::getenv("PASSLAB_CUDNN_ENGINES");
  return v != nullptr && std::string_view(v) == "all";
}

template <typename C>
bool Rejected(const C& c, bool f32, bool tensor_math) {
  if (c.engine < 0) return true;
  if (c.runtime_compiled && !RuntimeCompiledAllowed()) return true;
  if (c.Has(CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)) return true;
  return f32 && !tensor_math && c.Has(CUDNN_NUMERICAL_NOTE_TENSOR_CORE);
}

}  // namespace

absl::StatusOr<std::vector<DnnEngineChoice>> DnnGraphConvolution::Engines() {
  std::vector<DnnEngineChoice> out;
  std::set<std::pair<int64_t, std::vector<std::pair<int64_t, int64_t>>>> seen;
  absl::Status last = absl::OkStatus();
  for (auto [mode, offset] : {std::pair{static_cast<int>(CUDNN_HEUR_MODE_B), int64_t{0}},
                              std::pair{static_cast<int>(CUDNN_HEUR_MODE_A), kDnnEngineModeAOffset}}) {
    absl::StatusOr<std::vector<Config>> configs = Heuristics(mode);
    if (!configs.ok()) {
      last = configs.status();
      continue;
    }
    for (size_t i = 0; i < configs->size() && static_cast<int64_t>(i) < kDnnEngineModeAOffset; ++i) {
      Config& c = (*configs)[i];
      if (Rejected(c, f32_, tensor_math_) || !seen.insert({c.engine, c.knobs}).second) continue;
      absl::StatusOr<DnnEngineChoice> choice = BuildPlan(c, kDnnEngineIdBase + offset + static_cast<int64_t>(i));
      // The plan only answered whether it finalizes and its workspace; it
      // goes before its engine config does.
      if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
      plan_ = nullptr;
      if (choice.ok()) out.push_back(*std::move(choice));
    }
  }
  if (out.empty() && !last.ok()) return last;
  return out;
}

absl::StatusOr<DnnEngineChoice> DnnGraphConvolution::Select(int64_t id) {
  if (!IsDnnEngineId(id)) return absl::InvalidArgumentError(StrCat("algorithm ", id, " is not a cuDNN engine"));
  int64_t position = id - kDnnEngineIdBase;
  bool mode_a = position >= kDnnEngineModeAOffset;
  if (mode_a) position -= kDnnEngineModeAOffset;
  ASSIGN_OR_RETURN(std::vector<Config> configs,
                   Heuristics(mode_a ? static_cast<int>(CUDNN_HEUR_MODE_A) : static_cast<int>(CUDNN_HEUR_MODE_B)));
  if (position >= static_cast<int64_t>(configs.size())) {
    return absl::InvalidArgumentError(
        StrCat("cuDNN engine ", id, " is not among the ", configs.size(), " the heuristics offer for this problem"));
  }
  Config& c = configs[static_cast<size_t>(position)];
  if (Rejected(c, f32_, tensor_math_)) {
    return absl::InvalidArgumentError(StrCat(c.Name(), " (algorithm ", id, ") is excluded here",
                                             f32_ && !tensor_math_ ? " (tensor cores in full f32)" : ""));
  }
  ASSIGN_OR_RETURN(DnnEngineChoice choice, BuildPlan(c, id));
  if (config_ != nullptr) cudnnBackendDestroyDescriptor(config_);
  config_ = c.cfg.release();  // the plan's engine config lives as long as the plan
  return choice;
}

absl::Status DnnGraphConvolution::Execute(void* x, void* w, void* y, void* workspace) {
  if (plan_ == nullptr) return absl::FailedPreconditionError("no cuDNN engine selected");
  std::array<void*, 4> pointers = {x, w, y, workspace};
  if (pack_ == nullptr || pointers != pack_pointers_) {
    if (pack_ != nullptr) cudnnBackendDestroyDescriptor(pack_);
    pack_ = nullptr;
    ASSIGN_OR_RETURN(Desc pack, Desc::Create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack"));
    int64_t uids[3] = {kX, kW, kY};
    void* data[3] = {x, w, y};
    RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, 3, "uids"));
    RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, data, 3, "pointers"));
    RETURN_IF_ERROR(Set(pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace, 1, "workspace"));
    RETURN_IF_ERROR(Finalize(pack.get(), "variant pack"));
    pack_ = pack.release();
    pack_pointers_ = pointers;
  }
  return CheckGraph(cudnnBackendExecute(handle_, plan_, pack_), "cudnnBackendExecute");
}

}  // namespace passlab
