#include "core/text/hlo_parser_internal.h"

#include <cctype>

#include "core/ir/status_macros.h"

namespace passlab {
namespace text_internal {

absl::StatusOr<Window> Parser::ParseWindow() {
  RETURN_IF_ERROR(Expect('{'));
  Window w;
  auto resize = [&](size_t n, const char* at) -> absl::Status {
    if (w.dimensions.empty()) w.dimensions.resize(n);
    if (w.dimensions.size() != n) return Error(at, "window fields have different ranks");
    return absl::OkStatus();
  };
  while (!Consume('}')) {
    if (p_ >= end_) return Error("unterminated window");
    const char* at = p_;
    ASSIGN_OR_RETURN(std::string field, ParseIdentifier());
    RETURN_IF_ERROR(Expect('='));
    SkipWs();
    if (field == "pad") {
      std::vector<std::pair<int64_t, int64_t>> pads;
      do {
        ASSIGN_OR_RETURN(int64_t lo, ParseInt());
        if (p_ >= end_ || *p_ != '_') return Error("expected '_' in window padding");
        ++p_;
        ASSIGN_OR_RETURN(int64_t hi, ParseInt());
        pads.push_back({lo, hi});
      } while (p_ < end_ && *p_ == 'x' && ++p_);
      RETURN_IF_ERROR(resize(pads.size(), at));
      for (size_t i = 0; i < pads.size(); ++i) {
        w.dimensions[i].padding_low = pads[i].first;
        w.dimensions[i].padding_high = pads[i].second;
      }
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<int64_t> values, ParseXList());
    RETURN_IF_ERROR(resize(values.size(), at));
    for (size_t i = 0; i < values.size(); ++i) {
      WindowDimension& d = w.dimensions[i];
      int64_t v = values[i];
      if (field == "size") d.size = v;
      else if (field == "stride") d.stride = v;
      else if (field == "lhs_dilate") d.base_dilation = v;
      else if (field == "rhs_dilate") d.window_dilation = v;
      else if (field == "rhs_reversal") d.window_reversal = v != 0;
      else return Error(at, StrCat("unknown window field '", field, "'"));
    }
  }
  return w;
}

absl::StatusOr<ConvolutionDimensionNumbers> Parser::ParseDimLabels() {
  SkipWs();
  const char* at = p_;
  while (p_ < end_ && (std::isalnum(static_cast<unsigned char>(*p_)) || *p_ == '_' ||
                       *p_ == '-' || *p_ == '>' || *p_ == '?')) {
    ++p_;
  }
  std::string text(at, p_);
  size_t arrow = text.find("->");
  size_t us = text.find('_');
  if (arrow == std::string::npos || us == std::string::npos || us > arrow) {
    return Error(at, "malformed dim_labels (expected e.g. b01f_01io->b01f)");
  }
  std::string lhs = text.substr(0, us), rhs = text.substr(us + 1, arrow - us - 1),
              out = text.substr(arrow + 2);
  if (lhs.size() != rhs.size() || lhs.size() != out.size() || lhs.size() < 2) {
    return Error(at, "dim_labels parts must have the same rank (at least 2)");
  }
  ConvolutionDimensionNumbers d;
  int64_t spatial = static_cast<int64_t>(lhs.size()) - 2;
  auto fill = [&](const std::string& s, char a, char b, int64_t& da, int64_t& db,
                  std::vector<int64_t>& sp) -> absl::Status {
    sp.assign(spatial, -1);
    bool seen_a = false, seen_b = false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == a && !seen_a) {
        da = i;
        seen_a = true;
      } else if (c == b && !seen_b) {
        db = i;
        seen_b = true;
      } else if (c >= '0' && c <= '9' && c - '0' < spatial && sp[c - '0'] == -1) {
        sp[c - '0'] = i;
      } else {
        return Error(at, StrCat("invalid dim_labels '", s, "'"));
      }
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(fill(lhs, 'b', 'f', d.input_batch_dimension, d.input_feature_dimension,
                            d.input_spatial_dimensions));
  RETURN_IF_ERROR(fill(rhs, 'i', 'o', d.kernel_input_feature_dimension,
                            d.kernel_output_feature_dimension, d.kernel_spatial_dimensions));
  RETURN_IF_ERROR(fill(out, 'b', 'f', d.output_batch_dimension, d.output_feature_dimension,
                            d.output_spatial_dimensions));
  return d;
}

absl::StatusOr<PaddingConfig> Parser::ParsePadding() {
  PaddingConfig config;
  do {
    PaddingDimension d;
    ASSIGN_OR_RETURN(int64_t lo, ParseInt());
    if (p_ >= end_ || *p_ != '_') return Error("expected '_' in padding");
    ++p_;
    ASSIGN_OR_RETURN(int64_t hi, ParseInt());
    d.edge_padding_low = lo;
    d.edge_padding_high = hi;
    if (p_ < end_ && *p_ == '_') {
      ++p_;
      ASSIGN_OR_RETURN(int64_t in, ParseInt());
      d.interior_padding = in;
    }
    config.dimensions.push_back(d);
  } while (p_ < end_ && *p_ == 'x' && ++p_);
  return config;
}

absl::StatusOr<std::vector<SliceDimension>> Parser::ParseSliceRanges() {
  return ParseList<SliceDimension>('{', '}', [&]() -> absl::StatusOr<SliceDimension> {
    SliceDimension d;
    RETURN_IF_ERROR(Expect('['));
    ASSIGN_OR_RETURN(int64_t a, ParseInt());
    RETURN_IF_ERROR(Expect(':'));
    ASSIGN_OR_RETURN(int64_t b, ParseInt());
    d.start = a;
    d.limit = b;
    if (Consume(':')) {
      ASSIGN_OR_RETURN(int64_t c, ParseInt());
      d.stride = c;
    }
    RETURN_IF_ERROR(Expect(']'));
    return d;
  });
}

absl::StatusOr<ReplicaGroups> Parser::ParseReplicaGroups() {
  ReplicaGroups g;
  if (Peek() == '[') {
    g.iota = true;
    ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntList('[', ']'));
    g.iota_group_dims = dims;
    RETURN_IF_ERROR(ExpectStr("<="));
    ASSIGN_OR_RETURN(std::vector<int64_t> reshape, ParseIntList('[', ']'));
    g.iota_reshape_dims = reshape;
    if (ConsumeStr("T")) {
      ASSIGN_OR_RETURN(std::vector<int64_t> perm, ParseIntList('(', ')'));
      g.iota_transpose_perm = perm;
    }
    int64_t n = 1, m = 1;
    for (int64_t d : g.iota_reshape_dims) n *= d;
    for (int64_t d : g.iota_group_dims) m *= d;
    if (g.iota_group_dims.size() != 2 || n != m || n <= 0 || n > (1 << 24)) {
      return Error("iota replica groups must be [groups,size]<=[dims] with equal element counts");
    }
    return g;
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> groups,
      ParseList<std::vector<int64_t>>('{', '}', [&] { return ParseIntList(); }));
  g.groups = std::move(groups);
  return g;
}

absl::StatusOr<OpMetadata> Parser::ParseMetadata() {
  RETURN_IF_ERROR(Expect('{'));
  OpMetadata m;
  while (!Consume('}')) {
    if (p_ >= end_) return Error("unterminated metadata");
    Consume(',');
    const char* at = p_;
    ASSIGN_OR_RETURN(std::string key, ParseIdentifier());
    RETURN_IF_ERROR(Expect('='));
    auto str = [&](std::string& field) -> absl::Status {
      ASSIGN_OR_RETURN(std::string v, ParseString());
      field = std::move(v);
      return absl::OkStatus();
    };
    auto num = [&](int64_t& field) -> absl::Status {
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      field = v;
      return absl::OkStatus();
    };
    absl::Status s;
    if (key == "op_type") s = str(m.op_type);
    else if (key == "op_name") s = str(m.op_name);
    else if (key == "source_file") s = str(m.source_file);
    else if (key == "source_line") s = num(m.source_line);
    else if (key == "source_end_line") s = num(m.source_end_line);
    else if (key == "source_column") s = num(m.source_column);
    else if (key == "source_end_column") s = num(m.source_end_column);
    else if (key == "deduplicated_name") s = str(m.deduplicated_name);
    else if (key == "scheduling_name") s = str(m.scheduling_name);
    else if (key == "stack_frame_id") s = num(m.stack_frame_id);
    else if (key == "preserve_layout") {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      m.preserve_layout = b;
    } else if (key == "profile_type") {
      ASSIGN_OR_RETURN(std::vector<std::string> types,
          ParseList<std::string>('{', '}', [&] { return ParseIdentifier(); }));
      m.profile_type = std::move(types);
    } else {
      return Error(at, StrCat("unknown metadata field '", key, "'"));
    }
    if (!s.ok()) return s;
  }
  return m;
}

absl::StatusOr<FrontendAttributes> Parser::ParseFrontendAttributes() {
  FrontendAttributes fa;
  RETURN_IF_ERROR(Expect('{'));
  if (Consume('}')) return fa;
  do {
    ASSIGN_OR_RETURN(std::string key, ParseIdentifier());
    RETURN_IF_ERROR(Expect('='));
    std::string value;
    if (Peek() == '{') {
      ASSIGN_OR_RETURN(std::string v, ParseBalanced());
      value = std::move(v);
    } else {
      ASSIGN_OR_RETURN(std::string v, ParseString());
      value = std::move(v);
    }
    fa.map[key] = std::move(value);
  } while (Consume(','));
  RETURN_IF_ERROR(Expect('}'));
  return fa;
}


absl::StatusOr<std::vector<OutputOperandAlias>> Parser::ParseAliasing() {
  return ParseList<OutputOperandAlias>('{', '}', [&]() -> absl::StatusOr<OutputOperandAlias> {
    OutputOperandAlias a;
    ASSIGN_OR_RETURN(ShapeIndex out, ParseShapeIndex());
    RETURN_IF_ERROR(Expect(':'));
    RETURN_IF_ERROR(Expect('('));
    ASSIGN_OR_RETURN(int64_t op, ParseInt());
    RETURN_IF_ERROR(Expect(','));
    ASSIGN_OR_RETURN(ShapeIndex opi, ParseShapeIndex());
    RETURN_IF_ERROR(Expect(')'));
    a.output_index = out;
    a.operand = op;
    a.operand_index = opi;
    return a;
  });
}


// "L.1@2:4_R.0@2:4": which operand, dimension, n of m.
absl::StatusOr<std::vector<SparsityDescriptor>> Parser::ParseSparsity() {
  SkipWs();
  const char* sat = p_;
  while (p_ < end_ && (IsNameChar(*p_) || *p_ == '@' || *p_ == ':')) ++p_;
  std::vector<SparsityDescriptor> out;
  for (std::string_view part : SplitAny(std::string_view(sat, p_ - sat), "_")) {
    SparsityDescriptor d;
    int64_t dim, n, m;
    if (part.size() < 2 || (part[0] != 'L' && part[0] != 'R') || part[1] != '.') {
      return Error(sat, "malformed sparsity descriptor (expected e.g. L.1@2:4)");
    }
    std::vector<std::string_view> f = SplitAny(part.substr(2), "@:");
    if (f.size() != 3 || !SimpleAtoi(f[0], &dim) || !SimpleAtoi(f[1], &n) || !SimpleAtoi(f[2], &m)) {
      return Error(sat, "malformed sparsity descriptor (expected e.g. L.1@2:4)");
    }
    d.index = part[0] == 'L' ? 0 : 1;
    d.dimension = dim;
    d.n = n;
    d.m = m;
    out.push_back(d);
  }
  return out;
}

// "{visualizing_index=1, stat0=0.5}".
absl::StatusOr<Statistics> Parser::ParseStatistics() {
  RETURN_IF_ERROR(Expect('{'));
  Statistics st;
  if (!Consume('}')) {
    do {
      ASSIGN_OR_RETURN(std::string key, ParseIdentifier());
      RETURN_IF_ERROR(Expect('='));
      ASSIGN_OR_RETURN(double v, ParseDouble());
      if (key == "visualizing_index") {
        st.visualizing_index = static_cast<int64_t>(v);
      } else {
        st.stats.push_back({key, v});
      }
    } while (Consume(','));
    RETURN_IF_ERROR(Expect('}'));
  }
  return st;
}

// "{kind=\"sharding\", entry={...}, exit={...}}".
absl::StatusOr<DomainMetadata> Parser::ParseDomain() {
  RETURN_IF_ERROR(Expect('{'));
  DomainMetadata domain;
  do {
    ASSIGN_OR_RETURN(std::string key, ParseIdentifier());
    RETURN_IF_ERROR(Expect('='));
    if (key == "kind") {
      ASSIGN_OR_RETURN(std::string v, ParseString());
      domain.kind = std::move(v);
    } else if (key == "entry" || key == "exit") {
      ASSIGN_OR_RETURN(std::string v, ParseBalanced());
      (key == "entry" ? domain.entry : domain.exit) = std::move(v);
    } else {
      return Error(StrCat("unknown domain field '", key, "'"));
    }
  } while (Consume(','));
  RETURN_IF_ERROR(Expect('}'));
  return domain;
}

absl::StatusOr<std::string> Parser::ParseVerbatimValue(const char* at, std::string_view extra,
                                                       std::string_view what) {
  SkipWs();
  if (Peek() == '{' || Peek() == '(' || Peek() == '[') return ParseBalanced();
  const char* s0 = p_;
  if (Peek() == '"') {
    ASSIGN_OR_RETURN(std::string v, ParseString());
    return std::string(s0, p_);
  }
  while (p_ < end_ && (IsNameChar(*p_) || extra.find(*p_) != std::string_view::npos)) ++p_;
  if (p_ == s0) return Error(at, what);
  return std::string(s0, p_);
}

}  // namespace text_internal
}  // namespace passlab
