// Buffer assignment on hand-built modules with known answers: reuse after
// the last use, tuple/get-tuple-element/bitcast aliasing, in-place
// dynamic-update-slice (and when it must not be), parameter donation.
#include "core/runtime/buffer_assignment.h"

#include <gtest/gtest.h>

#include "core/ir/hlo_instruction.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

struct Assigned {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<BufferAssignment> assignment;
  const HloInstruction* Get(std::string_view name) const {
    return module->entry_computation()->GetInstructionWithName(name);
  }
  const BufferSlice& Slice(std::string_view name, int64_t leaf = 0) const {
    return assignment->LeafSlices(Get(name))[leaf];
  }
};

Assigned Assign(const std::string& text) {
  Assigned a;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return a;
  a.module = std::move(*m);
  absl::StatusOr<std::unique_ptr<BufferAssignment>> ba = BufferAssignment::ForEntry(*a.module);
  EXPECT_TRUE(ba.ok()) << ba.status().message();
  if (ba.ok()) a.assignment = std::move(*ba);
  return a;
}

TEST(BufferAssignmentTest, ReusesSpaceAfterLastUse) {
  // f32[256] = 1 KiB each. a dies at b, b at c, c at d.
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  a = f32[256] negate(p)
  b = f32[256] exponential(a)
  c = f32[256] negate(b)
  ROOT d = f32[256] add(c, p)
})");
  ASSERT_NE(a.assignment, nullptr);
  const BufferAssignment& ba = *a.assignment;
  EXPECT_EQ(ba.total_bytes(), 4096);
  EXPECT_EQ(ba.peak_live_bytes(), 2048);
  EXPECT_EQ(ba.arena_bytes(), 2048);
  EXPECT_EQ(ba.parameter_bytes(), 1024);
  EXPECT_EQ(a.Slice("a").kind, BufferSlice::Kind::kArena);
  EXPECT_EQ(a.Slice("a").offset, 0);
  EXPECT_EQ(a.Slice("b").offset, 1024);
  EXPECT_EQ(a.Slice("c").offset, 0);  // a is dead
  EXPECT_EQ(a.Slice("d").offset, 1024);
  EXPECT_EQ(a.Slice("p").kind, BufferSlice::Kind::kParameter);
  EXPECT_TRUE(ba.BufferAt(a.Get("d"), 0).live_out);
  EXPECT_NE(ba.ToString().find("peak live 2.0 KiB"), std::string::npos) << ba.ToString();
}

TEST(BufferAssignmentTest, TupleGetTupleElementAndBitcastAlias) {
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  x = f32[8] negate(p)
  y = f32[4,2] exponential(f32[4,2] bitcast(x))
  t = (f32[8], (f32[4,2], f32[8])) tuple(x, (f32[4,2], f32[8]) tuple(y, p))
  g = f32[4,2] get-tuple-element(t), index=1
  ROOT r = f32[4,2] get-tuple-element((f32[4,2], f32[8]) get-tuple-element(t), index=1), index=0
})");
  ASSERT_NE(a.assignment, nullptr);
  const std::vector<BufferSlice>& t = a.assignment->LeafSlices(a.Get("t"));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], a.Slice("x"));
  EXPECT_EQ(t[1], a.Slice("y"));
  EXPECT_EQ(t[2], a.Slice("p"));
  EXPECT_EQ(a.Slice("r"), a.Slice("y"));
  // x stays live while the tuple holding it is used.
  EXPECT_NE(a.Slice("x").offset, a.Slice("y").offset);
  EXPECT_TRUE(a.assignment->BufferAt(a.Get("y"), 0).live_out);
}

TEST(BufferAssignmentTest, DynamicUpdateSliceInPlaceAtLastUse) {
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  x = f32[16] negate(p)
  ROOT d = f32[16] dynamic-update-slice(x, u, i)
})");
  ASSERT_NE(a.assignment, nullptr);
  EXPECT_TRUE(a.assignment->IsInPlace(a.Get("d")));
  EXPECT_EQ(a.Slice("d"), a.Slice("x"));
  EXPECT_EQ(a.assignment->total_bytes(), 64);
}

TEST(BufferAssignmentTest, DynamicUpdateSliceCopiesWhenOperandLivesOn) {
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  x = f32[16] negate(p)
  d = f32[16] dynamic-update-slice(x, u, i)
  ROOT t = (f32[16], f32[16]) tuple(d, x)
})");
  ASSERT_NE(a.assignment, nullptr);
  EXPECT_FALSE(a.assignment->IsInPlace(a.Get("d")));
  EXPECT_NE(a.Slice("d").offset, a.Slice("x").offset);
  // On an undonated parameter, never in place.
  Assigned b = Assign(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(p, u, i)
})");
  ASSERT_NE(b.assignment, nullptr);
  EXPECT_FALSE(b.assignment->IsInPlace(b.Get("d")));
  EXPECT_EQ(b.Slice("d").kind, BufferSlice::Kind::kArena);
}

