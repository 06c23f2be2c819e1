#include "analysis/ablation/aa_calibration.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analysis/ablation/runner.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using Json = nlohmann::json;
constexpr const char* kSchema = "passlab.aa_calibration/1";

Json FieldOr(const Json& object, const char* key, Json fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? fallback : *it;
}

// Holds an exclusive flock on a lock file beside the calibration file.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && flock(fd_, LOCK_EX) != 0) {
      close(fd_);
      fd_ = -1;
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

absl::StatusOr<Json> ReadCalibrationFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Json{{"schema", kSchema}, {"entries", Json::array()}};
  std::stringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != kSchema || !j.contains("entries") ||
      !j["entries"].is_array()) {
    return absl::DataLossError(StrCat("'", path, "' is not an A/A calibration file (schema ", kSchema,
                                      "); move it away or pass another --aa-calibration FILE"));
  }
  return j;
}

absl::StatusOr<AaCalibrationEntry> EntryFromJson(const Json& j, const std::string& path) {
  if (!j.is_object() || !j.contains("key") || !j.contains("band") || !j["band"].is_number()) {
    return absl::DataLossError(StrCat("'", path, "': an entry without key or band: ", j.dump()));
  }
  AaCalibrationEntry e;
  e.key = j["key"];
  e.band = j["band"].get<double>();
  e.copies = j.value("copies", 0);
  e.sweep_dir = j.value("sweep", "");
  e.measured_at = j.value("measured_at", "");
  return e;
}

}  // namespace

Json AaCalibrationKey(const AblationManifest& manifest) {
  Json key;
  // The machine (runner.h DescribeMachine) is an open object.
  const Json machine = manifest.machine.value_or(Json::object());
  key["machine"] = {{"host", FieldOr(machine, "node", FieldOr(machine, "host", ""))},
                    {"cpu", FieldOr(machine, "cpu", "")},
                    {"cores", FieldOr(machine, "cores", 0)},
                    {"gpu", FieldOr(machine, "gpu", "none")}};
  key["device"] = {{"device", manifest.device}, {"threads", manifest.threads.value_or(1)}};
  // A registered model by name and options (the caller's part of the
  // manifest); a file by its content.
  const Json model = FieldOr(manifest.extra, "model", Json::object());
  if (model.is_object() && model.contains("name")) {
    key["model"] = {{"name", model["name"]}, {"options", FieldOr(model, "options", Json::object())}};
  } else {
    key["model"] = {{"input_xxh64", manifest.input_xxh64.value_or("")}};
  }
  key["pipeline"] = {{"name", manifest.pipeline},
                     {"pass_options", manifest.pass_options.value_or(std::vector<std::string>{})},
                     {"removed_passes", manifest.xla_disabled_passes.value_or(std::vector<std::string>{})}};
  return key;
}

std::string DefaultAaCalibrationPath() {
  if (const char* p = std::getenv("PASSLAB_AA_CALIBRATION"); p != nullptr && *p != '\0') return p;
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache";
  } else {
    dir = std::filesystem::temp_directory_path();
  }
  return (dir / "passlab" / "aa_calibration.json").string();
}

Json AaCalibrationEntry::ToJson() const {
  return Json{{"key", key}, {"band", band}, {"copies", copies}, {"sweep", sweep_dir}, {"measured_at", measured_at}};
}

absl::StatusOr<std::optional<AaCalibrationEntry>> LookupAaBand(const std::string& path, const Json& key) {
  ASSIGN_OR_RETURN(Json file, ReadCalibrationFile(path));
  for (const Json& j : file["entries"]) {
    if (!j.is_object() || j.value("key", Json()) != key) continue;
    ASSIGN_OR_RETURN(AaCalibrationEntry e, EntryFromJson(j, path));
    return std::optional<AaCalibrationEntry>(e);
  }
  return std::optional<AaCalibrationEntry>();
}

absl::Status StoreAaBand(const std::string& path, const AaCalibrationEntry& entry) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return absl::InternalError(StrCat("cannot create '", parent.string(), "': ", ec.message()));
  FileLock lock(path + ".lock");
  if (!lock.ok()) return absl::InternalError(StrCat("cannot lock '", path, ".lock'"));
  ASSIGN_OR_RETURN(Json file, ReadCalibrationFile(path));
  Json entries = Json::array();
  for (const Json& j : file["entries"]) {
    if (j.is_object() && j.value("key", Json()) != entry.key) entries.push_back(j);
  }
  entries.push_back(entry.ToJson());
  file["entries"] = std::move(entries);
  return WriteFileAtomically(path, file.dump(2) + "\n");
}

std::string DescribeAaCalibration(const std::string& path, const AaCalibrationEntry& entry) {
  return StrCat("calibration file ", path, " (", entry.copies, " A/A copies in ",
                entry.sweep_dir.empty() ? "an earlier sweep" : entry.sweep_dir,
                entry.measured_at.empty() ? "" : StrCat(", ", entry.measured_at), ")");
}

}  // namespace passlab
