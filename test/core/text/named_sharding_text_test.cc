// XLA's named ("V3") shardings in HLO text: parsed into NamedSharding,
// printed as XLA's NamedSharding::ToString prints them, and bad ones
// reported at the place. The cases are XLA's own, from
// xla/hlo/parser/hlo_parser_test.cc (test names in the comments).
#include <gtest/gtest.h>

#include <string>

#include "core/ir/hlo_equal.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

std::string ModuleWithSharding(const std::string& sharding) {
  return "HloModule m\n\nENTRY e {\n  ROOT p = (f32[4,8], f32[4,8]) parameter(0), sharding=" +
         sharding + "\n}\n";
}

// Parses `sharding` on a parameter and returns the parameter's sharding as
// printed; the module must also round-trip through the printer.
std::string Reprint(const std::string& sharding) {
  auto m = ParseHloModule(ModuleWithSharding(sharding), "s.hlo");
  EXPECT_TRUE(m.ok()) << sharding << ": " << m.status().message();
  if (!m.ok()) return "";
  std::string once = PrintModule(**m);
  auto again = ParseHloModule(once, "printed.hlo");
  EXPECT_TRUE(again.ok()) << once << ": " << again.status().message();
  if (again.ok()) {
    EXPECT_EQ(PrintModule(**again), once);
  }
  return (*m)->entry_computation()->root_instruction()->sharding().ToString();
}

struct Case {
  const char* xla_test;  // HloParserTest.<name> in xla/hlo/parser/hlo_parser_test.cc
  const char* text;
  const char* printed;   // nullptr: prints as written
};

class NamedShardingTextTest : public ::testing::TestWithParam<Case> {};

TEST_P(NamedShardingTextTest, PrintsAsXla) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.xla_test);
  EXPECT_EQ(Reprint(c.text), c.printed != nullptr ? c.printed : c.text);
}

