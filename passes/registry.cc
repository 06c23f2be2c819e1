#include "passes/registry.h"

#include <algorithm>

#include "absl/strings/numbers.h"

#include "core/ir/status_macros.h"
#include "passes/autotune/config_assigner.h"
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
#include "passes/expanders/cholesky_expander.h"
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
#include "passes/fusion/fusion_wrapper.h"
#include "passes/fusion/horizontal_input_fusion.h"
#include "passes/fusion/horizontal_loop_fusion.h"
#include "passes/fusion/instruction_fusion.h"
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
#include "passes/libcall/dot_normalizer.h"
#include "passes/simplifiers/dot_dimension_merger.h"
#include "passes/simplifiers/dot_dimension_normalizer.h"
#include "passes/simplifiers/dot_strength_reduction.h"
#include "passes/simplifiers/gemv_rewriter.h"
#include "passes/simplifiers/scatter_slice_simplifier.h"
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
#include "passes/fusion/copy_fusion.h"
#include "passes/libcall/cudnn_simplify_padding.h"
#include "passes/prepare/optimize_input_output_buffer_alias.h"
#include "passes/simplifiers/simplify_fp_conversions.h"

namespace passlab {
namespace {

template <typename T>
std::function<std::unique_ptr<HloPassInterface>()> Factory() {
  return [] { return std::make_unique<T>(); };
}

// Gather/scatter/rng expanders and friends (issue 4's second batch), kept in
// their own list so concurrent registry edits merge cleanly.
// Today's XLA:GPU passes: simplify-fp-conversions, cudnn_simplify_padding,
// optimize_input_output_buffer_alias, copy_fusion.
void AddTodaysGpuPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"simplify-fp-conversions", "SimplifyFPConversions", "simplifiers",
               "Collapses chains of two or more float converts into one convert from the chain's input "
               "(may raise precision: f32->bf16->f32 becomes exact).",
               false, "", Factory<SimplifyFPConversions>()});
  r.push_back({"cudnn_simplify_padding", "CudnnSimplifyPadding", "libcall",
               "Folds slice+pad after a convolution call into the pad when the sliced output features are known "
               "zero (zero-padded or zero constant filter).",
               false, "", Factory<CudnnSimplifyPadding>()});
  r.push_back({"optimize_input_output_buffer_alias", "OptimizeInputOutputBufferAlias", "prepare",
               "Adds may-alias input_output_alias entries pairing entry parameter leaves with result leaves of the "
               "same byte size (largest first, per memory space).",
               false, "", Factory<OptimizeInputOutputBufferAlias>(),
               {{"registered_buffer_donor_only", PassOptionType::kBool, "false",
                 "only parameters listed in buffer_donor may donate (XLA:GPU's pipeline sets true)"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<OptimizeInputOutputBufferAlias>(OptimizeInputOutputBufferAliasOptions{
                     .registered_buffer_donor_only = v.GetBool("registered_buffer_donor_only")});
               }});
  r.push_back({"copy_fusion", "CopyFusion", "fusion",
               "Makes same-layout copies of an entry fusion's outputs extra outputs of the fusion (multi-output).",
               false, "", Factory<CopyFusion>()});
}

void AddIndexingPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"dot-merger", "DotMerger", "simplifiers",
               "Merges dots sharing an operand into one dot over concatenated operands, then slices.", false, "",
               Factory<DotMerger>(),
               {{"max_size_to_merge", PassOptionType::kInt, "16777216",
                 "a group grows only while its concatenated operand plus result stay within this many bytes"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<DotMerger>(DotMergerOptions{.max_size_to_merge = v.GetInt("max_size_to_merge")});
               }});
  r.push_back({"float-normalization-bf16", "FloatNormalization", "simplifiers",
               "Inserts f32 converts around ops the (GPU-like) float support table cannot run in bf16.", false, "",
               Factory<FloatNormalization>()});
  r.push_back({"gather_expander", "GatherExpander", "expanders",
               "Rewrites gather into a while loop of dynamic-slices (a broadcast when it reads the whole operand).",
               false, "", Factory<GatherExpander>(),
               {{"mode", PassOptionType::kString, "kEliminateAllGathers",
                 "kEliminateAllGathers, or kEliminateSimpleGathers (one index vector or the whole operand)"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<GatherExpander>(v.GetString("mode") == "kEliminateSimpleGathers"
                                                             ? GatherExpander::Mode::kEliminateSimpleGathers
                                                             : GatherExpander::Mode::kEliminateAllGathers);
               }});
  r.push_back({"gather_simplifier", "GatherSimplifier", "simplifiers",
               "Puts every gather in the canonical [N,K]-indices form the GPU gather emitter accepts.", false, "",
               Factory<GatherSimplifier>()});
  r.push_back({"gpu_scatter_expander", "GpuScatterExpander", "expanders",
               "Expands the scatters XLA:GPU's emitter cannot handle (>64-bit elements, non-unique variadic).",
               false, "", Factory<GpuScatterExpander>()});
  r.push_back({"rng-bit-generator-expander", "RngBitGeneratorExpander", "expanders",
               "Expands rng-bit-generator (three-fry, philox) into a call of bit-exact generated HLO.", false, "",
               Factory<RngBitGeneratorExpander>()});
  r.push_back({"reduction-degenerate-dim-remover", "ReductionDegenerateDimRemover", "gpu",
               "Removes size-1 dimensions from reduce inputs (reshape in, reshape out).", false, "",
               Factory<ReductionDegenerateDimRemover>()});
  r.push_back({"reduction-dimension-grouper", "ReductionDimensionGrouper", "gpu",
               "Merges adjacent reduced dimensions of a reduce into one.", false, "",
               Factory<ReductionDimensionGrouper>()});
  r.push_back({"reduction-layout-normalizer", "ReductionLayoutNormalizer", "gpu",
               "Gives reduce inputs the default layout (transpose into memory order and back).", false, "",
               Factory<ReductionLayoutNormalizer>()});
  r.push_back({"reduction-splitter", "ReductionSplitter", "gpu",
               "Splits a reduce over non-contiguous dimensions into two, largest dimension first.", false, "",
               Factory<ReductionSplitter>(),
               {{"ignore_small_dims", PassOptionType::kBool, "true",
                 "leave reduces whose largest reduced dimension has at most 8 elements"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<ReductionSplitter>(
                     ReductionSplitterOptions{.ignore_small_dims = v.GetBool("ignore_small_dims")});
               }});
  r.push_back({"tree-reduction-rewriter", "TreeReductionRewriter", "gpu",
               "Rewrites reductions too large for one race-free kernel into a two-level tree (sqrt(n) split).",
               false, "", Factory<TreeReductionRewriter>()});
  r.push_back({"scatter_expander", "ScatterExpander", "expanders",
               "Rewrites scatter into a while loop of dynamic-slice, update computation, dynamic-update-slice.",
               false, "", Factory<ScatterExpander>()});
}

// The fusion and horizontal-fusion sub-pipelines' passes (issue 7), in their
// own list so concurrent registry edits merge cleanly.
void AddFusionPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"fusion", "GpuInstructionFusion", "fusion",
               "Fuses producers into consumers (loop and reduction kernels); duplicates cheap producers when "
               "the bytes read do not grow.",
               false, "", Factory<GpuInstructionFusion>()});
  r.push_back({"fusion_merger", "FusionMerger", "fusion",
               "Merges a loop fusion into all its users (all fusions) when the bytes transferred do not grow.",
               false, "", Factory<FusionMerger>()});
  r.push_back({"multi_output_fusion", "GpuMultiOutputFusion", "fusion",
               "Sibling and producer-consumer multi-output fusion of kernels iterating over the same shape.",
               false, "", Factory<GpuMultiOutputFusion>(),
               {{"device", PassOptionType::kString, "H100",
                 "the device the cost checks estimate for: H100, H200, A100, A6000, cpu, or empty for none"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 MultiOutputFusionOptions o;
                 o.device = v.GetString("device");
                 return std::make_unique<GpuMultiOutputFusion>(o);
               }});
  r.push_back({"gpu_horizontal_input_fusion", "GpuHorizontalInputFusion", "fusion",
               "Fuses independent reduction fusions feeding one consumer into one multi-output kernel.", false,
               "", Factory<GpuHorizontalInputFusion>()});
  r.push_back({"gpu_horizontal_loop_fusion", "GpuHorizontalLoopFusion", "fusion",
               "Fuses independent small loop fusions feeding one consumer into one concatenate/slice kernel.",
               false, "", Factory<GpuHorizontalLoopFusion>()});
  r.push_back({"variadic-op-splitter", "VariadicOpSplitter", "fusion",
               "Splits concatenates of more than 128 operands into concatenates of concatenates.", false, "",
               Factory<VariadicOpSplitter>()});
}

