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

// Reads and parses an HLO file ("-" = stdin); errors name FILE:LINE:COL.
absl::StatusOr<std::unique_ptr<HloModule>> LoadHloFile(const std::string& path);
// Prints "passlab: error: <message>" to stderr and returns 1.
int ReportError(const absl::Status& status);

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_COMMANDS_H_
