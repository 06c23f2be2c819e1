// Seed 002's worked examples of tiled layouts.
#include "core/ir/tile_math.h"

#include <gtest/gtest.h>

#include <set>

namespace passlab {
namespace {

TEST(TileMathTest, F32_3x5_Tile2x2_Element2_3_Is17) {
  EXPECT_EQ(LinearIndexWithTiles({2, 3}, {3, 5}, {{2, 2}}), 17);
  // Every element gets its own slot inside the padded 4x6 = 24 buffer.
  std::set<int64_t> seen;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 5; ++j) {
      int64_t p = LinearIndexWithTiles({i, j}, {3, 5}, {{2, 2}});
      EXPECT_LT(p, 24);
      EXPECT_TRUE(seen.insert(p).second);
    }
  }
  EXPECT_EQ(TiledElementCount({3, 5}, {{2, 2}}), 24);
  EXPECT_EQ(TiledPhysicalDims({3, 5}, {{2, 2}}), (std::vector<int64_t>{2, 3, 2, 2}));
}

TEST(TileMathTest, RepeatedTiling4x8With2x4Then2x1) {
  // Figure 2: 2x4 tiles laid out row-major (tile (r,c) starts at 8*(2r+c)),
  // and within each tile the second tiling (2,1) pairs an element of an even
  // row with the one below it: position in tile = 2*col + row.
  const int64_t expected[4][8] = {
      {0, 2, 4, 6, 8, 10, 12, 14},
      {1, 3, 5, 7, 9, 11, 13, 15},
      {16, 18, 20, 22, 24, 26, 28, 30},
      {17, 19, 21, 23, 25, 27, 29, 31},
  };
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      EXPECT_EQ(LinearIndexWithTiles({i, j}, {4, 8}, {{2, 4}, {2, 1}}), expected[i][j]) << i << "," << j;
    }
  }
}

TEST(TileMathTest, CombinedDimensionsEqualTheFlattenedShape) {
  // F32[2,7,8,11,10] with (*,*,2,*,3) == F32[112,110] with (2,3).
  const std::vector<int64_t> dims = {2, 7, 8, 11, 10};
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 7; ++b)
      for (int64_t c = 0; c < 8; ++c)
        for (int64_t d = 0; d < 11; ++d)
          for (int64_t e = 0; e < 10; ++e) {
            int64_t row = (a * 7 + b) * 8 + c;  // 112 rows
            int64_t col = d * 10 + e;            // 110 columns
            ASSERT_EQ(LinearIndexWithTiles({a, b, c, d, e}, dims, {{-1, -1, 2, -1, 3}}),
                      LinearIndexWithTiles({row, col}, {112, 110}, {{2, 3}}));
          }
}

TEST(TileMathTest, PadReshapeTransposeAgreesWithTheFormula) {
  for (auto [dims, tile] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{3, 5}, {2, 2}}, {{4, 8}, {2, 4}}, {{5, 7, 9}, {4, 3}}, {{6}, {4}}, {{3, 4, 5}, {2, 2, 2}}}) {
    TilingSteps steps = TileAsPadReshapeTranspose(dims, tile);
    std::vector<int64_t> index(dims.size(), 0);
    while (true) {
      // Index in the reshaped (padded) array, then permuted.
      std::vector<int64_t> reshaped;
      size_t offset = dims.size() - tile.size();
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i < offset) {
          reshaped.push_back(index[i]);
        } else {
          reshaped.push_back(index[i] / tile[i - offset]);
          reshaped.push_back(index[i] % tile[i - offset]);
        }
      }
      std::vector<int64_t> transposed;
      for (int64_t p : steps.transpose_permutation) transposed.push_back(reshaped[p]);
      EXPECT_EQ(LinearIndex(transposed, steps.result_dims), LinearIndexWithTiles(index, dims, {tile}));
      int64_t k = static_cast<int64_t>(dims.size()) - 1;
      while (k >= 0 && ++index[k] == dims[k]) index[k--] = 0;
      if (k < 0) break;
    }
  }
}

TEST(TileMathTest, ValidatesTiles) {
  EXPECT_TRUE(ValidateTiles({8, 128}, {{8, 128}, {2, 1}}).ok());
  EXPECT_FALSE(ValidateTiles({8}, {{2, 2}}).ok());
  EXPECT_FALSE(ValidateTiles({8, 8}, {{0, 2}}).ok());
  EXPECT_FALSE(ValidateTiles({8, 8}, {{-2, 2}}).ok());
}

}  // namespace
}  // namespace passlab
