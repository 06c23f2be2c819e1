// The CUDA host fallback's last resort without a GPU: MakeHostKernelFactory
// compiles single instructions (in non-default layouts, with called
// computations) for the host, and each kernel, run on host buffers as the
// fallback thunk runs it between its copies, matches the evaluator.
#include "core/backends/cpu/host_kernel_factory.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/text/hlo_parser.h"
#include "test/instruction_evaluator.h"

namespace passlab {
namespace {

constexpr char kModule[] = R"(HloModule m
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT m = f32[] maximum(x, y)
}
fused {
  p0 = f32[5,7]{0,1} parameter(0)
  p1 = f32[5,7] parameter(1)
  e = f32[5,7]{0,1} exponential(p0)
  ROOT m = f32[5,7] multiply(e, p1)
}
ENTRY e {
  a = f32[5,7]{0,1} parameter(0)
  b = f32[5,7] parameter(1)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  sum = f32[5,7] add(a, b)
  t = f32[7,5]{0,1} transpose(sum), dimensions={1,0}
  r = f32[7] reduce(a, zero), dimensions={0}, to_apply=add_f32
  w = f32[3,3] reduce-window(b, ninf), window={size=3x3 stride=1x2}, to_apply=max_f32
  p = f32[7,16] pad(a, zero), padding=1_1x1_2_1
  f = f32[5,7] fusion(a, b), kind=kLoop, calls=fused
  ROOT out = (f32[7,5]{0,1}, f32[7], f32[3,3], f32[7,16], f32[5,7]) tuple(t, r, w, p, f)
}
)";

struct HostBuffers {
  std::vector<std::vector<uint64_t>> storage;
  std::vector<void*> ptrs;
  void* Add(const Shape& s) {
    storage.emplace_back(BufferBytes(s) / 8 + 1, 0);
    ptrs.push_back(storage.back().data());
    return ptrs.back();
  }
};

TEST(HostKernelFactoryTest, CompiledInstructionsMatchTheEvaluatorOnHostBuffers) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HostKernelFactory factory = MakeHostKernelFactory(CpuCompileOptions{});
  int compared = 0;
  uint64_t seed = 1;
  for (const HloInstruction* inst : (*m)->entry_computation()->instructions()) {
    HloOpcode op = inst->opcode();
    if (op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kTuple) continue;
    SCOPED_TRACE(inst->name());
    absl::StatusOr<std::unique_ptr<CompiledKernel>> kernel = factory(*inst);
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(*inst);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    HostBuffers ran, oracle;
    for (const HloInstruction* operand : inst->operands()) {
      const Shape& s = operand->shape();
      Literal l(Shape::Array(s.element_type(), s.dimensions()));
      for (int64_t i = 0; i < l.element_count(); ++i) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        l.SetDouble(i, static_cast<double>((seed >> 33) % 2001) / 1000.0 - 1.0);
      }
      ASSERT_TRUE(CopyLiteralToBuffer(l, s, ran.Add(s)).ok());
      ASSERT_TRUE(CopyLiteralToBuffer(l, s, oracle.Add(s)).ok());
    }
    std::vector<Shape> leaves = LeafShapes(inst->shape());
    for (const Shape& s : leaves) {
      ran.Add(s);
      oracle.Add(s);
    }
    (*kernel)->Run(ran.ptrs);
    ASSERT_TRUE((*ev)->Run(oracle.ptrs).ok());
    for (size_t i = 0; i < leaves.size(); ++i) {
      size_t at = inst->operand_count() + i;
      absl::StatusOr<Literal> got = LiteralFromBuffer(leaves[i], ran.ptrs[at]);
      absl::StatusOr<Literal> want = LiteralFromBuffer(leaves[i], oracle.ptrs[at]);
      ASSERT_TRUE(got.ok() && want.ok());
      for (int64_t e = 0; e < want->element_count(); ++e) {
        ASSERT_NEAR(got->GetDouble(e), want->GetDouble(e), 1e-5 * (1 + std::abs(want->GetDouble(e))))
            << "element " << e;
      }
    }
    ++compared;
  }
  EXPECT_EQ(compared, 6);
}

TEST(HostKernelFactoryTest, WhatTheHostCannotCompileNamesTheInstruction) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HostKernelFactory factory = MakeHostKernelFactory(CpuCompileOptions{});
  absl::StatusOr<std::unique_ptr<CompiledKernel>> k = factory(*(*m)->entry_computation()->root_instruction());
  ASSERT_FALSE(k.ok());
  EXPECT_TRUE(absl::IsUnimplemented(k.status()));
  EXPECT_NE(k.status().message().find("host kernel for out"), std::string::npos) << k.status().message();
}

}  // namespace
}  // namespace passlab
