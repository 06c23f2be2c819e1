// HloOpcode: every XLA HLO opcode, generated from one X-macro list so that a
// new opcode is a compile error in every exhaustive switch.
#ifndef PASSLAB_CORE_IR_HLO_OPCODE_H_
#define PASSLAB_CORE_IR_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace passlab {

// X(enumerator, CamelCase name for handlers, text name, operand count or kVariadic)
#define PASSLAB_HLO_OPCODES(X)                                  \
  X(kAbs, Abs, "abs", 1)                                             \
  X(kAcos, Acos, "acos", 1)                                                   \
  X(kAcosh, Acosh, "acosh", 1)                                                \
  X(kAdd, Add, "add", 2)                                             \
  X(kAddDependency, AddDependency, "add-dependency", 2)                        \
  X(kAfterAll, AfterAll, "after-all", kVariadic)                          \
  X(kAllGather, AllGather, "all-gather", kVariadic)                        \
  X(kAllGatherDone, AllGatherDone, "all-gather-done", 1)                       \
  X(kAllGatherStart, AllGatherStart, "all-gather-start", kVariadic)             \
  X(kAllReduce, AllReduce, "all-reduce", kVariadic)                        \
  X(kAllReduceDone, AllReduceDone, "all-reduce-done", 1)                       \
  X(kAllReduceStart, AllReduceStart, "all-reduce-start", kVariadic)             \
  X(kAllToAll, AllToAll, "all-to-all", kVariadic)                         \
  X(kAnd, And, "and", 2)                                             \
  X(kAsyncDone, AsyncDone, "async-done", 1)                                \
  X(kAsyncStart, AsyncStart, "async-start", kVariadic)                      \
  X(kAsyncUpdate, AsyncUpdate, "async-update", kVariadic)                            \
  X(kAsin, Asin, "asin", 1)                                                   \
  X(kAsinh, Asinh, "asinh", 1)                                                \
  X(kAtan2, Atan2, "atan2", 2)                                         \
  X(kAtanh, Atanh, "atanh", 1)                                                \
  X(kBatchNormGrad, BatchNormGrad, "batch-norm-grad", 5)                       \
  X(kBatchNormInference, BatchNormInference, "batch-norm-inference", 5)             \
  X(kBatchNormTraining, BatchNormTraining, "batch-norm-training", 3)               \
  X(kBitcast, Bitcast, "bitcast", 1)                                     \
  X(kBitcastConvert, BitcastConvert, "bitcast-convert", 1)                      \
  X(kBroadcast, Broadcast, "broadcast", 1)                                 \
  X(kCall, Call, "call", kVariadic)                                   \
  X(kCbrt, Cbrt, "cbrt", 1)                                           \
  X(kCeil, Ceil, "ceil", 1)                                           \
  X(kCholesky, Cholesky, "cholesky", 1)                                   \
  X(kClamp, Clamp, "clamp", 3)                                         \
  X(kClz, Clz, "count-leading-zeros", 1)                             \
  X(kCollectiveBroadcast, CollectiveBroadcast, "collective-broadcast", kVariadic)    \
  X(kCollectivePermute, CollectivePermute, "collective-permute", kVariadic)        \
  X(kCollectivePermuteDone, CollectivePermuteDone, "collective-permute-done", 1)       \
  X(kCollectivePermuteStart, CollectivePermuteStart, "collective-permute-start", kVariadic) \
  X(kCompare, Compare, "compare", 2)                                     \
  X(kComplex, Complex, "complex", 2)                                     \
  X(kConcatenate, Concatenate, "concatenate", kVariadic)                     \
  X(kConditional, Conditional, "conditional", kVariadic)                     \
  X(kConstant, Constant, "constant", 0)                                   \
  X(kConvert, Convert, "convert", 1)                                     \
  X(kConvolution, Convolution, "convolution", 2)                             \
  X(kCopy, Copy, "copy", 1)                                           \
  X(kCopyDone, CopyDone, "copy-done", 1)                                  \
  X(kCopyStart, CopyStart, "copy-start", 1)                                \
  X(kCos, Cos, "cosine", 1)                                          \
  X(kCosh, Cosh, "cosh", 1)                                                   \
  X(kCustomCall, CustomCall, "custom-call", kVariadic)                      \
  X(kDivide, Divide, "divide", 2)                                       \
  X(kDomain, Domain, "domain", 1)                                       \
  X(kDot, Dot, "dot", kVariadic)                                     \
  X(kDynamicReshape, DynamicReshape, "dynamic-reshape", kVariadic)              \
  X(kDynamicSlice, DynamicSlice, "dynamic-slice", kVariadic)                  \
  X(kDynamicUpdateSlice, DynamicUpdateSlice, "dynamic-update-slice", kVariadic)     \
  X(kErf, Erf, "erf", 1)                                             \
  X(kExp, Exp, "exponential", 1)                                     \
  X(kExpm1, Expm1, "exponential-minus-one", 1)                         \
  X(kFft, Fft, "fft", 1)                                             \
  X(kFloor, Floor, "floor", 1)                                         \
  X(kFusion, Fusion, "fusion", kVariadic)                               \
  X(kGather, Gather, "gather", 2)                                       \
  X(kGetDimensionSize, GetDimensionSize, "get-dimension-size", 1)                 \
  X(kGetTupleElement, GetTupleElement, "get-tuple-element", 1)                   \
  X(kImag, Imag, "imag", 1)                                           \
  X(kInfeed, Infeed, "infeed", 1)                                       \
  X(kIota, Iota, "iota", 0)                                           \
  X(kIsFinite, IsFinite, "is-finite", 1)                                  \
  X(kLog, Log, "log", 1)                                             \
  X(kLog1p, Log1p, "log-plus-one", 1)                                  \
  X(kLogistic, Logistic, "logistic", 1)                                   \
  X(kMap, Map, "map", kVariadic)                                     \
  X(kMaximum, Maximum, "maximum", 2)                                     \
  X(kMinimum, Minimum, "minimum", 2)                                     \
  X(kMulhi, Mulhi, "mulhi", 2)                                                \
  X(kMultiply, Multiply, "multiply", 2)                                   \
  X(kNegate, Negate, "negate", 1)                                       \
  X(kNot, Not, "not", 1)                                             \
  X(kOptimizationBarrier, OptimizationBarrier, "opt-barrier", 1)                     \
  X(kOr, Or, "or", 2)                                               \
  X(kOutfeed, Outfeed, "outfeed", 2)                                     \
  X(kPad, Pad, "pad", 2)                                             \
  X(kParameter, Parameter, "parameter", 0)                                 \
  X(kPartitionId, PartitionId, "partition-id", 0)                            \
  X(kPopulationCount, PopulationCount, "popcnt", 1)                              \
  X(kPower, Power, "power", 2)                                         \
  X(kRaggedDot, RaggedDot, "ragged-dot", 3)                                   \
  X(kRaggedAllToAll, RaggedAllToAll, "ragged-all-to-all", kVariadic)            \
  X(kReal, Real, "real", 1)                                           \
  X(kRecv, Recv, "recv", 1)                                           \
  X(kRecvDone, RecvDone, "recv-done", 1)                                  \
  X(kReduce, Reduce, "reduce", kVariadic)                               \
  X(kReducePrecision, ReducePrecision, "reduce-precision", 1)                    \
  X(kReduceScatter, ReduceScatter, "reduce-scatter", kVariadic)                \
  X(kReduceWindow, ReduceWindow, "reduce-window", kVariadic)                  \
  X(kRemainder, Remainder, "remainder", 2)                                 \
  X(kReplicaId, ReplicaId, "replica-id", 0)                                \
  X(kReshape, Reshape, "reshape", 1)                                     \
  X(kReverse, Reverse, "reverse", 1)                                     \
  X(kRng, Rng, "rng", kVariadic)                                     \
  X(kRngBitGenerator, RngBitGenerator, "rng-bit-generator", 1)                   \
  X(kRngGetAndUpdateState, RngGetAndUpdateState, "rng-get-and-update-state", 0)       \
  X(kRoundNearestAfz, RoundNearestAfz, "round-nearest-afz", 1)                   \
  X(kRoundNearestEven, RoundNearestEven, "round-nearest-even", 1)                 \
  X(kRsqrt, Rsqrt, "rsqrt", 1)                                         \
  X(kScaledDot, ScaledDot, "scaled-dot", 4)                                   \
  X(kScan, Scan, "scan", kVariadic)                                           \
  X(kScatter, Scatter, "scatter", kVariadic)                             \
  X(kSelect, Select, "select", 3)                                       \
  X(kSelectAndScatter, SelectAndScatter, "select-and-scatter", 3)                 \
  X(kSend, Send, "send", 2)                                           \
  X(kSendDone, SendDone, "send-done", 1)                                  \
  X(kSetDimensionSize, SetDimensionSize, "set-dimension-size", 2)                 \
  X(kShiftLeft, ShiftLeft, "shift-left", 2)                                \
  X(kShiftRightArithmetic, ShiftRightArithmetic, "shift-right-arithmetic", 2)         \
  X(kShiftRightLogical, ShiftRightLogical, "shift-right-logical", 2)               \
  X(kSign, Sign, "sign", 1)                                           \
  X(kSin, Sin, "sine", 1)                                            \
  X(kSinh, Sinh, "sinh", 1)                                                   \
  X(kSlice, Slice, "slice", 1)                                         \
  X(kSort, Sort, "sort", kVariadic)                                   \
  X(kSqrt, Sqrt, "sqrt", 1)                                           \
  X(kStochasticConvert, StochasticConvert, "stochastic-convert", 2)                \
  X(kSubtract, Subtract, "subtract", 2)                                   \
  X(kTan, Tan, "tan", 1)                                             \
  X(kTanh, Tanh, "tanh", 1)                                           \
  X(kTopK, TopK, "topk", 1)                                           \
  X(kTranspose, Transpose, "transpose", 1)                                 \
  X(kTriangularSolve, TriangularSolve, "triangular-solve", 2)                    \
  X(kTuple, Tuple, "tuple", kVariadic)                                 \
  X(kWhile, While, "while", 1)                                         \
  X(kXor, Xor, "xor", 2)

