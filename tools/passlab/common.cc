#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <sstream>

#include "core/ir/file_util.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/proto/hlo_proto_import.h"
#include "core/text/hlo_parser.h"
#include "core/verify/shape_inference.h"
#include "tools/passlab/commands.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> LoadHloFile(const std::string& path) {
  if (LooksLikeHloProtoFile(path)) {
    ASSIGN_OR_RETURN(ImportedHlo imported, ImportHloProtoFile(path));
    return std::move(imported.module);
  }
  std::string text;
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    ASSIGN_OR_RETURN(std::string read, ReadFileToString(path));
    text = std::move(read);
  }
  ParseOptions options;
  options.infer_shape = InferInstructionShape;  // XLA lets instructions omit shapes
  return ParseHloModule(text, path == "-" ? "<stdin>" : path, options);
}

absl::StatusOr<std::optional<std::vector<Literal>>> EmbeddedArguments(const std::string& path) {
  if (path.empty() || !LooksLikeHloProtoFile(path)) return std::optional<std::vector<Literal>>();
  ASSIGN_OR_RETURN(ImportedHlo imported, ImportHloProtoFile(path));
  return std::move(imported.arguments);
}

int ReportError(const absl::Status& status) {
  std::string message(status.message());
  // Parser errors already read "FILE:LINE:COL: error: ..."; others get a prefix.
  if (message.find(": error: ") == std::string::npos) message = "passlab: error: " + message;
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

namespace {

// Reads all of `text` as a number into `v`: "" or why it is not one.
std::string ParseNumber(const std::string& text, double& v) {
  size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return StrCat("'", text, "' is not a number");
  }
  if (used != text.size()) return StrCat("'", text, "' is not a number");
  return "";
}

CLI::Validator NumberAtLeast(double min, bool strict, const std::string& description) {
  return CLI::Validator(
      [min, strict](std::string& text) -> std::string {
        double v = 0;
        if (std::string error = ParseNumber(text, v); !error.empty()) return error;
        if (strict ? v > min : v >= min) return "";
        return StrCat(strict ? "must be greater than " : "must be at least ", min, ", got ", text);
      },
      description);
}

}  // namespace

CLI::Validator Positive() { return NumberAtLeast(0, /*strict=*/true, "> 0"); }
CLI::Validator NonNegative() { return NumberAtLeast(0, /*strict=*/false, ">= 0"); }
CLI::Validator AtLeast(double min) { return NumberAtLeast(min, /*strict=*/false, StrCat(">= ", min)); }

CLI::Validator NumberBetween(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        double v = 0;
        if (std::string error = ParseNumber(text, v); !error.empty()) return error;
        if (v < min) return StrCat("must be at least ", min, ", got ", text);
        if (v > max) return StrCat("must be at most ", max, ", got ", text);
        return "";
      },
      StrCat(min, " to ", max));
}

}  // namespace passlab
