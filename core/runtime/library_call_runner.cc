#include "core/runtime/library_call_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_internal.h"

namespace passlab {
namespace runtime_internal {

int64_t LibraryCallFlops(const HloInstruction& inst) {
  if (absl::StatusOr<GemmCall> g = AnalyzeGemmCall(inst); g.ok()) return 2 * g->batch * g->m * g->n * g->k;
  if (absl::StatusOr<CholeskyCall> p = AnalyzeCholeskyCall(inst); p.ok()) return p->batch * p->n * p->n * p->n / 3;
  if (absl::StatusOr<TriangularSolveCall> t = AnalyzeTriangularSolveCall(inst); t.ok()) {
    return t->batch * t->m * t->n * t->k;
  }
  absl::StatusOr<ConvCall> c = AnalyzeConvCall(inst);
  if (!c.ok()) return 0;
  int64_t taps = 1;
  for (int64_t k : c->dnums.kernel_spatial_dimensions) taps *= c->filter_shape.dimensions(k);
  return 2 * c->output_shape.element_count() * c->filter_shape.dimensions(c->dnums.kernel_input_feature_dimension) *
         taps;
}

ReferenceRunnerBase::ReferenceRunnerBase(const HloInstruction& inst, LibraryAlgorithm algorithm) {
  name_ = inst.name();
  algorithm_ = std::move(algorithm);
  operand_count_ = inst.operand_count();
  for (const HloInstruction* op : inst.operands()) bytes_read_ += op->shape().byte_size();
  std::vector<Shape> leaves = LeafShapes(inst.shape());
  result_leaves_ = static_cast<int64_t>(leaves.size());
  for (const Shape& s : leaves) bytes_written_ += s.byte_size();
  flops_ = LibraryCallFlops(inst);
}

absl::Status ReferenceRunnerBase::CheckBuffers(absl::Span<void* const> buffers) const {
  if (static_cast<int64_t>(buffers.size()) != operand_count_ + result_leaves_ || buffers[operand_count_] == nullptr) {
    return absl::InvalidArgumentError(StrCat(name_, ": expected ", operand_count_, " operand buffers and ",
                                             result_leaves_, " result buffers (the first non-null), got ",
                                             buffers.size()));
  }
  return absl::OkStatus();
}

std::vector<double> ReadBufferValues(const Shape& shape, const void* buffer) {
  std::vector<double> values(shape.element_count());
  for (size_t i = 0; i < values.size(); ++i) values[i] = ReadFloat(shape.element_type(), buffer, i);
  return values;
}

void WriteBufferValues(const Shape& shape, const std::vector<double>& values, void* buffer) {
  for (size_t i = 0; i < values.size(); ++i) WriteFloat(shape.element_type(), buffer, i, values[i]);
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> CreateReferenceRunner(const HloInstruction& inst,
                                                                         LibraryAlgorithm algorithm) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return absl::InvalidArgumentError(StrCat(inst.name(), " is not a library call"));
  if (*kind == LibraryCallKind::kGemm) return CreateReferenceGemmRunner(inst, std::move(algorithm));
  if (IsSolverKind(*kind)) return CreateReferenceSolverRunner(inst, std::move(algorithm));
  return CreateReferenceConvRunner(inst, std::move(algorithm));
}

}  // namespace runtime_internal

namespace {

using namespace runtime_internal;

absl::Status NotLibraryCall(const HloInstruction& inst) {
  return absl::InvalidArgumentError(StrCat(inst.name(), " is not a library call (custom-call target \"",
                                           inst.opcode() == HloOpcode::kCustomCall ? inst.custom_call_target() : "",
                                           "\")"));
}

// XLA:GPU's spelling of the target: its recorded algorithm ids are cuBLAS /
// cuDNN ones, meaningless here.
bool FromXlaGpu(const HloInstruction& inst) {
  std::string_view t = inst.custom_call_target();
  return t.rfind("__cublas$", 0) == 0 || t.rfind("__cudnn$", 0) == 0;
}

// oneDNN's; listed before the reference (the last, whatever its id).
constexpr ConvAlgorithm kDnnAlgorithms[] = {ConvAlgorithm::kAuto, ConvAlgorithm::kDirect, ConvAlgorithm::kWinograd,
                                            ConvAlgorithm::kAsBackwardFilter, ConvAlgorithm::kTapGemm,
                                            ConvAlgorithm::kIm2colGemm};

}  // namespace

absl::StatusOr<std::vector<LibraryAlgorithm>> ListAlgorithms(const HloInstruction& inst) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return NotLibraryCall(inst);
  std::vector<LibraryAlgorithm> out;
  if (IsSolverKind(*kind)) {
    if (SolverLibrarySupports(inst)) {
      out.push_back({kSolverLibrary, *kind == LibraryCallKind::kCholesky ? "lapack" : "blas"});
    }
    out.push_back({kSolverReference, "reference"});
    return out;
  }
  if (*kind == LibraryCallKind::kGemm) {
    ASSIGN_OR_RETURN(GemmCall call, AnalyzeGemmCall(inst));
    if (DnnGemmSupports(inst, call)) out.push_back({kGemmDnn, "onednn"});
    if (BlasSupports(inst, call)) out.push_back({kGemmBlas, "blas"});
    out.push_back({kGemmReference, "reference"});
    return out;
  }
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  for (ConvAlgorithm a : kDnnAlgorithms) {
    if (DnnAccepts(inst, call, a)) out.push_back({static_cast<int64_t>(a), ConvAlgorithmName(a)});
  }
  out.push_back({static_cast<int64_t>(ConvAlgorithm::kReference), ConvAlgorithmName(ConvAlgorithm::kReference)});
  return out;
}

