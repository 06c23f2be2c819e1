// passlab eval: run a module on the reference evaluator.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "core/eval/arguments.h"
#include "core/eval/hlo_evaluator.h"
#include "core/eval/npy.h"
#include "core/eval/random_inputs.h"
#include "core/ir/str_util.h"
#include "tools/passlab/commands.h"

namespace passlab {
namespace {

struct Summary {
  std::string shape;
  std::string dtype;
  double min = 0, max = 0, mean = 0;
  uint64_t checksum = 0;
};

Summary Summarize(const Literal& l) {
  Summary s;
  s.shape = l.shape().ToString(false);
  s.dtype = std::string(PrimitiveTypeName(l.shape().element_type()));
  s.checksum = XXH3_64bits(l.untyped_data(), static_cast<size_t>(l.size_bytes()));
  if (l.element_count() == 0) return s;
  s.min = HUGE_VAL;
  s.max = -HUGE_VAL;
  // min/max skip NaNs (the mean shows them).
  double sum = 0;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    double v = l.GetDouble(i);
    if (!std::isnan(v)) {
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
    }
    sum += v;
  }
  if (s.min > s.max) s.min = s.max = NAN;
  s.mean = sum / l.element_count();
  return s;
}

void Leaves(const Literal& l, std::vector<const Literal*>& out) {
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) Leaves(e, out);
  } else {
    out.push_back(&l);
  }
}

}  // namespace

void AddEvalCommand(CLI::App& app, CommandResult& result) {
  auto* cmd = app.add_subcommand("eval", "Evaluate a module on the reference interpreter");
  auto file = std::make_shared<std::string>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto seed = std::make_shared<int64_t>(-1);
  auto args_dir = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("FILE", *file, "HLO text or .pb file ('-' for stdin)");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_option("--input", *inputs, "One .npy file per entry parameter, in order");
  cmd->add_option("--args", *args_dir, "A directory of .npy arguments matched to parameters by number (0.npy, arg1.npy, ...)");
  cmd->add_option("--random-inputs", *seed, "Use seeded random arguments instead of --input");
  cmd->add_option("--output-dir", *out_dir, "Write each output leaf as DIR/output_<i>.npy");
  cmd->add_option("--format", *format, "Summary format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([=, &result] {
    auto module = LoadVerifiedModule(*file, *source);
    if (!module.ok()) {
      result.exit_code = ReportError(module.status());
      return;
    }
    const HloComputation* entry = (*module)->entry_computation();
    if ((*seed >= 0) + !inputs->empty() + !args_dir->empty() > 1) {
      result.exit_code = ReportError(
          absl::InvalidArgumentError("give one of --input, --args and --random-inputs, not several"));
      return;
    }
    absl::StatusOr<std::optional<std::vector<Literal>>> embedded = EmbeddedArguments(*file);
    if (!embedded.ok()) {
      result.exit_code = ReportError(embedded.status());
      return;
    }
    absl::StatusOr<std::vector<Literal>> args = std::vector<Literal>();
    if (!inputs->empty()) {
      args = ReadArgumentFiles(*entry, *inputs);
    } else if (*seed >= 0 || !args_dir->empty() || embedded->has_value()) {
      // --random-inputs wins over a snapshot's own arguments.
      ArgumentSource from{.dir = *args_dir, .embedded = embedded->has_value() && *seed < 0 ? &**embedded : nullptr,
                          .seed = static_cast<uint64_t>(std::max<int64_t>(*seed, 0))};
      args = ResolveArguments(*entry, from);
    } else if (entry->num_parameters() > 0) {
      args = absl::InvalidArgumentError(StrCat("the entry computation takes ", entry->num_parameters(),
                                               " parameters: give --input FILE... , --args DIR or --random-inputs SEED"));
    }
    if (!args.ok()) {
      result.exit_code = ReportError(args.status());
      return;
    }
    HloEvaluator evaluator;
    absl::StatusOr<Literal> out = evaluator.Evaluate(**module, *args);
    if (!out.ok()) {
      result.exit_code = ReportError(out.status());
      return;
    }
    std::vector<const Literal*> leaves;
    Leaves(*out, leaves);
    if (!out_dir->empty()) {
      std::error_code ec;
      std::filesystem::create_directories(*out_dir, ec);
      for (size_t i = 0; i < leaves.size(); ++i) {
        if (absl::Status s = WriteNpy(*leaves[i], StrCat(*out_dir, "/output_", i, ".npy")); !s.ok()) {
          result.exit_code = ReportError(s);
          return;
        }
      }
    }
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (size_t i = 0; i < leaves.size(); ++i) {
      Summary s = Summarize(*leaves[i]);
      if (*format == "json") {
        j.push_back({{"output", i}, {"shape", s.shape}, {"dtype", s.dtype}, {"min", s.min}, {"max", s.max},
                     {"mean", s.mean}, {"checksum", fmt::format("{:016x}", s.checksum)}});
      } else {
        fmt::print("output {}: {}  min {:.6g}  max {:.6g}  mean {:.6g}  checksum {:016x}\n", i, s.shape, s.min, s.max,
                   s.mean, s.checksum);
      }
    }
    if (*format == "json") fmt::print("{}\n", j.dump(2));
  });
}

}  // namespace passlab
