#include "passes/libcall/gemm_rewriter.h"

#include <algorithm>
#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

// Types the BLAS library computes in (bf16/f16 through f32).
bool GemmType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kBF16 ||
         t == PrimitiveType::kF16;
}

// The gemm call `inst` is, with its parsed config; nullopt for anything else.
struct Gemm {
  HloInstruction* call;
  GemmBackendConfig config;
};
std::optional<Gemm> AsGemm(HloInstruction* inst) {
  if (ClassifyLibraryCall(*inst) != LibraryCallKind::kGemm || !inst->shape().IsArray()) return std::nullopt;
  absl::StatusOr<GemmBackendConfig> config = ParseGemmBackendConfig(*inst);
  if (!config.ok()) return std::nullopt;
  return Gemm{inst, *config};
}

// The value of a scalar constant, or of a broadcast of one.
std::optional<double> ScalarConstant(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  if (inst->opcode() != HloOpcode::kConstant || inst->shape().rank() != 0 ||
      !IsFloatingPointType(inst->shape().element_type())) {
    return std::nullopt;
  }
  return inst->literal().GetDouble(0);
}

// Whether the gemm may write its result over C (XLA's can_overwrite_bias
// in GemmRewriterVisitor::FuseMatrixBiasAdd,
// xla/backends/gpu/transforms/gemm_rewriter.cc): C has no other user and is
// not a parameter, or an entry parameter aliased with an output.
bool CanOverwriteBias(const HloInstruction& bias) {
  if (bias.user_count() > 1) return false;
  if (bias.opcode() != HloOpcode::kParameter) return true;
  const HloComputation* parent = bias.parent();
  if (parent == nullptr || !parent->IsEntryComputation()) return false;
  for (const InputOutputAlias& alias : parent->parent()->config().input_output_alias) {
    if (alias.parameter_number == bias.parameter_number() && alias.parameter_index.empty()) return true;
  }
  return false;
}

// The vector `b` when `inst` is broadcast(b) along the last dimension only.
HloInstruction* BiasVector(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kBroadcast || inst->shape().rank() < 1) return nullptr;
  const HloInstruction* v = inst->operand(0);
  if (v->shape().rank() != 1 || inst->dimensions().size() != 1 ||
      inst->dimensions()[0] != inst->shape().rank() - 1 || v->shape().element_type() != inst->shape().element_type()) {
    return nullptr;
  }
  return inst->mutable_operand(0);
}

class GemmRewriteVisitor : public HloRewriteVisitor {
 public:
  GemmRewriteVisitor(GemmRewriter& pass, const GemmRewriterOptions& options) : pass_(pass), options_(options) {}

  // dot(A, B) => __blas$gemm(A, B)
  absl::Status HandleDot(HloInstruction* dot) override {
    PrimitiveType t = dot->shape().element_type();
    if (!GemmType(t) || dot->operand(0)->shape().element_type() != t || dot->operand(1)->shape().element_type() != t) {
      return absl::OkStatus();
    }
    GemmBackendConfig config;
    config.dot_dimension_numbers = dot->attrs().dot_dnums;
    config.precision_config = dot->attrs().precision_config;
    pass_.BumpCounter("dot -> gemm");
    return ReplaceWithNewInstruction(dot, MakeCall(dot->shape(), {dot->mutable_operand(0), dot->mutable_operand(1)},
                                                   config));
  }

  // multiply(gemm, broadcast(c)) => gemm with alpha *= c
  absl::Status HandleMultiply(HloInstruction* mul) override {
    for (int side = 0; side < 2; ++side) {
      std::optional<Gemm> g = FoldableGemm(mul, mul->mutable_operand(side));
      if (!g) continue;
      std::optional<double> c = ScalarConstant(mul->operand(1 - side));
      if (!c || g->config.beta != 0 || g->config.epilogue != GemmEpilogue::kDefault) continue;
      g->config.alpha_real *= *c;
      g->config.alpha_imag *= *c;
      pass_.BumpCounter("folded alpha");
      return ReplaceWithNewInstruction(mul, MakeCall(mul->shape(), g->call->operands(), g->config));
    }
    return absl::OkStatus();
  }

  absl::Status HandleAdd(HloInstruction* add) override {
    // BiasMode::kNoBias: no add joins a gemm (XLA's HandleAdd returns first).
    if (options_.bias_mode == GemmRewriterOptions::BiasMode::kNoBias) return absl::OkStatus();
    for (int side = 0; side < 2; ++side) {
      std::optional<Gemm> g = FoldableGemm(add, add->mutable_operand(side));
      if (!g) continue;
      HloInstruction* other = add->mutable_operand(1 - side);
      std::vector<HloInstruction*> operands = g->call->operands();
      // add(gemm, broadcast(v)) => gemm with epilogue BIAS
      if (HloInstruction* bias = BiasVector(other);
          bias != nullptr && options_.fold_epilogues && g->config.epilogue == GemmEpilogue::kDefault) {
        g->config.epilogue = GemmEpilogue::kBias;
        operands.push_back(bias);
        pass_.BumpCounter("folded bias epilogue");
        return ReplaceWithNewInstruction(add, MakeCall(add->shape(), operands, g->config));
      }
      // add(gemm, C) => gemm with beta = 1 and C
      if (g->config.beta != 0 || g->config.epilogue != GemmEpilogue::kDefault || other->user_count() != 1 ||
          other->shape() != add->shape() || other == g->call) {
        continue;
      }
      g->config.beta = 1;
      operands.insert(operands.begin() + 2, other);
      pass_.BumpCounter("folded beta*C");
      // The gemm accumulates into C's buffer where it may (XLA: "Force
      // bias input to alias with output, as GEMM operates in-place").
      // Asked before the call exists: it becomes C's second user.
      const bool overwrite_c = CanOverwriteBias(*other);
      std::unique_ptr<HloInstruction> call = MakeCall(add->shape(), operands, g->config);
      if (overwrite_c) call->mutable_attrs().output_to_operand_aliasing = {{ShapeIndex{}, 2, ShapeIndex{}}};
      return ReplaceWithNewInstruction(add, std::move(call));
    }
    return absl::OkStatus();
  }

