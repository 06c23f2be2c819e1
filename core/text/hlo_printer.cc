#include "core/text/hlo_printer.h"

#include "core/ir/attribute_append.h"
#include "core/text/hlo_printer_internal.h"

namespace passlab {
namespace text_internal {

void Printer::Module(const HloModule& module) {
  FindSugaredComputations(module);
  if (collect_chunks_) {
    std::vector<const HloComputation*> computations;
    for (HloComputation* c : module.MakeComputationPostOrder()) {
      if (!sugared_.contains(c)) computations.push_back(c);
    }
    Chunks(computations);
    const ComputationText* entry = nullptr;
    for (size_t i = 0; i < computations.size(); ++i) {
      if (computations[i] == module.entry_computation()) entry = chunks_[i].get();
    }
    ModuleLine(module, entry);
    header_ = std::move(out_);
    out_.clear();
    return;
  }
  ModuleLine(module, nullptr);
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (sugared_.contains(c)) continue;
    out_ += "\n";
    Computation(*c);
    out_ += "\n";
  }
}

// "HloModule name, attributes...\n". `entry`: the entry computation's
// text, whose header knows the entry computation layout.
void Printer::ModuleLine(const HloModule& module, const ComputationText* entry) {
  const HloModuleConfig& config = module.config();
  StrAppend(&out_, "HloModule ", module.name());
  if (module.is_scheduled()) out_ += ", is_scheduled=true";
  if (!config.input_output_alias.empty()) {
    out_ += ", input_output_alias={ ";
    for (size_t i = 0; i < config.input_output_alias.size(); ++i) {
      const InputOutputAlias& a = config.input_output_alias[i];
      if (i > 0) out_ += ", ";
      StrAppend(&out_, ShapeIndexToString(a.output_index), ": (", a.parameter_number,
                      ", ", ShapeIndexToString(a.parameter_index),
                      a.must_alias ? ", must-alias" : ", may-alias", ")");
    }
    out_ += " }";
  }
  if (!config.buffer_donor.empty()) {
    out_ += ", buffer_donor={ ";
    for (size_t i = 0; i < config.buffer_donor.size(); ++i) {
      const BufferDonor& d = config.buffer_donor[i];
      if (i > 0) out_ += ", ";
      StrAppend(&out_, "(", d.parameter_number, ", ",
                      ShapeIndexToString(d.parameter_index), ")");
    }
    out_ += " }";
  }
  if (config.alias_passthrough_params) out_ += ", alias_passthrough_params=true";
  if (module.entry_computation() != nullptr) {
    out_ += ", entry_computation_layout={";
    // The entry header's copy unless the module declares a layout that
    // differs from it (compared in place: an entry may have hundreds of
    // parameters).
    const std::optional<ProgramShape>& declared = config.entry_computation_layout;
    auto same_as_entry = [&](const ProgramShape& layout) {
      const HloComputation& c = *module.entry_computation();
      if (static_cast<int64_t>(layout.parameters.size()) != c.num_parameters()) return false;
      for (int64_t i = 0; i < c.num_parameters(); ++i) {
        if (!(layout.parameters[i] == c.parameter_instruction(i)->shape())) return false;
      }
      return c.root_instruction() != nullptr ? layout.result == c.root_instruction()->shape()
                                             : layout.result == Shape();
    };
    if (entry != nullptr && (!declared.has_value() || same_as_entry(*declared))) {
      out_ += entry->header->entry_layout;
    } else {
      out_ += module.entry_computation_layout().ToString();
    }
    out_ += '}';
  }
  auto bools = [](const std::vector<bool>& v) {
    std::vector<std::string> s;
    for (bool b : v) s.push_back(b ? "true" : "false");
    return StrCat("{", Join(s, ","), "}");
  };
  if (!config.allow_spmd_sharding_propagation_to_parameters.empty()) {
    StrAppend(&out_, ", allow_spmd_sharding_propagation_to_parameters=",
                    bools(config.allow_spmd_sharding_propagation_to_parameters));
  }
  if (!config.allow_spmd_sharding_propagation_to_output.empty()) {
    StrAppend(&out_, ", allow_spmd_sharding_propagation_to_output=",
                    bools(config.allow_spmd_sharding_propagation_to_output));
  }
  if (config.replica_count != 1) StrAppend(&out_, ", replica_count=", config.replica_count);
  if (config.num_partitions != 1) {
    StrAppend(&out_, ", num_partitions=", config.num_partitions);
  }
  if (config.use_auto_spmd_partitioning) out_ += ", use_auto_spmd_partitioning=true";
  if (!config.frontend_attributes.map.empty()) {
    StrAppend(&out_, ", frontend_attributes=", config.frontend_attributes.ToString());
  }
  for (const auto& [name, value] : config.unknown_attributes) {
    StrAppend(&out_, ", ", name, "=", value);
  }
  out_ += "\n";
}

// Computations printed inline as async sugar are skipped. Only a
// computation wrapped by exactly one async-start can be (sugar gives each
// start its own computation when parsed back).
void Printer::FindSugaredComputations(const HloModule& module) {
  if (options_.syntax_sugar_async_ops) {
    absl::flat_hash_map<const HloComputation*, int> starts;
    std::vector<const HloInstruction*> async_starts;
    for (HloComputation* c : module.computations()) {
      for (const HloInstruction* inst : c->AsyncStarts()) {
        if (inst->called_computations().empty()) continue;
        ++starts[inst->async_wrapped_computation()];
        async_starts.push_back(inst);
      }
    }
    for (const HloInstruction* inst : async_starts) {
      if (CanPrintAsyncSugar(*inst) && starts[inst->async_wrapped_computation()] == 1) {
        sugared_.insert(inst->async_wrapped_computation());
      }
    }
    module_context_ = true;
  }
}

void Printer::Computation(const HloComputation& c) {
  ComputationHeader(c);
  for (const HloInstruction* inst : c.InstructionPostOrder()) {
    out_ += "  ";
    Instruction(*inst);
    out_ += "\n";
  }
  ComputationFooter(c);
}
void Printer::ComputationHeader(const HloComputation& c) {
  if (c.IsEntryComputation()) out_ += "ENTRY ";
  Name(c.name());
  out_ += " (";
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    if (i > 0) out_ += ", ";
    const HloInstruction* p = c.parameter_instruction(i);
    StrAppend(&out_, p->name(), ": ");
    p->shape().AppendTo(out_, /*print_layout=*/false);
  }
  out_ += ") -> ";
  if (c.root_instruction() != nullptr) c.root_instruction()->shape().AppendTo(out_, /*print_layout=*/false);
  out_ += " {\n";
}
void Printer::ComputationFooter(const HloComputation& c) {
  out_ += "}";
  if (c.execution_thread() != "main") {
    StrAppend(&out_, ", execution_thread=\"", CEscape(c.execution_thread()), "\"");
  }
}

