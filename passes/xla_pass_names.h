// The names of XLA's HLO passes (the strings their name() returns in
// openxla/xla at commit 183fa00c, the commit of the shared test corpus),
// whether passlab models them or not. XLA's --xla_disable_hlo_passes
// ignores names it does not know; passlab warns on a real XLA pass it does
// not model and rejects a name that is no pass at all.
#ifndef PASSLAB_PASSES_XLA_PASS_NAMES_H_
#define PASSLAB_PASSES_XLA_PASS_NAMES_H_

#include <string_view>
#include <vector>

namespace passlab {

// Sorted.
const std::vector<std::string_view>& XlaPassNames();
bool IsXlaPassName(std::string_view name);

}  // namespace passlab

#endif  // PASSLAB_PASSES_XLA_PASS_NAMES_H_
