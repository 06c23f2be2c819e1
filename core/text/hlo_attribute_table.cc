#include "core/text/hlo_attribute_table.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace text_internal {

const HloAttributes& DefaultAttributes() {
  static const HloAttributes* defaults = new HloAttributes();
  return *defaults;
}

// The spellings of XLA's parser (ParseRandomDistribution,
// ParseRandomAlgorithm and the TriangularSolveOptions transpose in
// xla/hlo/parser/hlo_parser.cc).
std::optional<RandomDistribution> ParseRandomDistribution(std::string_view s) {
  if (s == "rng_uniform") return RandomDistribution::kUniform;
  if (s == "rng_normal") return RandomDistribution::kNormal;
  return std::nullopt;
}

std::optional<RandomAlgorithm> ParseRandomAlgorithm(std::string_view s) {
  if (s == "rng_default") return RandomAlgorithm::kDefault;
  if (s == "rng_three_fry") return RandomAlgorithm::kThreeFry;
  if (s == "rng_philox") return RandomAlgorithm::kPhilox;
  return std::nullopt;
}

std::optional<TriangularTranspose> ParseTriangularTranspose(std::string_view s) {
  if (s == "NO_TRANSPOSE") return TriangularTranspose::kNoTranspose;
  if (s == "TRANSPOSE") return TriangularTranspose::kTranspose;
  if (s == "ADJOINT") return TriangularTranspose::kAdjoint;
  return std::nullopt;
}

std::span<const AttributeSpec* const> FindAttributeRows(std::string_view name) {
  static const auto* by_name = [] {
    auto* m = new absl::flat_hash_map<std::string_view, std::vector<const AttributeSpec*>>();
    for (const AttributeSpec& row : kAttributeTable) (*m)[row.name].push_back(&row);
    return m;
  }();
  auto it = by_name->find(name);
  if (it == by_name->end()) return {};
  return it->second;
}

void AppendAttribute(std::string& out, const AttributeSpec& spec, const HloInstruction& inst) {
  if (!spec.print_default && spec.is_default != nullptr && spec.is_default(inst)) return;
  out += ", ";
  out += spec.name;
  out += '=';
  switch (spec.kind) {
    case AttrKind::kInts: {
      const std::vector<int64_t>& values = spec.ints(inst);
      out += '{';
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += ',';
        absl::StrAppend(&out, values[i]);
      }
      out += '}';
      return;
    }
    case AttrKind::kInt:
    case AttrKind::kOptionalInt:
      absl::StrAppend(&out, *spec.integer(inst));
      return;
    case AttrKind::kBool:
    case AttrKind::kOptionalBool:
      out += *spec.integer(inst) != 0 ? "true" : "false";
      return;
    case AttrKind::kBoolList: {
      const std::vector<bool>& values = spec.bools(inst);
      out += '{';
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += ',';
        out += values[i] ? "true" : "false";
      }
      out += '}';
      return;
    }
    case AttrKind::kFloat:
      absl::StrAppend(&out, spec.real(inst));
      return;
    case AttrKind::kString:
      out += '"';
      out += CEscape(spec.string(inst));
      out += '"';
      return;
    case AttrKind::kWord:
      out += spec.string(inst);
      return;
    case AttrKind::kEnum:
      out += spec.enum_name(inst);
      return;
    // Printed by hand (called computations by name, structured values);
    // the printer never passes these rows here.
    case AttrKind::kComputation:
    case AttrKind::kComputationList:
    case AttrKind::kVerbatim:
    case AttrKind::kSpecial:
      break;
  }
  out += "?";  // unreachable for the rows the printer uses
}

}  // namespace text_internal
}  // namespace passlab
