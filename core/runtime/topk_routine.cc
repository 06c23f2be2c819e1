// topk: the k largest (or smallest) elements of each row along the last
// dimension and their s32 positions, floats in XLA's total order, equal
// values by lower position first (XLA's tie rule). A partial sort of the
// positions under (key, position) per row.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab::routine_internal {
namespace {

class TopKRoutine : public HostRoutine {
 public:
  TopKRoutine(const HloInstruction& inst)
      : operand_(inst.operand(0)->shape()),
        values_(inst.shape().tuple_shapes(0)),
        indices_(inst.shape().tuple_shapes(1)),
        k_(inst.attrs().k),
        largest_(inst.attrs().largest) {}

  absl::Status Run(absl::Span<void* const> buffers) const override {
    const PrimitiveType type = operand_.element_type();
    const int64_t width = PrimitiveByteWidth(type);
    const int64_t n = operand_.dimensions(operand_.rank() - 1);
    const int64_t rows = n == 0 ? 0 : operand_.element_count() / n;
    std::vector<uint8_t> x = GatherRowMajor(operand_, buffers[0]);
    std::vector<uint8_t> values(values_.element_count() * width);
    std::vector<uint8_t> indices(indices_.element_count() * PrimitiveByteWidth(indices_.element_type()));
    // Signed keys for floats (total order) and signed integers, unsigned
    // ones (stored in the same bits) for unsigned integers and pred.
    const bool is_signed = IsFloatingPointType(type) || IsSignedIntegralType(type);
    std::vector<int64_t> keys(n), order(n);
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t i = 0; i < n; ++i) {
        uint64_t bits = LoadBits(type, x.data(), row * n + i);
        keys[i] = IsFloatingPointType(type)  ? FloatTotalOrderKey(type, bits)
                  : IsSignedIntegralType(type) ? SignExtend(type, bits)
                                               : static_cast<int64_t>(bits);
      }
      std::iota(order.begin(), order.end(), 0);
      auto before = [&](int64_t a, int64_t b) {
        if (keys[a] != keys[b]) {
          bool less = is_signed ? keys[a] < keys[b]
                                : static_cast<uint64_t>(keys[a]) < static_cast<uint64_t>(keys[b]);
          return largest_ ? !less : less;
        }
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k_, order.end(), before);
      for (int64_t j = 0; j < k_; ++j) {
        std::memcpy(values.data() + (row * k_ + j) * width, x.data() + (row * n + order[j]) * width, width);
        StoreBits(indices_.element_type(), indices.data(), row * k_ + j, static_cast<uint64_t>(order[j]));
      }
    }
    ScatterRowMajor(values_, values.data(), buffers[1]);
    ScatterRowMajor(indices_, indices.data(), buffers[2]);
    return absl::OkStatus();
  }

 private:
  Shape operand_, values_, indices_;
  int64_t k_;
  bool largest_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateTopKRoutine(const HloInstruction& inst) {
  const Shape& x = inst.operand(0)->shape();
  if (x.rank() < 1) return Unimplemented(inst, "topk needs an operand of rank >= 1");
  if (!inst.shape().IsTuple() || inst.shape().tuple_shapes_size() != 2) {
    return Unimplemented(inst, "topk returns (values, indices)");
  }
  const PrimitiveType t = x.element_type();
  if (IsComplexType(t)) return Unimplemented(inst, "topk of complex values");
  const PrimitiveType index = inst.shape().tuple_shapes(1).element_type();
  if (index != PrimitiveType::kS32 && index != PrimitiveType::kS64) {
    return Unimplemented(inst, StrCat("topk indices of ", PrimitiveTypeName(index)));
  }
  const int64_t n = x.dimensions(x.rank() - 1), k = inst.attrs().k;
  if (k < 0 || k > n || inst.shape().tuple_shapes(0).element_count() * std::max<int64_t>(n, 1) !=
                             x.element_count() * k) {
    return Unimplemented(inst, StrCat("k=", k, " does not fit ", x.ToString(), " -> ", inst.shape().ToString()));
  }
  return std::unique_ptr<HostRoutine>(new TopKRoutine(inst));
}

}  // namespace passlab::routine_internal
