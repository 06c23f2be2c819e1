#include "passes/pipelines/pipelines.h"

#include "passes/autotune/config_assigner.h"
#include "passes/pipelines/gpu_2021_pipeline.h"
#include "passes/pipelines/partitioned_module_pipeline.h"

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
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
#include "passes/fusion/fusion_wrapper.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/priority_fusion.h"
#include "passes/fusion/variadic_op_splitter.h"
#include "passes/gpu/reduction_degenerate_dim_remover.h"
#include "passes/gpu/reduction_dimension_grouper.h"
#include "passes/gpu/reduction_layout_normalizer.h"
#include "passes/gpu/reduction_splitter.h"
#include "passes/gpu/tree_reduction_rewriter.h"
#include "passes/layout/broadcast_canonicalizer.h"
#include "passes/layout/gpu_layout_assignment.h"
#include "passes/layout/layout_normalization.h"
#include "passes/layout/move_copy_to_users.h"
#include "passes/layout/reduce_decomposer.h"
#include "passes/layout/reshape_decomposer.h"
#include "passes/libcall/cudnn_simplify_padding.h"
#include "passes/prepare/optimize_input_output_buffer_alias.h"
#include "passes/simplifiers/simplify_fp_conversions.h"
#include "passes/fusion/copy_fusion.h"
#include "passes/prepare/copy_insertion.h"
#include "passes/prepare/hlo_memory_scheduler.h"
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
#include "passes/spmd/sharding_remover.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/simplifiers/call_inliner.h"
#include "passes/simplifiers/conditional_canonicalizer.h"
#include "passes/simplifiers/conditional_simplifier.h"
#include "passes/simplifiers/convert_mover.h"
#include "passes/simplifiers/dot_dimension_sorter.h"
#include "passes/simplifiers/dot_merger.h"
#include "passes/simplifiers/dot_dimension_merger.h"
#include "passes/simplifiers/dot_dimension_normalizer.h"
#include "passes/simplifiers/dot_strength_reduction.h"
#include "passes/simplifiers/gemv_rewriter.h"
#include "passes/simplifiers/scatter_slice_simplifier.h"
#include "passes/libcall/dot_normalizer.h"
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