INSTANTIATE_TEST_SUITE_P(
    Xla, NamedShardingTextTest,
    ::testing::Values(
        Case{"ParseNamedShardingUnreducedMax", "{mesh['x'=2], [{}], unreduced=max{'x'}}", nullptr},
        Case{"ParseNamedShardingScalarUnreducedMax", "{mesh['x'=2,'y'=2], unreduced=max{'x', 'y'}}",
             "{unreduced=max}"},
        Case{"ParseNamedSharding1", "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'b'}]}", nullptr},
        Case{"ParseNamedSharding2", "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'c', 'b'}]}", nullptr},
        Case{"ParseNamedShardingOpenDims",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b', 'a'}, {'c', 'd', ?}]}", nullptr},
        Case{"ParseNamedShardingSubAxes1", "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}, {'b':(2)2}]}",
             nullptr},
        Case{"ParseNamedShardingSubAxes2",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c'}]}", nullptr},
        Case{"ParseNamedShardingSubAxesOpenDims",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c', ?}]}", nullptr},
        Case{"ParseNamedShardingNonIotaMesh",
             "{mesh['a'=2,'b'=4,'c'=4,'d'=2], device_ids=([4,16]T(1,0)), [{'a'}]}", nullptr},
        Case{"ParseNamedShardingNonIotaMeshDeviceList",
             "{mesh['x'=2,'y'=2], device_ids=(0,2,1,3), [{'x'}]}", nullptr},
        Case{"ParseNamedShardingEmptyMeshReplicated", "{mesh[], replicated}", "{replicated}"},
        Case{"ParseNamedShardingFullyReplicated", "{mesh['a'=2,'b'=4], replicated}", "{replicated}"},
        Case{"ParseNamedShardingReplicatedAxes", "{mesh['a'=2,'b'=4], [{'a'}], replicated={'b'}}",
             nullptr},
        Case{"ParseNamedShardingMaximal", "{maximal_mesh[device_id=5]}", nullptr},
        Case{"ParseNamedShardingWithSpecialCharacters",
             "{mesh['a.b'=2,'<axis> def'=4,'z/w'=2], [{'a.b'}, {'<axis> def':(2)2, 'z/w'}]}", nullptr},
        Case{"ParseNamedShardingFullyUnreduced", "{mesh['a'=2,'b'=4], unreduced}", "{unreduced}"},
        Case{"ParseNamedShardingUnreducedAxes",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{}, {'b'}], unreduced={'d':(4)2}}", nullptr},
        Case{"ParseNamedShardingFullyManual", "{mesh['a'=2,'b'=4], manual}", nullptr},
        Case{"ParseNamedShardingManualAxes",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], manual={'d':(4)2}}", nullptr},
        Case{"ParseNamedShardingAllFieldsWithMetadata",
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'a'}], replicated={'c'}, unreduced={'d':(4)2}, "
             "manual={'b':(2)2}, metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}",
             nullptr},
        Case{"ParseNamedShardingFullyReplicatedWithMetadata",
             "{mesh['a'=2,'b'=4], replicated, metadata={{op_name=\"foo\"}}}",
             "{replicated, metadata={{op_name=\"foo\"}}}"},
        Case{"ParseNamedShardingTuple",
             "{{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}]}, "
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], replicated}, "
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d':(2)2, 'b'}, {'a', ?}], unreduced={'c'}}, "
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}], "
             "metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}}",
             "{{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}]}, {replicated}, "
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d':(2)2, 'b'}, {'a', ?}], unreduced={'c'}}, "
             "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'d', 'c'}, {'a', 'b'}], "
             "metadata={{op_name=\"foo\"}, {op_name=\"bar\"}}}}"},
        Case{"ParseMixedShardingTuple1",
             "{{replicated}, {mesh['a'=2,'b'=4], replicated}, {maximal device=5}, "
             "{maximal_mesh[device_id=5]}}",
             "{{replicated}, {replicated}, {maximal device=5}, {maximal_mesh[device_id=5]}}"},
        Case{"ParseMixedShardingTuple2",
             "{{mesh['a'=2,'b'=2], [{'a'}, {}]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}",
             nullptr},
        // xla/hlo/transforms/simplifiers/algebraic_simplifier_test.cc,
        // AlgebraicSimplifierTest.DotIsAnnotatedWithUnreducedShardingV3.
        Case{"DotIsAnnotatedWithUnreducedShardingV3",
             "{mesh['x'=1,'y'=2], [{}, {}, {}, {}], unreduced={'x'}}", nullptr},
        // XLA's Mesh::ToString leaves out device ids that are the plain iota
        // once canonicalized (IotaTileAssignment::Create).
        Case{"IotaDeviceIdsInOrder", "{mesh['x'=2,'y'=2], device_ids=([2,2]T(0,1)), [{'x'}]}",
             "{mesh['x'=2,'y'=2], [{'x'}]}"},
        // The unsharded spellings XLA's HloSharding parser takes (V2), with
        // one metadata printed bare as HloSharding::Print does.
        Case{"ParseSharding", "{maximal device=42}", nullptr},
        Case{"SingleMetadata", "{replicated metadata={op_name=\"a\"}}", nullptr},
        Case{"MetadataList", "{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}", nullptr},
        Case{"Unreduced", "{unreduced}", nullptr}));

