#include "core/ir/file_util.h"
#include "core/proto/hlo_proto_import.h"

#include <fstream>
#include <sstream>

#include "core/ir/str_util.h"

#ifdef PASSLAB_HAVE_PROTOBUF
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/escaping.h"
#include "core/eval/sharded_literal.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/proto/hlo_proto_internal.h"
#include "core/text/hlo_parser.h"
#endif

namespace passlab {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool LooksLikeHloProtoFile(const std::string& path) {
  if (path == "-") return false;
  if (EndsWith(path, ".pb") || EndsWith(path, ".pbtxt")) return true;
  std::ifstream in(path, std::ios::binary);
  char head[4096];
  in.read(head, sizeof(head));
  const std::streamsize n = in.gcount();
  // A binary message starts with field 1, length-delimited (byte 0x0a), and
  // its tags and lengths are control bytes that HLO text never holds.
  if (n < 2 || head[0] != '\x0a') return false;
  for (std::streamsize i = 1; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(head[i]);
    if (c < 0x09 || (c > 0x0d && c < 0x20)) return true;
  }
  return false;
}

#ifndef PASSLAB_HAVE_PROTOBUF

bool HloProtoSupported() { return false; }

absl::StatusOr<ImportedHlo> ImportHloProtoBytes(const std::string&, const std::string& name, bool) {
  return absl::UnimplementedError(
      StrCat(name, ": an HLO protobuf file, but passlab was built without protobuf (install libprotobuf-dev and "
             "protobuf-compiler, see scripts/install-deps.sh, and rebuild)"));
}

absl::StatusOr<ImportedHlo> ImportHloProtoFile(const std::string& path) {
  return ImportHloProtoBytes("", path, false);
}

absl::StatusOr<std::vector<Literal>> ReadHloSnapshotArguments(const std::string& path) {
  return ImportHloProtoBytes("", path, false).status();
}

#else  // PASSLAB_HAVE_PROTOBUF

bool HloProtoSupported() { return true; }

namespace {

using Instr = xla::HloInstructionProto;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <typename List>
std::string Ints(const List& list, const char* sep = ",") {
  std::string out;
  for (int i = 0; i < list.size(); ++i) StrAppend(&out, i == 0 ? "" : sep, list[i]);
  return out;
}

template <typename List>
std::string Braced(const List& list) {
  return StrCat("{", Ints(list), "}");
}

absl::StatusOr<PrimitiveType> TypeFromProto(xla::PrimitiveType t, const std::string& what) {
  const std::string& name = xla::PrimitiveType_Name(t);
  if (t == xla::TUPLE) return PrimitiveType::kTuple;
  if (t == xla::TOKEN) return PrimitiveType::kToken;
  if (t == xla::OPAQUE_TYPE) return PrimitiveType::kOpaque;
  std::optional<PrimitiveType> type = name.empty() ? std::nullopt : PrimitiveTypeFromName(Lower(name));
  if (!type.has_value() || t == xla::PRIMITIVE_TYPE_INVALID) {
    return absl::InvalidArgumentError(StrCat(what, ": element type ", static_cast<int>(t),
                                             name.empty() ? "" : StrCat(" (", name, ")"),
                                             " is not one passlab knows"));
  }
  return *type;
}

// XLA's text for a shape: "f32[2,3]{1,0}", "(s32[], token[])".
absl::StatusOr<std::string> ShapeText(const xla::ShapeProto& s, const std::string& what) {
  ASSIGN_OR_RETURN(PrimitiveType type, TypeFromProto(s.element_type(), what));
  if (type == PrimitiveType::kTuple) {
    std::string out = "(";
    for (int i = 0; i < s.tuple_shapes_size(); ++i) {
      ASSIGN_OR_RETURN(std::string e, ShapeText(s.tuple_shapes(i), what));
      StrAppend(&out, i == 0 ? "" : ", ", e);
    }
    return StrCat(out, ")");
  }
  if (type == PrimitiveType::kToken) return std::string("token[]");
  if (type == PrimitiveType::kOpaque) return std::string("opaque[]");
  std::string out = StrCat(PrimitiveTypeName(type), "[");
  for (int i = 0; i < s.dimensions_size(); ++i) {
    if (s.dimensions(i) < 0) {
      return absl::InvalidArgumentError(StrCat(what, ": negative dimension ", s.dimensions(i)));
    }
    const bool dynamic = i < s.is_dynamic_dimension_size() && s.is_dynamic_dimension(i);
    StrAppend(&out, i == 0 ? "" : ",", dynamic ? "<=" : "", s.dimensions(i));
  }
  StrAppend(&out, "]");
  if (s.has_layout() && s.layout().minor_to_major_size() == s.dimensions_size() && s.dimensions_size() > 0) {
    StrAppend(&out, "{", Ints(s.layout().minor_to_major()), "}");
  }
  return out;
}

std::string DimLabels(const xla::ConvolutionDimensionNumbers& d) {
  auto labels = [](int64_t rank, int64_t a, char ca, int64_t b, char cb, const auto& spatial) {
    std::string s(static_cast<size_t>(std::max<int64_t>(rank, 0)), '?');
    auto put = [&](int64_t dim, char c) {
      if (dim >= 0 && dim < rank) s[static_cast<size_t>(dim)] = c;
    };
    put(a, ca);
    put(b, cb);
    for (int i = 0; i < spatial.size(); ++i) put(spatial[i], static_cast<char>(i < 10 ? '0' + i : 'a' + i - 10));
    return s;
  };
  const int64_t rank = d.input_spatial_dimensions_size() + 2;
  return StrCat(labels(rank, d.input_batch_dimension(), 'b', d.input_feature_dimension(), 'f',
                       d.input_spatial_dimensions()),
                "_",
                labels(rank, d.kernel_input_feature_dimension(), 'i', d.kernel_output_feature_dimension(), 'o',
                       d.kernel_spatial_dimensions()),
                "->",
                labels(rank, d.output_batch_dimension(), 'b', d.output_feature_dimension(), 'f',
                       d.output_spatial_dimensions()));
}

std::string WindowText(const xla::Window& w) {
  std::vector<std::string> size, stride, pad, lhs, rhs, rev;
  bool any_stride = false, any_pad = false, any_lhs = false, any_rhs = false, any_rev = false;
  for (const xla::WindowDimension& d : w.dimensions()) {
    size.push_back(StrCat(d.size()));
    const int64_t st = d.stride() == 0 ? 1 : d.stride();
    const int64_t bd = d.base_dilation() == 0 ? 1 : d.base_dilation();
    const int64_t wd = d.window_dilation() == 0 ? 1 : d.window_dilation();
    stride.push_back(StrCat(st));
    pad.push_back(StrCat(d.padding_low(), "_", d.padding_high()));
    lhs.push_back(StrCat(bd));
    rhs.push_back(StrCat(wd));
    rev.push_back(d.window_reversal() ? "1" : "0");
    any_stride |= st != 1;
    any_pad |= d.padding_low() != 0 || d.padding_high() != 0;
    any_lhs |= bd != 1;
    any_rhs |= wd != 1;
    any_rev |= d.window_reversal();
  }
  std::string out = StrCat("{size=", Join(size, "x"));
  if (any_stride) StrAppend(&out, " stride=", Join(stride, "x"));
  if (any_pad) StrAppend(&out, " pad=", Join(pad, "x"));
  if (any_lhs) StrAppend(&out, " lhs_dilate=", Join(lhs, "x"));
  if (any_rhs) StrAppend(&out, " rhs_dilate=", Join(rhs, "x"));
  if (any_rev) StrAppend(&out, " rhs_reversal=", Join(rev, "x"));
  return StrCat(out, "}");
}

std::string ShardingText(const xla::OpSharding& s) {
  switch (s.type()) {
    case xla::OpSharding::REPLICATED: return "{replicated}";
    case xla::OpSharding::MANUAL: return "{manual}";
    case xla::OpSharding::UNREDUCED: return "{unreduced}";
    case xla::OpSharding::MAXIMAL:
      return StrCat("{maximal device=", s.tile_assignment_devices_size() > 0 ? s.tile_assignment_devices(0) : 0, "}");
    case xla::OpSharding::TUPLE: {
      std::vector<std::string> parts;
      for (const xla::OpSharding& e : s.tuple_shardings()) {
        std::string t = ShardingText(e);
        parts.push_back(t.substr(1, t.size() - 2));
      }
      return StrCat("{", Join(parts, ", "), "}");
    }
    case xla::OpSharding::OTHER: {
      std::string out = StrCat("{devices=[", Ints(s.tile_assignment_dimensions()), "]");
      if (s.iota_reshape_dims_size() > 0) {
        StrAppend(&out, "<=[", Ints(s.iota_reshape_dims()), "]");
        if (s.iota_transpose_perm_size() > 0) StrAppend(&out, "T(", Ints(s.iota_transpose_perm()), ")");
      } else {
        StrAppend(&out, Ints(s.tile_assignment_devices()));
      }
      if (s.replicate_on_last_tile_dim()) {
        StrAppend(&out, " last_tile_dim_replicate");
      } else if (s.last_tile_dims_size() > 0) {
        std::vector<std::string> dims;
        for (int t : s.last_tile_dims()) {
          dims.push_back(t == xla::OpSharding::MANUAL ? "manual" : t == xla::OpSharding::REPLICATED ? "replicated"
                                                                                                      : "unreduced");
        }
        StrAppend(&out, " last_tile_dims={", Join(dims, ", "), "}");
      }
      return StrCat(out, "}");
    }
    default: return "";
  }
}

std::string ReplicaGroupsText(const Instr& in) {
  auto lists = [](const auto& groups) {
    std::vector<std::string> g;
    for (const xla::ReplicaGroup& r : groups) g.push_back(Braced(r.replica_ids()));
    return StrCat("{", Join(g, ","), "}");
  };
  if (in.has_iota_collective_device_list()) {
    const xla::IotaReplicaGroupListProto& l = in.iota_collective_device_list();
    std::string out = StrCat("[", l.num_replica_groups(), ",", l.num_devices_per_group(), "]<=[",
                             l.iota_reshape_dims_size() > 0 ? Ints(l.iota_reshape_dims())
                                                            : StrCat(l.num_replica_groups() * l.num_devices_per_group()),
                             "]");
    if (l.iota_transpose_perm_size() > 0) StrAppend(&out, "T(", Ints(l.iota_transpose_perm()), ")");
    return out;
  }
  if (in.has_collective_device_list()) return lists(in.collective_device_list().replica_groups());
  return lists(in.replica_groups());
}

bool IsCollective(const std::string& op) {
  static const std::set<std::string> kOps = {
      "all-reduce",     "all-reduce-start", "all-gather",     "all-gather-start", "reduce-scatter",
      "all-to-all",     "ragged-all-to-all", "collective-broadcast", "collective-permute",
      "collective-permute-start"};
  return kOps.count(op) > 0;
}

std::string FloatText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string Quoted(const std::string& s) { return StrCat("\"", absl::CEscape(s), "\""); }

// The attributes of `in` in XLA's text syntax; `comp` maps computation ids
// to names.
absl::StatusOr<std::vector<std::string>> Attributes(const Instr& in, const std::map<int64_t, std::string>& comp,
                                                    const std::string& what) {
  const std::string& op = in.opcode();
  std::vector<std::string> a;
  std::vector<std::string> called;
  for (int64_t id : in.called_computation_ids()) {
    auto it = comp.find(id);
    if (it == comp.end()) {
      return absl::InvalidArgumentError(StrCat(what, ": calls computation id ", id, ", which the module lacks"));
    }
    called.push_back(StrCat("%", it->second));
  }
  // Called computations.
  if (!called.empty()) {
    if (op == "fusion" || op == "async-start") {
      a.push_back(StrCat("calls=", called[0]));
    } else if (op == "while" && called.size() == 2) {
      a.push_back(StrCat("condition=", called[0]));
      a.push_back(StrCat("body=", called[1]));
    } else if (op == "conditional") {
      a.push_back(StrCat("branch_computations={", Join(called, ", "), "}"));
    } else if (op == "select-and-scatter" && called.size() == 2) {
      a.push_back(StrCat("select=", called[0]));
      a.push_back(StrCat("scatter=", called[1]));
    } else if (op == "async-done" || op == "async-update") {
      // The text form names the computation on the start only.
    } else if (called.size() == 1) {
      a.push_back(StrCat("to_apply=", called[0]));
    } else {
      a.push_back(StrCat("called_computations={", Join(called, ", "), "}"));
    }
  }
  if (op == "fusion") a.push_back(StrCat("kind=", in.fusion_kind().empty() ? "kLoop" : in.fusion_kind()));
  if (op == "get-tuple-element") a.push_back(StrCat("index=", in.tuple_index()));
  static const std::set<std::string> kDimensionOps = {
      "broadcast", "concatenate", "reduce", "reverse", "transpose", "map", "sort", "all-gather",
      "all-gather-start", "reduce-scatter", "get-dimension-size", "set-dimension-size"};
  if (kDimensionOps.count(op) > 0 || (op == "all-to-all" && in.dimensions_size() > 0)) {
    a.push_back(StrCat("dimensions=", Braced(in.dimensions())));
  }
  if (op == "iota") a.push_back(StrCat("iota_dimension=", in.dimensions_size() > 0 ? in.dimensions(0) : 0));
  if (op == "sort" && in.is_stable()) a.push_back("is_stable=true");
  if (op == "reduce-precision") {
    a.push_back(StrCat("exponent_bits=", in.exponent_bits()));
    a.push_back(StrCat("mantissa_bits=", in.mantissa_bits()));
  }
  if (op == "slice") {
    std::vector<std::string> s;
    for (const auto& d : in.slice_dimensions()) {
      s.push_back(StrCat("[", d.start(), ":", d.limit(), d.stride() > 1 ? StrCat(":", d.stride()) : "", "]"));
    }
    a.push_back(StrCat("slice={", Join(s, ", "), "}"));
  }
  if (op == "dynamic-slice") a.push_back(StrCat("dynamic_slice_sizes=", Braced(in.dynamic_slice_sizes())));
  if (op == "pad") {
    std::vector<std::string> p;
    for (const auto& d : in.padding_config().dimensions()) {
      p.push_back(StrCat(d.edge_padding_low(), "_", d.edge_padding_high(),
                         d.interior_padding() != 0 ? StrCat("_", d.interior_padding()) : ""));
    }
    a.push_back(StrCat("padding=", p.empty() ? "0_0" : Join(p, "x")));
  }
  if (in.has_window() && in.window().dimensions_size() > 0) a.push_back(StrCat("window=", WindowText(in.window())));
  if (op == "convolution") {
    a.push_back(StrCat("dim_labels=", DimLabels(in.convolution_dimension_numbers())));
    if (in.feature_group_count() > 1) a.push_back(StrCat("feature_group_count=", in.feature_group_count()));
    if (in.batch_group_count() > 1) a.push_back(StrCat("batch_group_count=", in.batch_group_count()));
  }
  if (op == "dot") {
    const xla::DotDimensionNumbers& d = in.dot_dimension_numbers();
    if (d.lhs_batch_dimensions_size() > 0) a.push_back(StrCat("lhs_batch_dims=", Braced(d.lhs_batch_dimensions())));
    if (d.lhs_contracting_dimensions_size() > 0) {
      a.push_back(StrCat("lhs_contracting_dims=", Braced(d.lhs_contracting_dimensions())));
    }
    if (d.rhs_batch_dimensions_size() > 0) a.push_back(StrCat("rhs_batch_dims=", Braced(d.rhs_batch_dimensions())));
    if (d.rhs_contracting_dimensions_size() > 0) {
      a.push_back(StrCat("rhs_contracting_dims=", Braced(d.rhs_contracting_dimensions())));
    }
  }
  if ((op == "dot" || op == "convolution" || op == "custom-call" || op == "ragged-dot") && in.has_precision_config()) {
    // As XLA prints them: the operand precisions when one is not DEFAULT,
    // the algorithm when set (xla/hlo/ir/hlo_instruction.cc,
    // PrecisionConfigToString; AlgorithmToString in xla/primitive_util).
    const xla::PrecisionConfig& pc = in.precision_config();
    std::vector<std::string> levels;
    bool any = false;
    for (int v : pc.operand_precision()) {
      levels.push_back(v == xla::PrecisionConfig::HIGHEST ? "highest" : v == xla::PrecisionConfig::HIGH ? "high" : "default");
      any |= v != xla::PrecisionConfig::DEFAULT;
    }
    if (any) a.push_back(StrCat("operand_precision={", Join(levels, ","), "}"));
    static const char* kAlgorithms[] = {"",
                                        "dot_any_f8_any_f8_f32",
                                        "dot_any_f8_any_f8_f32_fast_accum",
                                        "dot_f16_f16_f16",
                                        "dot_f16_f16_f32",
                                        "dot_bf16_bf16_bf16",
                                        "dot_bf16_bf16_f32",
                                        "dot_bf16_bf16_f32_x3",
                                        "dot_bf16_bf16_f32_x6",
                                        "dot_tf32_tf32_f32",
                                        "dot_tf32_tf32_f32_x3",
                                        "dot_f32_f32_f32",
                                        "dot_f64_f64_f64",
                                        "dot_bf16_bf16_f32_x9"};
    int alg = pc.algorithm();
    if (alg < 0 || alg >= static_cast<int>(std::size(kAlgorithms))) {
      return absl::InvalidArgumentError(StrCat("instruction ", in.name(), ": unknown dot algorithm ", alg,
                                               " in its precision_config"));
    }
    if (alg != 0) a.push_back(StrCat("algorithm=", kAlgorithms[alg]));
  }
  if (op == "gather") {
    const xla::GatherDimensionNumbers& d = in.gather_dimension_numbers();
    a.push_back(StrCat("offset_dims=", Braced(d.offset_dims())));
    a.push_back(StrCat("collapsed_slice_dims=", Braced(d.collapsed_slice_dims())));
    a.push_back(StrCat("start_index_map=", Braced(d.start_index_map())));
    if (d.operand_batching_dims_size() > 0) {
      a.push_back(StrCat("operand_batching_dims=", Braced(d.operand_batching_dims())));
      a.push_back(StrCat("start_indices_batching_dims=", Braced(d.start_indices_batching_dims())));
    }
    a.push_back(StrCat("index_vector_dim=", d.index_vector_dim()));
    a.push_back(StrCat("slice_sizes=", Braced(in.gather_slice_sizes())));
  }
  if (op == "scatter") {
    const xla::ScatterDimensionNumbers& d = in.scatter_dimension_numbers();
    a.push_back(StrCat("update_window_dims=", Braced(d.update_window_dims())));
    a.push_back(StrCat("inserted_window_dims=", Braced(d.inserted_window_dims())));
    a.push_back(StrCat("scatter_dims_to_operand_dims=", Braced(d.scatter_dims_to_operand_dims())));
    if (d.input_batching_dims_size() > 0) {
      a.push_back(StrCat("input_batching_dims=", Braced(d.input_batching_dims())));
      a.push_back(StrCat("scatter_indices_batching_dims=", Braced(d.scatter_indices_batching_dims())));
    }
    a.push_back(StrCat("index_vector_dim=", d.index_vector_dim()));
  }
  if ((op == "gather" || op == "scatter") && in.indices_are_sorted()) a.push_back("indices_are_sorted=true");
  if (op == "scatter" && in.unique_indices()) a.push_back("unique_indices=true");
  if (op == "compare") {
    a.push_back(StrCat("direction=", in.comparison_direction()));
    if (!in.comparison_type().empty()) a.push_back(StrCat("type=", in.comparison_type()));
  }
  if (op == "custom-call") {
    a.push_back(StrCat("custom_call_target=", Quoted(in.custom_call_target())));
    if (in.custom_call_has_side_effect()) a.push_back("custom_call_has_side_effect=true");
    if (in.custom_call_api_version() > xla::API_VERSION_ORIGINAL) {
      a.push_back(StrCat("api_version=", xla::CustomCallApiVersion_Name(in.custom_call_api_version())));
    }
  }
  if (!in.backend_config().empty()) a.push_back(StrCat("backend_config=", Quoted(in.backend_config())));
  if (IsCollective(op) || ((op == "send" || op == "recv") && in.channel_id() > 0)) {
    if (op != "collective-permute" && op != "collective-permute-start" && op != "send" && op != "recv") {
      a.push_back(StrCat("replica_groups=", ReplicaGroupsText(in)));
    }
    if (in.channel_id() > 0) a.push_back(StrCat("channel_id=", in.channel_id()));
    if (in.use_global_device_ids()) a.push_back("use_global_device_ids=true");
  }
  if (op == "collective-permute" || op == "collective-permute-start") {
    std::vector<std::string> pairs;
    for (const auto& p : in.source_target_pairs()) pairs.push_back(StrCat("{", p.source(), ",", p.target(), "}"));
    a.push_back(StrCat("source_target_pairs={", Join(pairs, ","), "}"));
  }
  if ((op == "send" || op == "recv" || op == "send-done" || op == "recv-done") && in.is_host_transfer()) {
    a.push_back("is_host_transfer=true");
  }
  if (op == "rng") {
    a.push_back(StrCat("distribution=", Lower(xla::RandomDistribution_Name(in.distribution()))));
  }
  if (op == "rng-bit-generator") a.push_back(StrCat("algorithm=", Lower(xla::RandomAlgorithm_Name(in.rng_algorithm()))));
  if (op == "rng-get-and-update-state") a.push_back(StrCat("delta=", in.delta()));
  if (op == "fft") {
    a.push_back(StrCat("fft_type=", xla::FftType_Name(in.fft_type())));
    a.push_back(StrCat("fft_length=", Braced(in.fft_length())));
  }
  if (op == "triangular-solve") {
    const xla::TriangularSolveOptions& t = in.triangular_solve_options();
    if (t.left_side()) a.push_back("left_side=true");
    if (t.lower()) a.push_back("lower=true");
    if (t.unit_diagonal()) a.push_back("unit_diagonal=true");
    a.push_back(StrCat("transpose_a=", xla::TriangularSolveOptions::Transpose_Name(t.transpose_a())));
  }
  if (op == "cholesky" && in.cholesky_options().lower()) a.push_back("lower=true");
  if (op == "topk") {
    a.push_back(StrCat("k=", in.k()));
    a.push_back(StrCat("largest=", in.largest() ? "true" : "false"));
  }
  if (op.rfind("batch-norm-", 0) == 0) {
    a.push_back(StrCat("epsilon=", FloatText(in.epsilon())));
    a.push_back(StrCat("feature_index=", in.feature_index()));
  }
  if (in.has_sharding()) {
    std::string s = ShardingText(in.sharding());
    if (!s.empty()) a.push_back(StrCat("sharding=", s));
  }
  if (!in.async_execution_thread().empty() && in.async_execution_thread() != "main") {
    a.push_back(StrCat("async_execution_thread=", Quoted(in.async_execution_thread())));
  }
  return a;
}

}  // namespace

absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto, const std::string& what) {
  ASSIGN_OR_RETURN(std::string text, ShapeText(proto, what));
  absl::StatusOr<Shape> shape = ParseShape(text);
  if (!shape.ok()) return absl::InvalidArgumentError(StrCat(what, ": shape ", text, ": ", shape.status().message()));
  return shape;
}

