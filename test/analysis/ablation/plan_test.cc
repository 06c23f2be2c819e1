#include "analysis/ablation/plan.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "analysis/ablation/worker.h"
#include "core/ir/str_util.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"

namespace passlab {
namespace {

const std::vector<PassOccurrence>& GpuOccurrences() {
  static auto* pipeline = BuildGpuPipeline().release();
  return pipeline->Occurrences();
}

const AblationVariant* Find(const std::vector<AblationVariant>& plan, std::string_view name) {
  for (const AblationVariant& v : plan) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

TEST(AblationPlanTest, DisableOneCoversEveryLeafPassByOccurrenceIds) {
  const std::vector<PassOccurrence>& occ = GpuOccurrences();
  std::vector<AblationVariant> plan = PlanDisableOne(occ, false);
  EXPECT_EQ(plan.size(), LeafPassNames(occ).size());
  // algsimp occurs once per pipeline occurrence; every one is disabled.
  std::vector<std::string> ids;
  for (const PassOccurrence& o : occ) {
    if (o.pass_name == "dce") ids.push_back(StrCat("@", o.id));
  }
  const AblationVariant* dce = Find(plan, "disable dce");
  ASSERT_NE(dce, nullptr);
  EXPECT_EQ(dce->disable, Join(ids, ","));
  EXPECT_EQ(dce->kind, "disable-one");
  EXPECT_EQ(dce->passes, std::vector<std::string>{"dce"});
  // The filter disables exactly those occurrences and nothing else.
  auto filter = PassFilterObserver::Create(dce->disable, "", false, occ);
  ASSERT_TRUE(filter.ok()) << filter.status().message();
  for (const PassOccurrence& o : occ) EXPECT_EQ((*filter)->Enabled(o), o.pass_name != "dce") << o.pass_name;
}

TEST(AblationPlanTest, PerOccurrenceAndAddOne) {
  const std::vector<PassOccurrence>& occ = GpuOccurrences();
  std::vector<AblationVariant> per = PlanDisableOne(occ, true);
  ASSERT_EQ(per.size(), occ.size());
  EXPECT_EQ(per[0].disable, StrCat("@", occ[0].id));
  EXPECT_EQ(per[0].kind, "disable-occurrence");
  std::vector<AblationVariant> add = PlanAddOne(occ);
  const AblationVariant* cse = Find(add, "add cse");
  ASSERT_NE(cse, nullptr);
  EXPECT_TRUE(cse->disable.empty());
  auto filter = PassFilterObserver::Create("", cse->enable_only, false, occ);
  ASSERT_TRUE(filter.ok()) << filter.status().message();
  // Required passes (reshape-decomposer in today's pipeline) stay on.
  for (const PassOccurrence& o : occ) {
    const PassRegistryEntry* e = FindRegisteredPass(o.pass_name);
    EXPECT_EQ((*filter)->Enabled(o), o.pass_name == "cse" || (e != nullptr && e->required)) << o.pass_name;
  }
}

TEST(AblationPlanTest, VariantJsonRoundTrips) {
  AblationVariant v{.name = "disable a+b", .kind = "pair", .passes = {"a", "b"}, .disable = "@1,@2"};
  absl::StatusOr<AblationVariant> back = AblationVariant::FromJson(v.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->name, v.name);
  EXPECT_EQ(back->passes, v.passes);
  EXPECT_EQ(back->disable, v.disable);
  EXPECT_FALSE(AblationVariant::FromJson(nlohmann::json::array()).ok());
}

class VariantFileTest : public ::testing::Test {
 protected:
  // Each test writes its own file: ctest runs the tests of this fixture as
  // separate processes, side by side.
  std::string Write(const std::string& text) {
    std::string path = ::testing::TempDir() + "/" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_variants.txt";
    std::ofstream(path) << text;
    return path;
  }
};

TEST_F(VariantFileTest, ReadsDisableAndEnableOnlyLines) {
  std::string path = Write("# comment\n\nno simplification: simplification   # a pipeline\nonly cse: enable-only cse,dce\n");
  auto plan = ReadVariantFile(path, GpuOccurrences());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ((*plan)[0].name, "no simplification");
  EXPECT_EQ((*plan)[0].disable, "simplification");
  EXPECT_EQ((*plan)[1].enable_only, "cse,dce");
  EXPECT_EQ((*plan)[1].passes, (std::vector<std::string>{"cse", "dce"}));
}

TEST_F(VariantFileTest, ErrorsNameTheLine) {
  auto bad = ReadVariantFile(Write("a: cse\nb: algsmip\n"), GpuOccurrences());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("variants.txt:2: "), std::string::npos) << bad.status().message();
  EXPECT_NE(std::string(bad.status().message()).find("algsimp"), std::string::npos) << "close match";
  auto twice = ReadVariantFile(Write("a: cse\na: dce\n"), GpuOccurrences());
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(std::string(twice.status().message()).find("defined twice"), std::string::npos);
  EXPECT_FALSE(ReadVariantFile(Write("no colon here\n"), GpuOccurrences()).ok());
  EXPECT_FALSE(ReadVariantFile(Write("# nothing\n"), GpuOccurrences()).ok());
  EXPECT_FALSE(ReadVariantFile(::testing::TempDir() + "/missing.txt", GpuOccurrences()).ok());
}

TEST(AblationReferenceTest, RoundTripsAndComparesLeaves) {
  std::string dir = ::testing::TempDir() + "/reference";
  std::filesystem::remove_all(dir);
  Literal a = Literal::Vector<float>({1.0f, 2.0f, 3.0f});
  Literal b = Literal::Scalar<int32_t>(7);
  Literal result = Literal::Tuple({Literal(a), Literal(b)});
  ASSERT_TRUE(WriteReference(result, dir).ok());
  absl::StatusOr<std::vector<Literal>> back = ReadReference(dir);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), 2u);
  EXPECT_TRUE(CompareWithReference(*back, result, 1e-6).ok);
  Literal off = Literal::Tuple({Literal::Vector<float>({1.0f, 2.5f, 3.0f}), Literal(b)});
  OutputCheck differ = CompareWithReference(*back, off, 1e-3);
  ASSERT_FALSE(differ.ok);
  EXPECT_NE(differ.message.find("output 0"), std::string::npos) << differ.message;
  EXPECT_FALSE(CompareWithReference(*back, a, 1e-3).ok) << "leaf count differs";
  // A truncated leaf is data loss, not a silent pass.
  std::filesystem::resize_file(dir + "/leaf_0.bin", 4);
  EXPECT_FALSE(ReadReference(dir).ok());
}

}  // namespace
}  // namespace passlab