TEST(NamedShardingText, KeepsMeshAxesAndDeviceIdsInTheIr) {
  // HloParserTest.ParseNamedShardingNonIotaMeshDeviceList and SubAxes2.
  auto m = ParseHloModule(ModuleWithSharding(
      "{mesh['x'=2,'y'=4], device_ids=(0,2,4,6,1,3,5,7), [{'y':(2)2}, {'x', ?}], replicated={'y':(1)2}}"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloSharding& s = (*m)->entry_computation()->root_instruction()->sharding();
  ASSERT_EQ(s.kind, HloSharding::Kind::kNamed);
  ASSERT_TRUE(s.named.has_value());
  const NamedSharding& n = *s.named;
  ASSERT_EQ(n.mesh.size(), 2u);
  EXPECT_EQ(n.mesh[1].name, "y");
  EXPECT_EQ(n.mesh[1].size, 4);
  EXPECT_EQ(n.device_ids, (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  ASSERT_EQ(n.dims.size(), 2u);
  EXPECT_EQ(n.dims[0].axes[0].index, 1);
  EXPECT_EQ(n.dims[0].axes[0].sub_axis, std::make_pair(int64_t{2}, int64_t{2}));
  EXPECT_FALSE(n.dims[1].closed);
  ASSERT_EQ(n.replicated_axes.size(), 1u);
  EXPECT_EQ(n.form, NamedSharding::Form::kDims);
}

TEST(NamedShardingText, ReplicatedSpellingsKeepTheirMesh) {
  // HloParserTest.ParseMixedShardingTuple1: "{mesh[...], replicated}" stays a
  // named sharding (UseNamedShardingLeaf) though it prints as "{replicated}".
  auto m = ParseHloModule(ModuleWithSharding("{mesh['a'=2,'b'=4], replicated}"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloSharding& s = (*m)->entry_computation()->root_instruction()->sharding();
  ASSERT_EQ(s.kind, HloSharding::Kind::kNamed);
  EXPECT_EQ(s.named->mesh.size(), 2u);
  EXPECT_EQ(s.named->form, NamedSharding::Form::kReplicated);
}

struct BadSharding {
  const char* name;
  const char* sharding;
  int column;           // on line 4 of ModuleWithSharding's text
  const char* message;  // a substring of the error
};

class NamedShardingErrorTest : public ::testing::TestWithParam<BadSharding> {};

TEST_P(NamedShardingErrorTest, ReportsLocationAndCause) {
  const BadSharding& in = GetParam();
  auto m = ParseHloModule(ModuleWithSharding(in.sharding), "f.hlo");
  ASSERT_FALSE(m.ok()) << in.name << " parsed";
  std::string message(m.status().message());
  EXPECT_EQ(message.rfind("f.hlo:4:" + std::to_string(in.column) + ": error: ", 0), 0u) << message;
  EXPECT_NE(message.find(in.message), std::string::npos) << message;
}

// The sharding's '{' is at column 56 of "  ROOT p = (f32[4,8], f32[4,8]) parameter(0), sharding=".
INSTANTIATE_TEST_SUITE_P(
    Xla, NamedShardingErrorTest,
    ::testing::Values(
        // XLA's ParseAxisRef errors (HloParserTest.MeshReplicaGroupInvalidAxisName and
        // MeshReplicaGroupAxisIndexOutOfBounds check them in replica groups).
        BadSharding{"UnknownAxisName", "{mesh['a'=2], [{'b'}]}", 72,
                    "axis 'b' is not a valid axis name or index in mesh mesh['a'=2]"},
        BadSharding{"AxisIndexOutOfRange", "{mesh['a'=2], [{'5'}]}", 72,
                    "axis index 5 is out of bounds for mesh mesh['a'=2] which has 1 axes"},
        // XLA's ParseMesh errors (HloParserTest.MeshReplicaGroupDeviceIdsCountMismatch).
        BadSharding{"DeviceIdsCount", "{mesh['a'=2,'b'=2], device_ids=(1,0,2), [{'a'}]}", 88,
                    "expected 4 device_ids based on mesh axes, but got 3"},
        BadSharding{"DeviceIdsIotaSize", "{mesh['a'=2,'b'=2], device_ids=([2,4]T(1,0)), [{'a'}]}", 88,
                    "mesh device_ids iota size 8 does not match the product of the mesh axis sizes 4"},
        BadSharding{"DeviceIdsNotAPermutation", "{mesh['a'=2], device_ids=(1,1), [{'a'}]}", 82,
                    "must be a permutation of 0..1"},
        BadSharding{"AxisAfterOpenMark", "{mesh['a'=2,'b'=2], [{?, 'a'}]}", 81, "after '?'"},
        BadSharding{"UnknownAttribute", "{mesh['a'=2], [{'a'}], partial={'a'}}", 79,
                    "unknown attribute in named sharding"},
        BadSharding{"BadReductionOp", "{mesh['a'=2], [{}], unreduced=avg{'a'}}", 86,
                    "expected sum, max, or min for unreduced op"},
        // What XLA's NamedSharding constructor CHECKs (VerifyNamedSharding).
        BadSharding{"AxisUsedTwice", "{mesh['a'=2,'b'=2], [{'a'}, {'a'}]}", 85,
                    "axis 'a' overlaps an axis used earlier"},
        BadSharding{"SubAxisDoesNotDivide", "{mesh['a'=6], [{'a':(4)2}]}", 72,
                    "sub-axis 'a':(4)2 does not fit mesh axis 'a' of size 6"},
        BadSharding{"UnsortedReplicatedAxes", "{mesh['a'=2,'b'=2], [], replicated={'b', 'a'}}", 91,
                    "replicated axes must be sorted"},
        BadSharding{"DuplicateMeshAxis", "{mesh['a'=2,'a'=2], [{'a'}]}", 68,
                    "mesh axis 'a' is given twice"}));

}  // namespace
}  // namespace passlab
