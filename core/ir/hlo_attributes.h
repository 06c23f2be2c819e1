// Attribute value types carried by HLO instructions, mirroring the fields of
// XLA's HloInstructionProto (window, dimension numbers, replica groups, ...).
// Each has a ToString() producing exactly the text XLA's printer emits for it.
#ifndef PASSLAB_CORE_IR_HLO_ATTRIBUTES_H_
#define PASSLAB_CORE_IR_HLO_ATTRIBUTES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/shape.h"

namespace passlab {

struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  int64_t source_end_line = 0;
  int64_t source_column = 0;
  int64_t source_end_column = 0;
  std::vector<std::string> profile_type;  // printed as {A,B}
  std::string deduplicated_name;
  bool preserve_layout = false;
  std::string scheduling_name;
  int64_t stack_frame_id = 0;

  bool empty() const;
  bool operator==(const OpMetadata&) const = default;
  std::string ToString() const;  // "{op_type=\"Add\" op_name=\"x\"}"
};

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
  std::string ToString() const;  // "{size=3x3 stride=2x2 pad=1_1x1_1}"
};

struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
  std::string ToString() const;  // "b01f_01io->b01f"
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
  std::string ToString() const;  // "lhs_batch_dims={0}, lhs_contracting_dims={2}, ..."
};

// Sparse dot descriptor (XLA's SparsityDescriptor): "L.1@2:4".
struct SparsityDescriptor {
  int64_t index = 0;  // 0 = lhs, 1 = rhs
  int64_t dimension = 0;
  int64_t n = 2;
  int64_t m = 4;
  bool operator==(const SparsityDescriptor&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

struct PaddingDimension {
  int64_t edge_padding_low = 0;
  int64_t edge_padding_high = 0;
  int64_t interior_padding = 0;
  bool operator==(const PaddingDimension&) const = default;
};

struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
  bool operator==(const PaddingConfig&) const = default;
  std::string ToString() const;  // "0_0x1_1_2"
};

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

// Replica groups, either explicit lists or XLA's compact iota form
// "[2,2]<=[4]" / "[2,2]<=[2,2]T(1,0)".
struct ReplicaGroups {
  std::vector<std::vector<int64_t>> groups;
  bool iota = false;
  std::vector<int64_t> iota_group_dims;     // [num_groups, group_size]
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;  // empty = identity
  bool operator==(const ReplicaGroups&) const = default;
  bool empty() const { return !iota && groups.empty(); }
  // Explicit groups (iota expanded).
  std::vector<std::vector<int64_t>> Expand() const;
  std::string ToString() const;
};

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
std::string_view ComparisonDirectionString(ComparisonDirection d);  // "EQ"
std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view s);
std::string_view ComparisonTypeString(ComparisonType t);  // "TOTALORDER"
std::optional<ComparisonType> ParseComparisonType(std::string_view s);
// XLA's default comparison type for an operand element type.
ComparisonType DefaultComparisonType(PrimitiveType type);

enum class PrecisionLevel : uint8_t { kDefault, kHigh, kHighest };
std::string_view PrecisionString(PrecisionLevel p);  // "default"
std::optional<PrecisionLevel> ParsePrecision(std::string_view s);

struct PrecisionConfig {
  std::vector<PrecisionLevel> operand_precision;
  std::string algorithm;  // e.g. "dot_bf16_bf16_f32"; empty = unset
  bool operator==(const PrecisionConfig&) const = default;
  bool IsDefault() const;
};

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
std::string_view FftTypeString(FftType t);
std::optional<FftType> ParseFftType(std::string_view s);

enum class RandomDistribution : uint8_t { kUniform, kNormal };
std::string_view RandomDistributionString(RandomDistribution d);  // "rng_uniform"
enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
std::string_view RandomAlgorithmString(RandomAlgorithm a);  // "rng_three_fry"

enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
std::string_view FusionKindString(FusionKind k);  // "kLoop"
std::optional<FusionKind> ParseFusionKind(std::string_view s);

enum class TriangularTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };
struct TriangularSolveOptions {
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  TriangularTranspose transpose_a = TriangularTranspose::kNoTranspose;
  bool operator==(const TriangularSolveOptions&) const = default;
};
std::string_view TriangularTransposeString(TriangularTranspose t);  // "NO_TRANSPOSE"

// output_to_operand_aliasing={{0}: (0, {})}
struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

