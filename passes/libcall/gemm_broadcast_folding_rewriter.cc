#include "passes/libcall/gemm_broadcast_folding_rewriter.h"

#include <algorithm>
#include <vector>

#include "core/libcall/library_call.h"
#include "core/pass/hlo_rewrite_visitor.h"

namespace passlab {
namespace {

// Whether `bcast` (a gemm operand with batch dimensions `batch`) only adds
// those batch dimensions: its operand's dimensions are, in order, exactly
// the gemm operand's other dimensions.
bool AddsOnlyBatchDims(const HloInstruction& bcast, const std::vector<int64_t>& batch) {
  if (bcast.opcode() != HloOpcode::kBroadcast || batch.empty()) return false;
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < bcast.shape().rank(); ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end()) rest.push_back(d);
  }
  return bcast.dimensions() == rest;
}

// The position of dimension `d` of the broadcast among its operand's dims.
int64_t OperandDim(const HloInstruction& bcast, int64_t d) {
  const std::vector<int64_t>& dims = bcast.dimensions();
  return std::find(dims.begin(), dims.end(), d) - dims.begin();
}

class Visitor : public HloRewriteVisitor {
 public:
  absl::Status HandleCustomCall(HloInstruction* call) override {
    std::optional<LibraryCallKind> kind = ClassifyLibraryCall(*call);
    if (!kind.has_value() || *kind != LibraryCallKind::kGemm) return absl::OkStatus();
    absl::StatusOr<GemmCall> gemm = AnalyzeGemmCall(*call);
    if (!gemm.ok()) return absl::OkStatus();  // the runtime reports malformed calls
    DotDimensionNumbers& d = gemm->config.dot_dimension_numbers;
    if (d.lhs_batch_dimensions.empty() || d.rhs_batch_dimensions.empty()) return absl::OkStatus();
    for (int64_t side = 0; side < 2; ++side) {
      HloInstruction* bcast = call->mutable_operand(side);
      std::vector<int64_t>& batch = side == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
      std::vector<int64_t>& contracting = side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
      if (!AddsOnlyBatchDims(*bcast, batch)) continue;
      // gemm(broadcast(x) over the batch, y) => gemm(x, y), x at batch stride 0
      for (int64_t& c : contracting) c = OperandDim(*bcast, c);
      batch.clear();
      call->ReplaceOperandWith(side, bcast->mutable_operand(0));
      call->set_raw_backend_config(gemm->config.ToJson());
      MarkChanged();
      if (absl::StatusOr<bool> removed = RemoveIfDead(bcast); !removed.ok()) return removed.status();
      return absl::OkStatus();
    }
    return absl::OkStatus();
  }
};

}  // namespace

absl::StatusOr<bool> GemmBroadcastFoldingRewriter::RunImpl(HloModule& module, PassRunContext*) {
  Visitor visitor;
  return visitor.RunOnModule(module);
}

}  // namespace passlab
