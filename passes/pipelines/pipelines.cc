#include "passes/pipelines/pipelines.h"

#include "core/ir/str_util.h"
#include "passes/expanders/batchnorm_expander.h"
#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/dot_decomposer.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/operand_upcaster.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/conditional_simplifier.h"
#include "passes/simplifiers/flatten_call_graph.h"
#include "passes/simplifiers/sort_simplifier.h"
#include "passes/simplifiers/transpose_folding.h"
#include "passes/simplifiers/while_loop_constant_sinking.h"
#include "passes/simplifiers/while_loop_simplifier.h"
#include "passes/simplifiers/hlo_constant_folding.h"
#include "passes/simplifiers/hlo_cse.h"
#include "passes/simplifiers/hlo_dce.h"
#include "passes/simplifiers/reshape_mover.h"
#include "passes/simplifiers/while_loop_invariant_code_motion.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"

namespace passlab {

std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline() {
  // XLA:GPU's "optimization" pipeline (seed 003 table 1; gpu_compiler.cc at
  // the seed's commit), in its order.
  auto pipeline = std::make_unique<HloPassPipeline>("optimization");
  // Dots/convolutions in one type before anything pattern-matches them.
  pipeline->AddPass<OperandUpcaster>();
  pipeline->AddPass<ResultCaster>();
  // TOTALORDER compares become integer compares the emitters know.
  pipeline->AddPass<ComparisonExpander>();
  // Remove zero-sized HLO from the input so later passes need not handle it.
  pipeline->AddPass<ZeroSizedHloElimination>();
  // Every later pass sees one flat computation per program (XLA inlines
  // calls here because the GPU backend does not run kCall).
  pipeline->AddPass<CallInliner>();
  // passlab runs FlattenCallGraph here (XLA: in layout-assignment) so that
  // each loop/branch body has one caller before the while-loop passes edit
  // bodies in place.
  pipeline->AddPass<FlattenCallGraph>();
  // Canonical dots ([batch.., M, K] x [batch.., K, N], seed 003) before the
  // simplification loop cleans up the reshapes/transposes it adds.
  pipeline->AddPass<DotDecomposer>();
  pipeline->AddPass<BatchNormExpander>();
  pipeline->AddPass<LogisticExpander>();
  // Not in XLA:GPU's 2021 pipeline: hoists loop-invariant work before the
  // fixed point, whose simplify-while-loops then drops the state it freed.
  pipeline->AddPass<WhileLoopInvariantCodeMotion>();
  auto& simplification = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification");
  HloPassPipeline& s = simplification.pass();
  // BatchNormExpander (and algsimp) can create zero-sized ops: eliminate
  // them first in every round.
  s.AddPass<ZeroSizedHloElimination>();
  s.AddPass<AlgebraicSimplifier>();
  // algsimp may add contracting dimensions to a dot.
  s.AddPass<DotDecomposer>();
  s.AddPass<SortSimplifier>();
  // Tuple round trips hide loop state and common subexpressions.
  s.AddPass<TupleSimplifier>();
  // Sinking first: a sunk loop bound is what lets the trip count be known.
  s.AddPass<WhileLoopConstantSinking>();
  s.AddPass<WhileLoopSimplifier>();
  // Reshapes sunk below elementwise ops meet and cancel; the rearranged
  // constants it creates are folded right after.
  s.AddPass<ReshapeMover>();
  s.AddPass<HloConstantFolding>();
  s.AddPass<ConditionalSimplifier>();
  s.AddPass<HloCSE>();
  // DCE last in the loop: it cleans up after every rewrite above.
  s.AddPass<HloDCE>();
  // Transposes into dot/convolution dimension numbers, once the fixed point
  // has settled. XLA runs it inside the loop guarded by a "still a canonical
  // gemm" predicate; unguarded inside the loop it undoes what DotDecomposer
  // does and the two alternate until the iteration limit.
  pipeline->AddPass<TransposeFolding>();
  return pipeline;
}

std::vector<std::string> PipelineNames() { return {"default", "optimization"}; }

absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildNamedPipeline(std::string_view name) {
  if (name == "default" || name == "optimization") return BuildOptimizationPipeline();
  return absl::InvalidArgumentError(
      StrCat("unknown pipeline '", name, "'; known pipelines: ", Join(PipelineNames(), ", ")));
}

}  // namespace passlab
