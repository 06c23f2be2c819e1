// The device routines' own kernels (cuda_routine_thunk.cc), as PTX that the
// CUDA runtime loads with cuModuleLoadDataEx like the emitted kernels:
// passlab_sort_rows (a bitonic sort of each line's (key, index) pairs in
// shared memory), passlab_sort_gather (the permutation applied to every
// operand), the cholesky mask (zero the other triangle, NaN for a failed
// factorization) and the strided pointer arrays of batched library calls
// (written on the device, so a captured step replays them).
#include "core/backends/cuda/cuda_routine_ptx.h"

namespace passlab {

extern const char kCudaRoutinesPtx[] = R"PTX(
.version 7.0
.target sm_75
.address_size 64

.extern .shared .align 8 .b8 smem[];

// One block per line: (key, index) pairs in shared memory, padded to a
// power of two with (max, max), bitonic-sorted ascending, the indices
// written to perm at the line's positions.
.visible .entry passlab_sort_rows(
    .param .u64 p_in, .param .u64 p_perm, .param .u64 p_length, .param .u64 p_inner,
    .param .u32 p_width, .param .u32 p_kind, .param .u32 p_descending, .param .u32 p_padded)
{
  .reg .pred %p<12>;
  .reg .b32 %r<24>;
  .reg .b64 %rd<40>;

  ld.param.u64 %rd1, [p_in];
  ld.param.u64 %rd2, [p_perm];
  ld.param.u64 %rd3, [p_length];
  ld.param.u64 %rd4, [p_inner];
  ld.param.u32 %r1, [p_width];
  ld.param.u32 %r2, [p_kind];
  ld.param.u32 %r3, [p_descending];
  ld.param.u32 %r4, [p_padded];
  mov.u32 %r5, %tid.x;
  mov.u32 %r6, %ntid.x;
  mov.u32 %r7, %ctaid.x;
  // base = (row / inner) * length * inner + row % inner
  cvt.u64.u32 %rd5, %r7;
  div.u64 %rd6, %rd5, %rd4;
  rem.u64 %rd7, %rd5, %rd4;
  mul.lo.u64 %rd6, %rd6, %rd3;
  mul.lo.u64 %rd6, %rd6, %rd4;
  add.u64 %rd8, %rd6, %rd7;
  // keys at smem, indices at smem + 8 * padded
  mov.u64 %rd9, smem;
  cvt.u64.u32 %rd10, %r4;
  shl.b64 %rd11, %rd10, 3;
  add.u64 %rd11, %rd9, %rd11;
  // sign = 1 << (8 width - 1), mask = (1 << 8 width) - 1 (all ones at 64)
  shl.b32 %r8, %r1, 3;
  sub.u32 %r9, %r8, 1;
  mov.u64 %rd12, 1;
  shl.b64 %rd13, %rd12, %r9;
  shl.b64 %rd14, %rd12, %r8;
  setp.eq.u32 %p1, %r8, 64;
  sub.u64 %rd14, %rd14, 1;
  selp.b64 %rd14, -1, %rd14, %p1;
  cvt.u64.u32 %rd15, %r1;

  mov.u32 %r10, %r5;
LOAD_LOOP:
  setp.ge.u32 %p2, %r10, %r4;
  @%p2 bra LOAD_DONE;
  cvt.u64.u32 %rd16, %r10;
  mov.u64 %rd17, -1;
  mov.u32 %r11, -1;
  setp.ge.u64 %p3, %rd16, %rd3;
  @%p3 bra LOAD_STORE;
  mul.lo.u64 %rd18, %rd16, %rd4;
  add.u64 %rd18, %rd18, %rd8;
  mul.lo.u64 %rd18, %rd18, %rd15;
  add.u64 %rd18, %rd18, %rd1;
  setp.eq.u32 %p4, %r1, 1;
  @%p4 bra LOAD_1;
  setp.eq.u32 %p4, %r1, 2;
  @%p4 bra LOAD_2;
  setp.eq.u32 %p4, %r1, 4;
  @%p4 bra LOAD_4;
  ld.global.u64 %rd17, [%rd18];
  bra.uni LOADED;
LOAD_1:
  ld.global.u8 %r12, [%rd18];
  cvt.u64.u32 %rd17, %r12;
  bra.uni LOADED;
LOAD_2:
  ld.global.u16 %r12, [%rd18];
  cvt.u64.u32 %rd17, %r12;
  bra.uni LOADED;
LOAD_4:
  ld.global.u32 %r12, [%rd18];
  cvt.u64.u32 %rd17, %r12;
LOADED:
  // kind 1 (signed): flip the sign bit
  setp.eq.u32 %p5, %r2, 1;
  @!%p5 bra NOT_SIGNED;
  xor.b64 %rd17, %rd17, %rd13;
  bra.uni TRANSFORMED;
NOT_SIGNED:
  setp.lt.u32 %p5, %r2, 2;
  @%p5 bra TRANSFORMED;
  // kind 3 (float, IEEE order): -0 is +0
  setp.eq.u32 %p6, %r2, 3;
  not.b64 %rd19, %rd13;
  and.b64 %rd19, %rd19, %rd17;
  setp.eq.u64 %p7, %rd19, 0;
  and.pred %p6, %p6, %p7;
  selp.b64 %rd17, 0, %rd17, %p6;
  // kinds 2, 3 (float): negative -> ~x & mask, else x | sign
  and.b64 %rd19, %rd17, %rd13;
  setp.ne.u64 %p8, %rd19, 0;
  not.b64 %rd20, %rd17;
  and.b64 %rd20, %rd20, %rd14;
  or.b64 %rd21, %rd17, %rd13;
  selp.b64 %rd17, %rd20, %rd21, %p8;
TRANSFORMED:
  setp.ne.u32 %p9, %r3, 0;
  not.b64 %rd22, %rd17;
  selp.b64 %rd17, %rd22, %rd17, %p9;
  mov.u32 %r11, %r10;
LOAD_STORE:
  shl.b64 %rd23, %rd16, 3;
  add.u64 %rd23, %rd23, %rd9;
  st.shared.u64 [%rd23], %rd17;
  shl.b64 %rd24, %rd16, 2;
  add.u64 %rd24, %rd24, %rd11;
  st.shared.u32 [%rd24], %r11;
  add.u32 %r10, %r10, %r6;
  bra.uni LOAD_LOOP;
LOAD_DONE:
  bar.sync 0;

  // for (k = 2; k <= padded; k *= 2) for (j = k / 2; j > 0; j /= 2)
  mov.u32 %r13, 2;
K_LOOP:
  setp.gt.u32 %p2, %r13, %r4;
  @%p2 bra SORTED;
  shr.u32 %r14, %r13, 1;
J_LOOP:
  setp.eq.u32 %p2, %r14, 0;
  @%p2 bra J_DONE;
  mov.u32 %r10, %r5;
P_LOOP:
  setp.ge.u32 %p3, %r10, %r4;
  @%p3 bra P_DONE;
  xor.b32 %r15, %r10, %r14;
  setp.le.u32 %p4, %r15, %r10;
  @%p4 bra P_NEXT;
  cvt.u64.u32 %rd16, %r10;
  cvt.u64.u32 %rd25, %r15;
  shl.b64 %rd26, %rd16, 3;
  add.u64 %rd26, %rd26, %rd9;
  shl.b64 %rd27, %rd25, 3;
  add.u64 %rd27, %rd27, %rd9;
  shl.b64 %rd28, %rd16, 2;
  add.u64 %rd28, %rd28, %rd11;
  shl.b64 %rd29, %rd25, 2;
  add.u64 %rd29, %rd29, %rd11;
  ld.shared.u64 %rd30, [%rd26];
  ld.shared.u64 %rd31, [%rd27];
  ld.shared.u32 %r16, [%rd28];
  ld.shared.u32 %r17, [%rd29];
  // a > b: ka > kb, or ka == kb and ia > ib
  setp.gt.u64 %p5, %rd30, %rd31;
  setp.eq.u64 %p6, %rd30, %rd31;
  setp.gt.u32 %p7, %r16, %r17;
  and.pred %p6, %p6, %p7;
  or.pred %p5, %p5, %p6;
  // a < b
  setp.lt.u64 %p8, %rd30, %rd31;
  setp.eq.u64 %p6, %rd30, %rd31;
  setp.lt.u32 %p7, %r16, %r17;
  and.pred %p6, %p6, %p7;
  or.pred %p8, %p8, %p6;
  // ascending where (p & k) == 0: swap when a > b; else when a < b
  and.b32 %r18, %r10, %r13;
  setp.eq.u32 %p9, %r18, 0;
  selp.u32 %r19, 1, 0, %p5;
  selp.u32 %r20, 1, 0, %p8;
  selp.u32 %r21, %r19, %r20, %p9;
  setp.eq.u32 %p10, %r21, 0;
  @%p10 bra P_NEXT;
  st.shared.u64 [%rd26], %rd31;
  st.shared.u64 [%rd27], %rd30;
  st.shared.u32 [%rd28], %r17;
  st.shared.u32 [%rd29], %r16;
P_NEXT:
  add.u32 %r10, %r10, %r6;
  bra.uni P_LOOP;
P_DONE:
  bar.sync 0;
  shr.u32 %r14, %r14, 1;
  bra.uni J_LOOP;
J_DONE:
  shl.b32 %r13, %r13, 1;
  bra.uni K_LOOP;
SORTED:

  // perm[base + p * inner] = index[p] for p < length
  mov.u32 %r10, %r5;
STORE_LOOP:
  cvt.u64.u32 %rd16, %r10;
  setp.ge.u64 %p2, %rd16, %rd3;
  @%p2 bra STORE_DONE;
  shl.b64 %rd24, %rd16, 2;
  add.u64 %rd24, %rd24, %rd11;
  ld.shared.u32 %r11, [%rd24];
  mul.lo.u64 %rd18, %rd16, %rd4;
  add.u64 %rd18, %rd18, %rd8;
  shl.b64 %rd18, %rd18, 2;
  add.u64 %rd18, %rd18, %rd2;
  st.global.u32 [%rd18], %r11;
  add.u32 %r10, %r10, %r6;
  bra.uni STORE_LOOP;
STORE_DONE:
  ret;
}

// out[e] = in[e + (perm[e] - p) * inner] with p = (e / inner) % length, for
// elements of `width` bytes; grid-stride over `count` elements.
.visible .entry passlab_sort_gather(
    .param .u64 p_out, .param .u64 p_in, .param .u64 p_perm, .param .u64 p_count,
    .param .u64 p_length, .param .u64 p_inner, .param .u32 p_width)
{
  .reg .pred %p<6>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<24>;

  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_in];
  ld.param.u64 %rd3, [p_perm];
  ld.param.u64 %rd4, [p_count];
  ld.param.u64 %rd5, [p_length];
  ld.param.u64 %rd6, [p_inner];
  ld.param.u32 %r1, [p_width];
  cvt.u64.u32 %rd7, %r1;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mov.u32 %r5, %nctaid.x;
  mul.wide.u32 %rd8, %r2, %r3;
  cvt.u64.u32 %rd9, %r4;
  add.u64 %rd8, %rd8, %rd9;
  mul.wide.u32 %rd10, %r5, %r3;
G_LOOP:
  setp.ge.u64 %p1, %rd8, %rd4;
  @%p1 bra G_DONE;
  shl.b64 %rd11, %rd8, 2;
  add.u64 %rd11, %rd11, %rd3;
  ld.global.u32 %r6, [%rd11];
  cvt.u64.u32 %rd12, %r6;
  div.u64 %rd13, %rd8, %rd6;
  rem.u64 %rd13, %rd13, %rd5;
  sub.u64 %rd14, %rd12, %rd13;
  mul.lo.u64 %rd14, %rd14, %rd6;
  add.u64 %rd14, %rd14, %rd8;
  mul.lo.u64 %rd15, %rd14, %rd7;
  add.u64 %rd15, %rd15, %rd2;
  mul.lo.u64 %rd16, %rd8, %rd7;
  add.u64 %rd16, %rd16, %rd1;
  setp.eq.u32 %p2, %r1, 1;
  @%p2 bra G_1;
  setp.eq.u32 %p2, %r1, 2;
  @%p2 bra G_2;
  setp.eq.u32 %p2, %r1, 4;
  @%p2 bra G_4;
  ld.global.u64 %rd17, [%rd15];
  st.global.u64 [%rd16], %rd17;
  bra.uni G_NEXT;
G_1:
  ld.global.u8 %r7, [%rd15];
  st.global.u8 [%rd16], %r7;
  bra.uni G_NEXT;
G_2:
  ld.global.u16 %r7, [%rd15];
  st.global.u16 [%rd16], %r7;
  bra.uni G_NEXT;
G_4:
  ld.global.u32 %r7, [%rd15];
  st.global.u32 [%rd16], %r7;
G_NEXT:
  add.u64 %rd8, %rd8, %rd10;
  bra.uni G_LOOP;
G_DONE:
  ret;
}

