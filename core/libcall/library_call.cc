#include "core/libcall/library_call.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"

#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using json = nlohmann::json;

struct TargetName {
  std::string_view name;
  LibraryCallKind kind;
};

constexpr TargetName kTargets[] = {
    {kGemmCallTarget, LibraryCallKind::kGemm},
    {"__cublas$gemm", LibraryCallKind::kGemm},
    {kConvForwardCallTarget, LibraryCallKind::kConvForward},
    {"__cudnn$convForward", LibraryCallKind::kConvForward},
    {kConvBackwardInputCallTarget, LibraryCallKind::kConvBackwardInput},
    {"__cudnn$convBackwardInput", LibraryCallKind::kConvBackwardInput},
    {kConvBackwardFilterCallTarget, LibraryCallKind::kConvBackwardFilter},
    {"__cudnn$convBackwardFilter", LibraryCallKind::kConvBackwardFilter},
    {kConvBiasActivationForwardCallTarget, LibraryCallKind::kConvBiasActivationForward},
    {"__cudnn$convBiasActivationForward", LibraryCallKind::kConvBiasActivationForward},
    {kCholeskyCallTarget, LibraryCallKind::kCholesky},
    {kTriangularSolveCallTarget, LibraryCallKind::kTriangularSolve},
};

constexpr std::pair<GemmEpilogue, const char*> kEpilogues[] = {
    {GemmEpilogue::kDefault, "DEFAULT"}, {GemmEpilogue::kBias, "BIAS"},
    {GemmEpilogue::kRelu, "RELU"},       {GemmEpilogue::kBiasRelu, "BIAS_RELU"},
    {GemmEpilogue::kGelu, "GELU"},       {GemmEpilogue::kBiasGelu, "BIAS_GELU"},
};

constexpr std::pair<ConvActivation, const char*> kActivations[] = {
    {ConvActivation::kNone, "kNone"}, {ConvActivation::kRelu, "kRelu"},
    {ConvActivation::kRelu6, "kRelu6"}, {ConvActivation::kElu, "kElu"},
    {ConvActivation::kTanh, "kTanh"}, {ConvActivation::kSigmoid, "kSigmoid"},
};

constexpr std::pair<ConvAlgorithm, const char*> kAlgorithms[] = {
    {ConvAlgorithm::kAuto, "auto"},
    {ConvAlgorithm::kDirect, "direct"},
    {ConvAlgorithm::kWinograd, "winograd"},
    {ConvAlgorithm::kReference, "reference"},
    {ConvAlgorithm::kAsBackwardFilter, "as-backward-filter"},
    {ConvAlgorithm::kTapGemm, "tap-gemm"},
    {ConvAlgorithm::kIm2colGemm, "im2col-gemm"},
};

constexpr std::pair<PrecisionLevel, const char*> kPrecisions[] = {
    {PrecisionLevel::kDefault, "DEFAULT"}, {PrecisionLevel::kHigh, "HIGH"}, {PrecisionLevel::kHighest, "HIGHEST"}};

// Reads JSON fields with errors that say where (the instruction) and what.
class Reader {
 public:
  explicit Reader(std::string_view where) : where_(where) {}

  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(where_, ": backend_config ", what));
  }

  absl::StatusOr<json> Parse(std::string_view text, std::string_view wrapper) const {
    if (text.empty()) return json::object();  // every field at its default
    json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Error("is not valid JSON");
    if (!j.is_object()) return Error("is not a JSON object");
    if (j.contains(wrapper)) {
      const json& inner = j[std::string(wrapper)];
      if (!inner.is_object()) return Error(StrCat("field \"", wrapper, "\" is not an object"));
      return inner;
    }
    return j;
  }

  // A number, or a string holding one (proto JSON writes int64 as strings).
  absl::StatusOr<double> Double(const json& j, const char* key, double dflt) const {
    if (!j.contains(key)) return dflt;
    const json& v = j[key];
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      double d;
      if (absl::SimpleAtod(v.get<std::string>(), &d)) return d;
    }
    return Error(StrCat("field \"", key, "\" is not a number"));
  }

  absl::StatusOr<int64_t> Int(const json& j, const char* key, int64_t dflt) const {
    if (!j.contains(key)) return dflt;
    const json& v = j[key];
    if (v.is_number_integer()) return v.get<int64_t>();
    int64_t i;
    if (v.is_string() && SimpleAtoi(v.get<std::string>(), &i)) return i;
    return Error(StrCat("field \"", key, "\" is not an integer"));
  }

  absl::StatusOr<std::vector<int64_t>> Ints(const json& j, const char* key) const {
    std::vector<int64_t> out;
    if (!j.contains(key)) return out;
    const json& v = j[key];
    if (!v.is_array()) return Error(StrCat("field \"", key, "\" is not a list"));
    for (const json& e : v) {
      int64_t i;
      if (e.is_number_integer()) {
        out.push_back(e.get<int64_t>());
      } else if (e.is_string() && SimpleAtoi(e.get<std::string>(), &i)) {
        out.push_back(i);
      } else {
        return Error(StrCat("field \"", key, "\" holds a non-integer"));
      }
    }
    return out;
  }

  absl::StatusOr<bool> Bool(const json& j, const char* key, bool dflt) const {
    if (!j.contains(key)) return dflt;
    if (!j[key].is_boolean()) return Error(StrCat("field \"", key, "\" is not true or false"));
    return j[key].get<bool>();
  }

  absl::StatusOr<std::string> String(const json& j, const char* key, std::string dflt) const {
    if (!j.contains(key)) return dflt;
    if (!j[key].is_string()) return Error(StrCat("field \"", key, "\" is not a string"));
    return j[key].get<std::string>();
  }

 private:
  std::string where_;
};

