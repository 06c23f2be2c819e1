// The pass registry: one sorted table of every pass passlab has: its XLA-style
// name, C++ class, group, one-line description, whether a runnable program
// needs it (and why), and a factory. The CLI, GUI, ablation runner and reports
// read this table and nothing else.
#ifndef PASSLAB_PASSES_REGISTRY_H_
#define PASSLAB_PASSES_REGISTRY_H_

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct PassRegistryEntry {
  std::string_view name;         // name() of the pass: "dce"
  std::string_view class_name;   // "HloDCE"
  std::string_view group;        // folder under passes/: "simplifiers"
  std::string_view description;  // one line
  bool required = false;         // the program cannot be compiled without it
  std::string_view required_reason;
  std::function<std::unique_ptr<HloPassInterface>()> factory;  // default options
};

// Sorted by name.
const std::vector<PassRegistryEntry>& PassRegistry();
const PassRegistryEntry* FindRegisteredPass(std::string_view name);

}  // namespace passlab

#endif  // PASSLAB_PASSES_REGISTRY_H_
