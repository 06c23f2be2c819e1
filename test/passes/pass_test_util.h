// Helpers for pass tests: HLO text in, run one pass through a pipeline (so
// the changed audit applies), CHECK-style patterns or "unchanged" out.
#ifndef PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_
#define PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {

struct PassResult {
  bool changed = false;
  std::unique_ptr<HloModule> module;
  std::string text;  // printed without metadata
};

inline PassResult RunPass(std::unique_ptr<HloPassInterface> pass, const std::string& hlo) {
  PassResult r;
  auto m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  HloPassPipeline pipeline("test");
  pipeline.AddPass<HloPassFixBase>(std::move(pass), 1);
  absl::StatusOr<bool> changed = pipeline.Run(*r.module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  r.changed = changed.ok() && *changed;
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  r.text = PrintModule(*r.module, options);
  return r;
}

// FileCheck-like: each pattern must appear, in order; "NOT:" patterns must
// not appear anywhere.
inline ::testing::AssertionResult Matches(const std::string& text,
                                          const std::vector<std::string>& patterns) {
  size_t pos = 0;
  for (const std::string& p : patterns) {
    if (p.rfind("NOT:", 0) == 0) {
      if (text.find(p.substr(4)) != std::string::npos) {
        return ::testing::AssertionFailure() << "found '" << p.substr(4) << "' in:\n" << text;
      }
      continue;
    }
    size_t at = text.find(p, pos);
    if (at == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << p << "' not found (in order) in:\n" << text;
    }
    pos = at + p.size();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_PASS_TEST_UTIL_H_
