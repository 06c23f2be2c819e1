#include "core/runtime/host_routine.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/ir/hlo_instruction.h"
#include "core/ir/literal.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab {

bool IsHostRoutineOpcode(HloOpcode op) {
  return op == HloOpcode::kSort || op == HloOpcode::kTopK || op == HloOpcode::kFft || op == HloOpcode::kCholesky ||
         op == HloOpcode::kTriangularSolve || op == HloOpcode::kRngBitGenerator ||
         op == HloOpcode::kRngGetAndUpdateState;
}

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateHostRoutine(const HloInstruction& inst) {
  using namespace routine_internal;
  if (!IsHostRoutineOpcode(inst.opcode())) return Unimplemented(inst, "the runtime has no host routine for this op");
  RETURN_IF_ERROR(CheckRoutineBuffers(inst));
  switch (inst.opcode()) {
    case HloOpcode::kSort: return CreateSortRoutine(inst);
    case HloOpcode::kTopK: return CreateTopKRoutine(inst);
    case HloOpcode::kFft: return CreateFftRoutine(inst);
    case HloOpcode::kCholesky: return CreateCholeskyRoutine(inst);
    case HloOpcode::kTriangularSolve: return CreateTriangularSolveRoutine(inst);
    case HloOpcode::kRngBitGenerator: return CreateRngBitGeneratorRoutine(inst);
    case HloOpcode::kRngGetAndUpdateState: return CreateRngStateRoutine(inst);
    default: return Unimplemented(inst, "the runtime has no host routine for this op");
  }
}

namespace routine_internal {

absl::Status Unimplemented(const HloInstruction& inst, std::string_view why) {
  return absl::UnimplementedError(StrCat(inst.name(), " (", HloOpcodeString(inst.opcode()), "): ", why));
}

absl::Status CheckRoutineBuffers(const HloInstruction& inst) {
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!s.IsArray()) return Unimplemented(inst, StrCat("operand ", i, " is not an array (", s.ToString(), ")"));
    if (absl::Status st = CheckPlainLayout(s); !st.ok()) return Unimplemented(inst, std::string(st.message()));
  }
  for (const Shape& s : LeafShapes(inst.shape())) {
    if (absl::Status st = CheckPlainLayout(s); !st.ok()) return Unimplemented(inst, std::string(st.message()));
  }
  return absl::OkStatus();
}

std::vector<int64_t> RowMajorOffsets(const Shape& shape) {
  std::vector<int64_t> dims(shape.rank());
  std::iota(dims.begin(), dims.end(), 0);
  return GroupOffsets(shape, PhysicalStrides(shape), dims);
}

std::vector<uint8_t> GatherRowMajor(const Shape& shape, const void* buffer) {
  const int64_t width = PrimitiveByteWidth(shape.element_type()), n = shape.element_count();
  std::vector<uint8_t> packed(width * n);
  if (n == 0) return packed;
  std::vector<int64_t> offsets = RowMajorOffsets(shape);
  const uint8_t* src = static_cast<const uint8_t*>(buffer);
  for (int64_t i = 0; i < n; ++i) std::memcpy(packed.data() + i * width, src + offsets[i] * width, width);
  return packed;
}

void ScatterRowMajor(const Shape& shape, const uint8_t* packed, void* buffer) {
  const int64_t width = PrimitiveByteWidth(shape.element_type()), n = shape.element_count();
  if (n == 0) return;
  std::vector<int64_t> offsets = RowMajorOffsets(shape);
  uint8_t* dst = static_cast<uint8_t*>(buffer);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + offsets[i] * width, packed + i * width, width);
}

uint64_t LoadBits(PrimitiveType type, const uint8_t* packed, int64_t i) {
  const int width = PrimitiveByteWidth(type);
  uint64_t bits = 0;
  std::memcpy(&bits, packed + i * width, std::min(width, 8));
  return bits;
}

void StoreBits(PrimitiveType type, uint8_t* packed, int64_t i, uint64_t bits) {
  const int width = PrimitiveByteWidth(type);
  std::memcpy(packed + i * width, &bits, std::min(width, 8));
}

int64_t FloatTotalOrderKey(PrimitiveType type, uint64_t bits) {
  // The narrow formats without IEEE encodings (f8 *fn/*fnuz, f4, ...)
  // order by value, through f64's encoding.
  if (type != PrimitiveType::kF16 && type != PrimitiveType::kBF16 && type != PrimitiveType::kF32 &&
      type != PrimitiveType::kF64) {
    double v = FloatFromBits(type, bits);
    uint64_t wide;
    std::memcpy(&wide, &v, sizeof(wide));
    return FloatTotalOrderKey(PrimitiveType::kF64, wide);
  }
  // Sign-magnitude to two's complement: negative floats order in reverse
  // of their magnitude bits.
  const int width = PrimitiveBitWidth(type);
  const uint64_t sign = uint64_t{1} << (width - 1), magnitude = bits & (sign - 1);
  const int64_t m = static_cast<int64_t>(magnitude);
  return (bits & sign) != 0 ? -m - 1 : m;
}

double FloatFromBits(PrimitiveType type, uint64_t bits) {
  if (type == PrimitiveType::kF64) {
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    return d;
  }
  if (type == PrimitiveType::kF32) {
    const uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, sizeof(f));
    return f;
  }
  return SmallFloatToDouble(type, bits);
}

int64_t SignExtend(PrimitiveType type, uint64_t bits) {
  const int width = PrimitiveBitWidth(type);
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  bits &= (sign << 1) - 1;
  return static_cast<int64_t>((bits ^ sign) - sign);
}

}  // namespace routine_internal
}  // namespace passlab