absl::StatusOr<std::string> HloModuleProtoToText(const xla::HloModuleProto& proto) {
  const std::string module_name = proto.name().empty() ? "imported" : proto.name();
  std::map<int64_t, std::string> comp_names;
  for (const xla::HloComputationProto& c : proto.computations()) comp_names[c.id()] = c.name();
  std::string out = StrCat("HloModule ", module_name, "\n");
  bool found_entry = false;
  for (const xla::HloComputationProto& c : proto.computations()) {
    const bool entry = proto.entry_computation_id() != 0 ? c.id() == proto.entry_computation_id()
                                                          : c.name() == proto.entry_computation_name();
    found_entry |= entry;
    std::map<int64_t, std::string> names;
    for (const Instr& in : c.instructions()) names[in.id()] = in.name();
    StrAppend(&out, "\n", entry ? "ENTRY " : "", "%", c.name(), " {\n");
    if (c.instructions_size() == 0) {
      return absl::InvalidArgumentError(StrCat("computation '", c.name(), "' has no instructions"));
    }
    for (const Instr& in : c.instructions()) {
      const std::string what = StrCat("computation '", c.name(), "', instruction '", in.name(), "'");
      if (in.name().empty() || in.opcode().empty()) {
        return absl::InvalidArgumentError(StrCat("computation '", c.name(), "': an instruction (id ", in.id(),
                                                 ") has no name or opcode"));
      }
      ASSIGN_OR_RETURN(std::string shape, ShapeText(in.shape(), what));
      std::vector<std::string> operands;
      for (int64_t id : in.operand_ids()) {
        auto it = names.find(id);
        if (it == names.end()) {
          return absl::InvalidArgumentError(StrCat(what, ": operand id ", id, " is not in the computation"));
        }
        operands.push_back(StrCat("%", it->second));
      }
      std::string args = Join(operands, ", ");
      if (in.opcode() == "parameter") args = StrCat(in.parameter_number());
      if (in.opcode() == "constant") {
        // The values come from the literal after parsing.
        const xla::PrimitiveType t = in.shape().element_type();
        args = in.shape().dimensions_size() > 0 ? "{...}"
               : t == xla::PRED                 ? "false"
               : t == xla::C64 || t == xla::C128 ? "(0, 0)"
                                                 : "0";
      }
      ASSIGN_OR_RETURN(std::vector<std::string> attrs, Attributes(in, comp_names, what));
      std::vector<std::string> preds;
      for (int64_t id : in.control_predecessor_ids()) {
        auto it = names.find(id);
        if (it != names.end()) preds.push_back(StrCat("%", it->second));
      }
      if (!preds.empty()) attrs.push_back(StrCat("control-predecessors={", Join(preds, ", "), "}"));
      StrAppend(&out, "  ", in.id() == c.root_id() ? "ROOT " : "", "%", in.name(), " = ", shape, " ", in.opcode(),
                "(", args, ")", attrs.empty() ? "" : StrCat(", ", Join(attrs, ", ")), "\n");
    }
    StrAppend(&out, "}\n");
  }
  if (!found_entry) {
    return absl::InvalidArgumentError(StrCat("module '", module_name, "': no computation is the entry (id ",
                                             proto.entry_computation_id(), ", name '",
                                             proto.entry_computation_name(), "')"));
  }
  return out;
}