inline constexpr int kVariadic = -1;

enum class HloOpcode : uint8_t {
#define PASSLAB_OPCODE_ENUM(e, camel, name, arity) e,
  PASSLAB_HLO_OPCODES(PASSLAB_OPCODE_ENUM)
#undef PASSLAB_OPCODE_ENUM
};

inline constexpr int kHloOpcodeCount = 0
#define PASSLAB_OPCODE_COUNT(e, camel, name, arity) +1
    PASSLAB_HLO_OPCODES(PASSLAB_OPCODE_COUNT)
#undef PASSLAB_OPCODE_COUNT
    ;

std::string_view HloOpcodeString(HloOpcode opcode);
std::optional<HloOpcode> StringToHloOpcode(std::string_view name);
// Fixed operand count, or kVariadic.
int HloOpcodeArity(HloOpcode opcode);

bool IsElementwiseUnary(HloOpcode opcode);   // abs, exp, convert, ...
bool IsElementwiseBinary(HloOpcode opcode);  // add, compare, shift, ...
// Elementwise by definition: unary, binary, clamp, select, map.
bool IsElementwiseOpcode(HloOpcode opcode);
bool IsCollectiveOpcode(HloOpcode opcode);
// Opcodes that have dedicated -start/-done opcodes; the generic async-start may
// not wrap them (seed 001).
bool HasOwnAsyncOpcodes(HloOpcode opcode);
// Opcodes whose result depends on more than their operands' values (side
// effects, randomness, communication); DCE/CSE must keep them.
bool HasSideEffectOpcode(HloOpcode opcode);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_OPCODE_H_
