#include "core/ir/hlo_instruction.h"

#include <atomic>

#include <algorithm>
#include <cassert>

#include "core/ir/str_util.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"

namespace passlab {

bool HloAttributes::operator==(const HloAttributes& o) const {
  return window == o.window && conv_dnums == o.conv_dnums &&
         feature_group_count == o.feature_group_count &&
         batch_group_count == o.batch_group_count && dot_dnums == o.dot_dnums &&
         sparsity == o.sparsity && precision_config == o.precision_config &&
         gather_dnums == o.gather_dnums && scatter_dnums == o.scatter_dnums &&
         slice_sizes == o.slice_sizes && indices_are_sorted == o.indices_are_sorted &&
         unique_indices == o.unique_indices && padding_config == o.padding_config &&
         slice == o.slice && comparison_direction == o.comparison_direction &&
         comparison_type == o.comparison_type && fft_type == o.fft_type &&
         fft_length == o.fft_length && distribution == o.distribution &&
         rng_algorithm == o.rng_algorithm && triangular_solve == o.triangular_solve &&
         cholesky_lower == o.cholesky_lower &&
         (epsilon == o.epsilon || (epsilon != epsilon && o.epsilon != o.epsilon)) &&
         feature_index == o.feature_index && exponent_bits == o.exponent_bits &&
         mantissa_bits == o.mantissa_bits && is_stable == o.is_stable && k == o.k &&
         largest == o.largest && channel_id == o.channel_id &&
         replica_groups == o.replica_groups &&
         use_global_device_ids == o.use_global_device_ids &&
         constrain_layout == o.constrain_layout &&
         source_target_pairs == o.source_target_pairs &&
         dynamic_slice_sizes_list == o.dynamic_slice_sizes_list &&
         is_host_transfer == o.is_host_transfer &&
         custom_call_target == o.custom_call_target && api_version == o.api_version &&
         custom_call_has_side_effect == o.custom_call_has_side_effect &&
         schedule == o.schedule && operand_layout_constraints == o.operand_layout_constraints &&
         padding_type == o.padding_type &&
         output_to_operand_aliasing == o.output_to_operand_aliasing &&
         infeed_config == o.infeed_config && outfeed_config == o.outfeed_config &&
         outfeed_shape == o.outfeed_shape && parameter_replication == o.parameter_replication &&
         cross_program_prefetch_index == o.cross_program_prefetch_index && domain == o.domain &&
         statistics == o.statistics && original_value == o.original_value &&
         lhs_ragged_dims == o.lhs_ragged_dims && rhs_group_dims == o.rhs_group_dims &&
         num_carries == o.num_carries && is_reverse == o.is_reverse &&
         is_associative == o.is_associative && is_composite == o.is_composite &&
         unknown_attributes == o.unknown_attributes;
}

HloInstruction::HloInstruction(HloOpcode opcode, const Shape& shape)
    : opcode_(opcode), shape_(shape) {}

HloInstruction::~HloInstruction() = default;

std::unique_ptr<HloInstruction> HloInstruction::Create(HloOpcode opcode, const Shape& shape,
                                                       absl::Span<HloInstruction* const> operands) {
  std::unique_ptr<HloInstruction> inst(new HloInstruction(opcode, shape));
  for (HloInstruction* op : operands) inst->AppendOperand(op);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateParameter(int64_t number, const Shape& shape,
                                                                std::string name) {
  auto inst = Create(HloOpcode::kParameter, shape, {});
  inst->index_ = number;
  inst->name_ = std::move(name);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConstant(Literal literal) {
  auto inst = Create(HloOpcode::kConstant, literal.shape(), {});
  inst->literal_ = std::make_unique<Literal>(std::move(literal));
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateUnary(const Shape& shape, HloOpcode opcode,
                                                            HloInstruction* operand) {
  return Create(opcode, shape, {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBinary(const Shape& shape, HloOpcode opcode,
                                                             HloInstruction* lhs,
                                                             HloInstruction* rhs) {
  return Create(opcode, shape, {lhs, rhs});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTernary(const Shape& shape, HloOpcode opcode,
                                                              HloInstruction* a, HloInstruction* b,
                                                              HloInstruction* c) {
  return Create(opcode, shape, {a, b, c});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCompare(const Shape& shape,
                                                              HloInstruction* lhs,
                                                              HloInstruction* rhs,
                                                              ComparisonDirection direction,
                                                              ComparisonType type) {
  auto inst = Create(HloOpcode::kCompare, shape, {lhs, rhs});
  inst->mutable_attrs().comparison_direction = direction;
  inst->mutable_attrs().comparison_type = type;
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConvert(const Shape& shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kConvert, shape, {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTuple(
    absl::Span<HloInstruction* const> elements) {
  std::vector<Shape> shapes;
  for (HloInstruction* e : elements) shapes.push_back(e->shape());
  return Create(HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

std::unique_ptr<HloInstruction> HloInstruction::CreateGetTupleElement(HloInstruction* operand,
                                                                      int64_t index) {
  return CreateGetTupleElement(operand->shape().tuple_shapes(index), operand, index);
}

std::unique_ptr<HloInstruction> HloInstruction::CreateGetTupleElement(const Shape& shape,
                                                                      HloInstruction* operand,
                                                                      int64_t index) {
  auto inst = Create(HloOpcode::kGetTupleElement, shape, {operand});
  inst->index_ = index;
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBroadcast(const Shape& shape,
                                                                HloInstruction* operand,
                                                                std::vector<int64_t> dimensions) {
  auto inst = Create(HloOpcode::kBroadcast, shape, {operand});
  inst->dimensions_ = std::move(dimensions);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateReshape(const Shape& shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kReshape, shape, {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateBitcast(const Shape& shape,
                                                              HloInstruction* operand) {
  return Create(HloOpcode::kBitcast, shape, {operand});
}

std::unique_ptr<HloInstruction> HloInstruction::CreateTranspose(const Shape& shape,
                                                                HloInstruction* operand,
                                                                std::vector<int64_t> dimensions) {
  auto inst = Create(HloOpcode::kTranspose, shape, {operand});
  inst->dimensions_ = std::move(dimensions);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateReverse(const Shape& shape,
                                                              HloInstruction* operand,
                                                              std::vector<int64_t> dimensions) {
  auto inst = Create(HloOpcode::kReverse, shape, {operand});
  inst->dimensions_ = std::move(dimensions);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateSlice(const Shape& shape,
                                                            HloInstruction* operand,
                                                            std::vector<SliceDimension> slice) {
  auto inst = Create(HloOpcode::kSlice, shape, {operand});
  inst->mutable_attrs().slice = std::move(slice);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConcatenate(
    const Shape& shape, absl::Span<HloInstruction* const> operands, int64_t dimension) {
  auto inst = Create(HloOpcode::kConcatenate, shape, operands);
  inst->dimensions_ = {dimension};
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreatePad(const Shape& shape,
                                                          HloInstruction* operand,
                                                          HloInstruction* padding_value,
                                                          PaddingConfig config) {
  auto inst = Create(HloOpcode::kPad, shape, {operand, padding_value});
  inst->mutable_attrs().padding_config = std::move(config);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateIota(const Shape& shape,
                                                           int64_t iota_dimension) {
  auto inst = Create(HloOpcode::kIota, shape, {});
  inst->index_ = iota_dimension;
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateReduce(
    const Shape& shape, absl::Span<HloInstruction* const> operands,
    absl::Span<HloInstruction* const> init_values, std::vector<int64_t> dimensions,
    HloComputation* reducer) {
  auto inst = Create(HloOpcode::kReduce, shape, operands);
  for (HloInstruction* init : init_values) inst->AppendOperand(init);
  inst->dimensions_ = std::move(dimensions);
  inst->called_computations_ = {reducer};
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateDot(const Shape& shape, HloInstruction* lhs,
                                                          HloInstruction* rhs,
                                                          DotDimensionNumbers dnums,
                                                          PrecisionConfig precision) {
  auto inst = Create(HloOpcode::kDot, shape, {lhs, rhs});
  inst->mutable_attrs().dot_dnums = std::move(dnums);
  inst->mutable_attrs().precision_config = std::move(precision);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConvolve(
    const Shape& shape, HloInstruction* lhs, HloInstruction* rhs, int64_t feature_group_count,
    int64_t batch_group_count, Window window, ConvolutionDimensionNumbers dnums,
    PrecisionConfig precision) {
  auto inst = Create(HloOpcode::kConvolution, shape, {lhs, rhs});
  HloAttributes& a = inst->mutable_attrs();
  a.feature_group_count = feature_group_count;
  a.batch_group_count = batch_group_count;
  a.window = std::move(window);
  a.conv_dnums = std::move(dnums);
  a.precision_config = std::move(precision);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateDynamicSlice(
    const Shape& shape, HloInstruction* operand, absl::Span<HloInstruction* const> start_indices,
    std::vector<int64_t> slice_sizes) {
  auto inst = Create(HloOpcode::kDynamicSlice, shape, {operand});
  for (HloInstruction* i : start_indices) inst->AppendOperand(i);
  inst->mutable_attrs().slice_sizes = std::move(slice_sizes);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateDynamicUpdateSlice(
    const Shape& shape, HloInstruction* operand, HloInstruction* update,
    absl::Span<HloInstruction* const> start_indices) {
  auto inst = Create(HloOpcode::kDynamicUpdateSlice, shape, {operand, update});
  for (HloInstruction* i : start_indices) inst->AppendOperand(i);
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCall(
    const Shape& shape, absl::Span<HloInstruction* const> operands, HloComputation* computation) {
  auto inst = Create(HloOpcode::kCall, shape, operands);
  inst->called_computations_ = {computation};
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateMap(const Shape& shape,
                                                          absl::Span<HloInstruction* const> operands,
                                                          HloComputation* computation) {
  auto inst = Create(HloOpcode::kMap, shape, operands);
  inst->called_computations_ = {computation};
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateFusion(
    const Shape& shape, FusionKind kind, absl::Span<HloInstruction* const> operands,
    HloComputation* fused_computation) {
  auto inst = Create(HloOpcode::kFusion, shape, operands);
  inst->fusion_kind_ = kind;
  inst->called_computations_ = {fused_computation};
  fused_computation->SetFusionInstruction(inst.get());
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateWhile(const Shape& shape,
                                                            HloComputation* condition,
                                                            HloComputation* body,
                                                            HloInstruction* init) {
  auto inst = Create(HloOpcode::kWhile, shape, {init});
  inst->called_computations_ = {condition, body};
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateConditional(
    const Shape& shape, HloInstruction* branch_index, absl::Span<HloComputation* const> branches,
    absl::Span<HloInstruction* const> branch_operands) {
  auto inst = Create(HloOpcode::kConditional, shape, {branch_index});
  for (HloInstruction* op : branch_operands) inst->AppendOperand(op);
  inst->called_computations_.assign(branches.begin(), branches.end());
  return inst;
}

std::unique_ptr<HloInstruction> HloInstruction::CreateCustomCall(
    const Shape& shape, absl::Span<HloInstruction* const> operands, std::string target,
    std::string backend_config) {
  auto inst = Create(HloOpcode::kCustomCall, shape, operands);
  inst->mutable_attrs().custom_call_target = std::move(target);
  inst->backend_config_ = std::move(backend_config);
  return inst;
}

HloModule* HloInstruction::GetModule() const {
  return parent_ == nullptr ? nullptr : parent_->parent();
}

namespace {
constexpr size_t kUserIndexThreshold = 16;
}  // namespace

void HloInstruction::AddUser(HloInstruction* user) {
  if (user_index_ != nullptr) {
    if (user_index_->emplace(user, static_cast<int64_t>(users_.size())).second) users_.push_back(user);
    return;
  }
  if (std::find(users_.begin(), users_.end(), user) != users_.end()) return;
  users_.push_back(user);
  if (users_.size() > kUserIndexThreshold) {
    user_index_ = std::make_unique<absl::flat_hash_map<const HloInstruction*, int64_t>>();
    for (size_t i = 0; i < users_.size(); ++i) (*user_index_)[users_[i]] = static_cast<int64_t>(i);
  }
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  if (user_index_ != nullptr) {
    auto it = user_index_->find(user);
    if (it == user_index_->end()) return;
    // Swap with the last user: O(1), and still deterministic (the order is
    // a function of the sequence of edits).
    int64_t pos = it->second;
    user_index_->erase(it);
    if (pos != static_cast<int64_t>(users_.size()) - 1) {
      users_[pos] = users_.back();
      (*user_index_)[users_[pos]] = pos;
    }
    users_.pop_back();
    return;
  }
  auto it = std::find(users_.begin(), users_.end(), user);
  if (it != users_.end()) users_.erase(it);
}

bool HloInstruction::IsUserOf(const HloInstruction* operand) const {
  if (operand->user_index_ != nullptr) return operand->user_index_->contains(this);
  return std::find(operand->users_.begin(), operand->users_.end(), this) != operand->users_.end();
}

void HloInstruction::SetName(std::string name) {
  name_ = std::move(name);
  InvalidateCaches();
  for (HloInstruction* user : users_) user->InvalidateCaches();
  for (HloInstruction* s : control_successors_) s->InvalidateCaches();
}

namespace {
std::atomic<uint64_t> ir_generation{1};
}  // namespace

namespace {
std::atomic<uint64_t> visit_stamp{0};
}  // namespace

// Two marks per walk: stamp (on the stack) and stamp + 1 (done).
uint64_t HloInstruction::NewVisitStamp() { return visit_stamp.fetch_add(2, std::memory_order_relaxed) + 2; }

uint64_t IrGeneration() { return ir_generation.load(std::memory_order_relaxed); }
void BumpIrGeneration() { ir_generation.fetch_add(1, std::memory_order_relaxed); }

void HloInstruction::InvalidateCaches() {
  BumpIrGeneration();
  fingerprint_valid_ = false;
  line_.reset();
  if (parent_ != nullptr) parent_->InvalidatePostOrder();
}

void HloInstruction::set_parent(HloComputation* parent) {
  if (parent_ != nullptr) parent_->InvalidatePostOrder();
  parent_ = parent;
  if (parent_ != nullptr) parent_->InvalidatePostOrder();
}

Shape* HloInstruction::mutable_shape() {
  InvalidateCaches();
  for (HloInstruction* user : users_) user->InvalidateCaches();  // they print operand shapes
  return &shape_;
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  operands_.push_back(operand);
  operand->AddUser(this);
  InvalidateCaches();
}

void HloInstruction::ReplaceOperandWith(int64_t i, HloInstruction* new_operand) {
  HloInstruction* old = operands_[i];
  if (old == new_operand) return;
  operands_[i] = new_operand;
  new_operand->AddUser(this);
  InvalidateCaches();
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    old->RemoveUser(this);
  }
}

void HloInstruction::ReplaceUsesOfOperand(HloInstruction* old_operand,
                                          HloInstruction* new_operand) {
  if (old_operand == new_operand) return;
  bool replaced = false;
  for (HloInstruction*& op : operands_) {
    if (op == old_operand) {
      op = new_operand;
      replaced = true;
    }
  }
  if (replaced) {
    InvalidateCaches();
    old_operand->RemoveUser(this);
    new_operand->AddUser(this);
  }
}

void HloInstruction::RemoveOperandAt(int64_t i) {
  HloInstruction* old = operands_[i];
  operands_.erase(operands_.begin() + i);
  InvalidateCaches();
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    old->RemoveUser(this);
  }
}

void HloInstruction::DetachFromOperands() {
  for (HloInstruction* op : operands_) op->RemoveUser(this);
  operands_.clear();
  InvalidateCaches();
}

absl::Status HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  std::vector<HloInstruction*> users = users_;
  return ReplaceUsesWith(users, replacement);
}

absl::Status HloInstruction::ReplaceUsesWith(absl::Span<HloInstruction* const> users,
                                             HloInstruction* replacement) {
  if (replacement == this) return absl::OkStatus();
  for (HloInstruction* user : users) {
    if (user == replacement) continue;  // e.g. replacing x by f(x)
    user->ReplaceUsesOfOperand(this, replacement);
  }
  if (parent_ != nullptr && parent_->root_instruction() == this) {
    parent_->set_root_instruction(replacement);
  }
  return absl::OkStatus();
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  if (std::find(control_successors_.begin(), control_successors_.end(), successor) !=
      control_successors_.end()) {
    return;
  }
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
  successor->InvalidateCaches();
}

void HloInstruction::RemoveControlDependencyTo(HloInstruction* successor) {
  auto it = std::find(control_successors_.begin(), control_successors_.end(), successor);
  if (it == control_successors_.end()) return;
  control_successors_.erase(it);
  auto& preds = successor->control_predecessors_;
  preds.erase(std::find(preds.begin(), preds.end(), this));
  successor->InvalidateCaches();
}

void HloInstruction::DropAllControlDeps() {
  for (HloInstruction* s : std::vector<HloInstruction*>(control_successors_)) {
    RemoveControlDependencyTo(s);
  }
  for (HloInstruction* p : std::vector<HloInstruction*>(control_predecessors_)) {
    p->RemoveControlDependencyTo(this);
  }
}

void HloInstruction::CopyControlDependenciesTo(HloInstruction* to) const {
  for (HloInstruction* p : control_predecessors_) p->AddControlDependencyTo(to);
  for (HloInstruction* s : control_successors_) to->AddControlDependencyTo(s);
}

HloComputation* HloInstruction::to_apply() const {
  return called_computations_.empty() ? nullptr : called_computations_[0];
}

void HloInstruction::set_to_apply(HloComputation* c) {
  if (called_computations_.empty()) {
    called_computations_.push_back(c);
  } else {
    called_computations_[0] = c;
  }
  InvalidateCaches();
}

HloInstruction* HloInstruction::async_wrapped_instruction() const {
  if (called_computations_.empty()) return nullptr;
  return called_computations_[0]->root_instruction();
}

HloOpcode HloInstruction::async_wrapped_opcode() const {
  return async_wrapped_instruction()->opcode();
}

HloInstruction* HloInstruction::fused_expression_root() const {
  return fused_instructions_computation()->root_instruction();
}

HloInstruction* HloInstruction::fused_parameter(int64_t i) const {
  return fused_instructions_computation()->parameter_instruction(i);
}

void HloInstruction::set_literal(Literal literal) {
  literal_ = std::make_unique<Literal>(std::move(literal));
  InvalidateCaches();
}

const HloAttributes& HloInstruction::attrs() const {
  static const HloAttributes* empty = new HloAttributes();
  return attrs_ ? *attrs_ : *empty;
}

HloAttributes& HloInstruction::mutable_attrs() {
  InvalidateCaches();
  if (!attrs_) attrs_ = std::make_unique<HloAttributes>();
  return *attrs_;
}

const Window& HloInstruction::window() const {
  static const Window* empty = new Window();
  const auto& w = attrs().window;
  return w.has_value() ? *w : *empty;
}

bool HloInstruction::HasSideEffect() const {
  if (HasSideEffectOpcode(opcode_)) return true;
  if (opcode_ == HloOpcode::kCustomCall) return attrs().custom_call_has_side_effect;
  if (opcode_ == HloOpcode::kAsyncStart || opcode_ == HloOpcode::kAsyncUpdate ||
      opcode_ == HloOpcode::kAsyncDone) {
    const HloInstruction* wrapped = async_wrapped_instruction();
    return wrapped != nullptr && wrapped->HasSideEffect();
  }
  return false;
}

bool HloInstruction::IsRoot() const {
  return parent_ != nullptr && parent_->root_instruction() == this;
}

bool HloInstruction::IsElementwise() const {
  if (opcode_ == HloOpcode::kFusion) return false;
  return IsElementwiseOpcode(opcode_);
}

bool HloInstruction::IsFused() const { return parent_ != nullptr && parent_->IsFusionComputation(); }

std::unique_ptr<HloInstruction> HloInstruction::CloneWithNewOperands(
    const Shape& shape, absl::Span<HloInstruction* const> new_operands) const {
  auto inst = Create(opcode_, shape, new_operands);
  inst->index_ = index_;
  inst->fusion_kind_ = fusion_kind_;
  inst->name_ = name_;
  inst->called_computations_ = called_computations_;
  inst->dimensions_ = dimensions_;
  if (literal_) inst->literal_ = std::make_unique<Literal>(*literal_);
  inst->async_execution_thread_ = async_execution_thread_;
  inst->metadata_ = metadata_;
  inst->backend_config_ = backend_config_;
  if (sharding_) inst->sharding_ = std::make_unique<HloSharding>(*sharding_);
  inst->frontend_attributes_ = frontend_attributes_;
  if (attrs_) inst->attrs_ = std::make_unique<HloAttributes>(*attrs_);
  return inst;
}

bool HloInstruction::IdenticalSlowPath(const HloInstruction& other) const {
  if (opcode_ != other.opcode_ || shape_ != other.shape_ || index_ != other.index_ ||
      dimensions_ != other.dimensions_ || called_computations_ != other.called_computations_ ||
      backend_config_ != other.backend_config_ || operands_.size() != other.operands_.size()) {
    return false;
  }
  if (opcode_ == HloOpcode::kFusion && fusion_kind_ != other.fusion_kind_) return false;
  if ((literal_ == nullptr) != (other.literal_ == nullptr)) return false;
  if (literal_ && (*literal_ != *other.literal_ || literal_->shape() != other.literal_->shape())) {
    return false;
  }
  if (async_execution_thread_ != other.async_execution_thread_) return false;
  return attrs() == other.attrs();
}

std::string AsyncWrappedComputationName(std::string_view async_start_name) {
  return StrCat(async_start_name, ".wrapped_computation");
}

}  // namespace passlab
