// The attribute table (core/text/hlo_attribute_table.h) that the parser reads
// attributes with and the printer prints the plain ones with: its rows are
// consistent, required attributes are reported in XLA's order, and every
// plain kind prints back what was parsed.
#include <gtest/gtest.h>

#include <string>

#include "core/text/hlo_attribute_table.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

using text_internal::AttrKind;
using text_internal::AttributeSpec;
using text_internal::FindAttributeRows;
using text_internal::kAttributeTable;

// Among rows of one name the first that takes the opcode wins, so a row for
// any opcode must come last (a restricted row after it could never match).
TEST(AttributeTableTest, RowsForAnyOpcodeComeLastAmongTheirName) {
  for (const AttributeSpec& row : kAttributeTable) {
    auto rows = FindAttributeRows(row.name);
    ASSERT_FALSE(rows.empty()) << row.name;
    for (size_t i = 0; i + 1 < rows.size(); ++i) {
      EXPECT_FALSE(rows[i]->opcodes.empty()) << row.name << ": a row for any opcode hides the next";
    }
    // One name is generic (kept by an async op-start) or not, whatever the opcode.
    for (const AttributeSpec* other : rows) EXPECT_EQ(other->generic, rows.front()->generic) << row.name;
  }
}

TEST(AttributeTableTest, PlainRowsHaveTheirAccessors) {
  for (const AttributeSpec& row : kAttributeTable) {
    switch (row.kind) {
      case AttrKind::kInts: EXPECT_TRUE(row.ints && row.mutable_ints) << row.name; break;
      case AttrKind::kInt: case AttrKind::kOptionalInt: case AttrKind::kBool: case AttrKind::kOptionalBool:
        EXPECT_TRUE(row.integer && row.set_integer) << row.name;
        break;
      case AttrKind::kBoolList: EXPECT_TRUE(row.bools && row.mutable_bools) << row.name; break;
      case AttrKind::kFloat: EXPECT_TRUE(row.real && row.set_real) << row.name; break;
      case AttrKind::kString: case AttrKind::kWord: EXPECT_TRUE(row.string && row.mutable_string) << row.name; break;
      case AttrKind::kEnum: EXPECT_TRUE(row.enum_name && row.set_enum && !row.what.empty()) << row.name; break;
      case AttrKind::kSpecial: EXPECT_NE(row.special, text_internal::SpecialAttr::kNone) << row.name; break;
      case AttrKind::kComputation: case AttrKind::kComputationList: case AttrKind::kVerbatim: break;
    }
    // A row printed only when set must be able to tell.
    if (!row.print_default && row.kind != AttrKind::kSpecial) EXPECT_NE(row.is_default, nullptr) << row.name;
  }
}

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "f.hlo");
  return m.ok() ? "parsed" : std::string(m.status().message());
}

// XLA's parser asks for a gather's dimension numbers in their order
// (ParseInstructionRhs, kGather in xla/hlo/parser/hlo_parser.cc).
TEST(AttributeTableTest, ReportsTheFirstMissingRequiredAttributeInXlaOrder) {
  const std::string gather_head =
      "ENTRY e {\n  p = f32[4,4] parameter(0)\n  i = s32[2,1] parameter(1)\n"
      "  ROOT g = f32[2,4] gather(p, i)";
  EXPECT_NE(ErrorOf(gather_head + "\n}").find("missing the required attribute 'offset_dims'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(gather_head + ", offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}\n}")
                .find("missing the required attribute 'index_vector_dim'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(gather_head + ", offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
                                  "index_vector_dim=1\n}")
                .find("missing the required attribute 'slice_sizes'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT f = f32[2] fusion(p)\n}")
                .find("'fusion' instruction 'f' is missing the required attribute 'kind'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("ENTRY e {\n  p = (f32[]) parameter(0)\n  ROOT w = (f32[]) while(p)\n}")
                .find("missing the required attribute 'condition'"),
            std::string::npos);
}

