// Instruction attributes: each ", name=value" is looked up in the attribute
// table (hlo_attribute_table.h), whose row says what the value is and where
// it goes; the structured values (SpecialAttr) are parsed here by hand.
#include "core/ir/status_macros.h"
#include "core/text/hlo_parser_internal.h"

namespace passlab {
namespace text_internal {

absl::Status Parser::ParseAttributes(HloInstruction* inst, HloInstruction* attr_target,
                                     const char* inst_pos, absl::flat_hash_set<std::string>& seen,
                                     PendingInstruction& pending, bool is_sugar_start) {
  while (PeekAttribute()) {
    Consume(',');
    SkipWs();
    const char* at = p_;
    ASSIGN_OR_RETURN(std::string attr, ParseIdentifier());
    if (!seen.insert(attr).second) {
      return Error(at, StrCat("attribute '", attr, "' is given twice"));
    }
    RETURN_IF_ERROR(Expect('=', StrCat("after attribute '", attr, "'")));
    // Generic attributes belong to the async op itself; opcode-specific ones
    // to the op it wraps.
    std::span<const AttributeSpec* const> rows = FindAttributeRows(attr);
    const bool generic = !rows.empty() && rows.front()->generic;
    HloInstruction* target = is_sugar_start && !generic ? attr_target : inst;
    RETURN_IF_ERROR(ParseOneAttribute(attr, at, inst, target, pending));
  }
  // Required attributes, in table order.
  HloInstruction* t = attr_target;
  auto require = [&](std::string_view a) -> absl::Status {
    if (seen.contains(std::string(a))) return absl::OkStatus();
    return Error(inst_pos, StrCat("'", HloOpcodeString(t->opcode()), "' instruction '",
                                  inst->name(), "' is missing the required attribute '", a, "'"));
  };
  for (const AttributeSpec& row : kAttributeTable) {
    if (!row.required_by.contains(t->opcode())) continue;
    RETURN_IF_ERROR(require(row.name));
  }
  // A conditional takes branch_computations= or (with a pred operand)
  // true_computation= and false_computation=.
  if (t->opcode() == HloOpcode::kConditional) {
    if (!seen.contains("branch_computations") &&
        !(seen.contains("true_computation") && seen.contains("false_computation"))) {
      return require("branch_computations");
    }
    if (t->called_computations().empty()) return require("branch_computations");
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseOneAttribute(const std::string& name, const char* at, HloInstruction* inst,
                                       HloInstruction* target, PendingInstruction& pending) {
  const HloOpcode op = target->opcode();
  const AttributeSpec* spec = nullptr;
  for (const AttributeSpec* row : FindAttributeRows(name)) {
    if (row->opcodes.empty() || row->opcodes.contains(op)) {
      spec = row;
      break;
    }
  }
  // A custom call keeps any attribute it does not know, verbatim.
  if (spec == nullptr || spec->kind == AttrKind::kVerbatim) {
    if (spec == nullptr && op != HloOpcode::kCustomCall) {
      return Error(at, StrCat("unknown attribute '", name, "' for '", HloOpcodeString(op), "'"));
    }
    ASSIGN_OR_RETURN(std::string value,
        ParseVerbatimValue(at, "%+", StrCat("attribute '", name, "' has no value")));
    target->mutable_attrs().unknown_attributes.push_back({name, std::move(value)});
    return absl::OkStatus();
  }
  switch (spec->kind) {
    case AttrKind::kComputation:
      if (target->called_computations().size() <= static_cast<size_t>(spec->slot)) {
        target->set_called_computation(spec->slot, nullptr);
      }
      return ParseComputationRef(target, spec->slot).status();
    case AttrKind::kComputationList: {
      RETURN_IF_ERROR(Expect('{'));
      size_t slot = 0;
      if (!Consume('}')) {
        do {
          if (target->called_computations().size() <= slot) target->set_called_computation(slot, nullptr);
          RETURN_IF_ERROR(ParseComputationRef(target, slot++).status());
        } while (Consume(','));
        RETURN_IF_ERROR(Expect('}'));
      }
      if (slot == 0 && op == HloOpcode::kConditional) return Error(at, "conditional needs branches");
      return absl::OkStatus();
    }
    case AttrKind::kSpecial:
      return ParseSpecialAttribute(*spec, at, inst, target, pending);
    case AttrKind::kInts: case AttrKind::kInt: case AttrKind::kOptionalInt: case AttrKind::kBool:
    case AttrKind::kOptionalBool: case AttrKind::kBoolList: case AttrKind::kFloat:
    case AttrKind::kString: case AttrKind::kWord: case AttrKind::kEnum: case AttrKind::kVerbatim:
      break;
  }
  return ParsePlainAttribute(*spec, target);
}

absl::Status Parser::ParsePlainAttribute(const AttributeSpec& spec, HloInstruction* target) {
  switch (spec.kind) {
    case AttrKind::kInts: {
      ASSIGN_OR_RETURN(std::vector<int64_t> v, ParseIntList());
      *spec.mutable_ints(*target) = std::move(v);
      return absl::OkStatus();
    }
    case AttrKind::kInt: case AttrKind::kOptionalInt: {
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      spec.set_integer(*target, v);
      return absl::OkStatus();
    }
    case AttrKind::kBool: case AttrKind::kOptionalBool: {
      ASSIGN_OR_RETURN(bool v, ParseBool());
      spec.set_integer(*target, v ? 1 : 0);
      return absl::OkStatus();
    }
    case AttrKind::kBoolList: {
      ASSIGN_OR_RETURN(std::vector<bool> v, ParseBoolList());
      *spec.mutable_bools(*target) = std::move(v);
      return absl::OkStatus();
    }
    case AttrKind::kFloat: {
      ASSIGN_OR_RETURN(double v, ParseDouble());
      spec.set_real(*target, static_cast<float>(v));
      return absl::OkStatus();
    }
    case AttrKind::kString: {
      ASSIGN_OR_RETURN(std::string v, ParseString());
      *spec.mutable_string(*target) = std::move(v);
      return absl::OkStatus();
    }
    case AttrKind::kWord: case AttrKind::kEnum: {
      SkipWs();
      const char* at = p_;
      ASSIGN_OR_RETURN(std::string w, ParseIdentifier());
      if (spec.kind == AttrKind::kWord) {
        *spec.mutable_string(*target) = std::move(w);
      } else if (!spec.set_enum(*target, w)) {
        return Error(at, StrCat("unknown ", spec.what, " '", w, "'"));
      }
      return absl::OkStatus();
    }
    case AttrKind::kComputation: case AttrKind::kComputationList: case AttrKind::kVerbatim:
    case AttrKind::kSpecial:
      break;
  }
  return Error(StrCat("attribute '", spec.name, "' is not a plain value"));
}

absl::Status Parser::ParseSpecialAttribute(const AttributeSpec& spec, const char* at,
                                           HloInstruction* inst, HloInstruction* target,
                                           PendingInstruction& pending) {
  // Parses a value with `parse` and stores it with `store`.
  auto value = [&](auto parse, auto store) -> absl::Status {
    ASSIGN_OR_RETURN(auto v, (this->*parse)());
    store(std::move(v));
    return absl::OkStatus();
  };
  switch (spec.special) {
    case SpecialAttr::kMetadata:
      return value(&Parser::ParseMetadata, [&](OpMetadata m) { inst->set_metadata(std::move(m)); });
    case SpecialAttr::kSharding: {
      ASSIGN_OR_RETURN(HloSharding s, ParseSharding());
      inst->set_sharding(std::move(s));
      return absl::OkStatus();
    }
    case SpecialAttr::kFrontendAttributes:
      return value(&Parser::ParseFrontendAttributes,
                   [&](FrontendAttributes fa) { *inst->mutable_frontend_attributes() = std::move(fa); });
    case SpecialAttr::kBackendConfig: {
      // A braced (JSON) config as written, or a string.
      ASSIGN_OR_RETURN(std::string v, Peek() == '{' ? ParseBalanced() : ParseString());
      inst->set_raw_backend_config(std::move(v));
      return absl::OkStatus();
    }
    case SpecialAttr::kControlPredecessors:
      RETURN_IF_ERROR(Expect('{'));
      if (!Consume('}')) {
        do {
          SkipWs();
          const char* pat = p_;
          ASSIGN_OR_RETURN(std::string n, ParseName());
          pending.control_predecessors.push_back({pat, n});
        } while (Consume(','));
        RETURN_IF_ERROR(Expect('}'));
      }
      return absl::OkStatus();
    case SpecialAttr::kStatistics:
      return value(&Parser::ParseStatistics,
                   [&](Statistics st) { inst->mutable_attrs().statistics = std::move(st); });
    case SpecialAttr::kOrigin:
      return value(&Parser::ParseBalanced,
                   [&](std::string v) { inst->mutable_attrs().original_value = std::move(v); });
    case SpecialAttr::kAsyncExecutionThread: {
      ASSIGN_OR_RETURN(std::string t, ParseString());
      inst->set_async_execution_thread(std::move(t));
      return absl::OkStatus();
    }
    case SpecialAttr::kOutputToOperandAliasing:
      return value(&Parser::ParseAliasing, [&](std::vector<OutputOperandAlias> v) {
        inst->mutable_attrs().output_to_operand_aliasing = std::move(v);
      });
    case SpecialAttr::kSlice:
      return value(&Parser::ParseSliceRanges,
                   [&](std::vector<SliceDimension> v) { target->mutable_attrs().slice = std::move(v); });
    case SpecialAttr::kPadding:
      return value(&Parser::ParsePadding,
                   [&](PaddingConfig v) { target->mutable_attrs().padding_config = std::move(v); });
    case SpecialAttr::kOperandPrecision: {
      ASSIGN_OR_RETURN(std::vector<PrecisionLevel> v,
          ParseList<PrecisionLevel>('{', '}', [&]() -> absl::StatusOr<PrecisionLevel> {
            SkipWs();
            const char* pat = p_;
            ASSIGN_OR_RETURN(std::string w, ParseIdentifier());
            std::optional<PrecisionLevel> lvl = ParsePrecision(w);
            if (!lvl.has_value()) return Error(pat, StrCat("unknown precision '", w, "'"));
            return *lvl;
          }));
      target->mutable_attrs().precision_config.operand_precision = std::move(v);
      return absl::OkStatus();
    }
    case SpecialAttr::kSparsity:
      return value(&Parser::ParseSparsity, [&](std::vector<SparsityDescriptor> v) {
        std::vector<SparsityDescriptor>& sparsity = target->mutable_attrs().sparsity;
        sparsity.insert(sparsity.end(), v.begin(), v.end());
      });
    case SpecialAttr::kWindow:
      return value(&Parser::ParseWindow, [&](Window w) {
        // "window={}" is the same as no window (and prints as none).
        if (!w.dimensions.empty()) target->mutable_attrs().window = std::move(w);
      });
    case SpecialAttr::kDimLabels:
      return value(&Parser::ParseDimLabels, [&](ConvolutionDimensionNumbers d) {
        target->mutable_attrs().conv_dnums = std::move(d);
      });
    case SpecialAttr::kSliceSizesList: {
      ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> v,
          ParseList<std::vector<int64_t>>('{', '}', [&] { return ParseIntList(); }));
      target->mutable_attrs().dynamic_slice_sizes_list = std::move(v);
      return absl::OkStatus();
    }
    case SpecialAttr::kIndexVectorDim: {
      ASSIGN_OR_RETURN(int64_t v, ParseInt());
      HloAttributes& a = target->mutable_attrs();
      a.gather_dnums.index_vector_dim = v;
      a.scatter_dnums.index_vector_dim = v;
      return absl::OkStatus();
    }
    case SpecialAttr::kReplicaGroups:
      return value(&Parser::ParseReplicaGroups,
                   [&](ReplicaGroups g) { target->mutable_attrs().replica_groups = std::move(g); });
    case SpecialAttr::kSourceTargetPairs: {
      using Pair = std::pair<int64_t, int64_t>;
      ASSIGN_OR_RETURN(std::vector<Pair> v, ParseList<Pair>('{', '}', [&]() -> absl::StatusOr<Pair> {
        ASSIGN_OR_RETURN(std::vector<int64_t> pair, ParseIntList());
        if (pair.size() != 2) return Error("source_target_pairs entries must be {source,target}");
        return std::make_pair(pair[0], pair[1]);
      }));
      target->mutable_attrs().source_target_pairs = std::move(v);
      return absl::OkStatus();
    }
    case SpecialAttr::kOperandLayoutConstraints: {
      ASSIGN_OR_RETURN(std::vector<Shape> v, ParseList<Shape>('{', '}', [&] { return ParseShape(); }));
      target->mutable_attrs().operand_layout_constraints = std::move(v);
      return absl::OkStatus();
    }
    case SpecialAttr::kLiteral: {
      ASSIGN_OR_RETURN(Shape s, ParseShape());
      ASSIGN_OR_RETURN(Literal l, ParseLiteral(s));
      target->set_literal(std::move(l));
      return absl::OkStatus();
    }
    case SpecialAttr::kOutfeedShape: {
      ASSIGN_OR_RETURN(Shape s, ParseShape());
      target->mutable_attrs().outfeed_shape = std::move(s);
      return absl::OkStatus();
    }
    case SpecialAttr::kDomain:
      return value(&Parser::ParseDomain,
                   [&](DomainMetadata d) { target->mutable_attrs().domain = std::move(d); });
    case SpecialAttr::kNone:
      break;
  }
  return Error(at, StrCat("attribute '", spec.name, "' has no parser"));
}

}  // namespace text_internal
}  // namespace passlab
