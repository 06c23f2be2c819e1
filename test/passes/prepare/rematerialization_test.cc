// Rematerialization, after XLA's
// xla/hlo/transforms/simplifiers/hlo_rematerialization_test.cc: the same
// modules and limits (sizes by ByteSizeOf with 8-byte pointers unless said);
// RunPass also checks the values stay equal on the evaluator.
#include "passes/prepare/rematerialization.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"
#include "passes/prepare/latency_hiding_scheduler.h"
#include "test/passes/checked_pass_util.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {
namespace {

std::unique_ptr<Rematerialization> Remat(int64_t limit, RematerializationOptions options = {}) {
  options.memory_limit_bytes = limit;
  return std::make_unique<Rematerialization>(options);
}

// A tuple-shaped fusion whose second element is read only at the end.
constexpr char kTupleFusion[] = R"(
HloModule fusion, is_scheduled=true

%add_mul_comp {
  %p0 = f32[] parameter(0)
  %p1 = f32[] parameter(1)
  %x = f32[1024]{0} broadcast(f32[] %p0), dimensions={}
  %y = f32[1024]{0} broadcast(f32[] %p1), dimensions={}
  %add = f32[1024] add(%x, %y)
  %mul = f32[1024] multiply(%x, %y)
  ROOT %out = (f32[1024], f32[1024]) tuple(%add, %mul)
}

ENTRY %entry {
  %param.0 = f32[] parameter(0)
  %param.1 = f32[] parameter(1)
  %fus = (f32[1024]{0}, f32[1024]{0}) fusion(%param.0, %param.1), kind=kLoop, calls=%add_mul_comp
  %gte.1 = f32[1024]{0} get-tuple-element(%fus), index=0
  %add = f32[1024]{0} add(f32[1024]{0} %gte.1, f32[1024]{0} %gte.1)
  %broadcast.1 = f32[1024]{0} broadcast(f32[] %param.0), dimensions={}
  %mul = f32[1024]{0} multiply(f32[1024]{0} %add, f32[1024]{0} %broadcast.1)
  %gte.2 = f32[1024]{0} get-tuple-element(%fus), index=1
  ROOT %add.2 = f32[1024]{0} add(f32[1024]{0} %mul, f32[1024]{0} %gte.2)
})";

// RecomputeAndCompressHloRematerializationTest.RematTupleShape: the fusion
// is recomputed (with its own copy of the fused computation) before the
// late use, which reads its element through a new get-tuple-element.
TEST(RematerializationTest, RecomputesTupleFusionForItsLateElementUse) {
  PassResult r = RunPass(Remat(11 * 1024), kTupleFusion);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%add_mul_comp.clone", "%gte.1 = f32[1024]{0} get-tuple-element(%fus), index=0",
                               "%fus.remat = (f32[1024]{0}, f32[1024]{0}) fusion(%param.0, %param.1), kind=kLoop, "
                               "calls=%add_mul_comp.clone",
                               "%gte.remat = f32[1024]{0} get-tuple-element(%fus.remat), index=1",
                               "ROOT %add.2 = f32[1024]{0} add(%mul, %gte.remat)", "NOT:%gte.2 ="}))
      << r.text;
  ExpectModuleVerifies(r);
}

