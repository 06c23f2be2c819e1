// Indexing maps from the indexing analysis, checked as text and by brute
// force against what the evaluator's semantics read.
#include "core/codegen/indexing_map.h"

#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

class IndexingMapTest : public ::testing::Test {
 protected:
  // The map of the entry root's operand `operand`.
  std::string Map(const std::string& body, int64_t operand = 0) {
    std::string text = body.find("ENTRY") != std::string::npos ? "HloModule m\n" + body + "\n}\n"
                                                               : "HloModule m\nENTRY e {\n" + body + "\n}\n";
    auto m = ParseHloModule(text, "t");
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return "";
    module_ = std::move(*m);
    auto map = ComputeOutputToInputIndexing(*module_->entry_computation()->root_instruction(), operand);
    if (!map.ok()) return std::string(map.status().message());
    map_ = std::make_unique<IndexingMap>(*map);
    return map->ToString();
  }
  std::unique_ptr<HloModule> module_;
  std::unique_ptr<IndexingMap> map_;
};

TEST_F(IndexingMapTest, TransposeSwapsDims) {
  EXPECT_EQ(Map("a = f32[20,40] parameter(0)\nROOT t = f32[40,20] transpose(a), dimensions={1,0}"),
            "(d0, d1) -> (d1, d0), domain: d0 in [0, 39], d1 in [0, 19]");
}

TEST_F(IndexingMapTest, BroadcastReshapeBitcast) {
  EXPECT_EQ(Map("a = f32[5] parameter(0)\nROOT b = f32[3,5,2] broadcast(a), dimensions={1}"),
            "(d0, d1, d2) -> (d1), domain: d0 in [0, 2], d1 in [0, 4], d2 in [0, 1]");
  EXPECT_EQ(Map("a = f32[4,6] parameter(0)\nROOT r = f32[24] reshape(a)"),
            "(d0) -> (d0 floordiv 6, d0 mod 6), domain: d0 in [0, 23]");
  EXPECT_EQ(Map("a = f32[24] parameter(0)\nROOT r = f32[4,6] reshape(a)"),
            "(d0, d1) -> (d0 * 6 + d1), domain: d0 in [0, 3], d1 in [0, 5]");
  // A bitcast that is a physical transpose: [2,3]{1,0} bytes read as [3,2]{0,1}.
  EXPECT_EQ(Map("a = f32[2,3]{1,0} parameter(0)\nROOT b = f32[3,2]{0,1} bitcast(a)"),
            "(d0, d1) -> ((d1 * 3 + d0) floordiv 3, (d1 * 3 + d0) mod 3), domain: d0 in [0, 2], d1 in [0, 1]");
  // Check the bitcast by evaluation: physical offset of (d0, d1) in {0,1}
  // is d0 + 3*d1; the operand element there in {1,0} is (off/3, off%3).
  for (int64_t d0 = 0; d0 < 3; ++d0) {
    for (int64_t d1 = 0; d1 < 2; ++d1) {
      int64_t off = d0 + 3 * d1;
      EXPECT_EQ(map_->Apply({d0, d1}, {}), (std::vector<int64_t>{off / 3, off % 3}));
    }
  }
}

TEST_F(IndexingMapTest, SliceReverseIota) {
  EXPECT_EQ(Map("a = f32[10,9] parameter(0)\nROOT s = f32[3,4] slice(a), slice={[1:7:2], [0:8:2]}"),
            "(d0, d1) -> (d0 * 2 + 1, d1 * 2), domain: d0 in [0, 2], d1 in [0, 3]");
  EXPECT_EQ(Map("a = f32[4,5] parameter(0)\nROOT r = f32[4,5] reverse(a), dimensions={1}"),
            "(d0, d1) -> (d0, 4 - d1), domain: d0 in [0, 3], d1 in [0, 4]");
  EXPECT_EQ(Map("ROOT i = s32[4] iota(), iota_dimension=0"), "indexing: i has no operand 0");
}

