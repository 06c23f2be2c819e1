// The instruction attributes of the HLO text format as data: one row per
// attribute spelling, saying what kind of value it takes, where the value
// lives on the instruction, which opcodes take it and which require it.
// The parser (hlo_parser_attributes.cc) reads every attribute through this
// table; the printer (hlo_printer_attributes.cc) prints the plain ones
// (lists of integers, integers, booleans, floats, strings, words, enums)
// through the same rows, in the order XLA prints them per opcode
// (HloInstruction::PrintExtraAttributes and its subclasses'
// PrintExtraAttributesImpl in xla/hlo/ir/hlo_instructions.cc).
//
// Internal to core/text: not a public header.
#ifndef PASSLAB_CORE_TEXT_HLO_ATTRIBUTE_TABLE_H_
#define PASSLAB_CORE_TEXT_HLO_ATTRIBUTE_TABLE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/hlo_instruction.h"

namespace passlab {
namespace text_internal {

enum class AttrKind : uint8_t {
  kInts,             // {1,2,3}
  kInt,              // 7
  kOptionalInt,      // 7; unset until given
  kBool,             // true | false
  kOptionalBool,     // true | false; unset until given (XLA's TriState)
  kBoolList,         // {true,false}
  kFloat,            // 0.001
  kString,           // "..." with C escapes
  kWord,             // a bare identifier, kept as written
  kEnum,             // one word of a fixed set
  kComputation,      // %name or an inline {...} body, into called computation `slot`
  kComputationList,  // {%a, %b}
  kVerbatim,         // an XLA attribute passlab does not model: kept as written
  kSpecial,          // a structured value: parsed and printed by hand (SpecialAttr)
};

// The structured values, each with its own parse (Parser::ParseSpecialAttribute)
// and print code.
enum class SpecialAttr : uint8_t {
  kNone,
  kMetadata,
  kSharding,
  kFrontendAttributes,
  kBackendConfig,
  kControlPredecessors,
  kStatistics,
  kOrigin,
  kAsyncExecutionThread,
  kOutputToOperandAliasing,
  kSlice,
  kPadding,
  kOperandPrecision,
  kSparsity,
  kWindow,
  kDimLabels,
  kSliceSizesList,
  kIndexVectorDim,
  kReplicaGroups,
  kSourceTargetPairs,
  kOperandLayoutConstraints,
  kLiteral,
  kOutfeedShape,
  kDomain,
};

// A set of opcodes, built at compile time. Empty means "any opcode" where a
// row says which opcodes take an attribute.
class OpcodeSet {
 public:
  constexpr OpcodeSet() = default;
  constexpr OpcodeSet(std::initializer_list<HloOpcode> ops) {
    for (HloOpcode op : ops) bits_[Index(op) / 64] |= uint64_t{1} << (Index(op) % 64);
  }
  constexpr bool empty() const {
    for (uint64_t w : bits_) {
      if (w != 0) return false;
    }
    return true;
  }
  constexpr bool contains(HloOpcode op) const {
    return (bits_[Index(op) / 64] >> (Index(op) % 64)) & 1;
  }

 private:
  static constexpr int Index(HloOpcode op) { return static_cast<int>(op); }
  uint64_t bits_[(kHloOpcodeCount + 63) / 64] = {};
};

// The attributes a default-constructed instruction has: a row's value is
// "at its default" when it equals this one's.
const HloAttributes& DefaultAttributes();

struct AttributeSpec {
  std::string_view name;
  AttrKind kind;
  OpcodeSet opcodes;      // the opcodes that take it (empty: any)
  OpcodeSet required_by;  // the opcodes that must be given it
  // Belongs to the instruction itself: an "op-start" (async sugar) keeps it
  // rather than handing it to the op it wraps.
  bool generic = false;
  // Printed even at its default value (else only when it differs).
  bool print_default = true;
  int slot = 0;                               // kComputation
  SpecialAttr special = SpecialAttr::kNone;   // kSpecial
  std::string_view what = {};                 // kEnum: "fusion kind", for errors

