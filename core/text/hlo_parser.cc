#include "core/text/hlo_parser.h"

#include <functional>

#include "core/ir/status_macros.h"
#include "core/text/hlo_parser_internal.h"

namespace passlab {
namespace text_internal {

absl::Status Parser::ParseHeader() {
  SkipWs();
  if (!ConsumeWord("HloModule")) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string name, ParseName());
  module_->set_name(name);
  // Seed 000's GELU file writes "HloModule m:"; tolerate the stray colon.
  Consume(':');
  HloModuleConfig& config = module_->config();
  absl::flat_hash_set<std::string> seen;
  while (Consume(',')) {
    const char* at = p_;
    ASSIGN_OR_RETURN(std::string key, ParseIdentifier());
    if (!seen.insert(key).second) return Error(at, StrCat("duplicate module attribute '", key, "'"));
    RETURN_IF_ERROR(Expect('='));
    if (key == "is_scheduled") {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      is_scheduled_ = b;
    } else if (key == "entry_computation_layout") {
      RETURN_IF_ERROR(Expect('{'));
      ProgramShape ps;
      // A shape written here without a layout is XLA's AUTO layout (layout
      // assignment chooses it): it stays without one.
      keep_missing_layouts_ = true;
      ASSIGN_OR_RETURN(std::vector<Shape> params,
          ParseList<Shape>('(', ')', [&] { return ParseShape(); }));
      ps.parameters = std::move(params);
      RETURN_IF_ERROR(ExpectStr("->"));
      absl::StatusOr<Shape> result = ParseShape();
      keep_missing_layouts_ = false;
      if (!result.ok()) return result.status();
      ps.result = std::move(*result);
      RETURN_IF_ERROR(Expect('}'));
      config.entry_computation_layout = std::move(ps);
    } else if (key == "alias_passthrough_params") {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      config.alias_passthrough_params = b;
    } else if (key == "use_auto_spmd_partitioning") {
      ASSIGN_OR_RETURN(bool b, ParseBool());
      config.use_auto_spmd_partitioning = b;
    } else if (key == "replica_count" || key == "num_partitions") {
      ASSIGN_OR_RETURN(int64_t n, ParseInt());
      if (n < 1) return Error(at, StrCat(key, " must be at least 1"));
      (key == "replica_count" ? config.replica_count : config.num_partitions) = n;
    } else if (key == "frontend_attributes") {
      ASSIGN_OR_RETURN(FrontendAttributes fa, ParseFrontendAttributes());
      config.frontend_attributes = std::move(fa);
    } else if (key == "allow_spmd_sharding_propagation_to_parameters" ||
               key == "allow_spmd_sharding_propagation_to_output") {
      // XLA's boolean_list: "{true,false}" or one bare "true".
      ASSIGN_OR_RETURN(std::vector<bool> v, ParseBoolOrBoolList());
      (key == "allow_spmd_sharding_propagation_to_output"
           ? config.allow_spmd_sharding_propagation_to_output
           : config.allow_spmd_sharding_propagation_to_parameters) = v;
    } else if (key == "input_output_alias") {
      ASSIGN_OR_RETURN(std::vector<InputOutputAlias> aliases,
          ParseList<InputOutputAlias>('{', '}', [&]() -> absl::StatusOr<InputOutputAlias> {
            InputOutputAlias a;
            ASSIGN_OR_RETURN(ShapeIndex out, ParseShapeIndex());
            RETURN_IF_ERROR(Expect(':'));
            RETURN_IF_ERROR(Expect('('));
            ASSIGN_OR_RETURN(int64_t param, ParseInt());
            RETURN_IF_ERROR(Expect(','));
            ASSIGN_OR_RETURN(ShapeIndex pidx, ParseShapeIndex());
            if (Consume(',')) {
              if (ConsumeWord("must-alias")) {
                a.must_alias = true;
              } else if (!ConsumeWord("may-alias")) {
                return Error("expected may-alias or must-alias");
              }
            }
            RETURN_IF_ERROR(Expect(')'));
            a.output_index = out;
            a.parameter_number = param;
            a.parameter_index = pidx;
            return a;
          }));
      config.input_output_alias = std::move(aliases);
    } else if (key == "buffer_donor") {
      ASSIGN_OR_RETURN(std::vector<BufferDonor> donors,
          ParseList<BufferDonor>('{', '}', [&]() -> absl::StatusOr<BufferDonor> {
            BufferDonor d;
            RETURN_IF_ERROR(Expect('('));
            ASSIGN_OR_RETURN(int64_t param, ParseInt());
            RETURN_IF_ERROR(Expect(','));
            ASSIGN_OR_RETURN(ShapeIndex pidx, ParseShapeIndex());
            RETURN_IF_ERROR(Expect(')'));
            d.parameter_number = param;
            d.parameter_index = pidx;
            return d;
          }));
      config.buffer_donor = std::move(donors);
    } else {
      // Header attributes passlab does not model are kept verbatim.
      ASSIGN_OR_RETURN(std::string value,
          ParseVerbatimValue(at, "", StrCat("missing value for module attribute '", key, "'")));
      config.unknown_attributes.push_back({key, std::move(value)});
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HloModule>> Parser::ParseModule() {
  module_ = std::make_unique<HloModule>("module");
  RETURN_IF_ERROR(ParseHeader());
  while (!AtEnd()) {
    RETURN_IF_ERROR(ParseComputation());
  }
  if (computations_.empty()) return Error("expected at least one computation");
  RETURN_IF_ERROR(Finish());
  return std::move(module_);
}

absl::Status Parser::Finish() {
  // Resolve called computations.
  for (const PendingComputationRef& ref : computation_refs_) {
    auto it = computation_names_.find(ref.use.name);
    if (it == computation_names_.end()) {
      return Error(ref.use.pos, StrCat("computation '", ref.use.name, "' is not defined"));
    }
    ref.inst->set_called_computation(ref.slot, it->second);
  }
  // Conditionals written with true/false computations may leave holes.
  for (const auto& c : computations_) {
    for (HloInstruction* inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) {
        if (callee == nullptr) {
          return Error(begin_, StrCat("instruction '", inst->name(),
                                            "' is missing one of its called computations"));
        }
      }
      if (inst->opcode() == HloOpcode::kAsyncStart) {
        HloInstruction* wrapped = inst->async_wrapped_instruction();
        if (wrapped != nullptr) {
          for (HloComputation* callee : wrapped->called_computations()) {
            if (callee == nullptr) {
              return Error(begin_, StrCat("instruction '", inst->name(),
                                                "' is missing one of its called computations"));
            }
          }
        }
      }
    }
  }
  // async-update/-done without calls= take their operand's computation.
  for (HloInstruction* inst : async_update_done_without_calls_) {
    if (inst->operand_count() < 1) continue;
    HloInstruction* op = inst->mutable_operand(0);
    if ((op->opcode() != HloOpcode::kAsyncStart && op->opcode() != HloOpcode::kAsyncUpdate) ||
        op->called_computations().empty()) {
      return Error(begin_, StrCat("'", inst->name(), "' must take an async-start or async-update "
                                        "as its operand (seed 001), but takes '", op->name(), "'"));
    }
    inst->AppendCalledComputation(op->called_computations()[0]);
    inst->set_async_execution_thread(op->async_execution_thread());
  }
  // Every computation must be reachable only through valid references; a
  // computation called as a fusion gets its fusion instruction.
  HloComputation* entry = entry_ != nullptr ? entry_ : computations_.back().get();
  // Detect recursion (a computation calling itself transitively).
  absl::flat_hash_map<const HloComputation*, int> state;
  std::function<absl::Status(const HloComputation*, int)> visit =
      [&](const HloComputation* c, int depth) -> absl::Status {
    if (depth > 10000) return Error(begin_, "call graph too deep");
    int& s = state[c];
    if (s == 1) return Error(begin_, StrCat("computation '", c->name(), "' calls itself"));
    if (s == 2) return absl::OkStatus();
    s = 1;
    for (HloInstruction* inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) {
        RETURN_IF_ERROR(visit(callee, depth + 1));
      }
    }
    state[c] = 2;
    return absl::OkStatus();
  };
  for (const auto& c : computations_) {
    RETURN_IF_ERROR(visit(c.get(), 0));
  }
  // An async-start puts its wrapped computation, and every computation that
  // one calls, on its thread (XLA's HloAsyncStartInstruction::
  // set_async_execution_thread, SetThreadName in hlo_instructions.cc): the
  // to_apply of "call-start(...), to_apply={...}, async_execution_thread=" is
  // on that thread too. In text order, as XLA builds them; the call graph is
  // known to be acyclic and shallow here.
  absl::flat_hash_set<const HloComputation*> visited;
  std::function<void(HloComputation*, const std::string&)> set_thread =
      [&](HloComputation* c, const std::string& thread) {
        if (c == nullptr || !visited.insert(c).second) return;
        c->set_execution_thread(thread);
        for (HloInstruction* inst : c->instructions()) {
          if (inst->opcode() == HloOpcode::kAsyncStart || inst->opcode() == HloOpcode::kAsyncUpdate ||
              inst->opcode() == HloOpcode::kAsyncDone) {
            inst->set_async_execution_thread(thread);
          }
          for (HloComputation* callee : inst->called_computations()) set_thread(callee, thread);
        }
      };
  for (const auto& c : computations_) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kAsyncStart || inst->called_computations().empty()) continue;
      visited.clear();
      set_thread(inst->called_computations()[0], inst->async_execution_thread());
    }
  }
  for (size_t i = 0; i < computations_.size(); ++i) {
    HloComputation* c = computations_[i].get();
    module_->AddComputationKeepName(std::move(computations_[i]), c == entry);
  }
  for (HloComputation* c : module_->computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kFusion && !inst->called_computations().empty()) {
        HloComputation* fused = inst->fused_instructions_computation();
        if (fused->FusionInstruction() == nullptr) fused->SetFusionInstruction(inst);
      }
    }
  }
  module_->set_is_scheduled(is_scheduled_);
  // A scheduled module's post order is its text order (HloComputation).
  if (is_scheduled_) {
    for (HloComputation* c : module_->computations()) c->InvalidatePostOrder();
  }
  return InferMissingShapes();
}

