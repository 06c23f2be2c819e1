// HloInstruction: one node of an HLO computation. Like XLA's
// HloInstructionProto it is one class for every opcode: the common fields live
// here, opcode-specific attributes in HloAttributes (allocated only when an
// instruction has any). Operands/users are kept consistent by the mutators.
#ifndef PASSLAB_CORE_IR_HLO_INSTRUCTION_H_
#define PASSLAB_CORE_IR_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/ir/hlo_attributes.h"
#include "core/ir/hlo_opcode.h"
#include "core/ir/literal.h"
#include "core/ir/shape.h"

namespace passlab {

// A process-wide counter that every IR mutation bumps (instructions,
// computations, modules). Observers use it to skip re-fingerprinting a module
// nothing touched since they last looked (most pass runs change nothing).
// Conservative: a mutation of any module bumps it.
uint64_t IrGeneration();
void BumpIrGeneration();


class HloComputation;
class HloModule;

// Opcode-specific attributes. Field names follow XLA's proto; the comment says
// which opcodes use a field. Defaults mean "absent" for the printer.
struct HloAttributes {
  std::optional<Window> window;  // convolution, reduce-window, select-and-scatter, custom-call
  std::optional<ConvolutionDimensionNumbers> conv_dnums;  // convolution, custom-call
  int64_t feature_group_count = 1;  // convolution, custom-call
  int64_t batch_group_count = 1;
  DotDimensionNumbers dot_dnums;  // dot, ragged-dot, scaled-dot
  std::vector<int64_t> lhs_ragged_dims;  // ragged-dot (RaggedDotDimensionNumbers)
  std::vector<int64_t> rhs_group_dims;   // ragged-dot
  std::vector<SparsityDescriptor> sparsity;  // sparse dot
  PrecisionConfig precision_config;  // dot, convolution, custom-call
  GatherDimensionNumbers gather_dnums;  // gather
  ScatterDimensionNumbers scatter_dnums;  // scatter
  std::vector<int64_t> slice_sizes;  // gather, dynamic-slice (dynamic_slice_sizes)
  bool indices_are_sorted = false;  // gather, scatter
  bool unique_indices = false;      // scatter
  PaddingConfig padding_config;     // pad
  std::vector<SliceDimension> slice;  // slice
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;  // compare
  ComparisonType comparison_type = ComparisonType::kDefault;  // compare (kDefault = by type)
  FftType fft_type = FftType::kFft;  // fft
  std::vector<int64_t> fft_length;
  RandomDistribution distribution = RandomDistribution::kUniform;  // rng
  RandomAlgorithm rng_algorithm = RandomAlgorithm::kDefault;  // rng-bit-generator
  TriangularSolveOptions triangular_solve;  // triangular-solve
  bool cholesky_lower = false;  // cholesky
  float epsilon = 0;            // batch-norm-*
  int64_t feature_index = 0;    // batch-norm-*
  int64_t exponent_bits = 0;    // reduce-precision
  int64_t mantissa_bits = 0;
  bool is_stable = false;       // sort
  int64_t k = 0;                // topk
  int64_t num_carries = 0;      // scan: the last num_carries operands are the inits
  bool is_reverse = false;      // scan
  std::optional<bool> is_associative;  // scan (XLA's TriState; nullopt = unspecified)
  bool is_composite = false;    // call (a composite: frontend_attributes name it)
  bool largest = true;          // topk
  // Collectives.
  std::optional<int64_t> channel_id;
  ReplicaGroups replica_groups;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;  // collective-permute
  std::vector<std::vector<int64_t>> dynamic_slice_sizes_list;    // in-place collective-permute
  bool is_host_transfer = false;  // send/recv
  // Custom call.
  std::string custom_call_target;
  CustomCallApiVersion api_version = CustomCallApiVersion::kOriginal;
  bool custom_call_has_side_effect = false;
  CustomCallSchedule schedule = CustomCallSchedule::kNone;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  PaddingType padding_type = PaddingType::kInvalid;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;  // custom-call, fusion, async
  // Infeed/outfeed.
  std::string infeed_config;
  std::string outfeed_config;
  std::optional<Shape> outfeed_shape;
  // Parameter replication: parameter_replication={true,false}.
  std::vector<bool> parameter_replication;
  // copy-start
  std::optional<int64_t> cross_program_prefetch_index;
  DomainMetadata domain;  // domain
  std::optional<Statistics> statistics;
  // "origin={...}" (XLA's original value), kept as text.
  std::string original_value;
  // Attributes this parser does not model, kept verbatim on custom calls:
  // (name, value text).
  std::vector<std::pair<std::string, std::string>> unknown_attributes;