// XLA's NamedSharding (xla/hlo/ir/named_sharding.h), the "V3" text form over a
// mesh of named axes: {mesh['x'=2,'y'=4], [{'x'}, {?}], replicated={'y'},
// unreduced={'x'}}, {mesh['x'=2], replicated}, {maximal_mesh[device_id=3]}.
struct NamedSharding {
  struct MeshAxis {
    std::string name;
    int64_t size = 0;
    bool operator==(const MeshAxis&) const = default;
  };
  // An axis by its index in the mesh; a sub-axis "x":(pre_size)size.
  struct AxisRef {
    int64_t index = 0;
    std::optional<std::pair<int64_t, int64_t>> sub_axis;  // (pre_size, size)
    bool operator==(const AxisRef&) const = default;
  };
  struct DimSharding {
    std::vector<AxisRef> axes;
    bool closed = true;  // false: "{'x', ?}" (open to more axes)
    bool operator==(const DimSharding&) const = default;
  };
  enum class Form : uint8_t { kMaximal, kReplicated, kUnreduced, kManual, kDims };
  enum class ReductionOp : uint8_t { kSum, kMax, kMin };
  Form form = Form::kDims;
  int64_t maximal_device = 0;          // kMaximal: maximal_mesh[device_id=N]
  std::vector<MeshAxis> mesh;          // empty: "mesh[]"
  std::vector<int64_t> device_ids;     // device_ids=(3,2,1,0)
  std::vector<int64_t> device_iota_reshape;  // device_ids=([4]T(0))
  std::vector<int64_t> device_iota_perm;
  std::vector<DimSharding> dims;       // kDims
  std::vector<AxisRef> replicated_axes;
  std::vector<AxisRef> unreduced_axes;  // kUnreduced: every axis when written bare
  bool unreduced_op_written = false;    // "unreduced=max{...}"
  ReductionOp unreduced_op = ReductionOp::kSum;
  std::vector<AxisRef> manual_axes;
  bool operator==(const NamedSharding&) const = default;
};

// Sharding in every form XLA prints: replicated, maximal, manual, unknown,
// tiled (explicit device list or iota), partial replication, subgroups, tuple,
// and named (mesh axes).
struct HloSharding {
  enum class Kind : uint8_t { kReplicated, kMaximal, kManual, kUnknown, kTiled, kTuple, kNamed };
  enum class SubgroupType : uint8_t { kManual, kReplicated, kMaximal, kUnreduced };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;  // kMaximal
  std::vector<int64_t> tile_dims;  // kTiled: devices=[...]
  std::vector<int64_t> devices;    // explicit device list
  bool iota = false;               // "<=[...]" form
  std::vector<int64_t> iota_reshape_dims;
  std::vector<int64_t> iota_transpose_perm;
  bool last_tile_dim_replicate = false;
  std::vector<SubgroupType> last_tile_dims;
  std::vector<HloSharding> tuple_elements;  // kTuple
  std::optional<NamedSharding> named;       // kNamed
  std::vector<OpMetadata> metadata;
  // shard_as / shard_like groups: "shard_as 1".
  bool shard_as = false;
  bool shard_like = false;
  int64_t shard_group_id = -1;

  bool operator==(const HloSharding&) const = default;
  std::string ToString() const;  // "{devices=[2,1]0,1}"
};

struct DomainMetadata {
  std::string kind;   // "sharding"
  std::string entry;  // raw text of the entry sharding
  std::string exit;
  bool operator==(const DomainMetadata&) const = default;
};

// Sorted key/value map; values remember whether they were quoted in text.
struct FrontendAttributes {
  std::map<std::string, std::string> map;
  bool operator==(const FrontendAttributes&) const = default;
  std::string ToString() const;  // "{_xla_x=\"y\"}"
};

// "statistics={visualizing_index=1,stat-1=33}"
struct Statistics {
  int64_t visualizing_index = 0;
  std::vector<std::pair<std::string, double>> stats;
  bool operator==(const Statistics&) const = default;
  std::string ToString() const;
};

// Custom-call enums.
enum class CustomCallApiVersion : uint8_t {
  kUnspecified, kOriginal, kStatusReturning, kStatusReturningUnified, kTypedFfi
};
std::string_view CustomCallApiVersionString(CustomCallApiVersion v);
std::optional<CustomCallApiVersion> ParseCustomCallApiVersion(std::string_view s);
enum class CustomCallSchedule : uint8_t { kNone, kLatest, kEarliest };
std::string_view CustomCallScheduleString(CustomCallSchedule s);
std::optional<CustomCallSchedule> ParseCustomCallSchedule(std::string_view s);
enum class PaddingType : uint8_t { kInvalid, kValid, kSame };
std::string_view PaddingTypeString(PaddingType p);
std::optional<PaddingType> ParsePaddingType(std::string_view s);

// Escapes a string the way XLA's CEscape does for quoted attribute values.
std::string CEscape(std::string_view s);
// Formats {1,2,3}.
std::string BracedInts(const std::vector<int64_t>& values);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_ATTRIBUTES_H_
