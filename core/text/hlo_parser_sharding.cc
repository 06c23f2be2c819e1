#include "core/text/hlo_parser_internal.h"

#include <algorithm>

#include "core/ir/status_macros.h"

namespace passlab {
namespace text_internal {

// ---- Named ("V3") shardings ----
// XLA's ParseMesh, ParseAxisRef, ParseDimensionSharding and the
// NamedSharding overload of ParseSingleSharding (xla/hlo/parser/
// hlo_parser.cc). What XLA's NamedSharding and Mesh constructors CHECK
// (VerifyNamedSharding in named_sharding.cc, Mesh::Validate in
// mesh_and_axis.cc) is an error here, naming the axis.
struct Parser::NamedParse {
  NamedSharding ns;
  std::string mesh_text;  // the mesh as written, for errors
  // Every axis reference so far: one mesh axis (or sub-axis) may be used
  // once per sharding.
  std::vector<NamedSharding::AxisRef> used;
};

namespace {

// XLA's CanonicalizeIotaDims (xla/hlo/ir/tile_assignment.cc): drops
// dimensions of size one and merges runs the transpose keeps in order, so
// "[2,2]T(0,1)" is the plain iota "[4]".
void CanonicalizeIota(std::vector<int64_t>& dims, std::vector<int64_t>& perm) {
  while (dims.size() > 1) {
    std::vector<int64_t> new_index(dims.size(), -1);
    std::vector<int64_t> kept_dims, kept_perm;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == 1) continue;
      new_index[i] = static_cast<int64_t>(kept_dims.size());
      kept_dims.push_back(dims[i]);
    }
    for (int64_t d : perm) {
      if (new_index[d] >= 0) kept_perm.push_back(new_index[d]);
    }
    dims = std::move(kept_dims);
    perm = std::move(kept_perm);
    bool merged = false;
    for (size_t i = 1, base = 0; i < dims.size(); ++i) {
      if (perm[base] + static_cast<int64_t>(i - base) == perm[i]) {
        dims[perm[base]] *= dims[perm[i]];
        dims[perm[i]] = 1;
        merged = true;
      } else {
        base = i;
      }
    }
    if (!merged) break;
  }
}

}  // namespace

