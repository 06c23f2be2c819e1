#include "passes/autotune/library_call_autotuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_pass_interface.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "core/ir/str_util.h"
#include "core/runtime/conv_operand_views.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"
#include "passes/autotune/autotune_scope.h"

namespace passlab {
namespace {

constexpr int64_t kRedZoneBytes = 64;
constexpr uint8_t kRedZoneByte = 0xA5;

// One buffer with red zones on both sides.
struct GuardedBuffer {
  Shape shape;
  std::vector<uint8_t> storage;
  void* data() { return storage.data() + kRedZoneBytes; }
  int64_t bytes() const { return shape.byte_size(); }

  explicit GuardedBuffer(const Shape& s) : shape(s), storage(s.byte_size() + 2 * kRedZoneBytes + 8, 0) {
    std::memset(storage.data(), kRedZoneByte, kRedZoneBytes);
    std::memset(storage.data() + kRedZoneBytes + bytes(), kRedZoneByte, storage.size() - kRedZoneBytes - bytes());
  }
  bool RedZonesIntact() const {
    for (int64_t i = 0; i < kRedZoneBytes; ++i) {
      if (storage[i] != kRedZoneByte) return false;
    }
    for (size_t i = kRedZoneBytes + bytes(); i < storage.size(); ++i) {
      if (storage[i] != kRedZoneByte) return false;
    }
    return true;
  }
  // Random values in [-1, 1): a block of kRandomBlock drawn values, then
  // that block repeated (drawing and encoding every element of a 100 MB
  // bf16 operand took seconds, most of the tuning time on XLA's Gemma
  // benchmark modules). The block's length is prime, so rows of common
  // widths do not repeat one another.
  static constexpr int64_t kRandomBlock = 4093;
  void Randomize(std::mt19937_64& rng) {
    if (!IsFloatingPointType(shape.element_type())) return;
    std::uniform_real_distribution<double> dist(-1, 1);
    const int64_t count = shape.element_count();
    const int64_t drawn = std::min(count, kRandomBlock);
    for (int64_t i = 0; i < drawn; ++i) WriteFloat(shape.element_type(), data(), i, dist(rng));
    if (drawn == count || bytes() % count != 0) {
      for (int64_t i = drawn; i < count; ++i) WriteFloat(shape.element_type(), data(), i, dist(rng));
      return;
    }
    const int64_t width = bytes() / count;
    uint8_t* base = static_cast<uint8_t*>(data());
    for (int64_t done = drawn * width; done < bytes();) {
      const int64_t n = std::min(done, bytes() - done);  // doubling copies of what is written
      std::memcpy(base + done, base, n);
      done += n;
    }
  }
  std::vector<double> Values() {
    std::vector<double> v(shape.element_count());
    for (int64_t i = 0; i < shape.element_count(); ++i) v[i] = ReadFloat(shape.element_type(), data(), i);
    return v;
  }
};

// The algorithm ids `deny` forbids for the call with cache key `key`.
std::vector<int64_t> DeniedAlgorithms(const std::string& key, const std::vector<AlgorithmDenyEntry>& deny) {
  std::vector<int64_t> denied;
  for (const AlgorithmDenyEntry& e : deny) {
    if (!e.hlo.empty() && key.find(e.hlo) == std::string::npos) continue;
    denied.insert(denied.end(), e.algorithms.begin(), e.algorithms.end());
  }
  return denied;
}

double MaxRelativeError(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double err = std::abs(got[i] - want[i]) / (1 + std::abs(want[i]));
    if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err;
  }
  return worst;
}

// The bytes tuning `call` allocates: its operands' and results' buffers.
int64_t CallBufferBytes(const HloInstruction& call) {
  int64_t bytes = 0;
  for (const HloInstruction* op : call.operands()) bytes += op->shape().byte_size();
  for (const Shape& leaf : LeafShapes(call.shape())) bytes += leaf.byte_size();
  return bytes;
}

// 2 per multiply-add of a gemm's or convolution's product (0 when the call
// does not analyze): the budget's time estimate.
double CallFlops(const HloInstruction& call) {
  if (absl::StatusOr<GemmCall> g = AnalyzeGemmCall(call); g.ok()) {
    return 2.0 * static_cast<double>(g->batch) * static_cast<double>(g->m) * static_cast<double>(g->n) *
           static_cast<double>(g->k);
  }
  absl::StatusOr<ConvCall> c = AnalyzeConvCall(call);
  if (!c.ok()) return 0;
  double taps = 1;
  for (int64_t k : c->dnums.kernel_spatial_dimensions) taps *= static_cast<double>(c->filter_shape.dimensions(k));
  return 2.0 * static_cast<double>(c->output_shape.element_count()) *
         static_cast<double>(c->filter_shape.dimensions(c->dnums.kernel_input_feature_dimension)) * taps;
}

// A passlab-spelled call (XLA:GPU's spellings carry cuDNN/cuBLAS ids the
// runtime ignores) of the family, with no algorithm chosen yet.
bool NeedsTuning(const HloInstruction& inst, LibraryCallFamily family) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  if (!kind) return false;
  const bool convolutions = IsConvolutionKind(*kind);
  if (family == LibraryCallFamily::kConvolutions && !convolutions) return false;
  if (family == LibraryCallFamily::kGemms && convolutions) return false;
  if (!convolutions) {
    if (inst.custom_call_target() != kGemmCallTarget) return false;
    absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(inst);
    return c.ok() && c->selected_algorithm == -1;
  }
  if (inst.custom_call_target().rfind("__dnn$", 0) != 0) return false;
  absl::StatusOr<ConvBackendConfig> c = ParseConvBackendConfig(inst);
  return c.ok() && c->algo_id == -1;
}