// The collective passes (issue 7: collective-optimizations and
// post-fusion-optimization), in their own list so concurrent registry edits
// merge cleanly. None is required: each rewrites collectives into other
// collectives computing the same values, and single-device modules (every
// model the CPU backend runs) have none.
void AddCollectivePasses(std::vector<PassRegistryEntry>& r) {
  // Not required: it only adds sharding annotations, and only to modules
  // that already have some (the CPU backend's single-device models have none).
  r.push_back({"sharding-propagation", "ShardingPropagation", "spmd",
               "Gives every instruction a sharding, inferred from annotated operands (forward) or users "
               "(backward).",
               false, "", Factory<ShardingPropagation>()});
  // Not required for passlab's own models (they have no sharding custom
  // calls); a module from JAX that has them then keeps them, and the
  // backends say they have no implementation of "Sharding".
  r.push_back({"sharding-remover", "ShardingRemover", "spmd",
               "Unpartitioned modules: sharding-only custom calls (Sharding, SPMDShardToFullShape, ...) hand "
               "their users their operand.",
               false, "", Factory<ShardingRemover>()});
  // Not required: it only rewrites modules with num_partitions > 1, which
  // the CPU backend (one device) refuses to run anyway.
  r.push_back({"spmd-partitioning", "SpmdPartitioner", "spmd",
               "Rewrites a partitioned module into the per-partition program: local shapes, partition-id "
               "slices, all-gather/all-reduce where the math needs them.",
               false, "", Factory<SpmdPartitioner>()});
  r.push_back({"all-gather-bcast-reorder", "AllGatherBroadcastReorder", "collectives",
               "Gathers a broadcast's operand instead of the broadcast: all-gather(broadcast(x)) => "
               "broadcast(all-gather(x)).",
               false, "", Factory<AllGatherBroadcastReorder>()});
  r.push_back({"all-gather-combiner", "AllGatherCombiner", "collectives",
               "Combines independent all-gathers (same groups and domain) into one tuple all-gather.", false,
               "", Factory<AllGatherCombiner>(),
               {{"combine_threshold_in_bytes", PassOptionType::kInt, "30M", "combined result bytes at most"},
                {"combine_threshold_count", PassOptionType::kInt, "256", "all-gathers per combined op at most"},
                {"combine_by_dim", PassOptionType::kBool, "false", "combine only along the same dimension"},
                {"combine_different_dtypes", PassOptionType::kBool, "true", "combine different element types"},
                {"combine_while_loops", PassOptionType::kBool, "true", "combine inside while bodies/conditions"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<AllGatherCombiner>(
                     AllGatherCombinerOptions{.combine_threshold_in_bytes = v.GetInt("combine_threshold_in_bytes"),
                                              .combine_threshold_count = v.GetInt("combine_threshold_count"),
                                              .combine_by_dim = v.GetBool("combine_by_dim"),
                                              .combine_different_dtypes = v.GetBool("combine_different_dtypes"),
                                              .combine_while_loops = v.GetBool("combine_while_loops")});
               }});
  r.push_back({"all-reduce-combiner", "AllReduceCombiner", "collectives",
               "Combines independent all-reduces (same reduction, groups and domain) into one tuple all-reduce.",
               false, "", Factory<AllReduceCombiner>(),
               {{"combine_threshold_in_bytes", PassOptionType::kInt, "30M", "combined result bytes at most"},
                {"combine_threshold_count", PassOptionType::kInt, "256", "all-reduces per combined op at most"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<AllReduceCombiner>(
                     AllReduceCombinerOptions{.combine_threshold_in_bytes = v.GetInt("combine_threshold_in_bytes"),
                                              .combine_threshold_count = v.GetInt("combine_threshold_count")});
               }});
  r.push_back({"all-reduce-folder", "AllReduceFolder", "collectives",
               "Folds all-reduce(all-reduce(x)) into one all-reduce over the combined replica groups.", false, "",
               Factory<AllReduceFolder>()});
  r.push_back({"all-reduce-simplifier", "AllReduceSimplifier", "collectives",
               "Removes collectives over groups of one; all-reduce of a replicated value becomes x or x * n.",
               false, "", Factory<AllReduceSimplifier>()});
  r.push_back({"async-collective-creator", "AsyncCollectiveCreator", "collectives",
               "Turns collectives into start/done pairs (own -start/-done opcodes or async-start wrappers).",
               false, "", Factory<AsyncCollectiveCreator>(),
               {{"convert_all_reduce", PassOptionType::kBool, "true", "make all-reduces async"},
                {"convert_all_gather", PassOptionType::kBool, "true", "make all-gathers async"},
                {"convert_collective_permute", PassOptionType::kBool, "true", "make collective-permutes async"},
                {"convert_reduce_scatter", PassOptionType::kBool, "true", "make reduce-scatters async"},
                {"convert_all_to_all", PassOptionType::kBool, "true", "make all-to-alls async"},
                {"convert_collective_broadcast", PassOptionType::kBool, "true", "make collective-broadcasts async"},
                {"all_reduce_min_threshold_in_bytes", PassOptionType::kInt, "0", "smaller all-reduces stay sync"},
                {"all_gather_min_threshold_in_bytes", PassOptionType::kInt, "0", "smaller all-gathers stay sync"},
                {"reduce_scatter_min_threshold_in_bytes", PassOptionType::kInt, "0",
                 "smaller reduce-scatters stay sync"},
                {"should_ignore_size_check", PassOptionType::kBool, "false", "ignore the byte thresholds"},
                {"use_generic_async_start_done", PassOptionType::kBool, "false",
                 "async-start/done for every kind, not the own -start/-done opcodes"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 AsyncCollectiveCreatorOptions o;
                 o.convert_all_reduce = v.GetBool("convert_all_reduce");
                 o.convert_all_gather = v.GetBool("convert_all_gather");
                 o.convert_collective_permute = v.GetBool("convert_collective_permute");
                 o.convert_reduce_scatter = v.GetBool("convert_reduce_scatter");
                 o.convert_all_to_all = v.GetBool("convert_all_to_all");
                 o.convert_collective_broadcast = v.GetBool("convert_collective_broadcast");
                 o.all_reduce_min_threshold_in_bytes = v.GetInt("all_reduce_min_threshold_in_bytes");
                 o.all_gather_min_threshold_in_bytes = v.GetInt("all_gather_min_threshold_in_bytes");
                 o.reduce_scatter_min_threshold_in_bytes = v.GetInt("reduce_scatter_min_threshold_in_bytes");
                 o.should_ignore_size_check = v.GetBool("should_ignore_size_check");
                 o.use_generic_async_start_done = v.GetBool("use_generic_async_start_done");
                 return std::make_unique<AsyncCollectiveCreator>(o);
               }});
  r.push_back({"reduce-scatter-creator", "ReduceScatterCreator", "collectives",
               "Rewrites dynamic-slice(all-reduce(x)) at each participant's own offset into reduce-scatter(x).",
               false, "", Factory<ReduceScatterCreator>()});
}

// The autotuners' level and budget (library_call_autotuner.h:
// AutotuneBudget), e.g. --pass-option config-assigner.max_call_bytes=1000000.
std::vector<PassOptionSpec> AutotuneOptionSpecs() {
  return {{"level", PassOptionType::kInt, "4", "XLA's xla_gpu_autotune_level: 0 tunes nothing (runtime defaults)"},
          {"max_call_bytes", PassOptionType::kInt, "268435456",
           "a call whose buffers exceed this many bytes is not timed (runtime default algorithm)"},
          {"max_call_seconds", PassOptionType::kFloat, "2",
           "a call whose tuning would take longer (estimated from FLOPs, then measured) is not timed"},
          {"max_module_bytes", PassOptionType::kInt, "4294967296",
           "once the calls tuned have allocated this many bytes, the rest get the default algorithm"},
          {"max_module_seconds", PassOptionType::kFloat, "30",
           "once tuning has taken this long, the remaining calls get the default algorithm"},
          {"flops_per_second", PassOptionType::kFloat, "2e10", "the rate the per-call time estimate assumes"}};
}

AutotuneOptions AutotuneOptionsFrom(const PassOptionValues& v) {
  AutotuneOptions o;
  o.level = static_cast<int>(v.GetInt("level"));
  o.budget.max_call_bytes = v.GetInt("max_call_bytes");
  o.budget.max_call_seconds = v.GetFloat("max_call_seconds");
  o.budget.max_module_bytes = v.GetInt("max_module_bytes");
  o.budget.max_module_seconds = v.GetFloat("max_module_seconds");
  o.budget.flops_per_second = v.GetFloat("flops_per_second");
  return o;
}

// Library-call rewriters and algorithm pickers (issue 7: conv-canonicalization
// and the gemm half of post-layout-assignment), in their own list so
// concurrent registry edits merge cleanly. None is required: the backend runs
// whatever dot or convolution they leave behind as a loop-nest kernel, and
// the runtime picks a default algorithm for a call nobody tuned.
void AddLibraryCallPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"cublas-gemm-rewriter", "GemmRewriter", "libcall",
               "Rewrites float dots into __blas$gemm calls, folding alpha, beta*C, bias and relu into the call.",
               false, "", Factory<GemmRewriter>(),
               {{"bias_mode", PassOptionType::kString, "kBias",
                 "kBias, or kNoBias (fold no add into a gemm, so summed gemms stay independent)"},
                {"compute_capability", PassOptionType::kString, "9.0",
                 "the CUDA compute capability (major.minor) the calls are for: sizes the workspace"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 GemmRewriterOptions o;
                 if (v.GetString("bias_mode") == "kNoBias") o.bias_mode = GemmRewriterOptions::BiasMode::kNoBias;
                 int major = 0;
                 std::string cc = v.GetString("compute_capability");
                 if (absl::SimpleAtoi(cc.substr(0, cc.find('.')), &major)) {
                   o.compute_capability_major = major;
                 }
                 return std::make_unique<GemmRewriter>(o);
               }});
  r.push_back({"cublas-pad-for-gemms", "CublasPadForGemms", "libcall",
               "Pads bf16 dots' M, K and N to multiples of 8 with zeros and slices the product back.", false, "",
               Factory<CublasPadForGemms>()});
  r.push_back({"conv-rewriter", "ConvRewriter", "libcall",
               "Rewrites convolutions into __dnn$conv* calls (forward, backward-input, backward-filter).", false, "",
               Factory<ConvRewriter>()});
  r.push_back({"cudnn-fused-convolution-rewriter", "CudnnFusedConvRewriter", "libcall",
               "Folds scale, bias, side input and relu after a forward convolution call into one fused call.",
               false, "", Factory<CudnnFusedConvRewriter>()});
  r.push_back({"conv-padding-legalization", "ConvPaddingLegalization", "libcall",
               "Makes convolution-call padding symmetric and non-negative with explicit pad/slice around the call.",
               false, "", Factory<ConvPaddingLegalization>()});
  r.push_back({"gpu-conv-algorithm-picker", "GpuConvAlgorithmPicker", "autotune",
               "Autotunes each convolution call over the DNN library's algorithms; records the fastest.", false, "",
               Factory<GpuConvAlgorithmPicker>()});
  r.push_back({"gemm-algorithm-picker", "GemmAlgorithmPicker", "autotune",
               "Autotunes each gemm call over the BLAS library's algorithms; records the fastest.", false, "",
               Factory<GemmAlgorithmPicker>(), AutotuneOptionSpecs(),
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<GemmAlgorithmPicker>(AutotuneOptionsFrom(v));
               }});
  r.push_back({"config-assigner", "ConfigAssigner", "autotune",
               "Today's single autotuner: picks every library call's algorithm (gemms and convolutions) after "
               "fusion, with one device-keyed cache.",
               false, "", Factory<ConfigAssigner>(), AutotuneOptionSpecs(),
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<ConfigAssigner>(AutotuneOptionsFrom(v));
               }});
}

