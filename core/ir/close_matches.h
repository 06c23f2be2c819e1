// "Did you mean": the candidates within a small edit distance of a word
// that was not recognized (a pass name, a command, ...), closest first.
#ifndef PASSLAB_CORE_IR_CLOSE_MATCHES_H_
#define PASSLAB_CORE_IR_CLOSE_MATCHES_H_

#include <string>
#include <string_view>
#include <vector>

namespace passlab {

// Levenshtein distance.
int EditDistance(std::string_view a, std::string_view b);

// Candidates at most max(2, |word| / 3) edits away, or containing the word
// (or contained in it), closest first.
std::vector<std::string> CloseMatches(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace passlab

#endif  // PASSLAB_CORE_IR_CLOSE_MATCHES_H_
