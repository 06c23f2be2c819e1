// HloBuilder: builds one HLO computation op by op, in the spirit of XLA's
// XlaBuilder. Every op infers its result shape with core/verify's shape
// inference and carries OpMetadata: op_type (the framework op it stands for,
// "Conv2D", "Relu", ...; set with ScopedOpType, the opcode otherwise) and
// op_name (the scope path, "resnet50/layer1/block0/conv1", set with
// ScopedName). Errors are sticky, as in XlaBuilder: the first failing op
// records "op 'NAME' (opcode): why", later ops see a null operand and do
// nothing, and Build() returns the error.
//
// The computation is attached to the module from the start, so instruction
// names are unique in the module while building.
#ifndef PASSLAB_MODELS_HLO_BUILDER_H_
#define PASSLAB_MODELS_HLO_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/hlo_module.h"

namespace passlab {

using Op = HloInstruction*;

enum class ReducerKind { kAdd, kMax };

class HloBuilder {
 public:
  // Builds into `module`: the entry computation when `is_entry`, else an
  // embedded one (a reducer, comparator, fused computation).
  HloBuilder(HloModule* module, std::string name, bool is_entry = true);
  // Continues building into an existing computation of a module (appending
  // instructions, e.g. a gradient after a forward pass).
  explicit HloBuilder(HloComputation* existing);

  HloModule* module() const { return module_; }
  HloComputation* computation() const { return computation_; }
  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

  // Sets the root (a tuple of `outputs` when there are several, or the single
  // output) and returns the computation, or the first error.
  absl::StatusOr<HloComputation*> Build(const std::vector<Op>& outputs);
  absl::StatusOr<HloComputation*> Build(Op root) { return Build(std::vector<Op>{root}); }

  // Scope for op_name ("a/b/c") and op_type metadata.
  class ScopedName {
   public:
    ScopedName(HloBuilder& b, std::string part) : b_(b) { b_.scopes_.push_back(std::move(part)); }
    ~ScopedName() { b_.scopes_.pop_back(); }
    ScopedName(const ScopedName&) = delete;
    ScopedName& operator=(const ScopedName&) = delete;
   private:
    HloBuilder& b_;
  };
  class ScopedOpType {
   public:
    ScopedOpType(HloBuilder& b, std::string type) : b_(b), saved_(b.op_type_) { b_.op_type_ = std::move(type); }
    ~ScopedOpType() { b_.op_type_ = saved_; }
    ScopedOpType(const ScopedOpType&) = delete;
    ScopedOpType& operator=(const ScopedOpType&) = delete;
   private:
    HloBuilder& b_;
    std::string saved_;
  };
  std::string ScopePath() const;

  // Leaves.
  Op Parameter(const Shape& shape, std::string name);
  Op ConstantLiteral(Literal literal, std::string name = "");
  Op ConstantScalar(PrimitiveType type, double value);
  // A scalar constant broadcast to `shape` (shape's element type).
  Op Full(const Shape& shape, double value);
  Op Iota(const Shape& shape, int64_t dimension);

  // Elementwise.
  Op Unary(HloOpcode opcode, Op x);
  Op Binary(HloOpcode opcode, Op a, Op b);
  Op Add(Op a, Op b) { return Binary(HloOpcode::kAdd, a, b); }
  Op Sub(Op a, Op b) { return Binary(HloOpcode::kSubtract, a, b); }
  Op Mul(Op a, Op b) { return Binary(HloOpcode::kMultiply, a, b); }
  Op Div(Op a, Op b) { return Binary(HloOpcode::kDivide, a, b); }
  Op Max(Op a, Op b) { return Binary(HloOpcode::kMaximum, a, b); }
  Op Pow(Op a, Op b) { return Binary(HloOpcode::kPower, a, b); }
  Op Neg(Op x) { return Unary(HloOpcode::kNegate, x); }
  Op Exp(Op x) { return Unary(HloOpcode::kExp, x); }
  Op Log(Op x) { return Unary(HloOpcode::kLog, x); }
  Op Tanh(Op x) { return Unary(HloOpcode::kTanh, x); }
  Op Sqrt(Op x) { return Unary(HloOpcode::kSqrt, x); }
  Op Rsqrt(Op x) { return Unary(HloOpcode::kRsqrt, x); }
  Op Compare(Op a, Op b, ComparisonDirection direction);
  Op Select(Op pred, Op on_true, Op on_false);
  Op Convert(Op x, PrimitiveType type);
  // a (op) b where b is a scalar constant broadcast to a's shape.
  Op MulScalar(Op a, double b);
  Op AddScalar(Op a, double b);

