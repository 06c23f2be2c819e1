// Pass filters with XLA's grammar (--xla_disable_hlo_passes and friends):
//   name        every occurrence of a pass, or every pass inside a pipeline
//               of that name ("simplification")
//   name:N      the N-th occurrence (0-based) of a pass
//   pipe/name   a pass inside a pipeline (any suffix of the path, "/"-aligned)
//   @ID         one occurrence by id (the numbering of dumps and --list-passes)
//   regex       any filter with regex characters (.*+?[]()|^$\) is an RE2
//               full match against the pass name or "path/name"
// A filter list is comma-separated. Disable-list, enable-only-list and
// disable-all are exclusive. Unknown names are errors listing close matches.
#ifndef PASSLAB_CORE_PASS_PASS_FILTER_H_
#define PASSLAB_CORE_PASS_PASS_FILTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/pass/hlo_pass_interface.h"
#include "core/pass/pass_observer.h"

namespace re2 {
class RE2;
}

namespace passlab {

class PassFilterTerm {
 public:
  static absl::StatusOr<PassFilterTerm> Parse(std::string_view text);
  PassFilterTerm(PassFilterTerm&&) noexcept;
  PassFilterTerm& operator=(PassFilterTerm&&) noexcept;
  ~PassFilterTerm();

  bool Matches(const PassOccurrence& occurrence) const;
  bool Matches(const PassRunInfo& run) const;
  bool is_regex() const { return regex_ != nullptr; }
  const std::string& text() const { return text_; }

 private:
  PassFilterTerm() = default;
  bool MatchesParts(int64_t id, const std::string& path, const std::string& name,
                    int64_t occurrence_index) const;
  std::string text_;
  std::string name_;
  std::string path_suffix_;
  int64_t occurrence_ = -1;  // name:N
  int64_t id_ = -1;          // @ID
  std::unique_ptr<re2::RE2> regex_;
};

// Parses "a,b:1,@7" into terms.
absl::StatusOr<std::vector<PassFilterTerm>> ParsePassFilterList(std::string_view list);

// Checks that every non-regex term names something in the pipeline; the
// error lists the closest known names.
absl::Status ValidatePassFilters(const std::vector<PassFilterTerm>& terms,
                                 const std::vector<PassOccurrence>& occurrences);

enum class PassFilterMode { kDisable, kEnableOnly, kDisableAll };

// Vetoes pass runs according to the filters.
class PassFilterObserver : public PassObserver {
 public:
  PassFilterObserver(PassFilterMode mode, std::vector<PassFilterTerm> terms)
      : mode_(mode), terms_(std::move(terms)) {}
  // Builds the observer from CLI-style options; both lists at once is an error.
  static absl::StatusOr<std::unique_ptr<PassFilterObserver>> Create(
      std::string_view disable, std::string_view enable_only, bool disable_all,
      const std::vector<PassOccurrence>& occurrences);

  bool ShouldRun(const PassRunInfo& info) override;
  bool Enabled(const PassOccurrence& occurrence) const;

 private:
  PassFilterMode mode_;
  std::vector<PassFilterTerm> terms_;
};

}  // namespace passlab

#endif  // PASSLAB_CORE_PASS_PASS_FILTER_H_
