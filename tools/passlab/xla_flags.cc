#include "tools/passlab/xla_flags.h"

#include <CLI/CLI.hpp>
#include <re2/re2.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"
#include "passes/registry.h"
#include "passes/xla_pass_names.h"

namespace passlab {
namespace {

// Drops the names of real XLA passes passlab does not model from a
// comma-separated pass list, warning once for each; keeps everything else
// (filters with ids, paths or regexes, passlab's names, and names that are
// no pass at all, which the pass filter rejects with close matches).
std::string DropUnmodelledPasses(const std::string& list, const char* flag) {
  std::string kept;
  for (std::string_view term : SplitAny(list, ",")) {
    if (term.empty()) continue;
    std::string name(term.substr(0, term.find(':')));
    if (FindRegisteredPass(name) == nullptr && IsXlaPassName(name)) {
      std::fprintf(stderr, "passlab: warning: %s: '%s' is an XLA pass passlab does not model; ignored\n", flag,
                   name.c_str());
      continue;
    }
    if (!kept.empty()) kept += ",";
    kept += term;
  }
  return kept;
}

void Overlay(std::string& into, const std::string& value) {
  if (!value.empty()) into = value;
}

std::string JoinLists(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "," + b;
}

}  // namespace

absl::StatusOr<XlaFlags> ParseXlaFlags(std::string_view text) {
  XlaFlags flags;
  for (std::string_view token : SplitAny(text, " \t\n")) {
    if (token.empty()) continue;
    if (token.substr(0, 2) != "--") {
      return absl::InvalidArgumentError(StrCat("XLA_FLAGS: '", token, "' is not a flag (--xla_name=value)"));
    }
    std::string_view body = token.substr(2);
    size_t eq = body.find('=');
    std::string name(body.substr(0, eq));
    std::string value(eq == std::string_view::npos ? "true" : body.substr(eq + 1));
    if (name == "xla_disable_hlo_passes") {
      flags.disable = value;
    } else if (name == "xla_enable_hlo_passes_only") {
      flags.enable_only = value;
    } else if (name == "xla_dump_to") {
      flags.dump_to = value;
    } else if (name == "xla_dump_hlo_pass_re") {
      flags.dump_pass_re = value;
    } else if (name == "xla_gpu_enable_command_buffer") {
      flags.command_buffer = eq == std::string_view::npos ? "" : value;
    } else {
      flags.not_modelled.push_back("--" + name);
    }
  }
  return flags;
}

void AddXlaFlagOptions(CLI::App* cmd, XlaFlags& flags) {
  cmd->add_option("--xla_disable_hlo_passes", flags.disable, "XLA's spelling of --disable (also read from XLA_FLAGS)");
  cmd->add_option("--xla_enable_hlo_passes_only", flags.enable_only, "XLA's spelling of --enable-only");
  cmd->add_option("--xla_dump_to", flags.dump_to, "Dump the module before/after optimization here, named as XLA names it");
  cmd->add_option("--xla_dump_hlo_pass_re", flags.dump_pass_re,
                  "With --xla_dump_to: also dump between passes whose name matches this regex");
  cmd->add_option("--xla_gpu_enable_command_buffer", flags.command_buffer,
                  "--device cuda: empty runs steps thunk by thunk; otherwise (the default) each step is one CUDA graph")
      ->expected(0, 1);
}

absl::StatusOr<XlaFlags> ResolveXlaFlags(const XlaFlags& command_line, std::string& disable,
                                         std::string& enable_only) {
  XlaFlags flags;
  if (const char* env = std::getenv("XLA_FLAGS"); env != nullptr) {
    ASSIGN_OR_RETURN(XlaFlags parsed, ParseXlaFlags(env));
    flags = parsed;
  }
  Overlay(flags.disable, command_line.disable);
  Overlay(flags.enable_only, command_line.enable_only);
  Overlay(flags.dump_to, command_line.dump_to);
  Overlay(flags.dump_pass_re, command_line.dump_pass_re);
  if (command_line.command_buffer.has_value()) flags.command_buffer = command_line.command_buffer;
  if (!flags.not_modelled.empty()) {
    std::set<std::string> unique(flags.not_modelled.begin(), flags.not_modelled.end());
    std::fprintf(stderr, "passlab: warning: XLA_FLAGS: not modelled by passlab, ignored: %s\n",
                 Join(unique, " ").c_str());
  }
  if (!flags.disable.empty()) {
    disable = JoinLists(disable, DropUnmodelledPasses(flags.disable, "--xla_disable_hlo_passes"));
  }
  if (!flags.enable_only.empty()) {
    std::string kept = DropUnmodelledPasses(flags.enable_only, "--xla_enable_hlo_passes_only");
    // Every name was an XLA pass passlab lacks: nothing passlab has may run.
    enable_only = JoinLists(enable_only, kept.empty() ? "^$" : kept);
  }
  if (!flags.dump_pass_re.empty() && flags.dump_to.empty()) {
    return absl::InvalidArgumentError("--xla_dump_hlo_pass_re needs --xla_dump_to (a directory)");
  }
  return flags;
}

struct XlaDumpObserver::Regex {
  explicit Regex(const std::string& pattern) : re(pattern, RE2::Quiet) {}
  RE2 re;
};

XlaDumpObserver::~XlaDumpObserver() = default;

absl::StatusOr<std::unique_ptr<XlaDumpObserver>> XlaDumpObserver::Create(const XlaFlags& flags) {
  std::unique_ptr<XlaDumpObserver> d(new XlaDumpObserver());
  d->dir_ = flags.dump_to;
  std::error_code ec;
  std::filesystem::create_directories(d->dir_, ec);
  if (ec) return absl::InvalidArgumentError(StrCat("--xla_dump_to: cannot create ", d->dir_, ": ", ec.message()));
  if (!flags.dump_pass_re.empty()) {
    d->re_ = std::make_unique<Regex>(flags.dump_pass_re);
    if (!d->re_->re.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--xla_dump_hlo_pass_re: bad regex '", flags.dump_pass_re, "': ", d->re_->re.error()));
    }
  }
  return d;
}

absl::Status XlaDumpObserver::Write(const HloModule& module, const std::string& suffix) {
  // XLA's FilenameFor: module_<unique id>.<module name>.<suffix>; passlab
  // optimizes one module per process, so its id is 0.
  // XLA sanitizes the whole name (dump.cc: "layout assignment" -> "layout_assignment").
  std::string name = SanitizeFileName(StrCat("module_0000.", module.name(), ".", suffix, ".txt"));
  std::ofstream out(std::filesystem::path(dir_) / name);
  out << PrintModule(module);
  if (!out) return absl::InternalError(StrCat("--xla_dump_to: cannot write ", dir_, "/", name));
  ++files_;
  return absl::OkStatus();
}

std::string XlaDumpObserver::NextStep() {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%04lld", static_cast<long long>(step_++));
  return buf;
}

absl::Status XlaDumpObserver::WriteBefore(const HloModule& module) {
  return Write(module, "before_optimizations");
}

absl::Status XlaDumpObserver::WriteAfter(const HloModule& module) {
  if (re_ != nullptr && RE2::PartialMatch(last_pass_, re_->re)) {
    std::string suffix = StrCat(NextStep(), ".", last_pipeline_, ".after_", last_pass_, ".before_pipeline-end");
    if (absl::Status s = Write(module, suffix); !s.ok()) {
      return s;
    }
  }
  return Write(module, "after_optimizations");
}

absl::Status XlaDumpObserver::BeforePass(const PassRunInfo& info, const HloModule& module) {
  if (re_ == nullptr) return absl::OkStatus();
  std::string previous = last_pass_;
  last_pass_ = info.pass_name;
  std::string_view path = info.pipeline_path;
  last_pipeline_ = std::string(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  if (!RE2::PartialMatch(previous, re_->re) && !RE2::PartialMatch(info.pass_name, re_->re)) return absl::OkStatus();
  return Write(module, StrCat(NextStep(), ".", last_pipeline_, ".after_", previous, ".before_", info.pass_name));
}

}  // namespace passlab
