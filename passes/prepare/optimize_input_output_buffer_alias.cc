#include "passes/prepare/optimize_input_output_buffer_alias.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

struct Donor {
  int64_t parameter_number;
  ShapeIndex index;
  int64_t size;
};

struct Donee {
  ShapeIndex index;
  int64_t size;
};

int64_t MemorySpace(const Shape& shape) { return shape.has_layout() ? shape.layout().memory_space() : 0; }

bool ParameterHasAlias(const HloModuleConfig& config, int64_t number, const ShapeIndex& index) {
  return std::any_of(config.input_output_alias.begin(), config.input_output_alias.end(),
                     [&](const InputOutputAlias& a) { return a.parameter_number == number && a.parameter_index == index; });
}

bool OutputHasAlias(const HloModuleConfig& config, const ShapeIndex& index) {
  return std::any_of(config.input_output_alias.begin(), config.input_output_alias.end(),
                     [&](const InputOutputAlias& a) { return a.output_index == index; });
}

bool IsBufferDonor(const HloModuleConfig& config, int64_t number, const ShapeIndex& index) {
  return std::any_of(config.buffer_donor.begin(), config.buffer_donor.end(),
                     [&](const BufferDonor& d) { return d.parameter_number == number && d.parameter_index == index; });
}

// XLA's HloInputOutputAliasConfig::Verify: every entry names an array leaf
// of the result and of a parameter, no parameter leaf is aliased twice, and
// both sides have the same size.
absl::Status VerifyAliases(const HloModuleConfig& config, const ProgramShape& program,
                           const std::function<int64_t(const Shape&)>& size_of) {
  std::vector<std::pair<int64_t, ShapeIndex>> seen;
  for (const InputOutputAlias& a : config.input_output_alias) {
    if (!program.result.IsValidIndex(a.output_index) || !program.result.subshape(a.output_index).IsArray()) {
      return absl::InternalError(StrCat("input_output_alias: output index ", ShapeIndexToString(a.output_index),
                                        " is not an array in ", program.result.ToString()));
    }
    if (a.parameter_number < 0 || a.parameter_number >= static_cast<int64_t>(program.parameters.size())) {
      return absl::InternalError(StrCat("input_output_alias: no parameter ", a.parameter_number));
    }
    const Shape& parameter = program.parameters[a.parameter_number];
    if (!parameter.IsValidIndex(a.parameter_index) || !parameter.subshape(a.parameter_index).IsArray()) {
      return absl::InternalError(StrCat("input_output_alias: parameter ", a.parameter_number, " index ",
                                        ShapeIndexToString(a.parameter_index), " is not an array"));
    }
    std::pair<int64_t, ShapeIndex> key{a.parameter_number, a.parameter_index};
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return absl::InternalError(StrCat("input_output_alias: parameter ", a.parameter_number, " index ",
                                        ShapeIndexToString(a.parameter_index), " is aliased twice"));
    }
    seen.push_back(std::move(key));
    int64_t out_size = size_of(program.result.subshape(a.output_index));
    int64_t param_size = size_of(parameter.subshape(a.parameter_index));
    if (out_size != param_size) {
      return absl::InternalError(StrCat("input_output_alias: output ", ShapeIndexToString(a.output_index), " (",
                                        out_size, " bytes) and parameter ", a.parameter_number, " ",
                                        ShapeIndexToString(a.parameter_index), " (", param_size,
                                        " bytes) differ in size"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> OptimizeInputOutputBufferAlias::RunImpl(HloModule& module, PassRunContext*) {
  if (module.entry_computation() == nullptr) return false;
  std::function<int64_t(const Shape&)> size_of = options_.shape_size_fn;
  if (!size_of) size_of = [](const Shape& s) { return s.byte_size(); };
  const ProgramShape program = module.entry_computation_layout();
  const HloModuleConfig& config = std::as_const(module).config();
  // Dynamic result sizes may not match at run time.
  if (!program.result.is_static()) return false;

  // Donors and donees by memory space (std::map: a fixed order).
  std::map<int64_t, std::vector<Donor>> donors;
  for (int64_t p = 0; p < static_cast<int64_t>(program.parameters.size()); ++p) {
    ForEachSubshape(program.parameters[p], [&](const Shape& sub, const ShapeIndex& index) {
      if (!sub.IsArray() || !sub.is_static() || ParameterHasAlias(config, p, index)) return;
      if (options_.registered_buffer_donor_only && !IsBufferDonor(config, p, index)) return;
      donors[MemorySpace(sub)].push_back({p, index, size_of(sub)});
    });
  }
  std::map<int64_t, std::vector<Donee>> donees;
  ForEachSubshape(program.result, [&](const Shape& sub, const ShapeIndex& index) {
    if (!sub.IsArray() || OutputHasAlias(config, index)) return;
    donees[MemorySpace(sub)].push_back({index, size_of(sub)});
  });

  std::vector<InputOutputAlias> new_aliases;
  std::vector<BufferDonor> used_donors;
  for (auto& [space, donor_list] : donors) {
    auto it = donees.find(space);
    if (it == donees.end()) continue;
    std::vector<Donee>& donee_list = it->second;
    std::stable_sort(donor_list.begin(), donor_list.end(), [](const Donor& a, const Donor& b) { return a.size > b.size; });
    std::stable_sort(donee_list.begin(), donee_list.end(), [](const Donee& a, const Donee& b) { return a.size > b.size; });
    // Two pointers down both lists; the larger unmatched side moves on.
    size_t i = 0, j = 0;
    while (i < donor_list.size() && j < donee_list.size()) {
      const Donor& donor = donor_list[i];
      const Donee& donee = donee_list[j];
      if (donor.size > donee.size) {
        ++i;
      } else if (donor.size < donee.size) {
        ++j;
      } else {
        new_aliases.push_back({donee.index, donor.parameter_number, donor.index, /*must_alias=*/false});
        used_donors.push_back({donor.parameter_number, donor.index});
        ++i;
        ++j;
      }
    }
  }

  if (!new_aliases.empty()) {
    HloModuleConfig& mutable_config = module.config();
    for (InputOutputAlias& a : new_aliases) mutable_config.input_output_alias.push_back(std::move(a));
    // XLA keeps aliases in a tree over the result: printed in index order.
    std::stable_sort(mutable_config.input_output_alias.begin(), mutable_config.input_output_alias.end(),
                     [](const InputOutputAlias& a, const InputOutputAlias& b) { return a.output_index < b.output_index; });
    std::vector<BufferDonor>& registered = mutable_config.buffer_donor;
    registered.erase(std::remove_if(registered.begin(), registered.end(),
                                    [&](const BufferDonor& d) {
                                      return std::find(used_donors.begin(), used_donors.end(), d) != used_donors.end();
                                    }),
                     registered.end());
    BumpCounter("aliased output buffers", static_cast<int64_t>(new_aliases.size()));
  }
  RETURN_IF_ERROR(VerifyAliases(std::as_const(module).config(), program, size_of));
  return !new_aliases.empty();
}

}  // namespace passlab
