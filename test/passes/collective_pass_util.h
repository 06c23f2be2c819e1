// Collective pass tests: a pass runs on HLO text (through a pipeline, so the
// changed audit applies) and the module must compute the same values on
// every participant before and after, with the multi-participant evaluator
// and different random arguments on each device (so that a wrong group or
// offset shows). Also the corpus check: every corpus module with a given
// collective that parses and verifies still verifies after the pass.
#ifndef PASSLAB_TEST_PASSES_COLLECTIVE_PASS_UTIL_H_
#define PASSLAB_TEST_PASSES_COLLECTIVE_PASS_UTIL_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/eval/literal_compare.h"
#include "core/eval/multi_participant_evaluator.h"
#include "core/eval/random_inputs.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "test/passes/corpus_pass_util.h"

namespace passlab {

inline int64_t DeviceCount(const HloModule& m) { return m.config().replica_count * m.config().num_partitions; }

// Different arguments on each device.
inline std::vector<std::vector<Literal>> PerDeviceArguments(const HloModule& m, uint64_t seed) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < DeviceCount(m); ++d) args.push_back(MakeRandomArguments(*m.entry_computation(), seed + d));
  return args;
}

struct CollectivePassResult {
  bool changed = false;
  std::unique_ptr<HloModule> module;
  std::string text;  // without metadata and operand shapes
};

inline CollectivePassResult RunCollectivePass(std::unique_ptr<HloPassInterface> pass, const std::string& hlo) {
  CollectivePassResult r;
  auto m = ParseHloModule(hlo, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  std::vector<std::vector<Literal>> args = PerDeviceArguments(*r.module, 77);
  absl::StatusOr<std::vector<Literal>> before = EvaluateParticipants(*r.module, args);
  EXPECT_TRUE(before.ok()) << before.status().message();
  HloPassPipeline pipeline("test");
  pipeline.AddPass<HloPassFixBase>(std::move(pass), 1);
  absl::StatusOr<bool> changed = pipeline.Run(*r.module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  r.changed = changed.ok() && *changed;
  absl::Status verified = VerifyModule(*r.module);
  EXPECT_TRUE(verified.ok()) << verified.message() << "\n" << PrintModule(*r.module);
  PrintOptions options;
  options.print_metadata = false;
  options.print_operand_shape = false;
  r.text = PrintModule(*r.module, options);
  std::erase(r.text, '%');
  // Text round trip of what the pass built.
  absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(PrintModule(*r.module), "roundtrip.hlo");
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n" << r.text;
  if (reparsed.ok()) {
    EXPECT_EQ(PrintModule(**reparsed), PrintModule(*r.module));
  }
  if (before.ok()) {
    absl::StatusOr<std::vector<Literal>> after = EvaluateParticipants(*r.module, args);
    EXPECT_TRUE(after.ok()) << "the module no longer evaluates: " << after.status().message();
    if (after.ok()) {
      for (size_t d = 0; d < before->size(); ++d) {
        absl::Status same = CompareLiterals((*before)[d], (*after)[d], {.abs = 1e-4, .rel = 1e-4});
        EXPECT_TRUE(same.ok()) << "device " << d << ": the pass changed the computed values: " << same.message();
      }
    }
  }
  return r;
}

struct CorpusCollectiveStats {
  int candidates = 0;  // parse and verify
  int changed = 0;
  int evaluated = 0;  // changed and compared on every participant
};

// Every corpus text containing `needle` that parses and verifies must still
// verify after the pass; small ones on at most 8 devices also compute the
// same values on every participant.
inline CorpusCollectiveStats CheckCollectivePassOnCorpus(
    const std::string& needle, const std::function<std::unique_ptr<HloPassInterface>()>& make_pass) {
  CorpusCollectiveStats stats;
  ParseOptions options;
  options.infer_shape = InferInstructionShape;
  for (const auto& [name, text] : CorpusTextsWith(needle)) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, name, options);
    if (!m.ok() || !VerifyModule(**m).ok()) continue;
    ++stats.candidates;
    bool small = SmallModule(**m, 1 << 12) && !HasLowPrecisionFloats(**m) && DeviceCount(**m) <= 8;
    std::vector<std::vector<Literal>> args;
    absl::StatusOr<std::vector<Literal>> before = absl::UnimplementedError("not evaluated");
    if (small) {
      args = PerDeviceArguments(**m, 5);
      MultiParticipantOptions eval_options;
      eval_options.rendezvous_timeout_ms = 10000;
      before = EvaluateParticipants(**m, args, eval_options);
    }
    HloPassPipeline pipeline("corpus");
    pipeline.AddPass<HloPassFixBase>(make_pass(), 1);
    absl::StatusOr<bool> changed = pipeline.Run(**m);
    EXPECT_TRUE(changed.ok()) << name << ": " << changed.status().message();
    if (!changed.ok() || !*changed) continue;
    ++stats.changed;
    absl::Status verified = VerifyModule(**m);
    EXPECT_TRUE(verified.ok()) << name << ": " << verified.message();
    if (!before.ok()) continue;
    absl::StatusOr<std::vector<Literal>> after = EvaluateParticipants(**m, args);
    EXPECT_TRUE(after.ok()) << name << ": " << after.status().message();
    if (!after.ok()) continue;
    for (size_t d = 0; d < before->size(); ++d) {
      absl::Status same = CompareLiterals((*before)[d], (*after)[d], {.abs = 1e-3, .rel = 1e-3});
      EXPECT_TRUE(same.ok()) << name << " device " << d << ": " << same.message();
    }
    ++stats.evaluated;
  }
  return stats;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_PASSES_COLLECTIVE_PASS_UTIL_H_