// RecomputeAndCompressHloRematerializationTest.AllGatherChannelId: a
// rematerialized all-gather takes the next free channel id.
TEST(RematerializationTest, RematerializedAllGatherTakesANewChannel) {
  constexpr char kHlo[] = R"(
HloModule fusion, is_scheduled=true

ENTRY %mycomp (param: f32[1]) -> f32[1] {
  %param = f32[1]{0} parameter(0)
  %reshape = f32[] reshape(f32[1]{0} %param)
  %broadcast = f32[256,1]{1,0} broadcast(f32[] %reshape), dimensions={}
  %ag = f32[1024,1]{1,0} all-gather(f32[256,1]{1,0} %broadcast), dimensions={0}, channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true
  %bitcast = f32[1024]{0} bitcast(f32[1024,1]{1,0} %ag)
  %negate = f32[1024,1]{1,0} negate(f32[1024,1]{1,0} %ag)
  %concatenate = f32[2048,1]{1,0} concatenate(f32[1024,1]{1,0} %negate, f32[1024,1]{1,0} %negate), dimensions={0}
  %slice = f32[1,1]{1,0} slice(f32[2048,1]{1,0} %concatenate), slice={[0:1], [0:1]}
  %bitcast.1 = f32[1]{0} bitcast(f32[1,1]{1,0} %slice)
  %concatenate.1 = f32[1025]{0} concatenate(f32[1024]{0} %bitcast, f32[1]{0} %bitcast.1), dimensions={0}
  ROOT %slice.1 = f32[1]{0} slice(f32[1025]{0} %concatenate.1), slice={[0:1]}
})";
  // A single-replica evaluation: the all-gather is not evaluated here, so
  // only the structure is checked.
  HloPassPipeline pipeline("remat");
  pipeline.AddPass<Rematerialization>(RematerializationOptions{.memory_limit_bytes = 14 * 1024});
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kHlo, "ag.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  absl::StatusOr<bool> changed = pipeline.Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  const HloInstruction* ag = (*m)->entry_computation()->GetInstructionWithName("ag");
  const HloInstruction* remat = (*m)->entry_computation()->GetInstructionWithName("ag.remat");
  ASSERT_NE(ag, nullptr);
  ASSERT_NE(remat, nullptr);
  EXPECT_EQ(ag->attrs().channel_id, 1);
  EXPECT_EQ(remat->attrs().channel_id, 2);
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->name(), "slice.1");
}

constexpr char kCompressible[] = R"(
HloModule fusion, is_scheduled=true

%add_float {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %entry {
  %param.0 = f32[] parameter(0)
  %constant = f32[] constant(0)
  %broadcast.0 = f32[64,2]{1,0} broadcast(f32[] %param.0), dimensions={}
  %broadcast.1 = f32[10,2]{1,0} broadcast(f32[] %param.0), dimensions={}
  %negate = f32[64,2]{1,0} negate(f32[64,2]{1,0} broadcast.0)
  %reduce.0 = f32[] reduce(f32[64,2]{1,0} %negate, f32[] %constant), dimensions={1, 0}, to_apply=%add_float
  %reduce.1 = f32[] reduce(f32[64,2]{1,0} %broadcast.0, f32[] %constant), dimensions={1, 0}, to_apply=%add_float
  %reduce.2 = f32[] reduce(f32[10,2]{1,0} %broadcast.1, f32[] %constant), dimensions={1, 0}, to_apply=%add_float
  %add = f32[] add(f32[] %reduce.0, f32[] %reduce.1)
  ROOT %add.2 = f32[] add(f32[] %add, f32[] %reduce.2)
})";

RematerializationOptions CompressOnly() {
  return {.recompute = false,
          .compress = true,
          .shape_size_function = "pad_minor_to_64",
          .compact_shape_function = "swap_two_minor_dims"};
}

// CompressingRematerializationTest.OnlyRematBigBuffer: with the minor
// dimension padded to 64, f32[64,2]{1,0} takes 16K and 512 bytes as
// {0,1}: it is copied to the compact layout right after it is made and back
// before its late use; f32[10,2] (2.5K) is under min_remat_size.
TEST(RematerializationTest, CompressesABigValueAcrossThePeak) {
  RematerializationOptions options = CompressOnly();
  options.min_remat_size = 10 * 1024;
  PassResult r = RunPass(Remat(30 * 1024, options), kCompressible);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%broadcast.0 = f32[64,2]{1,0} broadcast(%param.0)",
                               "%broadcast.0.remat_compressed = f32[64,2]{0,1} copy(%broadcast.0)",
                               "%broadcast.0.remat_uncompressed = f32[64,2]{1,0} copy(%broadcast.0.remat_compressed)",
                               "%reduce.1 = f32[] reduce(%broadcast.0.remat_uncompressed, %constant)",
                               "%reduce.2 = f32[] reduce(%broadcast.1, %constant)"}))
      << r.text;
  ExpectModuleVerifies(r);
}

// The same module with a limit it already meets: nothing to do; and the
// default (no limit) does nothing either.
TEST(RematerializationTest, DoesNothingUnderTheLimit) {
  EXPECT_FALSE(RunPass(Remat(1 << 20, CompressOnly()), kCompressible).changed);
  EXPECT_FALSE(RunPass(std::make_unique<Rematerialization>(), kTupleFusion).changed);
}