class PickerVisitor : public HloRewriteVisitor {
 public:
  PickerVisitor(const AutotuneOptions& options, LibraryCallFamily family, HloPassInterface& pass)
      : options_(options), family_(family), pass_(pass) {}

  absl::Status HandleCustomCall(HloInstruction* call) override {
    if (!NeedsTuning(*call, family_)) return absl::OkStatus();
    absl::StatusOr<AutotuneOutcome> outcome = AutotuneLibraryCall(*call, options_, &spend_);
    if (outcome.ok() && outcome->tuned_bytes > 0) pass_.BumpCounter("tuning bytes", outcome->tuned_bytes);
    if (outcome.ok() && outcome->tuned_seconds > 0) {
      pass_.BumpCounter("tuning ms", static_cast<int64_t>(outcome->tuned_seconds * 1e3));
    }
    if (outcome.ok() && outcome->heuristic) {
      // Left unset: the runtime's default algorithm, as XLA's with
      // autotuning off.
      pass_.BumpCounter(StrCat("heuristic (over the ", outcome->heuristic_reason, " budget)"));
      return absl::OkStatus();
    }
    if (!outcome.ok()) {
      pass_.BumpCounter("left to the runtime's default (no algorithm ran)");
      return absl::OkStatus();
    }
    pass_.BumpCounter(outcome->from_cache ? "cache hits" : "tuned");
    pass_.BumpCounter(StrCat("chose ", outcome->result.algorithm_name));
    std::string config;
    if (IsConvolutionKind(*ClassifyLibraryCall(*call))) {
      ASSIGN_OR_RETURN(ConvBackendConfig c, ParseConvBackendConfig(*call));
      c.algo_id = outcome->result.algorithm;
      config = c.ToJson();
    } else {
      ASSIGN_OR_RETURN(GemmBackendConfig c, ParseGemmBackendConfig(*call));
      c.selected_algorithm = outcome->result.algorithm;
      config = c.ToJson();
    }
    if (config == call->raw_backend_config()) return absl::OkStatus();
    call->set_raw_backend_config(std::move(config));
    MarkChanged();
    return absl::OkStatus();
  }

 private:
  const AutotuneOptions& options_;
  LibraryCallFamily family_;
  HloPassInterface& pass_;
  AutotuneSpend spend_;  // this module's tuning so far
};

}  // namespace

