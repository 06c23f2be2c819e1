// CopyInsertion ("copy-insertion"): adds the copies that let values share
// buffers without interference, as XLA does before buffer assignment:
//  - while init: an element of the init tuple that is a constant, a
//    parameter, used by anything else, or already an earlier element gets
//    its own copy, so the loop state can live in the init's buffers (the
//    CPU runtime then starts the loop without copying; see
//    core/runtime/buffer_assignment.h);
//  - while body root: an element that is a constant, a parameter element
//    moved to another index, or a repeat of an earlier element is copied, so
//    the body writes each state element into its own state buffer;
//  - in-place operations (scatter, dynamic-update-slice): the operand they
//    overwrite is copied when it is a constant, the root, or read by an
//    instruction that need not run before them (XLA's
//    AddCopiesForInPlaceOperation with the copies RemoveUnnecessaryCopies
//    would drop left out);
//  - conditional branch roots and the entry root: elements that are
//    constants, parameters or repeats are copied (results own their
//    buffers; an entry parameter aliased to the output by
//    input_output_alias is left alone).
// Non-tuple loop inits and roots are rebuilt as tuples of their elements
// first. Runs in ir-emit-prepare, after every pass that restructures the
// program (they would not preserve the copies' purpose). Optional: the CPU
// runtime copies loop state and results itself where no copy was inserted.
#ifndef PASSLAB_PASSES_PREPARE_COPY_INSERTION_H_
#define PASSLAB_PASSES_PREPARE_COPY_INSERTION_H_

#include "core/pass/hlo_pass_interface.h"

namespace passlab {

class CopyInsertion : public HloModulePass {
 public:
  std::string_view name() const override { return "copy-insertion"; }

 protected:
  absl::StatusOr<bool> RunImpl(HloModule& module, PassRunContext* context) override;
};

}  // namespace passlab

#endif  // PASSLAB_PASSES_PREPARE_COPY_INSERTION_H_