// Only recomputation allowed, and the big value's users all read it while
// the peak is live (nothing is live across it but the parameter-fed values
// that cost nothing): unchanged even under a 0-byte limit.
TEST(RematerializationTest, KeepsValuesThatAreLiveOut) {
  constexpr char kHlo[] = R"(
HloModule m, is_scheduled=true

ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] exponential(p)
  ROOT t = (f32[1024], f32[1024]) tuple(a, p)
})";
  EXPECT_FALSE(RunPass(Remat(0), kHlo).changed);
}

// XLA's pass checks it has a schedule (TF_RET_CHECK).
TEST(RematerializationTest, NeedsASchedule) {
  std::string hlo = kTupleFusion;
  hlo.replace(hlo.find(", is_scheduled=true"), 19, "");
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(hlo, "unscheduled.hlo");
  ASSERT_TRUE(m.ok());
  HloPassPipeline pipeline("remat");
  pipeline.AddPass<Rematerialization>(RematerializationOptions{.memory_limit_bytes = 1});
  EXPECT_FALSE(pipeline.Run(**m).ok());
}

// RecomputeAndCompressHloRematerializationTest.RematCallbackIsCalled: still
// over the limit at a call, the pass rematerializes inside the called
// computation under what is left of the limit, recursively.
TEST(RematerializationTest, RematerializesInsideCalledComputations) {
  constexpr char kHlo[] = R"(
HloModule fusion, is_scheduled=true

%call_convoluted (param_0: f32[1024], param_1: f32[1024]) -> f32[1024] {
  %constant_source_8 = f32[] constant(8)
  %constant_source_8_user = f32[1024]{0} broadcast(%constant_source_8), dimensions={}
  %param_0 = f32[1024]{0} parameter(0)
  %param_1 = f32[1024]{0} parameter(1)
  %res_param_add = f32[1024]{0} add(%param_0, %param_1)
  %constant.anon = f32[] constant(1)
  %constant_0 = f32[16384]{0} broadcast(%constant.anon), dimensions={}
  %op_1 = f32[16384]{0} tanh(%constant_0)
  %op_2 = f32[16384]{0} tanh(%op_1)
  %op_3 = f32[16384]{0} tanh(%op_2)
  %op_4 = f32[16384]{0} tanh(%op_3)
  %tan_res = f32[1024]{0} slice(%op_4), slice={[0:1024]}
  %res_1 = f32[1024]{0} add(%res_param_add, %tan_res)
  %res_3 = f32[1024]{0} add(%constant_source_8_user, %res_1)
  %constant_x = f32[1024]{0} broadcast(%constant_source_8), dimensions={}
  %constant_x_and_res_param_add = f32[1024]{0} add(%constant_x, %res_param_add)
  ROOT %res = f32[1024]{0} add(%res_3, %constant_x_and_res_param_add)
}

%call_comp (p: f32[1024], p_2: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %p_2 = f32[1024]{0} parameter(1)
  %call_convoluted = f32[1024]{0} call(%p, %p_2), to_apply=%call_convoluted
  ROOT %n = f32[1024]{0} negate(%call_convoluted)
}

%add_mul_comp (p0: f32[], p1: f32[]) -> f32[1024] {
  %p0 = f32[] parameter(0)
  %p1 = f32[] parameter(1)
  %p0_bcast = f32[1024]{0} broadcast(%p0), dimensions={}
  %p1_bcast = f32[1024]{0} broadcast(%p1), dimensions={}
  %res_comp = f32[1024]{0} call(%p0_bcast, %p1_bcast), to_apply=%call_comp
  ROOT %res_mul = f32[1024]{0} multiply(%res_comp, %res_comp)
}

ENTRY %entry (param.0: f32[], param.1: f32[]) -> f32[1024] {
  %param.0 = f32[] parameter(0)
  %param.1 = f32[] parameter(1)
  %res = f32[1024]{0} call(%param.0, %param.1), to_apply=%add_mul_comp
  ROOT %res_2 = f32[1024]{0} negate(%res)
})";
  PassResult r = RunPass(Remat(14 * 1024), kHlo);
  EXPECT_TRUE(r.changed);
  std::vector<std::string> remats;
  for (const HloComputation* c : r.module->computations()) {
    for (const HloInstruction* inst : c->instructions()) {
      if (inst->name().find(".remat") != std::string::npos) remats.push_back(inst->name());
    }
  }
  std::sort(remats.begin(), remats.end());
  EXPECT_EQ(remats.size(), 6u) << r.text;
  auto count = [&](std::string_view prefix) {
    return std::count_if(remats.begin(), remats.end(),
                         [&](const std::string& n) { return n.rfind(StrCat(prefix, ".remat"), 0) == 0; });
  };
  EXPECT_EQ(count("constant_x"), 1) << r.text;
  EXPECT_EQ(count("constant_source_8_user"), 1) << r.text;
  EXPECT_EQ(count("res_param_add"), 2) << r.text;
  EXPECT_EQ(count("p0_bcast"), 1) << r.text;
  EXPECT_EQ(count("p1_bcast"), 1) << r.text;
  ExpectModuleVerifies(r);
}

