// Facts about the machine code generation targets, from LLVM: the host CPU
// name and features (what the CPU backend will compile for) and the LLVM and
// MLIR versions linked in. Ablation manifests record these.
#ifndef PASSLAB_CORE_CODEGEN_HOST_TARGET_H_
#define PASSLAB_CORE_CODEGEN_HOST_TARGET_H_

#include <string>
#include <vector>

namespace passlab {

struct HostTarget {
  std::string triple;                 // "x86_64-pc-linux-gnu"
  std::string cpu;                    // "znver3"
  std::vector<std::string> features;  // enabled: "avx2", "fma", ...
  std::string llvm_version;           // "22.1.8"
  bool nvptx_available = false;       // the NVPTX backend is built into LLVM
};

HostTarget DetectHostTarget();

}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_HOST_TARGET_H_
