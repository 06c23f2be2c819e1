#include "core/eval/hlo_evaluator.h"

#include <algorithm>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "core/eval/eval_internal.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using eval::Operands;

// Walks computations in post order, keeping each value only until its last
// user ran, and hands every instruction to its op family's handler.
class Interpreter : public eval::EvalContext {
 public:
  explicit Interpreter(const EvaluatorOptions& options, eval::CollectiveParticipant* participant = nullptr)
      : options_(options), participant_(participant), rng_state_{options.rng_seed, 0} {}

  absl::StatusOr<Literal> Call(const HloComputation& c, Operands args) override { return Run(c, args); }
  const EvaluatorOptions& options() const override { return options_; }
  uint64_t NextRngCounter() override { return rng_counter_++; }
  std::array<uint64_t, 2>& RngState() override { return rng_state_; }
  eval::CollectiveParticipant* participant() override { return participant_; }

  absl::StatusOr<Literal> Run(const HloComputation& c, Operands args) {
    if (static_cast<int64_t>(args.size()) != c.num_parameters()) {
      return absl::InvalidArgumentError(StrCat("computation '", c.name(), "' takes ", c.num_parameters(),
                                               " arguments, got ", args.size()));
    }
    std::vector<HloInstruction*> order = c.MakeInstructionPostOrder();
    // Remaining uses of each value inside this computation; values die at 0.
    absl::flat_hash_map<const HloInstruction*, int64_t> uses;
    for (const HloInstruction* inst : order) {
      for (const HloInstruction* operand : inst->operands()) ++uses[operand];
    }
    ++uses[c.root_instruction()];
    // Parameters are read in place; computed values are owned here.
    absl::flat_hash_map<const HloInstruction*, const Literal*> values;
    absl::flat_hash_map<const HloInstruction*, std::unique_ptr<Literal>> owned;
    std::vector<const Literal*> ops;
    for (const HloInstruction* inst : order) {
      if (inst->opcode() == HloOpcode::kParameter) {
        values[inst] = args[inst->parameter_number()];
        continue;
      }
      ops.clear();
      for (const HloInstruction* operand : inst->operands()) ops.push_back(values.at(operand));
      absl::StatusOr<Literal> v = Dispatch(*inst, ops);
      if (!v.ok()) {
        std::string msg(v.status().message());
        if (msg.rfind("evaluating '", 0) == 0) return v.status();
        return absl::Status(v.status().code(), StrCat("evaluating '", inst->name(), "' (", HloOpcodeString(inst->opcode()),
                                                      ") in '", c.name(), "': ", msg));
      }
      if (uses[inst] > 0) {  // dead instructions run (as in XLA) but are not kept
        auto& slot = owned[inst];
        slot = std::make_unique<Literal>(std::move(*v));
        values[inst] = slot.get();
      }
      for (const HloInstruction* operand : inst->operands()) {
        auto it = uses.find(operand);
        if (--it->second == 0) {
          values.erase(operand);
          owned.erase(operand);
        }
      }
    }
    auto root = owned.find(c.root_instruction());
    if (root != owned.end()) return std::move(*root->second);
    return *values.at(c.root_instruction());
  }

