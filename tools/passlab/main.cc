// passlab: the command-line entry point. Each subcommand lives in its own
// file and registers itself through commands.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <new>
#include <stdexcept>

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    // The last line of defence: inputs are checked against the memory
    // budget first (LoadVerifiedModule); an allocation that still fails is an
    // error, never an abort.
    std::fprintf(stderr, "passlab: error: out of memory (an allocation failed; see PASSLAB_MEMORY_BUDGET)\n");
    return 1;
  } catch (const std::length_error& e) {
    std::fprintf(stderr, "passlab: error: an allocation too large to represent: %s\n", e.what());
    return 1;
  }
  return result.exit_code;
}
