// ShardingRemover ("sharding-remover"): XLA's own cases
// (xla/service/sharding_remover_test.cc: RemoveSharding,
// RemoveSPMDShardingToFullShape, RemoveSPMDFullToShardShape,
// NoChangeForOtherCustomCall), the values before and after, and the
// "sharding-removal" sub-pipeline that runs it on unpartitioned modules
// only (xla/service/gpu/gpu_compiler.cc, RunSPMDPasses).
#include <gtest/gtest.h>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/text/hlo_parser.h"
#include "passes/pipelines/pipelines.h"
#include "passes/spmd/sharding_remover.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

constexpr char kSharding[] = R"(HloModule module
ENTRY entry {
 %parameter.3379 = f32[1,1]{1,0} parameter(0)
 %custom-call.3380 = f32[1,1]{1,0} custom-call(f32[1,1]{1,0} %parameter.3379), custom_call_target="Sharding", sharding={replicated}
 ROOT %reshape.6032 = f32[] reshape(f32[1,1]{1,0} %custom-call.3380)
})";

TEST(ShardingRemoverTest, RemoveSharding) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(kSharding);
  ASSERT_TRUE(m.ok()) << m.status();
  PassRunContext context;
  absl::StatusOr<bool> changed = ShardingRemover().Run(**m, &context);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const HloInstruction* root = (*m)->entry_computation()->root_instruction();
  ASSERT_EQ(root->opcode(), HloOpcode::kReshape);
  const HloInstruction* parameter = root->operand(0);
  EXPECT_EQ(parameter->opcode(), HloOpcode::kParameter);
  // The custom call became a copy of the parameter, left for DCE.
  EXPECT_EQ(parameter->user_count(), 2);
  bool copy = false;
  for (const HloInstruction* user : parameter->users()) copy |= user->opcode() == HloOpcode::kCopy;
  EXPECT_TRUE(copy);
}

TEST(ShardingRemoverTest, RemoveSpmdShapeMarkers) {
  for (const char* target : {"SPMDShardToFullShape", "SPMDFullToShardShape"}) {
    std::string text = kSharding;
    text.replace(text.find("\"Sharding\""), 10, std::string("\"") + target + "\"");
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    PassRunContext context;
    absl::StatusOr<bool> changed = ShardingRemover().Run(**m, &context);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed) << target;
    const HloInstruction* root = (*m)->entry_computation()->root_instruction();
    EXPECT_EQ(root->opcode(), HloOpcode::kReshape);
    EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kParameter) << target;
  }
}

TEST(ShardingRemoverTest, NoChangeForOtherCustomCall) {
  PassResult r = RunPass(std::make_unique<ShardingRemover>(), R"(HloModule cluster
ENTRY %cluster (arg_tuple.1: bf16[2,209664]) -> (bf16[2,2000], s32[2,2000]) {
  %arg_tuple.1 = bf16[2,209664] parameter(0)
  %custom-call = (bf16[2,2000]{1,0}, s32[2,2000]{1,0}) custom-call(bf16[2,209664]{1,0} %arg_tuple.1), custom_call_target="TopK"
  %get-tuple-element = bf16[2,2000]{1,0} get-tuple-element((bf16[2,2000]{1,0}, s32[2,2000]{1,0}) %custom-call), index=0
  %get-tuple-element.1 = s32[2,2000]{1,0} get-tuple-element((bf16[2,2000]{1,0}, s32[2,2000]{1,0}) %custom-call), index=1, sharding={replicated}
  ROOT %tuple.46 = (bf16[2,2000]{1,0}, s32[2,2000]{1,0}) tuple(bf16[2,2000]{1,0} %get-tuple-element, s32[2,2000]{1,0} %get-tuple-element.1)
})");
  EXPECT_FALSE(r.changed);
}

// JAX's key handling (jax.random.normal) in a single-device program: the
// "Sharding" custom call goes, values unchanged, and the module runs on the
// evaluator and the backends (which have no "Sharding" implementation).
TEST(ShardingRemoverTest, SingleDeviceJaxStyleModuleKeepsItsValues) {
  const char* text = R"(HloModule jit_normal
ENTRY e {
  p = f32[4,8] parameter(0)
  s = f32[4,8] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  two = f32[] constant(2)
  b = f32[4,8] broadcast(two), dimensions={}
  ROOT m = f32[4,8] multiply(s, b)
})";
  // RunPass compares the values before and after on random inputs.
  PassResult r = RunPass(std::make_unique<ShardingRemover>(), text);
  EXPECT_TRUE(r.changed);
  std::erase(r.text, '%');
  EXPECT_TRUE(Matches(r.text, {"ROOT m = f32[4,8]{1,0} multiply(p, b)"})) << r.text;
  EXPECT_TRUE(Matches(r.text, {"copy(p)", "NOT:custom-call"})) << r.text;
}

TEST(ShardingRemoverTest, ShardingRemovalRunsOnUnpartitionedModulesOnly) {
  std::unique_ptr<HloPassPipeline> removal = BuildShardingRemovalPipeline();
  EXPECT_EQ(removal->name(), "sharding-removal");
  absl::StatusOr<std::unique_ptr<HloModule>> one = ParseHloModule(kSharding);
  ASSERT_TRUE(one.ok());
  PassRunContext context;
  absl::StatusOr<bool> changed = removal->Run(**one, &context);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  // The copy it left is gone too (HloDCE after it).
  for (const HloInstruction* inst : (*one)->entry_computation()->instructions()) {
    EXPECT_NE(inst->opcode(), HloOpcode::kCustomCall);
    EXPECT_NE(inst->opcode(), HloOpcode::kCopy);
  }
  std::string two = kSharding;
  two.replace(two.find("HloModule module"), 16, "HloModule module, num_partitions=2");
  absl::StatusOr<std::unique_ptr<HloModule>> partitioned = ParseHloModule(two);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status();
  PassRunContext context2;
  changed = BuildShardingRemovalPipeline()->Run(**partitioned, &context2);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace passlab