// mesh ::= 'maximal_mesh' '[' 'device_id' '=' int ']'
//        | 'mesh' '[' ("'name'" '=' size (',' ...)*)? ']'
//          (',' 'device_ids' '=' '(' (int_list | '[' dims ']' ('T(' perm ')')?) ')')?
absl::Status Parser::ParseMesh(NamedParse& np) {
  SkipWs();
  const char* start = p_;
  NamedSharding& ns = np.ns;
  if (ConsumeWord("maximal_mesh")) {
    RETURN_IF_ERROR(Expect('[', "after maximal_mesh"));
    if (!ConsumeWord("device_id")) return Error("expected device_id= in maximal_mesh");
    RETURN_IF_ERROR(Expect('='));
    ASSIGN_OR_RETURN(int64_t device, ParseInt());
    RETURN_IF_ERROR(Expect(']', "closing maximal_mesh"));
    ns.form = NamedSharding::Form::kMaximal;
    ns.maximal_device = device;
    np.mesh_text = std::string(start, p_);
    return absl::OkStatus();
  }
  if (!ConsumeWord("mesh")) return Error("expected 'mesh' or 'maximal_mesh'");
  RETURN_IF_ERROR(Expect('[', "after mesh"));
  int64_t devices = 1;
  if (!Consume(']')) {
    do {
      SkipWs();
      const char* at = p_;
      ASSIGN_OR_RETURN(std::string name, ParseString('\''));
      RETURN_IF_ERROR(Expect('=', "after the mesh axis name"));
      ASSIGN_OR_RETURN(int64_t size, ParseInt());
      if (size < 1) return Error(at, StrCat("mesh axis '", name, "' must have a positive size"));
      for (const NamedSharding::MeshAxis& axis : ns.mesh) {
        if (axis.name == name) return Error(at, StrCat("mesh axis '", name, "' is given twice"));
      }
      if (size > (1 << 24) || (devices *= size) > (1 << 24)) return Error(at, "mesh too large");
      ns.mesh.push_back({name, size});
    } while (Consume(','));
    RETURN_IF_ERROR(Expect(']', "closing the mesh axes"));
  }
  np.mesh_text = std::string(start, p_);
  if (ns.mesh.empty()) return absl::OkStatus();
  // ", device_ids=" follows the axes; any other ',' belongs to the sharding.
  if (!PeekCommaWord("device_ids")) return absl::OkStatus();
  Consume(',');
  ConsumeWord("device_ids");
  RETURN_IF_ERROR(Expect('=', "after device_ids"));
  RETURN_IF_ERROR(Expect('(', "opening device_ids"));
  SkipWs();
  const char* at = p_;
  if (Peek() == '[') {
    // Iota device ids: [reshape_dims]T(transpose_perm).
    ASSIGN_OR_RETURN(std::vector<int64_t> reshape, ParseIntList('[', ']'));
    if (reshape.empty()) return Error(at, "expected non-empty iota reshape dimensions");
    std::vector<int64_t> perm(reshape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    if (ConsumeWord("T")) {
      ASSIGN_OR_RETURN(std::vector<int64_t> p, ParseIntList('(', ')'));
      std::vector<int64_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      if (sorted != perm) {
        return Error(at, StrCat("device_ids transpose must be a permutation of 0..",
                                perm.size() - 1));
      }
      perm = std::move(p);
    } else if (reshape.size() > 1) {
      return Error("expected 'T(' after the device_ids iota dimensions");
    }
    RETURN_IF_ERROR(Expect(')', "closing device_ids"));
    int64_t product = 1;
    for (int64_t d : reshape) {
      if (d < 1 || d > (1 << 24) || (product *= d) > (1 << 24)) {
        return Error(at, "invalid device_ids iota dimensions");
      }
    }
    if (product != devices) {
      return Error(at, StrCat("mesh device_ids iota size ", product,
                              " does not match the product of the mesh axis sizes ", devices));
    }
    CanonicalizeIota(reshape, perm);
    if (reshape.size() > 1) {
      ns.device_iota_reshape = std::move(reshape);
      ns.device_iota_perm = std::move(perm);
    }
  } else {
    std::vector<int64_t> ids;
    if (!Consume(')')) {
      do {
        ASSIGN_OR_RETURN(int64_t id, ParseInt());
        ids.push_back(id);
        if (static_cast<int64_t>(ids.size()) > devices) {
          return Error(at, StrCat("expected ", devices,
                                  " device_ids based on mesh axes, but got more"));
        }
      } while (Consume(','));
      RETURN_IF_ERROR(Expect(')', "closing device_ids"));
    }
    if (static_cast<int64_t>(ids.size()) != devices) {
      return Error(at, StrCat("expected ", devices, " device_ids based on mesh axes, but got ",
                              ids.size()));
    }
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < devices; ++i) {
      if (sorted[i] != i) {
        return Error(at, StrCat("mesh device_ids must be a permutation of 0..", devices - 1));
      }
    }
    if (sorted == ids) {
      return Error(at, "mesh device_ids are the identity; XLA requires such a mesh to be "
                       "written without device_ids");
    }
    ns.device_ids = std::move(ids);
  }
  np.mesh_text = std::string(start, p_);
  return absl::OkStatus();
}

