// What the end-to-end tests share: a module's text through a named
// pipeline (with disabled passes), compiled for the CPU backend (one thread)
// and run on given arguments.
#ifndef PASSLAB_TEST_E2E_E2E_UTIL_H_
#define PASSLAB_TEST_E2E_E2E_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/backends/cpu/executable.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {

struct VariantRun {
  std::string error;  // parse, pipeline, compile or run failure ("" when it ran)
  Literal result;
  std::string optimized;  // the module after the pipeline
};

// Runs `module` (already optimized) on the CPU backend.
inline absl::StatusOr<Literal> RunOnCpu(const HloModule& module, const std::vector<Literal>& args) {
  CpuCompileOptions copts;
  copts.num_threads = 1;
  CpuKernelCompiler compiler(copts);
  auto exe = Executable::Create(module, [&](const HloInstruction& i) { return compiler.Compile(i); });
  if (!exe.ok()) return absl::Status(exe.status().code(), StrCat("compile: ", exe.status().message()));
  absl::StatusOr<Literal> r = (*exe)->Run(args);
  if (!r.ok()) return absl::Status(r.status().code(), StrCat("run: ", r.status().message()));
  return r;
}

inline VariantRun OptimizeAndRun(const std::string& text, const std::string& disabled,
                                 const std::vector<Literal>& args, const std::string& pipeline_name = "gpu") {
  VariantRun out;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return {std::string(m.status().message())};
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(pipeline_name, disabled);
  if (!pipeline.ok()) return {std::string(pipeline.status().message())};
  if (absl::Status s = pipeline->pipeline->Run(**m).status(); !s.ok()) return {StrCat("pipeline: ", s.message())};
  out.optimized = PrintModule(**m);
  absl::StatusOr<Literal> result = RunOnCpu(**m, args);
  if (!result.ok()) {
    out.error = std::string(result.status().message());
    return out;
  }
  out.result = std::move(*result);
  return out;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_E2E_E2E_UTIL_H_
