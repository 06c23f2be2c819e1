#include "passes/pipelines/pipelines.h"

#include "core/ir/str_util.h"
#include "passes/expanders/batchnorm_expander.h"
#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/dot_decomposer.h"
#include "passes/expanders/gather_expander.h"
#include "passes/expanders/gpu_scatter_expander.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/operand_upcaster.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/scatter_expander.h"
#include "passes/gpu/reduction_degenerate_dim_remover.h"
#include "passes/gpu/reduction_dimension_grouper.h"
#include "passes/gpu/reduction_layout_normalizer.h"
#include "passes/gpu/reduction_splitter.h"
#include "passes/gpu/tree_reduction_rewriter.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/conditional_simplifier.h"
#include "passes/simplifiers/dot_merger.h"
#include "passes/simplifiers/flatten_call_graph.h"
#include "passes/simplifiers/float_normalization.h"
#include "passes/simplifiers/gather_simplifier.h"
#include "passes/simplifiers/sort_simplifier.h"
#include "passes/simplifiers/transpose_folding.h"
#include "passes/simplifiers/while_loop_constant_sinking.h"
#include "passes/simplifiers/while_loop_simplifier.h"
#include "passes/simplifiers/hlo_constant_folding.h"
#include "passes/simplifiers/hlo_cse.h"
#include "passes/simplifiers/hlo_dce.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"

namespace passlab {

std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline() {
  auto pipeline = std::make_unique<HloPassPipeline>("optimization");
  // First, so every later pass sees one flat computation per program (XLA
  // runs CallInliner at the very start of "optimization").
  pipeline->AddPass<CallInliner>();
  // Each loop/branch body gets its own copy before passes edit bodies in place.
  pipeline->AddPass<FlattenCallGraph>();
  // Expanders into simpler HLO the backend emits as loops.
  pipeline->AddPass<ComparisonExpander>();
  pipeline->AddPass<LogisticExpander>();
  pipeline->AddPass<OperandUpcaster>();
  pipeline->AddPass<ResultCaster>();
  pipeline->AddPass<BatchNormExpander>();
  // rng-bit-generator becomes plain integer HLO (a call of a generated
  // computation, philox for RNG_DEFAULT as on GPU), among XLA:GPU's first
  // expanders. The call stays: XLA inlines it in a later CallInliner run.
  pipeline->AddPass<RngBitGeneratorExpander>();
  // Scatters the GPU emitter cannot handle become loops early, so the
  // simplification loop below cleans up the loop's index arithmetic (XLA:GPU
  // runs GpuScatterExpander among its first expanders).
  pipeline->AddPass<GpuScatterExpander>();
  // Canonical dots ([batch.., M, K] x [batch.., K, N], seed 003) before the
  // simplification loop cleans up the reshapes/transposes it adds; XLA runs
  // it here too. TransposeFolding (below, later in XLA) may then fold the
  // transposes back into the dimension numbers for the gemm rewriter.
  pipeline->AddPass<DotDecomposer>();
  // After BatchNormExpander, which can create zero-sized ops (as in XLA).
  pipeline->AddPass<ZeroSizedHloElimination>();
  // Canonical gathers ([N,K] indices) before the loop, so the simple-gather
  // expander and algsimp see one form.
  pipeline->AddPass<GatherSimplifier>();
  auto& simplification = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification");
  // algsimp first: its rewrites expose tuples, CSE and dead code to the rest.
  simplification.pass().AddPass<AlgebraicSimplifier>();
  // Folds the constant subexpressions algsimp leaves ((A+C1)+C2 => A+(C1+C2)).
  simplification.pass().AddPass<HloConstantFolding>();
  // Tuple round trips next: they hide common subexpressions from CSE.
  simplification.pass().AddPass<TupleSimplifier>();
  simplification.pass().AddPass<HloCSE>();
  simplification.pass().AddPass<ConditionalSimplifier>();
  simplification.pass().AddPass<SortSimplifier>();
  // One-index scatters become a one-trip loop that WhileLoopSimplifier (below)
  // inlines into a dynamic-update-slice; in the loop because algsimp can
  // shrink a scatter's indices to one (XLA places it in its simplification).
  simplification.pass().AddPass<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  // One-index gathers become a dynamic-slice that algsimp can fold further.
  simplification.pass().AddPass<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  // Sinking first: a sunk loop bound is what lets the trip count be known.
  simplification.pass().AddPass<WhileLoopConstantSinking>();
  simplification.pass().AddPass<WhileLoopSimplifier>();
  // After CSE (shared operands are then one instruction) and in the loop, as
  // in XLA, so algsimp folds the concatenates and slices it leaves.
  simplification.pass().AddPass<DotMerger>();
  // DCE last in the loop: it cleans up after every rewrite above.
  simplification.pass().AddPass<HloDCE>();
  // After the fixed point, so algsimp's transpose rewrites have settled; the
  // gemm rewriter that follows later wants untransposed operands.
  pipeline->AddPass<TransposeFolding>();
  // Reduction canonicalization for the GPU reduction emitter, in XLA:GPU's
  // post-layout order (no layout pipeline yet, so here): size-1 dims out,
  // default layouts, adjacent reduced dims merged, then the splitter and the
  // tree rewriter, each to its fixed point, on canonical reduces.
  pipeline->AddPass<ReductionDegenerateDimRemover>();
  pipeline->AddPass<ReductionLayoutNormalizer>();
  pipeline->AddPass<ReductionDimensionGrouper>();
  pipeline->AddPass<HloPassFix<ReductionSplitter>>();
  pipeline->AddPass<HloPassFix<TreeReductionRewriter>>();
  // Last for now: XLA runs it after layout assignment (not modelled yet), once
  // no later pass creates bf16 arithmetic; it must stay after every such pass.
  pipeline->AddPass<FloatNormalization>();
  return pipeline;
}

std::vector<std::string> PipelineNames() { return {"default", "optimization"}; }

absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildNamedPipeline(std::string_view name) {
  if (name == "default" || name == "optimization") return BuildOptimizationPipeline();
  return absl::InvalidArgumentError(
      StrCat("unknown pipeline '", name, "'; known pipelines: ", Join(PipelineNames(), ", ")));
}

}  // namespace passlab
