// Seed 002's worked examples of tiled layouts, and the pad -> reshape ->
// transpose reading of one tiling level.
#include "core/ir/tile_math.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>
#include <vector>

namespace passlab {
namespace {

using Dims = std::vector<int64_t>;
using Tiles = std::vector<Dims>;

// Calls f(index) for every index of `dims` in row-major order.
template <typename F>
void ForEachIndex(const Dims& dims, F f) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  Dims index(dims.size(), 0);
  while (true) {
    f(index);
    int64_t k = static_cast<int64_t>(dims.size()) - 1;
    while (k >= 0 && ++index[k] == dims[k]) index[k--] = 0;
    if (k < 0) return;
  }
}

// Inverse of LinearIndex.
Dims Delinearize(int64_t linear, const Dims& dims) {
  Dims index(dims.size());
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

TEST(TileMathTest, LinearIndexIsRowMajor) {
  EXPECT_EQ(LinearIndex({2, 3}, {3, 5}), 13);
  EXPECT_EQ(LinearIndex({1, 2, 3}, {2, 3, 4}), 23);
  EXPECT_EQ(LinearIndex({}, {}), 0);
}

// Figure 1: F32[3,5]{1,0:T(2,2)}. Element (2,3) has tile index (1,1) in a
// 2x3 grid of tiles and index (0,1) inside its tile: (1*3+1)*4 + (0*2+1) = 17.
TEST(TileMathTest, F32_3x5_Tile2x2_Element2_3_Is17) {
  EXPECT_EQ(LinearIndexWithTiles({2, 3}, {3, 5}, {{2, 2}}), 17);
  EXPECT_EQ(TiledPhysicalDims({3, 5}, {{2, 2}}), (Dims{2, 3, 2, 2}));
  EXPECT_EQ(TiledElementCount({3, 5}, {{2, 2}}), 24);  // padded to 4x6
  std::set<int64_t> seen;
  ForEachIndex({3, 5}, [&](const Dims& e) {
    int64_t p = LinearIndexWithTiles(e, {3, 5}, {{2, 2}});
    EXPECT_GE(p, 0);
    EXPECT_LT(p, 24);
    EXPECT_TRUE(seen.insert(p).second) << e[0] << "," << e[1];
  });
  EXPECT_EQ(seen.size(), 15u);
}

// Figure 2: a 4x8 array tiled (2,4) then (2,1).
// Level 1 splits (i,j) into tile (i/2, j/4) of a 2x2 grid and (i%2, j%4)
// inside a 2x4 tile, so each 2x4 tile is a block of 8 consecutive slots,
// tiles in row-major order: tile (r,c) starts at 8*(2r+c).
// Level 2 tiles the within-tile dims (2,4) by (2,1): a 1x4 grid of 2x1
// tiles, i.e. position in the 2x4 tile = 2*(j%4) + (i%2) -- each column's
// pair (even row, odd row) is stored together, the TPU bf16 packing.
// Overall: position = 8*(2*(i/2) + j/4) + 2*(j%4) + i%2.
TEST(TileMathTest, Figure2_4x8_TiledBy2x4Then2x1) {
  const int64_t expected[4][8] = {
      {0, 2, 4, 6, 8, 10, 12, 14},
      {1, 3, 5, 7, 9, 11, 13, 15},
      {16, 18, 20, 22, 24, 26, 28, 30},
      {17, 19, 21, 23, 25, 27, 29, 31},
  };
  const Tiles tiles = {{2, 4}, {2, 1}};
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(LinearIndexWithTiles({i, j}, {4, 8}, tiles), expected[i][j]) << i << "," << j;
    }
  }
  EXPECT_EQ(TiledPhysicalDims({4, 8}, tiles), (Dims{2, 2, 1, 4, 2, 1}));
  EXPECT_EQ(TiledElementCount({4, 8}, tiles), 32);
}

// F32[2,7,8,11,10] with tile (*,*,2,*,3) is F32[112,110] with tile (2,3):
// dims 2,7,8 merge into 112 and dims 11,10 into 110.
TEST(TileMathTest, CombinedDimensionsEqualTheMergedShape) {
  const Dims dims = {2, 7, 8, 11, 10};
  const Tiles combined = {{kCombineDimension, kCombineDimension, 2, kCombineDimension, 3}};
  EXPECT_EQ(TiledPhysicalDims(dims, combined), (Dims{56, 37, 2, 3}));
  EXPECT_EQ(TiledPhysicalDims({112, 110}, {{2, 3}}), (Dims{56, 37, 2, 3}));
  ForEachIndex(dims, [&](const Dims& e) {
    int64_t row = (e[0] * 7 + e[1]) * 8 + e[2];
    int64_t column = e[3] * 10 + e[4];
    ASSERT_EQ(LinearIndexWithTiles(e, dims, combined),
              LinearIndexWithTiles({row, column}, {112, 110}, {{2, 3}}));
  });
}

