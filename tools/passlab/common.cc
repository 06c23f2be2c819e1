#include <cstdio>
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

}  // namespace passlab
