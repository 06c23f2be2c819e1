// Each `passlab` subcommand registers itself on the CLI11 app with one
// Add...Command function; main.cc calls them all. A command's callback returns
// its exit code through the shared CommandResult.
#ifndef PASSLAB_TOOLS_PASSLAB_COMMANDS_H_
#define PASSLAB_TOOLS_PASSLAB_COMMANDS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"
#include "core/ir/literal.h"

namespace CLI {
class App;
class Validator;
}

namespace passlab {

struct CommandResult {
  int exit_code = 0;
};

void AddFmtCommand(CLI::App& app, CommandResult& result);
void AddVerifyCommand(CLI::App& app, CommandResult& result);
void AddStatsCommand(CLI::App& app, CommandResult& result);
void AddEvalCommand(CLI::App& app, CommandResult& result);
void AddOptCommand(CLI::App& app, CommandResult& result);
void AddDiffCommand(CLI::App& app, CommandResult& result);
void AddVersionCommand(CLI::App& app, CommandResult& result);
void AddBisectCommand(CLI::App& app, CommandResult& result);
void AddRunCommand(CLI::App& app, CommandResult& result);
void AddModelCommand(CLI::App& app, CommandResult& result);
void AddAblateCommand(CLI::App& app, CommandResult& result, int argc, char** argv);
void AddConformCommand(CLI::App& app, CommandResult& result);

// Reads and parses an HLO file ("-" = stdin); errors name FILE:LINE:COL.
// XLA's protobuf files (.pb, .pbtxt: HloSnapshot, HloProto or
// HloModuleProto; core/proto/hlo_proto_import.h) are imported.
absl::StatusOr<std::unique_ptr<HloModule>> LoadHloFile(const std::string& path);
// The arguments FILE brought with it (an HLO snapshot's), if any.
absl::StatusOr<std::optional<std::vector<Literal>>> EmbeddedArguments(const std::string& path);
// `--model NAME [--batch N --image-size N ...]`: a registered model instead
// of a FILE (model_source.cc). AddModelSourceOptions adds the flags to a
// subcommand; LoadModule builds the model when --model was given, else reads
// FILE; giving both or neither is an error.
struct ModelSource {
  std::string model;
  int64_t batch = 0, image_size = 0, classes = 0, depth = 0, width = 0, seq_len = 0, heads = 0, vocab = 0;
  std::string dtype, layout;
  bool inference = false;
};
std::shared_ptr<ModelSource> AddModelSourceOptions(CLI::App* cmd, bool with_model_flag = true);
absl::StatusOr<std::unique_ptr<HloModule>> BuildModelFromSource(const std::string& name, const ModelSource& source);
absl::StatusOr<std::unique_ptr<HloModule>> LoadModule(const std::string& file, const ModelSource& source);
// LoadModule, then the verifier (XLA verifies a module before compiling
// it): what evaluates, optimizes or runs a module never sees one whose
// shapes disagree ("FILE: the input does not verify: ...").
// A command that allocates the module's arrays (eval, run, ablate's runs,
// bisect) also rejects a module with an array larger than the memory budget
// (this machine's physical memory, or PASSLAB_MEMORY_BUDGET: bytes with an
// optional K/M/G/T suffix); one that only reads and transforms it (opt:
// XLA's benchmark modules have 34 GB parameters) does not. The verifier's
// 64-bit overflow check applies to both.
enum class ArrayUse { kAllocates, kShapesOnly };
absl::StatusOr<std::unique_ptr<HloModule>> LoadVerifiedModule(const std::string& file, const ModelSource& source,
                                                              ArrayUse use = ArrayUse::kAllocates);
absl::Status CheckMemoryBudget(const HloModule& module, const std::string& what);

// Prints "passlab: error: <message>" to stderr and returns 1.
int ReportError(const absl::Status& status);

// Range checks for numeric flags whose errors say the range in plain
// numbers ("--repeats: must be greater than 0, got 0"; CLI11's own
// PositiveNumber prints the largest double).
CLI::Validator Positive();
CLI::Validator NonNegative();
CLI::Validator AtLeast(double min);                // "must be at least 2, got 0"
CLI::Validator NumberBetween(double min, double max);  // "... at least 0" / "... at most 50, got 70"

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_COMMANDS_H_
