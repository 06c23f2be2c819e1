// The HLO protobuf importer (core/proto): XLA's own snapshot files, read
// from the XLA mirror at test time when it exists (never copied in); a
// snapshot committed here, written with the protobuf library and replayed;
// and malformed files.
#include "core/proto/hlo_proto_import.h"

#include <gtest/gtest.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/str_util.h"
#include "core/proto/hlo_proto_internal.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;

const char* kXlaMirror = "/work/.mirror/ROCm+xla/repo";

// XLA's file at `path` (refs/heads/main), written to a temporary file with
// the same name; empty when the mirror or the file is absent.
std::string XlaFile(const std::string& path) {
  if (!fs::exists(kXlaMirror)) return "";
  const fs::path out = fs::temp_directory_path() / StrCat("passlab_proto_test_", ::getpid()) / fs::path(path).filename();
  fs::create_directories(out.parent_path());
  const std::string cmd = StrCat("git --git-dir=", kXlaMirror, " show refs/heads/main:", path, " > ", out.string(),
                                 " 2>/dev/null");
  if (std::system(cmd.c_str()) != 0 || fs::file_size(out) == 0) return "";
  return out.string();
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// xla/mlir/tools/mlir_bisect/tests/snapshot.mlir.pb: an HloSnapshot with
// only arguments; snapshot.mlir's CHECK lines give their values:
// dense<[[2], [-4], [5]]> and dense<[[0], [7], [-5]]>, both tensor<3x1xi32>.
TEST(HloProtoImportTest, ReadsXlaMlirBisectSnapshotArguments) {
  const std::string path = XlaFile("xla/mlir/tools/mlir_bisect/tests/snapshot.mlir.pb");
  if (path.empty()) GTEST_SKIP() << "no XLA mirror at " << kXlaMirror;
  absl::StatusOr<std::vector<Literal>> args = ReadHloSnapshotArguments(path);
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 2u);
  EXPECT_EQ((*args)[0].shape().ToString(false), "s32[3,1]");
  EXPECT_EQ((*args)[0], Literal::FromDoubles(Shape::Array(PrimitiveType::kS32, {3, 1}), {2, -4, 5}));
  EXPECT_EQ((*args)[1], Literal::FromDoubles(Shape::Array(PrimitiveType::kS32, {3, 1}), {0, 7, -5}));
  // No module in it: importing it as a module is a clear error.
  absl::StatusOr<ImportedHlo> imported = ImportHloProtoFile(path);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("an HloSnapshot with 2 arguments but no module"), std::string::npos)
      << imported.status();
}

// xla/hlo/tools/tests/hlo_opt_hlo_protobinary.pb, an HloProto: XLA's
// hlo_opt_hlo_protobinary_to_hlotext.hlo expects "ENTRY ... mod1" with
// "ROOT ... = s8[] constant(0)".
TEST(HloProtoImportTest, ImportsXlaHloOptProtobinary) {
  const std::string path = XlaFile("xla/hlo/tools/tests/hlo_opt_hlo_protobinary.pb");
  if (path.empty()) GTEST_SKIP() << "no XLA mirror at " << kXlaMirror;
  absl::StatusOr<ImportedHlo> imported = ImportHloProtoFile(path);
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->message, "HloProto");
  const std::string text = PrintModule(*imported->module);
  EXPECT_NE(text.find("ENTRY %mod1"), std::string::npos) << text;
  EXPECT_NE(text.find("ROOT %a = s8[] constant(0)"), std::string::npos) << text;
}

