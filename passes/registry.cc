#include "passes/registry.h"

#include <algorithm>

#include "passes/simplifiers/hlo_cse.h"
#include "passes/simplifiers/hlo_dce.h"

namespace passlab {
namespace {

template <typename T>
std::function<std::unique_ptr<HloPassInterface>()> Factory() {
  return [] { return std::make_unique<T>(); };
}

std::vector<PassRegistryEntry> MakeRegistry() {
  std::vector<PassRegistryEntry> r = {
      {"cse", "HloCSE", "simplifiers",
       "Common-subexpression elimination: merges identical instructions and equal constants.", false,
       "", Factory<HloCSE>()},
      {"dce", "HloDCE", "simplifiers",
       "Dead-code elimination: removes unused side-effect-free instructions and computations.",
       false, "", Factory<HloDCE>()},
  };
  std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return r;
}

}  // namespace

const std::vector<PassRegistryEntry>& PassRegistry() {
  static const auto* registry = new std::vector<PassRegistryEntry>(MakeRegistry());
  return *registry;
}

const PassRegistryEntry* FindRegisteredPass(std::string_view name) {
  for (const PassRegistryEntry& e : PassRegistry()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace passlab
