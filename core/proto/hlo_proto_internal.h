// The protobuf-typed half of the importer, for tests and for code that
// already holds a message (only with PASSLAB_HAVE_PROTOBUF).
#ifndef PASSLAB_CORE_PROTO_HLO_PROTO_INTERNAL_H_
#define PASSLAB_CORE_PROTO_HLO_PROTO_INTERNAL_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/proto/hlo.pb.h"

namespace passlab {

// A LiteralProto's value; its data is in the order of its shape's layout
// (row-major without one). `what` names it in errors.
absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto, const std::string& what);
absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto, const std::string& what);
// The module as HLO text (constants elided as "{...}").
absl::StatusOr<std::string> HloModuleProtoToText(const xla::HloModuleProto& proto);

}  // namespace passlab

#endif  // PASSLAB_CORE_PROTO_HLO_PROTO_INTERNAL_H_