namespace {

// Row-major position of each element stored at physical position p, for
// an array with the given dims and minor_to_major.
int64_t LogicalIndex(int64_t physical, const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t d : minor_to_major) {
    index[d] = physical % dims[d];
    physical /= dims[d];
  }
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i) linear = linear * dims[i] + index[i];
  return linear;
}

}  // namespace

absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto, const std::string& what) {
  ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(proto.shape(), what));
  if (shape.IsTuple()) {
    if (proto.tuple_literals_size() != static_cast<int>(shape.tuple_shapes().size())) {
      return absl::InvalidArgumentError(StrCat(what, ": a tuple of ", shape.tuple_shapes().size(),
                                               " elements with ", proto.tuple_literals_size(), " literals"));
    }
    std::vector<Literal> elements;
    for (int i = 0; i < proto.tuple_literals_size(); ++i) {
      ASSIGN_OR_RETURN(Literal e, LiteralFromProto(proto.tuple_literals(i), StrCat(what, " element ", i)));
      elements.push_back(std::move(e));
    }
    return Literal::Tuple(std::move(elements));
  }
  Literal lit(shape);
  if (!shape.IsArray()) return lit;
  const int64_t n = shape.element_count();
  std::vector<int64_t> m2m;
  if (proto.shape().has_layout() && proto.shape().layout().minor_to_major_size() == proto.shape().dimensions_size()) {
    m2m.assign(proto.shape().layout().minor_to_major().begin(), proto.shape().layout().minor_to_major().end());
  } else {
    for (int64_t d = static_cast<int64_t>(shape.dimensions().size()) - 1; d >= 0; --d) m2m.push_back(d);
  }
  auto at = [&](int64_t p) { return LogicalIndex(p, shape.dimensions(), m2m); };
  auto count_error = [&](int64_t have) {
    return absl::InvalidArgumentError(StrCat(what, ": ", shape.ToString(false), " needs ", n, " values but the literal holds ",
                                             have));
  };
  auto from_bytes = [&](const std::string& bytes, int width, bool sign_extend) -> absl::Status {
    if (static_cast<int64_t>(bytes.size()) != n * width) return count_error(static_cast<int64_t>(bytes.size()) / width);
    for (int64_t p = 0; p < n; ++p) {
      uint64_t bits = 0;
      std::memcpy(&bits, bytes.data() + p * width, width);
      if (sign_extend) {
        lit.SetInt(at(p), static_cast<int8_t>(bits));
      } else {
        lit.SetBits(at(p), bits);
      }
    }
    return absl::OkStatus();
  };
  auto from_list = [&](const auto& list, auto set) -> absl::Status {
    if (list.size() != n) return count_error(list.size());
    for (int64_t p = 0; p < n; ++p) set(at(p), list[static_cast<int>(p)]);
    return absl::OkStatus();
  };
  absl::Status s;
  switch (shape.element_type()) {
    case PrimitiveType::kPred:
      s = from_list(proto.preds(), [&](int64_t i, bool v) { lit.SetInt(i, v ? 1 : 0); });
      break;
    case PrimitiveType::kS8: s = from_bytes(proto.s8s(), 1, true); break;
    case PrimitiveType::kS4: s = from_bytes(proto.s4s(), 1, true); break;
    case PrimitiveType::kS2: s = from_bytes(proto.s2s(), 1, true); break;
    case PrimitiveType::kS1: s = from_bytes(proto.s1s(), 1, true); break;
    case PrimitiveType::kU8: s = from_bytes(proto.u8s(), 1, false); break;
    case PrimitiveType::kU4: s = from_bytes(proto.u4s(), 1, false); break;
    case PrimitiveType::kU2: s = from_bytes(proto.u2s(), 1, false); break;
    case PrimitiveType::kU1: s = from_bytes(proto.u1s(), 1, false); break;
    case PrimitiveType::kS16: s = from_bytes(proto.s16s(), 2, false); break;
    case PrimitiveType::kU16: s = from_bytes(proto.u16s(), 2, false); break;
    case PrimitiveType::kF16: s = from_bytes(proto.f16s(), 2, false); break;
    case PrimitiveType::kBF16: s = from_bytes(proto.bf16s(), 2, false); break;
    case PrimitiveType::kF8E5M2: s = from_bytes(proto.f8e5m2s(), 1, false); break;
    case PrimitiveType::kF8E4M3: s = from_bytes(proto.f8e4m3s(), 1, false); break;
    case PrimitiveType::kF8E4M3FN: s = from_bytes(proto.f8e4m3fns(), 1, false); break;
    case PrimitiveType::kF8E4M3B11FNUZ: s = from_bytes(proto.f8e4m3b11fnuzs(), 1, false); break;
    case PrimitiveType::kF8E5M2FNUZ: s = from_bytes(proto.f8e5m2fnuzs(), 1, false); break;
    case PrimitiveType::kF8E4M3FNUZ: s = from_bytes(proto.f8e4m3fnuzs(), 1, false); break;
    case PrimitiveType::kF8E3M4: s = from_bytes(proto.f8e3m4s(), 1, false); break;
    case PrimitiveType::kF8E8M0FNU: s = from_bytes(proto.f8e8m0fnus(), 1, false); break;
    case PrimitiveType::kF4E2M1FN: s = from_bytes(proto.f4e2m1fns(), 1, false); break;
    case PrimitiveType::kS32:
      s = from_list(proto.s32s(), [&](int64_t i, int32_t v) { lit.SetInt(i, v); });
      break;
    case PrimitiveType::kS64:
      s = from_list(proto.s64s(), [&](int64_t i, int64_t v) { lit.SetInt(i, v); });
      break;
    case PrimitiveType::kU32:
      s = from_list(proto.u32s(), [&](int64_t i, uint32_t v) { lit.SetBits(i, v); });
      break;
    case PrimitiveType::kU64:
      s = from_list(proto.u64s(), [&](int64_t i, uint64_t v) { lit.SetBits(i, v); });
      break;
    case PrimitiveType::kF32:
      s = from_list(proto.f32s(), [&](int64_t i, float v) {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        lit.SetBits(i, bits);
      });
      break;
    case PrimitiveType::kF64:
      s = from_list(proto.f64s(), [&](int64_t i, double v) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        lit.SetBits(i, bits);
      });
      break;
    case PrimitiveType::kC64:
      if (proto.c64s_size() != 2 * n) return count_error(proto.c64s_size() / 2);
      for (int64_t p = 0; p < n; ++p) {
        lit.SetComplex(at(p), {proto.c64s(static_cast<int>(2 * p)), proto.c64s(static_cast<int>(2 * p + 1))});
      }
      break;
    case PrimitiveType::kC128:
      if (proto.c128s_size() != 2 * n) return count_error(proto.c128s_size() / 2);
      for (int64_t p = 0; p < n; ++p) {
        lit.SetComplex(at(p), {proto.c128s(static_cast<int>(2 * p)), proto.c128s(static_cast<int>(2 * p + 1))});
      }
      break;
    default:
      return absl::UnimplementedError(StrCat(what, ": literals of type ", PrimitiveTypeName(shape.element_type()),
                                             " are not read"));
  }
  if (!s.ok()) return s;
  return lit;
}

