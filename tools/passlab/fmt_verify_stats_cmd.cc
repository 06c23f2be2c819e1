// passlab fmt | verify | stats: the commands that only read HLO.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "core/ir/file_util.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "tools/passlab/commands.h"

namespace passlab {
namespace {

struct ModuleStats {
  std::map<std::string, int64_t> opcode_counts;  // sorted: deterministic output
  int64_t instructions = 0;
  int64_t computations = 0;
  int64_t fusion_computations = 0;
  int64_t fusions = 0;
  int64_t parameter_bytes = 0;
  int64_t output_bytes = 0;
  int64_t constant_bytes = 0;
};

ModuleStats ComputeStats(const HloModule& module) {
  ModuleStats s;
  for (const HloComputation* c : module.computations()) {
    ++s.computations;
    if (c->IsFusionComputation()) ++s.fusion_computations;
    for (const HloInstruction* inst : c->instructions()) {
      ++s.instructions;
      ++s.opcode_counts[std::string(HloOpcodeString(inst->opcode()))];
      if (inst->opcode() == HloOpcode::kFusion) ++s.fusions;
      if (inst->opcode() == HloOpcode::kConstant) s.constant_bytes += inst->shape().total_leaf_bytes();
    }
  }
  if (const HloComputation* entry = module.entry_computation()) {
    for (const HloInstruction* p : entry->parameter_instructions()) {
      s.parameter_bytes += p->shape().total_leaf_bytes();
    }
    s.output_bytes = entry->root_instruction()->shape().total_leaf_bytes();
  }
  return s;
}

}  // namespace

void AddFmtCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("fmt", "Print an HLO file in canonical XLA text form");
  auto file = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("FILE", *file, "HLO text file ('-' for stdin)");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_option("-o,--output", *out, "Write to this file instead of stdout ('-': stdout)");
  cmd->callback([file, out, source, &result] {
    auto module = LoadModule(*file, *source);
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

void AddVerifyCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("verify", "Check an HLO module's shapes, attributes and structure");
  auto file = std::make_shared<std::string>();
  auto layout_sensitive = std::make_shared<bool>(false);
  cmd->add_option("FILE", *file, "HLO text file ('-' for stdin)");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_flag("--layout-sensitive", *layout_sensitive,
                "Also require operand and result layouts to agree where XLA does");
  cmd->callback([file, layout_sensitive, source, &result] {
    auto module = LoadModule(*file, *source);
    if (!module.ok()) {
      result.exit_code = ReportError(module.status());
      return;
    }
    VerifierOptions options;
    options.layout_sensitive = *layout_sensitive;
    if (absl::Status s = VerifyModule(**module, options); !s.ok()) {
      result.exit_code = ReportError(s);
      return;
    }
    // A shape over the memory budget is valid (opt takes it); what would
    // allocate it (eval, run) refuses it, so verify says so and passes.
    // A budget that does not parse is still an error.
    if (absl::Status s = CheckMemoryBudget(**module, file->empty() ? source->model : *file); !s.ok()) {
      if (s.code() != absl::StatusCode::kResourceExhausted) {
        result.exit_code = ReportError(s);
        return;
      }
      std::fprintf(stderr, "passlab: warning: %s; eval and run would refuse it\n", std::string(s.message()).c_str());
    }
    fmt::print("{}: OK ({} computations, {} instructions)\n", file->empty() ? source->model : *file, (*module)->computation_count(),
               (*module)->instruction_count());
  });
}

void AddStatsCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("stats", "Count instructions by opcode, fusions and I/O bytes");
  auto file = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("FILE", *file, "HLO text file ('-' for stdin)");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([file, format, source, &result] {
    auto module = LoadModule(*file, *source);
    if (!module.ok()) {
      result.exit_code = ReportError(module.status());
      return;
    }
    ModuleStats s = ComputeStats(**module);
    if (*format == "json") {
      nlohmann::ordered_json j;
      j["module"] = (*module)->name();
      j["computations"] = s.computations;
      j["fusion_computations"] = s.fusion_computations;
      j["instructions"] = s.instructions;
      j["fusions"] = s.fusions;
      j["parameter_bytes"] = s.parameter_bytes;
      j["output_bytes"] = s.output_bytes;
      j["constant_bytes"] = s.constant_bytes;
      j["opcodes"] = s.opcode_counts;
      fmt::print("{}\n", j.dump(2));
      return;
    }
    fmt::print("module            {}\n", (*module)->name());
    fmt::print("computations      {} ({} fusion)\n", s.computations, s.fusion_computations);
    fmt::print("instructions      {}\n", s.instructions);
    fmt::print("fusions           {}\n", s.fusions);
    fmt::print("parameter bytes   {}\n", s.parameter_bytes);
    fmt::print("output bytes      {}\n", s.output_bytes);
    fmt::print("constant bytes    {}\n", s.constant_bytes);
    fmt::print("\nopcode                          count\n");
    std::vector<std::pair<std::string, int64_t>> rows(s.opcode_counts.begin(), s.opcode_counts.end());
    std::stable_sort(rows.begin(), rows.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [op, n] : rows) fmt::print("{:<30} {:>7}\n", op, n);
  });
}

}  // namespace passlab