// XLA:GPU's remaining expanders and simplifiers (issue 7), in their own list
// so concurrent registry edits merge cleanly. None is required: the backend
// runs stable sorts, 4-spatial-dim convolutions, select-and-scatter, general
// scatters, array-result conditionals, unsorted dot dimensions, cholesky and
// triangular-solve as they are.
void AddExpanderPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"bitcast_dtypes_expander", "BitcastDtypesExpander", "expanders",
               "Expands bitcast-convert between element types of different widths into shifts, masks and an "
               "or-reduce on unsigned integers.",
               false, "", Factory<BitcastDtypesExpander>()});
  r.push_back({"cholesky_expander", "CholeskyExpander", "expanders",
               "Expands real cholesky into XLA's blocked left-looking HLO (unblocked loop per panel, "
               "triangular-solve below it).",
               false, "", Factory<CholeskyExpander>()});
  r.push_back({"conditional-canonicalizer", "ConditionalCanonicalizer", "simplifiers",
               "Gives every conditional a tuple result (branch roots tupled, get-tuple-element after).", false, "",
               Factory<ConditionalCanonicalizer>()});
  r.push_back({"convert-mover", "ConvertMover", "simplifiers",
               "Moves widening converts below and narrowing converts above concatenate/pad/reshape/slice/transpose.",
               false, "", Factory<ConvertMover>()});
  r.push_back({"convolution_4d_expander", "Convolution4DExpander", "expanders",
               "Drops trivial spatial dimensions of 4-spatial-dimension convolutions (reshape in, reshape out).",
               false, "", Factory<Convolution4DExpander>()});
  r.push_back({"dot_dimension_sorter", "DotDimensionSorter", "simplifiers",
               "Sorts a dot's contracting dimension pairs into memory order when they are consecutive there.",
               false, "", Factory<DotDimensionSorter>()});
  r.push_back({"cudnn_pad_for_convolutions", "CudnnPadForConvolutions", "libcall",
               "Pads f16/bf16 convolution calls' feature dimensions to multiples of 8 and slices the result back.",
               false, "", Factory<CudnnPadForConvolutions>()});
  r.push_back({"gpusolver-rewriter", "GpusolverRewriter", "libcall",
               "Rewrites f32/f64 cholesky into a __lapack$potrf call (NaN where info says not positive definite).",
               false, "", Factory<GpusolverRewriter>()});
  r.push_back({"triangular-solve-rewriter", "TriangularSolveRewriter", "libcall",
               "Rewrites f32/f64 triangular-solve into a __blas$trsm call.", false, "",
               Factory<TriangularSolveRewriter>()});
  r.push_back({"qr_expander", "QrExpander", "expanders",
               "Expands the Qr and ProductOfElementaryHouseholderReflectors custom calls into Householder loops.",
               false, "", Factory<QrExpander>()});
  r.push_back({"rng-expander", "RngExpander", "expanders",
               "Expands rng (uniform, normal) into rng-get-and-update-state and a philox rng-bit-generator whose "
               "bits become the distribution.",
               false, "", Factory<RngExpander>()});
  r.push_back({"scatter_simplifier", "ScatterSimplifier", "simplifiers",
               "Puts every scatter in the canonical [N,K]-indices, [N, window] updates form.", false, "",
               Factory<ScatterSimplifier>()});
  r.push_back({"select_and_scatter_expander", "SelectAndScatterExpander", "expanders",
               "Rewrites select-and-scatter as a reduce-window selecting positions and a scatter of the source.",
               false, "", Factory<SelectAndScatterExpander>()});
  r.push_back({"slice-sinker", "SliceSinker", "simplifiers",
               "Sinks slices below elementwise ops that together cover the slices' sources (one op, then slices).",
               false, "", Factory<SliceSinker>()});
  r.push_back({"stochastic_convert_decomposer", "StochasticConvertDecomposer", "expanders",
               "Decomposes float-to-integer stochastic-convert into floor, a compare with the random bits, sign "
               "and saturation.",
               false, "", Factory<StochasticConvertDecomposer>()});
  r.push_back({"topk-decomposer", "TopkDecomposer", "expanders",
               "Decomposes topk into a stable sort (values, iota) and slices of the first k.", false, "",
               Factory<TopkDecomposer>()});
  r.push_back({"stable-sort-expander", "StableSortExpander", "expanders",
               "Makes is_stable sorts unstable sorts with an iota operand breaking ties in the comparator.", false,
               "", Factory<StableSortExpander>()});
}