namespace {

// The module of `proto`, constants filled in from its literals.
absl::StatusOr<std::unique_ptr<HloModule>> ModuleFromProto(const xla::HloModuleProto& proto, const std::string& name,
                                                           std::string& text) {
  absl::StatusOr<std::string> t = HloModuleProtoToText(proto);
  if (!t.ok()) return absl::InvalidArgumentError(StrCat(name, ": ", t.status().message()));
  text = *t;
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, StrCat(name, " (as HLO text)"));
  if (!module.ok()) {
    return absl::InvalidArgumentError(StrCat(name, ": the imported module does not parse: ",
                                             module.status().message()));
  }
  std::map<std::string, const xla::LiteralProto*> literals;
  for (const xla::HloComputationProto& c : proto.computations()) {
    for (const Instr& in : c.instructions()) {
      if (in.opcode() == "constant") literals[in.name()] = &in.literal();
    }
  }
  for (HloComputation* c : (*module)->computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kConstant) continue;
      auto it = literals.find(std::string(inst->name()));
      if (it == literals.end()) continue;
      ASSIGN_OR_RETURN(Literal value, LiteralFromProto(*it->second, StrCat(name, ": constant '", inst->name(), "'")));
      if (!value.shape().Compatible(inst->shape())) {
        return absl::InvalidArgumentError(StrCat(name, ": constant '", inst->name(), "' is ",
                                                 inst->shape().ToString(false), " but its literal is ",
                                                 value.shape().ToString(false)));
      }
      value.set_shape_layout(inst->shape());
      inst->set_literal(std::move(value));
    }
  }
  return module;
}