// xla/tools/multihost_hlo_runner/data/*.pbtxt: XLA's multi-host runner's
// test inputs. sharded_unoptimized_hlo_snapshot.pbtxt is a module sharded
// over 2 partitions (s64[8,1] times 2) with each partition's half of the
// argument; functional_hlo_runner_test.cc
// (ShardedComputationUnoptimizedSnapshot...) expects {0,2,...,14}.
TEST(HloProtoImportTest, ImportsXlaMultihostRunnerSnapshots) {
  if (!fs::exists(kXlaMirror)) GTEST_SKIP() << "no XLA mirror at " << kXlaMirror;
  FILE* ls = popen(StrCat("git --git-dir=", kXlaMirror,
                          " ls-tree --name-only refs/heads/main xla/tools/multihost_hlo_runner/data/ 2>/dev/null")
                       .c_str(),
                   "r");
  ASSERT_NE(ls, nullptr);
  std::vector<std::string> files;
  char line[512];
  while (fgets(line, sizeof(line), ls) != nullptr) {
    std::string f(line);
    while (!f.empty() && f.back() == '\n') f.pop_back();
    if (f.size() > 6 && f.substr(f.size() - 6) == ".pbtxt") files.push_back(f);
  }
  pclose(ls);
  if (files.empty()) GTEST_SKIP() << "no .pbtxt files in the mirror";
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const std::string path = XlaFile(f);
    ASSERT_FALSE(path.empty());
    absl::StatusOr<ImportedHlo> imported = ImportHloProtoFile(path);
    ASSERT_TRUE(imported.ok()) << imported.status();
    EXPECT_TRUE(VerifyModule(*imported->module).ok()) << imported->text;
    if (!imported->arguments.has_value()) continue;
    HloEvaluator evaluator;
    absl::StatusOr<Literal> result = evaluator.Evaluate(*imported->module, *imported->arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    if (fs::path(f).filename() == "sharded_unoptimized_hlo_snapshot.pbtxt") {
      EXPECT_EQ(imported->message, "HloUnoptimizedSnapshot");
      EXPECT_NE(imported->text.find("sharding={devices=[2,1]"), std::string::npos) << imported->text;
      EXPECT_EQ(*result, Literal::FromDoubles(Shape::Array(PrimitiveType::kS64, {8, 1}),
                                              {0, 2, 4, 6, 8, 10, 12, 14}));
    }
  }
}

