// Pass options by XLA's names (pass_options.h) and rebuilding a pipeline's
// leaves (HloPassPipeline::ReplaceLeaves, what --pass-option does).
#include <gtest/gtest.h>

#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_options.h"

namespace passlab {
namespace {

const PassOptionSpec kSpecs[] = {
    {"enable_dot_strength_reduction", PassOptionType::kBool, "true", "dot => multiply+reduce"},
    {"combine_threshold_in_bytes", PassOptionType::kInt, "30M", "bytes"},
    {"ratio", PassOptionType::kFloat, "0.5", "a ratio"},
    {"compute_capability", PassOptionType::kString, "9.0", "sm"},
};

TEST(PassOptionsTest, DefaultsUntilSet) {
  PassOptionValues v(kSpecs);
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.GetBool("enable_dot_strength_reduction"));
  EXPECT_EQ(v.GetInt("combine_threshold_in_bytes"), 30 << 20);
  EXPECT_DOUBLE_EQ(v.GetFloat("ratio"), 0.5);
  ASSERT_TRUE(v.Set("p", "enable_dot_strength_reduction", "false").ok());
  ASSERT_TRUE(v.Set("p", "combine_threshold_in_bytes", "1K").ok());
  ASSERT_TRUE(v.Set("p", "compute_capability", "8.0").ok());
  EXPECT_FALSE(v.GetBool("enable_dot_strength_reduction"));
  EXPECT_EQ(v.GetInt("combine_threshold_in_bytes"), 1024);
  EXPECT_EQ(v.GetString("compute_capability"), "8.0");
  EXPECT_TRUE(v.IsSet("compute_capability"));
  EXPECT_FALSE(v.IsSet("ratio"));
}

TEST(PassOptionsTest, UnknownNameListsTheOptions) {
  PassOptionValues v(kSpecs);
  absl::Status s = v.Set("algsimp", "enable_dot_strenght_reduction", "true");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("pass 'algsimp' has no option 'enable_dot_strenght_reduction'; its options: "
                                          "enable_dot_strength_reduction, combine_threshold_in_bytes"),
            std::string::npos)
      << s.message();
  PassOptionValues none;
  EXPECT_NE(std::string(none.Set("dce", "x", "1").message()).find("pass 'dce' takes no options"), std::string::npos);
}

TEST(PassOptionsTest, BadValuesNameTheOptionAndType) {
  PassOptionValues v(kSpecs);
  absl::Status s = v.Set("p", "enable_dot_strength_reduction", "maybe");
  EXPECT_EQ(s.message(), "p: option 'enable_dot_strength_reduction' takes a bool, not 'maybe'");
  EXPECT_FALSE(v.Set("p", "combine_threshold_in_bytes", "12x").ok());
  EXPECT_FALSE(v.Set("p", "combine_threshold_in_bytes", "99999999999999999999").ok());
  EXPECT_FALSE(v.Set("p", "ratio", "1.5.2").ok());
  EXPECT_TRUE(v.empty());
}

TEST(PassOptionsTest, ParsesSettings) {
  absl::StatusOr<PassOptionSetting> s = ParsePassOptionSetting("algsimp.enable_conv_simplification=false");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->pass, "algsimp");
  EXPECT_EQ(s->option, "enable_conv_simplification");
  EXPECT_EQ(s->value, "false");
  for (const char* bad : {"algsimp=1", "algsimp.x", ".x=1", "algsimp.=1"}) {
    EXPECT_FALSE(ParsePassOptionSetting(bad).ok()) << bad;
  }
}

class Named : public HloModulePass {
 public:
  explicit Named(std::string name, int tag = 0) : name_(std::move(name)), tag_(tag) {}
  std::string_view name() const override { return name_; }
  int tag() const { return tag_; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule&, PassRunContext*) override { return false; }

 private:
  std::string name_;
  int tag_;
};

TEST(PassOptionsTest, ReplaceLeavesReachesNestedPipelinesAndFixedPoints) {
  HloPassPipeline p("top");
  p.AddPass<Named>("a");
  auto& inner = p.AddPass<HloPassFix<HloPassPipeline>>("fix");
  inner.pass().AddPass<Named>("a");
  inner.pass().AddPass<Named>("b");
  p.AddPass<HloPassFix<Named>>("a");
  int64_t n = p.ReplaceLeaves([](const HloPassInterface& leaf) -> std::unique_ptr<HloPassInterface> {
    if (leaf.name() != "a") return nullptr;
    return std::make_unique<Named>("a", 7);
  });
  EXPECT_EQ(n, 3);
  const std::vector<PassOccurrence>& occ = p.Occurrences();
  ASSERT_EQ(occ.size(), 4u);
  EXPECT_EQ(occ[1].pipeline_path, "top/fix");
  EXPECT_TRUE(occ[3].in_fixed_point);
  EXPECT_EQ(dynamic_cast<const Named&>(*p.passes()[0]).tag(), 7);
}

}  // namespace
}  // namespace passlab