bool HoldsModule(const xla::HloModuleProto& m) {
  if (m.computations_size() == 0) return false;
  for (const xla::HloComputationProto& c : m.computations()) {
    if (c.name().empty() || c.instructions_size() == 0) return false;
    for (const Instr& in : c.instructions()) {
      if (in.name().empty() || in.opcode().empty()) return false;
    }
  }
  return true;
}

}  // namespace

namespace {

// Text format: XLA's fields this schema leaves out are skipped without the
// warnings protobuf would log for each; a failed parse is reported by the
// caller, which tries the next message kind.
class QuietErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

bool ParseMessage(const std::string& bytes, bool text_format, google::protobuf::Message& msg) {
  if (!text_format) return msg.ParseFromString(bytes);
  QuietErrorCollector quiet;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&quiet);
  parser.AllowUnknownField(true);
  parser.AllowUnknownExtension(true);
  return parser.ParseFromString(bytes, &msg);
}

absl::StatusOr<std::vector<Literal>> ReadLiterals(const google::protobuf::RepeatedPtrField<xla::LiteralProto>& protos,
                                                  const std::string& what) {
  std::vector<Literal> out;
  for (int i = 0; i < protos.size(); ++i) {
    ASSIGN_OR_RETURN(Literal a, LiteralFromProto(protos[i], StrCat(what, " ", i)));
    out.push_back(std::move(a));
  }
  return out;
}

