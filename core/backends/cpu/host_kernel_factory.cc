#include "core/backends/cpu/host_kernel_factory.h"

#include <utility>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab {

HostKernelFactory MakeHostKernelFactory(CpuCompileOptions options) {
  options.observer = nullptr;
  auto compiler = std::make_shared<CpuKernelCompiler>(std::move(options));
  return [compiler](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    if (absl::Status s = CpuKernelCompiler::CheckCompilable(inst); !s.ok()) {
      return absl::UnimplementedError(StrCat("host kernel for ", inst.name(), ": ", s.message()));
    }
    return compiler->Compile(inst);
  };
}

}  // namespace passlab