absl::StatusOr<std::unique_ptr<LibraryCallRunner>> LibraryCallRunner::Create(const HloInstruction& inst,
                                                                             std::optional<int64_t> algorithm) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return NotLibraryCall(inst);
  if (IsSolverKind(*kind)) {
    // No recorded algorithm: the library where it takes the call.
    int64_t id = algorithm.value_or(SolverLibrarySupports(inst) ? kSolverLibrary : kSolverReference);
    if (id == kSolverLibrary) return CreateSolverLibraryRunner(inst);
    if (id == kSolverReference) return CreateReferenceRunner(inst, {kSolverReference, "reference"});
    return absl::InvalidArgumentError(
        StrCat(inst.name(), ": unknown solver algorithm ", id, " (0 = library, 1 = reference)"));
  }
  if (*kind == LibraryCallKind::kGemm) {
    ASSIGN_OR_RETURN(GemmCall call, AnalyzeGemmCall(inst));
    int64_t id = algorithm.value_or(call.config.selected_algorithm);
    // A recorded id passlab does not know (e.g. a cuBLAS algorithm from an
    // XLA:GPU dump) means nothing on the CPU: use the default.
    if (!algorithm.has_value() && (FromXlaGpu(inst) || (id != kGemmBlas && id != kGemmReference && id != kGemmDnn))) {
      id = -1;
    }
    // Unset: oneDNN's (f32 compute), else OpenBLAS (f64), else the reference.
    if (id == -1) id = DnnGemmSupports(inst, call) ? kGemmDnn : BlasSupports(inst, call) ? kGemmBlas : kGemmReference;
    if (id == kGemmDnn) return CreateDnnGemmRunner(inst, std::move(call));
    if (id == kGemmBlas) return CreateBlasGemmRunner(inst, std::move(call));
    if (id == kGemmReference) return CreateReferenceRunner(inst, {kGemmReference, "reference"});
    return absl::InvalidArgumentError(
        StrCat(inst.name(), ": unknown gemm algorithm ", id, " (0 = blas, 1 = reference, 2 = onednn)"));
  }
  ASSIGN_OR_RETURN(ConvCall call, AnalyzeConvCall(inst));
  int64_t id = algorithm.value_or(call.config.algo_id);
  if (!algorithm.has_value() && (FromXlaGpu(inst) || !call.config.algorithm().has_value())) {
    id = -1;  // unset or not passlab's
  }
  if (id == -1) {
    // Unset: oneDNN's own choice where it takes the problem, else the reference.
    absl::StatusOr<std::unique_ptr<LibraryCallRunner>> dnn = CreateDnnConvRunner(inst, call, ConvAlgorithm::kAuto);
    if (dnn.ok()) return dnn;
    id = static_cast<int64_t>(ConvAlgorithm::kReference);
  }
  ConvBackendConfig probe;
  probe.algo_id = id;
  std::optional<ConvAlgorithm> a = probe.algorithm();
  if (!a) {
    return absl::InvalidArgumentError(
        StrCat(inst.name(), ": unknown convolution algorithm ", id,
               " (0 auto, 1 direct, 2 winograd, 3 reference, 4 as-backward-filter, 5 tap-gemm, 6 im2col-gemm)"));
  }
  if (*a == ConvAlgorithm::kReference) {
    return CreateReferenceRunner(inst, {id, ConvAlgorithmName(*a)});
  }
  absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = CreateDnnConvRunner(inst, call, *a);
  if (!runner.ok() && absl::IsUnimplemented(runner.status()) && *a == ConvAlgorithm::kTapGemm &&
      !algorithm.has_value()) {
    // tap-gemm's reach depends on the operands' producers (the structural
    // zeros it skips), which the algorithm pickers' cache key does not see:
    // a choice recorded for a call like this one whose zeros it skipped.
    // oneDNN's own choice then, as for an unset algorithm.
    runner = CreateDnnConvRunner(inst, call, ConvAlgorithm::kAuto);
    if (!runner.ok()) return CreateReferenceRunner(inst, {static_cast<int64_t>(ConvAlgorithm::kReference), "reference"});
  }
  return runner;
}

