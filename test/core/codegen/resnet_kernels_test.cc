// Every instruction of the (unoptimized, unfused) ResNet-18 training step
// compiled as a single-op kernel and run in program order — convolutions as
// direct loop nests, batch norm without the expander, dots as loop nests —
// gives the evaluator's result. A stand-in for the runtime, which is not on
// this branch: tuples and get-tuple-element are resolved here.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

#include "core/ir/hlo_computation.h"
#include "test/core/codegen/codegen_test_util.h"

namespace passlab {
namespace {

absl::StatusOr<Literal> RunOp(const HloInstruction& h, const std::vector<const Literal*>& operands,
                              CpuKernelCompiler& compiler, double& compile_seconds) {
  auto compile_start = std::chrono::steady_clock::now();
  auto kernel = compiler.Compile(h);
  compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - compile_start).count();
  if (!kernel.ok()) return kernel.status();
  std::vector<std::vector<uint8_t>> storage;
  for (int64_t i = 0; i < h.operand_count(); ++i) {
    storage.push_back(testing::ToPhysical(*operands[i], h.operand(i)->shape()));
  }
  std::vector<Shape> outs;
  testing::FlattenShape(h.shape(), outs);
  for (const Shape& s : outs) {
    storage.emplace_back(std::max<int64_t>(1, s.element_count() * PrimitiveByteWidth(s.element_type())), 0);
  }
  std::vector<void*> ptrs;
  for (auto& s : storage) ptrs.push_back(s.data());
  (*kernel)->Run(ptrs);
  std::vector<Literal> leaves;
  for (size_t i = 0; i < outs.size(); ++i) {
    leaves.push_back(testing::FromPhysical(storage[h.operand_count() + i], outs[i]));
  }
  if (!h.shape().IsTuple()) return std::move(leaves[0]);
  return Literal::Tuple(std::move(leaves));
}

TEST(ResNetKernelsTest, TrainingStepFromSingleOpKernelsMatchesEvaluator) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/eval_fixtures/resnet18_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloComputation& entry = *(*module)->entry_computation();
  std::vector<Literal> args = MakeRandomArguments(entry, 7);
  auto expected = HloEvaluator().Evaluate(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status().message();

  CpuKernelCompiler compiler;
  int64_t misses = CpuKernelCompiler::CacheMisses();
  std::map<const HloInstruction*, Literal> values;
  int kernels = 0;
  double compile_seconds = 0;
  auto start = std::chrono::steady_clock::now();
  for (const HloInstruction* h : entry.MakeInstructionPostOrder()) {
    std::vector<const Literal*> operands;
    for (const HloInstruction* o : h->operands()) operands.push_back(&values.at(o));
    // What the runtime resolves without kernels.
    if (h->opcode() == HloOpcode::kParameter) {
      values.emplace(h, args[h->parameter_number()]);
      continue;
    }
    if (h->opcode() == HloOpcode::kConstant) {
      values.emplace(h, h->literal());
      continue;
    }
    if (h->opcode() == HloOpcode::kTuple) {
      std::vector<Literal> elements;
      for (const Literal* l : operands) elements.push_back(*l);
      values.emplace(h, Literal::Tuple(std::move(elements)));
      continue;
    }
    if (h->opcode() == HloOpcode::kGetTupleElement) {
      values.emplace(h, operands[0]->tuple_elements()[h->tuple_index()]);
      continue;
    }
    ASSERT_TRUE(CpuKernelCompiler::CanCompile(*h)) << CpuKernelCompiler::CheckCompilable(*h).message();
    absl::StatusOr<Literal> r = RunOp(*h, operands, compiler, compile_seconds);
    ASSERT_TRUE(r.ok()) << h->name() << ": " << r.status().message();
    values.emplace(h, std::move(*r));
    ++kernels;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "ResNet-18 step: " << kernels << " kernels, " << CpuKernelCompiler::CacheMisses() - misses
            << " compiled (rest cached), " << seconds << " s in all, " << compile_seconds << " s compiling\n";
  const Literal& actual = values.at(entry.root_instruction());
  std::vector<const Literal*> want, got;
  testing::FlattenLiteral(*expected, want);
  testing::FlattenLiteral(actual, got);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    absl::Status s = CompareLiterals(*want[i], *got[i], {1e-3, 1e-3, 0});
    EXPECT_TRUE(s.ok()) << "output " << i << ": " << s.message();
  }
}

}  // namespace
}  // namespace passlab