// XLA:GPU's layout-normalization passes (ReshapeDecomposer, MoveCopyToUsers,
// LayoutNormalization, BroadcastCanonicalizer, ReduceDecomposer), in their
// own list so concurrent registry edits merge cleanly. None is required:
// every kernel reads any plain layout.
void AddLayoutNormalizationPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"layout_normalization", "LayoutNormalization", "layout",
               "Rewrites array ops to compute on descending layouts, with bitcasts from and to the original "
               "shapes (copies and transposes become physical transposes).",
               false, "", Factory<LayoutNormalization>()});
  r.push_back({"reshape-decomposer", "ReshapeDecomposer", "layout",
               "Makes every reshape a bitcast, with copies (physical transposes) before or after it where the "
               "layouts need them.",
               true,
               "layout_normalization rewrites only reshapes that are bitcasts and stops the pipeline on any "
               "other (as XLA's LayoutNormalization does)",
               Factory<ReshapeDecomposer>()});
  r.push_back({"move_copy_to_users", "MoveCopyToUsers", "layout",
               "Sinks layout-changing copies below the layout-preserving ops using them (elementwise, slices, "
               "pad, reduce-window, concatenate); reduces read the copy's operand.",
               false, "", Factory<MoveCopyToUsers>()});
  r.push_back({"broadcast_canonicalizer", "BroadcastCanonicalizer", "layout",
               "Sorts broadcast dimensions, transposing the operand first.", false, "",
               Factory<BroadcastCanonicalizer>()});
  r.push_back({"reduce-decomposer", "ReduceDecomposer", "layout",
               "Gives variadic reduce inputs one layout and makes each reduce keep its input's layout, a copy "
               "after it giving the output layout.",
               false, "", Factory<ReduceDecomposer>(),
               {{"allow_custom_layout_for_contiguous_reductions", PassOptionType::kBool, "false",
                 "XLA:GPU's predicate: reductions from or to contiguous dimensions keep their output layout"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<ReduceDecomposer>(ReduceDecomposerOptions{
                     .allow_custom_layout_for_contiguous_reductions =
                         v.GetBool("allow_custom_layout_for_contiguous_reductions")});
               }});
}