 private:
  absl::StatusOr<Literal> Dispatch(const HloInstruction& inst, Operands ops) {
    switch (inst.opcode()) {
      case HloOpcode::kConstant:
        if (inst.literal().elided()) return absl::FailedPreconditionError("the constant's values were elided ({...})");
        return inst.literal();
      case HloOpcode::kParameter:
        return absl::InternalError("parameters are bound by the caller");

      // Elementwise (eval_elementwise.cc).
      case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin: case HloOpcode::kAsinh:
      case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh: case HloOpcode::kMulhi:
      case HloOpcode::kAbs: case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
      case HloOpcode::kBitcastConvert: case HloOpcode::kCbrt: case HloOpcode::kCeil: case HloOpcode::kClamp:
      case HloOpcode::kClz: case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kConvert:
      case HloOpcode::kCos: case HloOpcode::kDivide: case HloOpcode::kErf: case HloOpcode::kExp:
      case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kImag: case HloOpcode::kIota:
      case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p: case HloOpcode::kLogistic:
      case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply: case HloOpcode::kNegate:
      case HloOpcode::kNot: case HloOpcode::kOr: case HloOpcode::kPopulationCount: case HloOpcode::kPower:
      case HloOpcode::kReal: case HloOpcode::kReducePrecision: case HloOpcode::kRemainder:
      case HloOpcode::kRoundNearestAfz: case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt:
      case HloOpcode::kSelect: case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
      case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin: case HloOpcode::kSqrt:
      case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract: case HloOpcode::kTan: case HloOpcode::kTanh:
      case HloOpcode::kXor:
        return eval::EvalElementwise(inst, ops);

      // Data movement (eval_data_movement.cc).
      case HloOpcode::kBitcast: case HloOpcode::kBroadcast: case HloOpcode::kConcatenate: case HloOpcode::kCopy:
      case HloOpcode::kDynamicReshape: case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice:
      case HloOpcode::kGather: case HloOpcode::kPad: case HloOpcode::kReshape: case HloOpcode::kReverse:
      case HloOpcode::kSlice: case HloOpcode::kTranspose: case HloOpcode::kGetDimensionSize:
      case HloOpcode::kSetDimensionSize:
        return eval::EvalDataMovement(inst, ops);
      case HloOpcode::kScatter:
        return eval::EvalScatter(inst, ops, *this);
      case HloOpcode::kSort:
        return eval::EvalSort(inst, ops, *this);
      case HloOpcode::kTopK:
        return eval::EvalTopK(inst, ops);

      // Reductions and windows (eval_reduce.cc).
      case HloOpcode::kReduce:
        return eval::EvalReduce(inst, ops, *this);
      case HloOpcode::kReduceWindow:
        return eval::EvalReduceWindow(inst, ops, *this);
      case HloOpcode::kSelectAndScatter:
        return eval::EvalSelectAndScatter(inst, ops, *this);
      case HloOpcode::kBatchNormGrad: case HloOpcode::kBatchNormInference: case HloOpcode::kBatchNormTraining:
        return eval::EvalBatchNorm(inst, ops);

      // Contractions (eval_conv_dot.cc).
      case HloOpcode::kDot:
        return eval::EvalDot(inst, ops, options_.num_threads);
      case HloOpcode::kConvolution:
        return eval::EvalConvolution(inst, ops, options_.num_threads);
      case HloOpcode::kRaggedDot:
        return eval::EvalRaggedDot(inst, ops);
      case HloOpcode::kScaledDot:
        return eval::EvalScaledDot(inst, ops, options_.num_threads);
      case HloOpcode::kScan:
        return eval::EvalScan(inst, ops, *this);

      // Random numbers (eval_rng.cc).
      case HloOpcode::kRng: case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
        return eval::EvalRng(inst, ops, *this);

      // Linear algebra and FFT (eval_linalg.cc).
      case HloOpcode::kCholesky: case HloOpcode::kFft: case HloOpcode::kTriangularSolve:
        return eval::EvalLinearAlgebra(inst, ops);

      // Control flow, tuples, async wrappers (eval_control.cc).
      case HloOpcode::kAddDependency: case HloOpcode::kAfterAll: case HloOpcode::kAsyncDone:
      case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kCall:
      case HloOpcode::kConditional: case HloOpcode::kCopyDone: case HloOpcode::kCopyStart:
      case HloOpcode::kDomain: case HloOpcode::kFusion: case HloOpcode::kGetTupleElement: case HloOpcode::kMap:
      case HloOpcode::kOptimizationBarrier: case HloOpcode::kTuple: case HloOpcode::kWhile:
        return eval::EvalControl(inst, ops, *this);
      case HloOpcode::kCustomCall:
        return eval::EvalCustomCall(inst, ops, *this);

      // Collectives on one replica (eval_control.cc).
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherDone: case HloOpcode::kAllGatherStart:
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceDone: case HloOpcode::kAllReduceStart:
      case HloOpcode::kAllToAll: case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kCollectivePermuteStart:
      case HloOpcode::kPartitionId: case HloOpcode::kRaggedAllToAll: case HloOpcode::kReduceScatter:
      case HloOpcode::kReplicaId:
        return eval::EvalCollective(inst, ops, *this);

      // The outside world.
      case HloOpcode::kInfeed: case HloOpcode::kOutfeed: case HloOpcode::kRecv: case HloOpcode::kRecvDone:
      case HloOpcode::kSend: case HloOpcode::kSendDone:
        return absl::UnimplementedError(
            "needs the outside world: infeed, outfeed, send and recv are not evaluated");
    }
    return absl::InternalError("unknown opcode");
  }

  EvaluatorOptions options_;
  eval::CollectiveParticipant* participant_;
  uint64_t rng_counter_ = 0;
  std::array<uint64_t, 2> rng_state_;
};

}  // namespace

namespace eval {

absl::StatusOr<Literal> EvaluateAsParticipant(const HloComputation& computation, Operands args,
                                              const EvaluatorOptions& options, CollectiveParticipant* participant) {
  Interpreter interpreter(options, participant);
  return interpreter.Run(computation, args);
}

}  // namespace eval

absl::StatusOr<Literal> HloEvaluator::Evaluate(const HloModule& module, absl::Span<const Literal> args) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (static_cast<int64_t>(args.size()) != entry->num_parameters()) {
    return absl::InvalidArgumentError(StrCat("the entry computation takes ", entry->num_parameters(),
                                             " arguments, got ", args.size()));
  }
  std::vector<const Literal*> ptrs;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    if (!args[i].shape().Compatible(p->shape())) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " ('", p->name(), "') is ",
                                               args[i].shape().ToString(false), " but the parameter is ",
                                               p->shape().ToString(false)));
    }
    ptrs.push_back(&args[i]);
  }
  return EvaluateComputation(*entry, ptrs);
}

absl::StatusOr<Literal> HloEvaluator::EvaluateComputation(const HloComputation& computation,
                                                          absl::Span<const Literal* const> args) {
  Interpreter interpreter(options_);
  return interpreter.Run(computation, args);
}

}  // namespace passlab
