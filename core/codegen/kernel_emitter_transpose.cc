// The CPU's transpose emitter (see kernel_emitter.h): the output walked in
// small tiles so that a tile's transposed reads stay in cache. (The GPU's
// shared-memory transpose is GpuKernelEmitter::EmitTranspose.)
#include "core/codegen/kernel_emitter.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/codegen/fusion_analysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace passlab {
namespace codegen_internal {

namespace {

// 8: with power-of-two strides a tile's 8 input lines share one L1 set,
// and L1 has 8 ways (measured: 8 is 3x faster than 32 on a 4096x4096 f32
// transpose, 16 is 2x slower than 8).
constexpr int64_t kTile = 8;

// The first dimension of `mtm` (minor to major) of size > 1, or -1.
int64_t FirstNonUnitDim(const std::vector<int64_t>& mtm, const Shape& s) {
  for (int64_t d : mtm) {
    if (s.dimensions(d) > 1) return d;
  }
  return -1;
}

// The two output dimensions a tile of `group`'s nest spans, as XLA's
// transpose emitter tiles them (xla/backends/gpu/codegen/emitters/
// transpose.cc after GetDescriptionForTiledTransposeEmitter in
// xla/service/gpu/ir_emission_utils.cc normalizes the hero): the output's
// minor dimension (writes contiguous) and the output dimension the hero
// reads along its operand's minor dimension (reads contiguous). Whatever
// lies between the operand and the hero (a reverse, a broadcast, an
// elementwise op) only changes the index a tile element reads, as it does
// in XLA's emitter, where the hero's operand is emitted at the tile's
// input indices. {-1, -1} when no leaf of the group has a transpose hero of
// the group's dims and layout whose operand's minor dimension moves.
std::pair<int64_t, int64_t> TileDimensions(const std::vector<Leaf>& leaves, const std::vector<int64_t>& group,
                                           const Shape& s, const std::vector<int64_t>& mtm) {
  int64_t out_minor = FirstNonUnitDim(mtm, s);
  if (out_minor < 0) return {-1, -1};
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
      if (hero->dimensions()[k] == in_minor && k != out_minor) return {out_minor, k};
    }
  }
  return {-1, -1};
}

}  // namespace

absl::Status KernelEmitter::EmitTransposeNest(const std::vector<int64_t>& group, const Shape& s,
                                              const std::vector<int64_t>& mtm, int64_t rows, int64_t minor,
                                              Value begin, Value end, LoopNest& nest) {
  auto [a, b] = TileDimensions(leaves_, group, s, mtm);
  if (a < 0) {
    // No transpose hero moves the operand's minor dimension here (the
    // minor dimension stays minor, or a leaf of another shape): the output
    // is walked in kTile x kTile tiles of (physical row, minor); the
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
  // Tiles of kTile (dimension b, the operand's minor one) x kTile
  // (dimension a, the output's minor one). A tile writes kTile runs of
  // kTile contiguous outputs and reads kTile runs of kTile contiguous
  // inputs, whatever the output's other dimensions are. The parallel unit
  // is one band: kTile values of b and every a, at one position of the
  // other dimensions (b's bands innermost, so neighbouring bands read
  // neighbouring input lines). Before this nest, the output was tiled over
  // (physical row, minor), which for f32[3,3,512,512] -> [512,3,3,512]
  // (dimensions={3,0,1,2}: ResNet's flipped conv filters) put a tile's rows
  // along the 3x3 window, 1 MiB apart in the input, and read each input
  // line for one element: 18.4 ms single-threaded, against 1.1 ms for the
  // same bytes moved by dimensions={2,0,1,3}.
  std::vector<int64_t> others;  // the other dimensions, minor to major
  for (int64_t d : mtm) {
    if (d != a && d != b) others.push_back(d);
  }
  int64_t extent_a = s.dimensions(a), extent_b = s.dimensions(b);
  int64_t kTB = getenv("RT_TB") ? atoi(getenv("RT_TB")) : kTile;  // EXPERIMENT
  int64_t kTA = getenv("RT_TA") ? atoi(getenv("RT_TA")) : kTile;  // EXPERIMENT
  int64_t b_tiles = (extent_b + kTB - 1) / kTB;
  nest.rows = s.element_count() / (extent_a * extent_b) * b_tiles;
  nest.inner = extent_a;
  Value band = OpenLoop(begin, end);
  Value b0 = Mul(Rem(band, b_tiles), kTB);
  Value rest = Div(band, b_tiles);
  Index idx(s.rank());
  for (size_t i = 0; i < others.size(); ++i) {
    int64_t d = others[i];
    bool last = i + 1 == others.size();
    idx[d] = last ? rest : Rem(rest, s.dimensions(d));
    if (!last) rest = Div(rest, s.dimensions(d));
  }
  Value band_b = Min(C(kTB), Sub(C(extent_b), b0));
  auto a_tiles = mlir::scf::ForOp::create(b_, loc_, C(0), C(extent_a), C(kTA));
  b_.setInsertionPointToStart(a_tiles.getBody());
  Value a0 = a_tiles.getInductionVar();
  Value tile_a = Min(C(kTA), Sub(C(extent_a), a0));
  idx[b] = Add(b0, OpenLoop(C(0), band_b));
  idx[a] = Add(a0, OpenLoop(C(0), tile_a));
  return EmitStores(group, idx, Linearize(idx, PhysicalStrides(s)));
}

}  // namespace codegen_internal
}  // namespace passlab
