// The CPU code generator as a source of host kernels for the CUDA runtime's
// host fallback (CudaExecutableOptions::host_kernels): an op with no GPU
// implementation that is neither a library call nor a host routine is
// compiled on its own for the host CPU (CpuKernelCompiler's unit is one
// instruction, with its operands as the kernel's parameters) and run on
// host copies of its buffers. The CUDA backend injects it, so the CUDA
// runtime does not link the code generator.
#ifndef PASSLAB_CORE_BACKENDS_CPU_HOST_KERNEL_FACTORY_H_
#define PASSLAB_CORE_BACKENDS_CPU_HOST_KERNEL_FACTORY_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "core/codegen/compiled_kernel.h"
#include "core/codegen/cpu_kernel_compiler.h"

namespace passlab {

class HloInstruction;

using HostKernelFactory = std::function<absl::StatusOr<std::unique_ptr<CompiledKernel>>(const HloInstruction&)>;

// Compiles each instruction it is given with a CpuKernelCompiler of
// `options` (its observer is dropped: the host fallback's kernels are not
// the CPU pipeline's). An instruction the compiler cannot take answers its
// error (Unimplemented, naming the instruction).
HostKernelFactory MakeHostKernelFactory(CpuCompileOptions options);

}  // namespace passlab

#endif  // PASSLAB_CORE_BACKENDS_CPU_HOST_KERNEL_FACTORY_H_