// axis_ref ::= "'name'" | "'index'" (':(' pre_size ')' size)?
absl::StatusOr<NamedSharding::AxisRef> Parser::ParseAxisRef(NamedParse& np) {
  SkipWs();
  const char* at = p_;
  ASSIGN_OR_RETURN(std::string name, ParseString('\''));
  const std::vector<NamedSharding::MeshAxis>& mesh = np.ns.mesh;
  int64_t index = -1;
  for (size_t i = 0; i < mesh.size(); ++i) {
    if (mesh[i].name == name) index = static_cast<int64_t>(i);
  }
  // XLA accepts an axis by its index too ("'0'"), as printed without a mesh.
  if (index < 0 && !SimpleAtoi(name, &index)) {
    return Error(at, StrCat("axis '", name, "' is not a valid axis name or index in mesh ",
                            np.mesh_text));
  }
  if (index < 0 || index >= static_cast<int64_t>(mesh.size())) {
    return Error(at, StrCat("axis index ", index, " is out of bounds for mesh ", np.mesh_text,
                            " which has ", mesh.size(), " axes"));
  }
  NamedSharding::AxisRef ref;
  ref.index = index;
  const int64_t full = mesh[index].size;
  if (Consume(':')) {
    RETURN_IF_ERROR(Expect('(', "before the sub-axis pre-size"));
    ASSIGN_OR_RETURN(int64_t pre, ParseInt());
    RETURN_IF_ERROR(Expect(')', "after the sub-axis pre-size"));
    ASSIGN_OR_RETURN(int64_t size, ParseInt());
    // AxisRef::Validate: pre_size * size divides the axis, size < axis size.
    if (pre < 1 || size < 1 || pre > full || size >= full || full % (pre * size) != 0) {
      return Error(at, StrCat("sub-axis '", name, "':(", pre, ")", size,
                              " does not fit mesh axis '", mesh[index].name, "' of size ", full,
                              " (pre-size times size must divide it; size must be smaller)"));
    }
    ref.sub_axis = std::make_pair(pre, size);
  }
  // AxisRef::CanCoexistWithoutOverlap against every axis used so far.
  auto range = [&](const NamedSharding::AxisRef& a) {
    return a.sub_axis ? std::make_pair(a.sub_axis->first, a.sub_axis->first * a.sub_axis->second)
                      : std::make_pair(int64_t{1}, full);
  };
  for (const NamedSharding::AxisRef& other : np.used) {
    if (other.index != index) continue;
    auto [lo, hi] = range(ref);
    auto [other_lo, other_hi] = range(other);
    if (!ref.sub_axis || !other.sub_axis || (lo < other_hi && other_lo < hi)) {
      return Error(at, StrCat("axis '", name, "' overlaps an axis used earlier in this sharding"));
    }
  }
  np.used.push_back(ref);
  return ref;
}

namespace {

// Two sub-axes that are adjacent pieces of one axis (AxisRef::CanMerge).
bool CanMerge(const NamedSharding::AxisRef& a, const NamedSharding::AxisRef& b) {
  return a.index == b.index && a.sub_axis && b.sub_axis &&
         a.sub_axis->first * a.sub_axis->second == b.sub_axis->first;
}

}  // namespace

// '{' axis_ref (',' axis_ref)* '}' for replicated=, unreduced= and manual=:
// sorted by axis index and pre-size, no mergeable neighbours.
absl::Status Parser::ParseAxisRefList(NamedParse& np, std::string_view what,
                              std::vector<NamedSharding::AxisRef>& out) {
  SkipWs();
  const char* at = p_;
  ASSIGN_OR_RETURN(std::vector<NamedSharding::AxisRef> axes,
      ParseList<NamedSharding::AxisRef>('{', '}', [&] { return ParseAxisRef(np); }));
  out.insert(out.end(), axes.begin(), axes.end());
  auto key = [](const NamedSharding::AxisRef& a) {
    return std::make_pair(a.index, a.sub_axis ? a.sub_axis->first : int64_t{1});
  };
  for (size_t i = 1; i < out.size(); ++i) {
    if (key(out[i]) < key(out[i - 1])) {
      return Error(at, StrCat(what, " axes must be sorted by mesh axis index and sub-axis pre-size"));
    }
    if (CanMerge(out[i - 1], out[i])) {
      return Error(at, StrCat("adjacent ", what, " axes can be merged into one"));
    }
  }
  return absl::OkStatus();
}

// dim_sharding ::= '{' (axis_ref (',' axis_ref)*)? (',' '?')? '}' | '{' '?' '}'
absl::StatusOr<NamedSharding::DimSharding> Parser::ParseDimSharding(NamedParse& np) {
  NamedSharding::DimSharding dim;
  RETURN_IF_ERROR(Expect('{', "opening a dimension sharding"));
  if (Consume('}')) return dim;
  do {
    SkipWs();
    if (!dim.closed) return Error("saw an axis after '?' (the open mark comes last)");
    if (Consume('?')) {
      dim.closed = false;
      continue;
    }
    SkipWs();
    const char* at = p_;
    ASSIGN_OR_RETURN(NamedSharding::AxisRef ref, ParseAxisRef(np));
    if (!dim.axes.empty() && CanMerge(dim.axes.back(), ref)) {
      return Error(at, "adjacent axes in a dimension sharding can be merged into one");
    }
    dim.axes.push_back(ref);
  } while (Consume(','));
  RETURN_IF_ERROR(Expect('}', "closing a dimension sharding"));
  return dim;
}

