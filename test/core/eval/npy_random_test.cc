// .npy reading/writing and seeded random inputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/eval/npy.h"
#include "core/eval/random_inputs.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("passlab_npy_test_" + name)).string();
}

TEST(NpyTest, RoundTripsEveryNativeDtype) {
  for (PrimitiveType t : {PrimitiveType::kPred, PrimitiveType::kS8, PrimitiveType::kU16, PrimitiveType::kS32,
                          PrimitiveType::kS64, PrimitiveType::kU64, PrimitiveType::kF16, PrimitiveType::kF32,
                          PrimitiveType::kF64, PrimitiveType::kC64, PrimitiveType::kC128}) {
    Literal l = MakeRandomLiteral(Shape(t, {2, 3}), 5);
    std::string path = TempPath("rt.npy");
    ASSERT_TRUE(WriteNpy(l, path).ok());
    absl::StatusOr<Literal> back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_EQ(back->shape().element_type(), t) << PrimitiveTypeName(t);
    EXPECT_EQ(*back, l) << PrimitiveTypeName(t);
  }
  // Scalars and empty arrays.
  std::string path = TempPath("scalar.npy");
  ASSERT_TRUE(WriteNpy(Literal::Scalar<float>(2.5f), path).ok());
  EXPECT_EQ(ReadNpy(path)->ToString(), "2.5");
  ASSERT_TRUE(WriteNpy(Literal(Shape(PrimitiveType::kS32, {0, 4})), path).ok());
  EXPECT_EQ(ReadNpy(path)->shape().ToString(false), "s32[0,4]");
}

TEST(NpyTest, TypesWithoutNumPyDtypeTravelWidened) {
  Literal l = Literal::Vector<bfloat16>({bfloat16(1.5f), bfloat16(-3.0f)});
  EXPECT_EQ(NpyDescr(PrimitiveType::kBF16), "<f4");
  EXPECT_EQ(NpyDescr(PrimitiveType::kS4), "|i1");
  std::string path = TempPath("bf16.npy");
  ASSERT_TRUE(WriteNpy(l, path).ok());
  absl::StatusOr<Literal> back = ReadNpy(path);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->shape().element_type(), PrimitiveType::kF32);
  EXPECT_EQ(back->Convert(PrimitiveType::kBF16)->ToString(), l.ToString());
}

TEST(NpyTest, ReadsVersion2HeadersAndRejectsBadFiles) {
  std::string header = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
  header.append(64 - (12 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string path = TempPath("v2.npy");
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x02\x00", 8);
    uint32_t len = static_cast<uint32_t>(header.size());
    out.write(reinterpret_cast<const char*>(&len), 4);
    out << header;
    int16_t data[2] = {-7, 300};
    out.write(reinterpret_cast<const char*>(data), sizeof(data));
  }
  absl::StatusOr<Literal> l = ReadNpy(path);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->ToString(), "{-7, 300}");
  {
    std::ofstream out(path, std::ios::binary);
    out << "not numpy at all";
  }
  EXPECT_NE(std::string(ReadNpy(path).status().message()).find("bad magic"), std::string::npos);
  EXPECT_FALSE(ReadNpy(TempPath("missing.npy")).ok());
}

TEST(RandomInputsTest, DeterministicAndIndicesInBounds) {
  auto m = ParseHloModule(R"(
ENTRY e {
  t = f32[10,4] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  idx = s64[5,1] parameter(3)
  d = f32[3,4] dynamic-slice(t, i, j), dynamic_slice_sizes={3,4}
  g = f32[5,2] gather(t, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
  ROOT r = (f32[3,4], f32[5,2]) tuple(d, g)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloComputation& entry = *(*m)->entry_computation();
  std::vector<Literal> a = MakeRandomArguments(entry, 11), b = MakeRandomArguments(entry, 11);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(a[k], b[k]);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<Literal> args = MakeRandomArguments(entry, seed);
    EXPECT_LT(args[1].GetInt(0), 8);  // 10 - 3 + 1, capped at 8
    EXPECT_EQ(args[2].GetInt(0), 0);  // 4 - 4 + 1: only 0 fits
    for (int64_t k = 0; k < 5; ++k) {
      EXPECT_GE(args[3].GetInt(k), 0);
      EXPECT_LT(args[3].GetInt(k), 8);
    }
    for (int64_t k = 0; k < args[0].element_count(); ++k) {
      double v = args[0].GetDouble(k);
      ASSERT_TRUE(v >= -1 && v < 1);
    }
  }
  // Narrow integer types stay in range; e8m0 (no zero, no sign) gets powers of two.
  Literal s2 = MakeRandomLiteral(Shape(PrimitiveType::kS2, {64}), 1);
  for (int64_t k = 0; k < 64; ++k) EXPECT_TRUE(s2.GetInt(k) == 0 || s2.GetInt(k) == 1);
  Literal e8 = MakeRandomLiteral(Shape(PrimitiveType::kF8E8M0FNU, {64}), 1);
  for (int64_t k = 0; k < 64; ++k) EXPECT_FALSE(std::isnan(e8.GetDouble(k)));
}

}  // namespace
}  // namespace passlab
