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

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                         std::string_view filename = "<input>");

// Parses one shape ("f32[2,3]{1,0:T(2,2)}", "(s32[], token[])"). Shapes without
// a layout get the default layout.
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace passlab

#endif  // PASSLAB_CORE_TEXT_HLO_PARSER_H_
