// sort: a stable sort of an index permutation per line along the sort
// dimension (stable for every comparator, a valid result for
// is_stable=false as well), then every operand permuted alike. A
// single-key comparator orders keys computed once per element; any other
// runs through SortComparator per comparison.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/host_routine_internal.h"
#include "core/runtime/sort_comparator.h"

namespace passlab::routine_internal {
namespace {

// The comparator's keys of one line (`length` elements at start + p *
// stride) in a type whose order is the comparator's: total-order floats and
// signed integers as int64, partial-order floats as double, the rest as
// uint64.
template <typename Key>
std::vector<Key> KeysOf(const SortComparator& comparator, absl::Span<const uint8_t* const> operands, int64_t start,
                        int64_t stride, int64_t length, std::vector<uint64_t>& slots) {
  const PrimitiveType type = comparator.key_compare()->type;
  std::vector<Key> keys(length);
  for (int64_t p = 0; p < length; ++p) {
    uint64_t bits = comparator.KeyBits(operands, start + p * stride, slots);
    if constexpr (std::is_same_v<Key, double>) {
      keys[p] = FloatFromBits(type, bits);
    } else if constexpr (std::is_same_v<Key, int64_t>) {
      keys[p] = IsFloatingPointType(type) ? FloatTotalOrderKey(type, bits) : SignExtend(type, bits);
    } else {
      keys[p] = bits;
    }
  }
  return keys;
}

class SortRoutine : public HostRoutine {
 public:
  SortRoutine(const HloInstruction& inst, SortComparator comparator)
      : comparator_(std::move(comparator)), dimension_(inst.dimensions(0)) {
    for (const HloInstruction* op : inst.operands()) operand_shapes_.push_back(op->shape());
    result_shapes_ = LeafShapes(inst.shape());
  }

  absl::Status Run(absl::Span<void* const> buffers) const override {
    const size_t n = operand_shapes_.size();
    const Shape& shape = operand_shapes_[0];
    std::vector<std::vector<uint8_t>> in(n), out(n);
    std::vector<const uint8_t*> data(n);
    for (size_t k = 0; k < n; ++k) {
      in[k] = GatherRowMajor(operand_shapes_[k], buffers[k]);
      out[k].resize(in[k].size());
      data[k] = in[k].data();
    }
    const int64_t length = shape.dimensions(dimension_);
    int64_t inner = 1, outer = 1;
    for (int64_t d = dimension_ + 1; d < shape.rank(); ++d) inner *= shape.dimensions(d);
    for (int64_t d = 0; d < dimension_; ++d) outer *= shape.dimensions(d);
    if (shape.element_count() > 0) {
      const std::optional<SortComparator::KeyCompare>& key = comparator_.key_compare();
      std::vector<int64_t> order(length);
      std::vector<uint64_t> slots;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t start = o * length * inner + i;
          std::iota(order.begin(), order.end(), 0);
          if (key.has_value()) {
            SortByKey(*key, data, start, inner, order, slots);
          } else {
            std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
              return comparator_.Less(data, start + a * inner, start + b * inner, slots);
            });
          }
          for (size_t k = 0; k < n; ++k) {
            const int64_t width = PrimitiveByteWidth(operand_shapes_[k].element_type());
            for (int64_t p = 0; p < length; ++p) {
              std::memcpy(out[k].data() + (start + p * inner) * width,
                          in[k].data() + (start + order[p] * inner) * width, width);
            }
          }
        }
      }
    }
    for (size_t k = 0; k < n; ++k) ScatterRowMajor(result_shapes_[k], out[k].data(), buffers[n + k]);
    return absl::OkStatus();
  }

 private:
  // Orders one line (`length` elements at start + p * stride) by the keys.
  void SortByKey(const SortComparator::KeyCompare& k, absl::Span<const uint8_t* const> data, int64_t start,
                 int64_t stride, std::vector<int64_t>& order, std::vector<uint64_t>& slots) const {
    const int64_t length = static_cast<int64_t>(order.size());
    auto sort = [&](const auto& keys) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        if (k.swapped) std::swap(a, b);
        switch (k.direction) {
          case ComparisonDirection::kEq: return keys[a] == keys[b];
          case ComparisonDirection::kNe: return keys[a] != keys[b];
          case ComparisonDirection::kLt: return keys[a] < keys[b];
          case ComparisonDirection::kLe: return keys[a] <= keys[b];
          case ComparisonDirection::kGt: return keys[a] > keys[b];
          case ComparisonDirection::kGe: return keys[a] >= keys[b];
        }
        return false;
      });
    };
    if (IsFloatingPointType(k.type) && !k.total_order) {
      sort(KeysOf<double>(comparator_, data, start, stride, length, slots));
    } else if (IsFloatingPointType(k.type) || IsSignedIntegralType(k.type)) {
      sort(KeysOf<int64_t>(comparator_, data, start, stride, length, slots));
    } else {
      sort(KeysOf<uint64_t>(comparator_, data, start, stride, length, slots));
    }
  }

  SortComparator comparator_;
  int64_t dimension_;
  std::vector<Shape> operand_shapes_, result_shapes_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateSortRoutine(const HloInstruction& inst) {
  if (inst.operand_count() == 0 || inst.dimensions().size() != 1) {
    return Unimplemented(inst, "sort needs operands and one sort dimension");
  }
  const Shape& shape = inst.operand(0)->shape();
  const int64_t dim = inst.dimensions(0);
  if (dim < 0 || dim >= shape.rank()) return Unimplemented(inst, StrCat("sort dimension ", dim, " out of range"));
  for (const HloInstruction* op : inst.operands()) {
    if (op->shape().dimensions() != shape.dimensions()) {
      return Unimplemented(inst, "sort operands of different dimensions");
    }
  }
  if (static_cast<int64_t>(LeafShapes(inst.shape()).size()) != inst.operand_count()) {
    return Unimplemented(inst, "one result per operand expected");
  }
  ASSIGN_OR_RETURN(SortComparator comparator, SortComparator::Compile(inst));
  return std::unique_ptr<HostRoutine>(new SortRoutine(inst, std::move(comparator)));
}

}  // namespace passlab::routine_internal
