// Library calls against PyTorch: every convolution and dot fixture of
// test/eval_fixtures/ (values PyTorch computed in float64) rewritten into the
// matching `__dnn$convForward` / `__blas$gemm` custom call, then run with
// every algorithm ListAlgorithms offers and through an Executable. The
// fixtures stress dim_labels (fb01, io01, bf012), strides, asymmetric
// padding, dilation, feature groups, 1-D/3-D and base dilation (which only
// the reference takes).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/eval/literal_compare.h"
#include "core/eval/npy.h"
#include "core/ir/hlo_instruction.h"
#include "core/libcall/library_call.h"
#include "core/backends/cpu/executable.h"
#include "core/runtime/host_buffer.h"
#include "core/runtime/library_call_runner.h"
#include "core/text/hlo_parser.h"
#include "test/core/runtime/test_rewrite.h"

namespace passlab {
namespace {

namespace fs = std::filesystem;

fs::path FixtureDir() { return fs::path(PASSLAB_SOURCE_DIR) / "test" / "eval_fixtures"; }

// Fixtures whose root is a convolution (no batch groups) or a dot.
std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(FixtureDir())) {
    std::string n = e.path().filename().string();
    if (!e.is_directory() || (n.rfind("conv", 0) != 0 && n.rfind("dot", 0) != 0)) continue;
    if (n == "conv_batch_groups") continue;  // batch_group_count: no library call
    names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  return names;
}

class PyTorchFixtureTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchFixtureTest, EveryAlgorithmAndTheExecutableMatchPyTorch) {
  fs::path dir = FixtureDir() / GetParam();
  std::ifstream in(dir / "module.hlo");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text.str(), (dir / "module.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status().message();
  absl::StatusOr<int> rewritten = testing_only::RewriteToLibraryCalls(*(*module)->entry_computation());
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().message();
  ASSERT_EQ(*rewritten, 1);
  const HloComputation* entry = (*module)->entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    absl::StatusOr<Literal> arg = ReadNpy((dir / ("in" + std::to_string(i) + ".npy")).string());
    ASSERT_TRUE(arg.ok()) << arg.status().message();
    arg->set_shape_layout(entry->parameter_instruction(i)->shape());
    args.push_back(std::move(*arg));
  }
  absl::StatusOr<Literal> expected = ReadNpy((dir / "out0.npy").string());
  ASSERT_TRUE(expected.ok()) << expected.status().message();
  const ErrorSpec spec{.abs = 1e-4, .rel = 1e-4};

  // Each algorithm on raw buffers.
  const HloInstruction* call = entry->GetInstructionWithName(GetParam().rfind("dot", 0) == 0 ? "d.call" : "c.call");
  ASSERT_NE(call, nullptr);
  absl::StatusOr<std::vector<LibraryAlgorithm>> algos = ListAlgorithms(*call);
  ASSERT_TRUE(algos.ok()) << algos.status().message();
  ASSERT_FALSE(algos->empty());
  std::vector<Shape> leaves = LeafShapes(call->shape());
  for (const LibraryAlgorithm& a : *algos) {
    std::vector<std::vector<double>> storage;
    std::vector<void*> buffers;
    for (int64_t i = 0; i < call->operand_count(); ++i) {
      storage.emplace_back(call->operand(i)->shape().byte_size() / 8 + 1);
      buffers.push_back(storage.back().data());
      ASSERT_TRUE(CopyLiteralToBuffer(args[i], call->operand(i)->shape(), buffers.back()).ok());
    }
    for (const Shape& s : leaves) {
      storage.emplace_back(s.byte_size() / 8 + 1);
      buffers.push_back(storage.back().data());
    }
    absl::StatusOr<int64_t> ns = RunLibraryCall(*call, a.id, buffers);
    ASSERT_TRUE(ns.ok()) << a.name << ": " << ns.status().message();
    absl::StatusOr<Literal> got = LiteralFromBuffer(leaves[0], buffers[call->operand_count()]);
    ASSERT_TRUE(got.ok());
    absl::Status same = CompareLiterals(*expected, *got, spec);
    EXPECT_TRUE(same.ok()) << a.name << ": " << same.message();
  }

  // The whole module as an executable (no kernels needed).
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Create(**module, KernelProvider());
  ASSERT_TRUE(exe.ok()) << exe.status().message();
  std::vector<KernelRecord> records;
  absl::StatusOr<Literal> got = (*exe)->Run(args, &records);
  ASSERT_TRUE(got.ok()) << got.status().message();
  absl::Status same = CompareLiterals(*expected, *got, spec);
  EXPECT_TRUE(same.ok()) << same.message();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, KernelKind::kLibraryCall);
}

INSTANTIATE_TEST_SUITE_P(PyTorch, PyTorchFixtureTest, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace passlab
