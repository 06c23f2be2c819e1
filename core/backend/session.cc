#include "core/backend/session.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include "core/ir/str_util.h"
#include "core/runtime/library_threads.h"

namespace passlab::backend {

absl::StatusOr<DeviceName> ParseDeviceName(std::string_view device) {
  if (device == "cpu") return DeviceName{"cpu", 0};
  if (device == "cuda") return DeviceName{"cuda", 0};
  if (device.starts_with("cuda:") && device.size() > 5 && device.size() <= 8 &&
      std::all_of(device.begin() + 5, device.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return DeviceName{"cuda", std::stoi(std::string(device.substr(5)))};
  }
  return absl::InvalidArgumentError(StrCat("unknown device '", device, "' (expected cpu, cuda or cuda:N)"));
}

void Session::ApplyLibrarySettings() const {
  const int wanted = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (LibraryCallThreads() != wanted) {
    SetLibraryCallThreads(threads);  // OpenBLAS (per process) and this thread's OpenMP
  } else {
    ApplyLibraryCallThreads();  // this thread's OpenMP, if it has not seen the cap yet
  }
}

// UseDeviceAutotuning: core/backends/backends.cc (the CUDA backend's timer).

}  // namespace passlab::backend