  // Where the value lives, by kind (the others are null). Integers and
  // booleans share the int64_t accessors (booleans as 0/1).
  const std::vector<int64_t>& (*ints)(const HloInstruction&) = nullptr;          // kInts
  std::vector<int64_t>* (*mutable_ints)(HloInstruction&) = nullptr;
  std::optional<int64_t> (*integer)(const HloInstruction&) = nullptr;            // kInt, kOptionalInt,
  void (*set_integer)(HloInstruction&, int64_t) = nullptr;                        // kBool, kOptionalBool
  const std::vector<bool>& (*bools)(const HloInstruction&) = nullptr;            // kBoolList
  std::vector<bool>* (*mutable_bools)(HloInstruction&) = nullptr;
  float (*real)(const HloInstruction&) = nullptr;                                 // kFloat
  void (*set_real)(HloInstruction&, float) = nullptr;
  const std::string& (*string)(const HloInstruction&) = nullptr;                 // kString, kWord
  std::string* (*mutable_string)(HloInstruction&) = nullptr;
  std::string_view (*enum_name)(const HloInstruction&) = nullptr;                // kEnum
  bool (*set_enum)(HloInstruction&, std::string_view word) = nullptr;             // false: no such value
  // Null for values that are always printed (print_default).
  bool (*is_default)(const HloInstruction&) = nullptr;
};

// Booleans (and XLA's TriState, an optional one) as the integer accessors
// 0/1 (unset: nullopt).
constexpr std::optional<int64_t> BoolAsInteger(bool v) { return v ? 1 : 0; }
constexpr std::optional<int64_t> BoolAsInteger(const std::optional<bool>& v) {
  if (!v.has_value()) return std::nullopt;
  return *v ? 1 : 0;
}

// Accessors for the rows, from a path into HloAttributes ("gather_dnums.
// offset_dims"); the mutable ones go through mutable_attrs(), which drops the
// instruction's cached line.
#define PASSLAB_ATTR_DEFAULT(path) \
  .is_default = [](const HloInstruction& i) { return i.attrs().path == DefaultAttributes().path; }
#define PASSLAB_ATTR_INTS(path)                                                                   \
  .ints = [](const HloInstruction& i) -> const std::vector<int64_t>& { return i.attrs().path; }, \
  .mutable_ints = [](HloInstruction& i) { return &i.mutable_attrs().path; }, PASSLAB_ATTR_DEFAULT(path)
#define PASSLAB_ATTR_INT(path)                                                                         \
  .integer = [](const HloInstruction& i) -> std::optional<int64_t> { return i.attrs().path; },        \
  .set_integer = [](HloInstruction& i, int64_t v) { i.mutable_attrs().path = v; }, PASSLAB_ATTR_DEFAULT(path)
#define PASSLAB_ATTR_BOOL(path)                                                                          \
  .integer = [](const HloInstruction& i) { return BoolAsInteger(i.attrs().path); },                     \
  .set_integer = [](HloInstruction& i, int64_t v) { i.mutable_attrs().path = v != 0; },                \
  PASSLAB_ATTR_DEFAULT(path)
#define PASSLAB_ATTR_REAL(path)                                                  \
  .real = [](const HloInstruction& i) { return i.attrs().path; },               \
  .set_real = [](HloInstruction& i, float v) { i.mutable_attrs().path = v; },   \
  PASSLAB_ATTR_DEFAULT(path)
#define PASSLAB_ATTR_STRING(path)                                                                 \
  .string = [](const HloInstruction& i) -> const std::string& { return i.attrs().path; },        \
  .mutable_string = [](HloInstruction& i) { return &i.mutable_attrs().path; }, PASSLAB_ATTR_DEFAULT(path)
#define PASSLAB_ATTR_BOOLS(path)                                                                  \
  .bools = [](const HloInstruction& i) -> const std::vector<bool>& { return i.attrs().path; },   \
  .mutable_bools = [](HloInstruction& i) { return &i.mutable_attrs().path; }, PASSLAB_ATTR_DEFAULT(path)
// An enum field with its ParseX (word -> optional value) and XString.
#define PASSLAB_ATTR_ENUM(path, parse, print)                                  \
  .enum_name = [](const HloInstruction& i) { return print(i.attrs().path); }, \
  .set_enum = [](HloInstruction& i, std::string_view w) {                     \
    auto v = parse(w);                                                        \
    if (!v.has_value()) return false;                                         \
    i.mutable_attrs().path = *v;                                              \
    return true;                                                              \
  },                                                                          \
  PASSLAB_ATTR_DEFAULT(path)

std::optional<RandomDistribution> ParseRandomDistribution(std::string_view s);
std::optional<RandomAlgorithm> ParseRandomAlgorithm(std::string_view s);
std::optional<TriangularTranspose> ParseTriangularTranspose(std::string_view s);

using enum HloOpcode;
using enum AttrKind;

// Row order matters twice: among rows of one name the first that takes the
// opcode wins (restricted rows before the one for any opcode), and a
// missing required attribute is reported in row order (XLA's parser asks
// for "kind" before "calls", "to_apply" before "dimensions", the gather and
// scatter dimension numbers in their order, "index_vector_dim" before
// "slice_sizes").
inline constexpr AttributeSpec kAttributeTable[] = {
    // Called computations.
    {.name = "kind", .kind = kEnum, .opcodes = {kFusion}, .required_by = {kFusion}, .what = "fusion kind",
     .enum_name = [](const HloInstruction& i) { return FusionKindString(i.fusion_kind()); },
     .set_enum = [](HloInstruction& i, std::string_view w) {
       std::optional<FusionKind> k = ParseFusionKind(w);
       if (k.has_value()) i.set_fusion_kind(*k);
       return k.has_value();
     }},
    {.name = "to_apply", .kind = kComputation,
     .required_by = {kReduce, kMap, kSort, kScatter, kReduceWindow, kAllReduce, kAllReduceStart,
                     kReduceScatter, kCall, kScan}},
    {.name = "calls", .kind = kComputation, .required_by = {kFusion, kAsyncStart}},
    {.name = "condition", .kind = kComputation, .required_by = {kWhile}},
    {.name = "body", .kind = kComputation, .required_by = {kWhile}, .slot = 1},
    {.name = "select", .kind = kComputation, .required_by = {kSelectAndScatter}},
    {.name = "scatter", .kind = kComputation, .required_by = {kSelectAndScatter}, .slot = 1},
    {.name = "true_computation", .kind = kComputation},
    {.name = "false_computation", .kind = kComputation, .slot = 1},
    {.name = "branch_computations", .kind = kComputationList},
    {.name = "called_computations", .kind = kComputationList},
    {.name = "is_composite", .kind = kBool, .opcodes = {kCall}, .print_default = false,
     PASSLAB_ATTR_BOOL(is_composite)},

    // Attributes of every instruction.
    {.name = "metadata", .kind = kSpecial, .generic = true, .special = SpecialAttr::kMetadata},
    {.name = "sharding", .kind = kSpecial, .generic = true, .special = SpecialAttr::kSharding},
    {.name = "frontend_attributes", .kind = kSpecial, .generic = true,
     .special = SpecialAttr::kFrontendAttributes},
    {.name = "backend_config", .kind = kSpecial, .generic = true, .special = SpecialAttr::kBackendConfig},
    {.name = "control-predecessors", .kind = kSpecial, .generic = true,
     .special = SpecialAttr::kControlPredecessors},
    {.name = "statistics", .kind = kSpecial, .generic = true, .special = SpecialAttr::kStatistics},
    {.name = "origin", .kind = kSpecial, .generic = true, .special = SpecialAttr::kOrigin},
    {.name = "async_execution_thread", .kind = kSpecial, .generic = true,
     .special = SpecialAttr::kAsyncExecutionThread},
    {.name = "output_to_operand_aliasing", .kind = kSpecial, .generic = true,
     .special = SpecialAttr::kOutputToOperandAliasing},

    // Shape-changing ops.
    {.name = "dimensions", .kind = kInts, .required_by = {kTranspose, kConcatenate, kReverse, kScan},
     .ints = [](const HloInstruction& i) -> const std::vector<int64_t>& { return i.dimensions(); },
     .mutable_ints = [](HloInstruction& i) { return i.mutable_dimensions(); }},
    {.name = "slice", .kind = kSpecial, .opcodes = {kSlice}, .required_by = {kSlice},
     .special = SpecialAttr::kSlice},
    {.name = "padding", .kind = kSpecial, .opcodes = {kPad}, .required_by = {kPad},
     .special = SpecialAttr::kPadding},
    {.name = "iota_dimension", .kind = kInt, .required_by = {kIota},
     .integer = [](const HloInstruction& i) -> std::optional<int64_t> { return i.iota_dimension(); },
     .set_integer = [](HloInstruction& i, int64_t v) { i.set_index(v); }},
    {.name = "index", .kind = kInt, .opcodes = {kGetTupleElement}, .required_by = {kGetTupleElement},
     .integer = [](const HloInstruction& i) -> std::optional<int64_t> { return i.tuple_index(); },
     .set_integer = [](HloInstruction& i, int64_t v) { i.set_index(v); }},
    {.name = "direction", .kind = kEnum, .required_by = {kCompare}, .what = "comparison direction",
     PASSLAB_ATTR_ENUM(comparison_direction, ParseComparisonDirection, ComparisonDirectionString)},
    // An explicit type prints back even when it is the one the operands imply.
    {.name = "type", .kind = kEnum, .opcodes = {kCompare}, .print_default = false, .what = "comparison type",
     PASSLAB_ATTR_ENUM(comparison_type, ParseComparisonType, ComparisonTypeString)},

    // Dots.
    {.name = "lhs_batch_dims", .kind = kInts, PASSLAB_ATTR_INTS(dot_dnums.lhs_batch_dimensions)},
    {.name = "rhs_batch_dims", .kind = kInts, PASSLAB_ATTR_INTS(dot_dnums.rhs_batch_dimensions)},
    {.name = "lhs_contracting_dims", .kind = kInts, PASSLAB_ATTR_INTS(dot_dnums.lhs_contracting_dimensions)},
    {.name = "rhs_contracting_dims", .kind = kInts, PASSLAB_ATTR_INTS(dot_dnums.rhs_contracting_dimensions)},
    {.name = "lhs_ragged_dims", .kind = kInts, .print_default = false, PASSLAB_ATTR_INTS(lhs_ragged_dims)},
    {.name = "rhs_group_dims", .kind = kInts, .print_default = false, PASSLAB_ATTR_INTS(rhs_group_dims)},
    {.name = "operand_precision", .kind = kSpecial, .special = SpecialAttr::kOperandPrecision},
    {.name = "algorithm", .kind = kEnum, .opcodes = {kRngBitGenerator}, .what = "rng algorithm",
     PASSLAB_ATTR_ENUM(rng_algorithm, ParseRandomAlgorithm, RandomAlgorithmString)},
    {.name = "algorithm", .kind = kWord, .print_default = false, PASSLAB_ATTR_STRING(precision_config.algorithm)},
    {.name = "sparsity", .kind = kSpecial, .special = SpecialAttr::kSparsity},

    // Scan (XLA's parser requires to_apply, dimensions and num_carries).
    {.name = "num_carries", .kind = kInt, .opcodes = {kScan}, .required_by = {kScan},
     PASSLAB_ATTR_INT(num_carries)},
    {.name = "is_reverse", .kind = kBool, .opcodes = {kScan}, .print_default = false,
     PASSLAB_ATTR_BOOL(is_reverse)},
    {.name = "is_associative", .kind = kOptionalBool, .opcodes = {kScan}, .print_default = false,
     PASSLAB_ATTR_BOOL(is_associative)},

    // Windows and convolutions.
    {.name = "window", .kind = kSpecial, .special = SpecialAttr::kWindow},
    {.name = "dim_labels", .kind = kSpecial, .required_by = {kConvolution}, .special = SpecialAttr::kDimLabels},
    {.name = "feature_group_count", .kind = kInt, .print_default = false, PASSLAB_ATTR_INT(feature_group_count)},
    {.name = "batch_group_count", .kind = kInt, .print_default = false, PASSLAB_ATTR_INT(batch_group_count)},

    // Slices, gathers and scatters.
    {.name = "dynamic_slice_sizes", .kind = kInts, .required_by = {kDynamicSlice}, PASSLAB_ATTR_INTS(slice_sizes)},
    {.name = "offset_dims", .kind = kInts, .required_by = {kGather}, PASSLAB_ATTR_INTS(gather_dnums.offset_dims)},
    {.name = "collapsed_slice_dims", .kind = kInts, .required_by = {kGather},
     PASSLAB_ATTR_INTS(gather_dnums.collapsed_slice_dims)},
    {.name = "start_index_map", .kind = kInts, .required_by = {kGather},
     PASSLAB_ATTR_INTS(gather_dnums.start_index_map)},
    {.name = "operand_batching_dims", .kind = kInts, .print_default = false,
     PASSLAB_ATTR_INTS(gather_dnums.operand_batching_dims)},
    {.name = "start_indices_batching_dims", .kind = kInts, .print_default = false,
     PASSLAB_ATTR_INTS(gather_dnums.start_indices_batching_dims)},
    {.name = "update_window_dims", .kind = kInts, .required_by = {kScatter},
     PASSLAB_ATTR_INTS(scatter_dnums.update_window_dims)},
    {.name = "inserted_window_dims", .kind = kInts, .required_by = {kScatter},
     PASSLAB_ATTR_INTS(scatter_dnums.inserted_window_dims)},
    {.name = "scatter_dims_to_operand_dims", .kind = kInts, .required_by = {kScatter},
     PASSLAB_ATTR_INTS(scatter_dnums.scatter_dims_to_operand_dims)},
    {.name = "input_batching_dims", .kind = kInts, .print_default = false,
     PASSLAB_ATTR_INTS(scatter_dnums.input_batching_dims)},
    {.name = "scatter_indices_batching_dims", .kind = kInts, .print_default = false,
     PASSLAB_ATTR_INTS(scatter_dnums.scatter_indices_batching_dims)},
    // Both dimension numbers take it, whatever the opcode.
    {.name = "index_vector_dim", .kind = kSpecial, .required_by = {kGather, kScatter},
     .special = SpecialAttr::kIndexVectorDim},
    // In-place collective-permute: one list of sizes per update.
    {.name = "slice_sizes", .kind = kSpecial, .opcodes = {kCollectivePermute, kCollectivePermuteStart},
     .special = SpecialAttr::kSliceSizesList},
    {.name = "slice_sizes", .kind = kInts, .required_by = {kGather}, PASSLAB_ATTR_INTS(slice_sizes)},
    {.name = "indices_are_sorted", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(indices_are_sorted)},
    {.name = "unique_indices", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(unique_indices)},

    // Numerics.
    {.name = "epsilon", .kind = kFloat, PASSLAB_ATTR_REAL(epsilon)},
    {.name = "feature_index", .kind = kInt, PASSLAB_ATTR_INT(feature_index)},
    {.name = "exponent_bits", .kind = kInt, PASSLAB_ATTR_INT(exponent_bits)},
    {.name = "mantissa_bits", .kind = kInt, PASSLAB_ATTR_INT(mantissa_bits)},
    {.name = "is_stable", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(is_stable)},
    {.name = "distribution", .kind = kEnum, .what = "distribution",
     PASSLAB_ATTR_ENUM(distribution, ParseRandomDistribution, RandomDistributionString)},
    {.name = "fft_type", .kind = kEnum, .what = "fft type", PASSLAB_ATTR_ENUM(fft_type, ParseFftType, FftTypeString)},
    {.name = "fft_length", .kind = kInts, PASSLAB_ATTR_INTS(fft_length)},
    {.name = "left_side", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(triangular_solve.left_side)},
    {.name = "lower", .kind = kBool, .opcodes = {kCholesky}, .print_default = false,
     PASSLAB_ATTR_BOOL(cholesky_lower)},
    {.name = "lower", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(triangular_solve.lower)},
    {.name = "unit_diagonal", .kind = kBool, .print_default = false,
     PASSLAB_ATTR_BOOL(triangular_solve.unit_diagonal)},
    {.name = "transpose_a", .kind = kEnum, .print_default = false, .what = "transpose_a",
     PASSLAB_ATTR_ENUM(triangular_solve.transpose_a, ParseTriangularTranspose, TriangularTransposeString)},
    {.name = "k", .kind = kInt, PASSLAB_ATTR_INT(k)},
    {.name = "largest", .kind = kBool, PASSLAB_ATTR_BOOL(largest)},

    // Collectives and transfers.
    {.name = "channel_id", .kind = kOptionalInt, .print_default = false, PASSLAB_ATTR_INT(channel_id)},
    {.name = "replica_groups", .kind = kSpecial, .special = SpecialAttr::kReplicaGroups},
    {.name = "use_global_device_ids", .kind = kBool, .print_default = false,
     PASSLAB_ATTR_BOOL(use_global_device_ids)},
    {.name = "constrain_layout", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(constrain_layout)},
    {.name = "source_target_pairs", .kind = kSpecial, .special = SpecialAttr::kSourceTargetPairs},
    {.name = "is_host_transfer", .kind = kBool, .print_default = false, PASSLAB_ATTR_BOOL(is_host_transfer)},

    // Custom calls.
    {.name = "custom_call_target", .kind = kString, .required_by = {kCustomCall},
     PASSLAB_ATTR_STRING(custom_call_target)},
    {.name = "api_version", .kind = kEnum, .print_default = false, .what = "custom call api_version",
     PASSLAB_ATTR_ENUM(api_version, ParseCustomCallApiVersion, CustomCallApiVersionString)},
    {.name = "custom_call_has_side_effect", .kind = kBool, .print_default = false,
     PASSLAB_ATTR_BOOL(custom_call_has_side_effect)},
    {.name = "schedule", .kind = kEnum, .print_default = false, .what = "custom call schedule",
     PASSLAB_ATTR_ENUM(schedule, ParseCustomCallSchedule, CustomCallScheduleString)},
    {.name = "padding_type", .kind = kEnum, .print_default = false, .what = "padding type",
     PASSLAB_ATTR_ENUM(padding_type, ParsePaddingType, PaddingTypeString)},
    {.name = "operand_layout_constraints", .kind = kSpecial, .special = SpecialAttr::kOperandLayoutConstraints},
    {.name = "literal", .kind = kSpecial, .opcodes = {kCustomCall}, .special = SpecialAttr::kLiteral},

    // Infeed, outfeed, parameters, copies, domains.
    {.name = "infeed_config", .kind = kString, .print_default = false, PASSLAB_ATTR_STRING(infeed_config)},
    {.name = "outfeed_config", .kind = kString, .print_default = false, PASSLAB_ATTR_STRING(outfeed_config)},
    {.name = "outfeed_shape", .kind = kSpecial, .special = SpecialAttr::kOutfeedShape},
    {.name = "parameter_replication", .kind = kBoolList, .print_default = false,
     PASSLAB_ATTR_BOOLS(parameter_replication)},
    {.name = "cross_program_prefetch_index", .kind = kOptionalInt, .print_default = false,
     PASSLAB_ATTR_INT(cross_program_prefetch_index)},
    {.name = "domain", .kind = kSpecial, .opcodes = {kDomain}, .special = SpecialAttr::kDomain},

    // XLA attributes passlab does not model yet, kept verbatim on any
    // instruction (a custom call keeps any attribute it does not know).
    {.name = "result_accuracy", .kind = kVerbatim},
    {.name = "inferred_dimension", .kind = kVerbatim},
    {.name = "sparsity_config", .kind = kVerbatim},
    {.name = "convolution_kind", .kind = kVerbatim},
    {.name = "has_dynamic_root", .kind = kVerbatim},
    {.name = "delta", .kind = kVerbatim},
    {.name = "split_dims", .kind = kVerbatim},
    {.name = "collective_op_id", .kind = kVerbatim},
};

// The rows named `name`, in table order (empty when none).
std::span<const AttributeSpec* const> FindAttributeRows(std::string_view name);

// The row the printer uses for `name` on `op`, found at compile time (a
// misspelt name does not compile).
consteval const AttributeSpec& AttributeRow(std::string_view name, HloOpcode op = kAdd) {
  for (const AttributeSpec& row : kAttributeTable) {
    if (row.name == name && (row.opcodes.empty() || row.opcodes.contains(op))) return row;
  }
  throw "no such attribute row";
}

// Appends ", name=value" for a row of a plain kind, unless the row prints
// only non-default values and the instruction's is the default.
void AppendAttribute(std::string& out, const AttributeSpec& spec, const HloInstruction& inst);

#undef PASSLAB_ATTR_DEFAULT
#undef PASSLAB_ATTR_INTS
#undef PASSLAB_ATTR_INT
#undef PASSLAB_ATTR_BOOL
#undef PASSLAB_ATTR_REAL
#undef PASSLAB_ATTR_STRING
#undef PASSLAB_ATTR_BOOLS
#undef PASSLAB_ATTR_ENUM

}  // namespace text_internal
}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_ATTRIBUTE_TABLE_H_