// XLA's ParseSingleOrListMetadata: "{op_name=...}" or "{{...}, {...}}".
absl::Status Parser::ParseShardingMetadata(std::vector<OpMetadata>& out) {
  SkipWs();
  const char* q = p_ + 1;
  while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
  if (Peek() == '{' && q < end_ && (*q == '{' || *q == '}')) {
    Consume('{');
    if (Consume('}')) return absl::OkStatus();
    do {
      ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
      out.push_back(std::move(m));
    } while (Consume(','));
    return Expect('}', "closing the metadata list");
  }
  ASSIGN_OR_RETURN(OpMetadata m, ParseMetadata());
  out.push_back(std::move(m));
  return absl::OkStatus();
}

namespace {

// Which of XLA's spellings NamedSharding::ToString (named_sharding.cc)
// prints: "{replicated}" when nothing is sharded, unreduced or manual and
// there are no dimensions; "{unreduced}" when every mesh axis is unreduced
// in order (axes of size 1 may be left out); "{mesh[...], manual}" likewise
// for manual; otherwise the full form.
NamedSharding::Form PrintedForm(const NamedSharding& ns) {
  using Form = NamedSharding::Form;
  if (ns.form == Form::kMaximal) return Form::kMaximal;
  auto size = [&](const NamedSharding::AxisRef& a) {
    return a.sub_axis ? a.sub_axis->second : ns.mesh[a.index].size;
  };
  auto all_axes_in_order = [&](const std::vector<NamedSharding::AxisRef>& axes) {
    size_t k = 0;
    for (size_t i = 0; i < ns.mesh.size(); ++i) {
      if (k < axes.size() && axes[k].index == static_cast<int64_t>(i)) {
        if (axes[k].sub_axis) return false;
        ++k;
      } else if (ns.mesh[i].size != 1) {
        return false;
      }
    }
    return k == axes.size();
  };
  bool dims_replicated = true;
  for (const NamedSharding::DimSharding& d : ns.dims) {
    for (const NamedSharding::AxisRef& a : d.axes) dims_replicated &= size(a) == 1;
  }
  if (dims_replicated && ns.unreduced_axes.empty() && ns.manual_axes.empty() &&
      ns.dims.empty() && ns.replicated_axes.empty()) {
    return Form::kReplicated;
  }
  if (ns.dims.empty() && !ns.unreduced_axes.empty() && all_axes_in_order(ns.unreduced_axes)) {
    return Form::kUnreduced;
  }
  if (ns.dims.empty() && !ns.manual_axes.empty() && all_axes_in_order(ns.manual_axes)) {
    return Form::kManual;
  }
  return Form::kDims;
}

}  // namespace

