#include "core/runtime/instruction_evaluator.h"

#include "core/eval/hlo_evaluator.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<InstructionEvaluator>> InstructionEvaluator::Create(const HloInstruction& inst) {
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
  for (const Shape& s : ev->result_leaves_) {
    RETURN_IF_ERROR(CheckPlainLayout(s));
  }
  HloInstruction* copy = ev->computation_->AddInstruction(inst.CloneWithNewOperands(inst.shape(), params));
  ev->computation_->set_root_instruction(copy);
  return ev;
}

absl::Status InstructionEvaluator::Run(absl::Span<void* const> buffers) const {
  size_t expected = operand_shapes_.size() + result_leaves_.size();
  if (buffers.size() != expected) {
    return absl::InvalidArgumentError(StrCat(computation_->name(), ": expected ", expected, " buffers, got ",
                                             buffers.size()));
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

}  // namespace passlab