TEST(BufferAssignmentTest, GemmAccumulatesIntoItsCWhereItMay) {
  // The gemm rewriter's beta*C fold aliases the result (element 0 beside
  // the workspace) with C (XLA: "Force bias input to alias with output,
  // as GEMM operates in-place"); the result then takes C's buffer when C
  // dies there, and a buffer of its own when C lives on.
  const std::string gemm =
      R"(custom-call(a, b, c), custom_call_target="__blas$gemm", output_to_operand_aliasing={{0}: (2, {})}, )"
      R"(backend_config={"gemm_backend_config":{"alpha_real":1,"beta":1,"dot_dimension_numbers":{)"
      R"("lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}})";
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  w = f32[8,8] parameter(2)
  c = f32[8,8] negate(w)
  g = (f32[8,8], s8[1024]) )" + gemm + R"(
  ROOT r = f32[8,8] get-tuple-element(g), index=0
})");
  ASSERT_NE(a.assignment, nullptr);
  EXPECT_TRUE(a.assignment->IsInPlace(a.Get("g")));
  EXPECT_EQ(a.Slice("g", 0), a.Slice("c"));
  EXPECT_NE(a.Slice("g", 1).offset, a.Slice("c").offset);  // the workspace has its own
  Assigned b = Assign(R"(HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  w = f32[8,8] parameter(2)
  c = f32[8,8] negate(w)
  g = (f32[8,8], s8[1024]) )" + gemm + R"(
  r = f32[8,8] get-tuple-element(g), index=0
  ROOT t = (f32[8,8], f32[8,8]) tuple(r, c)
})");
  ASSERT_NE(b.assignment, nullptr);
  EXPECT_FALSE(b.assignment->IsInPlace(b.Get("g")));
  EXPECT_NE(b.Slice("g", 0).offset, b.Slice("c").offset);
}

TEST(BufferAssignmentTest, DonatedParameterIsUpdatedInPlace) {
  Assigned a = Assign(R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(p, u, i)
})");
  ASSERT_NE(a.assignment, nullptr);
  EXPECT_TRUE(a.assignment->IsInPlace(a.Get("d")));
  EXPECT_EQ(a.Slice("d").kind, BufferSlice::Kind::kParameter);
  EXPECT_EQ(a.assignment->arena_bytes(), 0);
  EXPECT_TRUE(a.assignment->OverwritesParameters());  // arguments cannot be reused between runs
}

TEST(BufferAssignmentTest, OutputAliasPlacesResultInDeadParameter) {
  Assigned a = Assign(R"(HloModule m, input_output_alias={ {1}: (1, {}, may-alias) }
ENTRY e {
  p0 = f32[32] parameter(0)
  p1 = f32[32] parameter(1)
  a = f32[32] negate(p1)
  b = f32[32] exponential(a)
  ROOT t = (f32[32], f32[32]) tuple(p0, b)
})");
  ASSERT_NE(a.assignment, nullptr);
  const BufferSlice& b = a.Slice("b");
  EXPECT_EQ(b.kind, BufferSlice::Kind::kParameter);
  EXPECT_EQ(b.parameter, 1);
  EXPECT_EQ(a.assignment->arena_bytes(), 128);  // only a
  EXPECT_TRUE(a.assignment->OverwritesParameters());
  // Not when the parameter is still read when the output is computed.
  Assigned c = Assign(R"(HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[32] parameter(0)
  a = f32[32] negate(p0)
  ROOT b = f32[32] add(a, p0)
})");
  ASSERT_NE(c.assignment, nullptr);
  EXPECT_EQ(c.Slice("b").kind, BufferSlice::Kind::kArena);
  // A donor the program does not use leaves its parameters as they were.
  EXPECT_FALSE(c.assignment->OverwritesParameters());
}

// Without donors, an in-place op on a parameter copies it: the parameters
// stay as the caller passed them.
TEST(BufferAssignmentTest, ParametersAreNotOverwrittenWithoutDonors) {
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  u = f32[4] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[16] dynamic-update-slice(p, u, i)
})");
  ASSERT_NE(a.assignment, nullptr);
  EXPECT_FALSE(a.assignment->IsInPlace(a.Get("d")));
  EXPECT_FALSE(a.assignment->OverwritesParameters());
}

TEST(BufferAssignmentTest, GetTupleElementOfAnotherElementIsNotAUse) {
  // x dies at d although the tuple holding it is read (for y) afterwards.
  Assigned a = Assign(R"(HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  u = f32[4] parameter(2)
  x = f32[16] negate(p)
  y = f32[16] negate(q)
  t = (f32[16], f32[16]) tuple(x, y)
  tx = f32[16] get-tuple-element(t), index=0
  d = f32[16] dynamic-update-slice(tx, u, s32[] constant(2))
  ty = f32[16] get-tuple-element(t), index=1
  ROOT r = f32[16] add(d, ty)
})");
  ASSERT_NE(a.assignment, nullptr);
  const HloComputation* entry = a.module->entry_computation();
  std::vector<HloInstruction*> order = entry->MakeInstructionPostOrder();
  auto pos = [&](std::string_view n) {
    return std::find(order.begin(), order.end(), entry->GetInstructionWithName(n)) - order.begin();
  };
  ASSERT_LT(pos("d"), pos("ty"));  // the tuple is read after the update
  EXPECT_TRUE(a.assignment->IsInPlace(a.Get("d")));
  EXPECT_EQ(a.assignment->BufferAt(a.Get("x"), 0).last_use_step, pos("r"));
}

TEST(BufferAssignmentTest, BadOutputAliasIsAnError) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule m, input_output_alias={ {3}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[32] parameter(0)
  ROOT a = f32[32] negate(p0)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(BufferAssignment::ForEntry(**m).ok());
}

}  // namespace
}  // namespace passlab
