// passlab: the command-line entry point. Each subcommand lives in its own
// file and registers itself through commands.h.
#include <CLI/CLI.hpp>

#include "tools/passlab/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "passlab: an XLA-style HLO compiler workbench: toggle, diff and time every pass.",
      "passlab"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "passlab 0.1.0");
  passlab::CommandResult result;
  passlab::AddFmtCommand(app, result);
  passlab::AddVerifyCommand(app, result);
  passlab::AddStatsCommand(app, result);
  passlab::AddEvalCommand(app, result);
  passlab::AddOptCommand(app, result);
  passlab::AddDiffCommand(app, result);
  passlab::AddBisectCommand(app, result);
  passlab::AddRunCommand(app, result);
  passlab::AddModelCommand(app, result);
  passlab::AddAblateCommand(app, result, argc, argv);
  passlab::AddConformCommand(app, result);
  passlab::AddVersionCommand(app, result);
  CLI11_PARSE(app, argc, argv);
  return result.exit_code;
}
