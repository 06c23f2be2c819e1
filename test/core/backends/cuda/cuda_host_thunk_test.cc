// The host fallback's choice of host implementation (cuda_host_thunk.cc),
// which needs no device: a library call takes the CPU runtime's runner, a
// host routine its routine, anything else a kernel from the injected host
// code generator (CudaExecutableOptions::host_kernels), and without one, or
// when it cannot compile the op, building fails naming the op. Running the
// thunks needs a device (cuda_executable_test.cc).
#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/backends/cuda/cuda_thunk.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

constexpr char kModule[] = R"(HloModule m
less {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT lt = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[6,3] parameter(1)
  n = f32[4,6] negate(a)
  s = f32[4,6] sort(a), dimensions={1}, to_apply=less
  ROOT g = f32[4,3] custom-call(n, b), custom_call_target="__blas$gemm",
    backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
}
)";

// A CompiledKernel that only names itself: building a thunk does not run it.
class NamedKernel : public CompiledKernel {
 public:
  explicit NamedKernel(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const>) const override {}

 private:
  std::string name_;
};

const HloInstruction* Find(const HloModule& m, std::string_view name) {
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->name() == name) return i;
  }
  return nullptr;
}

TEST(CudaHostThunkTest, EachOpTakesItsHostImplementation) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  int compiled = 0;
  HostKernelProvider host = [&](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    ++compiled;
    return std::make_unique<NamedKernel>(inst.name());
  };
  absl::StatusOr<std::unique_ptr<GpuThunk>> gemm = CreateHostFallbackThunk(*Find(**m, "g"), "test", host);
  ASSERT_TRUE(gemm.ok()) << gemm.status().message();
  EXPECT_EQ((*gemm)->detail(), "host: __blas$gemm/onednn (test)");
  absl::StatusOr<std::unique_ptr<GpuThunk>> sort = CreateHostFallbackThunk(*Find(**m, "s"), "test", host);
  ASSERT_TRUE(sort.ok()) << sort.status().message();
  EXPECT_EQ((*sort)->detail(), "host: sort (test)");
  EXPECT_EQ(compiled, 0);
  absl::StatusOr<std::unique_ptr<GpuThunk>> neg = CreateHostFallbackThunk(*Find(**m, "n"), "no kernel", host);
  ASSERT_TRUE(neg.ok()) << neg.status().message();
  EXPECT_EQ((*neg)->detail(), "host: negate on a host kernel (no kernel)");
  EXPECT_EQ((*neg)->kind(), KernelKind::kRuntimeRoutine);
  EXPECT_EQ(compiled, 1);
}

TEST(CudaHostThunkTest, WithoutAHostKernelTheErrorNamesTheOp) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction& neg = *Find(**m, "n");
  absl::StatusOr<std::unique_ptr<GpuThunk>> none = CreateHostFallbackThunk(neg, "no GPU code generator given", nullptr);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(absl::IsUnimplemented(none.status()));
  EXPECT_EQ(none.status().message(),
            "n (negate): no GPU implementation (no GPU code generator given) and no host code generator to run it "
            "on the host");
  HostKernelProvider failing = [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    return absl::UnimplementedError(std::string(inst.name()) + ": not on this host");
  };
  absl::StatusOr<std::unique_ptr<GpuThunk>> failed = CreateHostFallbackThunk(neg, "why", failing);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("n (negate): no GPU implementation (why), and the host code generator "
                                           "cannot compile it either: n: not on this host"),
            std::string::npos)
      << failed.status().message();
}

}  // namespace
}  // namespace passlab
