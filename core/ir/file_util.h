// Whole-file reading and size formatting shared by the layers above core/ir
// (the .npy reader, the CLI, the conformance runner, buffer assignment).
#ifndef PASSLAB_CORE_IR_FILE_UTIL_H_
#define PASSLAB_CORE_IR_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace passlab {

// The bytes of the file at `path` (binary, unchanged), or NotFound
// "PATH: cannot open file" when it cannot be opened.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// Writes `text` to the file at `path` (binary, replacing it), or Internal
// "PATH: cannot write file".
absl::Status WriteStringToFile(const std::string& path, std::string_view text);

// A byte count for people: "512 B", "1.5 KiB", "2.25 MiB", "1.50 GiB"
// (binary units; KiB with one decimal, MiB and GiB with two).
std::string FormatBytes(int64_t bytes);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_FILE_UTIL_H_
