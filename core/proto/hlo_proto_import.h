// Reads XLA's HLO protobuf files into passlab's IR: an HloModuleProto (what
// --xla_dump_hlo_as_proto writes), an HloProto holding one, or an
// HloSnapshot (what --xla_dump_hlo_snapshots writes: the module, the
// arguments XLA ran it on, and usually the result), or an
// HloUnoptimizedSnapshot. Binary files are
// recognised by trying the three messages in that order (snapshot first)
// and keeping the first that holds a module with computations; `.pbtxt`
// files are protobuf text format. The schema is core/proto/hlo.proto (a
// subset of XLA's, from its documented field numbers).
//
// The module is rebuilt as HLO text and read by passlab's own parser, so an
// imported module meets exactly the checks a text module does; constants
// take their values from the protos' literals afterwards. Imported:
// computations (fusion bodies included), instructions with opcode, shape
// and layout, operands by id, parameter numbers, tuple index, dimensions,
// slices, padding, windows, convolution and dot dimension numbers, gather
// and scatter dimension numbers, comparison direction and type,
// custom-call target/backend config/API version/side effect, replica
// groups (lists and iota), channel ids, source-target pairs, called
// computations (to_apply, calls, condition/body, branches, select/scatter),
// control predecessors, FFT, RNG, triangular-solve, cholesky, top-k,
// batch-norm attributes, and sharding (replicated, maximal, manual, tiled,
// iota tiles, tuples). Left out: metadata, frontend attributes, precision
// config, schedules, aliasing, layouts' tiles and memory spaces.
//
// Without protobuf at build time (PASSLAB_HAVE_PROTOBUF unset) every entry
// point returns "passlab was built without protobuf".
#ifndef PASSLAB_CORE_PROTO_HLO_PROTO_IMPORT_H_
#define PASSLAB_CORE_PROTO_HLO_PROTO_IMPORT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace passlab {

struct ImportedHlo {
  std::unique_ptr<HloModule> module;
  // "HloSnapshot", "HloUnoptimizedSnapshot" (XLA's multi-host runner's
  // input: the module and each partition's arguments), "HloProto" or
  // "HloModuleProto".
  std::string message;
  // A snapshot's arguments (one per entry parameter; an unoptimized
  // snapshot's partitions' arguments put together under each parameter's
  // sharding) and result, if any.
  std::optional<std::vector<Literal>> arguments;
  std::optional<Literal> result;
  // The module as the HLO text it was rebuilt as (constants elided).
  std::string text;
};

// Whether this build can read protobuf files.
bool HloProtoSupported();

// Whether `path` names a protobuf file by its extension (.pb, .pbtxt) or,
// for other names, its first bytes are not HLO text. Reads the file.
bool LooksLikeHloProtoFile(const std::string& path);

absl::StatusOr<ImportedHlo> ImportHloProtoFile(const std::string& path);
// The arguments of an HloSnapshot file, with or without a module in it.
absl::StatusOr<std::vector<Literal>> ReadHloSnapshotArguments(const std::string& path);
// `bytes` is a binary message, or text format when `text_format`; `name`
// names it in errors.
absl::StatusOr<ImportedHlo> ImportHloProtoBytes(const std::string& bytes, const std::string& name,
                                                bool text_format = false);

}  // namespace passlab

#endif  // PASSLAB_CORE_PROTO_HLO_PROTO_IMPORT_H_
