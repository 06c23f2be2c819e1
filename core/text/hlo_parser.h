// Parser for XLA's HLO text format: modules with header attributes,
// headerless "ENTRY" texts and bare computation lists (the last one is the
// entry, as XLA treats them). Accepts everything the printer emits plus XLA's
// other spellings (no '%', no operand shapes, shapes without layouts,
// op-start/op-done async sugar, true_computation/false_computation, ...).
//
// Errors are "FILE:LINE:COL: error: MESSAGE" naming the offending token; no
// input crashes the parser (it is fuzzed).
#ifndef PASSLAB_CORE_TEXT_HLO_PARSER_H_
#define PASSLAB_CORE_TEXT_HLO_PARSER_H_

#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

struct ParseOptions {
  // XLA lets instructions omit their shape ("gte = get-tuple-element(t),
  // index=0"); the parser then asks this function (shape inference lives in
  // core/verify, a layer the parser may not depend on). Without it such text
  // is an error.
  std::function<absl::StatusOr<Shape>(const HloInstruction&)> infer_shape;
};

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                         std::string_view filename = "<input>",
                                                         const ParseOptions& options = {});

// Parses one shape ("f32[2,3]{1,0:T(2,2)}", "(s32[], token[])"). Shapes without
// a layout get the default layout.
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PARSER_H_
