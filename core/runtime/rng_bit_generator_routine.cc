// rng-bit-generator: XLA's counter-based generators, bit-exact with its
// RngBitGeneratorExpander over xla/client/lib/prng.cc. The state's first
// word is the key.
//   Philox-4x32-10: the 128-bit counter is (state[1], state[2]) for a u64[3]
//   state, (state[1], state[0]) for u64[2]; block b (counter + b) gives
//   four 32-bit words: elements 4b..4b+3 of a <= 32-bit result, or two
//   64-bit elements (words 0|1<<32, 2|3<<32). RNG_DEFAULT is philox, as
//   XLA:CPU and XLA:GPU pick.
//   ThreeFry-2x32 (20 rounds): the counter is state[1]; 64-bit elements
//   take block (counter + i); narrower ones split the shape in halves along
//   the first even dimension (else the largest) and element c of it takes
//   word c % 2 of the block counted at position (c / 2) of the halved shape.
// The new state is the key and the counter advanced by the blocks used.
#include <array>

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_routine_internal.h"

namespace passlab::routine_internal {
namespace {

using Words4 = std::array<uint32_t, 4>;
using Words2 = std::array<uint32_t, 2>;

Words4 Philox4x32x10(Words4 c, Words2 k) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t prod0 = uint64_t{c[0]} * kMul0, prod1 = uint64_t{c[2]} * kMul1;
    const uint32_t hi0 = static_cast<uint32_t>(prod0 >> 32), lo0 = static_cast<uint32_t>(prod0);
    const uint32_t hi1 = static_cast<uint32_t>(prod1 >> 32), lo1 = static_cast<uint32_t>(prod1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

Words2 ThreeFry2x32x20(Words2 x, Words2 key) {
  constexpr int kRotate[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t schedule[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  x[0] += schedule[0];
  x[1] += schedule[1];
  for (int group = 0; group < 5; ++group) {
    for (int r : kRotate[group % 2]) {
      x[0] += x[1];
      x[1] = (x[1] << r) | (x[1] >> (32 - r));
      x[1] ^= x[0];
    }
    x[0] += schedule[(group + 1) % 3];
    x[1] += schedule[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return x;
}

uint32_t Low(uint64_t v) { return static_cast<uint32_t>(v); }
uint32_t High(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

class RngBitGeneratorRoutine : public HostRoutine {
 public:
  RngBitGeneratorRoutine(const HloInstruction& inst)
      : state_(inst.operand(0)->shape()), new_state_(inst.shape().tuple_shapes(0)),
        data_(inst.shape().tuple_shapes(1)), three_fry_(inst.attrs().rng_algorithm == RandomAlgorithm::kThreeFry) {}

  absl::Status Run(absl::Span<void* const> buffers) const override {
    std::vector<uint8_t> state = GatherRowMajor(state_, buffers[0]);
    std::vector<uint64_t> words(state_.element_count());
    for (size_t i = 0; i < words.size(); ++i) words[i] = LoadBits(PrimitiveType::kU64, state.data(), i);
    std::vector<uint8_t> data(data_.element_count() * PrimitiveByteWidth(data_.element_type()));
    if (three_fry_) {
      ThreeFry(words, data);
    } else {
      Philox(words, data);
    }
    std::vector<uint8_t> out(words.size() * sizeof(uint64_t));
    for (size_t i = 0; i < words.size(); ++i) StoreBits(PrimitiveType::kU64, out.data(), i, words[i]);
    ScatterRowMajor(new_state_, out.data(), buffers[1]);
    ScatterRowMajor(data_, data.data(), buffers[2]);
    return absl::OkStatus();
  }

 private:
  void Philox(std::vector<uint64_t>& state, std::vector<uint8_t>& data) const {
    const PrimitiveType t = data_.element_type();
    const bool wide = PrimitiveBitWidth(t) == 64;
    const Words2 key = {Low(state[0]), High(state[0])};
    uint64_t low = state[1], high = state.size() >= 3 ? state[2] : state[0];
    const int64_t n = data_.element_count(), per_block = wide ? 2 : 4;
    const uint64_t blocks = static_cast<uint64_t>((n + per_block - 1) / per_block);
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t l = low + b, h = l < low ? high + 1 : high;
      const Words4 x = Philox4x32x10({Low(l), High(l), Low(h), High(h)}, key);
      for (int64_t j = 0; j < per_block; ++j) {
        const int64_t i = static_cast<int64_t>(b) * per_block + j;
        if (i >= n) break;
        StoreBits(t, data.data(), i, wide ? uint64_t{x[2 * j]} | uint64_t{x[2 * j + 1]} << 32 : x[j]);
      }
    }
    const uint64_t next = low + blocks;
    state[1] = next;
    if (state.size() >= 3) state[2] = next < low ? high + 1 : high;
  }

  void ThreeFry(std::vector<uint64_t>& state, std::vector<uint8_t>& data) const {
    const PrimitiveType t = data_.element_type();
    const Words2 key = {Low(state[0]), High(state[0])};
    const uint64_t start = state[1];
    const int64_t n = data_.element_count();
    auto block = [&](uint64_t c) { return ThreeFry2x32x20({Low(c), High(c)}, key); };
    uint64_t used = 0;
    if (PrimitiveBitWidth(t) == 64) {
      for (int64_t i = 0; i < n; ++i) {
        const Words2 x = block(start + static_cast<uint64_t>(i));
        StoreBits(t, data.data(), i, uint64_t{x[0]} | uint64_t{x[1]} << 32);
      }
      used = static_cast<uint64_t>(n);
    } else if (data_.rank() == 0) {
      StoreBits(t, data.data(), 0, block(start)[0]);
      used = 1;
    } else {
      const std::vector<int64_t>& dims = data_.dimensions();
      const int64_t rank = data_.rank();
      int64_t split = -1;
      for (int64_t d = 0; d < rank && split < 0; ++d) {
        if (dims[d] % 2 == 0) split = d;
      }
      if (split < 0) {
        split = 0;
        for (int64_t d = 1; d < rank; ++d) {
          if (dims[d] > dims[split]) split = d;
        }
      }
      std::vector<int64_t> half = dims;
      half[split] = (dims[split] + 1) / 2;
      used = 1;
      for (int64_t h : half) used *= static_cast<uint64_t>(h);
      std::vector<int64_t> index(rank, 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t position = 0;  // of index, with index[split] / 2, in `half`
        for (int64_t d = 0; d < rank; ++d) position = position * half[d] + (d == split ? index[d] / 2 : index[d]);
        const Words2 x = block(start + static_cast<uint64_t>(position));
        StoreBits(t, data.data(), i, x[index[split] % 2]);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++index[d] < dims[d]) break;
          index[d] = 0;
        }
      }
    }
    state[1] = start + used;
  }

  Shape state_, new_state_, data_;
  bool three_fry_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<HostRoutine>> CreateRngBitGeneratorRoutine(const HloInstruction& inst) {
  const Shape& state = inst.operand(0)->shape();
  const Shape& s = inst.shape();
  if (!s.IsTuple() || s.tuple_shapes_size() != 2 || !s.tuple_shapes(1).IsArray()) {
    return Unimplemented(inst, "rng-bit-generator returns (state, data)");
  }
  if (state.element_type() != PrimitiveType::kU64 || state.rank() != 1 || state.element_count() < 2 ||
      s.tuple_shapes(0).dimensions() != state.dimensions()) {
    return Unimplemented(inst, StrCat("rng-bit-generator needs a u64[2] or u64[3] state, not ", state.ToString()));
  }
  const bool three_fry = inst.attrs().rng_algorithm == RandomAlgorithm::kThreeFry;
  if (!three_fry && state.element_count() > 3) {
    return Unimplemented(inst, StrCat("philox takes a u64[2] or u64[3] state, not ", state.ToString()));
  }
  const PrimitiveType t = s.tuple_shapes(1).element_type();
  if (IsComplexType(t) || PrimitiveBitWidth(t) > 64 || PrimitiveBitWidth(t) < 8) {
    return Unimplemented(inst, StrCat("rng-bit-generator of ", PrimitiveTypeName(t)));
  }
  return std::unique_ptr<HostRoutine>(new RngBitGeneratorRoutine(inst));
}

}  // namespace passlab::routine_internal