  bool operator==(const HloAttributes& other) const;
};

class HloInstruction {
 public:
  // Generic factory: any opcode, attributes set afterwards.
  static std::unique_ptr<HloInstruction> Create(HloOpcode opcode, const Shape& shape,
                                                absl::Span<HloInstruction* const> operands);
  static std::unique_ptr<HloInstruction> CreateParameter(int64_t number, const Shape& shape,
                                                         std::string name);
  static std::unique_ptr<HloInstruction> CreateConstant(Literal literal);
  static std::unique_ptr<HloInstruction> CreateUnary(const Shape& shape, HloOpcode opcode,
                                                     HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateBinary(const Shape& shape, HloOpcode opcode,
                                                      HloInstruction* lhs, HloInstruction* rhs);
  static std::unique_ptr<HloInstruction> CreateTernary(const Shape& shape, HloOpcode opcode,
                                                       HloInstruction* a, HloInstruction* b,
                                                       HloInstruction* c);
  static std::unique_ptr<HloInstruction> CreateCompare(const Shape& shape, HloInstruction* lhs,
                                                       HloInstruction* rhs,
                                                       ComparisonDirection direction,
                                                       ComparisonType type = ComparisonType::kDefault);
  static std::unique_ptr<HloInstruction> CreateConvert(const Shape& shape, HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateTuple(absl::Span<HloInstruction* const> elements);
  static std::unique_ptr<HloInstruction> CreateGetTupleElement(HloInstruction* operand,
                                                               int64_t index);
  static std::unique_ptr<HloInstruction> CreateGetTupleElement(const Shape& shape,
                                                               HloInstruction* operand,
                                                               int64_t index);
  static std::unique_ptr<HloInstruction> CreateBroadcast(const Shape& shape,
                                                         HloInstruction* operand,
                                                         std::vector<int64_t> dimensions);
  static std::unique_ptr<HloInstruction> CreateReshape(const Shape& shape, HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateBitcast(const Shape& shape, HloInstruction* operand);
  static std::unique_ptr<HloInstruction> CreateTranspose(const Shape& shape,
                                                         HloInstruction* operand,
                                                         std::vector<int64_t> dimensions);
  static std::unique_ptr<HloInstruction> CreateReverse(const Shape& shape, HloInstruction* operand,
                                                       std::vector<int64_t> dimensions);
  static std::unique_ptr<HloInstruction> CreateSlice(const Shape& shape, HloInstruction* operand,
                                                     std::vector<SliceDimension> slice);
  static std::unique_ptr<HloInstruction> CreateConcatenate(const Shape& shape,
                                                           absl::Span<HloInstruction* const> operands,
                                                           int64_t dimension);
  static std::unique_ptr<HloInstruction> CreatePad(const Shape& shape, HloInstruction* operand,
                                                   HloInstruction* padding_value,
                                                   PaddingConfig config);
  static std::unique_ptr<HloInstruction> CreateIota(const Shape& shape, int64_t iota_dimension);
  static std::unique_ptr<HloInstruction> CreateReduce(const Shape& shape,
                                                      absl::Span<HloInstruction* const> operands,
                                                      absl::Span<HloInstruction* const> init_values,
                                                      std::vector<int64_t> dimensions,
                                                      HloComputation* reducer);
  static std::unique_ptr<HloInstruction> CreateDot(const Shape& shape, HloInstruction* lhs,
                                                   HloInstruction* rhs, DotDimensionNumbers dnums,
                                                   PrecisionConfig precision = {});
  static std::unique_ptr<HloInstruction> CreateConvolve(const Shape& shape, HloInstruction* lhs,
                                                        HloInstruction* rhs,
                                                        int64_t feature_group_count,
                                                        int64_t batch_group_count, Window window,
                                                        ConvolutionDimensionNumbers dnums,
                                                        PrecisionConfig precision = {});
  static std::unique_ptr<HloInstruction> CreateDynamicSlice(
      const Shape& shape, HloInstruction* operand, absl::Span<HloInstruction* const> start_indices,
      std::vector<int64_t> slice_sizes);
  static std::unique_ptr<HloInstruction> CreateDynamicUpdateSlice(
      const Shape& shape, HloInstruction* operand, HloInstruction* update,
      absl::Span<HloInstruction* const> start_indices);
  static std::unique_ptr<HloInstruction> CreateCall(const Shape& shape,
                                                    absl::Span<HloInstruction* const> operands,
                                                    HloComputation* computation);
  static std::unique_ptr<HloInstruction> CreateMap(const Shape& shape,
                                                   absl::Span<HloInstruction* const> operands,
                                                   HloComputation* computation);
  static std::unique_ptr<HloInstruction> CreateFusion(const Shape& shape, FusionKind kind,
                                                      absl::Span<HloInstruction* const> operands,
                                                      HloComputation* fused_computation);
  static std::unique_ptr<HloInstruction> CreateWhile(const Shape& shape, HloComputation* condition,
                                                     HloComputation* body, HloInstruction* init);
  static std::unique_ptr<HloInstruction> CreateConditional(
      const Shape& shape, HloInstruction* branch_index,
      absl::Span<HloComputation* const> branches,
      absl::Span<HloInstruction* const> branch_operands);
  static std::unique_ptr<HloInstruction> CreateCustomCall(
      const Shape& shape, absl::Span<HloInstruction* const> operands, std::string target,
      std::string backend_config = "");

  ~HloInstruction();
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  // Identity.
  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  // Renaming also invalidates the cached fingerprints of users and control
  // successors, which print this name.
  void SetName(std::string name);  // no uniquing
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }
  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* parent);
  HloModule* GetModule() const;

  const Shape& shape() const { return shape_; }
  Shape* mutable_shape();

  // Operands and users.
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  HloInstruction* mutable_operand(int64_t i) const { return operands_[i]; }
  const HloInstruction* operand(int64_t i) const { return operands_[i]; }
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  void AppendOperand(HloInstruction* operand);
  // Replaces operand i (updating users on both sides).
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Replaces every use of `old_operand` among this instruction's operands.
  void ReplaceUsesOfOperand(HloInstruction* old_operand, HloInstruction* new_operand);
  void RemoveOperandAt(int64_t i);
  void DetachFromOperands();  // drops all operands (and this as their user)

  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  bool IsUserOf(const HloInstruction* operand) const;
  // Makes every user of this instruction (and the root, if this is it) use
  // `replacement` instead. Shapes must be compatible (checked by the caller).
  absl::Status ReplaceAllUsesWith(HloInstruction* replacement);
  // Only for the given users.
  absl::Status ReplaceUsesWith(absl::Span<HloInstruction* const> users,
                               HloInstruction* replacement);

  // Control dependencies.
  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_successors_; }
  void AddControlDependencyTo(HloInstruction* successor);
  void RemoveControlDependencyTo(HloInstruction* successor);
  void DropAllControlDeps();
  // Moves this instruction's control edges onto `to`.
  void CopyControlDependenciesTo(HloInstruction* to) const;

