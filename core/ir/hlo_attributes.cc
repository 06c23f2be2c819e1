#include "core/ir/hlo_attributes.h"

#include <numeric>

#include "core/ir/attribute_append.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

template <typename T, typename Fn>
std::string JoinDims(const std::vector<T>& dims, Fn&& fn) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += "x";
    out += fn(dims[i]);
  }
  return out;
}

template <typename T>
std::optional<T> FindName(std::string_view s, std::initializer_list<std::pair<std::string_view, T>> table) {
  for (const auto& [name, value] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

}  // namespace

void CEscapeAppend(std::string& out, std::string_view s) {
  // Most names need no escaping: one append.
  size_t plain = 0;
  while (plain < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[plain]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\'' || c == '\\') break;
    ++plain;
  }
  out.append(s.data(), plain);
  for (unsigned char c : s.substr(plain)) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[5];
          snprintf(buf, sizeof(buf), "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
}

std::string CEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  CEscapeAppend(out, s);
  return out;
}

std::string BracedInts(const std::vector<int64_t>& values) {
  return StrCat("{", Join(values, ","), "}");
}

bool OpMetadata::empty() const { return *this == OpMetadata(); }

std::string OpMetadata::ToString() const {
  std::string out;
  AppendOpMetadata(out, *this);
  return out;
}

void AppendOpMetadata(std::string& out, const OpMetadata& m) {
  out += '{';
  bool first = true;
  auto key = [&](std::string_view k) {
    if (!first) out += ' ';
    first = false;
    out += k;
  };
  auto quoted = [&](std::string_view k, const std::string& v) {
    if (v.empty()) return;
    key(k);
    out += "=\"";
    CEscapeAppend(out, v);
    out += '"';
  };
  auto number = [&](std::string_view k, int64_t v) {
    if (v == 0) return;
    key(k);
    out += '=';
    absl::StrAppend(&out, v);
  };
  quoted("op_type", m.op_type);
  quoted("op_name", m.op_name);
  quoted("source_file", m.source_file);
  number("source_line", m.source_line);
  number("source_end_line", m.source_end_line);
  number("source_column", m.source_column);
  number("source_end_column", m.source_end_column);
  if (!m.profile_type.empty()) {
    key("profile_type");
    out += "={";
    for (size_t i = 0; i < m.profile_type.size(); ++i) {
      if (i > 0) out += ',';
      out += m.profile_type[i];
    }
    out += '}';
  }
  quoted("deduplicated_name", m.deduplicated_name);
  if (m.preserve_layout) {
    key("preserve_layout");
    out += "=true";
  }
  quoted("scheduling_name", m.scheduling_name);
  number("stack_frame_id", m.stack_frame_id);
  out += '}';
}

