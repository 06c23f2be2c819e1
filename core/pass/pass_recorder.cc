#include "core/pass/pass_recorder.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_format.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

const char* OutcomeName(PassRunRecord::Outcome o) {
  switch (o) {
    case PassRunRecord::Outcome::kRan: return "ran";
    case PassRunRecord::Outcome::kSkipped: return "skipped";
    case PassRunRecord::Outcome::kFailed: return "failed";
  }
  return "?";
}

}  // namespace

absl::Status PassRecorder::BeforePass(const PassRunInfo& info, const HloModule& module) {
  // Passes are the only writers during a run: the counts after the last
  // change are still the module's.
  if (!have_counts_) {
    opcode_counts_before_ = CountInstructionsByOpcode(module);
    have_counts_ = true;
  }
  instructions_before_ = module.instruction_count();
  if (initial_fingerprint_ == 0) {
    // The first observed state is the pipeline input; later "before" states
    // are earlier "after" states, already stored.
    initial_fingerprint_ = ModuleFingerprint(module);
    if (options_.snapshots) snapshots_[initial_fingerprint_] = PrintModuleText(module);
  }
  start_ = std::chrono::steady_clock::now();
  return absl::OkStatus();
}

absl::Status PassRecorder::AfterPass(const PassRunInfo& info, const HloModule& module, bool changed,
                                     uint64_t fingerprint_before, uint64_t fingerprint_after,
                                     const PassCounters& counters) {
  // The pass's own time when the pipeline measured it (instrumentation
  // excluded), else from BeforePass to now.
  double ms = info.run_seconds > 0
                  ? info.run_seconds * 1e3
                  : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  PassRunRecord r;
  r.info = info;
  r.changed = changed;
  r.wall_ms = ms;
  r.instructions_before = instructions_before_;
  r.instructions_after = module.instruction_count();
  r.counters = counters;
  r.fingerprint_before = fingerprint_before;
  r.fingerprint_after = fingerprint_after;
  if (fingerprint_before != fingerprint_after) {
    std::map<std::string, int64_t> after = CountInstructionsByOpcode(module);
    r.opcode_delta = OpcodeCountDelta(opcode_counts_before_, after);
    opcode_counts_before_ = std::move(after);
  }
  if (options_.snapshots) {
    // The "before" text equals the previous "after", except for the very
    // first run; keep it when it is new.
    if (!snapshots_.contains(fingerprint_after)) {
      snapshots_[fingerprint_after] = info.text_after != nullptr ? info.text_after : PrintModuleText(module);
    }
  }
  runs_.push_back(std::move(r));
  return absl::OkStatus();
}

void PassRecorder::PassSkipped(const PassRunInfo& info) {
  PassRunRecord r;
  r.info = info;
  r.outcome = PassRunRecord::Outcome::kSkipped;
  runs_.push_back(std::move(r));
}

void PassRecorder::PassFailed(const PassRunInfo& info, const HloModule& module, const absl::Status& status) {
  have_counts_ = false;
  PassRunRecord r;
  r.info = info;
  r.outcome = PassRunRecord::Outcome::kFailed;
  r.error = std::string(status.message());
  r.instructions_before = instructions_before_;
  r.instructions_after = module.instruction_count();
  runs_.push_back(std::move(r));
}

void PassRecorder::FixedPointFinished(const std::string& path, int64_t iterations, bool hit_limit,
                                      bool cycled) {
  fixed_points_.push_back({path, iterations, hit_limit, cycled});
}

const std::string& PassRecorder::Snapshot(uint64_t fingerprint) const {
  static const std::string* empty = new std::string();
  auto it = snapshots_.find(fingerprint);
  return it == snapshots_.end() ? *empty : it->second->str();
}

std::vector<PassRecorder::PassTotals> PassRecorder::TotalsByPass() const {
  std::map<std::string, PassTotals> by_name;
  for (const PassRunRecord& r : runs_) {
    if (r.outcome != PassRunRecord::Outcome::kRan) continue;
    PassTotals& t = by_name[r.info.pass_name];
    t.pass_name = r.info.pass_name;
    ++t.runs;
    t.changed += r.changed ? 1 : 0;
    t.total_ms += r.wall_ms;
  }
  std::vector<PassTotals> out;
  for (auto& [name, t] : by_name) out.push_back(t);
  std::stable_sort(out.begin(), out.end(),
                   [](const PassTotals& a, const PassTotals& b) { return a.total_ms > b.total_ms; });
  return out;
}

absl::Status WritePassDump(const PassRecorder& recorder, const std::string& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) return absl::InternalError(StrCat(directory, ": cannot create dump directory: ", ec.message()));
  auto write = [&](const std::string& name, const std::string& text) -> absl::Status {
    std::ofstream out(std::filesystem::path(directory) / name, std::ios::binary);
    out << text;
    if (!out) return absl::InternalError(StrCat(directory, "/", name, ": cannot write"));
    return absl::OkStatus();
  };
  nlohmann::ordered_json index = nlohmann::ordered_json::array();
  for (const PassRunRecord& r : recorder.runs()) {
    nlohmann::ordered_json j;
    j["run"] = r.info.run_index;
    j["id"] = r.info.occurrence_id;
    j["pipeline"] = r.info.pipeline_path;
    j["pass"] = r.info.pass_name;
    j["occurrence"] = r.info.occurrence_index;
    j["iteration"] = r.info.iteration;
    j["outcome"] = OutcomeName(r.outcome);
    j["changed"] = r.changed;
    j["wall_ms"] = r.wall_ms;
    j["instructions_before"] = r.instructions_before;
    j["instructions_after"] = r.instructions_after;
    j["opcode_delta"] = r.opcode_delta;
    j["counters"] = r.counters;
    if (!r.error.empty()) j["error"] = r.error;
    if (r.outcome == PassRunRecord::Outcome::kRan && r.fingerprint_before != r.fingerprint_after) {
      std::string stem = StrCat(absl::StrFormat("%04d", r.info.run_index), ".",
                                SanitizeFileName(r.info.pipeline_path), ".", SanitizeFileName(r.info.pass_name));
      const std::string& before = recorder.Snapshot(r.fingerprint_before);
      const std::string& after = recorder.Snapshot(r.fingerprint_after);
      if (!before.empty()) {
        RETURN_IF_ERROR(write(stem + ".before.hlo", before));
        j["before_file"] = stem + ".before.hlo";
      }
      if (!after.empty()) {
        RETURN_IF_ERROR(write(stem + ".after.hlo", after));
        j["after_file"] = stem + ".after.hlo";
      }
    }
    index.push_back(std::move(j));
  }
  nlohmann::ordered_json root;
  root["schema"] = "passlab-pass-dump/1";
  nlohmann::ordered_json fps = nlohmann::ordered_json::array();
  for (const FixedPointRecord& f : recorder.fixed_points()) {
    fps.push_back({{"path", f.path}, {"iterations", f.iterations}, {"hit_limit", f.hit_limit},
                   {"cycled", f.cycled}});
  }
  root["fixed_points"] = fps;
  root["runs"] = index;
  return write("index.json", root.dump(2) + "\n");
}

}  // namespace passlab
