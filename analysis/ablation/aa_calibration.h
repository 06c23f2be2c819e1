// A/A calibration: how far from 1 a variant whose program is the baseline's
// lands on this machine (the A/A band, report.h), kept so that later sweeps
// of the same configuration judge their changes against it.
//
// An A/A sweep (`passlab ablate --sweep aa`) writes its measured band into
// <out>/aa_band.json and into a calibration file shared by all sweeps
// (default: $PASSLAB_AA_CALIBRATION, else $XDG_CACHE_HOME/passlab/, else
// ~/.cache/passlab/aa_calibration.json; there is no machine-wide autotune
// cache to sit beside, each sweep keeps its own in its directory). Entries
// are keyed by machine (host, CPU, cores), device (and kernel threads),
// model (name and options, or the input's hash) and pipeline (with its pass
// options and removed passes): a band measured on another machine or model
// says nothing here. A later write for the same key replaces the entry.
#ifndef PASSLAB_ANALYSIS_ABLATION_AA_CALIBRATION_H_
#define PASSLAB_ANALYSIS_ABLATION_AA_CALIBRATION_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/ablation/records.h"
#include "nlohmann/json.hpp"

namespace passlab {

// The configuration a band belongs to, from a sweep's manifest.json: the
// machine, device and threads, model (or input hash) and pipeline settings.
nlohmann::json AaCalibrationKey(const AblationManifest& manifest);

// The default calibration file (see above).
std::string DefaultAaCalibrationPath();

// One stored band.
struct AaCalibrationEntry {
  nlohmann::json key;
  double band = 0;       // largest |ratio - 1| of the copies
  int copies = 0;
  std::string sweep_dir;  // where it was measured
  std::string measured_at;  // ISO 8601, UTC
  nlohmann::json ToJson() const;
};

// The entry for `key` in `path`, if any (a missing file holds none).
// Errors: the file exists but is not a calibration file.
absl::StatusOr<std::optional<AaCalibrationEntry>> LookupAaBand(const std::string& path, const nlohmann::json& key);

// Adds (or replaces) the entry for entry.key in `path`, under an exclusive
// lock and through a rename, so concurrent sweeps never lose each other's
// entries or leave a torn file. Creates the file's directory.
absl::Status StoreAaBand(const std::string& path, const AaCalibrationEntry& entry);

// "calibration file PATH (6 A/A copies in DIR, 2026-11-27T13:00:00Z)".
std::string DescribeAaCalibration(const std::string& path, const AaCalibrationEntry& entry);

}  // namespace passlab

#endif  // PASSLAB_ANALYSIS_ABLATION_AA_CALIBRATION_H_