// A small step as XLA would dump it: dot, broadcast of a constant, add, a
// reduce with a called computation, compare, a slice and a tuple; p1 is
// column-major (layout {0,1}), so its argument literal is stored in that
// order.
xla::HloSnapshot BuildSmallSnapshot() {
  xla::HloSnapshot snapshot;
  xla::HloModuleProto* m = snapshot.mutable_hlo()->mutable_hlo_module();
  m->set_name("small_step");
  m->set_entry_computation_name("main");
  m->set_entry_computation_id(2);
  auto shape = [](xla::ShapeProto* s, xla::PrimitiveType t, std::vector<int64_t> dims,
                  std::vector<int64_t> m2m = {}) {
    s->set_element_type(t);
    for (int64_t d : dims) s->add_dimensions(d);
    if (m2m.empty()) {
      for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) m2m.push_back(i);
    }
    for (int64_t d : m2m) s->mutable_layout()->add_minor_to_major(d);
  };
  int64_t next_id = 1;
  auto add = [&](xla::HloComputationProto* c, const std::string& name, const std::string& op) {
    xla::HloInstructionProto* in = c->add_instructions();
    in->set_name(name);
    in->set_opcode(op);
    in->set_id(next_id++);
    return in;
  };
  xla::HloComputationProto* sum = m->add_computations();
  sum->set_name("sum");
  sum->set_id(1);
  xla::HloComputationProto* main = m->add_computations();
  main->set_name("main");
  main->set_id(2);
  {
    auto* a = add(sum, "a", "parameter");
    shape(a->mutable_shape(), xla::F32, {});
    auto* b = add(sum, "b", "parameter");
    b->set_parameter_number(1);
    shape(b->mutable_shape(), xla::F32, {});
    auto* s = add(sum, "s", "add");
    shape(s->mutable_shape(), xla::F32, {});
    s->add_operand_ids(a->id());
    s->add_operand_ids(b->id());
    sum->set_root_id(s->id());
  }
  auto* p0 = add(main, "p0", "parameter");
  shape(p0->mutable_shape(), xla::F32, {2, 3});
  auto* p1 = add(main, "p1", "parameter");
  p1->set_parameter_number(1);
  shape(p1->mutable_shape(), xla::F32, {3, 2}, {0, 1});
  auto* dot = add(main, "dot", "dot");
  shape(dot->mutable_shape(), xla::F32, {2, 2});
  dot->add_operand_ids(p0->id());
  dot->add_operand_ids(p1->id());
  dot->mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
  dot->mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
  auto* bias = add(main, "bias", "constant");
  shape(bias->mutable_shape(), xla::F32, {2});
  shape(bias->mutable_literal()->mutable_shape(), xla::F32, {2});
  bias->mutable_literal()->add_f32s(0.5f);
  bias->mutable_literal()->add_f32s(-1.0f);
  auto* bcast = add(main, "bcast", "broadcast");
  shape(bcast->mutable_shape(), xla::F32, {2, 2});
  bcast->add_operand_ids(bias->id());
  bcast->add_dimensions(1);
  auto* biased = add(main, "biased", "add");
  shape(biased->mutable_shape(), xla::F32, {2, 2});
  biased->add_operand_ids(dot->id());
  biased->add_operand_ids(bcast->id());
  auto* zero = add(main, "zero", "constant");
  shape(zero->mutable_shape(), xla::F32, {});
  shape(zero->mutable_literal()->mutable_shape(), xla::F32, {});
  zero->mutable_literal()->add_f32s(0);
  auto* rowsum = add(main, "rowsum", "reduce");
  shape(rowsum->mutable_shape(), xla::F32, {2});
  rowsum->add_operand_ids(biased->id());
  rowsum->add_operand_ids(zero->id());
  rowsum->add_dimensions(1);
  rowsum->add_called_computation_ids(sum->id());
  auto* ten = add(main, "ten", "constant");
  shape(ten->mutable_shape(), xla::F32, {});
  shape(ten->mutable_literal()->mutable_shape(), xla::F32, {});
  ten->mutable_literal()->add_f32s(10);
  auto* tens = add(main, "tens", "broadcast");
  shape(tens->mutable_shape(), xla::F32, {2});
  tens->add_operand_ids(ten->id());
  auto* big = add(main, "big", "compare");
  shape(big->mutable_shape(), xla::PRED, {2});
  big->add_operand_ids(rowsum->id());
  big->add_operand_ids(tens->id());
  big->set_comparison_direction("GT");
  auto* corner = add(main, "corner", "slice");
  shape(corner->mutable_shape(), xla::F32, {2, 1});
  corner->add_operand_ids(p0->id());
  for (auto [start, limit] : std::vector<std::pair<int, int>>{{0, 2}, {2, 3}}) {
    auto* d = corner->add_slice_dimensions();
    d->set_start(start);
    d->set_limit(limit);
    d->set_stride(1);
  }
  auto* root = add(main, "out", "tuple");
  xla::ShapeProto* rs = root->mutable_shape();
  rs->set_element_type(xla::TUPLE);
  shape(rs->add_tuple_shapes(), xla::F32, {2, 2});
  shape(rs->add_tuple_shapes(), xla::F32, {2});
  shape(rs->add_tuple_shapes(), xla::PRED, {2});
  shape(rs->add_tuple_shapes(), xla::F32, {2, 1});
  for (auto* op : {biased, rowsum, big, corner}) root->add_operand_ids(op->id());
  main->set_root_id(root->id());

  xla::LiteralProto* a0 = snapshot.add_arguments();
  shape(a0->mutable_shape(), xla::F32, {2, 3});
  for (float v : {1, 2, 3, 4, 5, 6}) a0->add_f32s(v);
  // p1 = [[1,0],[0,1],[1,1]], stored column by column.
  xla::LiteralProto* a1 = snapshot.add_arguments();
  shape(a1->mutable_shape(), xla::F32, {3, 2}, {0, 1});
  for (float v : {1, 0, 1, 0, 1, 1}) a1->add_f32s(v);
  // By hand: dot = [[4,5],[10,11]]; + [0.5,-1] = [[4.5,4],[10.5,10]];
  // row sums [8.5, 20.5]; > 10: [false, true]; p0[:, 2:3] = [[3],[6]].
  xla::LiteralProto* r = snapshot.mutable_result();
  shape(r->mutable_shape(), xla::TUPLE, {});
  r->mutable_shape()->clear_layout();
  *r->mutable_shape()->mutable_tuple_shapes() = rs->tuple_shapes();
  xla::LiteralProto* r0 = r->add_tuple_literals();
  shape(r0->mutable_shape(), xla::F32, {2, 2});
  for (float v : {4.5f, 4.0f, 10.5f, 10.0f}) r0->add_f32s(v);
  xla::LiteralProto* r1 = r->add_tuple_literals();
  shape(r1->mutable_shape(), xla::F32, {2});
  for (float v : {8.5f, 20.5f}) r1->add_f32s(v);
  xla::LiteralProto* r2 = r->add_tuple_literals();
  shape(r2->mutable_shape(), xla::PRED, {2});
  r2->add_preds(false);
  r2->add_preds(true);
  xla::LiteralProto* r3 = r->add_tuple_literals();
  shape(r3->mutable_shape(), xla::F32, {2, 1});
  for (float v : {3, 6}) r3->add_f32s(v);
  snapshot.set_execution_platform("Host");
  return snapshot;
}

