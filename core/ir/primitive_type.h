// PrimitiveType: the element types of XLA shapes, with the names XLA's text
// format uses ("pred", "s32", "bf16", "f8e4m3fn", ...).
#ifndef PASSLAB_CORE_IR_PRIMITIVE_TYPE_H_
#define PASSLAB_CORE_IR_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace passlab {

// X(enumerator, text name, bit width, kind). Kind: 'p' pred, 's' signed int,
// 'u' unsigned int, 'f' floating point, 'c' complex, 'x' non-array type.
// The order is the order XLA's proto enum uses for the common types; it only
// matters for determinism, never for semantics.
#define PASSLAB_PRIMITIVE_TYPES(X)       \
  X(kPred, "pred", 8, 'p')               \
  X(kS1, "s1", 1, 's')                   \
  X(kS2, "s2", 2, 's')                   \
  X(kS4, "s4", 4, 's')                   \
  X(kS8, "s8", 8, 's')                   \
  X(kS16, "s16", 16, 's')                \
  X(kS32, "s32", 32, 's')                \
  X(kS64, "s64", 64, 's')                \
  X(kU1, "u1", 1, 'u')                   \
  X(kU2, "u2", 2, 'u')                   \
  X(kU4, "u4", 4, 'u')                   \
  X(kU8, "u8", 8, 'u')                   \
  X(kU16, "u16", 16, 'u')                \
  X(kU32, "u32", 32, 'u')                \
  X(kU64, "u64", 64, 'u')                \
  X(kF16, "f16", 16, 'f')                \
  X(kBF16, "bf16", 16, 'f')              \
  X(kF32, "f32", 32, 'f')                \
  X(kF64, "f64", 64, 'f')                \
  X(kF8E5M2, "f8e5m2", 8, 'f')           \
  X(kF8E4M3, "f8e4m3", 8, 'f')           \
  X(kF8E4M3FN, "f8e4m3fn", 8, 'f')       \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 'f') \
  X(kF8E5M2FNUZ, "f8e5m2fnuz", 8, 'f')   \
  X(kF8E4M3FNUZ, "f8e4m3fnuz", 8, 'f')   \
  X(kF8E3M4, "f8e3m4", 8, 'f')           \
  X(kF8E8M0FNU, "f8e8m0fnu", 8, 'f')     \
  X(kF4E2M1FN, "f4e2m1fn", 4, 'f')       \
  X(kC64, "c64", 64, 'c')                \
  X(kC128, "c128", 128, 'c')             \
  X(kToken, "token", 0, 'x')             \
  X(kTuple, "tuple", 0, 'x')             \
  X(kOpaque, "opaque", 0, 'x')

enum class PrimitiveType : uint8_t {
  kInvalid = 0,
#define PASSLAB_PT_ENUM(e, name, bits, kind) e,
  PASSLAB_PRIMITIVE_TYPES(PASSLAB_PT_ENUM)
#undef PASSLAB_PT_ENUM
};

std::string_view PrimitiveTypeName(PrimitiveType type);
// Parses a lower-case XLA type name; nullopt when unknown.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);

int PrimitiveBitWidth(PrimitiveType type);
// Bytes one element occupies in a dense host buffer (sub-byte types take one
// byte each, as XLA's unpacked representation does; pred is one byte).
int PrimitiveByteWidth(PrimitiveType type);

bool IsArrayType(PrimitiveType type);  // everything but token/tuple/opaque
bool IsPredType(PrimitiveType type);
bool IsIntegralType(PrimitiveType type);  // signed or unsigned integers
bool IsSignedIntegralType(PrimitiveType type);
bool IsUnsignedIntegralType(PrimitiveType type);
bool IsFloatingPointType(PrimitiveType type);
bool IsComplexType(PrimitiveType type);
bool IsF8Type(PrimitiveType type);  // every 8- and 4-bit float

// Float format parameters (exponent and mantissa bits) for floating types.
int ExponentBits(PrimitiveType type);
int MantissaBits(PrimitiveType type);
// The real component type of a complex type (c64 -> f32, c128 -> f64).
PrimitiveType ComplexComponentType(PrimitiveType type);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_PRIMITIVE_TYPE_H_
