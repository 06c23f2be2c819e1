// Every collective pass on the corpus: each module with the collective that
// parses and verifies still verifies after the pass (collective_pass_util.h).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/collectives/all_gather_combiner.h"
#include "passes/collectives/all_reduce_combiner.h"
#include "passes/collectives/all_reduce_folder.h"
#include "passes/collectives/all_reduce_simplifier.h"
#include "passes/collectives/async_collective_creator.h"
#include "passes/collectives/reduce_scatter_creator.h"
#include "test/passes/collective_pass_util.h"
#include "test/passes/pass_test_util.h"

namespace passlab {
namespace {

TEST(CollectivePassesCorpusTest, EveryPassKeepsCorpusModulesValid) {
  struct Case {
    std::string needle;
    std::function<std::unique_ptr<HloPassInterface>()> make;
  };
  std::vector<Case> cases = {
      {" all-reduce(", [] { return std::make_unique<AllReduceSimplifier>(); }},
      {" all-reduce(", [] { return std::make_unique<AllReduceFolder>(); }},
      {" all-reduce(", [] { return std::make_unique<ReduceScatterCreator>(); }},
      {" all-reduce(", [] { return std::make_unique<AllReduceCombiner>(); }},
      {" all-gather(", [] { return std::make_unique<AllGatherCombiner>(); }},
      {" all-", [] { return std::make_unique<AsyncCollectiveCreator>(); }},
  };
  int total_changed = 0;
  for (const Case& c : cases) {
    CorpusCollectiveStats stats = CheckCollectivePassOnCorpus(c.needle, c.make);
    total_changed += stats.changed;
    if (stats.candidates == 0) GTEST_SKIP() << "corpus not found at " << CorpusPath();
  }
  EXPECT_GT(total_changed, 0);
}

}  // namespace
}  // namespace passlab