absl::StatusOr<bool> PickLibraryCallAlgorithms(HloModule& module, const AutotuneOptions& options,
                                               LibraryCallFamily family, HloPassInterface& pass) {
  if (options.level <= 0) return false;
  AutotuneOptions resolved = options;
  AutotuneCache& cache = options.cache != nullptr ? *options.cache : CurrentAutotuneCache();
  resolved.cache = &cache;
  if (!options.cache_path.empty()) {
    RETURN_IF_ERROR(cache.Load(options.cache_path));
  }
  if (!options.deny_list_path.empty()) {
    ASSIGN_OR_RETURN(std::vector<AlgorithmDenyEntry> deny, LoadDenyList(options.deny_list_path));
    resolved.deny_list.insert(resolved.deny_list.end(), deny.begin(), deny.end());
  }
  PickerVisitor visitor(resolved, family, pass);
  absl::StatusOr<bool> changed = visitor.RunOnModule(module);
  if (!changed.ok()) return changed.status();
  if (!options.cache_path.empty()) {
    RETURN_IF_ERROR(cache.Save(options.cache_path));
  }
  return changed;
}

absl::StatusOr<std::vector<AlgorithmDenyEntry>> LoadDenyList(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat("algorithm deny list ", path, ": cannot read"));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("algorithm deny list ", path, ": ", what));
  };
  if (j.is_discarded() || !j.is_object() || !j.contains("entries") || !j["entries"].is_array()) {
    return bad("expected {\"entries\": [...]}");
  }
  std::vector<AlgorithmDenyEntry> out;
  for (const nlohmann::json& e : j["entries"]) {
    if (!e.is_object() || !e.contains("algorithms") || !e["algorithms"].is_array()) {
      return bad(StrCat("entry ", e.dump(), " has no \"algorithms\" list"));
    }
    AlgorithmDenyEntry entry;
    if (e.contains("hlo")) {
      if (!e["hlo"].is_string()) return bad(StrCat("entry ", e.dump(), ": \"hlo\" is not a string"));
      entry.hlo = e["hlo"].get<std::string>();
    }
    for (const nlohmann::json& a : e["algorithms"]) {
      if (!a.is_number_integer()) return bad(StrCat("entry ", e.dump(), ": algorithms are integer ids"));
      entry.algorithms.push_back(a.get<int64_t>());
    }
    out.push_back(std::move(entry));
  }
  return out;
}

namespace {

std::optional<AlgorithmTimer>& Timer() {
  static auto* timer = new std::optional<AlgorithmTimer>();
  return *timer;
}

// The fastest of `timings` as the outcome, cached under `key`.
absl::StatusOr<AutotuneOutcome> Choose(const HloInstruction& call, const std::string& key,
                                       const std::vector<AlgorithmTiming>& timings, AutotuneOutcome outcome,
                                       AutotuneCache& cache) {
  absl::StatusOr<LibraryAlgorithm> best = FastestAlgorithm(timings);
  if (!best.ok()) {
    return absl::NotFoundError(StrCat(call.name(), ": no algorithm ran (", Join(outcome.rejected, "; "), ")"));
  }
  outcome.result.algorithm = best->id;
  outcome.result.algorithm_name = best->name;
  for (const AlgorithmTiming& t : timings) {
    if (t.algorithm.id == best->id) outcome.result.time_ns = t.median_ns;
  }
  cache.Insert(key, outcome.result);
  return outcome;
}

}  // namespace

// The innermost ScopedAutotuneSettings of this thread (null: none).
static thread_local ScopedAutotuneSettings* innermost_autotune_scope = nullptr;

ScopedAutotuneSettings::ScopedAutotuneSettings(AutotuneCache& cache, const std::optional<AlgorithmTimer>& timer)
    : outer_(innermost_autotune_scope), cache_(cache), timer_(timer) {
  innermost_autotune_scope = this;
}

ScopedAutotuneSettings::~ScopedAutotuneSettings() { innermost_autotune_scope = outer_; }

AutotuneCache& CurrentAutotuneCache() {
  return innermost_autotune_scope != nullptr ? innermost_autotune_scope->cache_ : AutotuneCache::Global();
}

void SetAlgorithmTimer(std::optional<AlgorithmTimer> timer) { Timer() = std::move(timer); }
const std::optional<AlgorithmTimer>& CurrentAlgorithmTimer() {
  return innermost_autotune_scope != nullptr ? innermost_autotune_scope->timer_ : Timer();
}