// The full arguments from each partition's: parameter i put together from
// every partition's part under its sharding (a parameter without one is
// replicated: partition 0's value).
absl::StatusOr<std::vector<Literal>> UnshardArguments(const HloModule& module,
                                                      const std::vector<std::vector<Literal>>& partitions,
                                                      const std::string& name) {
  const HloComputation& entry = *module.entry_computation();
  std::vector<Literal> out;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    std::vector<Literal> parts;
    for (size_t d = 0; d < partitions.size(); ++d) {
      if (static_cast<int64_t>(partitions[d].size()) != entry.num_parameters()) {
        return absl::InvalidArgumentError(StrCat(name, ": partition ", d, " has ", partitions[d].size(),
                                                 " arguments but the entry computation takes ",
                                                 entry.num_parameters()));
      }
      parts.push_back(partitions[d][i]);
    }
    const HloInstruction* p = entry.parameter_instruction(i);
    if (!p->has_sharding()) {
      out.push_back(parts[0]);
      continue;
    }
    absl::StatusOr<Literal> full = UnshardLiteral(parts, p->sharding(), p->shape());
    if (!full.ok()) {
      return absl::InvalidArgumentError(StrCat(name, ": parameter ", i, " from the partitions' arguments: ",
                                               full.status().message()));
    }
    out.push_back(std::move(*full));
  }
  return out;
}

}  // namespace