// XLA:GPU's dot normalization passes (DotStrengthReduction, the dimension
// normalizer/merger, DotNormalizer, GemvRewriter) and the scatter-slice
// simplifier, in their own list so concurrent registry edits merge cleanly.
void AddDotNormalizationPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"dot-strength-reduction", "DotStrengthReduction", "simplifiers",
               "Rewrites vector-vector dots, and small or Triton-unsupported matrix-vector dots, as broadcast + "
               "multiply + reduce.",
               false, "", Factory<DotStrengthReduction>(),
               {{"compute_capability", PassOptionType::kString, "9.0",
                 "the CUDA compute capability (major.minor) Triton's gemm support is checked for"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 DotStrengthReductionOptions o;
                 std::string cc = v.GetString("compute_capability");
                 const size_t dot = cc.find('.');
                 int major = 0, minor = 0;
                 if (absl::SimpleAtoi(cc.substr(0, dot), &major)) o.compute_capability_major = major;
                 if (dot != std::string::npos && absl::SimpleAtoi(cc.substr(dot + 1), &minor)) {
                   o.compute_capability_minor = minor;
                 }
                 return std::make_unique<DotStrengthReduction>(o);
               }});
  r.push_back({"dot_dimension_normalizer", "DotDimensionNormalizer", "simplifiers",
               "Merges each dot operand's contracting (optionally non-contracting) dimensions into one, folding "
               "the reshape/transpose chains feeding it.",
               false, "", Factory<DotDimensionNormalizer>(),
               {{"normalize_noncontracting_dimensions", PassOptionType::kBool, "false",
                 "also merge each operand's non-contracting dimensions into one"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<DotDimensionNormalizer>(DotDimensionNormalizerOptions{
                     .normalize_noncontracting_dimensions = v.GetBool("normalize_noncontracting_dimensions")});
               }});
  r.push_back({"dot_dimension_merger", "DotDimensionMerger", "simplifiers",
               "Merges a dot's consecutive batch dimensions (logically and in the layout) into one by reshapes.",
               false, "", Factory<DotDimensionMerger>()});
  r.push_back({"dot_normalizer", "DotNormalizer", "libcall",
               "Gives a dot without contracting dimensions a size-1 one (bitcasts of the operands).", false, "",
               Factory<DotNormalizer>()});
  r.push_back({"gemv-rewriter", "GemvRewriter", "simplifiers",
               "Adds a size-1 dimension to the vector of a matrix-vector dot and its product, making it a gemm.",
               false, "", Factory<GemvRewriter>(),
               {{"is_layout_sensitive", PassOptionType::kBool, "true",
                 "after layout assignment: bitcasts, and an error on non-descending layouts (else reshapes, and "
                 "such dots skipped)"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<GemvRewriter>(
                     GemvRewriterOptions{.is_layout_sensitive = v.GetBool("is_layout_sensitive")});
               }});
  r.push_back({"scatter-slice-simplifier", "ScatterSliceSimplifier", "simplifiers",
               "Shrinks a scatter whose uses all slice the same leading part (through elementwise ops) to that part.",
               false, "", Factory<ScatterSliceSimplifier>()});
}

// The layout-assignment, gemm broadcast folding and ir-emit-prepare passes
// (issue 7), in their own list so concurrent registry edits merge cleanly.
// None is required: every emitter and library runner reads any plain layout
// through its strides, so the default layouts run as they are.
void AddMemorySchedulerPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"hlo-memory-scheduler", "HloMemoryScheduler", "prepare",
               "Schedules each computation to keep peak memory low (list, dfs or post order; by default the one "
               "with the smallest simulated peak), then XLA:GPU's start/done post-processing; marks the module "
               "scheduled.",
               false, "", Factory<HloMemoryScheduler>(),
               {{"algorithm", PassOptionType::kString, "default", "default (smallest peak of the three), list, dfs or postorder"},
                {"gpu_postprocess", PassOptionType::kBool, "true",
                 "XLA:GPU's PostProcessSchedule: sync collectives' starts before their dones, async starts early, dones late"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 HloMemorySchedulerOptions o;
                 o.algorithm = v.GetString("algorithm");
                 o.gpu_postprocess = v.GetBool("gpu_postprocess");
                 return std::make_unique<HloMemoryScheduler>(o);
               }});
}