#define PASSLAB_ASSIGN(lhs, expr)          \
  do {                                     \
    auto _r = (expr);                      \
    if (!_r.ok()) return _r.status();      \
    lhs = std::move(*_r);                  \
  } while (0)

json IntStrings(const std::vector<int64_t>& v) {
  json a = json::array();
  for (int64_t x : v) a.push_back(std::to_string(x));
  return a;
}

std::string Where(const HloInstruction& inst) {
  return StrCat("custom call ", inst.name(), " (\"", inst.custom_call_target(), "\")");
}

bool AllDistinctInRange(const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank) return false;
    for (size_t j = 0; j < i; ++j) {
      if (dims[i] == dims[j]) return false;
    }
  }
  return true;
}

// The array result and, for a tuple result, the byte size of its scratch.
absl::Status SplitResult(const HloInstruction& inst, bool tuple_required, Shape* result, int64_t* scratch) {
  const Shape& s = inst.shape();
  *scratch = 0;
  if (s.IsArray() && !tuple_required) {
    *result = s;
    return absl::OkStatus();
  }
  if (!s.IsTuple() || s.tuple_shapes_size() != 2 || !s.tuple_shapes(0).IsArray() ||
      !(s.tuple_shapes(1).element_type() == PrimitiveType::kU8 ||
        s.tuple_shapes(1).element_type() == PrimitiveType::kS8) ||
      s.tuple_shapes(1).rank() != 1) {
    return absl::InvalidArgumentError(StrCat(Where(inst), ": result must be ",
                                             tuple_required ? "" : "an array or ",
                                             "a tuple (result, u8[scratch]), not ", s.ToString()));
  }
  *result = s.tuple_shapes(0);
  *scratch = s.tuple_shapes(1).dimensions(0);
  return absl::OkStatus();
}

}  // namespace

const char* LibraryCallKindName(LibraryCallKind kind) {
  switch (kind) {
    case LibraryCallKind::kGemm: return "gemm";
    case LibraryCallKind::kConvForward: return "convForward";
    case LibraryCallKind::kConvBackwardInput: return "convBackwardInput";
    case LibraryCallKind::kConvBackwardFilter: return "convBackwardFilter";
    case LibraryCallKind::kConvBiasActivationForward: return "convBiasActivationForward";
    case LibraryCallKind::kCholesky: return "potrf";
    case LibraryCallKind::kTriangularSolve: return "trsm";
  }
  return "?";
}

std::optional<LibraryCallKind> ClassifyLibraryCallTarget(std::string_view target) {
  for (const TargetName& t : kTargets) {
    if (t.name == target) return t.kind;
  }
  return std::nullopt;
}

std::optional<LibraryCallKind> ClassifyLibraryCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return std::nullopt;
  return ClassifyLibraryCallTarget(inst.custom_call_target());
}

bool IsConvolutionKind(LibraryCallKind kind) { return kind != LibraryCallKind::kGemm && !IsSolverKind(kind); }

bool IsSolverKind(LibraryCallKind kind) {
  return kind == LibraryCallKind::kCholesky || kind == LibraryCallKind::kTriangularSolve;
}

// ---------------------------------------------------------------- gemm

const char* GemmEpilogueName(GemmEpilogue e) {
  for (const auto& [v, name] : kEpilogues) {
    if (v == e) return name;
  }
  return "?";
}