  // Called computations (to_apply, condition/body, branches, calls, ...).
  const std::vector<HloComputation*>& called_computations() const { return called_computations_; }
  void AppendCalledComputation(HloComputation* c) {
    called_computations_.push_back(c);
    InvalidateCaches();
  }
  // Sets slot i, growing the list (with nullptr) when needed.
  void set_called_computation(int64_t i, HloComputation* c) {
    if (static_cast<int64_t>(called_computations_.size()) <= i) called_computations_.resize(i + 1);
    called_computations_[i] = c;
    InvalidateCaches();
  }
  void ClearCalledComputations() {
    called_computations_.clear();
    InvalidateCaches();
  }
  HloComputation* to_apply() const;                 // map, reduce, sort, call, ...
  void set_to_apply(HloComputation* c);
  HloComputation* while_condition() const { return called_computations_[0]; }
  HloComputation* while_body() const { return called_computations_[1]; }
  HloComputation* select() const { return called_computations_[0]; }   // select-and-scatter
  HloComputation* scatter() const { return called_computations_[1]; }  // select-and-scatter
  int64_t branch_count() const { return static_cast<int64_t>(called_computations_.size()); }
  HloComputation* branch_computation(int64_t i) const { return called_computations_[i]; }
  HloComputation* fused_instructions_computation() const { return called_computations_[0]; }
  HloComputation* async_wrapped_computation() const { return called_computations_[0]; }
  // The root of the computation an async op wraps.
  HloInstruction* async_wrapped_instruction() const;
  HloOpcode async_wrapped_opcode() const;
  // Fusion helpers.
  HloInstruction* fused_expression_root() const;
  HloInstruction* fused_parameter(int64_t i) const;