// After the sharding's '{', at "mesh" or "maximal_mesh"; through the '}'.
absl::Status Parser::ParseNamedSharding(HloSharding& sh) {
  NamedParse np;
  RETURN_IF_ERROR(ParseMesh(np));
  NamedSharding& ns = np.ns;
  using ReductionOp = NamedSharding::ReductionOp;
  auto metadata_if_present = [&]() -> absl::Status {
    if (!Consume(',')) return absl::OkStatus();
    if (!ConsumeWord("metadata")) return Error("expected metadata=");
    RETURN_IF_ERROR(Expect('=', "after metadata"));
    return ParseShardingMetadata(sh.metadata);
  };
  auto reduction_op = [&](ReductionOp& op) -> absl::Status {
    if (ConsumeWord("sum")) op = ReductionOp::kSum;
    else if (ConsumeWord("max")) op = ReductionOp::kMax;
    else if (ConsumeWord("min")) op = ReductionOp::kMin;
    else return Error("expected sum, max, or min for unreduced op");
    return absl::OkStatus();
  };
  auto all_axes = [&] {
    std::vector<NamedSharding::AxisRef> axes(ns.mesh.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i].index = static_cast<int64_t>(i);
    return axes;
  };
  auto finish = [&]() -> absl::Status {
    RETURN_IF_ERROR(Expect('}', "closing the sharding"));
    ns.unreduced_op_written = ns.unreduced_op != ReductionOp::kSum;
    ns.form = PrintedForm(ns);
    sh.kind = HloSharding::Kind::kNamed;
    sh.named = std::move(ns);
    return absl::OkStatus();
  };
  if (ns.form == NamedSharding::Form::kMaximal) {
    RETURN_IF_ERROR(metadata_if_present());
    return finish();
  }
  Consume(',');
  // Whole-sharding forms: "replicated", "unreduced[=op][{axes}]", "manual".
  if (ConsumeWord("replicated")) {
    RETURN_IF_ERROR(metadata_if_present());
    return finish();
  }
  if (ConsumeWord("unreduced")) {
    if (Consume('=')) {
      RETURN_IF_ERROR(reduction_op(ns.unreduced_op));
    }
    if (Peek() == '{') {
      RETURN_IF_ERROR(ParseAxisRefList(np, "unreduced", ns.unreduced_axes));
    } else {
      ns.unreduced_axes = all_axes();
    }
    RETURN_IF_ERROR(metadata_if_present());
    return finish();
  }
  if (ConsumeWord("manual")) {
    ns.manual_axes = all_axes();
    RETURN_IF_ERROR(metadata_if_present());
    return finish();
  }
  ASSIGN_OR_RETURN(std::vector<NamedSharding::DimSharding> dims,
      ParseList<NamedSharding::DimSharding>('[', ']', [&] { return ParseDimSharding(np); }));
  ns.dims = std::move(dims);
  while (Peek() != '}') {
    if (p_ >= end_) return Error("unterminated sharding");
    RETURN_IF_ERROR(Expect(',', "before the next named sharding attribute"));
    SkipWs();
    const char* at = p_;
    ASSIGN_OR_RETURN(std::string attr, ParseIdentifier());
    RETURN_IF_ERROR(Expect('=', StrCat("after '", attr, "'")));
    absl::Status s;
    if (attr == "replicated") {
      s = ParseAxisRefList(np, "replicated", ns.replicated_axes);
    } else if (attr == "unreduced") {
      if (Peek() != '{') s = reduction_op(ns.unreduced_op);
      if (s.ok()) s = ParseAxisRefList(np, "unreduced", ns.unreduced_axes);
    } else if (attr == "manual") {
      s = ParseAxisRefList(np, "manual", ns.manual_axes);
    } else if (attr == "metadata") {
      s = ParseShardingMetadata(sh.metadata);
    } else {
      return Error(at, "unknown attribute in named sharding: expected replicated, unreduced, "
                       "manual or metadata");
    }
    if (!s.ok()) return s;
  }
  return finish();
}

