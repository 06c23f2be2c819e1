#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/partitioned_module_pipeline.h"

#include "passes/autotune/gemm_algorithm_picker.h"
#include "passes/autotune/gpu_conv_algorithm_picker.h"
#include "passes/expanders/convolution_4d_expander.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "passes/expanders/stable_sort_expander.h"
#include "passes/collectives/all_gather_broadcast_reorder.h"
#include "passes/expanders/stochastic_convert_decomposer.h"
#include "passes/expanders/topk_decomposer.h"
#include "passes/collectives/all_gather_combiner.h"
#include "passes/collectives/all_reduce_combiner.h"
#include "passes/collectives/all_reduce_folder.h"
#include "passes/collectives/all_reduce_simplifier.h"
#include "passes/collectives/async_collective_creator.h"
#include "passes/collectives/reduce_scatter_creator.h"
#include "passes/expanders/batchnorm_expander.h"
#include "passes/expanders/bitcast_dtypes_expander.h"
#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/dot_decomposer.h"
#include "passes/expanders/gather_expander.h"
#include "passes/expanders/gpu_scatter_expander.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/ragged_dot_rewriter.h"
#include "passes/expanders/scaled_dot_rewriter.h"
#include "passes/expanders/scan_expander.h"
#include "passes/expanders/operand_upcaster.h"
#include "passes/expanders/qr_expander.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/rng_expander.h"
#include "passes/expanders/scatter_expander.h"
#include "passes/fusion/fusion_merger.h"
#include "passes/fusion/horizontal_input_fusion.h"
#include "passes/fusion/horizontal_loop_fusion.h"
#include "passes/fusion/instruction_fusion.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/variadic_op_splitter.h"
#include "passes/gpu/reduction_degenerate_dim_remover.h"
#include "passes/gpu/reduction_dimension_grouper.h"
#include "passes/gpu/reduction_layout_normalizer.h"
#include "passes/gpu/reduction_splitter.h"
#include "passes/gpu/tree_reduction_rewriter.h"
#include "passes/layout/gpu_layout_assignment.h"
#include "passes/prepare/copy_insertion.h"
#include "passes/prepare/latency_hiding_scheduler.h"
#include "passes/prepare/rematerialization.h"
#include "passes/prepare/sanitize_constant_names.h"
#include "passes/libcall/conv_padding_legalization.h"
#include "passes/libcall/conv_rewriter.h"
#include "passes/libcall/cublas_pad_for_gemms.h"
#include "passes/libcall/cudnn_fused_conv_rewriter.h"
#include "passes/libcall/cudnn_pad_for_convolutions.h"
#include "passes/libcall/gemm_broadcast_folding_rewriter.h"
#include "passes/libcall/gemm_rewriter.h"
#include "passes/libcall/gpusolver_rewriter.h"
#include "passes/expanders/cholesky_expander.h"
#include "passes/libcall/triangular_solve_rewriter.h"
#include "passes/simplifiers/algebraic_simplifier.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/conditional_canonicalizer.h"
#include "passes/simplifiers/conditional_simplifier.h"
#include "passes/simplifiers/convert_mover.h"
#include "passes/simplifiers/dot_dimension_sorter.h"
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
#include "passes/simplifiers/reshape_mover.h"
#include "passes/simplifiers/scatter_simplifier.h"
#include "passes/simplifiers/slice_sinker.h"
#include "passes/simplifiers/while_loop_invariant_code_motion.h"
#include "passes/simplifiers/tuple_simplifier.h"
#include "passes/simplifiers/zero_sized_hlo_elimination.h"