absl::StatusOr<ImportedHlo> ImportHloProtoBytes(const std::string& bytes, const std::string& name, bool text_format) {
  xla::HloSnapshot snapshot;
  xla::HloUnoptimizedSnapshot unoptimized;
  xla::HloProto hlo;
  xla::HloModuleProto module_proto;
  ImportedHlo out;
  const xla::HloModuleProto* m = nullptr;
  // The messages share field numbers, so a message of one kind may parse as
  // another: each is accepted only when it holds a whole module (and the
  // unoptimized snapshot only with its partitions).
  if (ParseMessage(bytes, text_format, snapshot) && snapshot.has_hlo() && HoldsModule(snapshot.hlo().hlo_module())) {
    m = &snapshot.hlo().hlo_module();
    out.message = "HloSnapshot";
  } else if (ParseMessage(bytes, text_format, unoptimized) && unoptimized.partitions_size() > 0 &&
             HoldsModule(unoptimized.hlo_module())) {
    m = &unoptimized.hlo_module();
    out.message = "HloUnoptimizedSnapshot";
  } else if (ParseMessage(bytes, text_format, hlo) && HoldsModule(hlo.hlo_module())) {
    m = &hlo.hlo_module();
    out.message = "HloProto";
  } else if (ParseMessage(bytes, text_format, module_proto) && HoldsModule(module_proto)) {
    m = &module_proto;
    out.message = "HloModuleProto";
  } else if (ParseMessage(bytes, text_format, snapshot) && snapshot.arguments_size() > 0 && !snapshot.has_hlo()) {
    return absl::InvalidArgumentError(StrCat(name, ": an HloSnapshot with ", snapshot.arguments_size(),
                                             " arguments but no module (as mlir-bisect writes); give the module "
                                             "separately"));
  } else {
    return absl::InvalidArgumentError(
        StrCat(name, ": not an HLO protobuf ", text_format ? "text " : "", "file (", bytes.size(),
               " bytes; it parses as none of HloSnapshot, HloUnoptimizedSnapshot, HloProto and HloModuleProto "
               "with a module in it: truncated, or another kind of file?)"));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module, ModuleFromProto(*m, name, out.text));
  out.module = std::move(module);
  if (out.message == "HloSnapshot") {
    ASSIGN_OR_RETURN(std::vector<Literal> args, ReadLiterals(snapshot.arguments(), StrCat(name, ": argument")));
    out.arguments = std::move(args);
    if (snapshot.has_result() && snapshot.result().has_shape()) {
      ASSIGN_OR_RETURN(Literal r, LiteralFromProto(snapshot.result(), StrCat(name, ": result")));
      out.result = std::move(r);
    }
  }
  if (out.message == "HloUnoptimizedSnapshot") {
    std::vector<std::vector<Literal>> partitions;
    for (int d = 0; d < unoptimized.partitions_size(); ++d) {
      ASSIGN_OR_RETURN(std::vector<Literal> args,
          ReadLiterals(unoptimized.partitions(d).arguments(), StrCat(name, ": partition ", d, " argument")));
      partitions.push_back(std::move(args));
    }
    ASSIGN_OR_RETURN(std::vector<Literal> args, UnshardArguments(*out.module, partitions, name));
    out.arguments = std::move(args);
  }
  return out;
}

absl::StatusOr<std::vector<Literal>> ReadHloSnapshotArguments(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  xla::HloSnapshot snapshot;
  if (!ParseMessage(bytes, EndsWith(path, ".pbtxt"), snapshot)) {
    return absl::InvalidArgumentError(StrCat(path, ": not an HloSnapshot"));
  }
  return ReadLiterals(snapshot.arguments(), StrCat(path, ": argument"));
}

absl::StatusOr<ImportedHlo> ImportHloProtoFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path));
  return ImportHloProtoBytes(bytes, path, EndsWith(path, ".pbtxt"));
}

#endif  // PASSLAB_HAVE_PROTOBUF

}  // namespace passlab
