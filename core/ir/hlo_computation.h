// HloComputation: a named graph of instructions with parameters and a root.
// Owns its instructions; keeps them in insertion order (a std::list, so
// removal is O(1) and pointers stay valid).
#ifndef PASSLAB_CORE_IR_HLO_COMPUTATION_H_
#define PASSLAB_CORE_IR_HLO_COMPUTATION_H_

#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/hlo_instruction.h"

namespace passlab {

class HloModule;
// core/text's canonical text of one computation, which the printer caches
// here (text_cache) so that module snapshots share unchanged computations.
struct ComputationText;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  ~HloComputation();
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  // Renaming invalidates the cached fingerprints of the module's
  // instructions that call this computation (they print its name).
  void SetName(std::string name);
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }
  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* module) {
    BumpIrGeneration();
    text_cache_.reset();
    parent_ = module;
  }

  // Adds an instruction; when attached to a module its name is uniquified
  // (an empty name becomes the opcode name) and it gets a unique id.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction,
                                 std::string_view name = "");
  // Adds a parameter; its number must be parameter_count().
  HloInstruction* AddParameter(std::unique_ptr<HloInstruction> parameter);
  // Called with each instruction just before it is removed (the rewrite
  // visitor uses it to skip removed instructions); empty to clear.
  void set_removal_listener(std::function<void(const HloInstruction*)> listener) {
    removal_listener_ = std::move(listener);
  }
  // Removes an instruction without users (and not the root).
  absl::Status RemoveInstruction(HloInstruction* instruction);
  // Removes it and, transitively, operands left without users (not
  // parameters, not side-effecting).
  absl::Status RemoveInstructionAndUnusedOperands(HloInstruction* instruction);
  // Replaces all uses of old_instruction (and the root) by new_instruction,
  // then removes old_instruction if it is dead.
  absl::Status ReplaceInstruction(HloInstruction* old_instruction,
                                  HloInstruction* new_instruction);
  // Adds new_instruction, then ReplaceInstruction.
  absl::Status ReplaceWithNewInstruction(HloInstruction* old_instruction,
                                         std::unique_ptr<HloInstruction> new_instruction);

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* root) {
    BumpIrGeneration();
    text_cache_.reset();
    root_ = root;
  }

  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }
  HloInstruction* parameter_instruction(int64_t i) const { return parameters_[i]; }
  const std::vector<HloInstruction*>& parameter_instructions() const { return parameters_; }
  // Rebuilds the parameter list from the parameter instructions, ordered by
  // parameter number (for builders that add parameters as instructions).
  void RebuildParameterList();
  // Removes parameter i (must be unused) and renumbers the later ones.
  absl::Status RemoveParameter(int64_t i);

  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Instructions in insertion order.
  std::vector<HloInstruction*> instructions() const;
  template <typename Fn>
  void ForEachInstruction(Fn&& fn) const {
    for (const auto& i : instructions_) fn(i.get());
  }
  // Operands (and control predecessors) before users; deterministic: a DFS
  // from each instruction in insertion order.
  // Cached until an instruction is added or removed, or one of its operands
  // or control edges changes (HloInstruction::InvalidateCaches).
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  // The same, without a copy: valid until the computation changes.
  const std::vector<HloInstruction*>& InstructionPostOrder() const;
  // Also drops the caches derived from the post order (the call summary,
  // the printer's text).
  void InvalidatePostOrder() {
    BumpIrGeneration();
    post_order_valid_ = false;
    text_cache_.reset();
  }
  // The computations this one's instructions call, each once, in the order
  // the post order reaches them, and its async-start instructions: what the
  // module's computation post order and the printer's async sugar need,
  // cached with the post order so that module-wide walks skip unchanged
  // computations.
  const std::vector<HloComputation*>& CalledComputationsInPostOrder() const;
  const std::vector<const HloInstruction*>& AsyncStarts() const;
  // The canonical printer's text of this computation (core/text), kept until
  // anything it prints changes: an instruction (every mutator invalidates
  // the post order), the root, the name, the execution thread or the module.
  // Whether the computation is the entry is the printer's to check.
  const std::shared_ptr<const ComputationText>& text_cache() const { return text_cache_; }
  void set_text_cache(std::shared_ptr<const ComputationText> text) const { text_cache_ = std::move(text); }
  HloInstruction* GetInstructionWithName(std::string_view name) const;
  // Reorders the instructions to `sequence` — a permutation of all of them in
  // which operands and control predecessors come before their users — so
  // that insertion order, the post order and the printed order all follow it
  // (a schedule). Fails, changing nothing, if `sequence` is not such a
  // permutation.
  absl::Status SetInstructionSequence(absl::Span<HloInstruction* const> sequence);

  // Computations called (transitively) from this one, callees first.
  std::vector<HloComputation*> MakeEmbeddedComputationsList() const;

  // Fusion computations know their fusion instruction.
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }
  HloInstruction* FusionInstruction() const { return fusion_instruction_; }
  void SetFusionInstruction(HloInstruction* fusion) {
    BumpIrGeneration();
    fusion_instruction_ = fusion;
  }
  bool IsEntryComputation() const;

  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) {
    BumpIrGeneration();
    text_cache_.reset();
    execution_thread_ = std::move(t);
  }

  // The program shape: (parameter shapes) -> root shape.
  std::vector<Shape> ParameterShapes() const;

 private:
  std::string name_;
  int64_t unique_id_ = -1;
  HloModule* parent_ = nullptr;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
  std::string execution_thread_ = "main";
  std::list<std::unique_ptr<HloInstruction>> instructions_;
  absl::flat_hash_map<const HloInstruction*, std::list<std::unique_ptr<HloInstruction>>::iterator>
      positions_;
  std::vector<HloInstruction*> parameters_;
  std::function<void(const HloInstruction*)> removal_listener_;
  std::vector<HloInstruction*> ComputeInstructionPostOrder() const;
  mutable std::vector<HloInstruction*> post_order_;
  mutable bool post_order_valid_ = false;
  // The call summary, computed with the post order.
  mutable std::vector<HloComputation*> callees_;
  mutable std::vector<const HloInstruction*> async_starts_;
  mutable std::shared_ptr<const ComputationText> text_cache_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_COMPUTATION_H_
