// Pass options by XLA's names: what a pass's constructor takes, spelled the
// way XLA spells the option (AlgebraicSimplifierOptions'
// `enable_dot_strength_reduction`, a combiner's `combine_threshold_in_bytes`,
// a GPU pass's `compute_capability`). A pass declares the options it takes
// (PassOptionSpec, in the registry); front ends collect `pass.option=value`
// settings into PassOptionValues, which checks each name and value against
// the declaration before the pass is built, so a factory reads only valid
// values.
#ifndef PASSLAB_CORE_PASS_PASS_OPTIONS_H_
#define PASSLAB_CORE_PASS_PASS_OPTIONS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace passlab {

enum class PassOptionType { kBool, kInt, kFloat, kString };

struct PassOptionSpec {
  std::string_view name;           // XLA's name: "enable_dot_strength_reduction"
  PassOptionType type = PassOptionType::kBool;
  std::string_view default_value;  // as text: "true", "0", "8.0", "sm_90"
  std::string_view description;    // one line
};

std::string_view PassOptionTypeName(PassOptionType type);

// Checks `value` against the type: bools are true/false/1/0, ints decimal
// (with an optional K/M/G binary suffix for byte counts), floats decimal.
absl::Status CheckPassOptionValue(const PassOptionSpec& spec, std::string_view value);

// The options set for one pass. Reading an option that was not set gives its
// declared default; values were checked when set.
class PassOptionValues {
 public:
  PassOptionValues() = default;
  explicit PassOptionValues(absl::Span<const PassOptionSpec> specs) : specs_(specs.begin(), specs.end()) {}

  // Sets one option; an unknown name is an error listing the pass's options,
  // a value of the wrong type an error naming the option and its type.
  absl::Status Set(std::string_view pass, std::string_view name, std::string_view value);

  bool empty() const { return values_.empty(); }
  bool IsSet(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  const std::map<std::string, std::string>& values() const { return values_; }

  bool GetBool(std::string_view name) const;
  int64_t GetInt(std::string_view name) const;
  double GetFloat(std::string_view name) const;
  std::string GetString(std::string_view name) const;

 private:
  const PassOptionSpec* Find(std::string_view name) const;
  std::string Raw(std::string_view name) const;

  std::vector<PassOptionSpec> specs_;
  std::map<std::string, std::string> values_;
};

// Splits "algsimp.enable_dot_strength_reduction=false" into pass, option and
// value; an error names the text when it has no '.' or '='.
struct PassOptionSetting {
  std::string pass;
  std::string option;
  std::string value;
};
absl::StatusOr<PassOptionSetting> ParsePassOptionSetting(std::string_view text);

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_PASS_OPTIONS_H_
