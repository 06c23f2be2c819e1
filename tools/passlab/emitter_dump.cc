#include "tools/passlab/emitter_dump.h"

#include <filesystem>
#include <fstream>

#include "analysis/ir_diff.h"
#include "core/ir/str_util.h"

namespace passlab {

void EmitterDump::Attach(CpuCompileOptions& options) {
  options.observer_wants_text = true;
  options.use_cache = false;
  options.observer = Observer();
}

void EmitterDump::Attach(GpuCompileOptions& options) {
  options.observer_wants_text = true;
  options.use_cache = false;
  options.observer = Observer();
}

std::function<void(const EmitterPassSnapshot&)> EmitterDump::Observer() {
  return [this](const EmitterPassSnapshot& snap) {
    const std::string kernel = SanitizeFileName(snap.kernel_name);
    std::filesystem::path dir = std::filesystem::path(dir_) / kernel;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    auto write = [&](const std::string& file, const std::string& text) {
      std::ofstream out(dir / file);
      out << text;
      if (!out && status_.ok()) status_ = absl::InternalError(StrCat("cannot write '", (dir / file).string(), "'"));
    };
    int& n = passes_[snap.kernel_name];
    if (n == 0) write("00.input.mlir", snap.before);
    ++n;
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%02d.", n);
    const std::string stem = StrCat(prefix, SanitizeFileName(snap.pass_name));
    write(stem + ".mlir", snap.after);
    if (snap.before != snap.after) {
      write(stem + ".diff", UnifiedDiff(snap.before, snap.after));
      changed_[snap.kernel_name].push_back(snap.pass_name);
    }
  };
}

absl::Status EmitterDump::Finish() {
  if (!status_.ok()) return status_;
  if (passes_.empty()) return absl::OkStatus();
  std::ofstream index(std::filesystem::path(dir_) / "index.txt");
  for (const auto& [kernel, n] : passes_) {
    index << SanitizeFileName(kernel) << ": " << n << " emitter passes; changed by "
          << (changed_.count(kernel) ? Join(changed_.at(kernel), ", ") : std::string("none")) << "\n";
  }
  if (!index) return absl::InternalError(StrCat("cannot write '", dir_, "/index.txt'"));
  return absl::OkStatus();
}

}  // namespace passlab