bool EpilogueHasBias(GemmEpilogue e) {
  return e == GemmEpilogue::kBias || e == GemmEpilogue::kBiasRelu || e == GemmEpilogue::kBiasGelu;
}

std::string GemmBackendConfig::ToJson() const {
  json g;
  g["alpha_real"] = alpha_real;
  g["alpha_imag"] = alpha_imag;
  g["beta"] = beta;
  g["dot_dimension_numbers"] = {
      {"lhs_batch_dimensions", IntStrings(dot_dimension_numbers.lhs_batch_dimensions)},
      {"rhs_batch_dimensions", IntStrings(dot_dimension_numbers.rhs_batch_dimensions)},
      {"lhs_contracting_dimensions", IntStrings(dot_dimension_numbers.lhs_contracting_dimensions)},
      {"rhs_contracting_dimensions", IntStrings(dot_dimension_numbers.rhs_contracting_dimensions)},
  };
  json precisions = json::array();
  for (PrecisionLevel p : precision_config.operand_precision) {
    for (const auto& [v, name] : kPrecisions) {
      if (v == p) precisions.push_back(name);
    }
  }
  g["precision_config"] = {{"operand_precision", precisions},
                           {"algorithm", precision_config.algorithm.empty() ? "ALG_UNSET" : precision_config.algorithm}};
  g["epilogue"] = GemmEpilogueName(epilogue);
  g["selected_algorithm"] = std::to_string(selected_algorithm);
  json j;
  j["gemm_backend_config"] = std::move(g);
  return j.dump();
}

absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(std::string_view text, std::string_view where) {
  Reader r(where);
  json g;
  PASSLAB_ASSIGN(g, r.Parse(text, "gemm_backend_config"));
  GemmBackendConfig c;
  PASSLAB_ASSIGN(c.alpha_real, r.Double(g, "alpha_real", 1));
  PASSLAB_ASSIGN(c.alpha_imag, r.Double(g, "alpha_imag", 0));
  PASSLAB_ASSIGN(c.beta, r.Double(g, "beta", 0));
  PASSLAB_ASSIGN(c.selected_algorithm, r.Int(g, "selected_algorithm", -1));
  if (g.contains("dot_dimension_numbers")) {
    const json& d = g["dot_dimension_numbers"];
    if (!d.is_object()) return r.Error("field \"dot_dimension_numbers\" is not an object");
    DotDimensionNumbers& dn = c.dot_dimension_numbers;
    PASSLAB_ASSIGN(dn.lhs_batch_dimensions, r.Ints(d, "lhs_batch_dimensions"));
    PASSLAB_ASSIGN(dn.rhs_batch_dimensions, r.Ints(d, "rhs_batch_dimensions"));
    PASSLAB_ASSIGN(dn.lhs_contracting_dimensions, r.Ints(d, "lhs_contracting_dimensions"));
    PASSLAB_ASSIGN(dn.rhs_contracting_dimensions, r.Ints(d, "rhs_contracting_dimensions"));
  }
  if (g.contains("precision_config")) {
    const json& p = g["precision_config"];
    if (!p.is_object()) return r.Error("field \"precision_config\" is not an object");
    if (p.contains("operand_precision")) {
      if (!p["operand_precision"].is_array()) return r.Error("field \"operand_precision\" is not a list");
      for (const json& e : p["operand_precision"]) {
        std::optional<PrecisionLevel> level;
        for (const auto& [v, name] : kPrecisions) {
          if (e.is_string() && e.get<std::string>() == name) level = v;
        }
        if (!level) return r.Error(StrCat("operand precision ", e.dump(), " is not DEFAULT, HIGH or HIGHEST"));
        c.precision_config.operand_precision.push_back(*level);
      }
    }
    std::string algorithm;
    PASSLAB_ASSIGN(algorithm, r.String(p, "algorithm", ""));
    c.precision_config.algorithm = algorithm == "ALG_UNSET" ? "" : algorithm;
  }
  std::string epilogue;
  PASSLAB_ASSIGN(epilogue, r.String(g, "epilogue", "DEFAULT"));
  bool found = false;
  for (const auto& [v, name] : kEpilogues) {
    if (epilogue == name) {
      c.epilogue = v;
      found = true;
    }
  }
  if (!found) {
    return r.Error(StrCat("epilogue \"", epilogue,
                          "\" is not one of DEFAULT, BIAS, RELU, BIAS_RELU, GELU, BIAS_GELU"));
  }
  return c;
}

absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(const HloInstruction& inst) {
  return ParseGemmBackendConfig(inst.raw_backend_config(), Where(inst));
}

