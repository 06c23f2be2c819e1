#include "core/codegen/host_target.h"

#include <algorithm>

#include "llvm/ADT/StringMap.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace passlab {

HostTarget DetectHostTarget() {
  HostTarget t;
  t.triple = llvm::sys::getDefaultTargetTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  for (const auto& f : llvm::sys::getHostCPUFeatures()) {
    if (f.second) t.features.push_back(f.first().str());
  }
  std::sort(t.features.begin(), t.features.end());
  t.llvm_version = LLVM_VERSION_STRING;
  llvm::InitializeAllTargetInfos();
  std::string error;
  t.nvptx_available = llvm::TargetRegistry::lookupTarget(llvm::Triple("nvptx64-nvidia-cuda"), error) != nullptr;
  return t;
}

}  // namespace passlab
