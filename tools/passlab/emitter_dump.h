// --emitter-dump DIR, shared by `passlab run` and `passlab opt`: for every
// kernel the backend compiles (the CPU's, or with `run --device cuda` the
// GPU code generator's), DIR/<kernel>/00.input.mlir (the emitted MLIR),
// then NN.<pass>.mlir after every emitter pass and NN.<pass>.diff
// (unified) for each pass that changed the kernel's MLIR, like the HLO
// pass dumps; DIR/index.txt lists the kernels with the passes that changed
// each.
#ifndef PASSLAB_TOOLS_PASSLAB_EMITTER_DUMP_H_
#define PASSLAB_TOOLS_PASSLAB_EMITTER_DUMP_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/codegen/cpu_kernel_compiler.h"
#include "core/codegen/gpu_kernel_compiler.h"

namespace passlab {

class EmitterDump {
 public:
  explicit EmitterDump(std::string dir) : dir_(std::move(dir)) {}
  // Points `options`' observer here (and turns the kernel cache off, so
  // every kernel's pipeline runs and is dumped). `this` must outlive the
  // compiles.
  void Attach(CpuCompileOptions& options);
  void Attach(GpuCompileOptions& options);  // the same for the GPU code generator
  // The first write error, if any; then writes index.txt.
  absl::Status Finish();
  size_t kernels() const { return passes_.size(); }

 private:
  std::function<void(const EmitterPassSnapshot&)> Observer();

  std::string dir_;
  std::map<std::string, int> passes_;                        // kernel -> passes seen
  std::map<std::string, std::vector<std::string>> changed_;  // kernel -> passes that changed it
  absl::Status status_;
};

}  // namespace passlab

#endif  // PASSLAB_TOOLS_PASSLAB_EMITTER_DUMP_H_