  // Common attributes.
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  std::vector<int64_t>* mutable_dimensions() {
    InvalidateCaches();
    return &dimensions_;
  }
  void set_dimensions(std::vector<int64_t> d) {
    dimensions_ = std::move(d);
    InvalidateCaches();
  }
  int64_t concatenate_dimension() const { return dimensions_[0]; }
  int64_t parameter_number() const { return index_; }
  int64_t tuple_index() const { return index_; }
  int64_t iota_dimension() const { return index_; }
  void set_index(int64_t v) {
    index_ = v;
    InvalidateCaches();
  }  // parameter number / tuple index / iota dim
  int64_t index() const { return index_; }

  bool has_literal() const { return literal_ != nullptr; }
  const Literal& literal() const { return *literal_; }
  Literal* mutable_literal() {
    InvalidateCaches();
    return literal_.get();
  }
  void set_literal(Literal literal);

  FusionKind fusion_kind() const { return fusion_kind_; }
  void set_fusion_kind(FusionKind k) {
    fusion_kind_ = k;
    InvalidateCaches();
  }

  const std::string& async_execution_thread() const { return async_execution_thread_; }
  void set_async_execution_thread(std::string t) {
    async_execution_thread_ = std::move(t);
    InvalidateCaches();
  }

  const OpMetadata& metadata() const { return metadata_; }
  OpMetadata* mutable_metadata() {
    InvalidateCaches();
    return &metadata_;
  }
  void set_metadata(OpMetadata m) {
    metadata_ = std::move(m);
    InvalidateCaches();
  }

  const std::string& raw_backend_config() const { return backend_config_; }
  void set_raw_backend_config(std::string c) {
    backend_config_ = std::move(c);
    InvalidateCaches();
  }

  bool has_sharding() const { return sharding_ != nullptr; }
  const HloSharding& sharding() const { return *sharding_; }
  void set_sharding(HloSharding s) {
    sharding_ = std::make_unique<HloSharding>(std::move(s));
    InvalidateCaches();
  }
  void clear_sharding() {
    sharding_.reset();
    InvalidateCaches();
  }

  const FrontendAttributes& frontend_attributes() const { return frontend_attributes_; }
  FrontendAttributes* mutable_frontend_attributes() {
    InvalidateCaches();
    return &frontend_attributes_;
  }

  // Opcode-specific attributes (a shared empty instance when none are set).
  const HloAttributes& attrs() const;
  HloAttributes& mutable_attrs();
  bool has_attrs() const { return attrs_ != nullptr; }