TEST_F(IndexingMapTest, PadIsAMapPlusConstraints) {
  EXPECT_EQ(Map("a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT p = f32[12] pad(a, z), padding=1_4_1"),
            "(d0) -> ((d0 - 1) floordiv 2), domain: d0 in [0, 11], d0 - 1 in [0, 6], (d0 - 1) mod 2 in [0, 0]");
  EXPECT_TRUE(map_->Contains({3}, {}));
  EXPECT_FALSE(map_->Contains({4}, {}));   // interior padding
  EXPECT_FALSE(map_->Contains({0}, {}));   // low edge
  EXPECT_FALSE(map_->Contains({9}, {}));   // high edge
  EXPECT_EQ(map_->Apply({7}, {}), std::vector<int64_t>{3});
  EXPECT_EQ(Map("a = f32[4] parameter(0)\nz = f32[] constant(0)\nROOT p = f32[12] pad(a, z), padding=1_4_1", 1),
            "(d0) -> (), domain: d0 in [0, 11]");
}

TEST_F(IndexingMapTest, ConcatenateNarrowsTheDomain) {
  EXPECT_EQ(Map("a = f32[2,3] parameter(0)\nb = f32[2,5] parameter(1)\n"
                "ROOT c = f32[2,8] concatenate(a, b), dimensions={1}", 1),
            "(d0, d1) -> (d0, d1 - 3), domain: d0 in [0, 1], d1 in [3, 7]");
}

TEST_F(IndexingMapTest, DynamicSliceReduceDotAndGatherUseSymbols) {
  EXPECT_EQ(Map("a = f32[10,8] parameter(0)\ni = s32[] parameter(1)\n"
                "ROOT d = f32[2,3] dynamic-slice(a, i, i), dynamic_slice_sizes={2,3}"),
            "(d0, d1)[s0, s1] -> (d0 + s0, d1 + s1), domain: d0 in [0, 1], d1 in [0, 2], s0 in [0, 8], s1 in [0, 5]");
  EXPECT_EQ(Map("add {\nx = f32[] parameter(0)\ny = f32[] parameter(1)\nROOT s = f32[] add(x, y)\n}\n"
                "ENTRY e2 {\na = f32[4,7,3] parameter(0)\nz = f32[] constant(0)\n"
                "ROOT r = f32[7] reduce(a, z), dimensions={0,2}, to_apply=add"),
            "(d0)[s0, s1] -> (s0, d0, s1), domain: d0 in [0, 6], s0 in [0, 3], s1 in [0, 2]");
  EXPECT_EQ(Map("a = f32[5,7] parameter(0)\nb = f32[7,3] parameter(1)\n"
                "ROOT d = f32[5,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}", 1),
            "(d0, d1)[s0] -> (s0, d1), domain: d0 in [0, 4], d1 in [0, 2], s0 in [0, 6]");
  EXPECT_EQ(Map("a = f32[10,8] parameter(0)\ni = s32[6,2] parameter(1)\n"
                "ROOT g = f32[6,3,4] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={}, "
                "start_index_map={0,1}, index_vector_dim=1, slice_sizes={3,4}"),
            "(d0, d1, d2)[s0, s1] -> (d1 + s0, d2 + s1), domain: d0 in [0, 5], d1 in [0, 2], d2 in [0, 3], "
            "s0 in [0, 7], s1 in [0, 4]");
  EXPECT_EQ(Map("a = f32[10,8] parameter(0)\ni = s32[6,2] parameter(1)\n"
                "ROOT g = f32[6,3,4] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={}, "
                "start_index_map={0,1}, index_vector_dim=1, slice_sizes={3,4}", 1),
            "(d0, d1, d2)[s0] -> (d0, s0), domain: d0 in [0, 5], d1 in [0, 2], d2 in [0, 3], s0 in [0, 1]");
}

TEST(IndexingMapComposeTest, TransposeOfBroadcastComposes) {
  IndexingMap transpose({{0, 4}, {0, 2}}, {}, {AffineExpr::Dim(1), AffineExpr::Dim(0)});
  IndexingMap broadcast({{0, 2}, {0, 4}}, {}, {AffineExpr::Dim(1)});
  IndexingMap composed = ComposeIndexingMaps(transpose, broadcast);
  EXPECT_EQ(composed.ToString(), "(d0, d1) -> (d0), domain: d0 in [0, 4], d1 in [0, 2]");
  EXPECT_FALSE(composed.IsIdentity());
  IndexingMap identity = ComposeIndexingMaps(transpose, IndexingMap({{0, 2}, {0, 4}}, {},
                                                                    {AffineExpr::Dim(1), AffineExpr::Dim(0)}));
  EXPECT_TRUE(identity.IsIdentity()) << identity.ToString();
}

}  // namespace
}  // namespace passlab