TEST(AttributeTableTest, UnknownEnumWordNamesTheKindAndPlace) {
  std::string e = ErrorOf(
      "ENTRY e {\n  s = u64[2] parameter(0)\n"
      "  ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_fancy\n}");
  EXPECT_EQ(e.rfind("f.hlo:3:61: error: unknown rng algorithm 'rng_fancy'", 0), 0u) << e;
  e = ErrorOf("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT c = pred[] compare(a, a), direction=XX\n}");
  EXPECT_NE(e.find("unknown comparison direction 'XX'"), std::string::npos) << e;
}

// One instruction per plain kind (and the non-default values a row prints
// only when set): the canonical text parses and prints back byte for byte.
TEST(AttributeTableTest, PlainKindsPrintBackWhatWasParsed) {
  const std::string text =
      "HloModule m, entry_computation_layout={(f32[4,4]{1,0}, f32[4,4]{1,0}, u64[2]{0}, f32[3]{0}, "
      "f32[3]{0})->(f32[4,4]{1,0}, (u64[2]{0}, u32[4]{0}), f32[3]{0}, f32[4,4]{1,0}, pred[3]{0}, "
      "f32[4,4]{1,0}, f32[4]{0})}\n"
      "\n"
      "ENTRY %e (a: f32[4,4], b: f32[4,4], s: u64[2], x: f32[3], y: f32[3]) -> (f32[4,4], (u64[2], "
      "u32[4]), f32[3], f32[4,4], pred[3], f32[4,4], f32[4]) {\n"
      "  %a = f32[4,4]{1,0} parameter(0), parameter_replication={true,false}\n"
      // Dead, so first in post order.
      "  %tk = (f32[4,2]{1,0}, s32[4,2]{1,0}) topk(f32[4,4]{1,0} %a), k=2, largest=false\n"
      "  %v = f32[4,2]{1,0} get-tuple-element((f32[4,2]{1,0}, s32[4,2]{1,0}) %tk), index=0\n"
      "  %b = f32[4,4]{1,0} parameter(1)\n"
      "  %t = f32[4,4]{1,0} triangular-solve(f32[4,4]{1,0} %a, f32[4,4]{1,0} %b), left_side=true, "
      "lower=true, transpose_a=ADJOINT\n"
      "  %s = u64[2]{0} parameter(2)\n"
      "  %r = (u64[2]{0}, u32[4]{0}) rng-bit-generator(u64[2]{0} %s), algorithm=rng_philox\n"
      "  %x = f32[3]{0} parameter(3)\n"
      "  %p = f32[3]{0} reduce-precision(f32[3]{0} %x), exponent_bits=5, mantissa_bits=10\n"
      "  %cc = f32[4,4]{1,0} custom-call(f32[4,4]{1,0} %a), custom_call_target=\"my\\\"target\", "
      "custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, api_version=API_VERSION_TYPED_FFI\n"
      "  %y = f32[3]{0} parameter(4)\n"
      "  %c = pred[3]{0} compare(f32[3]{0} %x, f32[3]{0} %y), direction=LT, type=TOTALORDER\n"
      "  %d = f32[4,4]{1,0} dot(f32[4,4]{1,0} %a, f32[4,4]{1,0} %b), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32\n"
      "  %i = f32[4]{0} iota(), iota_dimension=0\n"
      "  ROOT %out = (f32[4,4]{1,0}, (u64[2]{0}, u32[4]{0}), f32[3]{0}, f32[4,4]{1,0}, pred[3]{0}, "
      "f32[4,4]{1,0}, f32[4]{0}) tuple(f32[4,4]{1,0} %t, (u64[2]{0}, u32[4]{0}) %r, f32[3]{0} %p, "
      "f32[4,4]{1,0} %cc, pred[3]{0} %c, f32[4,4]{1,0} %d, f32[4]{0} %i)\n"
      "}\n";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(PrintModule(**m), text);
  const HloInstruction* rbg = (*m)->entry_computation()->GetInstructionWithName("r");
  ASSERT_NE(rbg, nullptr);
  EXPECT_EQ(rbg->attrs().rng_algorithm, RandomAlgorithm::kPhilox);
}

}  // namespace
}  // namespace passlab
