#include "core/pass/module_fingerprint.h"

#include <xxhash.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

// Serializes the fields into one buffer and hashes it once at the end: far
// cheaper than thousands of tiny streaming updates.
class Hasher {
 public:
  explicit Hasher(std::string& buf) : buf_(buf) { buf_.clear(); }

  void Bytes(const void* data, size_t size) { buf_.append(static_cast<const char*>(data), size); }
  void Int(int64_t v) { Bytes(&v, sizeof(v)); }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    buf_.append(s.data(), s.size());
  }
  void Ints(const std::vector<int64_t>& v) {
    Int(static_cast<int64_t>(v.size()));
    if (!v.empty()) Bytes(v.data(), v.size() * sizeof(int64_t));
  }
  uint64_t Digest() const { return XXH3_64bits(buf_.data(), buf_.size()); }

  void ShapeOf(const Shape& s) {
    Int(static_cast<int64_t>(s.element_type()));
    if (s.IsTuple()) {
      Int(static_cast<int64_t>(s.tuple_shapes().size()));
      for (const Shape& e : s.tuple_shapes()) ShapeOf(e);
      return;
    }
    Ints(s.dimensions());
    for (bool d : s.dynamic_dimensions()) Int(d);
    Int(s.has_layout());
    if (!s.has_layout()) return;
    const Layout& l = s.layout();
    Ints(l.minor_to_major());
    // Tiles, memory space, element size, ...: rare; hashed through their text.
    if (!l.IsPlain()) Str(l.ToString());
  }

 private:
  std::string& buf_;
};

// Buffers reused across calls on a thread: no allocation after the first.
thread_local std::string instruction_buffer;
thread_local std::string module_buffer;

// Everything the printer shows of one instruction. (Renaming an instruction
// or computation invalidates the cached hashes of whoever refers to it.)
uint64_t InstructionFingerprint(const HloInstruction& inst) {
  if (inst.fingerprint_valid()) return inst.cached_fingerprint();
  Hasher h(instruction_buffer);
  h.Str(inst.name());
  h.Int(static_cast<int64_t>(inst.opcode()));
  h.ShapeOf(inst.shape());
  h.Int(static_cast<int64_t>(inst.operand_count()));
  for (const HloInstruction* op : inst.operands()) h.Str(op->name());
  h.Int(static_cast<int64_t>(inst.control_predecessors().size()));
  for (const HloInstruction* p : inst.control_predecessors()) h.Str(p->name());
  h.Int(static_cast<int64_t>(inst.called_computations().size()));
  for (const HloComputation* c : inst.called_computations()) h.Str(c == nullptr ? "" : c->name());
  h.Ints(inst.dimensions());
  h.Int(inst.index());
  h.Int(static_cast<int64_t>(inst.fusion_kind()));
  h.Str(inst.async_execution_thread());
  h.Str(inst.raw_backend_config());
  if (inst.has_literal()) {
    const Literal& lit = inst.literal();
    h.ShapeOf(lit.shape());
    h.Bytes(lit.untyped_data(), static_cast<size_t>(lit.size_bytes()));
  }
  if (!inst.metadata().empty()) h.Str(inst.metadata().ToString());
  if (inst.has_sharding()) h.Str(inst.sharding().ToString());
  if (!inst.frontend_attributes().map.empty()) h.Str(inst.frontend_attributes().ToString());
  if (inst.has_attrs()) {
    // Opcode-specific attributes have many types; their printed form is the
    // one canonical serialization they all share.
    PrintOptions options;
    options.print_operand_shape = false;
    options.print_metadata = false;
    options.print_backend_config = false;
    h.Str(PrintInstruction(inst, options));
  }
  uint64_t f = h.Digest();
  inst.set_cached_fingerprint(f);
  return f;
}

}  // namespace

uint64_t ModuleFingerprint(const HloModule& module) {
  // Nothing anywhere changed since the last fingerprint of this module.
  const uint64_t generation = IrGeneration();
  if (module.fingerprint_cached_at(generation)) return module.cached_fingerprint();
  Hasher h(module_buffer);
  h.Str(module.name());
  h.Int(module.is_scheduled());
  const HloModuleConfig& config = module.config();
  h.Str(module.entry_computation_layout().ToString());
  for (const InputOutputAlias& a : config.input_output_alias) {
    h.Ints(a.output_index);
    h.Int(a.parameter_number);
    h.Ints(a.parameter_index);
    h.Int(a.must_alias);
  }
  for (const BufferDonor& d : config.buffer_donor) {
    h.Int(d.parameter_number);
    h.Ints(d.parameter_index);
  }
  h.Int(config.alias_passthrough_params);
  h.Int(config.replica_count);
  h.Int(config.num_partitions);
  h.Str(config.frontend_attributes.ToString());
  for (bool b : config.allow_spmd_sharding_propagation_to_parameters) h.Int(b);
  for (bool b : config.allow_spmd_sharding_propagation_to_output) h.Int(b);
  h.Int(config.use_auto_spmd_partitioning);
  for (const auto& [name, value] : config.unknown_attributes) {
    h.Str(name);
    h.Str(value);
  }
  // The module's own order (a post order would cost a graph walk per run).
  for (const HloComputation* c : module.computations()) {
    h.Str(c->name());
    h.Int(c->IsEntryComputation());
    h.Str(c->execution_thread());
    h.Str(c->root_instruction() == nullptr ? "" : c->root_instruction()->name());
    h.Int(c->num_parameters());
    for (const HloInstruction* p : c->parameter_instructions()) h.Str(p->name());
    c->ForEachInstruction(
        [&](const HloInstruction* inst) { h.Int(static_cast<int64_t>(InstructionFingerprint(*inst))); });
  }
  uint64_t fingerprint = h.Digest();
  module.set_cached_fingerprint(generation, fingerprint);
  return fingerprint;
}

}  // namespace passlab
