#include "core/ir/close_matches.h"

#include <algorithm>
#include <utility>

namespace passlab {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int prev = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cur = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

std::vector<std::string> CloseMatches(std::string_view word, const std::vector<std::string>& candidates) {
  const int limit = std::max<int>(2, static_cast<int>(word.size()) / 3);
  std::vector<std::pair<int, std::string>> scored;
  for (const std::string& c : candidates) {
    const int d = EditDistance(word, c);
    const bool contains = !word.empty() && (c.find(word) != std::string::npos || word.find(c) != std::string_view::npos);
    if (d <= limit || contains) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (auto& [d, c] : scored) out.push_back(std::move(c));
  return out;
}

}  // namespace passlab
