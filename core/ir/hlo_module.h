// HloModule: the unit of compilation: computations (the entry last in
// post-order), module-level configuration that XLA prints in the header, and
// name/id uniquing for everything added to it.
#ifndef PASSLAB_CORE_IR_HLO_MODULE_H_
#define PASSLAB_CORE_IR_HLO_MODULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/hlo_computation.h"

namespace passlab {

struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ProgramShape&) const = default;
  std::string ToString() const;  // "(f32[2]{0}, s32[])->f32[2]{0}"
};

// input_output_alias={ {0}: (0, {}, may-alias) }
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};

// buffer_donor={ (0, {}) }
struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

struct HloModuleConfig {
  std::optional<ProgramShape> entry_computation_layout;
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donor;
  bool alias_passthrough_params = false;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  FrontendAttributes frontend_attributes;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  bool use_auto_spmd_partitioning = false;
  // Header attributes passlab does not model, kept verbatim (name, value text).
  std::vector<std::pair<std::string, std::string>> unknown_attributes;
  bool operator==(const HloModuleConfig&) const = default;
};

class HloModule {
 public:
  explicit HloModule(std::string name);
  ~HloModule();
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) {
    BumpIrGeneration();
    name_ = std::move(name);
  }

  // Adds a computation; names are uniquified; ids assigned.
  HloComputation* AddEntryComputation(std::unique_ptr<HloComputation> computation);
  HloComputation* AddEmbeddedComputation(std::unique_ptr<HloComputation> computation);
  // Adds a computation keeping its name exactly (the parser uses this after
  // checking uniqueness itself).
  HloComputation* AddComputationKeepName(std::unique_ptr<HloComputation> computation,
                                         bool is_entry);
  absl::Status RemoveEmbeddedComputation(HloComputation* computation);
  // Removes computations no instruction calls (never the entry).
  int64_t RemoveUnusedComputations();

  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* entry) {
    BumpIrGeneration();
    entry_ = entry;
  }
  int64_t computation_count() const { return static_cast<int64_t>(computations_.size()); }
  std::vector<HloComputation*> computations() const;
  // Callees before callers; the entry is last. Deterministic.
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  HloComputation* GetComputationWithName(std::string_view name) const;
  int64_t instruction_count() const;

  HloModuleConfig& config() {
    BumpIrGeneration();  // the caller may change it
    return config_;
  }
  const HloModuleConfig& config() const { return config_; }
  // The entry layout from the config, or derived from the entry computation.
  ProgramShape entry_computation_layout() const;

  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool s) {
    BumpIrGeneration();
    is_scheduled_ = s;
  }

  // Name/id management.
  std::string UniqueInstructionName(std::string_view prefix);
  std::string UniqueComputationName(std::string_view prefix);
  void RegisterInstructionName(const std::string& name);
  int64_t NextUniqueId() { return next_unique_id_++; }

  // A deep copy (same names, ids renumbered in the same order).
  std::unique_ptr<HloModule> Clone(std::string_view suffix = "") const;

  // ModuleFingerprint's cache: the fingerprint and the IrGeneration() it
  // was computed at.
  bool fingerprint_cached_at(uint64_t generation) const { return fingerprint_generation_ == generation; }
  uint64_t cached_fingerprint() const { return fingerprint_; }
  void set_cached_fingerprint(uint64_t generation, uint64_t fingerprint) const {
    fingerprint_generation_ = generation;
    fingerprint_ = fingerprint;
  }

 private:
  mutable uint64_t fingerprint_generation_ = 0;  // IrGeneration() starts at 1
  mutable uint64_t fingerprint_ = 0;
  HloComputation* AddComputationInternal(std::unique_ptr<HloComputation> computation,
                                         bool is_entry, bool uniquify);
  std::string name_;
  HloModuleConfig config_;
  bool is_scheduled_ = false;
  HloComputation* entry_ = nullptr;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  absl::flat_hash_set<std::string> instruction_names_;
  absl::flat_hash_map<std::string, int64_t> instruction_name_next_;
  absl::flat_hash_set<std::string> computation_names_;
  absl::flat_hash_map<std::string, int64_t> computation_name_next_;
  int64_t next_unique_id_ = 0;
};

// Instructions per opcode name over every computation (sorted by name).
std::map<std::string, int64_t> CountInstructionsByOpcode(const HloModule& module);
// after - before per opcode; only the opcodes whose count changed.
std::map<std::string, int64_t> OpcodeCountDelta(const std::map<std::string, int64_t>& before,
                                                const std::map<std::string, int64_t>& after);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_MODULE_H_
