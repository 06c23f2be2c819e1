// passlab: the command-line entry point. Each subcommand lives in its own
// file and registers itself through commands.h.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/close_matches.h"
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
  // A mistyped command is named with its close matches (CLI11 alone says
  // only that a subcommand is required).
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::vector<std::string> close = passlab::CloseMatches(argv[1], names);
    std::string all;
    for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "passlab: error: unknown command '%s'%s (commands: %s)\n", argv[1],
                 close.empty() ? "" : ("; did you mean '" + close.front() + "'?").c_str(), all.c_str());
    return 2;
  }
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
