// TEST-ONLY: one HLO instruction run on host buffers (the runtime's buffer
// convention, core/codegen/compiled_kernel.h) through the reference
// evaluator (core/eval). Tests use it as the oracle for the runtime's own
// kernels and as a stand-in "compiled kernel". The runtime itself never
// runs the evaluator. Values cross between buffers (layouts) and literals
// (row-major) on every run.
#ifndef PASSLAB_TEST_INSTRUCTION_EVALUATOR_H_
#define PASSLAB_TEST_INSTRUCTION_EVALUATOR_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/codegen/compiled_kernel.h"
#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal_util.h"
#include "core/ir/shape.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab {

class InstructionEvaluator {
 public:
  // A computation holding parameters and a copy of `inst` (its called
  // computations are shared with the original module, which must outlive
  // this object).
  static absl::StatusOr<std::unique_ptr<InstructionEvaluator>> Create(const HloInstruction& inst) {
    std::unique_ptr<InstructionEvaluator> ev(new InstructionEvaluator());
    ev->computation_ = std::make_unique<HloComputation>(StrCat(inst.name(), ".reference"));
    std::vector<HloInstruction*> params;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const Shape& s = inst.operand(i)->shape();
      if (!s.IsArray()) {
        return absl::UnimplementedError(StrCat(inst.name(), ": operand ", i, " is not an array (", s.ToString(), ")"));
      }
      RETURN_IF_ERROR(CheckPlainLayout(s));
      ev->operand_shapes_.push_back(s);
      params.push_back(ev->computation_->AddParameter(HloInstruction::CreateParameter(i, s, StrCat("p", i))));
    }
    ev->result_leaves_ = LeafShapes(inst.shape());
    for (const Shape& s : ev->result_leaves_) RETURN_IF_ERROR(CheckPlainLayout(s));
    HloInstruction* copy = ev->computation_->AddInstruction(inst.CloneWithNewOperands(inst.shape(), params));
    ev->computation_->set_root_instruction(copy);
    return ev;
  }

  absl::Status Run(absl::Span<void* const> buffers) const {
    size_t expected = operand_shapes_.size() + result_leaves_.size();
    if (buffers.size() != expected) {
      return absl::InvalidArgumentError(
          StrCat(computation_->name(), ": expected ", expected, " buffers, got ", buffers.size()));
    }
    std::vector<Literal> args;
    args.reserve(operand_shapes_.size());
    for (size_t i = 0; i < operand_shapes_.size(); ++i) {
      ASSIGN_OR_RETURN(Literal l, LiteralFromBuffer(operand_shapes_[i], buffers[i]));
      args.push_back(std::move(l));
    }
    std::vector<const Literal*> ptrs;
    for (const Literal& l : args) ptrs.push_back(&l);
    ASSIGN_OR_RETURN(Literal result, HloEvaluator().EvaluateComputation(*computation_, ptrs));
    std::vector<const Literal*> leaves;
    FlattenLeaves(result, leaves);
    if (leaves.size() != result_leaves_.size()) return absl::InternalError("result leaves do not match the shape");
    for (size_t i = 0; i < leaves.size(); ++i) {
      void* buffer = buffers[operand_shapes_.size() + i];
      if (buffer == nullptr || result_leaves_[i].element_count() == 0) continue;
      RETURN_IF_ERROR(CopyLiteralToBuffer(*leaves[i], result_leaves_[i], buffer));
    }
    return absl::OkStatus();
  }

  // Leaves of the operands (one per operand; operands must be arrays) and of
  // the result, in buffer order.
  const std::vector<Shape>& operand_shapes() const { return operand_shapes_; }
  const std::vector<Shape>& result_leaves() const { return result_leaves_; }

 private:
  InstructionEvaluator() = default;
  std::unique_ptr<HloComputation> computation_;
  std::vector<Shape> operand_shapes_;
  std::vector<Shape> result_leaves_;
};

// A "compiled kernel" that evaluates its instruction: a kernel provider for
// runtimes under test without the code generator (and without LLVM in the
// test binary). A failed evaluation fails the running test.
class EvaluatingKernel : public CompiledKernel {
 public:
  EvaluatingKernel(const HloInstruction& inst, std::unique_ptr<InstructionEvaluator> ev)
      : name_(inst.name()), evaluator_(std::move(ev)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    absl::Status s = evaluator_->Run(buffers);
    if (!s.ok()) ADD_FAILURE() << name_ << ": " << s.message();
  }

 private:
  std::string name_;
  std::unique_ptr<InstructionEvaluator> evaluator_;
};

inline std::function<absl::StatusOr<std::unique_ptr<CompiledKernel>>(const HloInstruction&)> EvaluatingKernels() {
  return [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    ASSIGN_OR_RETURN(std::unique_ptr<InstructionEvaluator> ev, InstructionEvaluator::Create(inst));
    return std::unique_ptr<CompiledKernel>(new EvaluatingKernel(inst, std::move(ev)));
  };
}

}  // namespace passlab

#endif  // PASSLAB_TEST_INSTRUCTION_EVALUATOR_H_