absl::Status Parser::InferMissingShapes() {
  if (needs_inference_.empty()) return absl::OkStatus();
  absl::flat_hash_map<const HloInstruction*, const char*> pending;
  for (auto [inst, pos] : needs_inference_) pending[inst] = pos;
  if (!options_.infer_shape) {
    auto [inst, pos] = needs_inference_.front();
    return Error(pos, StrCat("instruction '", inst->name(),
                             "' has no shape, and this parse has no shape inference"));
  }
  for (HloComputation* c : module_->MakeComputationPostOrder()) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      auto it = pending.find(inst);
      if (it == pending.end()) continue;
      for (const HloInstruction* op : inst->operands()) {
        if (op->shape().element_type() == PrimitiveType::kInvalid) {
          return Error(it->second, StrCat("cannot infer the shape of '", inst->name(),
                                          "': operand '", op->name(), "' has no shape"));
        }
      }
      absl::StatusOr<Shape> shape = options_.infer_shape(*inst);
      if (!shape.ok()) {
        return Error(it->second, StrCat("cannot infer the shape of '", inst->name(), "': ",
                                        std::string(shape.status().message())));
      }
      *inst->mutable_shape() = std::move(*shape);
    }
  }
  return absl::OkStatus();
}

}  // namespace text_internal

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                         std::string_view filename,
                                                         const ParseOptions& options) {
  text_internal::Parser parser(text, filename, options);
  return parser.ParseModule();
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  text_internal::Parser parser(text, "<shape>");
  return parser.ParseStandaloneShape();
}

}  // namespace passlab
