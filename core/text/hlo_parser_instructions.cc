#include "core/text/hlo_parser_internal.h"

#include <algorithm>

#include "core/ir/status_macros.h"

namespace passlab {
namespace text_internal {

bool Parser::PeekInlineInstruction() {
  SkipWs();
  const char* q = p_;
  if (q < end_ && *q == '%') return false;
  while (q < end_ && IsNameChar(*q)) ++q;
  if (q == p_) return false;
  std::string_view word(p_, q - p_);
  while (q < end_ && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r')) ++q;
  if (q >= end_ || *q != '(') return false;
  if (StringToHloOpcode(word).has_value()) return true;
  for (std::string_view suffix : {"-start", "-update", "-done"}) {
    if (word.size() > suffix.size() && word.substr(word.size() - suffix.size()) == suffix &&
        StringToHloOpcode(word.substr(0, word.size() - suffix.size())).has_value()) {
      return true;
    }
  }
  return false;
}
// ", name=" follows: another attribute. (For an inline operand a ','

absl::StatusOr<std::string> Parser::ParseCompactGte(ComputationScope& scope,
                                            std::unique_ptr<HloComputation>& comp,
                                            const std::string& base, const char* at) {
  auto it = scope.names.find(base);
  if (it == scope.names.end()) return Error(at, StrCat("instruction does not exist: ", base));
  HloInstruction* current = it->second;
  std::string key = base;
  while (Consume('#')) {
    ASSIGN_OR_RETURN(int64_t index, ParseInt());
    const Shape& shape = current->shape();
    if (!shape.IsTuple()) {
      return Error(at, StrCat("GTE operand must be tuple, but has shape: ", shape.ToString()));
    }
    if (index < 0 || index >= shape.tuple_shapes_size()) {
      return Error(at, StrCat("GTE index ", index, " out of bounds for shape: ", shape.ToString()));
    }
    std::string operand_key = key;
    StrAppend(&key, "#", index);
    auto found = scope.names.find(key);
    if (found != scope.names.end()) {
      current = found->second;
      continue;
    }
    std::string sanitized = key;
    std::replace(sanitized.begin(), sanitized.end(), '#', '_');
    std::string name = sanitized;
    for (int64_t n = 1; scope.names.contains(name); ++n) name = StrCat(sanitized, ".", n);
    auto gte = HloInstruction::Create(HloOpcode::kGetTupleElement, shape.tuple_shapes(index), {});
    gte->SetName(name);
    gte->set_index(index);
    PendingInstruction pending{gte.get(), {{at, operand_key}}, {}, at};
    current = comp->AddInstruction(std::move(gte));
    scope.names[key] = current;
    scope.names[name] = current;
    scope.pending.push_back(std::move(pending));
  }
  return key;
}

absl::Status Parser::CheckAcyclic(const HloComputation& comp, const ComputationScope& scope) {
  absl::flat_hash_map<const HloInstruction*, uint8_t> state;  // 1 on stack, 2 done
  std::vector<std::pair<const HloInstruction*, size_t>> stack;
  for (const HloInstruction* start : comp.instructions()) {
    if (state[start] != 0) continue;
    stack.push_back({start, 0});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [inst, k] = stack.back();
      size_t n_ops = inst->operands().size();
      const HloInstruction* dep = nullptr;
      if (k < n_ops) {
        dep = inst->operands()[k];
      } else if (k - n_ops < inst->control_predecessors().size()) {
        dep = inst->control_predecessors()[k - n_ops];
      } else {
        state[inst] = 2;
        stack.pop_back();
        continue;
      }
      ++k;
      uint8_t& s = state[dep];
      if (s == 1) {
        const char* pos = begin_;
        for (const PendingInstruction& pi : scope.pending) {
          if (pi.inst == dep) pos = pi.pos;
        }
        return Error(pos, StrCat("instruction '", dep->name(), "' in computation '", comp.name(),
                                 "' depends on itself (a cycle through '", inst->name(), "')"));
      }
      if (s == 0) {
        s = 1;
        stack.push_back({dep, 0});
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Parser::ParseComputationRef(HloInstruction* inst, size_t slot) {
  SkipWs();
  const char* at = p_;
  if (Peek() == '{') {
    // A computation written inline as the attribute value.
    std::string name;
    do {
      // The op wrapped by "op-start" has no name yet; fall back to "inline".
      std::string base = inst->name().empty() ? std::string("inline") : inst->name();
      name = StrCat(base, ".inline_computation", ++inline_counter_ > 1 ? StrCat(".", inline_counter_) : "");
    } while (computation_names_.contains(name));
    RETURN_IF_ERROR(ParseComputationBody(name, at, /*is_entry=*/false));
    computation_refs_.push_back({inst, slot, {at, name}});
    return name;
  }
  ASSIGN_OR_RETURN(std::string name, ParseName());
  computation_refs_.push_back({inst, slot, {at, name}});
  return name;
}

absl::Status Parser::ParseComputation() {
  SkipWs();
  const char* comp_pos = p_;
  bool is_entry = ConsumeWord("ENTRY");
  ASSIGN_OR_RETURN(std::string name, ParseName());
  if (computation_names_.contains(name)) {
    return Error(comp_pos, StrCat("computation '", name, "' is defined twice"));
  }
  if (is_entry && entry_ != nullptr) return Error(comp_pos, "more than one ENTRY computation");
  // Optional signature "(p: shape, ...) -> shape"; the body is authoritative.
  if (Peek() == '(') {
    ASSIGN_OR_RETURN(std::vector<int> ignored, ParseList<int>('(', ')', [&]() -> absl::StatusOr<int> {
      ASSIGN_OR_RETURN(std::string pname, ParseName());
      RETURN_IF_ERROR(Expect(':'));
      ASSIGN_OR_RETURN(Shape shape, ParseShape());
      return 0;
    }));
    RETURN_IF_ERROR(ExpectStr("->"));
    ASSIGN_OR_RETURN(Shape result, ParseShape());
  }
  return ParseComputationBody(name, comp_pos, is_entry);
}

absl::Status Parser::ParseComputationBody(const std::string& name_str, const char* comp_pos,
                                          bool is_entry) {
  if (++computation_depth_ > 64) return Error(comp_pos, "computations nested too deeply");
  const std::string* name = &name_str;
  RETURN_IF_ERROR(Expect('{', "opening the computation body"));
  auto comp = std::make_unique<HloComputation>(*name);
  ComputationScope scope{comp.get(), {}, {}};
  const size_t wrapped_mark = wrapped_computations_.size();
  HloInstruction* root = nullptr;
  const char* root_pos = nullptr;
  while (!Consume('}')) {
    if (AtEnd()) return Error(comp_pos, StrCat("computation '", *name, "' is not closed"));
    RETURN_IF_ERROR(ParseInstruction(scope, comp, &root, &root_pos));
  }
  if (comp->instruction_count() == 0) {
    return Error(comp_pos, StrCat("computation '", *name, "' has no instructions"));
  }
  // ", execution_thread=" names the computation's thread; after a computation
  // written inline as an attribute value, any other ", name=" is the next
  // attribute of the instruction ("to_apply={...}, async_execution_thread=").
  if (PeekCommaWord("execution_thread")) {
    Consume(',');
    ConsumeWord("execution_thread");
    RETURN_IF_ERROR(Expect('=', "after execution_thread"));
    ASSIGN_OR_RETURN(std::string thread, ParseString());
    comp->set_execution_thread(thread);
  }
  // Resolve operands and control predecessors now that all names are known.
  for (PendingInstruction& pi : scope.pending) {
    for (const Use& use : pi.operands) {
      auto it = scope.names.find(use.name);
      if (it == scope.names.end()) {
        return Error(use.pos, StrCat("instruction '", pi.inst->name(), "' uses '", use.name,
                                           "', which is not defined in computation '", *name, "'"));
      }
      pi.inst->AppendOperand(it->second);
    }
    for (const Use& use : pi.control_predecessors) {
      auto it = scope.names.find(use.name);
      if (it == scope.names.end()) {
        return Error(use.pos, StrCat("control predecessor '", use.name, "' of '",
                                           pi.inst->name(), "' is not defined"));
      }
      it->second->AddControlDependencyTo(pi.inst);
    }
    int arity = HloOpcodeArity(pi.inst->opcode());
    // A sparse convolution (sparsity_config=) takes its sparsity metadata
    // after the two operands: XLA's parser wants "at least 2 operands".
    const bool sparse_convolution = pi.inst->opcode() == HloOpcode::kConvolution &&
                                    pi.inst->operand_count() > arity;
    if (arity != kVariadic && pi.inst->opcode() != HloOpcode::kConstant &&
        pi.inst->opcode() != HloOpcode::kParameter && !sparse_convolution &&
        pi.inst->operand_count() != arity) {
      // rng-bit-generator, iota etc. are fixed; variadic ones are checked by the verifier.
      return Error(pi.pos, StrCat("'", HloOpcodeString(pi.inst->opcode()), "' takes ", arity,
                                        " operand(s) but '", pi.inst->name(), "' has ",
                                        pi.inst->operand_count()));
    }
  }
  // The graph (operands and control edges) must be acyclic.
  RETURN_IF_ERROR(CheckAcyclic(*comp, scope));
  // Parameters: numbers must be 0..n-1 without duplicates.
  std::vector<HloInstruction*> params;
  for (HloInstruction* inst : comp->instructions()) {
    if (inst->opcode() != HloOpcode::kParameter) continue;
    int64_t n = inst->parameter_number();
    if (n < 0 || n >= comp->instruction_count()) {
      return Error(comp_pos, StrCat("parameter '", inst->name(), "' has invalid number ", n));
    }
    if (static_cast<int64_t>(params.size()) <= n) params.resize(n + 1, nullptr);
    if (params[n] != nullptr) {
      return Error(comp_pos, StrCat("computation '", *name, "' has two parameters numbered ", n,
                                          " ('", params[n]->name(), "' and '", inst->name(), "')"));
    }
    params[n] = inst;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      return Error(comp_pos, StrCat("computation '", *name, "' has no parameter ", i,
                                          " but has parameter ", params.size() - 1));
    }
  }
  for (size_t i = wrapped_mark; i < wrapped_computations_.size(); ++i) {
    computation_pos_.push_back(wrapped_computations_[i].second);
    computations_.push_back(std::move(wrapped_computations_[i].first));
  }
  wrapped_computations_.resize(wrapped_mark);
  HloComputation* c = comp.get();
  c->RebuildParameterList();
  c->set_root_instruction(root != nullptr ? root : c->instructions().back());
  if (is_entry) entry_ = c;
  computation_names_[*name] = c;
  computation_pos_.push_back(comp_pos);
  computations_.push_back(std::move(comp));
  --computation_depth_;
  return absl::OkStatus();
}

absl::Status Parser::ParseInstruction(ComputationScope& scope, std::unique_ptr<HloComputation>& comp,
                                      HloInstruction** root, const char** root_pos) {
  SkipWs();
  const char* inst_pos = p_;
  bool is_root = ConsumeWord("ROOT");
  ASSIGN_OR_RETURN(std::string name, ParseName());
  if (scope.names.contains(name)) {
    return Error(inst_pos, StrCat("instruction '", name, "' is defined twice in computation '",
                                        comp->name(), "'"));
  }
  RETURN_IF_ERROR(Expect('=', "after the instruction name"));
  std::optional<Shape> shape;
  if (PeekShape() || PeekUnknownShape()) {
    ASSIGN_OR_RETURN(Shape parsed, ParseShape());
    shape = std::move(parsed);
  }
  ASSIGN_OR_RETURN(HloInstruction* added, ParseInstructionRest(scope, comp, name, inst_pos, shape, 0));
  if (is_root) {
    if (*root != nullptr) {
      return Error(inst_pos, StrCat("computation '", comp->name(), "' has two ROOT instructions ('",
                                    (*root)->name(), "' and '", name, "')"));
    }
    *root = added;
    *root_pos = inst_pos;
  }
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> Parser::ParseInstructionRest(
    ComputationScope& scope, std::unique_ptr<HloComputation>& comp, const std::string& name_str,
    const char* inst_pos, std::optional<Shape> declared_shape, int depth) {
  if (depth > kMaxNesting) return Error(inst_pos, "inline operands nested too deeply");
  const std::string* name = &name_str;
  SkipWs();
  const char* op_pos = p_;
  ASSIGN_OR_RETURN(std::string opcode_name, ParseIdentifier());
  std::optional<HloOpcode> opcode = StringToHloOpcode(opcode_name);
  // Async sugar: "<op>-start", "<op>-update", "<op>-done" for ops without
  // their own async opcodes (seed 001).
  std::optional<HloOpcode> wrapped_opcode;
  HloOpcode async_kind = HloOpcode::kAsyncStart;
  if (!opcode.has_value()) {
    for (auto [suffix, kind] : {std::pair<std::string_view, HloOpcode>{"-start", HloOpcode::kAsyncStart},
                                {"-update", HloOpcode::kAsyncUpdate},
                                {"-done", HloOpcode::kAsyncDone}}) {
      std::string_view n = opcode_name;
      if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix) {
        std::optional<HloOpcode> w = StringToHloOpcode(n.substr(0, n.size() - suffix.size()));
        if (w.has_value()) {
          if (HasOwnAsyncOpcodes(*w)) {
            return Error(op_pos, StrCat("'", HloOpcodeString(*w),
                                              "' has its own async opcodes and cannot be wrapped "
                                              "by async-start"));
          }
          wrapped_opcode = w;
          async_kind = kind;
        }
      }
    }
    if (!wrapped_opcode.has_value()) {
      return Error(op_pos, StrCat("unknown opcode '", opcode_name, "'"));
    }
    opcode = async_kind;
  }
  if (!declared_shape.has_value() &&
      (*opcode == HloOpcode::kConstant || *opcode == HloOpcode::kParameter ||
       wrapped_opcode.has_value() || *opcode == HloOpcode::kCustomCall ||
       *opcode == HloOpcode::kAsyncStart || *opcode == HloOpcode::kRng ||
       *opcode == HloOpcode::kInfeed || *opcode == HloOpcode::kRecv)) {
    return Error(inst_pos, StrCat("instruction '", *name, "' needs a shape ('",
                                  HloOpcodeString(*opcode), "' shapes cannot be inferred)"));
  }
  const Shape* shape = declared_shape.has_value() ? &*declared_shape : nullptr;
  auto inst = HloInstruction::Create(*opcode, shape != nullptr ? *shape : Shape(), {});
  inst->SetName(*name);
  if (shape == nullptr) needs_inference_.push_back({inst.get(), inst_pos});
  PendingInstruction pending{inst.get(), {}, {}, inst_pos};
  // Operands.
  RETURN_IF_ERROR(Expect('(', "opening the operand list"));
  if (*opcode == HloOpcode::kConstant) {
    ASSIGN_OR_RETURN(Literal lit, ParseLiteral(*shape));
    inst->set_literal(std::move(lit));
    RETURN_IF_ERROR(Expect(')'));
  } else if (*opcode == HloOpcode::kParameter) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt());
    if (n < 0) return Error("parameter numbers must be non-negative");
    inst->set_index(n);
    RETURN_IF_ERROR(Expect(')'));
  } else if (!Consume(')')) {
    do {
      std::optional<Shape> operand_shape;
      if (PeekShape()) {
        ASSIGN_OR_RETURN(Shape parsed, ParseShape());
        operand_shape = std::move(parsed);
      }
      SkipWs();
      const char* at = p_;
      if (PeekInlineInstruction()) {
        // XLA allows an operand to be an instruction written inline:
        // "broadcast(f32[] constant(0))". It gets a fresh name.
        const char* op_start = p_;
        while (op_start < end_ && IsNameChar(*op_start)) ++op_start;
        std::string base(p_, op_start);
        std::string inline_name;
        do {
          inline_name = StrCat(base, ".", ++inline_counter_);
        } while (scope.names.contains(inline_name));
        ASSIGN_OR_RETURN(HloInstruction* inner,
            ParseInstructionRest(scope, comp, inline_name, at, operand_shape, depth + 1));
        pending.operands.push_back({at, inline_name});
        continue;
      }
      absl::StatusOr<std::string> operand = ParseName();
      if (!operand.ok()) return operand.status();
      if (Peek() == '#') {
        ASSIGN_OR_RETURN(std::string gte, ParseCompactGte(scope, comp, *operand, at));
        *operand = std::move(gte);
      }
      pending.operands.push_back({at, *operand});
    } while (Consume(','));
    RETURN_IF_ERROR(Expect(')', "closing the operand list"));
  }
  // Async sugar start: build the wrapped computation from the start's shape:
  // ((operand shapes...), result, context...).
  HloInstruction* attr_target = inst.get();
  std::unique_ptr<HloInstruction> wrapped;
  if (wrapped_opcode.has_value() && async_kind == HloOpcode::kAsyncStart) {
    if (!shape->IsTuple() || shape->tuple_shapes_size() < 2) {
      return Error(inst_pos, StrCat("'", opcode_name,
                                    "' must have a tuple shape ((operands...), result, ...)"));
    }
    wrapped = HloInstruction::Create(*wrapped_opcode, shape->tuple_shapes(1), {});
    // Named now: a computation written inline in its attributes is named
    // after it.
    wrapped->SetName(StrCat(*name, ".wrapped"));
    attr_target = wrapped.get();
  }
  absl::flat_hash_set<std::string> seen;
  if (absl::Status s = ParseAttributes(inst.get(), attr_target, inst_pos, seen, pending,
                                       wrapped != nullptr);
      !s.ok()) {
    return s;
  }
  if (wrapped != nullptr) {
    // Element 0 lists the operands: a tuple, or (seed 001's older spelling)
    // the single operand's shape itself.
    Shape operands_shape = shape->tuple_shapes(0);
    if (!operands_shape.IsTuple()) operands_shape = Shape::Tuple({operands_shape});
    if (operands_shape.tuple_shapes_size() != static_cast<int64_t>(pending.operands.size())) {
      return Error(inst_pos, StrCat("'", *name, "' has ", pending.operands.size(),
                                          " operands but its shape lists ",
                                          operands_shape.tuple_shapes_size()));
    }
    auto wc = std::make_unique<HloComputation>(AsyncWrappedComputationName(*name));
    std::vector<HloInstruction*> wparams;
    for (int64_t i = 0; i < operands_shape.tuple_shapes_size(); ++i) {
      wparams.push_back(wc->AddParameter(HloInstruction::CreateParameter(
          i, operands_shape.tuple_shapes(i), StrCat("param_", i))));
    }
    for (HloInstruction* p : wparams) wrapped->AppendOperand(p);
    HloInstruction* w = wc->AddInstruction(std::move(wrapped));
    wc->set_root_instruction(w);
    wc->set_execution_thread(inst->async_execution_thread());
    std::string cname = wc->name();
    while (computation_names_.contains(cname)) cname = StrCat(cname, ".", ++sugar_counter_);
    wc->SetName(cname);
    HloComputation* wcp = wc.get();
    computation_names_[cname] = wcp;
    // Added when the enclosing computation ends, after the computations
    // written inline in it: printed, those become top-level computations
    // ahead of it while this one is not printed, so the order is the same
    // when the printed text is parsed again.
    wrapped_computations_.push_back({std::move(wc), inst_pos});
    inst->AppendCalledComputation(wcp);
  } else if (wrapped_opcode.has_value()) {
    async_update_done_without_calls_.push_back(inst.get());
  } else if ((*opcode == HloOpcode::kAsyncUpdate || *opcode == HloOpcode::kAsyncDone) &&
             inst->called_computations().empty()) {
    async_update_done_without_calls_.push_back(inst.get());
  }
  HloInstruction* added = comp->AddInstruction(std::move(inst));
  scope.names[*name] = added;
  scope.pending.push_back(std::move(pending));
  return added;
}

}  // namespace text_internal
}  // namespace passlab
