#include "core/ir/file_util.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "core/ir/str_util.h"

namespace passlab {

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

absl::Status WriteStringToFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return absl::InternalError(StrCat(path, ": cannot write file"));
  return absl::OkStatus();
}

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / 1073741824.0);
  if (bytes >= (int64_t{1} << 20)) return absl::StrFormat("%.2f MiB", bytes / 1048576.0);
  if (bytes >= 1024) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return StrCat(bytes, " B");
}

}  // namespace passlab
