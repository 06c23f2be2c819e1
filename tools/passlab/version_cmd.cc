// passlab version: the build and the machine's code generation target.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "core/codegen/host_target.h"
#include "core/ir/str_util.h"
#include "core/proto/hlo_proto_import.h"
#include "core/runtime/library_threads.h"
#include "tools/passlab/commands.h"

namespace passlab {

void AddVersionCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("version", "Show passlab's version and the host code generation target");
  cmd->callback([&result] {
    HostTarget t = DetectHostTarget();
    fmt::print("passlab 0.1.0\n");
    fmt::print("LLVM {} (NVPTX backend {})\n", t.llvm_version, t.nvptx_available ? "built in" : "missing");
    fmt::print("host: {} cpu={}\n", t.triple, t.cpu);
    std::vector<std::string> simd;
    for (const std::string& f : t.features) {
      if (f.rfind("avx", 0) == 0 || f == "fma" || f.rfind("sse", 0) == 0) simd.push_back(f);
    }
    fmt::print("vector features: {}\n", Join(simd, " "));
    fmt::print("protobuf: {}\n", HloProtoSupported() ? "yes (XLA .pb files are read)" : "no (XLA .pb files are not read)");
    std::string blas = OpenBlasCore();
    fmt::print("OpenBLAS kernels: {}\n", blas.empty() ? "none (no OpenBLAS)" : blas);
    result.exit_code = 0;
  });
}

}  // namespace passlab
