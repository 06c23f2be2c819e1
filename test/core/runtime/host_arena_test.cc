#include <gtest/gtest.h>

#include <cstdint>

#include "core/runtime/host_buffer.h"

namespace passlab {
namespace {

TEST(HostArenaTest, SmallBlocksAreZeroedAndCacheLineAligned) {
  HostArena arena;
  uint8_t* p = arena.Reserve(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_GE(arena.size(), 100);
  EXPECT_FALSE(arena.huge_pages_advised());
  for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], 0) << i;
  p[7] = 42;
  // Big enough already: the same block, contents kept.
  EXPECT_EQ(arena.Reserve(64), p);
  EXPECT_EQ(p[7], 42);
}

TEST(HostArenaTest, LargeBlocksAreHugePageAlignedAndGrow) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  HostArena arena;
  uint8_t* p = arena.Reserve(3 * kHugePage + 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePage, 0u);
  EXPECT_EQ(arena.size(), 4 * kHugePage);
  EXPECT_EQ(p[3 * kHugePage], 0);
  p[0] = 1;
  uint8_t* q = arena.Reserve(5 * kHugePage);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(arena.size(), 5 * kHugePage);
  EXPECT_EQ(q[0], 0);  // a new block, zeroed
}

}  // namespace
}  // namespace passlab
