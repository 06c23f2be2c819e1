// passlab model: list the registered models or write one as HLO text.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/ir/file_util.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"
#include "models/model_registry.h"
#include "tools/passlab/commands.h"

namespace passlab {

void AddModelCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("model", "List the built-in models or write one as HLO text");
  auto name = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto list = std::make_shared<bool>(false);
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("NAME", *name, "Model name (see --list)");
  cmd->add_flag("--list", *list, "List the models, their options and defaults");
  cmd->add_option("--format", *format, "Output format of --list")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-o,--output", *out, "Write to this file instead of stdout ('-': stdout)");
  auto source = AddModelSourceOptions(cmd, /*with_model_flag=*/false);
  cmd->callback([=, &result] {
    if (*list) {
      if (*format == "json") {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const ModelInfo& m : ModelRegistry()) {
          j.push_back({{"name", m.name}, {"description", m.description}, {"options", m.options}, {"defaults", m.defaults}});
        }
        fmt::print("{}\n", j.dump(2));
        return;
      }
      for (const ModelInfo& m : ModelRegistry()) {
        fmt::print("{:<20} {}\n{:<20}   options: --{}\n{:<20}   defaults: {}\n", m.name, m.description, "",
                   Join(m.options, " --"), "", m.defaults);
      }
      return;
    }
    if (name->empty()) {
      result.exit_code = ReportError(absl::InvalidArgumentError("model: give a NAME or --list"));
      return;
    }
    auto module = BuildModelFromSource(*name, *source);
    if (!module.ok()) {
      result.exit_code = ReportError(module.status());
      return;
    }
    std::string text = PrintModule(**module);
    if (out->empty() || *out == "-") {  // "-": stdout, as FILE "-" is stdin
      fmt::print("{}", text);
      return;
    }
    if (absl::Status s = WriteStringToFile(*out, text); !s.ok()) result.exit_code = ReportError(s);
  });
}

}  // namespace passlab
