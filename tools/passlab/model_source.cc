// The model flags shared by every subcommand that reads a module.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdlib>
#include <limits>

#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/verify/hlo_verifier.h"
#include "models/model_registry.h"
#include "tools/passlab/commands.h"

namespace passlab {

std::shared_ptr<ModelSource> AddModelSourceOptions(CLI::App* cmd, bool with_model_flag) {
  auto s = std::make_shared<ModelSource>();
  const char* group = "Model (instead of FILE)";
  if (with_model_flag) {
    cmd->add_option("--model", s->model, "Build this registered model (see `passlab model --list`)")->group(group);
  }
  cmd->add_option("--batch", s->batch, "Model: batch size")->group(group)->check(Positive());
  cmd->add_option("--image-size", s->image_size, "Model: image height = width (PINN: grid points per side)")
      ->group(group)->check(Positive());
  cmd->add_option("--classes", s->classes, "Model: number of classes")->group(group)->check(Positive());
  cmd->add_option("--dtype", s->dtype, "Model: element type")->group(group)->check(CLI::IsMember({"f32", "bf16", "f64"}));
  cmd->add_option("--depth", s->depth, "Model: hidden layers (MLP, PINN)")->group(group)->check(Positive());
  cmd->add_option("--model-width,--width", s->width, "Model: hidden width (ResNet: base width, 64)")
      ->group(group)->check(Positive());
  cmd->add_option("--layout", s->layout, "Model: image layout")->group(group)->check(CLI::IsMember({"nhwc", "nchw"}));
  cmd->add_option("--seq-len", s->seq_len, "Model: sequence length")->group(group)->check(Positive());
  cmd->add_option("--heads", s->heads, "Model: attention heads")->group(group)->check(Positive());
  cmd->add_option("--vocab", s->vocab, "Model: vocabulary size")->group(group)->check(Positive());
  cmd->add_flag("--inference", s->inference, "Model: forward-only variant (ResNet)")->group(group);
  return s;
}

absl::StatusOr<std::unique_ptr<HloModule>> BuildModelFromSource(const std::string& name, const ModelSource& s) {
  ModelOptions o;
  if (s.batch > 0) o.batch = s.batch;
  if (s.image_size > 0) o.image_size = s.image_size;
  if (s.classes > 0) o.classes = s.classes;
  if (s.depth > 0) o.depth = s.depth;
  if (s.width > 0) o.width = s.width;
  if (s.seq_len > 0) o.seq_len = s.seq_len;
  if (s.heads > 0) o.heads = s.heads;
  if (s.vocab > 0) o.vocab = s.vocab;
  if (!s.dtype.empty()) o.dtype = *PrimitiveTypeFromName(s.dtype);
  if (!s.layout.empty()) o.layout = s.layout == "nchw" ? ImageLayout::kNchw : ImageLayout::kNhwc;
  o.inference = s.inference;
  return BuildModel(name, o);
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadModule(const std::string& file, const ModelSource& source) {
  if (!source.model.empty() && !file.empty()) {
    return absl::InvalidArgumentError(StrCat("give either FILE or --model, not both ('", file, "' and --model ",
                                             source.model, ")"));
  }
  if (!source.model.empty()) return BuildModelFromSource(source.model, source);
  bool any_model_option = source.batch > 0 || source.image_size > 0 || source.classes > 0 || source.depth > 0 ||
                          source.width > 0 || source.seq_len > 0 || source.heads > 0 || source.vocab > 0 ||
                          !source.dtype.empty() || !source.layout.empty() || source.inference;
  if (any_model_option) return absl::InvalidArgumentError("model options (--batch, --dtype, ...) need --model NAME");
  if (file.empty()) return absl::InvalidArgumentError("no input: give FILE (or '-' for stdin) or --model NAME");
  return LoadHloFile(file);
}

absl::StatusOr<int64_t> MemoryBudgetBytes() {
  if (const char* env = std::getenv("PASSLAB_MEMORY_BUDGET"); env != nullptr && *env != '\0') {
    std::string text(env);
    int64_t scale = 1;
    const char unit = text.back();
    if (unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') {
      scale = int64_t{1} << (unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 40);
      text.pop_back();
    }
    int64_t n = 0;
    if (!SimpleAtoi(text, &n) || n <= 0 || n > std::numeric_limits<int64_t>::max() / scale) {
      return absl::InvalidArgumentError(StrCat("PASSLAB_MEMORY_BUDGET='", env,
                                               "' is not a positive byte count (e.g. 4G, 512M, 1000000)"));
    }
    return n * scale;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(pages) * page;
}

absl::Status CheckMemoryBudget(const HloModule& module, const std::string& what) {
  ASSIGN_OR_RETURN(int64_t budget, MemoryBudgetBytes());
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* inst : c->instructions()) {
      absl::Status over;
      ForEachSubshape(inst->shape(), [&](const Shape& s, const ShapeIndex&) {
        if (!over.ok() || !s.IsArray() || s.byte_size() <= budget) return;
        over = absl::ResourceExhaustedError(
            StrCat(what, ": instruction '", inst->name(), "' has shape ", s.ToString(), " of ", s.byte_size(),
                   " bytes, more than the memory budget of ", budget,
                   " bytes (this machine's memory; set PASSLAB_MEMORY_BUDGET to change it)"));
      });
      if (!over.ok()) return over;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HloModule>> LoadVerifiedModule(const std::string& file, const ModelSource& source,
                                                              ArrayUse use) {
  absl::StatusOr<std::unique_ptr<HloModule>> module = LoadModule(file, source);
  if (!module.ok()) return module;
  const std::string what = file.empty() ? StrCat("model ", source.model) : (file == "-" ? "<stdin>" : file);
  if (absl::Status s = VerifyModule(**module); !s.ok()) {
    return absl::InvalidArgumentError(StrCat(what, ": the input does not verify: ", s.message()));
  }
  if (use == ArrayUse::kShapesOnly) return module;
  RETURN_IF_ERROR(CheckMemoryBudget(**module, what));
  return module;
}

}  // namespace passlab
