// The pass registry: one sorted table of every pass passlab has: its XLA-style
// name, C++ class, group, one-line description, whether a runnable program
// needs it (and why), and a factory. The CLI, GUI, ablation runner and reports
// read this table and nothing else.
#ifndef PASSLAB_PASSES_REGISTRY_H_
#define PASSLAB_PASSES_REGISTRY_H_

#include <functional>
#include <map>
#include <string>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/hlo_pass_interface.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/pass/pass_options.h"

namespace passlab {

struct PassRegistryEntry {
  std::string_view name;         // name() of the pass: "dce"
  std::string_view class_name;   // "HloDCE"
  std::string_view group;        // folder under passes/: "simplifiers"
  std::string_view description;  // one line
  bool required = false;         // the program cannot be compiled without it
  std::string_view required_reason;
  std::function<std::unique_ptr<HloPassInterface>()> factory;  // default options
  // The options the pass takes, by XLA's names, and the factory that builds
  // it with them (values already checked against `options`). A pass without
  // options leaves both empty.
  std::vector<PassOptionSpec> options = {};
  std::function<std::unique_ptr<HloPassInterface>(const PassOptionValues&)> configured_factory = nullptr;

  // An empty set of this pass's options (Set checks names and values).
  PassOptionValues NewOptions() const { return PassOptionValues(options); }
  // The pass with these options (the default factory when none is set).
  std::unique_ptr<HloPassInterface> Create(const PassOptionValues& values) const;
};

// Sorted by name.
const std::vector<PassRegistryEntry>& PassRegistry();
const PassRegistryEntry* FindRegisteredPass(std::string_view name);

// The pass called `name` (XLA's name()) built with `values`; an unknown name
// is an error with close matches.
absl::StatusOr<std::unique_ptr<HloPassInterface>> CreateRegisteredPass(std::string_view name,
                                                                       const PassOptionValues& values);

// --pass-option settings ("algsimp.enable_conv_simplification=false"), by
// pass: each name and value checked against the pass's declared options.
using PassOptionOverrides = std::map<std::string, PassOptionValues>;
absl::StatusOr<PassOptionOverrides> ParsePassOptionOverrides(const std::vector<std::string>& settings);
// "algsimp.enable_conv_simplification=false,..." for manifests and reports.
std::string FormatPassOptionOverrides(const PassOptionOverrides& overrides);

// Rebuilds every occurrence of each overridden pass in `pipeline` from the
// registry with those options (XLA's defaults for the options not given);
// an error when the pipeline runs no such pass.
absl::Status ApplyPassOptions(HloPassPipeline& pipeline, const PassOptionOverrides& overrides);

// XLA's --xla_disable_hlo_passes for an ablation sweep: the passes and
// sub-pipelines with these names taken out of the pipeline before it is
// planned and run (so that no variant runs them); returns how many.
int64_t RemovePassesByName(HloPassPipeline& pipeline, const std::vector<std::string>& names);

}  // namespace passlab

#endif  // PASSLAB_PASSES_REGISTRY_H_