std::string CommittedSnapshotPath() {
  return std::string(PASSLAB_SOURCE_DIR) + "/test/core/proto/data/small_step.snapshot.pb";
}

// The committed file is what BuildSmallSnapshot writes (PASSLAB_REGENERATE=1
// rewrites it), and it replays to the result recorded in it.
TEST(HloProtoImportTest, ReplaysCommittedSnapshot) {
  const xla::HloSnapshot built = BuildSmallSnapshot();
  if (std::getenv("PASSLAB_REGENERATE") != nullptr) {
    std::ofstream out(CommittedSnapshotPath(), std::ios::binary);
    ASSERT_TRUE(built.SerializeToOstream(&out));
  }
  xla::HloSnapshot committed;
  ASSERT_TRUE(committed.ParseFromString(ReadBytes(CommittedSnapshotPath()))) << CommittedSnapshotPath();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(built, committed));

  absl::StatusOr<ImportedHlo> imported = ImportHloProtoFile(CommittedSnapshotPath());
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->message, "HloSnapshot");
  ASSERT_TRUE(VerifyModule(*imported->module).ok()) << imported->text;
  EXPECT_NE(imported->text.find("lhs_contracting_dims={1}"), std::string::npos) << imported->text;
  EXPECT_NE(imported->text.find("f32[3,2]{0,1} parameter(1)"), std::string::npos) << imported->text;
  ASSERT_TRUE(imported->arguments.has_value());
  ASSERT_TRUE(imported->result.has_value());
  // The column-major argument reads back row-major: p1[2][1] == 1, p1[1][0] == 0.
  EXPECT_EQ((*imported->arguments)[1].GetDouble(5), 1);
  EXPECT_EQ((*imported->arguments)[1].GetDouble(2), 0);
  absl::StatusOr<Literal> result = HloEvaluator().Evaluate(*imported->module, *imported->arguments);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(CompareLiterals(*imported->result, *result, {.abs = 0, .rel = 0}).ok())
      << result->ToString() << "\nexpected " << imported->result->ToString();
}

// The same module as HloProto and as a bare HloModuleProto (what
// --xla_dump_hlo_as_proto writes) and in text format.
TEST(HloProtoImportTest, RecognisesEachMessage) {
  const xla::HloSnapshot snapshot = BuildSmallSnapshot();
  std::string bytes;
  ASSERT_TRUE(snapshot.hlo().SerializeToString(&bytes));
  absl::StatusOr<ImportedHlo> hlo = ImportHloProtoBytes(bytes, "hlo.pb");
  ASSERT_TRUE(hlo.ok()) << hlo.status();
  EXPECT_EQ(hlo->message, "HloProto");
  EXPECT_FALSE(hlo->arguments.has_value());
  ASSERT_TRUE(snapshot.hlo().hlo_module().SerializeToString(&bytes));
  absl::StatusOr<ImportedHlo> module = ImportHloProtoBytes(bytes, "module.pb");
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->message, "HloModuleProto");
  EXPECT_EQ(PrintModule(*module->module), PrintModule(*hlo->module));
  absl::StatusOr<ImportedHlo> text = ImportHloProtoBytes(snapshot.DebugString(), "snapshot.pbtxt", true);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->message, "HloSnapshot");
  EXPECT_EQ(PrintModule(*text->module), PrintModule(*hlo->module));
}

