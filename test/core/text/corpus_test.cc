// Parses every HLO text in ../shared/corpus (4,093 texts from XLA's own tests)
// and checks the round trip of each one that parses. Prints the parse rate and
// the failures grouped by cause. Skips when the corpus is absent (a user's
// machine has no ../shared).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/ir/hlo_equal.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/shape_inference.h"
#include "test/corpus_util.h"

namespace passlab {
namespace {

// "file:3:4: error: unknown opcode 'scan' (at 'scan')" -> "unknown opcode 'scan'"
// with names in quotes kept only for opcodes and attributes (the cause).
std::string Cause(std::string_view message) {
  std::string m(message);
  size_t e = m.find(": error: ");
  if (e != std::string::npos) m = m.substr(e + 9);
  size_t at = m.find(" (at '");
  if (at != std::string::npos) m = m.substr(0, at);
  static const std::regex kKeep("^(unknown opcode|unknown attribute|unknown element type)");
  if (!std::regex_search(m, kKeep)) m = std::regex_replace(m, std::regex("'[^']*'"), "'_'");
  m = std::regex_replace(m, std::regex("[0-9]+"), "N");
  return m;
}

bool IsTemplate(const std::string& text) {
  // FileCheck captures and test-template placeholders make a text invalid HLO
  // on purpose.
  return text.find("[[") != std::string::npos || text.find("<<") != std::string::npos ||
         text.find("$") != std::string::npos || text.find("TYPE") != std::string::npos;
}

TEST(CorpusTest, ParsesAndRoundTripsXlaTestHlo) {
  std::filesystem::path path = CorpusPath();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no corpus at " << path << " (../shared absent)";
  std::vector<nlohmann::json> rows = ReadCorpusRows();
  ASSERT_GT(rows.size(), 4000u);

  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  int parsed = 0, round_trip_failures = 0, templates_rejected = 0;
  std::map<std::string, std::pair<int, std::string>> causes;  // cause -> (count, example)
  for (const nlohmann::json& row : rows) {
    std::string text = row["text"];
    std::string name = row["source_path"].get<std::string>() + ":" + std::to_string(row["start_line"].get<int>());
    auto m = ParseHloModule(text, name, options);
    if (!m.ok()) {
      if (IsTemplate(text)) {
        ++templates_rejected;
        continue;
      }
      auto& [count, example] = causes[Cause(std::string(m.status().message()))];
      if (count++ == 0) example = std::string(m.status().message());
      continue;
    }
    ++parsed;
    std::string once = PrintModule(**m);
    // Snapshots keep the text as shared pieces; joined, it is the same text.
    std::shared_ptr<const ModuleText> pieces = PrintModuleText(**m);
    EXPECT_EQ(pieces->str(), once) << name << ": PrintModuleText differs from PrintModule";
    EXPECT_EQ(pieces->fingerprint(), CanonicalTextFingerprint(**m)) << name;
    auto again = ParseHloModule(once, name + " (printed)", options);
    if (!again.ok()) {
      ADD_FAILURE() << name << ": printed text does not parse: " << again.status().message();
      ++round_trip_failures;
      continue;
    }
    std::string twice = PrintModule(**again);
    std::string difference;
    if (twice != once || !StructurallyEqual(**m, **again, &difference)) {
      ADD_FAILURE() << name << ": round trip changed the module: " << difference;
      ++round_trip_failures;
    }
  }
  int failed = static_cast<int>(rows.size()) - parsed;
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [cause, entry] : causes) sorted.push_back({entry.first, cause});
  std::sort(sorted.rbegin(), sorted.rend());
  std::printf("corpus: %d of %zu texts parse (%.1f%%); %d rejected texts are test templates "
              "(FileCheck captures / placeholders)\n",
              parsed, rows.size(), 100.0 * parsed / rows.size(), templates_rejected);
  std::printf("corpus: other rejections by cause (%d):\n", failed - templates_rejected);
  for (const auto& [count, cause] : sorted) {
    std::printf("  %4d  %s\n        e.g. %s\n", count, cause.c_str(), causes[cause].second.c_str());
  }
  EXPECT_EQ(round_trip_failures, 0);
  // A regression floor: today's rate, rounded down.
  EXPECT_GE(parsed, 3700);
}

}  // namespace
}  // namespace passlab
