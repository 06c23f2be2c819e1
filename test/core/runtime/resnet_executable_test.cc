// The executable on a real training graph: one SGD step of ResNet-18
// (test/eval_fixtures/resnet18_train_step.hlo; batch 2, 32x32) with every
// convolution on oneDNN (or the reference where oneDNN has no form for it)
// and every dot on OpenBLAS, the rest through TEST-ONLY evaluator kernels.
// Its outputs (loss and updated weights) must match the evaluator's on the
// original module: a wrong liveness or aliasing decision in buffer
// assignment over ~700 instructions would corrupt them.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/random_inputs.h"
#include "core/backends/cpu/executable.h"
#include "test/instruction_evaluator.h"
#include "core/text/hlo_parser.h"
#include "test/core/runtime/test_rewrite.h"

namespace passlab {
namespace {

// TEST-ONLY kernel: the evaluator on the instruction's buffers.
class EvaluatorKernel : public CompiledKernel {
 public:
  EvaluatorKernel(const HloInstruction& inst, std::unique_ptr<InstructionEvaluator> ev)
      : name_(inst.name()), evaluator_(std::move(ev)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    absl::Status s = evaluator_->Run(buffers);
    EXPECT_TRUE(s.ok()) << name_ << ": " << s.message();
  }

 private:
  std::string name_;
  std::unique_ptr<InstructionEvaluator> evaluator_;
};

TEST(ResNetExecutableTest, TrainingStepMatchesTheEvaluator) {
  std::ifstream in(std::string(PASSLAB_SOURCE_DIR) + "/test/eval_fixtures/resnet18_train_step.hlo");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> original = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  ASSERT_TRUE(original.ok()) << original.status().message();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str(), "resnet18_train_step.hlo");
  ASSERT_TRUE(module.ok());
  absl::StatusOr<int> rewritten = testing_only::RewriteToLibraryCalls(*(*module)->entry_computation());
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().message();
  EXPECT_EQ(*rewritten, 63);  // 60 convolutions, 3 dots

  std::vector<Literal> args = MakeRandomArguments(*(*original)->entry_computation(), 7);
  auto t0 = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**original, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto t1 = std::chrono::steady_clock::now();

  KernelProvider kernels = [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(inst);
    if (!ev.ok()) return ev.status();
    return std::unique_ptr<CompiledKernel>(new EvaluatorKernel(inst, std::move(*ev)));
  };
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**module, kernels);
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  std::vector<KernelRecord> records;
  auto t2 = std::chrono::steady_clock::now();
  absl::StatusOr<Literal> got = (*exe)->Run(args, &records);
  auto t3 = std::chrono::steady_clock::now();
  ASSERT_TRUE(got.ok()) << got.status().message();
  absl::Status same = CompareLiterals(*want, *got, {.abs = 1e-4, .rel = 1e-3});
  EXPECT_TRUE(same.ok()) << same.message();

  int64_t library_ns = 0, library = 0, on_dnn = 0;
  for (const KernelRecord& r : records) {
    if (r.kind != KernelKind::kLibraryCall) continue;
    ++library;
    library_ns += r.duration_ns();
    on_dnn += r.detail.find("/reference") == std::string::npos;
  }
  EXPECT_EQ(library, 63);
  EXPECT_GT(on_dnn, 30);
  const BufferAssignment& ba = (*exe)->buffer_assignment();
  EXPECT_LT(ba.arena_bytes(), ba.total_bytes());
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("ResNet-18 step: evaluator %.0f ms; executable %.0f ms (library calls %.1f ms, %lld of 63 on "
              "oneDNN/OpenBLAS); %s",
              ms(t0, t1), ms(t2, t3), library_ns / 1e6, static_cast<long long>(on_dnn),
              ba.ToString().substr(0, ba.ToString().find('\n') + 1).c_str());
}

}  // namespace
}  // namespace passlab
