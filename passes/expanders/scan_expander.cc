#include "passes/expanders/scan_expander.h"

#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "passes/expanders/expansion_builder.h"
#include "passes/simplifiers/call_inliner.h"

namespace passlab {
namespace {

struct ScanParts {
  int64_t dim = 0;
  int64_t length = 0;
  int64_t num_inputs = 0;
  int64_t num_carries = 0;
  int64_t num_outputs = 0;
};

ScanParts PartsOf(const HloInstruction& scan) {
  ScanParts p;
  p.dim = scan.dimensions(0);
  p.num_carries = scan.attrs().num_carries;
  p.num_inputs = scan.operand_count() - p.num_carries;
  const int64_t results = scan.shape().IsTuple() ? scan.shape().tuple_shapes_size() : 1;
  p.num_outputs = results - p.num_carries;
  if (p.num_inputs > 0) {
    p.length = scan.operand(0)->shape().dimensions(p.dim);
  } else if (p.num_outputs > 0) {
    const Shape& out = scan.shape().IsTuple() ? scan.shape().tuple_shapes(0) : scan.shape();
    p.length = out.dimensions(p.dim);
  } else {
    p.length = -1;  // unknown: no inputs, no outputs
  }
  return p;
}

const Shape& ResultShape(const HloInstruction& scan, int64_t i) {
  return scan.shape().IsTuple() ? scan.shape().tuple_shapes(i) : scan.shape();
}

std::vector<int64_t> WithoutDim(const Shape& s, int64_t dim) {
  std::vector<int64_t> dims = s.dimensions();
  dims.erase(dims.begin() + dim);
  return dims;
}

// Element i of a call's result: the call itself when it is not a tuple.
HloInstruction* Part(ExpansionBuilder& b, HloInstruction* call, int64_t i) {
  return call->shape().IsTuple() ? b.GetTupleElement(call, i) : call;
}

}  // namespace

bool ScanExpander::InstructionMatchesPattern(HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kScan) return false;
  // Length 1: one application of to_apply beats any lowering.
  if (PartsOf(*inst).length == 1) return true;
  if (!expand_associative_scans_ && inst->attrs().is_associative == true) return false;
  return PartsOf(*inst).length >= 0;
}

absl::StatusOr<HloInstruction*> ScanExpander::ExpandInstruction(HloInstruction* scan) {
  const ScanParts p = PartsOf(*scan);
  HloComputation* parent = scan->parent();
  HloComputation* to_apply = scan->to_apply();
  const Shape& apply_shape = to_apply->root_instruction()->shape();
  ExpansionBuilder b(parent, scan->metadata());

  if (p.length == 1) {
    // out_k = reshape(to_apply(squeezed inputs..., inits...)[k]); carries as they come.
    std::vector<HloInstruction*> args;
    for (int64_t i = 0; i < p.num_inputs; ++i) {
      HloInstruction* in = scan->mutable_operand(i);
      args.push_back(b.Reshape(in, WithoutDim(in->shape(), p.dim)));
    }
    for (int64_t c = 0; c < p.num_carries; ++c) args.push_back(scan->mutable_operand(p.num_inputs + c));
    HloInstruction* call = b.Add(HloInstruction::CreateCall(apply_shape, args, to_apply));
    std::vector<HloInstruction*> results;
    for (int64_t o = 0; o < p.num_outputs; ++o) {
      results.push_back(b.Reshape(Part(b, call, o), ResultShape(*scan, o).dimensions()));
    }
    for (int64_t c = 0; c < p.num_carries; ++c) results.push_back(Part(b, call, p.num_outputs + c));
    HloInstruction* result = scan->shape().IsTuple() ? b.Tuple(results) : results[0];
    if (absl::StatusOr<HloInstruction*> inlined = InlineCall(call); !inlined.ok()) return inlined.status();
    return result;
  }

  // The loop state: carries..., inputs..., outputs... (MakeCountedLoop adds
  // the index). Outputs start as zeros.
  std::vector<HloInstruction*> init;
  for (int64_t c = 0; c < p.num_carries; ++c) init.push_back(scan->mutable_operand(p.num_inputs + c));
  for (int64_t i = 0; i < p.num_inputs; ++i) init.push_back(scan->mutable_operand(i));
  for (int64_t o = 0; o < p.num_outputs; ++o) {
    const Shape& s = ResultShape(*scan, o);
    init.push_back(b.Broadcast(b.Zero(s.element_type()), s.dimensions()));
  }
  const bool reverse = scan->attrs().is_reverse;
  std::vector<HloInstruction*> calls;
  ASSIGN_OR_RETURN(std::vector<HloInstruction*> final_state, MakeCountedLoop(
      parent, p.length, init,
      [&](ExpansionBuilder& body, HloInstruction* i,
          const std::vector<HloInstruction*>& state) -> absl::StatusOr<std::vector<HloInstruction*>> {
        const PrimitiveType it = i->shape().element_type();
        HloInstruction* at = reverse ? body.Binary(HloOpcode::kSubtract, body.ConstantScalar(it, p.length - 1), i) : i;
        HloInstruction* zero = body.ConstantScalar(it, 0);
        std::vector<HloInstruction*> args;
        for (int64_t k = 0; k < p.num_inputs; ++k) {
          HloInstruction* in = state[p.num_carries + k];
          std::vector<HloInstruction*> starts(in->shape().rank(), zero);
          starts[p.dim] = at;
          std::vector<int64_t> sizes = in->shape().dimensions();
          sizes[p.dim] = 1;
          args.push_back(body.Reshape(body.DynamicSlice(in, starts, sizes), WithoutDim(in->shape(), p.dim)));
        }
        for (int64_t c = 0; c < p.num_carries; ++c) args.push_back(state[c]);
        HloInstruction* call = body.Add(HloInstruction::CreateCall(apply_shape, args, to_apply));
        calls.push_back(call);
        std::vector<HloInstruction*> next;
        for (int64_t c = 0; c < p.num_carries; ++c) next.push_back(Part(body, call, p.num_outputs + c));
        for (int64_t k = 0; k < p.num_inputs; ++k) next.push_back(state[p.num_carries + k]);
        for (int64_t o = 0; o < p.num_outputs; ++o) {
          HloInstruction* out = state[p.num_carries + p.num_inputs + o];
          std::vector<int64_t> dims = out->shape().dimensions();
          dims[p.dim] = 1;
          HloInstruction* update = body.Reshape(Part(body, call, o), dims);
          std::vector<HloInstruction*> starts(out->shape().rank(), zero);
          starts[p.dim] = at;
          next.push_back(body.DynamicUpdateSlice(out, update, starts));
        }
        return next;
      },
      scan->metadata(), StrCat(scan->name(), "_scan")));
  for (HloInstruction* call : calls) {
    if (absl::StatusOr<HloInstruction*> inlined = InlineCall(call); !inlined.ok()) return inlined.status();
  }
  // The scan's result: (outputs..., final carries...).
  std::vector<HloInstruction*> results;
  for (int64_t o = 0; o < p.num_outputs; ++o) results.push_back(final_state[p.num_carries + p.num_inputs + o]);
  for (int64_t c = 0; c < p.num_carries; ++c) results.push_back(final_state[c]);
  return scan->shape().IsTuple() ? b.Tuple(results) : results[0];
}

}  // namespace passlab
