#include "passes/autotune/autotune_cache.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/libcall/library_call.h"

namespace passlab {
namespace {

using json = nlohmann::json;

absl::Status ReadEntries(const std::string& path, std::map<std::string, AutotuneResult>& out) {
  std::ifstream in(path);
  if (!in) return absl::OkStatus();
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("results") || !j["results"].is_array()) {
    return absl::InvalidArgumentError(StrCat("autotune cache ", path, ": not a passlab autotune cache"));
  }
  for (const json& e : j["results"]) {
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("algorithm") ||
        !e["algorithm"].is_number_integer()) {
      return absl::InvalidArgumentError(StrCat("autotune cache ", path, ": malformed entry ", e.dump()));
    }
    AutotuneResult r;
    r.algorithm = e["algorithm"].get<int64_t>();
    r.algorithm_name = e.value("name", "");
    r.time_ns = e.value("time_ns", int64_t{0});
    out[e["key"].get<std::string>()] = std::move(r);
  }
  return absl::OkStatus();
}

}  // namespace

std::string AutotuneKey(const HloInstruction& call) {
  std::string key = StrCat(call.custom_call_target(), " ", call.shape().ToString(), " (");
  for (const HloInstruction* op : call.operands()) key += op->shape().ToString() + ",";
  key += ")";
  const HloAttributes& a = call.attrs();
  if (a.window.has_value()) key += " window=" + a.window->ToString();
  if (a.conv_dnums.has_value()) key += " dim_labels=" + a.conv_dnums->ToString();
  if (a.feature_group_count != 1) key += StrCat(" feature_group_count=", a.feature_group_count);
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(call);
  if (kind == LibraryCallKind::kGemm) {
    if (absl::StatusOr<GemmBackendConfig> c = ParseGemmBackendConfig(call); c.ok()) {
      c->selected_algorithm = -1;
      return key + " " + c->ToJson();
    }
  } else if (kind.has_value()) {
    if (absl::StatusOr<ConvBackendConfig> c = ParseConvBackendConfig(call); c.ok()) {
      c->algo_id = -1;
      c->tuning_knobs.clear();
      c->workspace_size = 0;
      return key + " " + c->ToJson();
    }
  }
  return key + " " + call.raw_backend_config();
}

AutotuneCache& AutotuneCache::Global() {
  static AutotuneCache* cache = new AutotuneCache();
  return *cache;
}

std::optional<AutotuneResult> AutotuneCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void AutotuneCache::Insert(const std::string& key, AutotuneResult result) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[key] = std::move(result);
}

size_t AutotuneCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void AutotuneCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  hits_ = misses_ = 0;
}

absl::Status AutotuneCache::Load(const std::string& path) {
  std::map<std::string, AutotuneResult> loaded;
  RETURN_IF_ERROR(ReadEntries(path, loaded));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, r] : loaded) entries_.emplace(key, std::move(r));  // entries tuned here win
  return absl::OkStatus();
}

absl::Status AutotuneCache::Save(const std::string& path) {
  std::map<std::string, AutotuneResult> merged;
  RETURN_IF_ERROR(ReadEntries(path, merged));
  json results = json::array();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, r] : entries_) merged[key] = r;
  }
  for (const auto& [key, r] : merged) {
    results.push_back({{"key", key}, {"algorithm", r.algorithm}, {"name", r.algorithm_name}, {"time_ns", r.time_ns}});
  }
  json j = {{"version", 1}, {"results", std::move(results)}};
  std::string tmp = StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp);
    if (!out) return absl::InternalError(StrCat("autotune cache: cannot write ", tmp));
    out << j.dump(1) << "\n";
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(StrCat("autotune cache: cannot rename ", tmp, " to ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace passlab
