// One convolution through cuDNN's graph (backend) API: its engines as the
// algorithm picker's candidates, as XLA's conv algorithm picker autotunes
// them (xla/stream_executor/cuda/cuda_dnn.cc: CreateOpRunners takes the
// engine configs of heuristics mode B, then mode A, drops those that
// GenericEngineFilter rejects and those whose execution plan does not
// finalize, and deduplicates the rest). The legacy API (cudnnConvolution*
// with algorithm enums, cuda_library_call.cc) reaches only part of cuDNN 9's
// engines: on Hopper its f32 NHWC convolutions ran CUDA-core engines where
// XLA's ran TF32 tensor-core kernels (docs/gpu-results.md).
//
// An engine's algorithm id is kDnnEngineIdBase + its position in the
// heuristics' lists (mode B's configs first, then kDnnEngineModeAOffset +
// the position in mode A's), so the same problem on the same device and
// cuDNN names the same engine config in every process. Internal to the CUDA
// backend.
#ifndef PASSLAB_CORE_BACKENDS_CUDA_CUDNN_ENGINES_H_
#define PASSLAB_CORE_BACKENDS_CUDA_CUDNN_ENGINES_H_

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/backends/cuda/cuda_library_plan.h"

namespace passlab {

inline constexpr int64_t kDnnEngineIdBase = 1000;
inline constexpr int64_t kDnnEngineModeAOffset = 500;
inline bool IsDnnEngineId(int64_t id) { return id >= kDnnEngineIdBase; }

// Off with PASSLAB_CUDNN_ENGINES=0 in the environment (then only the legacy
// algorithms are offered and run); PASSLAB_CUDNN_ENGINES=all also offers the
// engines that compile their kernels at run time.
bool DnnEnginesEnabled();

struct DnnEngineChoice {
  int64_t id = 0;
  std::string name;  // "cudnn-engine#28{2:4,3:0}": cuDNN's global engine index and knob choices, as XLA's algo_id
  int64_t workspace_bytes = 0;
};

class DnnGraphConvolution {
 public:
  ~DnnGraphConvolution();
  DnnGraphConvolution(const DnnGraphConvolution&) = delete;
  DnnGraphConvolution& operator=(const DnnGraphConvolution&) = delete;

  // The operation graph of a forward, backward-data or backward-filter
  // convolution (not the fused bias-activation one: kUnimplemented). The
  // filter is the packed one, with `w_strides` (KCRS or KRSC order).
  // `tensor_math`: tensor-core engines allowed (for f32: TF32).
  static absl::StatusOr<std::unique_ptr<DnnGraphConvolution>> Make(const DnnConvPlan& plan,
                                                                    const std::vector<int64_t>& w_strides,
                                                                    cudnnHandle_t handle, bool tensor_math);

  // Every engine config the heuristics offer that passes XLA's filter and
  // whose plan finalizes, in the heuristics' order (mode B, then A).
  absl::StatusOr<std::vector<DnnEngineChoice>> Engines();
  // Builds the execution plan of engine `id` (from Engines()).
  absl::StatusOr<DnnEngineChoice> Select(int64_t id);
  // Runs the selected plan on the handle's stream.
  absl::Status Execute(void* x, void* w, void* y, void* workspace);

 private:
  DnnGraphConvolution() = default;
  struct Config;
  absl::StatusOr<std::vector<Config>> Heuristics(int mode);
  absl::StatusOr<DnnEngineChoice> BuildPlan(Config& config, int64_t id);

  cudnnHandle_t handle_ = nullptr;
  bool tensor_math_ = false;
  bool f32_ = false;
  std::vector<cudnnBackendDescriptor_t> owned_;  // tensors, conv, op, graph
  cudnnBackendDescriptor_t graph_ = nullptr;
  cudnnBackendDescriptor_t plan_ = nullptr;    // the selected engine's execution plan
  cudnnBackendDescriptor_t config_ = nullptr;  // its engine config
  cudnnBackendDescriptor_t pack_ = nullptr;    // the last run's variant pack
  std::array<void*, 4> pack_pointers_ = {};    // and its x, w, y, workspace
};

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CUDA_CUDNN_ENGINES_H_
