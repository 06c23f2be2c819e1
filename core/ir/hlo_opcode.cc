#include "core/ir/hlo_opcode.h"

#include "absl/container/flat_hash_map.h"

namespace passlab {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr OpcodeInfo kOpcodes[] = {
#define PASSLAB_OPCODE_INFO(e, camel, name, arity) {name, arity},
    PASSLAB_HLO_OPCODES(PASSLAB_OPCODE_INFO)
#undef PASSLAB_OPCODE_INFO
};

}  // namespace

std::string_view HloOpcodeString(HloOpcode opcode) {
  return kOpcodes[static_cast<int>(opcode)].name;
}

std::optional<HloOpcode> StringToHloOpcode(std::string_view name) {
  static const auto* by_name = [] {
    auto* m = new absl::flat_hash_map<std::string_view, HloOpcode>();
    for (int i = 0; i < kHloOpcodeCount; ++i) (*m)[kOpcodes[i].name] = HloOpcode(i);
    return m;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

int HloOpcodeArity(HloOpcode opcode) { return kOpcodes[static_cast<int>(opcode)].arity; }

bool IsElementwiseUnary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs: case HloOpcode::kAcos: case HloOpcode::kAcosh:
    case HloOpcode::kAsin: case HloOpcode::kAsinh: case HloOpcode::kAtanh:
    case HloOpcode::kCosh: case HloOpcode::kSinh:
    case HloOpcode::kCbrt: case HloOpcode::kCeil:
    case HloOpcode::kClz: case HloOpcode::kConvert: case HloOpcode::kBitcastConvert:
    case HloOpcode::kCopy: case HloOpcode::kCos: case HloOpcode::kErf:
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kFloor:
    case HloOpcode::kImag: case HloOpcode::kIsFinite: case HloOpcode::kLog:
    case HloOpcode::kLog1p: case HloOpcode::kLogistic: case HloOpcode::kNegate:
    case HloOpcode::kNot: case HloOpcode::kPopulationCount: case HloOpcode::kReal:
    case HloOpcode::kReducePrecision: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign:
    case HloOpcode::kSin: case HloOpcode::kSqrt: case HloOpcode::kTan:
    case HloOpcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2:
    case HloOpcode::kCompare: case HloOpcode::kComplex: case HloOpcode::kDivide:
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMulhi:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kStochasticConvert:
    case HloOpcode::kSubtract: case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseOpcode(HloOpcode opcode) {
  return IsElementwiseUnary(opcode) || IsElementwiseBinary(opcode) ||
         opcode == HloOpcode::kClamp || opcode == HloOpcode::kSelect ||
         opcode == HloOpcode::kMap;
}

bool IsCollectiveOpcode(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

bool HasOwnAsyncOpcodes(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather: case HloOpcode::kAllReduce:
    case HloOpcode::kCollectivePermute: case HloOpcode::kCopy:
    case HloOpcode::kSend: case HloOpcode::kRecv:
      return true;
    default:
      return false;
  }
}

bool HasSideEffectOpcode(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
    case HloOpcode::kRecvDone: case HloOpcode::kInfeed: case HloOpcode::kOutfeed:
    case HloOpcode::kRng: case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherStart: case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAfterAll: case HloOpcode::kAddDependency:
      return true;
    default:
      return false;
  }
}

}  // namespace passlab
