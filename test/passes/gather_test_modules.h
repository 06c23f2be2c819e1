// HLO text shared by the gather-simplifier and gather-expander tests.
#ifndef PASSLAB_TEST_PASSES_GATHER_TEST_MODULES_H_
#define PASSLAB_TEST_PASSES_GATHER_TEST_MODULES_H_

namespace passlab {
namespace gather_test {

// Embedding lookup: rows of a table by a [2,3] index array.
inline constexpr char kRowGather[] = R"(
ENTRY e {
  table = f32[7,4] parameter(0)
  idx = s32[2,3] parameter(1)
  ROOT g = f32[2,3,4] gather(table, idx), offset_dims={2}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=2, slice_sizes={1,4}
})";

// Index vectors in the middle of the indices, mapped out of order onto a
// rank-3 operand; offset dims interleaved with batch dims in the output.
inline constexpr char kGeneralGather[] = R"(
ENTRY e {
  op = f32[5,6,4] parameter(0)
  idx = s32[3,2,2] constant({{{1,4},{0,0}},{{3,2},{5,9}},{{-2,1},{2,3}}})
  ROOT g = f32[3,2,2,2] gather(op, idx), offset_dims={1,3}, collapsed_slice_dims={1},
      start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,1,2}
})";

}  // namespace gather_test
}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_GATHER_TEST_MODULES_H_
