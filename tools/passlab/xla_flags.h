// XLA's own flag spellings on `opt`, `run` and `ablate`, from the command
// line or the XLA_FLAGS environment variable (as a JAX user sets it):
//   --xla_disable_hlo_passes=a,b      = --disable a,b
//   --xla_enable_hlo_passes_only=a,b  = --enable-only a,b
//   --xla_dump_to=DIR                 module_NNNN.<name>.before_optimizations.txt
//                                     and .after_optimizations.txt in DIR
//   --xla_dump_hlo_pass_re=RE         also the module between passes whose
//                                     name RE matches (partially, as XLA):
//                                     module_NNNN.<name>.SSSS.<pipeline>.after_<pass>.before_<next>.txt
//   --xla_gpu_enable_command_buffer=  (empty) `run --device cuda` launches
//                                     each step thunk by thunk instead of as
//                                     one CUDA graph; any command list: graphs
// Any other XLA flag is named in one warning as not modelled, and ignored.
// In a pass list, the name of a real XLA pass that passlab does not model
// is a warning (XLA ignores names it does not know); a name that is no pass
// at all stays an error of the pass filter, with close matches.
#ifndef PASSLAB_TOOLS_PASSLAB_XLA_FLAGS_H_
#define PASSLAB_TOOLS_PASSLAB_XLA_FLAGS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/pass_observer.h"

namespace CLI {
class App;
}

namespace passlab {

struct XlaFlags {
  std::string disable;
  std::string enable_only;
  std::string dump_to;
  std::string dump_pass_re;
  std::optional<std::string> command_buffer;  // --xla_gpu_enable_command_buffer ("" = off)
  std::vector<std::string> not_modelled;  // other --xla_* flags, ignored
};

// Parses XLA_FLAGS text: whitespace-separated "--xla_name=value" or
// "--xla_name" (a boolean). A token that is not a flag is an error.
absl::StatusOr<XlaFlags> ParseXlaFlags(std::string_view text);

// Adds the four modelled flags to a subcommand.
void AddXlaFlagOptions(CLI::App* cmd, XlaFlags& flags);

// XLA_FLAGS from the environment overlaid with the command line's (which
// win), merged into the subcommand's own --disable/--enable-only (an XLA
// list and a passlab list of the same kind are joined). Prints the
// warnings (not modelled flags and passes) to stderr.
absl::StatusOr<XlaFlags> ResolveXlaFlags(const XlaFlags& command_line, std::string& disable,
                                         std::string& enable_only);

// Writes XLA-named dumps: the module before and after the pipeline
// (WriteBefore/WriteAfter) and, with a pass regex, between passes.
class XlaDumpObserver : public PassObserver {
 public:
  static absl::StatusOr<std::unique_ptr<XlaDumpObserver>> Create(const XlaFlags& flags);
  ~XlaDumpObserver() override;

  absl::Status WriteBefore(const HloModule& module);
  absl::Status WriteAfter(const HloModule& module);
  absl::Status BeforePass(const PassRunInfo& info, const HloModule& module) override;
  int64_t files_written() const { return files_; }

 private:
  XlaDumpObserver() = default;
  absl::Status Write(const HloModule& module, const std::string& suffix);
  std::string NextStep();  // "0003": XLA numbers a module's dumps in order
  std::string dir_;
  struct Regex;
  std::unique_ptr<Regex> re_;
  std::string last_pass_ = "pipeline-start";
  std::string last_pipeline_;
  int64_t step_ = 0;
  int64_t files_ = 0;
};

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_XLA_FLAGS_H_