  // Shape manipulation.
  Op Broadcast(Op x, const std::vector<int64_t>& out_dims, const std::vector<int64_t>& dimensions);
  // Broadcasts a scalar to out_dims.
  Op BroadcastScalar(Op x, const std::vector<int64_t>& out_dims) { return Broadcast(x, out_dims, {}); }
  Op Reshape(Op x, const std::vector<int64_t>& dims);
  Op Transpose(Op x, const std::vector<int64_t>& permutation);
  Op Reverse(Op x, const std::vector<int64_t>& dimensions);
  Op Slice(Op x, const std::vector<int64_t>& starts, const std::vector<int64_t>& limits,
           const std::vector<int64_t>& strides = {});
  Op Pad(Op x, Op value, const PaddingConfig& config);
  Op Concatenate(const std::vector<Op>& xs, int64_t dimension);
  Op Tuple(const std::vector<Op>& xs);
  Op GetTupleElement(Op t, int64_t index);

  // Contractions.
  Op Dot(Op a, Op b, const DotDimensionNumbers& dnums, PrimitiveType result_type = PrimitiveType::kInvalid);
  // a[..., k] x b[k, n] (rank-2 b; a any rank).
  Op MatMul(Op a, Op b);
  Op Convolution(Op lhs, Op rhs, const Window& window, const ConvolutionDimensionNumbers& dnums,
                 int64_t feature_group_count = 1, int64_t batch_group_count = 1);

  // Reductions (reducers are shared scalar computations of the module).
  HloComputation* Reducer(ReducerKind kind, PrimitiveType type);
  Op Reduce(Op x, Op init, const std::vector<int64_t>& dimensions, ReducerKind kind);
  Op ReduceSum(Op x, const std::vector<int64_t>& dimensions);
  Op ReduceMax(Op x, const std::vector<int64_t>& dimensions);
  Op ReduceWindow(Op x, Op init, const Window& window, ReducerKind kind);
  // select-and-scatter with select = GE (max pooling's gradient), scatter = add.
  Op SelectAndScatter(Op operand, Op source, Op init, const Window& window);

  // Batch norm.
  Op BatchNormTraining(Op x, Op scale, Op offset, float epsilon, int64_t feature_index);
  Op BatchNormInference(Op x, Op scale, Op offset, Op mean, Op variance, float epsilon,
                        int64_t feature_index);
  Op BatchNormGrad(Op x, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                   int64_t feature_index);

  // Gather / scatter.
  Op Gather(Op operand, Op indices, const GatherDimensionNumbers& dnums,
            const std::vector<int64_t>& slice_sizes);
  Op ScatterAdd(Op operand, Op indices, Op updates, const ScatterDimensionNumbers& dnums);

  // Fusion of a computation built separately.
  Op Fusion(const std::vector<Op>& operands, HloComputation* fused, FusionKind kind, std::string name = "");

  // Adds a fully formed instruction: infers and checks its shape when
  // `infer` (else keeps the shape given), attaches metadata, records errors.
  Op AddInstruction(std::unique_ptr<HloInstruction> instruction, bool infer, std::string name = "");

  // Records an error (the first one wins) and returns nullptr.
  Op Fail(std::string_view op, HloOpcode opcode, std::string_view message);

 private:
  bool CheckOperands(std::string_view op, std::initializer_list<Op> operands);

  HloModule* module_;
  HloComputation* computation_;
  absl::Status status_;
  std::vector<std::string> scopes_;
  std::string op_type_;
  int64_t next_parameter_ = 0;
};

// A window with the given per-dimension sizes, strides and (low, high) padding.
Window MakeWindow(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                  const std::vector<std::pair<int64_t, int64_t>>& padding);

}  // namespace passlab

#endif  // PASSLAB_MODELS_HLO_BUILDER_H_
