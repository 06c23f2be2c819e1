// Internal to the host routines (host_routine.cc and the *_routine.cc
// files): one creator per op and the buffer helpers they share.
#ifndef PASSLAB_CORE_RUNTIME_HOST_ROUTINE_INTERNAL_H_
#define PASSLAB_CORE_RUNTIME_HOST_ROUTINE_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/shape.h"
#include "core/runtime/host_routine.h"

namespace passlab {

class HloInstruction;

namespace routine_internal {

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateSortRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateTopKRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateFftRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateCholeskyRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateTriangularSolveRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateRngBitGeneratorRoutine(const HloInstruction& inst);
absl::StatusOr<std::unique_ptr<HostRoutine>> CreateRngStateRoutine(const HloInstruction& inst);

// "name (opcode): why" as an UnimplementedError.
absl::Status Unimplemented(const HloInstruction& inst, std::string_view why);

// Element offset in a buffer of `shape` of each row-major position.
std::vector<int64_t> RowMajorOffsets(const Shape& shape);

// The elements of a buffer of `shape` in row-major order, packed
// (PrimitiveByteWidth bytes each), and back.
std::vector<uint8_t> GatherRowMajor(const Shape& shape, const void* buffer);
void ScatterRowMajor(const Shape& shape, const uint8_t* packed, void* buffer);

// The raw bits of element `i` of packed bytes of `type` (little-endian,
// zero-extended), and a store of the low bits.
uint64_t LoadBits(PrimitiveType type, const uint8_t* packed, int64_t i);
void StoreBits(PrimitiveType type, uint8_t* packed, int64_t i, uint64_t bits);

// XLA's total order of floats as a signed key of the raw bits of a float
// type: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t FloatTotalOrderKey(PrimitiveType type, uint64_t bits);
// The value of raw float bits (any float type), and integer bits sign- or
// zero-extended by the type.
double FloatFromBits(PrimitiveType type, uint64_t bits);
int64_t SignExtend(PrimitiveType type, uint64_t bits);

// Checks that every operand is an array and every leaf has a plain layout.
absl::Status CheckRoutineBuffers(const HloInstruction& inst);

}  // namespace routine_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_RUNTIME_HOST_ROUTINE_INTERNAL_H_