absl::StatusOr<AutotuneOutcome> AutotuneLibraryCall(const HloInstruction& call, const AutotuneOptions& options,
                                                    AutotuneSpend* spend) {
  AutotuneCache& cache = options.cache != nullptr ? *options.cache : CurrentAutotuneCache();
  const std::optional<AlgorithmTimer>& timer = CurrentAlgorithmTimer();
  const std::string key = timer.has_value() ? StrCat(timer->device, "|", AutotuneKey(call)) : AutotuneKey(call);
  AutotuneOutcome outcome;
  if (std::optional<AutotuneResult> hit = cache.Find(key)) {
    outcome.result = *hit;
    outcome.from_cache = true;
    return outcome;
  }
  if (timer.has_value()) {
    // On the device: its libraries' algorithms, denied ones left out.
    absl::StatusOr<std::vector<AlgorithmTiming>> timings =
        timer->time(call, options, DeniedAlgorithms(key, options.deny_list));
    if (!timings.ok()) {
      return absl::Status(timings.status().code(),
                          StrCat(call.name(), ": autotuning on ", timer->device, ": ", timings.status().message()));
    }
    for (const AlgorithmTiming& t : *timings) {
      if (!t.status.ok()) outcome.rejected.push_back(StrCat(t.algorithm.name, ": ", t.status.message()));
    }
    return Choose(call, key, *timings, std::move(outcome), cache);
  }
  ASSIGN_OR_RETURN(std::vector<LibraryAlgorithm> algorithms, ListAlgorithms(call));

  // The budget, decided before anything is allocated or run.
  const AutotuneBudget& budget = options.budget;
  auto heuristic = [&](std::string_view reason) {
    outcome.heuristic = true;
    outcome.heuristic_reason = std::string(reason);
    outcome.result.algorithm = -1;
    outcome.result.algorithm_name = "default";
    return outcome;
  };
  const int64_t call_bytes = CallBufferBytes(call);
  if (spend != nullptr &&
      (spend->seconds >= budget.max_module_seconds || call_bytes > budget.max_module_bytes - spend->bytes)) {
    return heuristic("module");
  }
  if (call_bytes > budget.max_call_bytes) return heuristic("per-call bytes");
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  auto account = [&] {
    outcome.tuned_bytes = call_bytes;
    outcome.tuned_seconds = elapsed();
    if (spend != nullptr) {
      spend->bytes += outcome.tuned_bytes;
      spend->seconds += outcome.tuned_seconds;
    }
  };

  // Candidates: the listed algorithms not denied; the evaluator-backed
  // reference only when no library algorithm is left (it is never the
  // fastest).
  std::vector<LibraryAlgorithm> candidates;
  bool library_algorithm = false;
  const std::vector<int64_t> denied = DeniedAlgorithms(key, options.deny_list);
  for (const LibraryAlgorithm& a : algorithms) {
    if (std::find(denied.begin(), denied.end(), a.id) != denied.end()) {
      outcome.rejected.push_back(StrCat(a.name, ": denied"));
      continue;
    }
    library_algorithm |= a.name != "reference";
    candidates.push_back(a);
  }
  // Every run of every candidate at the optimistic rate: over the budget,
  // no algorithm is timed.
  const int64_t timed = std::count_if(candidates.begin(), candidates.end(), [&](const LibraryAlgorithm& a) {
    return a.name != "reference" || !library_algorithm;
  });
  const int64_t runs = timed * (1 + std::max(options.repeats, 1));
  if (budget.flops_per_second > 0 &&
      CallFlops(call) * static_cast<double>(runs) / budget.flops_per_second > budget.max_call_seconds) {
    return heuristic("per-call time");
  }
  // Operand buffers, then one per result leaf.
  std::vector<GuardedBuffer> buffers;
  for (const HloInstruction* op : call.operands()) buffers.emplace_back(op->shape());
  size_t first_result = buffers.size();
  for (const Shape& leaf : LeafShapes(call.shape())) buffers.emplace_back(leaf);
  std::mt19937_64 rng(0x5eed);
  if (options.level >= 2) {
    for (GuardedBuffer& b : buffers) b.Randomize(rng);
    // Zeros where the operands' producers put them (what tap-gemm skips).
    for (int64_t i = 0; i < call.operand_count(); ++i) {
      if (buffers[i].bytes() > 0) ZeroStructuralZeros(*call.operand(i), buffers[i].data());
    }
  }
  std::vector<void*> pointers;
  for (GuardedBuffer& b : buffers) pointers.push_back(b.bytes() == 0 ? nullptr : b.data());
  GuardedBuffer& result = buffers[first_result];

  // Each candidate is created, warmed up and (level 4) checked first; then
  // the timed runs go round the candidates, one run of each per round, so
  // a burst of the machine's own noise lands on every candidate alike
  // instead of on whichever was being timed (timed one after the other,
  // the ResNet-50 step's picks changed from run to run on a busy 2-core
  // VM: a plain forward convolution went to as-backward-filter, 1.1 ms
  // where direct takes 0.4).
  std::vector<AlgorithmTiming> timings;
  std::vector<std::unique_ptr<LibraryCallRunner>> runners;  // per timing; null once failed
  std::vector<double> reference;  // level 4: the first algorithm's output
  std::string reference_name;
  bool out_of_time = false;
  for (const LibraryAlgorithm& a : candidates) {
    if (a.name == "reference" && library_algorithm) continue;
    if (elapsed() > budget.max_call_seconds) {
      out_of_time = true;
      outcome.rejected.push_back(StrCat(a.name, ": not timed (the call's tuning time budget is spent)"));
      continue;
    }
    AlgorithmTiming t;
    t.algorithm = a;
    absl::StatusOr<std::unique_ptr<LibraryCallRunner>> runner = LibraryCallRunner::Create(call, a.id);
    if (!runner.ok()) {
      outcome.rejected.push_back(StrCat(a.name, ": ", runner.status().message()));
      continue;
    }
    if (options.level >= 3) {
      for (size_t i = first_result; i < buffers.size(); ++i) buffers[i].Randomize(rng);
    }
    t.status = (*runner)->Run(pointers);  // warm-up; its output is the one checked
    if (t.status.ok() && options.level >= 4) {
      bool intact = std::all_of(buffers.begin(), buffers.end(), [](const GuardedBuffer& b) { return b.RedZonesIntact(); });
      if (!intact) t.status = absl::InternalError("wrote outside its buffers (red zone modified)");
      std::vector<double> values = result.Values();
      if (t.status.ok() && reference_name.empty()) {
        reference = std::move(values);
        reference_name = a.name;
      } else if (t.status.ok()) {
        t.max_rel_error = MaxRelativeError(values, reference);
        if (!(t.max_rel_error <= options.tolerance)) {
          t.status = absl::InternalError(
              StrCat("differs from the reference algorithm ", reference_name, " by ", t.max_rel_error));
        }
      }
    }
    if (!t.status.ok()) {
      outcome.rejected.push_back(StrCat(a.name, ": ", t.status.message()));
      timings.push_back(std::move(t));
      runners.push_back(nullptr);
      continue;
    }
    timings.push_back(std::move(t));
    runners.push_back(std::move(*runner));
  }
  std::vector<std::vector<int64_t>> times(timings.size());
  for (int r = 0; r < std::max(options.repeats, 1); ++r) {
    for (size_t i = 0; i < timings.size(); ++i) {
      if (runners[i] == nullptr) continue;
      if (elapsed() > budget.max_call_seconds) {
        out_of_time = true;
        break;
      }
      auto run_start = std::chrono::steady_clock::now();
      absl::Status status = runners[i]->Run(pointers);
      if (!status.ok()) {
        timings[i].status = status;
        outcome.rejected.push_back(StrCat(timings[i].algorithm.name, ": ", status.message()));
        runners[i] = nullptr;
        continue;
      }
      times[i].push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - run_start).count());
    }
    if (out_of_time) break;
  }
  for (size_t i = 0; i < timings.size(); ++i) {
    if (runners[i] == nullptr) continue;
    // Out of time part-way: each candidate's median over the runs it got
    // (the finished rounds, and the first candidates of the unfinished
    // one); a candidate no round reached is left out.
    if (times[i].empty()) {
      timings[i].status = absl::DeadlineExceededError("not timed (the call's tuning time budget is spent)");
      outcome.rejected.push_back(StrCat(timings[i].algorithm.name, ": ", timings[i].status.message()));
      continue;
    }
    std::sort(times[i].begin(), times[i].end());
    timings[i].median_ns = times[i][times[i].size() / 2];
  }
  account();
  // Out of time before any algorithm was timed: the default.
  if (out_of_time && !FastestAlgorithm(timings).ok()) return heuristic("per-call time");
  return Choose(call, key, timings, std::move(outcome), cache);
}

}  // namespace passlab