bool Printer::Canonical() const {
  const PrintOptions d;
  return options_.use_line_cache && options_.print_operand_shape == d.print_operand_shape &&
         options_.print_metadata == d.print_metadata &&
         options_.print_backend_config == d.print_backend_config &&
         options_.print_percent == d.print_percent &&
         options_.syntax_sugar_async_ops == d.syntax_sugar_async_ops &&
         options_.max_constant_elements == d.max_constant_elements;
}

void Printer::Instruction(const HloInstruction& inst) {
  if (inst.IsRoot()) out_ += "ROOT ";
  // Async ops print differently depending on their context (the sugar):
  // never cached.
  const bool cache = canonical_ && !IsAsync(inst.opcode());
  if (cache && inst.cached_line() != nullptr) {
    out_ += *inst.cached_line();
    return;
  }
  const size_t start = out_.size();
  InstructionBody(inst);
  if (cache) inst.set_cached_line(out_.substr(start));
}

// The instruction's cached line, printed and cached when missing.
std::shared_ptr<const std::string> Printer::SharedLine(const HloInstruction& inst) {
  if (inst.shared_cached_line() == nullptr) {
    const size_t start = out_.size();
    InstructionBody(inst);
    inst.set_cached_line(out_.substr(start));
    out_.resize(start);
  }
  return inst.shared_cached_line();
}