// RecomputeAndCompressHloRematerializationTest.
// PeakPriorityRematIgnoresDeadInstructionsInPlaceBefore: peak priority
// (25K limit, blocks up to 32) removes an original its remat killed at once,
// so f4653.remat goes right before the bitcast that reads it, not where
// f4651 (killed by its own remat) was.
TEST(RematerializationTest, PeakPriorityPlacesRematsPastKilledOriginals) {
  constexpr char kHlo[] = R"(
HloModule fusion, is_scheduled=true

ENTRY %entry (param.0: f32[], param.1: f32[]) -> f32[1024] {
  %constant_source_8 = f32[] constant(8)
  %param_0 = f32[1024]{0} parameter(0)
  %param_1 = f32[1024]{0} parameter(1)
  %constant.anon = f32[] constant(1)
  %constant_0 = f32[16384]{0} broadcast(%constant.anon), dimensions={}
  %constant_1 = f32[16384]{0} broadcast(%constant.anon), dimensions={}
  %op_1 = f32[16384]{0} tanh(%constant_0)
  %op_2 = f32[16384]{0} tanh(%op_1)
  %op_3 = f32[16384]{0} add(%op_1, %op_2)
  %op_5 = f32[16384]{0} add(%op_3, %op_3)
  %op_6 = f32[16384]{0} add(%op_3, %op_5)
  %f4651 = f32[16384]{0} add(%constant_0, %constant_1)
  %f4653 = f32[16384]{0} add(%constant_0, %constant_1)
  %bitcast_f4651_f16 = f16[32768]{0} bitcast(%f4651)
  %bitcast_f4653_f16 = f16[32768]{0} bitcast(%f4653)
  %bitcast_f4653_f16_2 = f16[32768]{0} bitcast(%f4653)
  %f16_f_sum = f16[32768]{0} add(%bitcast_f4651_f16, %bitcast_f4651_f16)
  %f32_f_sum_bitcast = f32[16384]{0} bitcast(%f16_f_sum)
  %f16_f_sum_2 = f16[32768]{0} add(%bitcast_f4653_f16_2, %bitcast_f4653_f16_2)
  %f32_f_sum_bitcast_2 = f32[16384]{0} bitcast(%f16_f_sum_2)
  %tan_res = f32[1024]{0} slice(%op_6), slice={[0:1024]}
  %add_tan_res = f32[1024]{0} add(%tan_res, %tan_res)
  %add_tan_res_2 = f32[1024]{0} add(%add_tan_res, %add_tan_res)
  %add_tan_res_3 = f32[1024]{0} add(%add_tan_res_2, %add_tan_res)
  %add_tan_res_4 = f32[1024]{0} add(%add_tan_res_3, %add_tan_res)
  %add_tan_res_5 = f32[1024]{0} add(%add_tan_res_4, %add_tan_res)
  %add_tan_res_6 = f32[1024]{0} add(%add_tan_res_5, %add_tan_res)
  %add_tan_res_7 = f32[1024]{0} add(%add_tan_res_6, %add_tan_res)
  %res_param_add.remat = f32[1024]{0} add(%param_0, %param_1)
  %res_1 = f32[1024]{0} add(%res_param_add.remat, %add_tan_res_7)
  %constant_source_8_user.remat = f32[1024]{0} broadcast(%constant_source_8), dimensions={}
  %res_3 = f32[1024]{0} add(%constant_source_8_user.remat, %res_1)
  %constant_source_8_user_2.remat = f32[1024]{0} broadcast(%constant_source_8), dimensions={}
  %res_3_2 = f32[1024]{0} add(%constant_source_8_user_2.remat, %res_3)
  %constant_x = f32[1024]{0} broadcast(%constant_source_8), dimensions={}
  %constant_x_and_res_param_add = f32[1024]{0} add(%constant_x, %res_param_add.remat)
  %slice_f_sum_2 = f32[1024]{0} slice(%f32_f_sum_bitcast_2), slice={[0:1024]}
  %res_4 = f32[1024]{0} add(%res_3_2, %constant_x_and_res_param_add)
  %slice_f_sum = f32[1024]{0} slice(%f32_f_sum_bitcast), slice={[0:1024]}
  %tan_f4651 = f32[1024]{0} slice(%slice_f_sum), slice={[0:1024]}
  %tan_f4653 = f32[1024]{0} slice(%f4653), slice={[0:1024]}
  %res_5 = f32[1024]{0} add(%tan_f4651, %res_4)
  %res_6 = f32[1024]{0} add(%tan_f4653, %res_5)
  %res_7 = f32[1024]{0} add(%slice_f_sum, %res_6)
  %res_8 = f32[1024]{0} add(%slice_f_sum_2, %res_7)
  ROOT %res = f32[1024]{0} add(%res_3, %res_8)
}
)";
  PassResult r = RunPass(Remat(25 * 1024, {.block_size_limit = 32, .remat_algorithm = "peak_priority"}), kHlo);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(Matches(r.text, {"%f4651.remat = ", "%f4653.remat = f32[16384]{0} add(",
                               "%bitcast.remat.2 = f16[32768]{0} bitcast(%f4653.remat)", "%op_1.remat = ",
                               "%op_6.remat = ", "%tan_f4653 = "}))
      << r.text;
  EXPECT_NE(r.text.find("%f4653.remat = f32[16384]{0} add(%constant_0, %constant_1.remat)\n  %bitcast.remat.2 = "),
            std::string::npos)
      << r.text;
  ExpectModuleVerifies(r);
}

