// HloPassPipeline, HloPassFix, the changed audit, observers and filters, on
// small test passes.
#include <gtest/gtest.h>

#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_filter.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

std::unique_ptr<HloModule> Parse(const char* text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

// Removes one negate(negate(x)) per run, so a fixed point needs several runs.
class FoldOneDoubleNegate : public HloModulePass {
 public:
  std::string_view name() const override { return "fold-double-negate"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext*) override {
    for (HloInstruction* inst : module.entry_computation()->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kNegate && inst->operand(0)->opcode() == HloOpcode::kNegate) {
        BumpCounter("negate(negate(x)) => x");
        absl::Status s = module.entry_computation()->ReplaceInstruction(
            inst, inst->mutable_operand(0)->mutable_operand(0));
        if (!s.ok()) return s;
        return true;
      }
    }
    return false;
  }
};

// Claims it changed nothing but renames the root.
class LyingPass : public HloModulePass {
 public:
  std::string_view name() const override { return "liar"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext*) override {
    module.entry_computation()->root_instruction()->SetName("renamed");
    return false;
  }
};

// Flips the root between negate and abs forever.
class PingPong : public HloModulePass {
 public:
  std::string_view name() const override { return "ping-pong"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext*) override {
    HloInstruction* root = module.entry_computation()->root_instruction();
    HloOpcode next = root->opcode() == HloOpcode::kNegate ? HloOpcode::kAbs : HloOpcode::kNegate;
    auto repl = HloInstruction::CreateUnary(root->shape(), next, root->mutable_operand(0));
    repl->SetName(root->name());
    HloInstruction* added = module.entry_computation()->AddInstruction(std::move(repl));
    added->SetName(root->name() == "r0" ? "r1" : "r0");
    absl::Status s = module.entry_computation()->ReplaceInstruction(root, added);
    if (!s.ok()) return s;
    return true;
  }
};

class Recorder : public PassObserver {
 public:
  std::vector<std::string> runs;
  std::vector<std::string> skipped;
  std::vector<std::string> fixed_points;
  PassCounters counters;
  absl::Status AfterPass(const PassRunInfo& info, const HloModule&, bool changed, uint64_t,
                         uint64_t, const PassCounters& c) override {
    runs.push_back(info.pipeline_path + "/" + info.pass_name + "@" + std::to_string(info.occurrence_id) +
                   "#" + std::to_string(info.iteration) + (changed ? "+" : "-"));
    for (const auto& [k, v] : c) counters[k] += v;
    return absl::OkStatus();
  }
  void PassSkipped(const PassRunInfo& info) override { skipped.push_back(info.pass_name); }
  void FixedPointFinished(const std::string& path, int64_t iterations, bool hit_limit,
                          bool cycled) override {
    fixed_points.push_back(path + ":" + std::to_string(iterations) + (hit_limit ? ":limit" : "") +
                           (cycled ? ":cycle" : ""));
  }
};

const char* kTripleNegate = R"(
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] negate(a)
  c = f32[4] negate(b)
  ROOT d = f32[4] negate(c)
})";

TEST(PipelineTest, FixedPointIteratesUntilNoChangeAndObserversSeeEveryIteration) {
  auto m = Parse(kTripleNegate);
  HloPassPipeline pipeline("opt");
  pipeline.AddPass<HloPassFix<FoldOneDoubleNegate>>();
  Recorder recorder;
  pipeline.AddObserver(&recorder);
  absl::StatusOr<bool> changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "p");
  EXPECT_EQ(recorder.runs, (std::vector<std::string>{"opt/fold-double-negate@0#0+",
                                                     "opt/fold-double-negate@0#1+",
                                                     "opt/fold-double-negate@0#2-"}));
  EXPECT_EQ(recorder.counters["negate(negate(x)) => x"], 2);
  EXPECT_EQ(recorder.fixed_points, (std::vector<std::string>{"opt/fold-double-negate:3"}));
}

TEST(PipelineTest, IterationLimitIsReported) {
  auto m = Parse(kTripleNegate);
  HloPassPipeline pipeline("opt");
  pipeline.AddPass<HloPassFixBase>(std::make_unique<FoldOneDoubleNegate>(), 1);
  Recorder recorder;
  pipeline.AddObserver(&recorder);
  ASSERT_TRUE(pipeline.Run(*m).ok());
  EXPECT_EQ(recorder.fixed_points, (std::vector<std::string>{"opt/fold-double-negate:1:limit"}));
}

TEST(PipelineTest, CycleInFixedPointIsDetected) {
  auto m = Parse("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r0 = f32[4] negate(p)\n}");
  HloPassPipeline pipeline("opt");
  pipeline.AddPass<HloPassFix<PingPong>>();
  Recorder recorder;
  pipeline.AddObserver(&recorder);
  ASSERT_TRUE(pipeline.Run(*m).ok());
  ASSERT_EQ(recorder.fixed_points.size(), 1u);
  EXPECT_NE(recorder.fixed_points[0].find(":cycle"), std::string::npos) << recorder.fixed_points[0];
  EXPECT_LT(recorder.runs.size(), 5u);
}