// Today's XLA:GPU fusion (priority fusion on a performance model) and the
// wrapper that turns the remaining kernels into fusions.
void AddPriorityFusionPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"priority-fusion", "PriorityFusion", "fusion",
               "Fuses producers into all their users in the order of the time the GPU performance model says "
               "each fusion saves.",
               false, "", Factory<PriorityFusion>(),
               {{"device", PassOptionType::kString, "H100",
                 "the device the performance model estimates for: H100, H200, A100, A6000 or cpu"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 PriorityFusionOptions o;
                 o.device = v.GetString("device");
                 return std::make_unique<PriorityFusion>(o);
               }});
  r.push_back({"fusion-wrapper", "FusionWrapper", "fusion",
               "Wraps every op still unfused that the emitters run as a kernel into a fusion of its own.", false,
               "", Factory<FusionWrapper>()});
}

void AddLayoutPasses(std::vector<PassRegistryEntry>& r) {
  r.push_back({"layout-assignment", "GpuLayoutAssignment", "layout",
               "Chooses layouts (entry layouts honoured, conv/gemm constraints, propagation) and inserts the "
               "layout-changing copies they need. Only a tiled entry layout needs it (kernels read plain layouts).",
               false, "", Factory<GpuLayoutAssignment>(),
               {{"xla_gpu_experimental_pack_dot_operands_along_k_dimension", PassOptionType::kBool, "false",
                 "dot operands computed from sub-byte values get their contracting dimensions most minor"},
                {"xla_filter_layout", PassOptionType::kBool, "false",
                 "NHWC convolutions' filters as XLA:GPU lays them out (OHWI, a transpose of each weight per step) "
                 "instead of the model's HWIO"},
                {"filter_layout_as_is", PassOptionType::kBool, "true",
                 "without xla_filter_layout: convolution calls read their filters in the layout their producers "
                 "give them (the libraries reorder filters anyway); false: HWIO, copied to"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<GpuLayoutAssignment>(GpuLayoutAssignmentOptions{
                     .pack_dot_operands_along_k_dimension =
                         v.GetBool("xla_gpu_experimental_pack_dot_operands_along_k_dimension"),
                     .xla_filter_layout = v.GetBool("xla_filter_layout"),
                     .filter_layout_as_is = v.GetBool("filter_layout_as_is")});
               }});
  r.push_back({"cublas-gemm-broadcast-folding-rewriter", "GemmBroadcastFoldingRewriter", "libcall",
               "Folds a broadcast adding only a gemm operand's batch dimensions into the call (batch stride 0).",
               false, "", Factory<GemmBroadcastFoldingRewriter>()});
  r.push_back({"copy-insertion", "CopyInsertion", "prepare",
               "Copies loop inits, loop/branch/entry results that would share a buffer (constants, parameters, "
               "repeats), so loop state lives in place.",
               false, "", Factory<CopyInsertion>()});
  r.push_back({"latency-hiding-scheduler", "LatencyHidingScheduler", "prepare",
               "Schedules each computation: async starts early, independent work before their dones, memory-aware "
               "order otherwise; marks the module scheduled.",
               false, "", Factory<LatencyHidingScheduler>()});
  r.push_back({"rematerialization", "Rematerialization", "prepare",
               "Under a memory limit, tracks a scheduled module's live bytes and recomputes (or compresses) "
               "values next to their later uses wherever the limit is exceeded, also inside called computations.",
               false, "", Factory<Rematerialization>(),
               {{"memory_limit_bytes", PassOptionType::kInt, "-1", "peak bytes allowed, output included; -1: no limit"},
                {"block_size_limit", PassOptionType::kInt, "1", "most consecutive instructions rematerialized at once"},
                {"block_rematerialization_factor", PassOptionType::kFloat, "1",
                 "effort on blocks larger than one, relative to single instructions"},
                {"min_remat_size", PassOptionType::kInt, "0", "smallest buffer (bytes) considered"},
                {"recompute", PassOptionType::kBool, "true", "strategy: recompute values"},
                {"compress", PassOptionType::kBool, "true", "strategy: keep values in a compact layout"},
                {"host_offload", PassOptionType::kBool, "false", "strategy: offload to host memory (not modelled)"},
                {"remat_algorithm", PassOptionType::kString, "always_remat",
                 "always_remat, or peak_priority (rematerialize at the highest peak first)"},
                {"shape_size_function", PassOptionType::kString, "byte_size_of",
                 "byte_size_of (ShapeUtil::ByteSizeOf, 8-byte pointers) or pad_minor_to_64"},
                {"compact_shape_function", PassOptionType::kString, "identity",
                 "identity or swap_two_minor_dims: the layout compression copies to"}},
               [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
                 return std::make_unique<Rematerialization>(RematerializationOptions{
                     .memory_limit_bytes = v.GetInt("memory_limit_bytes"),
                     .block_size_limit = v.GetInt("block_size_limit"),
                     .block_rematerialization_factor = v.GetFloat("block_rematerialization_factor"),
                     .min_remat_size = v.GetInt("min_remat_size"),
                     .recompute = v.GetBool("recompute"),
                     .compress = v.GetBool("compress"),
                     .host_offload = v.GetBool("host_offload"),
                     .remat_algorithm = v.GetString("remat_algorithm"),
                     .shape_size_function = v.GetString("shape_size_function"),
                     .compact_shape_function = v.GetString("compact_shape_function")});
               }});
  r.push_back({"sanitize-constant-names", "SanitizeConstantNames", "prepare",
               "Renames constants to legal, module-unique LLVM/PTX symbols.", false, "",
               Factory<SanitizeConstantNames>()});
}

std::vector<PassRegistryEntry> MakeRegistry() {
  std::vector<PassRegistryEntry> r = {
      {"batchnorm_expander", "BatchNormExpander", "expanders",
       "Expands batch-norm-training/inference/grad into reductions and elementwise math.", false, "",
       Factory<BatchNormExpander>(),
       {{"rewrite_training_op", PassOptionType::kBool, "true", "expand batch-norm-training"},
        {"rewrite_inference_op", PassOptionType::kBool, "true", "expand batch-norm-inference"},
        {"rewrite_grad_op", PassOptionType::kBool, "true", "expand batch-norm-grad"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<BatchNormExpander>(
             BatchNormExpanderOptions{.rewrite_training_op = v.GetBool("rewrite_training_op"),
                                      .rewrite_inference_op = v.GetBool("rewrite_inference_op"),
                                      .rewrite_grad_op = v.GetBool("rewrite_grad_op")});
       }},
      {"comparison-expander", "ComparisonExpander", "expanders",
       "Rewrites TOTALORDER float comparisons as integer comparisons of the bits.", false, "",
       Factory<ComparisonExpander>()},
      {"dot_decomposer", "DotDecomposer", "expanders",
       "Puts every dot in the canonical [batch.., M, K] x [batch.., K, N] form.", false, "",
       Factory<DotDecomposer>()},
      {"logistic-expander", "LogisticExpander", "expanders", "Expands logistic(x) into 1/(1+exp(-x)).", false, "",
       Factory<LogisticExpander>()},
      {"ragged_dot_rewriter", "RaggedDotRewriter", "expanders",
       "Rewrites ragged-dot as a dense dot of the group-masked operand(s).", false, "",
       Factory<RaggedDotRewriter>()},
      {"scaled-dot-rewriter", "ScaledDotRewriter", "expanders",
       "Rewrites scaled-dot as a dot of the operands multiplied by their block-broadcast scales.", false, "",
       Factory<ScaledDotRewriter>()},
      {"scan_expander", "ScanExpander", "expanders",
       "Rewrites scan as a while loop over the scan dimension (length 1: one application of to_apply).", false, "",
       Factory<ScanExpander>()},
      {"operand_upcaster", "OperandUpcaster", "expanders",
       "Converts dot/convolution operands up to a wider result type.", false, "", Factory<OperandUpcaster>()},
      {"result_caster", "ResultCaster", "expanders",
       "Computes narrower-result dots/convolutions in the operand type and converts the result.", false, "",
       Factory<ResultCaster>()},
      {"algsimp", "AlgebraicSimplifier", "simplifiers",
       "XLA's algebraic rewrites, each named (A+0, x*1, min/max, reduce/reduce-window, slices, pads, dots, ...).",
       false, "", Factory<AlgebraicSimplifier>(), AlgebraicSimplifier::OptionSpecs(),
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<AlgebraicSimplifier>(AlgebraicSimplifier::OptionsFrom(v));
       }},
      {"call-inliner", "CallInliner", "simplifiers",
       "Inlines every kCall into its caller and drops computations left uncalled.", false, "",
       Factory<CallInliner>(),
       {{"single_call_site", PassOptionType::kBool, "false", "only inline computations called once"},
        {"use_shardy_partitioner", PassOptionType::kBool, "false",
         "XLA's module option: keep calls of shmap_body / xla.sdy.manual_computation_body computations"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<CallInliner>(
             CallInlinerOptions{.single_call_site = v.GetBool("single_call_site"),
                                .use_shardy_partitioner = v.GetBool("use_shardy_partitioner")});
       }},
      {"flatten-call-graph", "FlattenCallGraph", "simplifiers",
       "Clones computations so each call/while/conditional body has a single call site.", false, "",
       Factory<FlattenCallGraph>(),
       {{"skip_cloning_for_calls", PassOptionType::kBool, "false",
         "leave computations that only kCall instructions call shared (XLA's SkipCloningForCalls)"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<FlattenCallGraph>(
             FlattenCallGraphOptions{.skip_cloning_for_calls = v.GetBool("skip_cloning_for_calls")});
       }},
      {"simplify-conditional", "ConditionalSimplifier", "simplifiers",
       "Inlines the branch a conditional always takes (constant index or one branch).", false, "",
       Factory<ConditionalSimplifier>()},
      {"while-loop-constant-sinking", "WhileLoopConstantSinking", "simplifiers",
       "Turns reads of loop-carried constants inside loop bodies and conditions into constants.", false, "",
       Factory<WhileLoopConstantSinking>(),
       {{"sink_broadcast_of_constants", PassOptionType::kBool, "false", "also sink broadcasts of constants"},
        {"sink_only_scalar_constants", PassOptionType::kBool, "false", "sink only scalar constants"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<WhileLoopConstantSinking>(WhileLoopConstantSinkingOptions{
             .sink_broadcast_of_constants = v.GetBool("sink_broadcast_of_constants"),
             .sink_only_scalar_constants = v.GetBool("sink_only_scalar_constants")});
       }},
      {"while-loop-invariant-code-motion", "WhileLoopInvariantCodeMotion", "simplifiers",
       "Hoists loop-invariant computation out of while bodies (new loop state carries it in).", false, "",
       Factory<WhileLoopInvariantCodeMotion>()},
      {"reshape-mover", "ReshapeMover", "simplifiers",
       "Sinks equivalent reshapes/transposes below elementwise ops so they cancel or fold.", false, "",
       Factory<ReshapeMover>()},
      {"simplify-while-loops", "WhileLoopSimplifier", "simplifiers",
       "Removes zero-trip loops, inlines one-trip loops, flattens nested loop state, drops unused/duplicate state.", false, "",
       Factory<WhileLoopSimplifier>()},
      {"simplify-sorts", "SortSimplifier", "simplifiers",
       "Drops sort operands whose outputs are unused and that the comparator ignores.", false, "",
       Factory<SortSimplifier>()},
      {"transpose-folding", "TransposeFolding", "simplifiers",
       "Folds transposes into dot and convolution dimension numbers.", false, "", Factory<TransposeFolding>(),
       {{"dot_can_fold_transpose_operand", PassOptionType::kString, "row_column",
         "which dot operands fold: row_column (XLA's IsRowColumnTransposeDotOperand) or always"},
        {"transposable_conv_operands", PassOptionType::kString, "always",
         "which convolution operands fold: always (AlwaysFoldTranspose) or never (NeverFoldTranspose)"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         TransposeFoldingOptions o;
         if (v.GetString("dot_can_fold_transpose_operand") == "always") {
           o.dot_rule = TransposeFoldingOptions::DotRule::kAlways;
         }
         if (v.GetString("transposable_conv_operands") == "never") {
           o.conv_rule = TransposeFoldingOptions::ConvRule::kNever;
         }
         return std::make_unique<TransposeFolding>(o);
       }},
      {"tuple-simplifier", "TupleSimplifier", "simplifiers",
       "Folds get-tuple-element(tuple(...)) and tuple(gte(t,0..n)) round trips.", false, "",
       Factory<TupleSimplifier>()},
      {"zero_sized_hlo_elimination", "ZeroSizedHloElimination", "simplifiers",
       "Replaces side-effect-free zero-element arrays with empty constants.", false, "",
       Factory<ZeroSizedHloElimination>()},
      {"constant_folding", "HloConstantFolding", "simplifiers",
       "Evaluates instructions whose operands are all constants into one constant.", false, "",
       Factory<HloConstantFolding>()},
      {"cse", "HloCSE", "simplifiers",
       "Common-subexpression elimination: merges identical instructions and equal constants.", false,
       "", Factory<HloCSE>(),
       {{"is_layout_sensitive", PassOptionType::kBool, "true", "shapes must agree in layout too"},
        {"ignore_control_dependencies", PassOptionType::kBool, "false",
         "also merge instructions with control edges"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         return std::make_unique<HloCSE>(
             HloCseOptions{.is_layout_sensitive = v.GetBool("is_layout_sensitive"),
                           .ignore_control_dependencies = v.GetBool("ignore_control_dependencies")});
       }},
      {"dce", "HloDCE", "simplifiers",
       "Dead-code elimination: removes unused side-effect-free instructions and computations.",
       false, "", Factory<HloDCE>(),
       {{"remove_dead_parameters_from_entry_computation", PassOptionType::kBool, "false",
         "also remove unused entry parameters and their entry layout entries"},
        {"use_call_analysis", PassOptionType::kBool, "false",
         "also remove unused parameters of computations called by fusions, calls and async-starts, with the callers' operands"}},
       [](const PassOptionValues& v) -> std::unique_ptr<HloPassInterface> {
         HloDceOptions o;
         o.remove_dead_parameters_from_entry_computation = v.GetBool("remove_dead_parameters_from_entry_computation");
         o.use_call_analysis = v.GetBool("use_call_analysis");
         return std::make_unique<HloDCE>(o);
       }},
  };
  AddIndexingPasses(r);
  AddFusionPasses(r);
  AddLibraryCallPasses(r);
  AddExpanderPasses(r);
  AddLayoutPasses(r);
  AddPriorityFusionPasses(r);
  AddDotNormalizationPasses(r);
  AddLayoutNormalizationPasses(r);
  AddMemorySchedulerPasses(r);
  AddTodaysGpuPasses(r);
  AddCollectivePasses(r);
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return r;
}

}  // namespace

const std::vector<PassRegistryEntry>& PassRegistry() {
  static const auto* registry = new std::vector<PassRegistryEntry>(MakeRegistry());
  return *registry;
}

const PassRegistryEntry* FindRegisteredPass(std::string_view name) {
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::unique_ptr<HloPassInterface> PassRegistryEntry::Create(const PassOptionValues& values) const {
  if (values.empty() || configured_factory == nullptr) return factory();
  return configured_factory(values);
}

absl::StatusOr<std::unique_ptr<HloPassInterface>> CreateRegisteredPass(std::string_view name,
                                                                       const PassOptionValues& values) {
  const PassRegistryEntry* entry = FindRegisteredPass(name);
  if (entry == nullptr) {
    std::string hint;
    for (const PassRegistryEntry& e : PassRegistry()) {
      if (e.name.find(name) != std::string_view::npos || name.find(e.name) != std::string_view::npos) {
        hint += hint.empty() ? "" : ", ";
        hint += std::string(e.name);
      }
    }
    return absl::NotFoundError("no pass named '" + std::string(name) + "' in the registry" +
                               (hint.empty() ? " (see opt --list-passes)" : "; did you mean: " + hint + "?"));
  }
  return entry->Create(values);
}

absl::StatusOr<PassOptionOverrides> ParsePassOptionOverrides(const std::vector<std::string>& settings) {
  PassOptionOverrides out;
  for (const std::string& text : settings) {
    ASSIGN_OR_RETURN(PassOptionSetting s, ParsePassOptionSetting(text));
    const PassRegistryEntry* entry = FindRegisteredPass(s.pass);
    if (entry == nullptr) {
      absl::StatusOr<std::unique_ptr<HloPassInterface>> probe = CreateRegisteredPass(s.pass, {});
      return absl::InvalidArgumentError("--pass-option " + text + ": " + std::string(probe.status().message()));
    }
    auto it = out.try_emplace(s.pass, entry->NewOptions()).first;
    if (absl::Status st = it->second.Set(s.pass, s.option, s.value); !st.ok()) {
      return absl::InvalidArgumentError("--pass-option " + text + ": " + std::string(st.message()));
    }
  }
  return out;
}

std::string FormatPassOptionOverrides(const PassOptionOverrides& overrides) {
  std::string out;
  for (const auto& [pass, values] : overrides) {
    for (const auto& [name, value] : values.values()) {
      if (!out.empty()) out += ",";
      out += pass + "." + name + "=" + value;
    }
  }
  return out;
}

absl::Status ApplyPassOptions(HloPassPipeline& pipeline, const PassOptionOverrides& overrides) {
  for (const auto& [pass, values] : overrides) {
    const PassRegistryEntry* entry = FindRegisteredPass(pass);
    if (entry == nullptr) return absl::NotFoundError("no pass named '" + pass + "' in the registry");
    int64_t n = pipeline.ReplaceLeaves([&](const HloPassInterface& leaf) -> std::unique_ptr<HloPassInterface> {
      if (leaf.name() != pass) return nullptr;
      return entry->Create(values);
    });
    if (n == 0) {
      return absl::InvalidArgumentError("--pass-option: pipeline '" + std::string(pipeline.name()) +
                                        "' does not run pass '" + pass + "'");
    }
  }
  return absl::OkStatus();
}

int64_t RemovePassesByName(HloPassPipeline& pipeline, const std::vector<std::string>& names) {
  if (names.empty()) return 0;
  return pipeline.RemovePasses([&](const HloPassInterface& pass) {
    return std::find(names.begin(), names.end(), pass.name()) != names.end();
  });
}

}  // namespace passlab
