// Cross-checks the evaluator against PyTorch: every case in
// test/eval_fixtures/ (written by gen_fixtures.py) holds a module, its inputs
// and the outputs PyTorch computed in float64.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/eval/npy.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;

fs::path FixtureDir() { return fs::path(PASSLAB_SOURCE_DIR) / "test" / "eval_fixtures"; }

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(FixtureDir())) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

void Leaves(const Literal& l, std::vector<const Literal*>& out) {
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) Leaves(e, out);
  } else {
    out.push_back(&l);
  }
}

class FixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, MatchesPyTorch) {
  fs::path dir = FixtureDir() / GetParam();
  std::ifstream in(dir / "module.hlo");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ParseHloModule(text.str(), (dir / "module.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloComputation* entry = (*module)->entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    absl::StatusOr<Literal> arg = ReadNpy((dir / ("in" + std::to_string(i) + ".npy")).string());
    ASSERT_TRUE(arg.ok()) << arg.status().message();
    arg->set_shape_layout(entry->parameter_instruction(i)->shape());
    args.push_back(std::move(*arg));
  }
  absl::StatusOr<Literal> result = HloEvaluator().Evaluate(**module, args);
  ASSERT_TRUE(result.ok()) << result.status().message();
  std::vector<const Literal*> leaves;
  Leaves(*result, leaves);
  for (size_t i = 0; i < leaves.size(); ++i) {
    absl::StatusOr<Literal> expected = ReadNpy((dir / ("out" + std::to_string(i) + ".npy")).string());
    ASSERT_TRUE(expected.ok()) << expected.status().message();
    // Both sides are float64 computations rounded to f32 once.
    absl::Status same = CompareLiterals(*expected, *leaves[i], {.abs = 1e-5, .rel = 1e-5, .max_ulps = 2});
    EXPECT_TRUE(same.ok()) << "output " << i << ": " << same.message();
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, FixtureTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace passlab