std::string Window::ToString() const {
  using WD = WindowDimension;
  auto any = [&](auto pred) {
    for (const WD& d : dimensions) {
      if (pred(d)) return true;
    }
    return false;
  };
  std::string out = "{size=" + JoinDims(dimensions, [](const WD& d) { return StrCat(d.size); });
  if (any([](const WD& d) { return d.stride != 1; })) {
    out += " stride=" + JoinDims(dimensions, [](const WD& d) { return StrCat(d.stride); });
  }
  if (any([](const WD& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    out += " pad=" + JoinDims(dimensions, [](const WD& d) {
             return StrCat(d.padding_low, "_", d.padding_high);
           });
  }
  if (any([](const WD& d) { return d.base_dilation != 1; })) {
    out += " lhs_dilate=" +
           JoinDims(dimensions, [](const WD& d) { return StrCat(d.base_dilation); });
  }
  if (any([](const WD& d) { return d.window_dilation != 1; })) {
    out += " rhs_dilate=" +
           JoinDims(dimensions, [](const WD& d) { return StrCat(d.window_dilation); });
  }
  if (any([](const WD& d) { return d.window_reversal; })) {
    out += " rhs_reversal=" +
           JoinDims(dimensions, [](const WD& d) { return std::string(d.window_reversal ? "1" : "0"); });
  }
  out += "}";
  return out;
}

std::string ConvolutionDimensionNumbers::ToString() const {
  // Builds one label string: letters for the named dims, digits for spatial.
  auto labels = [](int64_t rank, std::initializer_list<std::pair<int64_t, char>> named,
                   const std::vector<int64_t>& spatial) {
    std::string s(rank, '?');
    for (auto [dim, c] : named) {
      if (dim >= 0 && dim < rank) s[dim] = c;
    }
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && spatial[i] < rank) s[spatial[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  int64_t rank = 2 + static_cast<int64_t>(input_spatial_dimensions.size());
  return StrCat(
      labels(rank, {{input_batch_dimension, 'b'}, {input_feature_dimension, 'f'}},
             input_spatial_dimensions),
      "_",
      labels(rank, {{kernel_input_feature_dimension, 'i'}, {kernel_output_feature_dimension, 'o'}},
             kernel_spatial_dimensions),
      "->",
      labels(rank, {{output_batch_dimension, 'b'}, {output_feature_dimension, 'f'}},
             output_spatial_dimensions));
}

std::string DotDimensionNumbers::ToString() const {
  std::vector<std::string> parts;
  if (!lhs_batch_dimensions.empty()) {
    parts.push_back("lhs_batch_dims=" + BracedInts(lhs_batch_dimensions));
  }
  parts.push_back("lhs_contracting_dims=" + BracedInts(lhs_contracting_dimensions));
  if (!rhs_batch_dimensions.empty()) {
    parts.push_back("rhs_batch_dims=" + BracedInts(rhs_batch_dimensions));
  }
  parts.push_back("rhs_contracting_dims=" + BracedInts(rhs_contracting_dimensions));
  return Join(parts, ", ");
}

std::string PaddingConfig::ToString() const {
  return JoinDims(dimensions, [](const PaddingDimension& d) {
    std::string s = StrCat(d.edge_padding_low, "_", d.edge_padding_high);
    if (d.interior_padding != 0) StrAppend(&s, "_", d.interior_padding);
    return s;
  });
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expand() const {
  if (!iota) return groups;
  // Devices 0..N-1 reshaped to iota_reshape_dims, transposed, then viewed as
  // iota_group_dims [num_groups, group_size].
  int64_t n = 1;
  for (int64_t d : iota_reshape_dims) n *= d;
  std::vector<int64_t> perm = iota_transpose_perm;
  if (perm.empty()) {
    perm.resize(iota_reshape_dims.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  std::vector<int64_t> tdims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) tdims[i] = iota_reshape_dims[perm[i]];
  std::vector<int64_t> in_strides = RowMajorStrides(iota_reshape_dims);
  std::vector<int64_t> flat(n);
  std::vector<int64_t> idx(perm.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t i = 0; i < perm.size(); ++i) src += idx[i] * in_strides[perm[i]];
    flat[k] = src;
    for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < tdims[i]) break;
      idx[i] = 0;
    }
  }
  std::vector<std::vector<int64_t>> out;
  int64_t num_groups = iota_group_dims.empty() ? 1 : iota_group_dims[0];
  int64_t group_size = iota_group_dims.size() > 1 ? iota_group_dims[1] : n;
  for (int64_t g = 0; g < num_groups; ++g) {
    out.emplace_back(flat.begin() + g * group_size, flat.begin() + (g + 1) * group_size);
  }
  return out;
}

std::string ReplicaGroups::ToString() const {
  if (iota) {
    std::string out = StrCat("[", Join(iota_group_dims, ","), "]<=[",
                                   Join(iota_reshape_dims, ","), "]");
    if (!iota_transpose_perm.empty()) {
      StrAppend(&out, "T(", Join(iota_transpose_perm, ","), ")");
    }
    return out;
  }
  std::vector<std::string> parts;
  for (const auto& g : groups) parts.push_back(BracedInts(g));
  return StrCat("{", Join(parts, ","), "}");
}

std::string_view ComparisonDirectionString(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
  }
  return "?";
}

std::optional<ComparisonDirection> ParseComparisonDirection(std::string_view s) {
  return FindName<ComparisonDirection>(
      s, {{"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
          {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
          {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt}});
}

std::string_view ComparisonTypeString(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault: return "DEFAULT";
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
  }
  return "?";
}

std::optional<ComparisonType> ParseComparisonType(std::string_view s) {
  return FindName<ComparisonType>(
      s, {{"DEFAULT", ComparisonType::kDefault}, {"FLOAT", ComparisonType::kFloat},
          {"TOTALORDER", ComparisonType::kTotalOrder}, {"SIGNED", ComparisonType::kSigned},
          {"UNSIGNED", ComparisonType::kUnsigned}});
}

ComparisonType DefaultComparisonType(PrimitiveType type) {
  if (IsFloatingPointType(type) || IsComplexType(type)) return ComparisonType::kFloat;
  if (IsSignedIntegralType(type)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

std::string_view PrecisionString(PrecisionLevel p) {
  switch (p) {
    case PrecisionLevel::kDefault: return "default";
    case PrecisionLevel::kHigh: return "high";
    case PrecisionLevel::kHighest: return "highest";
  }
  return "?";
}

std::optional<PrecisionLevel> ParsePrecision(std::string_view s) {
  return FindName<PrecisionLevel>(s, {{"default", PrecisionLevel::kDefault},
                                      {"high", PrecisionLevel::kHigh},
                                      {"highest", PrecisionLevel::kHighest},
                                      {"DEFAULT", PrecisionLevel::kDefault},
                                      {"HIGH", PrecisionLevel::kHigh},
                                      {"HIGHEST", PrecisionLevel::kHighest}});
}

bool PrecisionConfig::IsDefault() const {
  for (PrecisionLevel p : operand_precision) {
    if (p != PrecisionLevel::kDefault) return false;
  }
  return algorithm.empty();
}

std::string_view FftTypeString(FftType t) {
  switch (t) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "?";
}

std::optional<FftType> ParseFftType(std::string_view s) {
  return FindName<FftType>(s, {{"FFT", FftType::kFft}, {"IFFT", FftType::kIfft},
                               {"RFFT", FftType::kRfft}, {"IRFFT", FftType::kIrfft}});
}

std::string_view RandomDistributionString(RandomDistribution d) {
  return d == RandomDistribution::kUniform ? "rng_uniform" : "rng_normal";
}

std::string_view RandomAlgorithmString(RandomAlgorithm a) {
  switch (a) {
    case RandomAlgorithm::kDefault: return "rng_default";
    case RandomAlgorithm::kThreeFry: return "rng_three_fry";
    case RandomAlgorithm::kPhilox: return "rng_philox";
  }
  return "?";
}

std::string_view FusionKindString(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "?";
}

std::optional<FusionKind> ParseFusionKind(std::string_view s) {
  return FindName<FusionKind>(s, {{"kLoop", FusionKind::kLoop}, {"kInput", FusionKind::kInput},
                                  {"kOutput", FusionKind::kOutput},
                                  {"kCustom", FusionKind::kCustom}});
}

std::string_view TriangularTransposeString(TriangularTranspose t) {
  switch (t) {
    case TriangularTranspose::kNoTranspose: return "NO_TRANSPOSE";
    case TriangularTranspose::kTranspose: return "TRANSPOSE";
    case TriangularTranspose::kAdjoint: return "ADJOINT";
  }
  return "?";
}

namespace {
std::string_view SubgroupTypeString(HloSharding::SubgroupType t) {
  switch (t) {
    case HloSharding::SubgroupType::kManual: return "manual";
    case HloSharding::SubgroupType::kReplicated: return "replicated";
    case HloSharding::SubgroupType::kMaximal: return "maximal";
    case HloSharding::SubgroupType::kUnreduced: return "unreduced";
  }
  return "?";
}

// XLA's AxisRef::ToString (mesh_and_axis.cc): "'x'", "'x':(2)4".
std::string AxisRefString(const NamedSharding& ns, const NamedSharding::AxisRef& axis) {
  std::string out = axis.index >= 0 && axis.index < static_cast<int64_t>(ns.mesh.size())
                        ? StrCat("'", ns.mesh[axis.index].name, "'")
                        : StrCat(axis.index);
  if (axis.sub_axis) StrAppend(&out, ":(", axis.sub_axis->first, ")", axis.sub_axis->second);
  return out;
}

std::string AxisRefListString(const NamedSharding& ns,
                              const std::vector<NamedSharding::AxisRef>& axes) {
  std::vector<std::string> parts;
  for (const NamedSharding::AxisRef& a : axes) parts.push_back(AxisRefString(ns, a));
  return StrCat("{", Join(parts, ", "), "}");
}

// XLA's Mesh::ToString: "mesh['x'=2,'y'=4]", with ", device_ids=(...)"
// unless the devices are the plain iota; "maximal_mesh[device_id=3]".
std::string MeshString(const NamedSharding& ns) {
  if (ns.form == NamedSharding::Form::kMaximal) {
    return StrCat("maximal_mesh[device_id=", ns.maximal_device, "]");
  }
  std::vector<std::string> axes;
  for (const NamedSharding::MeshAxis& a : ns.mesh) axes.push_back(StrCat("'", a.name, "'=", a.size));
  std::string out = StrCat("mesh[", Join(axes, ","), "]");
  if (!ns.device_ids.empty()) {
    StrAppend(&out, ", device_ids=(", Join(ns.device_ids, ","), ")");
  } else if (!ns.device_iota_reshape.empty()) {
    StrAppend(&out, ", device_ids=([", Join(ns.device_iota_reshape, ","), "]");
    if (ns.device_iota_reshape.size() > 1) StrAppend(&out, "T(", Join(ns.device_iota_perm, ","), ")");
    out += ')';
  }
  return out;
}

std::string_view ReductionOpString(NamedSharding::ReductionOp op) {
  switch (op) {
    case NamedSharding::ReductionOp::kSum: return "sum";
    case NamedSharding::ReductionOp::kMax: return "max";
    case NamedSharding::ReductionOp::kMin: return "min";
  }
  return "?";
}

// XLA's NamedSharding::ToString (named_sharding.cc). `form` says which of
// its spellings applies; the parser derives it from the axes the way XLA's
// IsReplicated/IsUnreduced/IsManual do.
std::string NamedShardingString(const NamedSharding& ns, const std::vector<OpMetadata>& metadata) {
  std::string meta;
  if (!metadata.empty()) {
    std::vector<std::string> m;
    for (const OpMetadata& md : metadata) m.push_back(md.ToString());
    meta = StrCat(", metadata={", Join(m, ", "), "}");
  }
  const bool op_written = ns.unreduced_op != NamedSharding::ReductionOp::kSum;
  switch (ns.form) {
    case NamedSharding::Form::kReplicated:
      return StrCat("{replicated", meta, "}");
    case NamedSharding::Form::kUnreduced:
      return StrCat("{unreduced", op_written ? StrCat("=", ReductionOpString(ns.unreduced_op)) : "",
                    meta, "}");
    case NamedSharding::Form::kManual:
      return StrCat("{", MeshString(ns), ", manual", meta, "}");
    case NamedSharding::Form::kMaximal:
      return StrCat("{", MeshString(ns), meta, "}");
    case NamedSharding::Form::kDims:
      break;
  }
  std::vector<std::string> dims;
  for (const NamedSharding::DimSharding& d : ns.dims) {
    std::vector<std::string> axes;
    for (const NamedSharding::AxisRef& a : d.axes) axes.push_back(AxisRefString(ns, a));
    if (!d.closed) axes.emplace_back("?");
    dims.push_back(StrCat("{", Join(axes, ", "), "}"));
  }
  std::string out = StrCat("{", MeshString(ns), ", [", Join(dims, ", "), "]");
  if (!ns.replicated_axes.empty()) {
    StrAppend(&out, ", replicated=", AxisRefListString(ns, ns.replicated_axes));
  }
  if (!ns.unreduced_axes.empty()) {
    StrAppend(&out, ", unreduced=", op_written ? ReductionOpString(ns.unreduced_op) : "",
              AxisRefListString(ns, ns.unreduced_axes));
  }
  if (!ns.manual_axes.empty()) {
    StrAppend(&out, ", manual=", AxisRefListString(ns, ns.manual_axes));
  }
  StrAppend(&out, meta, "}");
  return out;
}
}  // namespace

std::string HloSharding::ToString() const {
  // XLA's HloSharding::Print: one metadata prints bare, several as a list.
  std::string meta;
  if (metadata.size() == 1) {
    meta = StrCat(" metadata=", metadata[0].ToString());
  } else if (!metadata.empty()) {
    std::vector<std::string> m;
    for (const OpMetadata& md : metadata) m.push_back(md.ToString());
    meta = StrCat(" metadata={", Join(m, ", "), "}");
  }
  std::string group;
  if (shard_as) group = StrCat(" shard_as ", shard_group_id);
  if (shard_like) group = StrCat(" shard_like ", shard_group_id);
  switch (kind) {
    case Kind::kTuple: {
      // Every fifth element is numbered, as XLA prints it: "{..., /*index=5*/{...}}".
      std::string out = "{";
      for (size_t i = 0; i < tuple_elements.size(); ++i) {
        if (i > 0) out += i % 5 == 0 ? StrCat(", /*index=", i, "*/") : std::string(", ");
        out += tuple_elements[i].ToString();
      }
      return out + "}";
    }
    case Kind::kNamed:
      return named.has_value() ? NamedShardingString(*named, metadata) : "{}";
    case Kind::kReplicated: return StrCat("{replicated", group, meta, "}");
    case Kind::kManual: return StrCat("{manual", group, meta, "}");
    case Kind::kUnknown: return StrCat("{unknown", group, meta, "}");
    case Kind::kMaximal:
      return StrCat("{maximal device=", device, group, meta, "}");
    case Kind::kTiled: {
      std::string out = StrCat("{devices=[", Join(tile_dims, ","), "]");
      if (iota) {
        StrAppend(&out, "<=[", Join(iota_reshape_dims, ","), "]");
        if (!iota_transpose_perm.empty()) {
          StrAppend(&out, "T(", Join(iota_transpose_perm, ","), ")");
        }
      } else {
        StrAppend(&out, Join(devices, ","));
      }
      if (last_tile_dim_replicate) out += " last_tile_dim_replicate";
      if (!last_tile_dims.empty()) {
        std::vector<std::string> t;
        for (SubgroupType s : last_tile_dims) t.emplace_back(SubgroupTypeString(s));
        StrAppend(&out, " last_tile_dims={", Join(t, ", "), "}");
      }
      StrAppend(&out, group, meta, "}");
      return out;
    }
  }
  return "{}";
}

std::string FrontendAttributes::ToString() const {
  std::vector<std::string> parts;
  for (const auto& [k, v] : map) {
    // XLA prints structured values ("{...}") unquoted.
    if (IsSingleBalancedGroup(v)) {
      parts.push_back(StrCat(k, "=", v));
    } else {
      parts.push_back(StrCat(k, "=\"", CEscape(v), "\""));
    }
  }
  return StrCat("{", Join(parts, ","), "}");
}

std::string Statistics::ToString() const {
  std::string out = StrCat("{visualizing_index=", visualizing_index);
  for (const auto& [name, value] : stats) StrAppend(&out, ",", name, "=", value);
  return out + "}";
}

std::string_view CustomCallApiVersionString(CustomCallApiVersion v) {
  switch (v) {
    case CustomCallApiVersion::kUnspecified: return "API_VERSION_UNSPECIFIED";
    case CustomCallApiVersion::kOriginal: return "API_VERSION_ORIGINAL";
    case CustomCallApiVersion::kStatusReturning: return "API_VERSION_STATUS_RETURNING";
    case CustomCallApiVersion::kStatusReturningUnified:
      return "API_VERSION_STATUS_RETURNING_UNIFIED";
    case CustomCallApiVersion::kTypedFfi: return "API_VERSION_TYPED_FFI";
  }
  return "?";
}

std::optional<CustomCallApiVersion> ParseCustomCallApiVersion(std::string_view s) {
  return FindName<CustomCallApiVersion>(
      s, {{"API_VERSION_UNSPECIFIED", CustomCallApiVersion::kUnspecified},
          {"API_VERSION_ORIGINAL", CustomCallApiVersion::kOriginal},
          {"API_VERSION_STATUS_RETURNING", CustomCallApiVersion::kStatusReturning},
          {"API_VERSION_STATUS_RETURNING_UNIFIED",
           CustomCallApiVersion::kStatusReturningUnified},
          {"API_VERSION_TYPED_FFI", CustomCallApiVersion::kTypedFfi}});
}

std::string_view CustomCallScheduleString(CustomCallSchedule s) {
  switch (s) {
    case CustomCallSchedule::kNone: return "SCHEDULE_NONE";
    case CustomCallSchedule::kLatest: return "SCHEDULE_LATEST";
    case CustomCallSchedule::kEarliest: return "SCHEDULE_EARLIEST";
  }
  return "?";
}

std::optional<CustomCallSchedule> ParseCustomCallSchedule(std::string_view s) {
  return FindName<CustomCallSchedule>(s, {{"SCHEDULE_NONE", CustomCallSchedule::kNone},
                                          {"SCHEDULE_LATEST", CustomCallSchedule::kLatest},
                                          {"SCHEDULE_EARLIEST", CustomCallSchedule::kEarliest}});
}

std::string_view PaddingTypeString(PaddingType p) {
  switch (p) {
    case PaddingType::kInvalid: return "PADDING_INVALID";
    case PaddingType::kValid: return "PADDING_VALID";
    case PaddingType::kSame: return "PADDING_SAME";
  }
  return "?";
}

std::optional<PaddingType> ParsePaddingType(std::string_view s) {
  return FindName<PaddingType>(s, {{"PADDING_INVALID", PaddingType::kInvalid},
                                   {"PADDING_VALID", PaddingType::kValid},
                                   {"PADDING_SAME", PaddingType::kSame}});
}

}  // namespace passlab