absl::StatusOr<GemmCall> AnalyzeGemmCall(const HloInstruction& inst) {
  GemmCall call;
  PASSLAB_ASSIGN(call.config, ParseGemmBackendConfig(inst));
  const std::string where = Where(inst);
  int64_t scratch = 0;
  if (absl::Status s = SplitResult(inst, /*tuple_required=*/false, &call.result_shape, &scratch); !s.ok()) return s;
  const GemmBackendConfig& c = call.config;
  int64_t expected = 2 + (c.beta != 0 ? 1 : 0) + (EpilogueHasBias(c.epilogue) ? 1 : 0);
  if (inst.operand_count() != expected) {
    return absl::InvalidArgumentError(StrCat(where, ": expected ", expected, " operands (lhs, rhs",
                                             c.beta != 0 ? ", c" : "", EpilogueHasBias(c.epilogue) ? ", bias" : "",
                                             ") but found ", inst.operand_count()));
  }
  if (c.beta != 0) call.c_operand = 2;
  if (EpilogueHasBias(c.epilogue)) call.bias_operand = expected - 1;
  if (c.alpha_imag != 0 && !IsComplexType(call.result_shape.element_type())) {
    return absl::InvalidArgumentError(StrCat(where, ": alpha_imag must be 0 for a real gemm"));
  }
  const Shape& ls = inst.operand(0)->shape();
  const Shape& rs = inst.operand(1)->shape();
  if (!ls.IsArray() || !rs.IsArray()) return absl::InvalidArgumentError(StrCat(where, ": lhs and rhs must be arrays"));
  const DotDimensionNumbers& d = c.dot_dimension_numbers;
  // One side without batch dimensions is broadcast over the other's batch
  // (stride 0; GemmBroadcastFoldingRewriter's form, as in XLA).
  bool broadcast_side = d.lhs_batch_dimensions.empty() != d.rhs_batch_dimensions.empty();
  if ((d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size() && !broadcast_side) ||
      d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError(StrCat(where, ": lhs and rhs have different numbers of batch or contracting dims"));
  }
  std::vector<int64_t> lhs_used = d.lhs_batch_dimensions, rhs_used = d.rhs_batch_dimensions;
  lhs_used.insert(lhs_used.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  rhs_used.insert(rhs_used.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  if (!AllDistinctInRange(lhs_used, ls.rank()) || !AllDistinctInRange(rhs_used, rs.rank())) {
    return absl::InvalidArgumentError(StrCat(where, ": dot dimension numbers ", d.ToString(),
                                             " are out of range or repeated for ", ls.ToString(), " x ", rs.ToString()));
  }
  std::vector<int64_t> out_dims;
  size_t batch_rank = std::max(d.lhs_batch_dimensions.size(), d.rhs_batch_dimensions.size());
  for (size_t i = 0; i < batch_rank; ++i) {
    int64_t a = d.lhs_batch_dimensions.empty() ? -1 : ls.dimensions(d.lhs_batch_dimensions[i]);
    int64_t b = d.rhs_batch_dimensions.empty() ? -1 : rs.dimensions(d.rhs_batch_dimensions[i]);
    if (a >= 0 && b >= 0 && a != b) {
      return absl::InvalidArgumentError(StrCat(where, ": batch dimension sizes differ (", a, " vs ", b, ")"));
    }
    out_dims.push_back(std::max(a, b));
    call.batch *= std::max(a, b);
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t a = ls.dimensions(d.lhs_contracting_dimensions[i]), b = rs.dimensions(d.rhs_contracting_dimensions[i]);
    if (a != b) {
      return absl::InvalidArgumentError(StrCat(where, ": contracting dimension sizes differ (", a, " vs ", b, ")"));
    }
    call.k *= a;
  }
  for (int64_t i = 0; i < ls.rank(); ++i) {
    if (std::find(lhs_used.begin(), lhs_used.end(), i) == lhs_used.end()) {
      out_dims.push_back(ls.dimensions(i));
      call.m *= ls.dimensions(i);
    }
  }
  for (int64_t i = 0; i < rs.rank(); ++i) {
    if (std::find(rhs_used.begin(), rhs_used.end(), i) == rhs_used.end()) {
      out_dims.push_back(rs.dimensions(i));
      call.n *= rs.dimensions(i);
    }
  }
  if (out_dims != call.result_shape.dimensions()) {
    return absl::InvalidArgumentError(StrCat(where, ": result ", call.result_shape.ToString(), " does not match ",
                                             ls.ToString(), " x ", rs.ToString(), " with ", d.ToString()));
  }
  if (call.c_operand >= 0 && !inst.operand(call.c_operand)->shape().SameDimensions(call.result_shape)) {
    return absl::InvalidArgumentError(StrCat(where, ": c operand ", inst.operand(call.c_operand)->shape().ToString(),
                                             " does not have the result's dimensions"));
  }
  if (call.bias_operand >= 0) {
    const Shape& b = inst.operand(call.bias_operand)->shape();
    int64_t last = call.result_shape.rank() == 0 ? 1 : call.result_shape.dimensions().back();
    if (!b.IsArray() || b.rank() != 1 || b.dimensions(0) != last) {
      return absl::InvalidArgumentError(StrCat(where, ": bias ", b.ToString(), " must be a vector of ", last,
                                               " elements (the result's last dimension)"));
    }
  }
  return call;
}

// ---------------------------------------------------------------- convolution

const char* ConvActivationName(ConvActivation a) {
  for (const auto& [v, name] : kActivations) {
    if (v == a) return name;
  }
  return "?";
}

const char* ConvAlgorithmName(ConvAlgorithm a) {
  for (const auto& [v, name] : kAlgorithms) {
    if (v == a) return name;
  }
  return "?";
}

std::optional<ConvAlgorithm> ParseConvAlgorithmName(std::string_view name) {
  for (const auto& [v, n] : kAlgorithms) {
    if (name == n) return v;
  }
  return std::nullopt;
}

std::optional<ConvAlgorithm> ConvBackendConfig::algorithm() const {
  for (const auto& [v, name] : kAlgorithms) {
    if (static_cast<int64_t>(v) == algo_id) return v;
  }
  return std::nullopt;
}

std::string ConvBackendConfig::ToJson() const {
  json c;
  c["conv_result_scale"] = conv_result_scale;
  c["side_input_scale"] = side_input_scale;
  c["leakyrelu_alpha"] = leakyrelu_alpha;
  c["activation_mode"] = ConvActivationName(activation_mode);
  json knobs = json::object();
  for (const auto& [k, v] : tuning_knobs) knobs[std::to_string(k)] = std::to_string(v);
  json algo = {{"algo_id", std::to_string(algo_id)},
               {"tuning_knobs", knobs},
               {"workspace_size", std::to_string(workspace_size)}};
  if (std::optional<ConvAlgorithm> a = algorithm()) algo["name"] = ConvAlgorithmName(*a);
  c["algorithm"] = std::move(algo);
  json j;
  j["cudnn_conv_backend_config"] = std::move(c);
  return j.dump();
}

absl::StatusOr<ConvBackendConfig> ParseConvBackendConfig(std::string_view text, std::string_view where) {
  Reader r(where);
  json j;
  PASSLAB_ASSIGN(j, r.Parse(text, "cudnn_conv_backend_config"));
  ConvBackendConfig c;
  PASSLAB_ASSIGN(c.conv_result_scale, r.Double(j, "conv_result_scale", 1));
  PASSLAB_ASSIGN(c.side_input_scale, r.Double(j, "side_input_scale", 0));
  PASSLAB_ASSIGN(c.leakyrelu_alpha, r.Double(j, "leakyrelu_alpha", 0));
  std::string mode;
  PASSLAB_ASSIGN(mode, r.String(j, "activation_mode", "kNone"));
  bool found = false;
  for (const auto& [v, name] : kActivations) {
    if (mode == name) {
      c.activation_mode = v;
      found = true;
    }
  }
  if (!found) {
    return r.Error(StrCat("activation_mode \"", mode, "\" is not one of kNone, kRelu, kRelu6, kElu, kTanh, kSigmoid"));
  }
  if (j.contains("algorithm")) {
    const json& a = j["algorithm"];
    if (!a.is_object()) return r.Error("field \"algorithm\" is not an object");
    PASSLAB_ASSIGN(c.algo_id, r.Int(a, "algo_id", -1));
    PASSLAB_ASSIGN(c.workspace_size, r.Int(a, "workspace_size", 0));
    if (a.contains("tuning_knobs")) {
      const json& knobs = a["tuning_knobs"];
      if (!knobs.is_object()) return r.Error("field \"tuning_knobs\" is not an object");
      for (auto it = knobs.begin(); it != knobs.end(); ++it) {
        int64_t key, value;
        if (!SimpleAtoi(it.key(), &key)) return r.Error(StrCat("tuning knob \"", it.key(), "\" is not an integer"));
        json holder = {{"v", it.value()}};
        PASSLAB_ASSIGN(value, r.Int(holder, "v", 0));
        c.tuning_knobs.emplace_back(key, value);
      }
      std::sort(c.tuning_knobs.begin(), c.tuning_knobs.end());
    }
    // A name, when given, must agree with the id (passlab writes both).
    std::string name;
    PASSLAB_ASSIGN(name, r.String(a, "name", ""));
    if (!name.empty()) {
      std::optional<ConvAlgorithm> by_name = ParseConvAlgorithmName(name);
      if (!by_name) {
        return r.Error(
            StrCat("algorithm \"", name,
                   "\" is not auto, direct, winograd, reference, as-backward-filter, tap-gemm or im2col-gemm"));
      }
      if (a.contains("algo_id") && static_cast<int64_t>(*by_name) != c.algo_id) {
        return r.Error(StrCat("algorithm name \"", name, "\" does not match algo_id ", c.algo_id));
      }
      c.algo_id = static_cast<int64_t>(*by_name);
    }
  }
  return c;
}

absl::StatusOr<ConvBackendConfig> ParseConvBackendConfig(const HloInstruction& inst) {
  return ParseConvBackendConfig(inst.raw_backend_config(), Where(inst));
}

absl::StatusOr<ConvCall> AnalyzeConvCall(const HloInstruction& inst) {
  std::optional<LibraryCallKind> kind = ClassifyLibraryCall(inst);
  const std::string where = Where(inst);
  if (!kind || !IsConvolutionKind(*kind)) return absl::InvalidArgumentError(StrCat(where, ": not a convolution call"));
  ConvCall call;
  call.kind = *kind;
  PASSLAB_ASSIGN(call.config, ParseConvBackendConfig(inst));
  if (absl::Status s = SplitResult(inst, /*tuple_required=*/true, &call.result_shape, &call.scratch_bytes); !s.ok()) {
    return s;
  }
  const HloAttributes& attrs = inst.attrs();
  if (!attrs.conv_dnums.has_value()) return absl::InvalidArgumentError(StrCat(where, ": missing dim_labels"));
  if (!attrs.window.has_value()) return absl::InvalidArgumentError(StrCat(where, ": missing window"));
  call.dnums = *attrs.conv_dnums;
  call.window = *attrs.window;
  call.feature_group_count = attrs.feature_group_count;
  if (attrs.batch_group_count != 1) {
    return absl::UnimplementedError(StrCat(where, ": batch_group_count != 1 is not supported in library calls"));
  }
  int64_t min_operands = 2, max_operands = 2;
  if (*kind == LibraryCallKind::kConvBiasActivationForward) {
    min_operands = 3;
    max_operands = 4;
  }
  if (inst.operand_count() < min_operands || inst.operand_count() > max_operands) {
    return absl::InvalidArgumentError(StrCat(where, ": expected ", min_operands,
                                             min_operands == max_operands ? "" : StrCat(" or ", max_operands),
                                             " operands but found ", inst.operand_count()));
  }
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().IsArray()) return absl::InvalidArgumentError(StrCat(where, ": operands must be arrays"));
  }
  switch (*kind) {
    case LibraryCallKind::kConvForward:
    case LibraryCallKind::kConvBiasActivationForward:
      call.input_shape = inst.operand(0)->shape();
      call.filter_shape = inst.operand(1)->shape();
      call.output_shape = call.result_shape;
      break;
    case LibraryCallKind::kConvBackwardInput:
      call.output_shape = inst.operand(0)->shape();
      call.filter_shape = inst.operand(1)->shape();
      call.input_shape = call.result_shape;
      break;
    case LibraryCallKind::kConvBackwardFilter:
      call.input_shape = inst.operand(0)->shape();
      call.output_shape = inst.operand(1)->shape();
      call.filter_shape = call.result_shape;
      break;
    case LibraryCallKind::kGemm:
    case LibraryCallKind::kCholesky:
    case LibraryCallKind::kTriangularSolve:
      return absl::InternalError(StrCat(where, ": not a convolution"));
  }
  const ConvolutionDimensionNumbers& d = call.dnums;
  int64_t spatial = static_cast<int64_t>(d.input_spatial_dimensions.size());
  int64_t rank = spatial + 2;
  if (call.input_shape.rank() != rank || call.filter_shape.rank() != rank || call.output_shape.rank() != rank ||
      static_cast<int64_t>(d.kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(d.output_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(call.window.dimensions.size()) != spatial) {
    return absl::InvalidArgumentError(StrCat(where, ": dim_labels ", d.ToString(), " and window do not fit input ",
                                             call.input_shape.ToString(), ", filter ", call.filter_shape.ToString(),
                                             ", output ", call.output_shape.ToString()));
  }
  const Shape& in = call.input_shape;
  const Shape& f = call.filter_shape;
  const Shape& out = call.output_shape;
  int64_t g = call.feature_group_count;
  int64_t c = in.dimensions(d.input_feature_dimension), i = f.dimensions(d.kernel_input_feature_dimension),
          o = f.dimensions(d.kernel_output_feature_dimension);
  if (g < 1 || c != i * g || o % g != 0 || out.dimensions(d.output_feature_dimension) != o ||
      in.dimensions(d.input_batch_dimension) != out.dimensions(d.output_batch_dimension)) {
    return absl::InvalidArgumentError(StrCat(where, ": features do not match: input ", in.ToString(), ", filter ",
                                             f.ToString(), ", output ", out.ToString(), ", feature_group_count=", g));
  }
  for (int64_t s = 0; s < spatial; ++s) {
    const WindowDimension& w = call.window.dimensions[s];
    int64_t x = in.dimensions(d.input_spatial_dimensions[s]), k = f.dimensions(d.kernel_spatial_dimensions[s]),
            y = out.dimensions(d.output_spatial_dimensions[s]);
    if (w.size != k || w.stride < 1 || w.window_dilation < 1 || w.base_dilation < 1) {
      return absl::InvalidArgumentError(StrCat(where, ": window ", call.window.ToString(), " does not fit filter ",
                                               f.ToString()));
    }
    int64_t dilated_in = x == 0 ? 0 : (x - 1) * w.base_dilation + 1;
    int64_t dilated_k = (k - 1) * w.window_dilation + 1;
    int64_t span = dilated_in + w.padding_low + w.padding_high - dilated_k;
    int64_t expect = span < 0 ? 0 : span / w.stride + 1;
    if (y != expect) {
      return absl::InvalidArgumentError(StrCat(where, ": spatial dimension ", s, " of the output is ", y,
                                               " but window ", call.window.ToString(), " over ", x, " gives ", expect));
    }
    if (call.kind == LibraryCallKind::kConvBackwardInput || call.kind == LibraryCallKind::kConvBackwardFilter) {
      if (w.base_dilation != 1 || w.window_reversal) {
        return absl::UnimplementedError(
            StrCat(where, ": backward convolutions with base dilation or window reversal are not supported"));
      }
    }
  }
  if (call.kind == LibraryCallKind::kConvBiasActivationForward) {
    call.bias_operand = 2;
    const Shape& b = inst.operand(2)->shape();
    if (b.rank() != 1 || b.dimensions(0) != o) {
      return absl::InvalidArgumentError(StrCat(where, ": bias ", b.ToString(), " must be a vector of ", o, " elements"));
    }
    if (inst.operand_count() == 4) {
      call.side_input_operand = 3;
      if (!inst.operand(3)->shape().SameDimensions(out)) {
        return absl::InvalidArgumentError(StrCat(where, ": side input ", inst.operand(3)->shape().ToString(),
                                                 " must have the output's dimensions ", out.ToString()));
      }
    }
  } else if (call.config.activation_mode != ConvActivation::kNone || call.config.side_input_scale != 0) {
    return absl::InvalidArgumentError(
        StrCat(where, ": activation and side input belong to ", kConvBiasActivationForwardCallTarget));
  }
  return call;
}

// ---------------------------------------------------------------- solvers

namespace {

constexpr std::pair<TriangularTranspose, const char*> kTransposes[] = {
    {TriangularTranspose::kNoTranspose, "NO_TRANSPOSE"},
    {TriangularTranspose::kTranspose, "TRANSPOSE"},
    {TriangularTranspose::kAdjoint, "ADJOINT"},
};

// [batch.., rows, cols] of a solver operand: f32/f64 with rank >= 2.
absl::Status CheckMatrices(const std::string& where, const Shape& s, std::string_view what) {
  if (!s.IsArray() || s.rank() < 2 ||
      (s.element_type() != PrimitiveType::kF32 && s.element_type() != PrimitiveType::kF64)) {
    return absl::InvalidArgumentError(StrCat(where, ": ", what, " must be f32 or f64 matrices [batch.., m, n], not ",
                                             s.ToString()));
  }
  return absl::OkStatus();
}

int64_t BatchOf(const Shape& s) {
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < s.rank(); ++d) batch *= s.dimensions(d);
  return batch;
}

}  // namespace

std::string CholeskyBackendConfigJson(bool lower) {
  json j;
  j["cholesky_backend_config"] = {{"lower", lower}};
  return j.dump();
}

absl::StatusOr<CholeskyCall> AnalyzeCholeskyCall(const HloInstruction& inst) {
  const std::string where = Where(inst);
  Reader r(where);
  json c;
  PASSLAB_ASSIGN(c, r.Parse(inst.raw_backend_config(), "cholesky_backend_config"));
  CholeskyCall call;
  PASSLAB_ASSIGN(call.lower, r.Bool(c, "lower", true));
  if (inst.operand_count() != 1) return absl::InvalidArgumentError(StrCat(where, ": expected one operand (a)"));
  const Shape& a = inst.operand(0)->shape();
  if (absl::Status s = CheckMatrices(where, a, "a"); !s.ok()) return s;
  int64_t rank = a.rank();
  if (a.dimensions(rank - 1) != a.dimensions(rank - 2)) {
    return absl::InvalidArgumentError(StrCat(where, ": a must hold square matrices, not ", a.ToString()));
  }
  const Shape& s = inst.shape();
  std::vector<int64_t> batch_dims(a.dimensions().begin(), a.dimensions().end() - 2);
  if (!s.IsTuple() || s.tuple_shapes_size() != 2 || !s.tuple_shapes(0).SameDimensions(a) ||
      s.tuple_shapes(0).element_type() != a.element_type() ||
      s.tuple_shapes(1).element_type() != PrimitiveType::kS32 || s.tuple_shapes(1).dimensions() != batch_dims) {
    return absl::InvalidArgumentError(StrCat(where, ": result must be (", a.ToString(), ", s32[batch..]), not ",
                                             s.ToString()));
  }
  call.factor_shape = s.tuple_shapes(0);
  call.batch = BatchOf(a);
  call.n = a.dimensions(rank - 1);
  return call;
}

std::string TriangularSolveBackendConfigJson(const TriangularSolveOptions& o) {
  json j;
  const char* transpose = "NO_TRANSPOSE";
  for (const auto& [v, name] : kTransposes) {
    if (v == o.transpose_a) transpose = name;
  }
  j["triangular_solve_backend_config"] = {{"left_side", o.left_side},
                                          {"lower", o.lower},
                                          {"unit_diagonal", o.unit_diagonal},
                                          {"transpose_a", transpose}};
  return j.dump();
}

absl::StatusOr<TriangularSolveCall> AnalyzeTriangularSolveCall(const HloInstruction& inst) {
  const std::string where = Where(inst);
  Reader r(where);
  json c;
  PASSLAB_ASSIGN(c, r.Parse(inst.raw_backend_config(), "triangular_solve_backend_config"));
  TriangularSolveCall call;
  TriangularSolveOptions& o = call.options;
  PASSLAB_ASSIGN(o.left_side, r.Bool(c, "left_side", false));
  PASSLAB_ASSIGN(o.lower, r.Bool(c, "lower", false));
  PASSLAB_ASSIGN(o.unit_diagonal, r.Bool(c, "unit_diagonal", false));
  std::string transpose;
  PASSLAB_ASSIGN(transpose, r.String(c, "transpose_a", "NO_TRANSPOSE"));
  bool found = false;
  for (const auto& [v, name] : kTransposes) {
    if (transpose == name) {
      o.transpose_a = v;
      found = true;
    }
  }
  if (!found) return r.Error(StrCat("transpose_a \"", transpose, "\" is not NO_TRANSPOSE, TRANSPOSE or ADJOINT"));
  if (inst.operand_count() != 2) return absl::InvalidArgumentError(StrCat(where, ": expected two operands (a, b)"));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  if (absl::Status s = CheckMatrices(where, a, "a"); !s.ok()) return s;
  if (absl::Status s = CheckMatrices(where, b, "b"); !s.ok()) return s;
  int64_t rank = b.rank();
  call.m = b.dimensions(rank - 2);
  call.n = b.dimensions(rank - 1);
  call.k = o.left_side ? call.m : call.n;
  bool batch_match = a.rank() == rank && a.element_type() == b.element_type();
  for (int64_t d = 0; batch_match && d + 2 < rank; ++d) batch_match = a.dimensions(d) == b.dimensions(d);
  if (!batch_match || a.dimensions(rank - 1) != call.k || a.dimensions(rank - 2) != call.k) {
    return absl::InvalidArgumentError(StrCat(where, ": a ", a.ToString(), " must be [batch.., ", call.k, ", ", call.k,
                                             "] for b ", b.ToString()));
  }
  if (!inst.shape().IsArray() || !inst.shape().SameDimensions(b) || inst.shape().element_type() != b.element_type()) {
    return absl::InvalidArgumentError(StrCat(where, ": result must have b's shape ", b.ToString()));
  }
  call.batch = BatchOf(b);
  return call;
}

}  // namespace passlab