TEST(PipelineTest, ChangedAuditCatchesALie) {
  auto m = Parse(kTripleNegate);
  HloPassPipeline pipeline("opt");
  pipeline.AddPass<LyingPass>();
  absl::StatusOr<bool> r = pipeline.Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("'liar' (@0) reported changed=false but the module changed"),
            std::string::npos)
      << r.status().message();
}

TEST(PipelineTest, AuditCanBeRelaxedAndTruthWins) {
  auto m = Parse(kTripleNegate);
  HloPassPipeline pipeline("opt", PipelineOptions{.audit_changed = false});
  pipeline.AddPass<LyingPass>();
  absl::StatusOr<bool> r = pipeline.Run(*m);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);  // the fingerprint says it changed
}

std::unique_ptr<HloPassPipeline> NestedPipeline() {
  auto p = std::make_unique<HloPassPipeline>("gpu");
  p->AddPass<FoldOneDoubleNegate>();                                            // @0
  auto& simp = p->AddPass<HloPassFix<HloPassPipeline>>("simplification");
  simp.pass().AddPass<FoldOneDoubleNegate>();                                   // @1
  simp.pass().AddPass<FoldOneDoubleNegate>();                                   // @2
  p->AddPass<FoldOneDoubleNegate>();                                            // @3
  return p;
}

TEST(PipelineTest, OccurrencesHaveIdsPathsAndIndices) {
  auto p = NestedPipeline();
  const std::vector<PassOccurrence>& occ = p->Occurrences();
  ASSERT_EQ(occ.size(), 4u);
  EXPECT_EQ(occ[1].pipeline_path, "gpu/simplification");
  EXPECT_EQ(occ[1].occurrence_index, 1);
  EXPECT_TRUE(occ[2].in_fixed_point);
  EXPECT_EQ(occ[2].index_in_pipeline, 1);
  EXPECT_EQ(occ[3].id, 3);
  EXPECT_EQ(occ[3].occurrence_index, 3);
}

std::vector<int64_t> Selected(std::string_view filter) {
  auto p = NestedPipeline();
  auto terms = ParsePassFilterList(filter);
  EXPECT_TRUE(terms.ok()) << terms.status().message();
  std::vector<int64_t> ids;
  for (const PassOccurrence& o : p->Occurrences()) {
    for (const PassFilterTerm& t : *terms) {
      if (t.Matches(o)) {
        ids.push_back(o.id);
        break;
      }
    }
  }
  return ids;
}

TEST(PassFilterTest, XlaGrammar) {
  EXPECT_EQ(Selected("fold-double-negate"), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(Selected("fold-double-negate:2"), (std::vector<int64_t>{2}));
  EXPECT_EQ(Selected("simplification"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Selected("simplification/fold-double-negate"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Selected("@3,@0"), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(Selected("gpu/simp.*"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Selected("negate"), (std::vector<int64_t>{}));  // names match whole, not by substring
  EXPECT_EQ(Selected(".*simplification/fold.*"), (std::vector<int64_t>{1, 2}));
}

TEST(PassFilterTest, UnknownNameListsCloseMatches) {
  auto p = NestedPipeline();
  auto obs = PassFilterObserver::Create("fold-double-negat", "", false, p->Occurrences());
  ASSERT_FALSE(obs.ok());
  EXPECT_NE(std::string(obs.status().message()).find("did you mean: fold-double-negate"),
            std::string::npos)
      << obs.status().message();
  auto both = PassFilterObserver::Create("a", "b", false, p->Occurrences());
  EXPECT_FALSE(both.ok());
}

TEST(PassFilterTest, DisableAndEnableOnlyVetoRuns) {
  auto m = Parse(kTripleNegate);
  auto p = NestedPipeline();
  auto obs = PassFilterObserver::Create("", "simplification", false, p->Occurrences());
  ASSERT_TRUE(obs.ok()) << obs.status().message();
  Recorder recorder;
  p->AddObserver(obs->get());
  p->AddObserver(&recorder);
  ASSERT_TRUE(p->Run(*m).ok());
  // @0 and @3 skipped; the fixed point ran @1 and @2 until nothing changed.
  EXPECT_EQ(recorder.skipped, (std::vector<std::string>{"fold-double-negate", "fold-double-negate"}));
  for (const std::string& r : recorder.runs) EXPECT_NE(r.find("simplification"), std::string::npos) << r;
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "p");
}

TEST(PipelineTest, FrozenAfterRun) {
  HloPassPipeline pipeline("opt");
  pipeline.AddPass<FoldOneDoubleNegate>();
  auto m = Parse(kTripleNegate);
  ASSERT_TRUE(pipeline.Run(*m).ok());
  EXPECT_DEATH(pipeline.AddPass<FoldOneDoubleNegate>(), "changed after it was run");
}

}  // namespace
}  // namespace passlab
