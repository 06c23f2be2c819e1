// passlab eval: run a module on the reference evaluator.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <xxhash.h>

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
  auto out_dir = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("FILE", *file, "HLO text file ('-' for stdin)");
  auto source = AddModelSourceOptions(cmd);
  cmd->add_option("--input", *inputs, "One .npy file per entry parameter, in order");
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
    std::vector<Literal> args;
    if (*seed >= 0) {
      if (!inputs->empty()) {
        result.exit_code = ReportError(absl::InvalidArgumentError("--input and --random-inputs cannot be used together"));
        return;
      }
      args = MakeRandomArguments(*entry, static_cast<uint64_t>(*seed));
    } else {
      if (static_cast<int64_t>(inputs->size()) != entry->num_parameters()) {
        result.exit_code = ReportError(absl::InvalidArgumentError(
            StrCat("the entry computation takes ", entry->num_parameters(), " parameters but ", inputs->size(),
                   " --input files were given (or use --random-inputs SEED)")));
        return;
      }
      for (int64_t i = 0; i < entry->num_parameters(); ++i) {
        const HloInstruction* p = entry->parameter_instruction(i);
        absl::StatusOr<Literal> lit = ReadNpy((*inputs)[i]);
        if (!lit.ok()) {
          result.exit_code = ReportError(lit.status());
          return;
        }
        if (!p->shape().IsArray() || lit->shape().dimensions() != p->shape().dimensions()) {
          result.exit_code = ReportError(absl::InvalidArgumentError(
              StrCat("parameter ", i, " ('", p->name(), "') is ", p->shape().ToString(false), " but ", (*inputs)[i],
                     " holds ", lit->shape().ToString(false))));
          return;
        }
        // Types NumPy lacks travel as the dtype NpyDescr names (bf16 and the
        // f8 types as float32, 4-bit ints as int8/uint8) and convert here;
        // any other dtype difference is an error.
        PrimitiveType want = p->shape().element_type(), have = lit->shape().element_type();
        if (have != want) {
          if (NpyDescr(want) != NpyDescr(have)) {
            result.exit_code = ReportError(absl::InvalidArgumentError(
                StrCat("parameter ", i, " ('", p->name(), "') is ", PrimitiveTypeName(want), " (.npy dtype '",
                       NpyDescr(want), "') but ", (*inputs)[i], " holds ", PrimitiveTypeName(have), " ('",
                       NpyDescr(have), "')")));
            return;
          }
          absl::StatusOr<Literal> converted = lit->Convert(want);
          if (!converted.ok()) {
            result.exit_code = ReportError(converted.status());
            return;
          }
          lit = std::move(converted);
        }
        lit->set_shape_layout(p->shape());
        args.push_back(std::move(*lit));
      }
    }
    HloEvaluator evaluator;
    absl::StatusOr<Literal> out = evaluator.Evaluate(**module, args);
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