absl::StatusOr<int64_t> RunLibraryCall(const HloInstruction& inst, int64_t algorithm, absl::Span<void* const> buffers) {
  ASSIGN_OR_RETURN(std::unique_ptr<LibraryCallRunner> runner, LibraryCallRunner::Create(inst, algorithm));
  auto start = std::chrono::steady_clock::now();
  absl::Status s = runner->Run(buffers);
  auto end = std::chrono::steady_clock::now();
  if (!s.ok()) return s;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
}

absl::StatusOr<std::vector<AlgorithmTiming>> TimeAlgorithms(const HloInstruction& inst, absl::Span<void* const> buffers,
                                                            int repeats, bool include_reference, double tolerance) {
  ASSIGN_OR_RETURN(std::vector<LibraryAlgorithm> algorithms, ListAlgorithms(inst));
  std::vector<Shape> leaves = LeafShapes(inst.shape());
  size_t result_index = static_cast<size_t>(inst.operand_count());
  if (buffers.size() < result_index + 1 || buffers[result_index] == nullptr) {
    return absl::InvalidArgumentError(StrCat(inst.name(), ": expected operand buffers and a result buffer"));
  }
  const Shape& result = leaves[0];
  PrimitiveType type = result.element_type();
  bool comparable = type == PrimitiveType::kF32 || type == PrimitiveType::kF64 || type == PrimitiveType::kBF16 ||
                    type == PrimitiveType::kF16;
  std::vector<double> first;  // result of the first algorithm that ran
  std::string first_name;
  std::vector<AlgorithmTiming> out;
  for (const LibraryAlgorithm& a : algorithms) {
    bool reference = (a.name == "reference");
    if (reference && !include_reference) continue;
    AlgorithmTiming t;
    t.algorithm = a;
    absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(inst, a.id);
    if (!runner.ok()) {
      t.status = runner.status();
      out.push_back(std::move(t));
      continue;
    }
    t.status = (*runner)->Run(buffers);  // warm-up
    std::vector<int64_t> times;
    for (int r = 0; r < std::max(repeats, 1) && t.status.ok(); ++r) {
      auto start = std::chrono::steady_clock::now();
      t.status = (*runner)->Run(buffers);
      times.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    }
    if (t.status.ok()) {
      std::sort(times.begin(), times.end());
      t.median_ns = times[times.size() / 2];
      if (comparable) {
        std::vector<double> values(result.element_count());
        for (size_t i = 0; i < values.size(); ++i) values[i] = ReadFloat(type, buffers[result_index], i);
        if (first_name.empty()) {
          first = std::move(values);
          first_name = a.name;
        } else {
          for (size_t i = 0; i < values.size(); ++i) {
            double err = std::abs(values[i] - first[i]) / (1 + std::abs(first[i]));
            if (!(err <= t.max_rel_error)) t.max_rel_error = std::isnan(err) ? INFINITY : err;
          }
          if (!(t.max_rel_error <= tolerance)) {
            t.status = absl::InternalError(StrCat(inst.name(), ": algorithm ", a.name, " differs from ", first_name,
                                                  " by ", t.max_rel_error, " (relative)"));
          }
        }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<LibraryAlgorithm> FastestAlgorithm(absl::Span<const AlgorithmTiming> timings) {
  const AlgorithmTiming* best = nullptr;
  for (const AlgorithmTiming& t : timings) {
    if (t.status.ok() && (best == nullptr || t.median_ns < best->median_ns)) best = &t;
  }
  if (best == nullptr) return absl::NotFoundError("no algorithm ran");
  return best->algorithm;
}

}  // namespace passlab