TEST(HloProtoImportTest, MalformedFilesFailClearly) {
  std::string bytes = ReadBytes(CommittedSnapshotPath());
  ASSERT_GT(bytes.size(), 100u);
  for (size_t keep : {bytes.size() / 2, size_t{7}, size_t{0}}) {
    absl::StatusOr<ImportedHlo> cut = ImportHloProtoBytes(bytes.substr(0, keep), "cut.pb");
    ASSERT_FALSE(cut.ok()) << keep;
    EXPECT_NE(cut.status().message().find("cut.pb: not an HLO protobuf"), std::string::npos) << cut.status();
  }
  absl::StatusOr<ImportedHlo> garbage = ImportHloProtoBytes("\xff\xff\xff\xff garbage", "junk.pb");
  EXPECT_FALSE(garbage.ok());

  // Well-formed protobuf, wrong HLO: an operand id that is not there.
  xla::HloSnapshot bad = BuildSmallSnapshot();
  bad.mutable_hlo()->mutable_hlo_module()->mutable_computations(1)->mutable_instructions(2)->set_operand_ids(0, 999);
  ASSERT_TRUE(bad.SerializeToString(&bytes));
  absl::StatusOr<ImportedHlo> dangling = ImportHloProtoBytes(bytes, "bad.pb");
  ASSERT_FALSE(dangling.ok());
  EXPECT_NE(dangling.status().message().find("operand id 999"), std::string::npos) << dangling.status();

  // A literal with too few values.
  bad = BuildSmallSnapshot();
  bad.mutable_arguments(0)->mutable_f32s()->RemoveLast();
  ASSERT_TRUE(bad.SerializeToString(&bytes));
  absl::StatusOr<ImportedHlo> short_literal = ImportHloProtoBytes(bytes, "short.pb");
  ASSERT_FALSE(short_literal.ok());
  EXPECT_NE(short_literal.status().message().find("argument 0: f32[2,3] needs 6 values but the literal holds 5"),
            std::string::npos)
      << short_literal.status();
}

// Files are recognised by extension, else by their first bytes: a binary
// message starts with 0x0a and holds control bytes; HLO text (even one
// starting with an empty line) does not.
TEST(HloProtoImportTest, RecognisesProtobufFilesWithoutExtension) {
  const fs::path dir = fs::temp_directory_path() / StrCat("passlab_proto_sniff_", ::getpid());
  fs::create_directories(dir);
  fs::copy_file(CommittedSnapshotPath(), dir / "snapshot", fs::copy_options::overwrite_existing);
  EXPECT_TRUE(LooksLikeHloProtoFile((dir / "snapshot").string()));
  std::ofstream(dir / "text.hlo") << "\nHloModule m\nENTRY e { ROOT p = f32[] parameter(0) }\n";
  EXPECT_FALSE(LooksLikeHloProtoFile((dir / "text.hlo").string()));
  std::ofstream(dir / "blank") << "\n\n";
  EXPECT_FALSE(LooksLikeHloProtoFile((dir / "blank").string()));
  EXPECT_TRUE(LooksLikeHloProtoFile("anything.pb"));
  EXPECT_FALSE(LooksLikeHloProtoFile("-"));
  fs::remove_all(dir);
}