// Corpus: schedule, then rematerialize under a 1-byte limit (as much as it
// can) every module of at most 400 instructions (XLA's algorithm rescans
// the schedule at each point over the limit: cubic in the worst case):
// every module still verifies, stays topological (SetInstructionSequence
// checks) and, where the evaluator is cheap, computes the same values;
// with both algorithms.
void CheckCorpus(const std::string& algorithm) {
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int changed = 0;
  int evaluated = 0;
  for (const auto& [name, text] : CorpusTextsWith(" broadcast(")) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok() || (*m)->instruction_count() > 400) continue;
    bool small = SmallModule(**m, 1 << 12) && !HasLowPrecisionFloats(**m);
    std::vector<Literal> args;
    absl::StatusOr<Literal> before = absl::UnimplementedError("not evaluated");
    if (small) {
      args = MakeRandomArguments(*(*m)->entry_computation(), 99);
      before = HloEvaluator().Evaluate(**m, args);
    }
    HloPassPipeline pipeline("schedule-remat");
    pipeline.AddPass<LatencyHidingScheduler>();
    pipeline.AddPass<Rematerialization>(
        RematerializationOptions{.memory_limit_bytes = 1, .block_size_limit = 4, .remat_algorithm = algorithm});
    absl::StatusOr<bool> ran = pipeline.Run(**m);
    ASSERT_TRUE(ran.ok()) << algorithm << " " << name << ": " << ran.status().message();
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    changed += *ran ? 1 : 0;
    if (!before.ok()) continue;
    absl::StatusOr<Literal> after = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(after.ok()) << name << ": " << after.status().message();
    absl::Status same = CompareLiterals(*before, *after, {.abs = 1e-3, .rel = 1e-3});
    EXPECT_TRUE(same.ok()) << name << ": " << same.message();
    ++evaluated;
  }
  if (changed == 0 && evaluated == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  EXPECT_GT(changed, 50);
  EXPECT_GT(evaluated, 50);
  ::testing::Test::RecordProperty(algorithm + "_changed", changed);
  ::testing::Test::RecordProperty(algorithm + "_evaluated", evaluated);
}

TEST(RematerializationTest, CorpusValuesStay) { CheckCorpus("always_remat"); }
TEST(RematerializationTest, CorpusValuesStayWithPeakPriority) { CheckCorpus("peak_priority"); }

}  // namespace
}  // namespace passlab