// After potrf on row-major n x n matrices (`words` 32-bit words per
// element): a matrix whose info is not 0 becomes the NaN pattern
// nan0..nan3, else the triangle potrf did not write becomes 0 (above the
// diagonal for `lower`, below it otherwise). Grid-stride over `count`.
.visible .entry passlab_cholesky_mask(
    .param .u64 p_a, .param .u64 p_info, .param .u64 p_count, .param .u64 p_n,
    .param .u32 p_words, .param .u32 p_lower,
    .param .u32 p_nan0, .param .u32 p_nan1, .param .u32 p_nan2, .param .u32 p_nan3)
{
  .reg .pred %p<8>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<24>;

  ld.param.u64 %rd1, [p_a];
  ld.param.u64 %rd2, [p_info];
  ld.param.u64 %rd3, [p_count];
  ld.param.u64 %rd4, [p_n];
  ld.param.u32 %r1, [p_words];
  ld.param.u32 %r2, [p_lower];
  ld.param.u32 %r3, [p_nan0];
  ld.param.u32 %r4, [p_nan1];
  ld.param.u32 %r5, [p_nan2];
  ld.param.u32 %r6, [p_nan3];
  mul.lo.u64 %rd5, %rd4, %rd4;
  shl.b32 %r7, %r1, 2;
  cvt.u64.u32 %rd6, %r7;
  mov.u32 %r8, %ctaid.x;
  mov.u32 %r9, %ntid.x;
  mov.u32 %r10, %tid.x;
  mov.u32 %r11, %nctaid.x;
  mul.wide.u32 %rd7, %r8, %r9;
  cvt.u64.u32 %rd8, %r10;
  add.u64 %rd7, %rd7, %rd8;
  mul.wide.u32 %rd9, %r11, %r9;
M_LOOP:
  setp.ge.u64 %p1, %rd7, %rd3;
  @%p1 bra M_DONE;
  div.u64 %rd10, %rd7, %rd5;
  rem.u64 %rd11, %rd7, %rd5;
  div.u64 %rd12, %rd11, %rd4;
  rem.u64 %rd13, %rd11, %rd4;
  shl.b64 %rd14, %rd10, 2;
  add.u64 %rd14, %rd14, %rd2;
  ld.global.u32 %r12, [%rd14];
  mul.lo.u64 %rd15, %rd7, %rd6;
  add.u64 %rd15, %rd15, %rd1;
  setp.ne.u32 %p2, %r12, 0;
  @%p2 bra M_NAN;
  // row %rd12, column %rd13: zero where lower ? c > r : c < r
  setp.gt.u64 %p3, %rd13, %rd12;
  setp.lt.u64 %p4, %rd13, %rd12;
  setp.ne.u32 %p5, %r2, 0;
  selp.u32 %r13, 1, 0, %p3;
  selp.u32 %r14, 1, 0, %p4;
  selp.u32 %r15, %r13, %r14, %p5;
  setp.eq.u32 %p6, %r15, 0;
  @%p6 bra M_NEXT;
  mov.u32 %r16, 0;
  mov.u32 %r17, 0;
  mov.u32 %r18, 0;
  mov.u32 %r19, 0;
  bra.uni M_STORE;
M_NAN:
  mov.u32 %r16, %r3;
  mov.u32 %r17, %r4;
  mov.u32 %r18, %r5;
  mov.u32 %r19, %r6;
M_STORE:
  st.global.u32 [%rd15], %r16;
  setp.lt.u32 %p7, %r1, 2;
  @%p7 bra M_NEXT;
  st.global.u32 [%rd15+4], %r17;
  setp.lt.u32 %p7, %r1, 4;
  @%p7 bra M_NEXT;
  st.global.u32 [%rd15+8], %r18;
  st.global.u32 [%rd15+12], %r19;
M_NEXT:
  add.u64 %rd7, %rd7, %rd9;
  bra.uni M_LOOP;
M_DONE:
  ret;
}
// out[i] = base + i * stride for i < count (the pointer arrays of batched
// library calls, written on the device so a captured step replays them).
.visible .entry passlab_strided_pointers(
    .param .u64 p_out, .param .u64 p_base, .param .u64 p_stride, .param .u64 p_count)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<12>;

  ld.param.u64 %rd1, [p_out];
  ld.param.u64 %rd2, [p_base];
  ld.param.u64 %rd3, [p_stride];
  ld.param.u64 %rd4, [p_count];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  mul.wide.u32 %rd5, %r1, %r2;
  cvt.u64.u32 %rd6, %r3;
  add.u64 %rd5, %rd5, %rd6;
  mul.wide.u32 %rd7, %r4, %r2;
S_LOOP:
  setp.ge.u64 %p1, %rd5, %rd4;
  @%p1 bra S_DONE;
  mul.lo.u64 %rd8, %rd5, %rd3;
  add.u64 %rd8, %rd8, %rd2;
  shl.b64 %rd9, %rd5, 3;
  add.u64 %rd9, %rd9, %rd1;
  st.global.u64 [%rd9], %rd8;
  add.u64 %rd5, %rd5, %rd7;
  bra.uni S_LOOP;
S_DONE:
  ret;
}
)PTX";

}  // namespace passlab