namespace passlab::gpu2021 {

// XLA:GPU as it was around 2021, the era of seed 003's blog (its table 1):
// instruction fusion, fusion merger, multi-output and horizontal fusion; no
// layout normalization; algorithms picked before (convolutions) and right
// after (gemms) layout assignment. Today's ops (ragged/scaled dots, scan)
// are expanded where today's XLA does, so every input still compiles.

namespace {

// XLA:GPU of 2021 turned convolution operand swaps off in every algsimp it
// ran (set_enable_conv_operand_swap(false) in gpu_compiler.cc and
// nvptx_compiler.cc at 0deba0dd, 2021-09-01).
AlgebraicSimplifierOptions Algsimp2021() {
  AlgebraicSimplifierOptions o;
  o.enable_conv_operand_swap = false;
  return o;
}

}  // namespace

std::unique_ptr<HloPassPipeline> BuildSpmdPartitionerPipeline() {
  // XLA:GPU's "spmd-partitioner" pipeline (seed 003 table 1): simplify,
  // propagate shardings, partition. Runs on partitioned modules only.
  std::unique_ptr<HloPassPipeline> pipeline = std::make_unique<PartitionedModulePipeline>("spmd-partitioner");
  // As in XLA, first: one flat computation, no zero-sized ops and array
  // conditionals before the simplifier loop and propagation see them.
  pipeline->AddPass<CallInliner>();
  pipeline->AddPass<ZeroSizedHloElimination>();
  pipeline->AddPass<ConditionalCanonicalizer>();
  // XLA's spmd-simplify fixed point, in its order: the partitioner handles
  // fewer ops (simple gathers/scatters become dynamic-slices/updates, loops
  // with constant trip counts unroll, constants fold).
  auto& simplify = pipeline->AddPass<HloPassFix<HloPassPipeline>>("spmd-simplify");
  HloPassPipeline& s = simplify.pass();
  s.AddPass<AlgebraicSimplifier>(Algsimp2021());
  s.AddPass<SortSimplifier>();
  s.AddPass<TupleSimplifier>();
  s.AddPass<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  s.AddPass<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  // Sinking first: a sunk loop bound is what lets the trip count be known.
  s.AddPass<WhileLoopConstantSinking>();
  s.AddPass<WhileLoopSimplifier>();
  s.AddPass<ReshapeMover>();
  s.AddPass<HloConstantFolding>();
  s.AddPass<ConditionalSimplifier>();
  s.AddPass<HloDCE>();
  // On the simplified program, so fewer ops stop the propagation.
  pipeline->AddPass<ShardingPropagation>();
  // Reads one sharding per instruction, so after propagation.
  pipeline->AddPass<SpmdPartitioner>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline() {
  // XLA:GPU's "optimization" pipeline (seed 003 table 1; gpu_compiler.cc at
  // the seed's commit), in its order.
  auto pipeline = std::make_unique<HloPassPipeline>("optimization");
  // First, as in today's XLA:GPU: ragged and scaled dots become dense dots
  // (passlab has no grouped-GEMM or block-scaled library call to keep them).
  pipeline->AddPass<RaggedDotRewriter>();
  pipeline->AddPass<ScaledDotRewriter>();
  // First, as in XLA (after its TopkSplitter/TopkSpecializer, which passlab
  // lacks): topk becomes a sort whose TOTALORDER comparator the comparison
  // expander below then rewrites.
  pipeline->AddPass<TopkDecomposer>();
  // Dots/convolutions in one type before anything pattern-matches them.
  pipeline->AddPass<OperandUpcaster>();
  pipeline->AddPass<ResultCaster>();
  // As in XLA: rng draws from the module's state through a philox
  // rng-bit-generator, so it runs right before the expander of those.
  pipeline->AddPass<RngExpander>();
  // rng-bit-generator becomes plain integer HLO (a call of a generated
  // computation; philox for RNG_DEFAULT as on GPU) among XLA:GPU's first
  // expanders, before CallInliner inlines the call.
  pipeline->AddPass<RngBitGeneratorExpander>();
  // TOTALORDER compares become integer compares the emitters know.
  pipeline->AddPass<ComparisonExpander>();
  // Remove zero-sized HLO from the input so later passes need not handle it.
  pipeline->AddPass<ZeroSizedHloElimination>();
  // select-and-scatter becomes a reduce-window and a scatter before the
  // scatter expanders, which then see (and expand, if they must) its scatter.
  pipeline->AddPass<SelectAndScatterExpander>();
  // Scatters the GPU emitter cannot handle become loops early, so the
  // simplification loop cleans up the loop's index arithmetic.
  pipeline->AddPass<GpuScatterExpander>();
  // As in XLA (no solver call for QR): the Householder custom calls become
  // loops before CallInliner and the simplification loop, which clean up
  // their index arithmetic.
  pipeline->AddPass<QrExpander>();
  // Every later pass sees one flat computation per program (XLA inlines
  // calls here because the GPU backend does not run kCall).
  pipeline->AddPass<CallInliner>();
  // As in XLA, after CallInliner: scans become while loops (their to_apply
  // inlined into the loop body) before FlattenCallGraph and the loop passes.
  pipeline->AddPass<ScanExpander>();
  // passlab runs FlattenCallGraph here (XLA: in layout-assignment) so that
  // each loop/branch body has one caller before the while-loop passes edit
  // bodies in place.
  pipeline->AddPass<FlattenCallGraph>();
  // Canonical dots ([batch.., M, K] x [batch.., K, N], seed 003) before the
  // simplification loop cleans up the reshapes/transposes it adds.
  pipeline->AddPass<DotDecomposer>();
  // As in XLA, between DotDecomposer and Convolution4DExpander: nothing
  // before it reads stochastic-convert; the simplification loop folds the
  // constants it adds.
  pipeline->AddPass<StochasticConvertDecomposer>();
  // As in XLA, after DotDecomposer: 4-spatial-dim convolutions lose
  // their trivial dims before anything pattern-matches convolutions.
  pipeline->AddPass<Convolution4DExpander>();
  // Stable sorts carry their own tie-break before any pass (or the GPU's
  // bitonic sort) may treat a sort as unstable.
  pipeline->AddPass<StableSortExpander>();
  // bf16 arithmetic the backend does not support runs in f32 (seed 003 table
  // 1 has BFloat16Normalization here; a second occurrence runs at the end).
  pipeline->AddPass<FloatNormalization>();
  pipeline->AddPass<BatchNormExpander>();
  pipeline->AddPass<LogisticExpander>();
  // After CallInliner and FlattenCallGraph (branches have one caller), before
  // the simplification loop's conditional simplifier sees the branches.
  pipeline->AddPass<ConditionalCanonicalizer>();
  // Not in XLA:GPU's 2021 pipeline: hoists loop-invariant work before the
  // fixed point, whose simplify-while-loops then drops the state it freed.
  pipeline->AddPass<WhileLoopInvariantCodeMotion>();
  // Canonical gathers ([N,K] indices) before the loop, so the simple-gather
  // expander and algsimp see one form.
  pipeline->AddPass<GatherSimplifier>();
  // Scatters likewise, after every expander that creates one
  // (select_and_scatter_expander among them).
  pipeline->AddPass<ScatterSimplifier>();
  auto& simplification = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification");
  HloPassPipeline& s = simplification.pass();
  // BatchNormExpander (and algsimp) can create zero-sized ops: eliminate
  // them first in every round.
  s.AddPass<ZeroSizedHloElimination>();
  // One-index gathers become a dynamic-slice that algsimp can fold further.
  s.AddPass<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  // One-index scatters become a one-trip loop that WhileLoopSimplifier
  // (below) inlines into a dynamic-update-slice; in the loop because algsimp
  // can shrink a scatter's indices to one.
  s.AddPass<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  s.AddPass<AlgebraicSimplifier>(Algsimp2021());
  // As in XLA, right after algsimp (which may fold a bitcast-convert pair
  // away first); later rounds fold the shifts of constants it creates.
  s.AddPass<BitcastDtypesExpander>();
  // algsimp may add contracting dimensions to a dot.
  s.AddPass<DotDecomposer>();
  // In the loop, as in XLA, so algsimp folds the concatenates and slices it
  // leaves.
  s.AddPass<DotMerger>();
  s.AddPass<SortSimplifier>();
  // Tuple round trips hide loop state and common subexpressions.
  s.AddPass<TupleSimplifier>();
  // Sinking first: a sunk loop bound is what lets the trip count be known.
  s.AddPass<WhileLoopConstantSinking>();
  s.AddPass<WhileLoopSimplifier>();
  // Reshapes sunk below elementwise ops meet and cancel; the rearranged
  // constants it creates are folded right after.
  // After algsimp has folded the slices; the slices it leaves under the
  // merged op meet ReshapeMover, folding and CSE below.
  s.AddPass<SliceSinker>();
  s.AddPass<ReshapeMover>();
  s.AddPass<HloConstantFolding>();
  s.AddPass<ConditionalSimplifier>();
  s.AddPass<HloCSE>();
  // DCE last in the loop: it cleans up after every rewrite above.
  s.AddPass<HloDCE>();
  // XLA:GPU's simplification-2: converts move once the main loop has settled;
  // algsimp folds the convert round trips the moves expose.
  auto& simplification2 = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification-2");
  simplification2.pass().AddPass<ConvertMover>();
  simplification2.pass().AddPass<AlgebraicSimplifier>(Algsimp2021());
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildCollectiveOptimizationsPipeline() {
  // XLA:GPU's "collective-optimizations" pipeline: after optimization, on
  // the collectives the SPMD partitioner (or the user) wrote, in XLA's order.
  auto pipeline = std::make_unique<HloPassPipeline>("collective-optimizations");
  // Collectives over groups of one disappear first, so the folder and the
  // creator below only see real exchanges.
  pipeline->AddPass<AllReduceSimplifier>();
  pipeline->AddPass<AllReduceFolder>();
  pipeline->AddPass<ReduceScatterCreator>();
  // As in XLA, after the reduce-scatter creator: gathers of broadcasts
  // exchange the broadcast's operand; the reshape(broadcast) it may leave
  // is folded by algsimp right below.
  pipeline->AddPass<AllGatherBroadcastReorder>();
  // As in XLA: reshape(broadcast) adding unit dimensions becomes a plain
  // broadcast, and the offset arithmetic the rewrites leave folds.
  pipeline->AddPass<AlgebraicSimplifier>(Algsimp2021());
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildConvCanonicalizationPipeline() {
  // XLA:GPU's "conv_canonicalization" pipeline: convolutions become DNN
  // library calls, in XLA's order.
  auto pipeline = std::make_unique<HloPassPipeline>("conv_canonicalization");
  // First, as in XLA: cholesky becomes the solver library's potrf call; it
  // touches nothing the convolution passes look at.
  pipeline->AddPass<GpusolverRewriter>();
  // Not in XLA:GPU (cuSOLVER takes every cholesky there); here it expands
  // what the solver rewriter leaves (f16/bf16, or everything when the
  // rewriter is disabled) into loops and a triangular-solve, which the
  // triangular-solve-rewriter (post-layout_assignment) can still turn into
  // trsm calls. After the rewriter so that it never takes a potrf call's work.
  pipeline->AddPass<CholeskyExpander>();
  // Recognises the forward/backward forms on plain convolutions, so it runs
  // before anything turns them into calls.
  pipeline->AddPass<ConvRewriter>();
  // Matches forward convolution calls, so after ConvRewriter.
  pipeline->AddPass<CudnnFusedConvRewriter>();
  // After both rewriters, which choose the paddings it legalizes.
  pipeline->AddPass<ConvPaddingLegalization>();
  // The legalization leaves tuple(slice(gte(call, 0)), gte(call, 1)) round
  // trips and pads of constants behind, as in XLA.
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(Algsimp2021());
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildLayoutAssignmentPipeline() {
  // XLA:GPU's "layout assignment" pipeline: after conv_canonicalization (the
  // convolution calls whose layouts it constrains exist) and before
  // GemmRewriter (it constrains dots, which become gemm calls later).
  auto pipeline = std::make_unique<HloPassPipeline>("layout assignment");
  // Layouts are assigned per computation, so every called computation has
  // one call site first (XLA runs FlattenCallGraph here).
  pipeline->AddPass<FlattenCallGraph>();
  pipeline->AddPass<GpuLayoutAssignment>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostLayoutAssignmentPipeline() {
  // XLA:GPU's "post-layout_assignment" pipeline (both nvptx parts).
  auto pipeline = std::make_unique<HloPassPipeline>("post-layout_assignment");
  // nvptx post-layout_assignment part 1: gemm dims padded to multiples of 8
  // for bf16 (Ampere) and f16 (Volta), while the dots are still canonical
  // and before GemmRewriter turns them into calls; constant folding then
  // folds the pads of constant operands.
  pipeline->AddPass<CublasPadForGemms>(CublasPadForGemmsOptions{PrimitiveType::kBF16, 8});
  pipeline->AddPass<CublasPadForGemms>(CublasPadForGemmsOptions{PrimitiveType::kF16, 8});
  // Convolution calls' channels likewise (XLA's part 1 too), before the
  // constant folding that folds pads of constant filters.
  pipeline->AddPass<CudnnPadForConvolutions>();
  pipeline->AddPass<HloConstantFolding>();
  // Transposes into dot/convolution dimension numbers, once the fixed point
  // has settled. XLA runs it inside the loop guarded by a "still a canonical
  // gemm" predicate; unguarded inside the loop it undoes what DotDecomposer
  // does and the two alternate until the iteration limit.
  // triangular-solve becomes a BLAS trsm call once layouts are final (the
  // call reads row-major matrices).
  pipeline->AddPass<TriangularSolveRewriter>();
  // Contracting dimensions in memory order first, so TransposeFolding and
  // GemmRewriter see one contiguous K where the layout allows it.
  pipeline->AddPass<DotDimensionSorter>();
  pipeline->AddPass<TransposeFolding>();
  // Dots become BLAS calls right after TransposeFolding, as in XLA: the call
  // reads either operand orientation, so a folded transpose costs nothing.
  pipeline->AddPass<GemmRewriter>();
  // Matches the gemm calls GemmRewriter just created, before anything fuses
  // their broadcast operands away from them.
  pipeline->AddPass<GemmBroadcastFoldingRewriter>();
  // Reduction canonicalization for the GPU reduction emitter: size-1 dims out,
  // default layouts, adjacent reduced dims merged, then the splitter and the
  // tree rewriter, each to its fixed point, on canonical reduces.
  pipeline->AddPass<ReductionDegenerateDimRemover>();
  pipeline->AddPass<ReductionLayoutNormalizer>();
  pipeline->AddPass<ReductionDimensionGrouper>();
  pipeline->AddPass<HloPassFix<ReductionSplitter>>();
  pipeline->AddPass<HloPassFix<TreeReductionRewriter>>();
  // Second occurrence, as in XLA: after every pass that may create bf16
  // arithmetic.
  pipeline->AddPass<FloatNormalization>();
  // Convolution algorithms are chosen before fusion (XLA's comment: the
  // calls' scratch results are still visible here), once the calls' operands
  // and paddings are final.
  pipeline->AddPass<GpuConvAlgorithmPicker>();
  // nvptx post-layout_assignment part 2: gemm algorithms last, after every
  // pass that may change a gemm's operands.
  pipeline->AddPass<GemmAlgorithmPicker>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildFusionPipeline() {
  // XLA:GPU's "fusion" pipeline (seed 003 table 1). It runs after every pass
  // that rewrites single ops (post-layout_assignment): fused ops are out of
  // their reach.
  auto pipeline = std::make_unique<HloPassPipeline>("fusion");
  // Concatenates within the kernel parameter limit before they are fused.
  pipeline->AddPass<VariadicOpSplitter>();
  // First without duplication, so that every producer with one consumer is
  // fused before the second occurrence decides which multi-user producers
  // are cheap enough to compute again in each consumer.
  pipeline->AddPass<GpuInstructionFusion>(GpuInstructionFusionOptions{.may_duplicate = false});
  pipeline->AddPass<GpuInstructionFusion>(GpuInstructionFusionOptions{.may_duplicate = true});
  // Merges the multi-user loop fusions instruction fusion had to leave.
  pipeline->AddPass<FusionMerger>();
  // On the final single-output fusions: siblings and producer-consumer pairs
  // that iterate alike share one kernel.
  pipeline->AddPass<GpuMultiOutputFusion>(MultiOutputFusionOptions{.device = ""});  // no cost model then
  // Duplicated producers leave identical instructions inside fusions.
  pipeline->AddPass<HloCSE>(HloCseOptions{.only_fusion_computations = true});
  pipeline->AddPass<HloDCE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildHorizontalFusionPipeline() {
  // XLA:GPU's "horizontal-fusion" pipeline: after the fusion pipeline has
  // built every producer-consumer kernel, independent kernels are combined.
  auto pipeline = std::make_unique<HloPassPipeline>("horizontal-fusion");
  // Loop kernels first, as in XLA; reductions are left to the input pass.
  pipeline->AddPass<GpuHorizontalLoopFusion>();
  pipeline->AddPass<GpuHorizontalInputFusion>();
  pipeline->AddPass<HloCSE>(HloCseOptions{.only_fusion_computations = true});
  pipeline->AddPass<HloDCE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildIrEmitPreparePipeline() {
  // XLA:GPU's "GPU-ir-emit-prepare" pipeline: the last edits before buffer
  // assignment and emission, on the final (fused) program.
  auto pipeline = std::make_unique<HloPassPipeline>("GPU-ir-emit-prepare");
  // After every pass that restructures loops or results: the copies only
  // keep their purpose if nothing rewrites around them afterwards.
  pipeline->AddPass<CopyInsertion>();
  // After copy insertion (it adds no constants); names must be final when
  // constants are emitted as symbols.
  pipeline->AddPass<SanitizeConstantNames>();
  // The schedule must see the final instructions (copies included); only
  // rematerialization, which edits the schedule itself, comes after it.
  pipeline->AddPass<LatencyHidingScheduler>();
  // Needs the schedule (live ranges are positions in it) and places its
  // copies in it; without a memory limit it does nothing.
  pipeline->AddPass<Rematerialization>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostFusionOptimizationPipeline() {
  // XLA:GPU's "post-fusion optimization" pipeline: once fusion has fixed
  // which values are materialized, small collectives are combined, then
  // made asynchronous.
  auto pipeline = std::make_unique<HloPassPipeline>("post-fusion optimization");
  pipeline->AddPass<AllGatherCombiner>();
  pipeline->AddPass<AllReduceCombiner>();
  // After the combiners, which match the synchronous forms (XLA converts
  // collectives to start/done pairs here too).
  pipeline->AddPass<AsyncCollectiveCreator>();
  // Another occurrence, as in XLA: cleans up the combiners' tuples. After
  // layout assignment, so layout-sensitive (XLA's post-layout algsimp
  // options): a copy that changes the layout is not a no-op.
  AlgebraicSimplifierOptions layout_sensitive = Algsimp2021();
  layout_sensitive.is_layout_sensitive = true;
  pipeline->AddPass<AlgebraicSimplifier>(layout_sensitive);
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildGpuPipeline() {
  // XLA:GPU's sub-pipelines in seed 003's order (table 1). Each builder
  // comments its own ordering constraints.
  auto pipeline = std::make_unique<HloPassPipeline>("gpu-2021");
  // First, as in XLA: every later pipeline sees the per-device program.
  pipeline->AddPipeline(BuildSpmdPartitionerPipeline());
  pipeline->AddPipeline(BuildOptimizationPipeline());
  pipeline->AddPipeline(BuildCollectiveOptimizationsPipeline());
  pipeline->AddPipeline(BuildConvCanonicalizationPipeline());
  pipeline->AddPipeline(BuildLayoutAssignmentPipeline());
  pipeline->AddPipeline(BuildPostLayoutAssignmentPipeline());
  pipeline->AddPipeline(BuildFusionPipeline());
  pipeline->AddPipeline(BuildHorizontalFusionPipeline());
  pipeline->AddPipeline(BuildPostFusionOptimizationPipeline());
  // Last: copies and names for the final program that is emitted.
  pipeline->AddPipeline(BuildIrEmitPreparePipeline());
  return pipeline;
}

}  // namespace passlab::gpu2021
