// Test records written as results.jsonl lines (JSON objects, the form the
// runner appends), read the way ReadAblationRecordLines reads that file:
// each one through ParseAblationRecord (records.h). A line that is no valid
// record fails the test, naming it and the key.
#ifndef PASSLAB_TEST_ANALYSIS_ABLATION_TYPED_RECORDS_H_
#define PASSLAB_TEST_ANALYSIS_ABLATION_TYPED_RECORDS_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/ablation/records.h"

namespace passlab {

inline std::vector<AblationRecord> TypedRecords(const std::vector<nlohmann::json>& lines) {
  std::vector<AblationRecord> records;
  for (size_t i = 0; i < lines.size(); ++i) {
    absl::StatusOr<AblationRecord> record = ParseAblationRecord(lines[i], "line " + std::to_string(i + 1));
    EXPECT_TRUE(record.ok()) << record.status();
    if (record.ok()) records.push_back(*std::move(record));
  }
  return records;
}

}  // namespace passlab

#endif  // PASSLAB_TEST_ANALYSIS_ABLATION_TYPED_RECORDS_H_