  // Shorthands over attrs().
  const Window& window() const;
  ComparisonDirection comparison_direction() const { return attrs().comparison_direction; }
  const std::string& custom_call_target() const { return attrs().custom_call_target; }

  // Whether the instruction has side effects (opcode, or a custom call marked
  // custom_call_has_side_effect) so that DCE and CSE must keep it.
  bool HasSideEffect() const;
  bool IsRoot() const;
  bool IsElementwise() const;
  bool IsFused() const;  // lives in a fusion computation

  // Caches derived from this instruction's printed fields: a hash for the
  // pass pipeline's module fingerprint (core/pass/module_fingerprint.h) and
  // the canonical printer's line (core/text). Every mutator above
  // invalidates both (renames and shape changes also those of the users,
  // which print this name and shape); code that edits an instruction must go
  // through the mutators.
  bool fingerprint_valid() const { return fingerprint_valid_; }
  uint64_t cached_fingerprint() const { return fingerprint_; }
  void set_cached_fingerprint(uint64_t f) const {
    fingerprint_ = f;
    fingerprint_valid_ = true;
  }
  // The line is shared: module snapshots hold on to it after the
  // instruction changes (core/text's ModuleText).
  const std::string* cached_line() const { return line_.get(); }
  const std::shared_ptr<const std::string>& shared_cached_line() const { return line_; }
  void set_cached_line(std::string line) const { line_ = std::make_shared<const std::string>(std::move(line)); }
  // Also invalidates the parent computation's cached post order.
  void InvalidateCaches();

  // Scratch for graph walks (HloComputation's post order): a walk takes a
  // fresh stamp from NewVisitStamp() and marks what it visited, instead of
  // keeping a hash set. Not for concurrent walks of one computation.
  static uint64_t NewVisitStamp();
  uint64_t visit_mark() const { return visit_mark_; }
  void set_visit_mark(uint64_t mark) const { visit_mark_ = mark; }

  // A copy with new operands (same attributes, called computations, name).
  std::unique_ptr<HloInstruction> CloneWithNewOperands(
      const Shape& shape, absl::Span<HloInstruction* const> new_operands) const;
  // Same opcode, shape, attributes and called computations (operands are
  // compared by the caller), as XLA's IdenticalIgnoringOperands.
  bool IdenticalSlowPath(const HloInstruction& other) const;

 private:
  HloInstruction(HloOpcode opcode, const Shape& shape);
  void RemoveUser(HloInstruction* user);
  void AddUser(HloInstruction* user);

  HloOpcode opcode_;
  int64_t unique_id_ = -1;
  int64_t index_ = 0;
  FusionKind fusion_kind_ = FusionKind::kLoop;
  std::string name_;
  Shape shape_;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  // Position of each user in users_, kept once an instruction has many users
  // (a parameter feeding 10^5 instructions must not make AddUser quadratic).
  std::unique_ptr<absl::flat_hash_map<const HloInstruction*, int64_t>> user_index_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  std::vector<HloComputation*> called_computations_;
  std::vector<int64_t> dimensions_;
  std::unique_ptr<Literal> literal_;
  std::string async_execution_thread_ = "main";
  OpMetadata metadata_;
  std::string backend_config_;
  std::unique_ptr<HloSharding> sharding_;
  FrontendAttributes frontend_attributes_;
  std::unique_ptr<HloAttributes> attrs_;
  mutable uint64_t fingerprint_ = 0;
  mutable bool fingerprint_valid_ = false;
  mutable std::shared_ptr<const std::string> line_;  // null: not cached
  mutable uint64_t visit_mark_ = 0;
};

// The name an async-start's wrapped computation gets when it is written with
// the op-start sugar (seed 001). The printer uses the sugar exactly for
// computations with this name, so both spellings round-trip unchanged.
std::string AsyncWrappedComputationName(std::string_view async_start_name);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_HLO_INSTRUCTION_H_
