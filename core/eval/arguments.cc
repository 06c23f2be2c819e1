#include "core/eval/arguments.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <optional>

#include "core/eval/npy.h"
#include "core/eval/random_inputs.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// The first run of decimal digits in `name`, if any.
std::optional<int64_t> FirstNumber(const std::string& name) {
  size_t begin = 0;
  while (begin < name.size() && !std::isdigit(static_cast<unsigned char>(name[begin]))) ++begin;
  if (begin == name.size()) return std::nullopt;
  size_t end = begin;
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
  if (end - begin > 15) return std::nullopt;
  return std::stoll(name.substr(begin, end - begin));
}

bool IsOutputFile(const std::string& name) { return name.rfind("output", 0) == 0; }

// The .npy files of `dir` (outputs or arguments), each under its number;
// `count` numbers are expected. `what` names the items ("parameter",
// "output").
absl::StatusOr<std::vector<std::string>> MatchNumberedFiles(const std::string& dir, bool outputs, int64_t count,
                                                            const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(StrCat(dir, ": not a directory of .npy files"));
  }
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".npy" || IsOutputFile(name) != outputs) continue;
    names.push_back(name);
  }
  if (ec) return absl::InternalError(StrCat(dir, ": cannot list: ", ec.message()));
  std::sort(names.begin(), names.end());  // deterministic errors
  std::map<int64_t, std::string> by_number;
  for (const std::string& name : names) {
    std::optional<int64_t> number = FirstNumber(name);
    if (!number.has_value()) {
      return absl::InvalidArgumentError(StrCat(dir, "/", name, ": the file name has no ", what,
                                               " number (name files 0.npy, 1.npy, ... or arg0.npy, ...)"));
    }
    if (*number >= count) {
      return absl::InvalidArgumentError(StrCat(dir, "/", name, ": names ", what, " ", *number, " but there ",
                                               count == 1 ? "is" : "are", " only ", count, " ", what,
                                               count == 1 ? "" : "s", " (numbered from 0)"));
    }
    auto [it, inserted] = by_number.emplace(*number, name);
    if (!inserted) {
      return absl::InvalidArgumentError(
          StrCat(dir, ": two files for ", what, " ", *number, ": ", it->second, " and ", name));
    }
  }
  std::vector<std::string> paths;
  for (int64_t i = 0; i < count; ++i) {
    auto it = by_number.find(i);
    if (it == by_number.end()) {
      return absl::NotFoundError(StrCat(dir, ": no file for ", what, " ", i, " (expected ",
                                        outputs ? StrCat("output_", i, ".npy") : StrCat(i, ".npy"),
                                        " or another name whose first number is ", i, ")"));
    }
    paths.push_back(StrCat(dir, "/", it->second));
  }
  return paths;
}

// `value` converted to `want`'s element type where NumPy carries the type
// as another dtype; `what` names the destination for errors.
absl::StatusOr<Literal> FitToShape(Literal value, const Shape& want, const std::string& what,
                                   const std::string& source) {
  if (!want.IsArray()) {
    return absl::InvalidArgumentError(StrCat(what, " is ", want.ToString(false), ", which a .npy file cannot hold (",
                                             source, ")"));
  }
  if (!value.shape().IsArray() || value.shape().dimensions() != want.dimensions()) {
    return absl::InvalidArgumentError(StrCat(what, " is ", want.ToString(false), " but ", source, " holds ",
                                             value.shape().ToString(false)));
  }
  const PrimitiveType type = want.element_type(), have = value.shape().element_type();
  if (have != type) {
    if (NpyDescr(type) != NpyDescr(have)) {
      return absl::InvalidArgumentError(StrCat(what, " is ", PrimitiveTypeName(type), " (.npy dtype '",
                                               NpyDescr(type), "') but ", source, " holds ",
                                               PrimitiveTypeName(have), " ('", NpyDescr(have), "')"));
    }
    ASSIGN_OR_RETURN(Literal converted, value.Convert(type));
    value = std::move(converted);
  }
  value.set_shape_layout(want);
  return value;
}

}  // namespace

