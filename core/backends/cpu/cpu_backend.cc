// The CPU backend: the CPU code generator's kernels (CpuKernelCompiler) on
// this folder's Executable (thunks; core/runtime's OpenBLAS/oneDNN library calls, runtime
// routines).
#include <memory>

#include "core/backends/backend_internal.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/backends/cpu/executable.h"

namespace passlab::backend {
namespace {

class CpuExecutable : public Executable {
 public:
  CpuExecutable(std::unique_ptr<CpuKernelCompiler> compiler, std::unique_ptr<passlab::Executable> exe,
                const Session& session)
      : session_(session), compiler_(std::move(compiler)), exe_(std::move(exe)) {}

  absl::StatusOr<Literal> Run(absl::Span<const Literal> args) override {
    session_.ApplyLibrarySettings();
    return exe_->Run(args);
  }
  absl::Status Execute(absl::Span<const Literal> args, std::vector<KernelRecord>* records) override {
    session_.ApplyLibrarySettings();
    return exe_->Execute(args, records);
  }
  ExecutableMemory Memory() const override { return exe_->memory(); }
  std::string DeviceDescription() const override { return "cpu"; }
  void ShareHostMemory(std::shared_ptr<SharedHostMemory> memory) override { exe_->ShareHostMemory(std::move(memory)); }
  void SetArenaOffset(int64_t bytes) override { exe_->set_arena_offset(bytes); }

 private:
  Session session_;
  std::unique_ptr<CpuKernelCompiler> compiler_;  // the kernels' owner
  std::unique_ptr<passlab::Executable> exe_;
};

class CpuCompiler : public Compiler {
 public:
  using Compiler::Compiler;

  absl::StatusOr<std::unique_ptr<Executable>> Compile(const HloModule& module) override {
    session_.ApplyLibrarySettings();
    CpuCompileOptions options = session_.cpu_compile;
    options.num_threads = session_.threads;
    auto compiler = std::make_unique<CpuKernelCompiler>(options);
    CpuKernelCompiler* kernels = compiler.get();
    absl::StatusOr<std::unique_ptr<passlab::Executable>> exe =
        passlab::Executable::Create(module, [kernels](const HloInstruction& i) { return kernels->Compile(i); });
    if (!exe.ok()) return exe.status();
    return std::unique_ptr<Executable>(new CpuExecutable(std::move(compiler), std::move(*exe), session_));
  }
};

}  // namespace

std::unique_ptr<Compiler> CreateCpuCompiler(Session session) {
  return std::make_unique<CpuCompiler>(std::move(session));
}

}  // namespace passlab::backend
