// core/ir's shared utilities: the status macros, literal leaves, whole-file
// reading and byte formatting.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/ir/file_util.h"
#include "core/ir/literal_util.h"
#include "core/ir/status_macros.h"

namespace passlab {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::Status CheckEven(int x) { return x % 2 == 0 ? absl::OkStatus() : absl::InvalidArgumentError("odd"); }

// The macros evaluate their expression once and return its error unchanged.
absl::StatusOr<int> Quarter(int x, int* evaluations) {
  ASSIGN_OR_RETURN(int half, (++*evaluations, Half(x)));
  ASSIGN_OR_RETURN(half, Half(half));  // an existing variable
  return half;
}

absl::Status BothEven(int a, int b, int* evaluations) {
  RETURN_IF_ERROR((++*evaluations, CheckEven(a)));
  RETURN_IF_ERROR(CheckEven(b));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> Boxed(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  return std::make_unique<int>(half);
}

absl::Status UnboxTwice(int x, int* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> a, Boxed(x));  // move-only values
  ASSIGN_OR_RETURN(std::unique_ptr<int> b, Boxed(*a * 2));
  *out = *b;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnAssignsOrPropagates) {
  int evaluations = 0;
  EXPECT_EQ(*Quarter(12, &evaluations), 3);
  EXPECT_EQ(evaluations, 1);
  absl::StatusOr<int> odd = Quarter(6, &evaluations);  // 6 / 2 = 3 is odd
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status(), absl::InvalidArgumentError("odd"));
  EXPECT_EQ(evaluations, 2);
  int out = 0;
  EXPECT_TRUE(UnboxTwice(8, &out).ok());
  EXPECT_EQ(out, 4);
  EXPECT_EQ(UnboxTwice(7, &out).code(), absl::StatusCode::kInvalidArgument);
}

TEST(StatusMacrosTest, ReturnIfErrorStopsAtTheFirstError) {
  int evaluations = 0;
  EXPECT_TRUE(BothEven(2, 4, &evaluations).ok());
  EXPECT_EQ(evaluations, 1);
  EXPECT_EQ(BothEven(1, 4, &evaluations), absl::InvalidArgumentError("odd"));
  EXPECT_EQ(BothEven(2, 3, &evaluations), absl::InvalidArgumentError("odd"));
  EXPECT_EQ(evaluations, 3);
}

TEST(LiteralUtilTest, FlattenLeavesIsDepthFirst) {
  std::vector<Literal> inner;
  inner.push_back(Literal::Scalar<int32_t>(2));
  inner.push_back(Literal::Tuple({}));
  std::vector<Literal> outer;
  outer.push_back(Literal::Scalar<float>(1));
  outer.push_back(Literal::Tuple(std::move(inner)));
  outer.push_back(Literal::Scalar<float>(3));
  Literal t = Literal::Tuple(std::move(outer));
  std::vector<const Literal*> leaves;
  FlattenLeaves(t, leaves);
  ASSERT_EQ(leaves.size(), 3u);
  EXPECT_EQ(leaves[0], &t.tuple_elements()[0]);
  EXPECT_EQ(leaves[1], &t.tuple_elements()[1].tuple_elements()[0]);
  EXPECT_EQ(leaves[2], &t.tuple_elements()[2]);
  Literal a = Literal::Scalar<float>(1);
  leaves.clear();
  FlattenLeaves(a, leaves);  // an array is its own leaf
  ASSERT_EQ(leaves.size(), 1u);
  EXPECT_EQ(leaves[0], &a);
}

TEST(FileUtilTest, ReadsWholeFilesAndNamesMissingOnes) {
  std::filesystem::path path = std::filesystem::temp_directory_path() / "passlab_file_util_test.bin";
  std::string bytes("a\0b\r\nc", 6);
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  absl::StatusOr<std::string> read = ReadFileToString(path.string());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, bytes);
  std::filesystem::remove(path);
  absl::StatusOr<std::string> missing = ReadFileToString(path.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), path.string() + ": cannot open file");
}

TEST(FileUtilTest, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(2048), "2.0 KiB");
  EXPECT_EQ(FormatBytes(1536 * 1024), "1.50 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 30), "3.00 GiB");
}

}  // namespace
}  // namespace passlab