absl::StatusOr<Literal> FitArgument(Literal value, const HloComputation& computation, int64_t number,
                                    const std::string& source) {
  const HloInstruction* p = computation.parameter_instruction(number);
  const std::string what = StrCat("parameter ", number, " ('", p->name(), "')");
  if (p->shape().IsTuple()) {
    // Only whole literals (an HLO snapshot's) can feed a tuple parameter.
    if (!value.shape().Compatible(p->shape())) {
      return absl::InvalidArgumentError(StrCat(what, " is ", p->shape().ToString(false), " but ", source,
                                               " holds ", value.shape().ToString(false)));
    }
    value.set_shape_layout(p->shape());
    return value;
  }
  return FitToShape(std::move(value), p->shape(), what, source);
}

absl::StatusOr<std::vector<Literal>> ReadArgumentFiles(const HloComputation& computation,
                                                       const std::vector<std::string>& files) {
  if (static_cast<int64_t>(files.size()) != computation.num_parameters()) {
    return absl::InvalidArgumentError(StrCat("the entry computation takes ", computation.num_parameters(),
                                             " parameters but ", files.size(), " files were given"));
  }
  std::vector<Literal> args;
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    ASSIGN_OR_RETURN(Literal value, ReadNpy(files[i]));
    ASSIGN_OR_RETURN(Literal arg, FitArgument(std::move(value), computation, i, files[i]));
    args.push_back(std::move(arg));
  }
  return args;
}

absl::StatusOr<std::vector<Literal>> ReadArgumentDirectory(const HloComputation& computation, const std::string& dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> files,
      MatchNumberedFiles(dir, /*outputs=*/false, computation.num_parameters(), "parameter"));
  return ReadArgumentFiles(computation, files);
}

absl::StatusOr<std::vector<Literal>> ReadExpectedOutputs(const Shape& result_shape, const std::string& dir) {
  std::vector<Shape> leaves;
  ForEachSubshape(result_shape, [&](const Shape& s, const ShapeIndex&) {
    if (!s.IsTuple()) leaves.push_back(s);
  });
  ASSIGN_OR_RETURN(std::vector<std::string> files,
      MatchNumberedFiles(dir, /*outputs=*/true, static_cast<int64_t>(leaves.size()), "output"));
  std::vector<Literal> out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    ASSIGN_OR_RETURN(Literal value, ReadNpy(files[i]));
    ASSIGN_OR_RETURN(Literal fitted, FitToShape(std::move(value), leaves[i], StrCat("output ", i), files[i]));
    out.push_back(std::move(fitted));
  }
  return out;
}

absl::StatusOr<std::vector<Literal>> ResolveArguments(const HloComputation& computation,
                                                      const ArgumentSource& source, std::string* origin) {
  if (!source.dir.empty()) {
    if (origin != nullptr) *origin = StrCat("arguments from ", source.dir);
    return ReadArgumentDirectory(computation, source.dir);
  }
  if (source.embedded != nullptr) {
    if (static_cast<int64_t>(source.embedded->size()) != computation.num_parameters()) {
      return absl::InvalidArgumentError(StrCat("the file brings ", source.embedded->size(),
                                               " arguments but the entry computation takes ",
                                               computation.num_parameters(), " parameters"));
    }
    std::vector<Literal> args;
    for (int64_t i = 0; i < computation.num_parameters(); ++i) {
      ASSIGN_OR_RETURN(Literal arg,
          FitArgument((*source.embedded)[i], computation, i, StrCat("the file's argument ", i)));
      args.push_back(std::move(arg));
    }
    if (origin != nullptr) *origin = "the arguments recorded in the file";
    return args;
  }
  if (origin != nullptr) *origin = StrCat("random arguments (seed ", source.seed, ")");
  return MakeRandomArguments(computation, source.seed);
}

}  // namespace passlab