void Printer::InstructionBody(const HloInstruction& inst) {
  Name(inst.name());
  out_ += " = ";
  inst.shape().AppendTo(out_);
  out_ += ' ';
  bool sugar = options_.syntax_sugar_async_ops && IsAsync(inst.opcode()) &&
               CanPrintAsyncSugar(inst) &&
               (!module_context_ || sugared_.contains(inst.async_wrapped_computation()));
  if (sugar) {
    const HloInstruction* wrapped = inst.async_wrapped_instruction();
    out_ += HloOpcodeString(wrapped->opcode());
    out_ += inst.opcode() == HloOpcode::kAsyncStart    ? "-start"
            : inst.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                       : "-done";
  } else {
    out_ += HloOpcodeString(inst.opcode());
  }
  out_ += '(';
  if (inst.opcode() == HloOpcode::kConstant) {
    Constant(inst.literal());
  } else if (inst.opcode() == HloOpcode::kParameter) {
    StrAppend(&out_, inst.parameter_number());
  } else {
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (i > 0) out_ += ", ";
      const HloInstruction* op = inst.operand(i);
      if (options_.print_operand_shape) OperandShape(*op);
      Name(op->name());
    }
  }
  out_ += ')';
  if (sugar) {
    if (inst.opcode() == HloOpcode::kAsyncStart) {
      const HloInstruction* wrapped = inst.async_wrapped_instruction();
      OpcodeAttributes(*wrapped);
      CalledComputations(*wrapped);
      if (inst.async_execution_thread() != "main") {
        StrAppend(&out_, ", async_execution_thread=\"",
                        CEscape(inst.async_execution_thread()), "\"");
      }
    }
    Aliasing(inst.attrs());
  } else {
    OpcodeAttributes(inst);
    CalledComputations(inst);
  }
  GenericAttributes(inst);
}

void Printer::OperandShape(const HloInstruction& op) {
  if (canonical_ && operand_lines_ && !op.shape().IsTuple()) {
    if (const std::string* line = op.cached_line()) {
      const size_t begin = op.name().size() + 4;  // "%" name " = "
      const size_t end = line->find(' ', begin);
      const std::string_view opcode = HloOpcodeString(op.opcode());
      if (end != std::string::npos && line->compare(end + 1, opcode.size(), opcode) == 0 &&
          line->size() > end + 1 + opcode.size() && (*line)[end + 1 + opcode.size()] == '(') {
        out_.append(*line, begin, end + 1 - begin);
        return;
      }
    }
  }
  op.shape().AppendTo(out_);
  out_ += ' ';
}

void Printer::Constant(const Literal& literal) {
  if (options_.max_constant_elements >= 0 && literal.shape().IsArray() &&
      literal.element_count() > options_.max_constant_elements && literal.shape().rank() > 0) {
    out_ += "{...}";
    return;
  }
  out_ += literal.ToString();
}

}  // namespace text_internal

using text_internal::Printer;

bool CanPrintAsyncSugar(const HloInstruction& async_op) {
  if (async_op.called_computations().size() != 1) return false;
  const HloComputation* wrapped = async_op.async_wrapped_computation();
  if (wrapped == nullptr || wrapped->execution_thread() != async_op.async_execution_thread()) {
    return false;
  }
  const HloInstruction* start_op = &async_op;
  while (start_op->opcode() != HloOpcode::kAsyncStart && start_op->operand_count() > 0) {
    start_op = start_op->operand(0);
  }
  if (wrapped->name() != AsyncWrappedComputationName(start_op->name())) return false;
  const HloInstruction* root = wrapped->root_instruction();
  if (root == nullptr || wrapped->instruction_count() != wrapped->num_parameters() + 1) return false;
  if (root->opcode() == HloOpcode::kParameter) return false;
  if (root->operand_count() != wrapped->num_parameters()) return false;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    if (root->operand(i) != wrapped->parameter_instruction(i)) return false;
  }
  // Attributes that only the wrapped op could carry would be lost.
  if (!root->metadata().empty() || !root->raw_backend_config().empty() || root->has_sharding() ||
      !root->frontend_attributes().map.empty() || !root->control_predecessors().empty()) {
    return false;
  }
  if (HasOwnAsyncOpcodes(root->opcode())) return false;
  // The op-start spelling must not collide with a real opcode.
  std::string start = StrCat(HloOpcodeString(root->opcode()), "-start");
  if (StringToHloOpcode(start).has_value()) return false;
  return true;
}

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  Printer p(options);
  p.Module(module);
  return std::move(p.out());
}

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options) {
  Printer p(options);
  p.Computation(computation);
  return std::move(p.out());
}

const std::string* CanonicalInstructionLine(const HloInstruction& instruction) {
  if (const std::string* line = instruction.cached_line()) return line;
  if (Printer::IsAsync(instruction.opcode())) return nullptr;
  const PrintOptions options;
  Printer p(options);
  return p.SharedLine(instruction).get();  // the instruction keeps the line
}

std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options) {
  Printer p(options);
  p.Instruction(instruction);
  return std::move(p.out());
}

}  // namespace passlab