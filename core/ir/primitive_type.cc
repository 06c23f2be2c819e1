#include "core/ir/primitive_type.h"

#include <array>
#include <cassert>

#include "absl/container/flat_hash_map.h"

namespace passlab {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
  char kind;
};

constexpr TypeInfo kTypes[] = {
    {PrimitiveType::kInvalid, "invalid", 0, 'x'},
#define PASSLAB_PT_INFO(e, name, bits, kind) {PrimitiveType::e, name, bits, kind},
    PASSLAB_PRIMITIVE_TYPES(PASSLAB_PT_INFO)
#undef PASSLAB_PT_INFO
};

const TypeInfo& Info(PrimitiveType type) {
  size_t i = static_cast<size_t>(type);
  assert(i < std::size(kTypes));
  return kTypes[i];
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) { return Info(type).name; }

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  static const auto* by_name = [] {
    auto* m = new absl::flat_hash_map<std::string_view, PrimitiveType>();
    for (const TypeInfo& t : kTypes) {
      if (t.type != PrimitiveType::kInvalid) (*m)[t.name] = t.type;
    }
    return m;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return std::nullopt;
  return it->second;
}

int PrimitiveBitWidth(PrimitiveType type) { return Info(type).bits; }

int PrimitiveByteWidth(PrimitiveType type) {
  int bits = Info(type).bits;
  return bits == 0 ? 0 : (bits + 7) / 8;
}

bool IsArrayType(PrimitiveType type) {
  return type != PrimitiveType::kInvalid && Info(type).kind != 'x';
}
bool IsPredType(PrimitiveType type) { return type == PrimitiveType::kPred; }
bool IsIntegralType(PrimitiveType type) {
  char k = Info(type).kind;
  return k == 's' || k == 'u';
}
bool IsSignedIntegralType(PrimitiveType type) { return Info(type).kind == 's'; }
bool IsUnsignedIntegralType(PrimitiveType type) { return Info(type).kind == 'u'; }
bool IsFloatingPointType(PrimitiveType type) { return Info(type).kind == 'f'; }
bool IsComplexType(PrimitiveType type) { return Info(type).kind == 'c'; }
bool IsF8Type(PrimitiveType type) {
  return IsFloatingPointType(type) && Info(type).bits <= 8;
}

int ExponentBits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return 5;
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF32: return 8;
    case PrimitiveType::kF64: return 11;
    case PrimitiveType::kF8E5M2: return 5;
    case PrimitiveType::kF8E4M3: return 4;
    case PrimitiveType::kF8E4M3FN: return 4;
    case PrimitiveType::kF8E4M3B11FNUZ: return 4;
    case PrimitiveType::kF8E5M2FNUZ: return 5;
    case PrimitiveType::kF8E4M3FNUZ: return 4;
    case PrimitiveType::kF8E3M4: return 3;
    case PrimitiveType::kF8E8M0FNU: return 8;
    case PrimitiveType::kF4E2M1FN: return 2;
    default: return 0;
  }
}

int MantissaBits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16: return 10;
    case PrimitiveType::kBF16: return 7;
    case PrimitiveType::kF32: return 23;
    case PrimitiveType::kF64: return 52;
    case PrimitiveType::kF8E5M2: return 2;
    case PrimitiveType::kF8E4M3: return 3;
    case PrimitiveType::kF8E4M3FN: return 3;
    case PrimitiveType::kF8E4M3B11FNUZ: return 3;
    case PrimitiveType::kF8E5M2FNUZ: return 2;
    case PrimitiveType::kF8E4M3FNUZ: return 3;
    case PrimitiveType::kF8E3M4: return 4;
    case PrimitiveType::kF8E8M0FNU: return 0;
    case PrimitiveType::kF4E2M1FN: return 1;
    default: return 0;
  }
}

PrimitiveType ComplexComponentType(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) return PrimitiveType::kF64;
  return PrimitiveType::kInvalid;
}

}  // namespace passlab
