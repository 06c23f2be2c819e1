// The GPU code generator on the models' real kernels, without a GPU: after
// today's pipeline and the seed era's, every kernel the CPU backend compiles for ResNet-18,
// the MLP and the Laplace PINN also compiles to PTX, and ptxas (when the CUDA
// toolkit is installed) accepts that PTX for sm_90.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"
#include "core/ir/str_util.h"
#include "core/backends/cpu/executable.h"
#include "models/model_registry.h"
#include "passes/pipelines/pipelines.h"

namespace passlab {
namespace {

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

// ptxas on all kernels at once (one process): "" when it accepts them.
std::string PtxasAll(const std::vector<GpuKernel>& kernels) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / StrCat("passlab_ptx_", ::getpid());
  std::filesystem::create_directories(dir);
  std::string failures;
  // Kernels that differ only in their entry's name are checked once.
  std::set<std::string> seen;
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string canonical = std::regex_replace(kernels[i].ptx, std::regex(kernels[i].entry), "ENTRY");
    if (!seen.insert(canonical).second) continue;
    std::string ptx = (dir / StrCat(i, ".ptx")).string();
    {
      std::ofstream out(ptx);
      out << kernels[i].ptx;
    }
    std::string log = (dir / StrCat(i, ".log")).string();
    std::string command =
        StrCat(kPtxas, " -arch=", kernels[i].target, " ", ptx, " -o ", dir.string(), "/k.cubin > ", log, " 2>&1");
    if (std::system(command.c_str()) != 0) {
      std::ifstream in(log);
      std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      failures += StrCat(kernels[i].name, ": ", message, "\n");
    }
  }
  std::filesystem::remove_all(dir);
  return failures;
}

void CheckModel(const char* name, const ModelOptions& options, const char* pipeline_name) {
  SCOPED_TRACE(pipeline_name);
  absl::StatusOr<std::unique_ptr<HloModule>> module = BuildModel(name, options);
  ASSERT_TRUE(module.ok()) << module.status().message();
  absl::StatusOr<FilteredPipeline> pipeline = BuildFilteredPipeline(pipeline_name, "");
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  ASSERT_TRUE(pipeline->pipeline->Run(**module).ok());
  // The kernels the CPU runtime asks for are the ones the GPU path must
  // compile too.
  CpuCompileOptions copts;
  copts.num_threads = 1;
  CpuKernelCompiler cpu(copts);
  GpuKernelCompiler gpu;
  std::vector<GpuKernel> kernels;
  std::map<EmitterKind, int> kinds;
  auto exe = Executable::Create(**module, [&](const HloInstruction& i) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    absl::StatusOr<std::unique_ptr<CompiledKernel>> k = cpu.Compile(i);
    if (!k.ok()) return k;
    absl::StatusOr<GpuKernel> g = gpu.Compile(i);
    EXPECT_TRUE(g.ok()) << name << ": " << i.name() << ": " << g.status().message();
    if (g.ok()) {
      EXPECT_NE(g->ptx.find(StrCat(".entry ", g->entry)), std::string::npos) << i.name();
      EXPECT_GE(g->launch.num_blocks(), 1);
      EXPECT_GE(g->launch.threads_per_block(), 1);
      EXPECT_LE(g->launch.threads_per_block(), 1024);
      ++kinds[g->emitter_kind];
      kernels.push_back(std::move(*g));
    }
    return k;
  });
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  EXPECT_GT(kernels.size(), 2u) << name;
  std::string summary;
  for (const auto& [kind, count] : kinds) summary += StrCat(" ", EmitterKindName(kind), "=", count);
  std::printf("%s (%s): %zu GPU kernels:%s\n", name, pipeline_name, kernels.size(), summary.c_str());
  if (!std::filesystem::exists(kPtxas)) {
    std::printf("(ptxas not found at %s: PTX not validated)\n", kPtxas);
    return;
  }
  EXPECT_EQ(PtxasAll(kernels), "") << name;
}

// Today's pipeline (priority fusion, layout normalization) and the seed
// era's both compile to PTX.
void CheckModel(const char* name, const ModelOptions& options) {
  for (const char* pipeline : {"gpu", "gpu-2021"}) CheckModel(name, options, pipeline);
}

TEST(GpuKernelsTest, Mlp) {
  ModelOptions o;
  o.batch = 4;
  o.depth = 2;
  o.width = 16;
  CheckModel("mlp", o);
}

TEST(GpuKernelsTest, LaplacePinn) {
  ModelOptions o;
  o.image_size = 6;
  o.depth = 2;
  o.width = 8;
  CheckModel("laplace_pinn", o);
}

TEST(GpuKernelsTest, TransformerBlock) {
  ModelOptions o;
  o.batch = 2;
  o.seq_len = 4;
  o.width = 16;
  o.heads = 2;
  CheckModel("transformer_block", o);
}

TEST(GpuKernelsTest, ResNet18) {
  ModelOptions o;
  o.batch = 2;
  o.image_size = 64;
  o.classes = 10;
  o.width = 8;
  CheckModel("resnet18", o);
}

}  // namespace
}  // namespace passlab
