// Each `passlab` subcommand registers itself on the CLI11 app with one
// Add...Command function; main.cc calls them all. A command's callback returns
// its exit code through the shared CommandResult.
#ifndef PASSLAB_TOOLS_PASSLAB_COMMANDS_H_
#define PASSLAB_TOOLS_PASSLAB_COMMANDS_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

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
absl::StatusOr<std::unique_ptr<HloModule>> LoadHloFile(const std::string& path);
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
// It also rejects a module with an array larger than the memory budget
// (this machine's physical memory, or PASSLAB_MEMORY_BUDGET: bytes with an
// optional K/M/G/T suffix).
absl::StatusOr<std::unique_ptr<HloModule>> LoadVerifiedModule(const std::string& file, const ModelSource& source);
absl::Status CheckMemoryBudget(const HloModule& module, const std::string& what);

// Prints "passlab: error: <message>" to stderr and returns 1.
int ReportError(const absl::Status& status);

// Range checks for numeric flags whose errors say the range in plain
// numbers ("--repeats: must be greater than 0, got 0"; CLI11's own
// PositiveNumber prints the largest double).
CLI::Validator Positive();
CLI::Validator NonNegative();

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_COMMANDS_H_