  // maximum(gemm, broadcast(0)) => gemm with epilogue RELU (BIAS_RELU)
  absl::Status HandleMaximum(HloInstruction* max) override {
    if (!options_.fold_epilogues) return absl::OkStatus();
    for (int side = 0; side < 2; ++side) {
      std::optional<Gemm> g = FoldableGemm(max, max->mutable_operand(side));
      if (!g) continue;
      std::optional<double> zero = ScalarConstant(max->operand(1 - side));
      if (!zero || *zero != 0) continue;
      if (g->config.epilogue == GemmEpilogue::kDefault) {
        g->config.epilogue = GemmEpilogue::kRelu;
      } else if (g->config.epilogue == GemmEpilogue::kBias) {
        g->config.epilogue = GemmEpilogue::kBiasRelu;
      } else {
        continue;
      }
      pass_.BumpCounter("folded relu epilogue");
      return ReplaceWithNewInstruction(max, MakeCall(max->shape(), g->call->operands(), g->config));
    }
    return absl::OkStatus();
  }

 private:
  // `operand` of `user` as a gemm that can absorb `user`: only used there,
  // same shape (so no type change hides in the fold).
  static std::optional<Gemm> FoldableGemm(const HloInstruction* user, HloInstruction* operand) {
    std::optional<Gemm> g = AsGemm(operand);
    if (!g || operand->user_count() != 1 || operand->IsRoot() || operand->shape() != user->shape() ||
        user->operand(0) == user->operand(1)) {
      return std::nullopt;
    }
    return g;
  }

  static std::unique_ptr<HloInstruction> MakeCall(const Shape& shape, absl::Span<HloInstruction* const> operands,
                                                  const GemmBackendConfig& config) {
    return HloInstruction::CreateCustomCall(shape, operands, std::string(kGemmCallTarget), config.ToJson());
  }

  GemmRewriter& pass_;
  const GemmRewriterOptions& options_;
};

// XLA's GemmConfig::kDefaultWorkspace and kHopperWorkspace.
constexpr int64_t kDefaultWorkspaceBytes = int64_t{4} << 20;
constexpr int64_t kHopperWorkspaceBytes = int64_t{32} << 20;

// Runs after the folds (which match array-shaped calls), as XLA's
// GemmWorkspaceRewriteVisitor runs after its GemmRewriterVisitor.
class GemmWorkspaceVisitor : public HloRewriteVisitor {
 public:
  explicit GemmWorkspaceVisitor(const GemmRewriterOptions& options) : options_(options) {}

  // gemm(A, B, ...): T => get-tuple-element(gemm(A, B, ...): (T, s8[w]), 0)
  absl::Status HandleCustomCall(HloInstruction* call) override {
    if (ClassifyLibraryCall(*call) != LibraryCallKind::kGemm || !call->shape().IsArray()) return absl::OkStatus();
    // The library may at worst re-lay every operand out in its own tiling,
    // so more workspace than the operands' bytes is never needed (XLA's
    // rule for __cublas$gemm).
    int64_t operand_bytes = 0;
    for (const HloInstruction* operand : call->operands()) operand_bytes += operand->shape().byte_size();
    int64_t workspace = options_.compute_capability_major >= 9 ? kHopperWorkspaceBytes : kDefaultWorkspaceBytes;
    workspace = std::min(workspace, operand_bytes);
    Shape shape = Shape::Tuple({call->shape(), Shape(PrimitiveType::kS8, {workspace})});
    std::unique_ptr<HloInstruction> with_workspace = call->CloneWithNewOperands(shape, call->operands());
    // An output aliased to C now is element 0 of the tuple.
    for (OutputOperandAlias& alias : with_workspace->mutable_attrs().output_to_operand_aliasing) {
      alias.output_index.insert(alias.output_index.begin(), 0);
    }
    HloInstruction* new_call = AddInstruction(call, std::move(with_workspace));
    return ReplaceWithNewInstruction(call, HloInstruction::CreateGetTupleElement(new_call, 0));
  }

 private:
  const GemmRewriterOptions& options_;
};

}  // namespace

absl::StatusOr<bool> GemmRewriter::RunImpl(HloModule& module, PassRunContext*) {
  GemmRewriteVisitor visitor(*this, options_);
  ASSIGN_OR_RETURN(bool folded, visitor.RunOnModule(module));
  GemmWorkspaceVisitor workspace(options_);
  ASSIGN_OR_RETURN(bool with_workspace, workspace.RunOnModule(module));
  return folded || with_workspace;
}

}  // namespace passlab
