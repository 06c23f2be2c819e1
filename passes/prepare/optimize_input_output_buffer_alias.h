// OptimizeInputOutputBufferAlias ("optimize_input_output_buffer_alias"), as
// XLA's xla/hlo/transforms/simplifiers/optimize_input_output_buffer_alias.cc:
// adds input_output_alias entries (may-alias) that let an output buffer
// reuse an entry parameter's buffer of the same size.
//
// Donors are the entry parameters' array leaves not already aliased (with
// registered_buffer_donor_only, only those listed in buffer_donor); donees
// are the result's array leaves not already aliased. Within each memory
// space, both lists are sorted by size, largest first (stably, so earlier
// leaves win ties), and matched greedily: equal sizes pair up; otherwise
// the larger side's entry is skipped. A matched donor leaves buffer_donor.
// Sizes come from shape_size_fn (ShapeUtil::ByteSizeOf by default), so a
// donor and donee need equal byte sizes, not equal shapes. Nothing is
// aliased when the result shape is dynamic; dynamic parameter leaves are
// no donors. The config is verified afterwards (an error when invalid).
//
// The CPU runtime honours the entries: buffer assignment
// (core/runtime/buffer_assignment.cc) places an aliased output in its
// parameter's buffer when the parameter is dead by then.
// XLA:GPU runs it in "layout assignment", right after GpuLayoutAssignment
// and SubByteNormalization (layouts, hence sizes, are final), with
// registered_buffer_donor_only = true.
#ifndef PASSLAB_PASSES_PREPARE_OPTIMIZE_INPUT_OUTPUT_BUFFER_ALIAS_H_
#define PASSLAB_PASSES_PREPARE_OPTIMIZE_INPUT_OUTPUT_BUFFER_ALIAS_H_

#include <cstdint>
#include <functional>

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

struct OptimizeInputOutputBufferAliasOptions {
  // Only parameters listed in the module's buffer_donor may donate (XLA:GPU
  // sets this); otherwise every parameter leaf may.
  bool registered_buffer_donor_only = false;
  // The size two buffers must share; bytes of the dense array by default.
  std::function<int64_t(const Shape&)> shape_size_fn = nullptr;
};

class OptimizeInputOutputBufferAlias : public HloModulePass {
 public:
  explicit OptimizeInputOutputBufferAlias(OptimizeInputOutputBufferAliasOptions options = {})
      : options_(std::move(options)) {}
  std::string_view name() const override { return "optimize_input_output_buffer_alias"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;

 private:
  OptimizeInputOutputBufferAliasOptions options_;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_OPTIMIZE_INPUT_OUTPUT_BUFFER_ALIAS_H_