TEST(TileMathTest, TileWithFewerDimsTilesTheMinorOnes) {
  // (5,6,7) with (2,4): dim 0 untouched, then 3x2 tiles of 2x4.
  EXPECT_EQ(TiledPhysicalDims({5, 6, 7}, {{2, 4}}), (Dims{5, 3, 2, 2, 4}));
  EXPECT_EQ(LinearIndexWithTiles({4, 5, 6}, {5, 6, 7}, {{2, 4}}),
            LinearIndex({4, 2, 1, 1, 2}, {5, 3, 2, 2, 4}));
}

// Every element lands on its own slot inside the padded buffer, for the TPU
// formats of seed 002 and a second level reaching into the tile grid.
TEST(TileMathTest, TiledLayoutsAreInjectiveIntoThePaddedBuffer) {
  const std::vector<std::pair<Dims, Tiles>> cases = {
      {{3, 10, 300}, {{8, 128}, {2, 1}}},     // bf16
      {{17, 130}, {{8, 128}, {4, 1}}},        // 8-bit
      {{33, 129}, {{32, 128}, {32, 1}}},      // pred
      {{5, 9}, {{2, 4}, {3, 2, 1}}},          // second tile spans a grid dim
      {{4, 6, 5}, {{kCombineDimension, 4, 3}}},
      {{0, 5}, {{2, 2}}},
  };
  for (const auto& [dims, tiles] : cases) {
    ASSERT_TRUE(ValidateTiles(dims, tiles).ok());
    const int64_t size = TiledElementCount(dims, tiles);
    std::vector<bool> used(size, false);
    ForEachIndex(dims, [&](const Dims& e) {
      int64_t p = LinearIndexWithTiles(e, dims, tiles);
      ASSERT_GE(p, 0);
      ASSERT_LT(p, size);
      EXPECT_FALSE(used[p]);
      used[p] = true;
    });
  }
}

// Pad, reshape (a bitcast: same row-major position in the padded array) and
// transpose, carried out on each element's index, land where
// LinearIndexWithTiles says.
TEST(TileMathTest, PadReshapeTransposeAgreesWithLinearIndexWithTiles) {
  const std::vector<std::pair<Dims, Dims>> cases = {
      {{3, 5}, {2, 2}}, {{4, 8}, {2, 4}},       {{5, 7, 9}, {4, 3}},
      {{6}, {4}},       {{3, 4, 5}, {2, 2, 2}}, {{2, 3, 9, 10}, {8, 1}},
  };
  for (const auto& [dims, tile] : cases) {
    TilingSteps steps = TileAsPadReshapeTranspose(dims, tile);
    EXPECT_EQ(steps.result_dims, TiledPhysicalDims(dims, {tile}));
    ForEachIndex(dims, [&](const Dims& e) {
      Dims reshaped = Delinearize(LinearIndex(e, steps.padded_dims), steps.reshaped_dims);
      Dims transposed;
      for (int64_t p : steps.transpose_permutation) transposed.push_back(reshaped[p]);
      EXPECT_EQ(LinearIndex(transposed, steps.result_dims), LinearIndexWithTiles(e, dims, {tile}));
    });
  }
  TilingSteps steps = TileAsPadReshapeTranspose({9, 3, 5}, {2, 2});
  EXPECT_EQ(steps.padded_dims, (Dims{9, 4, 6}));
  EXPECT_EQ(steps.reshaped_dims, (Dims{9, 2, 2, 3, 2}));
  EXPECT_EQ(steps.transpose_permutation, (Dims{0, 1, 3, 2, 4}));
  EXPECT_EQ(steps.result_dims, (Dims{9, 2, 3, 2, 2}));
}

TEST(TileMathTest, ValidatesTiles) {
  EXPECT_TRUE(ValidateTiles({8, 128}, {{8, 128}, {2, 1}}).ok());
  EXPECT_TRUE(ValidateTiles({2, 7, 8, 11, 10}, {{-1, -1, 2, -1, 3}}).ok());
  EXPECT_TRUE(ValidateTiles({8}, {}).ok());
  // The second level sees the 4-dim tiled shape, so a 4-dim tile fits.
  EXPECT_TRUE(ValidateTiles({8, 8}, {{2, 2}, {1, 1, 2, 1}}).ok());
  EXPECT_FALSE(ValidateTiles({8}, {{2, 2}}).ok());  // more tile dims than shape dims
  EXPECT_FALSE(ValidateTiles({8, 8}, {{2, 2}, {1, 1, 1, 2, 1}}).ok());
  EXPECT_FALSE(ValidateTiles({8, 8}, {{0, 2}}).ok());
  EXPECT_FALSE(ValidateTiles({8, 8}, {{-2, 2}}).ok());
  EXPECT_FALSE(ValidateTiles({8, 8}, {{2, -1}}).ok());  // '*' needs a minor dim
  EXPECT_FALSE(ValidateTiles({8, 8}, {{}}).ok());
}

}  // namespace
}  // namespace passlab
