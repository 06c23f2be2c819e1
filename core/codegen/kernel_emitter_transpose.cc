// The CPU's transpose emitter (see kernel_emitter.h): the output walked in
// small tiles so that a tile's transposed reads stay in cache. (The GPU's
// shared-memory transpose is GpuKernelEmitter::EmitTranspose.)
#include "core/codegen/kernel_emitter.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/codegen/fusion_analysis.h"
#include "core/ir/primitive_type.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace passlab {
namespace codegen_internal {

namespace {

// A tile's extent along the output's minor dimension (and both extents of
// the fallback's square tiles). 8: with power-of-two strides a tile's 8
// input lines share one L1 set, and L1 has 8 ways (measured on square
// tiles: 8 is 3x faster than 32 on a 4096x4096 f32 transpose, 16 is 2x
// slower than 8).
constexpr int64_t kTile = 8;
// L1 geometry (x86-64 since Sandy Bridge / Zen: 64-byte lines, 64 sets, so
// addresses 4 KiB apart share a set; at least 8 ways).
constexpr int64_t kCacheLineBytes = 64;
constexpr int64_t kL1SetPeriodBytes = 4096;
constexpr int64_t kL1Ways = 8;

// The tile's extent along b (the output dimension read along the operand's
// minor one): a cache line of elements, so each input line a tile reads is
// used whole, halved while the tile's output lines (one per value of b,
// `stride_bytes` apart) would crowd more than kL1Ways into one L1 set.
int64_t TileExtentAlongB(int64_t element_bytes, int64_t stride_bytes) {
  int64_t extent = std::max<int64_t>(kTile, kCacheLineBytes / element_bytes);
  int64_t sets = kL1SetPeriodBytes / std::gcd(stride_bytes % kL1SetPeriodBytes, kL1SetPeriodBytes);
  while (extent > kTile && (extent + std::min(extent, sets) - 1) / std::min(extent, sets) > kL1Ways) extent /= 2;
  return extent;
}

// The first dimension of `mtm` (minor to major) of size > 1, or -1.
int64_t FirstNonUnitDim(const std::vector<int64_t>& mtm, const Shape& s) {
  for (int64_t d : mtm) {
    if (s.dimensions(d) > 1) return d;
  }
  return -1;
}

// How a group of outputs of a transpose kernel is walked.
struct TransposeWalk {
  enum Kind {
    // Tiles spanning output dimensions `a` and `b`, as XLA's transpose
    // emitter tiles them (xla/backends/gpu/codegen/emitters/transpose.cc,
    // after GetDescriptionForTiledTransposeEmitter in
    // xla/service/gpu/ir_emission_utils.cc normalizes the hero): `a` the
    // output's minor dimension (writes contiguous), `b` the output
    // dimension the hero reads along its operand's minor dimension (reads
    // contiguous).
    kTiles,
    // The hero keeps the operand's minor dimension minor and it holds more
    // than 64 bits: physical rows, as the loop emitter walks them. XLA
    // leaves such transposes to the loop emitter too (its tiled emitter
    // takes a preserved minor dimension only up to
    // kMaxBitsInMostMinorDimension = 64 bits, ir_emission_utils.h).
    kRows,
    // No leaf of the group has a transpose hero of the group's dims and
    // layout, or its hero is too small to tile or keeps a minor dimension
    // of <= 64 bits: square tiles of (physical row, minor).
    kSquareTiles,
  };
  Kind kind = kSquareTiles;
  int64_t a = -1, b = -1;
};

// XLA's test for a transpose worth tiling (GetDescriptionForTiledTranspose
// Emitter with kMinDimensionToTransposeTiled = 16,
// kMinDimensionToTransposeTiled2 = 8, kMinTotalDimensionsToTransposeTiled
// = 64 * 128, xla/service/gpu/ir_emission_utils.h): smaller ones keep the
// square tiles (ResNet-18's f32[8,5,5,256] -> [256,5,5,8]: 46 us in square
// tiles, 63 us in 16x8 ones).
bool LargeEnoughToTile(int64_t out_minor, int64_t in_minor) {
  return (out_minor >= 16 && in_minor >= 16) || (out_minor >= 8 && in_minor >= 8 && out_minor * in_minor >= 64 * 128);
}

// Whether `h` reads its fused parameters in the physical order of `s` (dims
// and minor-to-major `mtm`): elementwise ops of parameters and constants of
// that shape, and broadcasts of scalars and vectors. A group of such leaves
// transposes nothing, and its rows are walked as the loop emitter walks
// them (contiguous and vectorized) rather than in square tiles. ResNet-50's
// weight-update fusions with a transposed copy of the old weight as a side
// output (fusion.331: f32[2048,512] momentum and weight, plus the
// [512,2048] transpose) spent 1.9 ms in square tiles on the elementwise
// pair, which takes 0.9 ms alone (2 threads).
bool ReadsInOrder(const HloInstruction* h, const Shape& s, const std::vector<int64_t>& mtm, int depth = 0) {
  if (depth > 64) return false;
  const HloOpcode op = h->opcode();
  if (op == HloOpcode::kParameter) {
    return h->shape().dimensions() == s.dimensions() && MinorToMajor(h->shape()) == mtm;
  }
  if (op == HloOpcode::kConstant) return h->shape().rank() == 0;
  if (op == HloOpcode::kBroadcast) {
    const HloInstruction* from = h->operand(0);
    return from->shape().rank() <= 1 &&
           (from->opcode() == HloOpcode::kParameter || from->opcode() == HloOpcode::kConstant);
  }
  if (!h->IsElementwise() || h->shape().dimensions() != s.dimensions()) return false;
  for (const HloInstruction* operand : h->operands()) {
    if (!ReadsInOrder(operand, s, mtm, depth + 1)) return false;
  }
  return true;
}

// Whatever lies between the operand and the hero (a reverse, a broadcast,
// an elementwise op) only changes the index a tile element reads, as it
// does in XLA's emitter, where the hero's operand is emitted at the tile's
// input indices.
TransposeWalk ChooseWalk(const std::vector<Leaf>& leaves, const std::vector<int64_t>& group, const Shape& s,
                         const std::vector<int64_t>& mtm) {
  TransposeWalk walk;
  int64_t out_minor = FirstNonUnitDim(mtm, s);
  if (out_minor < 0) return walk;
  bool in_order = out_minor == mtm[0];
  for (int64_t leaf_id : group) {
    in_order &= leaves[leaf_id].tuple_index < 0 && ReadsInOrder(leaves[leaf_id].instruction, s, mtm);
  }
  if (in_order) {
    walk.kind = TransposeWalk::kRows;
    return walk;
  }
  for (int64_t leaf_id : group) {
    const Leaf& leaf = leaves[leaf_id];
    if (leaf.tuple_index >= 0) continue;
    const HloInstruction* hero = FindHero(leaf.instruction);
    if (hero->opcode() != HloOpcode::kTranspose || hero->shape().dimensions() != s.dimensions() ||
        MinorToMajor(hero->shape()) != mtm) {
      continue;
    }
    const Shape& operand = hero->operand(0)->shape();
    int64_t in_minor = FirstNonUnitDim(MinorToMajor(operand), operand);
    for (int64_t k = 0; k < s.rank(); ++k) {
      if (hero->dimensions()[k] != in_minor) continue;
      if (k != out_minor) {
        if (!LargeEnoughToTile(s.dimensions(out_minor), s.dimensions(k))) continue;
        return {TransposeWalk::kTiles, out_minor, k};
      }
      if (out_minor == mtm[0] && s.dimensions(out_minor) * PrimitiveByteWidth(s.element_type()) > 8) {
        walk.kind = TransposeWalk::kRows;
      }
    }
  }
  return walk;
}

}  // namespace

absl::Status KernelEmitter::EmitTransposeNest(const std::vector<int64_t>& group, const Shape& s,
                                              const std::vector<int64_t>& mtm, int64_t rows, int64_t minor,
                                              Value begin, Value end, LoopNest& nest) {
  TransposeWalk walk = ChooseWalk(leaves_, group, s, mtm);
  if (walk.kind == TransposeWalk::kRows) {
    // Measured on f32[3,3,512,512] -> [512,3,3,512] (dimensions={2,0,1,3}):
    // 0.35-0.47 ms against 0.95-1.08 ms with the square tiles below; the
    // ResNet-18 step's SGD-update fusions with such transposes (fusion.91,
    // .93, .95, two outputs each): 2.1-2.5 ms against 5.5 ms.
    nest.rows = rows;
    nest.inner = minor;
    Value row = OpenLoop(begin, end);
    Index idx = RowIndex(s, mtm, row);
    idx[mtm[0]] = OpenLoop(C(0), C(minor));
    return EmitStores(group, idx, Add(Mul(row, minor), idx[mtm[0]]));
  }
  if (walk.kind == TransposeWalk::kSquareTiles) {
    // The output is walked in kTile x kTile tiles of (physical row, minor); the
    // parallel unit is a band of kTile rows. Partial tiles at the edges are
    // bounds-checked.
    nest.rows = (rows + kTile - 1) / kTile;
    nest.inner = minor;
    Value band = OpenLoop(begin, end);
    Value row0 = Mul(band, kTile);
    Value band_rows = Min(C(kTile), Sub(C(rows), row0));
    auto column_tiles = mlir::scf::ForOp::create(b_, loc_, C(0), C(minor), C(kTile));
    b_.setInsertionPointToStart(column_tiles.getBody());
    Value j0 = column_tiles.getInductionVar();
    Value tile_cols = Min(C(kTile), Sub(C(minor), j0));
    Value rr = OpenLoop(C(0), band_rows);
    Value row = Add(row0, rr);
    Index idx = RowIndex(s, mtm, row);
    Value jj = OpenLoop(C(0), tile_cols);
    Value j = Add(j0, jj);
    idx[mtm[0]] = j;
    return EmitStores(group, idx, Add(Mul(row, minor), j));
  }
  // Tiles of `tile_b` (dimension b, the operand's minor one) x kTile
  // (dimension a, the output's minor one): a tile reads kTile runs of
  // `tile_b` contiguous inputs and writes `tile_b` runs of kTile contiguous
  // outputs, whatever the output's other dimensions are (`tile_b`: see
  // TileExtentAlongB). The parallel unit is one band: `tile_b` values of b and every
  // a, at one position of the other dimensions (b's bands innermost, so
  // neighbouring bands read neighbouring input lines).
  //
  // The square tiles above put the rows of a
  // tile of f32[3,3,512,512] -> [512,3,3,512] (dimensions={3,0,1,2}: the
  // reversed, transposed conv filters algsimp's operand swap leaves in the
  // ResNet-18 training step, reverse or not) along the 3x3 window, 1 MiB
  // apart in the input, each input line read for one element: 18.4 ms
  // single-threaded, against 1.1 ms for the same bytes moved by
  // dimensions={2,0,1,3} in square tiles, 0.4 ms in rows (`passlab run
  // FILE --pipeline none --repeats 20
  // --threads 1`, 2-core AMD EPYC, load ~3). Tiled here, tile_b x kTile:
  // 8x8 6.2 ms, 16x8 1.5-2.3 ms, 32x8 2.2-2.4 ms, 8x16 1.9 ms, 16x16
  // 2.0 ms. f32[4096,4096] transposed (output lines 16 KiB apart, one L1
  // set): 8x8 23-26 ms, 16x8 47-53 ms, 32x8 53-83 ms; f64: 8x8 29-35 ms,
  // 16x8 62-69 ms; f16: 8x8 24-27 ms, 32x8 20-22 ms.
  int64_t a = walk.a, b = walk.b;
  int64_t element_bytes = PrimitiveByteWidth(s.element_type());
  int64_t tile_b = TileExtentAlongB(element_bytes, PhysicalStrides(s)[b] * element_bytes);
  std::vector<int64_t> others;  // the other dimensions, minor to major
  for (int64_t d : mtm) {
    if (d != a && d != b) others.push_back(d);
  }
  int64_t extent_a = s.dimensions(a), extent_b = s.dimensions(b);
  int64_t b_tiles = (extent_b + tile_b - 1) / tile_b;
  nest.rows = s.element_count() / (extent_a * extent_b) * b_tiles;
  nest.inner = extent_a;
  Value band = OpenLoop(begin, end);
  // (Without other dimensions band < b_tiles: no remainder to take.)
  Value b0 = Mul(others.empty() ? band : Rem(band, b_tiles), tile_b);
  Value rest = Div(band, b_tiles);
  Index idx(s.rank());
  for (size_t i = 0; i < others.size(); ++i) {
    int64_t d = others[i];
    bool last = i + 1 == others.size();
    idx[d] = last ? rest : Rem(rest, s.dimensions(d));
    if (!last) rest = Div(rest, s.dimensions(d));
  }
  Value band_b = Min(C(tile_b), Sub(C(extent_b), b0));
  auto a_tiles = mlir::scf::ForOp::create(b_, loc_, C(0), C(extent_a), C(kTile));
  b_.setInsertionPointToStart(a_tiles.getBody());
  Value a0 = a_tiles.getInductionVar();
  Value tile_a = Min(C(kTile), Sub(C(extent_a), a0));
  idx[b] = Add(b0, OpenLoop(C(0), band_b));
  idx[a] = Add(a0, OpenLoop(C(0), tile_a));
  return EmitStores(group, idx, Linearize(idx, PhysicalStrides(s)));
}

}  // namespace codegen_internal
}  // namespace passlab
