// The CPU's transpose emitter (see kernel_emitter.h): the output walked in
// small tiles so that a tile's transposed reads stay in cache. (The GPU's
// shared-memory transpose is GpuKernelEmitter::EmitTranspose.)
#include "core/codegen/kernel_emitter.h"

#include <cstdint>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace passlab {
namespace codegen_internal {

absl::Status KernelEmitter::EmitTransposeNest(const std::vector<int64_t>& group, const Shape& s,
                                              const std::vector<int64_t>& mtm, int64_t rows, int64_t minor,
                                              Value begin, Value end, LoopNest& nest) {
  // Transpose emitter: the output is walked in kTile x kTile tiles of
  // (row, minor) so that the transposed reads of a tile stay in cache;
  // the parallel unit is a band of kTile rows. Partial tiles at the
  // edges are bounds-checked.
  // 8: with power-of-two row strides a tile's input rows share one L1
  // set, and L1 has 8 ways (measured: 8 is 3x faster than 32 on a
  // 4096x4096 f32 transpose, 16 is 2x slower than 8).
  constexpr int64_t kTile = 8;
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

}  // namespace codegen_internal
}  // namespace passlab