namespace passlab {

namespace {

// XLA's GetAlgebraicSimplifierOptions(mode) (gpu_compiler.cc) for the modes
// of the algsimp occurrences below; the GPU version makes it XLA's
// GpuAlgebraicSimplifier.
enum class AlgsimpMode {
  kLayoutInsensitive,         // optimization, collective-optimizations
  kConvCanonicalization,      // conv_canonicalization
  kLayoutNormalization,       // layout normalization
  kPostLayoutAssignment,      // hlo normalization, post-layout_assignment
  kPostFusionSimplification,  // post-fusion-simplification
};

AlgebraicSimplifierOptions GpuAlgsimpOptions(AlgsimpMode mode) {
  AlgebraicSimplifierOptions o;
  o.enable_dot_strength_reduction = false;  // DotStrengthReduction does it
  o.supports_non_canonical_dots = false;    // the GPU takes canonical dots
  o.enable_unconditional_reduce_of_concat_replacement = false;
  o.rewrite_no_op_bitcast_convert_to_bitcast = true;
  o.gpu_compute_capability = "9.0";  // H100: XLA's GpuAlgebraicSimplifier
  // GpuAlgebraicSimplifier::RunImpl (xla/backends/gpu/transforms/
  // algebraic_simplifier.cc) visits each computation once, without the base
  // pass's run_to_fixed_point loop; the HloPassFix around some occurrences
  // (and the simplification pipeline's own) repeats it. One sweep leaves
  // what a rewrite made of a dead instruction (reshape(reshape(x)) ->
  // a no-op reshape(x)) for the next run or DCE, as XLA's does.
  o.run_to_fixed_point = false;
  // Convolution operand swaps only in these two modes (the second is layout
  // sensitive, so never in fact), and only to a convolution the conv
  // rewriter lowers (XLA passes ConvRewriter::ConvIsLowerable; ROCm would
  // turn the swap off).
  o.enable_conv_operand_swap = false;
  if (mode == AlgsimpMode::kLayoutInsensitive || mode == AlgsimpMode::kPostFusionSimplification) {
    o.enable_conv_operand_swap = true;
    o.conv_is_lowerable_callback = "conv-rewriter";
    o.unconditionally_simplify_reduce_of_transpose_or_reshape = true;
    // The GPU handles transposes better than slice+concatenate.
    o.rewrite_reshape_transpose_as_slice_concatenate = false;
    o.enable_hoist_transpose_of_reshape = true;
  }
  o.is_layout_sensitive = mode == AlgsimpMode::kLayoutNormalization ||
                          mode == AlgsimpMode::kPostLayoutAssignment ||
                          mode == AlgsimpMode::kPostFusionSimplification;
  return o;
}

}  // namespace

std::unique_ptr<HloPassPipeline> BuildPreSpmdPartitionerPipeline() {
  // XLA:GPU's "pre-spmd-partitioner" (RunPreSPMDPartitionerPasses): IR
  // cleanup every later pipeline relies on, partitioned or not.
  auto pipeline = std::make_unique<HloPassPipeline>("pre-spmd-partitioner");
  pipeline->AddPass<FlattenCallGraph>();
  pipeline->AddPass<CallInliner>();
  pipeline->AddPass<ZeroSizedHloElimination>();
  pipeline->AddPass<ConditionalCanonicalizer>();
  // Its TOTALORDER compares must exist before the comparison expander runs.
  pipeline->AddPass<TopkDecomposer>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildSpmdPartitionerPipeline() {
  // XLA:GPU's "spmd-partitioner" (RunSPMDPasses), partitioned modules only:
  // the spmd-simplify fixed point, sharding propagation, partitioning.
  std::unique_ptr<HloPassPipeline> pipeline = std::make_unique<PartitionedModulePipeline>("spmd-partitioner");
  auto& simplify = pipeline->AddPass<HloPassFix<HloPassPipeline>>("spmd-simplify");
  HloPassPipeline& s = simplify.pass();
  s.AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kLayoutInsensitive));
  s.AddPass<SortSimplifier>();
  s.AddPass<TupleSimplifier>();
  s.AddPass<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  s.AddPass<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  s.AddPass<WhileLoopConstantSinking>();
  s.AddPass<WhileLoopSimplifier>();
  s.AddPass<ReshapeMover>();
  s.AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kLayoutInsensitive));
  s.AddPass<HloConstantFolding>();
  s.AddPass<ConditionalSimplifier>();
  s.AddPass<HloDCE>();
  pipeline->AddPass<ShardingPropagation>();
  pipeline->AddPass<SpmdPartitioner>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildShardingRemovalPipeline() {
  // XLA:GPU's "sharding-removal" (RunSPMDPasses when num_partitions is 1):
  // the sharding-only custom calls go, then what they left dead.
  std::unique_ptr<HloPassPipeline> pipeline = std::make_unique<UnpartitionedModulePipeline>("sharding-removal");
  pipeline->AddPass<ShardingRemover>();
  pipeline->AddPass<HloDCE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildOptimizationPipeline() {
  // XLA:GPU's "optimization" (RunOptimizationPasses in today's
  // gpu_compiler.cc), in its order, with the passes passlab has.
  auto pipeline = std::make_unique<HloPassPipeline>("optimization");
  // Ragged and scaled dots become dense dots (no grouped-GEMM or
  // block-scaled library call keeps them).
  pipeline->AddPass<RaggedDotRewriter>();
  pipeline->AddPass<ScaledDotRewriter>();
  pipeline->AddPass<TopkDecomposer>();
  // Canonical dots first: contracting dims in memory order, then
  // [batch.., M, K] x [batch.., K, N], before the casters look at them.
  pipeline->AddPass<DotDimensionSorter>();
  pipeline->AddPass<DotDecomposer>();
  pipeline->AddPass<ResultCaster>();
  pipeline->AddPass<OperandUpcaster>();
  pipeline->AddPass<RngExpander>();
  pipeline->AddPass<RngBitGeneratorExpander>();
  pipeline->AddPass<ComparisonExpander>();
  pipeline->AddPass<ZeroSizedHloElimination>();
  pipeline->AddPass<SelectAndScatterExpander>();
  // Today's XLA:GPU expands every cholesky here (no cuSOLVER potrf).
  pipeline->AddPass<CholeskyExpander>();
  pipeline->AddPass<GpuScatterExpander>();
  pipeline->AddPass<QrExpander>();
  pipeline->AddPass<CallInliner>();
  pipeline->AddPass<StochasticConvertDecomposer>();
  pipeline->AddPass<Convolution4DExpander>();
  pipeline->AddPass<BatchNormExpander>();
  pipeline->AddPass<LogisticExpander>();
  pipeline->AddPass<ConditionalCanonicalizer>();
  pipeline->AddPass<ScanExpander>();
  pipeline->AddPass<StableSortExpander>();
  // passlab's while-loop passes edit bodies in place, so each body has one
  // caller first (XLA flattens in layout assignment).
  pipeline->AddPass<FlattenCallGraph>();
  auto& simplification = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification");
  HloPassPipeline& s = simplification.pass();
  s.AddPass<ZeroSizedHloElimination>();
  s.AddPass<GatherSimplifier>();
  s.AddPass<GatherExpander>(GatherExpander::Mode::kEliminateSimpleGathers);
  s.AddPass<ScatterSimplifier>();
  s.AddPass<ScatterExpander>(ScatterExpander::Mode::kEliminateSimpleScatters);
  s.AddPass<ScatterSliceSimplifier>();
  // Dots too small for a library call become multiply + reduce (on the
  // H100's rules: XLA passes the device's compute capability).
  s.AddPass<DotStrengthReduction>();
  s.AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kLayoutInsensitive));
  s.AddPass<SortSimplifier>();
  s.AddPass<TupleSimplifier>();
  s.AddPass<WhileLoopConstantSinking>();
  s.AddPass<WhileLoopSimplifier>();
  s.AddPass<SliceSinker>();
  s.AddPass<ReshapeMover>();
  s.AddPass<HloConstantFolding>();
  s.AddPass<ConditionalSimplifier>();
  // Into convolutions only, inside the loop (XLA's never-fold rule for dot
  // operands here; dots get theirs after the loop).
  TransposeFoldingOptions convolutions_only;
  convolutions_only.dot_rule = TransposeFoldingOptions::DotRule::kNever;
  s.AddPass<TransposeFolding>(convolutions_only);
  HloCseOptions layout_insensitive_cse;
  layout_insensitive_cse.is_layout_sensitive = false;
  s.AddPass<HloCSE>(layout_insensitive_cse);
  s.AddPass<HloDCE>();
  // Outside the loop today (in 2021 it was inside).
  pipeline->AddPass<DotMerger>();
  pipeline->AddPass<DotDimensionNormalizer>(DotDimensionNormalizerOptions{.normalize_noncontracting_dimensions = true});
  pipeline->AddPass<TransposeFolding>();
  auto& simplification2 = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplification-2");
  simplification2.pass().AddPass<ConvertMover>();
  simplification2.pass().AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kLayoutInsensitive));
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildCollectiveOptimizationsPipeline() {
  // XLA:GPU's "collective-optimizations", the passes of it passlab has.
  auto pipeline = std::make_unique<HloPassPipeline>("collective-optimizations");
  pipeline->AddPass<AllReduceSimplifier>();
  pipeline->AddPass<AllReduceFolder>();
  pipeline->AddPass<HloDCE>();
  pipeline->AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kLayoutInsensitive));
  pipeline->AddPass<ReduceScatterCreator>();
  pipeline->AddPass<AllGatherBroadcastReorder>();
  pipeline->AddPass<HloDCE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildConvCanonicalizationPipeline() {
  // XLA:GPU's "conv_canonicalization" (nvptx_compiler.cc).
  auto pipeline = std::make_unique<HloPassPipeline>("conv_canonicalization");
  // bf16 convolutions and matmuls the libraries do not take run in f32.
  pipeline->AddPass<FloatNormalization>();
  // Grouped and batch-grouped convolutions reach it as they are: XLA:GPU
  // runs no ConvolutionGroupConverter (only XLA:CPU's cpu_compiler.cc does);
  // its conv rewriter turns batch groups into grouped calls itself.
  pipeline->AddPass<ConvRewriter>();
  pipeline->AddPass<CudnnFusedConvRewriter>();
  pipeline->AddPass<ConvPaddingLegalization>();
  pipeline->AddPass<CudnnPadForConvolutions>();
  pipeline->AddPass<CallInliner>();
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(GpuAlgsimpOptions(AlgsimpMode::kConvCanonicalization));
  // Pads CudnnPadForConvolutions added that the algsimp above left.
  pipeline->AddPass<CudnnSimplifyPadding>();
  auto& mover = pipeline->AddPass<HloPassFix<HloPassPipeline>>("reshape_mover_after_conv_canonicalization");
  mover.pass().AddPass<ReshapeMover>();
  mover.pass().AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kConvCanonicalization));
  auto& converts = pipeline->AddPass<HloPassFix<HloPassPipeline>>("simplify_after_conv_canonicalization");
  converts.pass().AddPass<ConvertMover>();
  converts.pass().AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kConvCanonicalization));
  pipeline->AddPass<HloConstantFolding>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildLayoutAssignmentPipeline() {
  // XLA:GPU's "layout assignment" (RunLayoutAssignmentPasses).
  auto pipeline = std::make_unique<HloPassPipeline>("layout assignment");
  pipeline->AddPass<FlattenCallGraph>();
  pipeline->AddPass<GpuLayoutAssignment>();
  // Donated entry parameters alias outputs of their size.
  pipeline->AddPass<OptimizeInputOutputBufferAlias>(
      OptimizeInputOutputBufferAliasOptions{.registered_buffer_donor_only = true});
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildLayoutNormalizationPipeline() {
  // XLA:GPU's "layout normalization" (RunLayoutNormalizationPasses): every
  // op on descending layouts, physical transposes and bitcasts only.
  auto pipeline = std::make_unique<HloPassPipeline>("layout normalization");
  // Non-bitcast reshapes become copy + bitcast first (LayoutNormalization
  // requires it); copies move toward their users, where they may meet.
  pipeline->AddPass<ReshapeDecomposer>();
  pipeline->AddPass<HloPassFix<MoveCopyToUsers>>();
  pipeline->AddPass<LayoutNormalization>();
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(GpuAlgsimpOptions(AlgsimpMode::kLayoutNormalization));
  pipeline->AddPass<BroadcastCanonicalizer>();
  pipeline->AddPass<ScatterSimplifier>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildNvptxPostLayoutPart1Pipeline() {
  // nvptx_compiler.cc's "nvptx post-layout_assignment part 1".
  auto pipeline = std::make_unique<HloPassPipeline>("nvptx post-layout_assignment part 1");
  pipeline->AddPass<DotDimensionMerger>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildHloNormalizationPipeline() {
  // XLA:GPU's "hlo normalization" (OptimizeHloPostLayoutAssignment): gemms
  // become library calls, reductions get the emitter's canonical forms.
  auto pipeline = std::make_unique<HloPassPipeline>("hlo normalization");
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(GpuAlgsimpOptions(AlgsimpMode::kPostLayoutAssignment));
  pipeline->AddPass<BitcastDtypesExpander>();
  TransposeFoldingOptions dots_only;
  dots_only.conv_rule = TransposeFoldingOptions::ConvRule::kNever;
  pipeline->AddPass<TransposeFolding>(dots_only);
  pipeline->AddPass<ReshapeDecomposer>();
  // Reductions to or from contiguous dimensions keep their layout (XLA's
  // IsReductionFromOrToContiguousDimensions predicate).
  pipeline->AddPass<ReduceDecomposer>(ReduceDecomposerOptions{.allow_custom_layout_for_contiguous_reductions = true});
  pipeline->AddPass<DotNormalizer>();
  // XLA runs these two when Triton gemm is enabled (the H100 default) to
  // prepare dots for GemmFusion, which passlab does not model (see
  // NotModelledPasses); the dots they leave go to the GemmRewriter below.
  pipeline->AddPass<DotDimensionNormalizer>(DotDimensionNormalizerOptions{.normalize_noncontracting_dimensions = true});
  pipeline->AddPass<GemvRewriter>();
  // AddPaddingForGpublasGemms: gemm dims padded for the tensor cores.
  pipeline->AddPass<CublasPadForGemms>(CublasPadForGemmsOptions{PrimitiveType::kBF16, 8});
  pipeline->AddPass<CublasPadForGemms>(CublasPadForGemmsOptions{PrimitiveType::kF16, 8});
  pipeline->AddPass<HloConstantFolding>();
  // AddGemmRewriterPasses.
  pipeline->AddPass<GemmRewriter>();
  pipeline->AddPass<GemmBroadcastFoldingRewriter>();
  // The gemm rewriter's bitcasts and reshapes, normalized again.
  pipeline->AddPass<ReshapeDecomposer>();
  pipeline->AddPass<LayoutNormalization>();
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(GpuAlgsimpOptions(AlgsimpMode::kPostLayoutAssignment));
  pipeline->AddPass<ScatterSimplifier>();
  pipeline->AddPass<BroadcastCanonicalizer>();
  pipeline->AddPass<ReductionDegenerateDimRemover>();
  pipeline->AddPass<ReductionLayoutNormalizer>();
  pipeline->AddPass<ReductionDimensionGrouper>();
  pipeline->AddPass<HloPassFix<ReductionSplitter>>();
  pipeline->AddPass<HloPassFix<TreeReductionRewriter>>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostLayoutAssignmentPipeline() {
  // XLA:GPU's "post-layout_assignment" (OptimizeHloPostLayoutAssignment).
  auto pipeline = std::make_unique<HloPassPipeline>("post-layout_assignment");
  // XLA's float_normalization sub-pipeline (add_float_normalization): one
  // FloatNormalization per narrow type (passlab's support table covers
  // bf16), then, with xla_allow_excess_precision (on by default), the
  // convert round trips it leaves collapse.
  auto add_float_normalization = [&] {
    auto& floats = pipeline->AddPass<HloPassPipeline>("float_normalization");
    floats.AddPass<FloatNormalization>();
    floats.AddPass<SimplifyFPConversions>();
  };
  add_float_normalization();
  pipeline->AddPass<GemmBroadcastFoldingRewriter>();
  pipeline->AddPass<ReshapeDecomposer>();
  pipeline->AddPass<LayoutNormalization>();
  pipeline->AddPass<ScatterSimplifier>();
  add_float_normalization();
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<HloPassFix<AlgebraicSimplifier>>(GpuAlgsimpOptions(AlgsimpMode::kPostLayoutAssignment));
  pipeline->AddPass<SimplifyFPConversions>();
  pipeline->AddPass<HloCSE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildNvptxPostLayoutPart2Pipeline() {
  // nvptx_compiler.cc's "nvptx post-layout_assignment part 2".
  auto pipeline = std::make_unique<HloPassPipeline>("nvptx post-layout_assignment part 2");
  pipeline->AddPass<TriangularSolveRewriter>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildFusionPipeline() {
  // XLA:GPU's "fusion" (fusion_pipeline.cc): one cost-model-driven pass
  // forms every producer-consumer fusion, then siblings share kernels.
  auto pipeline = std::make_unique<HloPassPipeline>("fusion");
  pipeline->AddPass<VariadicOpSplitter>();
  // Producers fused into all their consumers in order of the GPU
  // performance model's estimated benefit (H100's entry).
  pipeline->AddPass<PriorityFusion>();
  pipeline->AddPass<HloCSE>(HloCseOptions{.only_fusion_computations = true});
  pipeline->AddPass<HloDCE>();
  pipeline->AddPass<GpuMultiOutputFusion>();
  pipeline->AddPass<HloCSE>(HloCseOptions{.only_fusion_computations = true});
  pipeline->AddPass<HloDCE>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostFusionOptimizationPipeline() {
  // XLA:GPU's "post-fusion optimization" (RunPostFusionPasses): cleanup,
  // then the collective combiners.
  auto pipeline = std::make_unique<HloPassPipeline>("post-fusion optimization");
  pipeline->AddPass<HloDCE>();
  pipeline->AddPass<TupleSimplifier>();
  pipeline->AddPass<AllGatherCombiner>();
  pipeline->AddPass<AllReduceCombiner>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildAsyncCollectiveConversionPipeline() {
  // XLA:GPU's "async-collective-conversion": collectives become start/done
  // pairs once the combiners have run.
  auto pipeline = std::make_unique<HloPassPipeline>("async-collective-conversion");
  pipeline->AddPass<AsyncCollectiveCreator>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostFusionSimplificationPipeline() {
  // XLA:GPU's "post-fusion-simplification-pipeline optimization".
  auto pipeline = std::make_unique<HloPassPipeline>("post-fusion-simplification-pipeline optimization");
  pipeline->AddPass<AlgebraicSimplifier>(GpuAlgsimpOptions(AlgsimpMode::kPostFusionSimplification));
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildAutotunerPipeline() {
  // XLA:GPU's "autotuner": every op not yet in a fusion gets one, then the
  // single config assigner picks each library call's algorithm.
  auto pipeline = std::make_unique<HloPassPipeline>("autotuner");
  pipeline->AddPass<FusionWrapper>();
  pipeline->AddPass<ConfigAssigner>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPreSchedulingCopyInsertionPipeline() {
  // XLA:GPU's "pre-scheduling-copy-insertion"
  // (pre_scheduling_copy_insertion_pipeline.cc).
  auto pipeline = std::make_unique<HloPassPipeline>("pre-scheduling-copy-insertion");
  pipeline->AddPass<HloDCE>();
  pipeline->AddPass<CopyInsertion>();
  // Copies of fusion results become extra outputs of the fusion.
  pipeline->AddPass<CopyFusion>();
  pipeline->AddPass<SanitizeConstantNames>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPreSchedulingPipeline() {
  // XLA:GPU's "pre-scheduling-passes" (RunPreSchedulingPasses).
  auto pipeline = std::make_unique<HloPassPipeline>("pre-scheduling-passes");
  pipeline->AddPass<FusionWrapper>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildPostSchedulingPipeline() {
  // XLA:GPU's "post-scheduling-passes" (RunPostSchedulingPipelines).
  auto pipeline = std::make_unique<HloPassPipeline>("post-scheduling-passes");
  auto& remat = pipeline->AddPass<HloPassPipeline>("remat-pipeline");
  remat.AddPass<Rematerialization>();
  // Rematerialization may have cloned unfused ops.
  auto& wrapper = pipeline->AddPass<HloPassPipeline>("fusion-wrapper");
  wrapper.AddPass<FusionWrapper>();
  auto& names = pipeline->AddPass<HloPassPipeline>("sanitize-constant-names");
  names.AddPass<SanitizeConstantNames>();
  return pipeline;
}

std::unique_ptr<HloPassPipeline> BuildGpuPipeline() {
  // Today's XLA:GPU default path for one NVIDIA GPU (GpuCompiler::
  // OptimizeHloModule, then RunPreSchedulingPasses, ScheduleGpuModule and
  // RunPostSchedulingPipelines), in XLA's order and with XLA's names.
  auto pipeline = std::make_unique<HloPassPipeline>("gpu");
  pipeline->AddPipeline(BuildPreSpmdPartitionerPipeline());
  pipeline->AddPipeline(BuildSpmdPartitionerPipeline());
  pipeline->AddPipeline(BuildShardingRemovalPipeline());
  pipeline->AddPipeline(BuildOptimizationPipeline());
  pipeline->AddPipeline(BuildCollectiveOptimizationsPipeline());
  pipeline->AddPipeline(BuildConvCanonicalizationPipeline());
  pipeline->AddPipeline(BuildLayoutAssignmentPipeline());
  pipeline->AddPipeline(BuildLayoutNormalizationPipeline());
  pipeline->AddPipeline(BuildNvptxPostLayoutPart1Pipeline());
  pipeline->AddPipeline(BuildHloNormalizationPipeline());
  pipeline->AddPipeline(BuildPostLayoutAssignmentPipeline());
  pipeline->AddPipeline(BuildNvptxPostLayoutPart2Pipeline());
  pipeline->AddPipeline(BuildFusionPipeline());
  pipeline->AddPipeline(BuildPostFusionOptimizationPipeline());
  pipeline->AddPipeline(BuildAsyncCollectiveConversionPipeline());
  pipeline->AddPipeline(BuildPostFusionSimplificationPipeline());
  pipeline->AddPipeline(BuildAutotunerPipeline());
  pipeline->AddPipeline(BuildPreSchedulingCopyInsertionPipeline());
  pipeline->AddPipeline(BuildPreSchedulingPipeline());
  // ScheduleGpuModule: no pipeline of its own in XLA. One GPU without a
  // profile runs the memory-minimizing scheduler (DefaultMemoryScheduler);
  // the latency-hiding scheduler is off by default
  // (xla_gpu_enable_latency_hiding_scheduler=false).
  pipeline->AddPass<HloMemoryScheduler>();
  pipeline->AddPipeline(BuildPostSchedulingPipeline());
  return pipeline;
}

namespace {

struct NamedBuilder {
  std::string_view name;
  std::unique_ptr<HloPassPipeline> (*build)();
};

// Today's sub-pipelines by XLA's names, then the seed era's by theirs.
const std::vector<NamedBuilder>& NamedBuilders() {
  static const auto* builders = new std::vector<NamedBuilder>{
      {"gpu", BuildGpuPipeline},
      {"default", BuildGpuPipeline},
      {"gpu-2021", gpu2021::BuildGpuPipeline},
      {"pre-spmd-partitioner", BuildPreSpmdPartitionerPipeline},
      {"spmd-partitioner", BuildSpmdPartitionerPipeline},
      {"sharding-removal", BuildShardingRemovalPipeline},
      {"optimization", BuildOptimizationPipeline},
      {"collective-optimizations", BuildCollectiveOptimizationsPipeline},
      {"conv_canonicalization", BuildConvCanonicalizationPipeline},
      {"layout assignment", BuildLayoutAssignmentPipeline},
      {"layout normalization", BuildLayoutNormalizationPipeline},
      {"nvptx post-layout_assignment part 1", BuildNvptxPostLayoutPart1Pipeline},
      {"hlo normalization", BuildHloNormalizationPipeline},
      {"post-layout_assignment", BuildPostLayoutAssignmentPipeline},
      {"nvptx post-layout_assignment part 2", BuildNvptxPostLayoutPart2Pipeline},
      {"fusion", BuildFusionPipeline},
      {"post-fusion optimization", BuildPostFusionOptimizationPipeline},
      {"async-collective-conversion", BuildAsyncCollectiveConversionPipeline},
      {"post-fusion-simplification-pipeline optimization", BuildPostFusionSimplificationPipeline},
      {"autotuner", BuildAutotunerPipeline},
      {"pre-scheduling-copy-insertion", BuildPreSchedulingCopyInsertionPipeline},
      {"pre-scheduling-passes", BuildPreSchedulingPipeline},
      {"post-scheduling-passes", BuildPostSchedulingPipeline},
      // The seed era's sub-pipelines that today's XLA no longer has.
      {"horizontal-fusion", gpu2021::BuildHorizontalFusionPipeline},
      {"GPU-ir-emit-prepare", gpu2021::BuildIrEmitPreparePipeline},
  };
  return *builders;
}

}  // namespace

std::vector<std::string> PipelineNames() {
  std::vector<std::string> names;
  for (const NamedBuilder& b : NamedBuilders()) names.emplace_back(b.name);
  return names;
}

const std::vector<NotModelledPass>& NotModelledPasses() {
  // XLA's passes on today's default path that passlab does not run, where
  // XLA runs them (after the named pass of that sub-pipeline), and why.
  static const auto* passes = new std::vector<NotModelledPass>{
      {"gpu/optimization", "topk-decomposer", "topk-splitter / topk-specializer",
       "rewrite topk into XLA:GPU's own top-k custom-call kernels, which passlab's backends do not have"},
      {"gpu/optimization", "comparison-expander", "sort-rewriter",
       "CUB radix sort custom call (xla_gpu_enable_cub_radix_sort): no CUB sort in passlab's runtimes"},
      {"gpu/conv_canonicalization", "float-normalization-bf16", "conv-kind-assignment",
       "only with xla_gpu_experimental_enable_conv_fusion (off by default)"},
      {"gpu/nvptx post-layout_assignment part 1", "", "norm-rewriter",
       "cuDNN layer-norm graphs (cuDNN >= 8.9.4 on Ampere+): passlab calls no cuDNN norm"},
      {"gpu/nvptx post-layout_assignment part 1", "", "block-scaling-rewriter",
       "block-scaled (MX) dots as cuDNN calls: scaled dots are expanded in optimization instead"},
      {"gpu/hlo normalization", "transpose-folding", "dot-algorithm-rewriter / algorithm-checker",
       "dot algorithms other than the default: passlab's gemm calls run the default precision"},
      {"gpu/hlo normalization", "gemv-rewriter", "splitk-rewriter",
       "Triton: split-K for Triton gemm fusions; no passlab backend compiles Triton fusions"},
      {"gpu/hlo normalization", "gemv-rewriter", "triton-gemm-rewriter",
       "Triton: dots with their producers become Triton gemm fusions; passlab keeps dots as BLAS calls"},
      {"gpu/hlo normalization", "gemv-rewriter", "hoist-fused-bitcasts",
       "Triton: edits Triton gemm fusions, which passlab does not form"},
      {"gpu/hlo normalization", "gemv-rewriter", "gemm-fusion-swap-operands",
       "Triton: edits Triton gemm fusions, which passlab does not form"},
      {"gpu/hlo normalization", "reduction-layout-normalizer", "triton-softmax-rewriter",
       "Triton: softmax-like diamonds become Triton fusions; no passlab backend compiles them"},
      {"gpu/fusion", "variadic-op-splitter", "sort-iota-fusion",
       "fuses an iota into a sort for the CUB sort custom call, which passlab lacks"},
      {"gpu/post-fusion optimization", "", "rename_fusions",
       "renames fusions after their heroes for profiles; passlab names kernels by their heroes itself"},
      {"gpu/post-scheduling-passes", "fusion-wrapper", "fusion-block-level-rewriter",
       "Triton: block-level (Triton) emission of loop fusions; passlab emits them through its own MLIR"},
  };
  return *passes;
}

absl::StatusOr<std::unique_ptr<HloPassPipeline>> BuildNamedPipeline(std::string_view name) {
  for (const NamedBuilder& b : NamedBuilders()) {
    if (b.name == name) return b.build();
  }
  return absl::InvalidArgumentError(
      StrCat("unknown pipeline '", name, "'; known pipelines: ", Join(PipelineNames(), ", ")));
}

absl::StatusOr<FilteredPipeline> BuildFilteredPipeline(std::string_view name, std::string_view disable,
                                                      std::string_view enable_only, bool disable_all,
                                                      const PassOptionOverrides& options,
                                                      const std::vector<std::string>& removed) {
  FilteredPipeline out;
  ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline, BuildNamedPipeline(name));
  RemovePassesByName(*pipeline, removed);
  RETURN_IF_ERROR(ApplyPassOptions(*pipeline, options));
  out.pipeline = std::move(pipeline);
  if (!disable.empty() || !enable_only.empty() || disable_all) {
    ASSIGN_OR_RETURN(std::unique_ptr<PassFilterObserver> filter,
        PassFilterObserver::Create(disable, enable_only, disable_all, out.pipeline->Occurrences()));
    out.filter = std::move(filter);
    out.pipeline->AddObserver(out.filter.get());
  }
  return out;
}

}  // namespace passlab