// Window, convolution dimension numbers, reduce-window and pad attributes:
// the imported module evaluates exactly as the same module written as text.
TEST(HloProtoImportTest, ImportsConvolutionWindowAndPadding) {
  xla::HloModuleProto m;
  m.set_name("conv");
  m.set_entry_computation_id(2);
  int64_t next_id = 1;
  auto shape = [](xla::ShapeProto* s, xla::PrimitiveType t, std::vector<int64_t> dims) {
    s->set_element_type(t);
    for (int64_t d : dims) s->add_dimensions(d);
  };
  auto add = [&](xla::HloComputationProto* c, const std::string& name, const std::string& op,
                 xla::PrimitiveType t, std::vector<int64_t> dims) {
    xla::HloInstructionProto* in = c->add_instructions();
    in->set_name(name);
    in->set_opcode(op);
    in->set_id(next_id++);
    shape(in->mutable_shape(), t, dims);
    c->set_root_id(in->id());
    return in;
  };
  xla::HloComputationProto* mx = m.add_computations();
  mx->set_name("mx");
  mx->set_id(1);
  auto* a = add(mx, "a", "parameter", xla::F32, {});
  auto* b = add(mx, "b", "parameter", xla::F32, {});
  b->set_parameter_number(1);
  auto* mm = add(mx, "m", "maximum", xla::F32, {});
  mm->add_operand_ids(a->id());
  mm->add_operand_ids(b->id());
  xla::HloComputationProto* e = m.add_computations();
  e->set_name("e");
  e->set_id(2);
  auto* x = add(e, "x", "parameter", xla::F32, {1, 4, 4, 2});
  auto* k = add(e, "k", "parameter", xla::F32, {3, 3, 2, 3});
  k->set_parameter_number(1);
  auto* conv = add(e, "conv", "convolution", xla::F32, {1, 2, 2, 3});
  conv->add_operand_ids(x->id());
  conv->add_operand_ids(k->id());
  for (int i = 0; i < 2; ++i) {
    xla::WindowDimension* d = conv->mutable_window()->add_dimensions();
    d->set_size(3);
    d->set_stride(2);
    d->set_padding_low(1);
    d->set_padding_high(1);
    d->set_window_dilation(1);
    d->set_base_dilation(1);
  }
  xla::ConvolutionDimensionNumbers* dn = conv->mutable_convolution_dimension_numbers();
  dn->set_input_batch_dimension(0);
  dn->set_input_feature_dimension(3);
  for (int64_t d : {1, 2}) dn->add_input_spatial_dimensions(d);
  for (int64_t d : {0, 1}) dn->add_kernel_spatial_dimensions(d);
  dn->set_kernel_input_feature_dimension(2);
  dn->set_kernel_output_feature_dimension(3);
  dn->set_output_batch_dimension(0);
  dn->set_output_feature_dimension(3);
  for (int64_t d : {1, 2}) dn->add_output_spatial_dimensions(d);
  conv->set_feature_group_count(1);
  conv->set_batch_group_count(1);
  auto* init = add(e, "init", "constant", xla::F32, {});
  shape(init->mutable_literal()->mutable_shape(), xla::F32, {});
  init->mutable_literal()->add_f32s(-1e30f);
  auto* pool = add(e, "pool", "reduce-window", xla::F32, {1, 1, 1, 3});
  pool->add_operand_ids(conv->id());
  pool->add_operand_ids(init->id());
  pool->add_called_computation_ids(mx->id());
  for (int64_t size : {1, 2, 2, 1}) {
    xla::WindowDimension* d = pool->mutable_window()->add_dimensions();
    d->set_size(size);
    d->set_stride(1);
  }
  auto* padded = add(e, "padded", "pad", xla::F32, {1, 4, 1, 5});
  padded->add_operand_ids(pool->id());
  padded->add_operand_ids(init->id());
  for (auto [lo, hi, interior] : std::vector<std::tuple<int, int, int>>{{0, 0, 0}, {1, 2, 0}, {0, 0, 0}, {0, 0, 1}}) {
    auto* d = padded->mutable_padding_config()->add_dimensions();
    d->set_edge_padding_low(lo);
    d->set_edge_padding_high(hi);
    d->set_interior_padding(interior);
  }
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  absl::StatusOr<ImportedHlo> imported = ImportHloProtoBytes(bytes, "conv.pb");
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_TRUE(VerifyModule(*imported->module).ok()) << imported->text;
  EXPECT_NE(imported->text.find("window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"),
            std::string::npos)
      << imported->text;
  absl::StatusOr<std::unique_ptr<HloModule>> by_hand = ParseHloModule(R"(
HloModule conv
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[1,4,4,2] parameter(0)
  k = f32[3,3,2,3] parameter(1)
  conv = f32[1,2,2,3] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  init = f32[] constant(-1e30)
  pool = f32[1,1,1,3] reduce-window(conv, init), window={size=1x2x2x1}, to_apply=mx
  ROOT padded = f32[1,4,1,5] pad(pool, init), padding=0_0x1_2x0_0x0_0_1
}
)");
  ASSERT_TRUE(by_hand.ok()) << by_hand.status();
  std::vector<Literal> args;
  args.push_back(Literal(Shape::Array(PrimitiveType::kF32, {1, 4, 4, 2})));
  args.push_back(Literal(Shape::Array(PrimitiveType::kF32, {3, 3, 2, 3})));
  for (Literal& l : args) {
    for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, static_cast<double>((i * 7) % 11) - 5);
  }
  absl::StatusOr<Literal> got = HloEvaluator().Evaluate(*imported->module, args);
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**by_hand, args);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(want.ok()) << want.status();
  EXPECT_EQ(*got, *want);
}

