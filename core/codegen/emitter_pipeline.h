// Internal to core/codegen (never include it outside): the emitter pipeline
// both code generators run on an emitted kernel module, and the MLIR context
// and LLVM optimization pipeline they set up around it.
//
// The pipeline is one ordered list: the optimizing MLIR passes (inline,
// canonicalize, cse, loop-invariant-code-motion, the CPU's unroll,
// expand-math, symbol-dce; each can be disabled by name), then the lowering
// to the LLVM dialect with each target's own steps (EmitterPipelineTarget).
// cpu_kernel_compiler.cc (EmitterPipelinePasses) and gpu_kernel_compiler.cc
// (GpuEmitterPipelinePasses) list the passes they run, by these names.
#ifndef PASSLAB_CORE_CODEGEN_EMITTER_PIPELINE_H_
#define PASSLAB_CORE_CODEGEN_EMITTER_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"

namespace passlab {
namespace codegen_internal {

// What differs between the CPU's and the GPU's emitter pipelines.
struct EmitterPipelineTarget {
  // The target's passes, in order: `disabled_passes` may name only the
  // optional ones.
  const std::vector<EmitterPassInfo>* passes = nullptr;
  // Error messages start "<error_prefix>: " ("codegen", "gpu codegen") and
  // say what the required passes lower to ("LLVM", "NVVM/LLVM").
  std::string error_prefix;
  std::string lowered_to;
  // The innermost loops' unroll factor (the CPU's "unroll" pass); 1: none.
  int unroll = 1;
  // A pass run after convert-scf-to-cf and before convert-math-to-llvm (the
  // GPU's gpu -> NVVM and math -> libdevice calls); null: none.
  std::function<std::unique_ptr<mlir::Pass>()> before_math_to_llvm;
  // Math ops convert-math-to-llvm leaves become libm calls (the CPU).
  bool math_to_libm = false;
  // Functions take one bare pointer per memref (the GPU's kernel ABI).
  bool bare_pointer_calls = false;
};

// Runs the emitter pipeline on `module` (kernel `kernel`, for messages and
// snapshots), skipping `disabled_passes`; `observer` (when set) sees every
// pass, with the module text when `observer_wants_text`.
absl::Status RunEmitterPipeline(mlir::ModuleOp module, const EmitterPipelineTarget& target,
                                const std::vector<std::string>& disabled_passes,
                                const std::function<void(const EmitterPassSnapshot&)>& observer,
                                bool observer_wants_text, const std::string& kernel);

// A single-threaded MLIR context with the dialects and LLVM IR translations
// every emitted kernel uses, plus the target's own in `registry`.
std::unique_ptr<mlir::MLIRContext> MakeEmitterContext(mlir::DialectRegistry registry);

// Runs LLVM's default module pipeline for `target_machine` at `opt_level`
// (3 and above: O3; 0: the O0 pipeline).
void RunLlvmPipeline(llvm::Module& module, llvm::TargetMachine* target_machine, int opt_level,
                     const llvm::PipelineTuningOptions& tuning = llvm::PipelineTuningOptions());

}  // namespace codegen_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_CODEGEN_EMITTER_PIPELINE_H_