absl::StatusOr<HloSharding> Parser::ParseSharding(int depth) {
  if (depth > kMaxNesting) return Error("sharding nesting too deep");
  const char* start = p_;
  RETURN_IF_ERROR(Expect('{', "starting a sharding"));
  HloSharding sh;
  if (Peek() == '{' || Peek() == '}') {
    sh.kind = HloSharding::Kind::kTuple;
    if (Consume('}')) return sh;
    do {
      ASSIGN_OR_RETURN(HloSharding e, ParseSharding(depth + 1));
      sh.tuple_elements.push_back(std::move(e));
    } while (Consume(','));
    RETURN_IF_ERROR(Expect('}'));
    return sh;
  }
  if (PeekWord("mesh") || PeekWord("maximal_mesh")) {
    RETURN_IF_ERROR(ParseNamedSharding(sh));
    return sh;
  }
  bool have_kind = false;
  bool after_comma = false;
  bool comma_metadata = false;  // ", metadata=": the named spelling
  while (!Consume('}')) {
    if (p_ >= end_) return Error(start, "unterminated sharding");
    const char* at = p_;
    if (ConsumeWord("replicated")) {
      sh.kind = HloSharding::Kind::kReplicated;
      have_kind = true;
    } else if (ConsumeWord("manual")) {
      sh.kind = HloSharding::Kind::kManual;
      have_kind = true;
    } else if (ConsumeWord("unknown")) {
      sh.kind = HloSharding::Kind::kUnknown;
      have_kind = true;
    } else if (ConsumeWord("unreduced")) {
      // XLA's HloSharding::Unreduced(), also what a named sharding that
      // is unreduced over its whole mesh prints as: kept as a named
      // sharding without a mesh.
      sh.kind = HloSharding::Kind::kNamed;
      sh.named.emplace();
      sh.named->form = NamedSharding::Form::kUnreduced;
      if (Consume('=')) {
        // "{unreduced=max}", as a named sharding prints when its op is not sum.
        using ReductionOp = NamedSharding::ReductionOp;
        ReductionOp& op = sh.named->unreduced_op;
        if (ConsumeWord("sum")) op = ReductionOp::kSum;
        else if (ConsumeWord("max")) op = ReductionOp::kMax;
        else if (ConsumeWord("min")) op = ReductionOp::kMin;
        else return Error("expected sum, max, or min for unreduced op");
        sh.named->unreduced_op_written = op != ReductionOp::kSum;
      }
      have_kind = true;
    } else if (ConsumeWord("maximal")) {
      sh.kind = HloSharding::Kind::kMaximal;
      have_kind = true;
      RETURN_IF_ERROR(ExpectStr("device="));
      ASSIGN_OR_RETURN(int64_t d, ParseInt());
      sh.device = d;
    } else if (ConsumeStr("devices=")) {
      sh.kind = HloSharding::Kind::kTiled;
      have_kind = true;
      ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntList('[', ']'));
      sh.tile_dims = dims;
      int64_t n = 1;
      for (int64_t d : sh.tile_dims) {
        if (d <= 0 || d > (1 << 20)) return Error(at, "invalid tile assignment dimension");
        n *= d;
        if (n > (1 << 24)) return Error(at, "tile assignment too large");
      }
      if (ConsumeStr("<=")) {
        sh.iota = true;
        ASSIGN_OR_RETURN(std::vector<int64_t> r, ParseIntList('[', ']'));
        sh.iota_reshape_dims = r;
        if (ConsumeStr("T")) {
          ASSIGN_OR_RETURN(std::vector<int64_t> perm, ParseIntList('(', ')'));
          sh.iota_transpose_perm = perm;
        }
      } else {
        do {
          ASSIGN_OR_RETURN(int64_t d, ParseInt());
          sh.devices.push_back(d);
        } while (Consume(','));
        if (static_cast<int64_t>(sh.devices.size()) != n) {
          return Error(at, StrCat("tile assignment has ", n, " tiles but ",
                                        sh.devices.size(), " devices are listed"));
        }
      }
    } else if (ConsumeWord("last_tile_dim_replicate")) {
      sh.last_tile_dim_replicate = true;
    } else if (ConsumeStr("last_tile_dims=")) {
      ASSIGN_OR_RETURN(std::vector<HloSharding::SubgroupType> types,
          ParseList<HloSharding::SubgroupType>('{', '}', [&]() -> absl::StatusOr<HloSharding::SubgroupType> {
            if (ConsumeWord("manual")) return HloSharding::SubgroupType::kManual;
            if (ConsumeWord("replicated")) return HloSharding::SubgroupType::kReplicated;
            if (ConsumeWord("maximal")) return HloSharding::SubgroupType::kMaximal;
            if (ConsumeWord("unreduced")) return HloSharding::SubgroupType::kUnreduced;
            return Error("unknown subgroup type");
          }));
      sh.last_tile_dims = std::move(types);
    } else if (ConsumeStr("metadata=")) {
      comma_metadata = after_comma;
      RETURN_IF_ERROR(ParseShardingMetadata(sh.metadata));
    } else if (ConsumeWord("shard_as") || ConsumeWord("shard_like")) {
      bool as = std::string_view(at, 8) == "shard_as";
      ASSIGN_OR_RETURN(int64_t id, ParseInt());
      sh.shard_as = as;
      sh.shard_like = !as;
      sh.shard_group_id = id;
    } else {
      return Error(at, "unknown sharding attribute");
    }
    after_comma = Consume(',');
  }
  if (!have_kind) return Error(start, "sharding has no kind (replicated, maximal, devices=...)");
  if (comma_metadata && sh.kind == HloSharding::Kind::kReplicated) {
    // "{replicated, metadata={{...}}}" is how a replicated named sharding
    // prints (XLA's NamedSharding::ToString): kept as one, without a mesh,
    // so that it prints the same again.
    sh.kind = HloSharding::Kind::kNamed;
    sh.named.emplace();
    sh.named->form = NamedSharding::Form::kReplicated;
  }
  return sh;
}

}  // namespace text_internal
}  // namespace passlab
