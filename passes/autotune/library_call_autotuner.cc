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
#include "core/libcall/library_call.h"
#include "core/pass/hlo_pass_interface.h"
#include "core/pass/hlo_rewrite_visitor.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"

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
  void Randomize(std::mt19937_64& rng) {
    if (!IsFloatingPointType(shape.element_type())) return;
    std::uniform_real_distribution<double> dist(-1, 1);
    for (int64_t i = 0; i < shape.element_count(); ++i) WriteFloat(shape.element_type(), data(), i, dist(rng));
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
    absl::StatusOr<AutotuneOutcome> outcome = AutotuneLibraryCall(*call, options_);
    if (!outcome.ok()) {
      pass_.BumpCounter("left to the runtime's default (no algorithm ran)");
      return absl::OkStatus();
    }
    pass_.BumpCounter(outcome->from_cache ? "cache hits" : "tuned");
    pass_.BumpCounter(StrCat("chose ", outcome->result.algorithm_name));
    std::string config;
    if (IsConvolutionKind(*ClassifyLibraryCall(*call))) {
      absl::StatusOr<ConvBackendConfig> c = ParseConvBackendConfig(*call);
      if (!c.ok()) return c.status();
      c->algo_id = outcome->result.algorithm;
      config = c->ToJson();
    } else {
      absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(*call);
      if (!c.ok()) return c.status();
      c->selected_algorithm = outcome->result.algorithm;
      config = c->ToJson();
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
};

}  // namespace

absl::StatusOr<bool> PickLibraryCallAlgorithms(HloModule& module, const AutotuneOptions& options,
                                               LibraryCallFamily family, HloPassInterface& pass) {
  if (options.level <= 0) return false;
  AutotuneOptions resolved = options;
  AutotuneCache& cache = options.cache != nullptr ? *options.cache : AutotuneCache::Global();
  resolved.cache = &cache;
  if (!options.cache_path.empty()) {
    if (absl::Status s = cache.Load(options.cache_path); !s.ok()) return s;
  }
  if (!options.deny_list_path.empty()) {
    absl::StatusOr<std::vector<AlgorithmDenyEntry>> deny = LoadDenyList(options.deny_list_path);
    if (!deny.ok()) return deny.status();
    resolved.deny_list.insert(resolved.deny_list.end(), deny->begin(), deny->end());
  }
  PickerVisitor visitor(resolved, family, pass);
  absl::StatusOr<bool> changed = visitor.RunOnModule(module);
  if (!changed.ok()) return changed.status();
  if (!options.cache_path.empty()) {
    if (absl::Status s = cache.Save(options.cache_path); !s.ok()) return s;
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

void SetAlgorithmTimer(std::optional<AlgorithmTimer> timer) { Timer() = std::move(timer); }
const std::optional<AlgorithmTimer>& CurrentAlgorithmTimer() { return Timer(); }

absl::StatusOr<AutotuneOutcome> AutotuneLibraryCall(const HloInstruction& call, const AutotuneOptions& options) {
  AutotuneCache& cache = options.cache != nullptr ? *options.cache : AutotuneCache::Global();
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
  absl::StatusOr<std::vector<LibraryAlgorithm>> algorithms = ListAlgorithms(call);
  if (!algorithms.ok()) return algorithms.status();

  // Operand buffers, then one per result leaf.
  std::vector<GuardedBuffer> buffers;
  for (const HloInstruction* op : call.operands()) buffers.emplace_back(op->shape());
  size_t first_result = buffers.size();
  for (const Shape& leaf : LeafShapes(call.shape())) buffers.emplace_back(leaf);
  std::mt19937_64 rng(0x5eed);
  if (options.level >= 2) {
    for (GuardedBuffer& b : buffers) b.Randomize(rng);
  }
  std::vector<void*> pointers;
  for (GuardedBuffer& b : buffers) pointers.push_back(b.bytes() == 0 ? nullptr : b.data());
  GuardedBuffer& result = buffers[first_result];

  // Candidates: the listed algorithms not denied; the evaluator-backed
  // reference only when no library algorithm is left (it is never the
  // fastest).
  std::vector<LibraryAlgorithm> candidates;
  bool library_algorithm = false;
  const std::vector<int64_t> denied = DeniedAlgorithms(key, options.deny_list);
  for (const LibraryAlgorithm& a : *algorithms) {
    if (std::find(denied.begin(), denied.end(), a.id) != denied.end()) {
      outcome.rejected.push_back(StrCat(a.name, ": denied"));
      continue;
    }
    library_algorithm |= a.name != "reference";
    candidates.push_back(a);
  }
  std::vector<AlgorithmTiming> timings;
  std::vector<double> reference;  // level 4: the first algorithm's output
  std::string reference_name;
  for (const LibraryAlgorithm& a : candidates) {
    if (a.name == "reference" && library_algorithm) continue;
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
    std::vector<int64_t> times;
    for (int r = 0; r < std::max(options.repeats, 1) && t.status.ok(); ++r) {
      auto start = std::chrono::steady_clock::now();
      t.status = (*runner)->Run(pointers);
      times.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    }
    if (t.status.ok()) {
      std::sort(times.begin(), times.end());
      t.median_ns = times[times.size() / 2];
    } else {
      outcome.rejected.push_back(StrCat(a.name, ": ", t.status.message()));
    }
    timings.push_back(std::move(t));
  }
  return Choose(call, key, timings, std::move(outcome), cache);
}

}  // namespace passlab