// A dot's precision_config (HloInstructionProto field 51) becomes
// operand_precision={...} and algorithm=... as XLA prints them
// (xla/hlo/ir/hlo_instruction.cc, PrecisionConfigToString). JAX's
// Precision.HIGHEST dots arrive this way in its snapshots
// (test/cli/cli_xla_snapshot.sh); without it they were imported at DEFAULT.
TEST(HloProtoImportTest, ImportsPrecisionConfig) {
  auto module = [](std::vector<xla::PrecisionConfig::Precision> levels, int algorithm) {
    xla::HloModuleProto m;
    m.set_name("dot");
    m.set_entry_computation_id(1);
    xla::HloComputationProto* e = m.add_computations();
    e->set_name("e");
    e->set_id(1);
    int64_t next_id = 1;
    auto add = [&](const std::string& name, const std::string& op, std::vector<int64_t> dims) {
      xla::HloInstructionProto* in = e->add_instructions();
      in->set_name(name);
      in->set_opcode(op);
      in->set_id(next_id++);
      in->mutable_shape()->set_element_type(xla::F32);
      for (int64_t d : dims) in->mutable_shape()->add_dimensions(d);
      e->set_root_id(in->id());
      return in;
    };
    auto* x = add("x", "parameter", {2, 3});
    auto* w = add("w", "parameter", {3, 4});
    w->set_parameter_number(1);
    auto* d = add("d", "dot", {2, 4});
    d->add_operand_ids(x->id());
    d->add_operand_ids(w->id());
    d->mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
    d->mutable_dot_dimension_numbers()->add_rhs_contracting_dimensions(0);
    for (auto l : levels) d->mutable_precision_config()->add_operand_precision(l);
    d->mutable_precision_config()->set_algorithm(algorithm);
    std::string bytes;
    EXPECT_TRUE(m.SerializeToString(&bytes));
    return bytes;
  };
  absl::StatusOr<ImportedHlo> highest =
      ImportHloProtoBytes(module({xla::PrecisionConfig::HIGHEST, xla::PrecisionConfig::HIGH}, 9), "dot.pb");
  ASSERT_TRUE(highest.ok()) << highest.status();
  EXPECT_NE(highest->text.find("operand_precision={highest,high}, algorithm=dot_tf32_tf32_f32"), std::string::npos)
      << highest->text;
  const HloInstruction* dot = highest->module->entry_computation()->root_instruction();
  ASSERT_EQ(dot->attrs().precision_config.operand_precision.size(), 2u);
  EXPECT_EQ(dot->attrs().precision_config.operand_precision[0], PrecisionLevel::kHighest);
  EXPECT_EQ(dot->attrs().precision_config.operand_precision[1], PrecisionLevel::kHigh);
  EXPECT_EQ(dot->attrs().precision_config.algorithm, "dot_tf32_tf32_f32");
  // All DEFAULT and no algorithm: nothing printed, as XLA.
  absl::StatusOr<ImportedHlo> plain =
      ImportHloProtoBytes(module({xla::PrecisionConfig::DEFAULT, xla::PrecisionConfig::DEFAULT}, 0), "dot.pb");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->text.find("operand_precision"), std::string::npos) << plain->text;
  EXPECT_EQ(plain->text.find("algorithm="), std::string::npos) << plain->text;
  // An algorithm number this schema does not know is an error naming it.
  absl::StatusOr<ImportedHlo> unknown = ImportHloProtoBytes(module({}, 99), "dot.pb");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown dot algorithm 99"), std::string::npos) << unknown.status();
}

TEST(HloProtoImportTest, ReadsLiteralTypes) {
  xla::LiteralProto l;
  l.mutable_shape()->set_element_type(xla::BF16);
  l.mutable_shape()->add_dimensions(2);
  l.set_bf16s(std::string("\x80\x3f\x00\xc0", 4));  // 1.0, -2.0 little-endian
  absl::StatusOr<Literal> bf16 = LiteralFromProto(l, "bf16");
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  EXPECT_EQ(bf16->GetDouble(0), 1.0);
  EXPECT_EQ(bf16->GetDouble(1), -2.0);
  l.Clear();
  l.mutable_shape()->set_element_type(xla::S8);
  l.mutable_shape()->add_dimensions(2);
  l.set_s8s(std::string("\xff\x05", 2));
  absl::StatusOr<Literal> s8 = LiteralFromProto(l, "s8");
  ASSERT_TRUE(s8.ok()) << s8.status();
  EXPECT_EQ(s8->GetInt(0), -1);
  EXPECT_EQ(s8->GetInt(1), 5);
  l.Clear();
  l.mutable_shape()->set_element_type(xla::U64);
  l.add_u64s(~uint64_t{0});
  absl::StatusOr<Literal> u64 = LiteralFromProto(l, "u64");
  ASSERT_TRUE(u64.ok()) << u64.status();
  EXPECT_EQ(u64->GetUint(0), ~uint64_t{0});
}

}  // namespace
}  // namespace passlab
