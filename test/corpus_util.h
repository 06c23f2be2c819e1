// The XLA test HLO corpus (../shared/corpus/xla_test_hlo.jsonl.gz, or
// $PASSLAB_CORPUS): one JSON row per HLO text with "text", "source_path" and
// "start_line". Read at test time, never copied into the project; every
// reader returns nothing when the corpus is absent, and tests skip then.
#ifndef PASSLAB_TEST_CORPUS_UTIL_H_
#define PASSLAB_TEST_CORPUS_UTIL_H_

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace passlab {

inline std::filesystem::path CorpusPath() {
  if (const char* env = std::getenv("PASSLAB_CORPUS")) return env;
  return std::filesystem::path(PASSLAB_SOURCE_DIR) / "../shared/corpus/xla_test_hlo.jsonl.gz";
}

// Every row, in file order.
inline std::vector<nlohmann::json> ReadCorpusRows() {
  std::vector<nlohmann::json> rows;
  gzFile f = gzopen(CorpusPath().c_str(), "rb");
  if (f == nullptr) return rows;
  std::string data;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) data.append(buf, n);
  gzclose(f);
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string::npos) end = data.size();
    if (end > start) rows.push_back(nlohmann::json::parse(data.substr(start, end - start)));
    start = end + 1;
  }
  return rows;
}

// Every HLO text, in file order.
inline std::vector<std::string> ReadCorpusTexts() {
  std::vector<std::string> texts;
  for (nlohmann::json& row : ReadCorpusRows()) texts.push_back(row["text"].get<std::string>());
  return texts;
}

// ("source_path:start_line", text) of the texts containing `needle` (e.g. " dot(").
inline std::vector<std::pair<std::string, std::string>> CorpusTextsWith(const std::string& needle) {
  std::vector<std::pair<std::string, std::string>> out;
  for (nlohmann::json& row : ReadCorpusRows()) {
    std::string text = row["text"].get<std::string>();
    if (text.find(needle) == std::string::npos) continue;
    out.emplace_back(row["source_path"].get<std::string>() + ":" + std::to_string(row["start_line"].get<int>()),
                     std::move(text));
  }
  return out;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_CORPUS_UTIL_H_
