#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/ir/str_util.h"
#include "core/text/hlo_parser.h"
#include "core/verify/shape_inference.h"
#include "tools/passlab/commands.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> LoadHloFile(const std::string& path) {
  std::string text;
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return absl::NotFoundError(StrCat(path, ": cannot open file"));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  ParseOptions options;
  options.infer_shape = InferInstructionShape;  // XLA lets instructions omit shapes
  return ParseHloModule(text, path == "-" ? "<stdin>" : path, options);
}

int ReportError(const absl::Status& status) {
  std::string message(status.message());
  // Parser errors already read "FILE:LINE:COL: error: ..."; others get a prefix.
  if (message.find(": error: ") == std::string::npos) message = "passlab: error: " + message;
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

namespace {

CLI::Validator NumberAtLeast(double min, bool strict, const std::string& description) {
  return CLI::Validator(
      [min, strict](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          return StrCat("'", text, "' is not a number");
        }
        if (used != text.size()) return StrCat("'", text, "' is not a number");
        if (strict ? v > min : v >= min) return "";
        return StrCat(strict ? "must be greater than " : "must be at least ", min, ", got ", text);
      },
      description);
}

}  // namespace

CLI::Validator Positive() { return NumberAtLeast(0, /*strict=*/true, "> 0"); }
CLI::Validator NonNegative() { return NumberAtLeast(0, /*strict=*/false, ">= 0"); }

}  // namespace passlab
