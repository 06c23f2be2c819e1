// The thunk executable against the evaluator: library-call, copy, runtime
// routine, control-flow and kernel thunks over assigned buffers, records per
// thunk, Chrome trace export.
//
// Until the code generator lands, kernels come from TEST-ONLY fakes defined
// here: FakeEvaluatorKernel runs an instruction through the reference
// evaluator on the kernel buffers, and FakeAddKernel is a hand-written f32
// add that checks the buffer convention directly. Neither is library code.
#include "core/backends/cpu/executable.h"

#include <gtest/gtest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "core/eval/hlo_evaluator.h"
#include "core/eval/literal_compare.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/runtime/chrome_trace.h"
#include "test/instruction_evaluator.h"
#include "core/text/hlo_parser.h"

namespace passlab {
namespace {

// TEST-ONLY: a "compiled kernel" that evaluates the instruction.
class FakeEvaluatorKernel : public CompiledKernel {
 public:
  FakeEvaluatorKernel(const HloInstruction& inst, std::unique_ptr<InstructionEvaluator> ev)
      : name_(inst.name()), evaluator_(std::move(ev)) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    absl::Status s = evaluator_->Run(buffers);
    EXPECT_TRUE(s.ok()) << name_ << ": " << s.message();
  }
  int64_t flops() const override { return 7; }

 private:
  std::string name_;
  std::unique_ptr<InstructionEvaluator> evaluator_;
};

// TEST-ONLY: f32 add of two dense operands, straight on the buffers.
class FakeAddKernel : public CompiledKernel {
 public:
  FakeAddKernel(const HloInstruction& inst) : name_(inst.name()), n_(inst.shape().element_count()) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return EmitterKind::kLoop; }
  void Run(absl::Span<void* const> buffers) const override {
    const float* a = static_cast<const float*>(buffers[0]);
    const float* b = static_cast<const float*>(buffers[1]);
    float* out = static_cast<float*>(buffers[2]);
    for (int64_t i = 0; i < n_; ++i) out[i] = a[i] + b[i];
    ++runs;
  }
  mutable int runs = 0;

 private:
  std::string name_;
  int64_t n_;
};

int fake_add_kernels = 0;

KernelProvider FakeKernels() {
  return [](const HloInstruction& inst) -> absl::StatusOr<std::unique_ptr<CompiledKernel>> {
    if (inst.opcode() == HloOpcode::kAdd && inst.shape().element_type() == PrimitiveType::kF32 &&
        inst.shape().has_layout() && inst.shape().layout().IsDefault() &&
        inst.operand(0)->shape() == inst.shape() && inst.operand(1)->shape() == inst.shape()) {
      ++fake_add_kernels;
      return std::unique_ptr<CompiledKernel>(new FakeAddKernel(inst));
    }
    absl::StatusOr<std::unique_ptr<InstructionEvaluator>> ev = InstructionEvaluator::Create(inst);
    if (!ev.ok()) return ev.status();
    return std::unique_ptr<CompiledKernel>(new FakeEvaluatorKernel(inst, std::move(*ev)));
  };
}

Literal Random(const Shape& shape, uint64_t seed) {
  Literal l(shape);
  if (shape.IsTuple()) {
    std::vector<Literal> e;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) e.push_back(Random(shape.tuple_shapes(i), seed * 31 + i));
    return Literal::Tuple(std::move(e));
  }
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    l.SetDouble(i, static_cast<double>((s >> 33) % 2001) / 1000.0 - 1.0);
  }
  return l;
}

struct Ran {
  std::unique_ptr<HloModule> module;
  std::unique_ptr<Executable> executable;
  std::vector<KernelRecord> records;
  Literal got, want;
};

// Compiles and runs `text`, compares with the evaluator within `tol`.
Ran RunAndCompare(const std::string& text, std::vector<Literal> args = {}, double tol = 1e-5) {
  Ran r;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return r;
  r.module = std::move(*m);
  const HloComputation* entry = r.module->entry_computation();
  if (args.empty()) {
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      args.push_back(Random(entry->parameter_instruction(i)->shape(), i + 1));
    }
  }
  absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(*r.module, FakeKernels());
  EXPECT_TRUE(e.ok()) << e.status().message();
  if (!e.ok()) return r;
  r.executable = std::move(*e);
  absl::StatusOr<Literal> got = r.executable->Run(args, &r.records);
  EXPECT_TRUE(got.ok()) << got.status().message();
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*r.module, args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!got.ok() || !want.ok()) return r;
  r.got = std::move(*got);
  r.want = std::move(*want);
  absl::Status cmp = CompareLiterals(r.want, r.got, ErrorSpec{.abs = tol, .rel = tol});
  EXPECT_TRUE(cmp.ok()) << cmp.message();
  return r;
}

const KernelRecord* Find(const std::vector<KernelRecord>& records, std::string_view name) {
  for (const KernelRecord& r : records) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST(ExecutableTest, ExecutablesSharingHostMemoryRunAlternatelyOnTheSamePages) {
  // Two different programs on the same parameters (one needs a bigger
  // arena), run in turns on shared memory: each gets its own right answer,
  // and both read the same parameter buffers.
  const char* small = R"(
HloModule small
ENTRY %main (a: f32[64], b: f32[64]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  %b = f32[64]{0} parameter(1)
  ROOT %s = f32[64]{0} add(f32[64]{0} %a, f32[64]{0} %b)
})";
  const char* big = R"(
HloModule big
ENTRY %main (a: f32[64], b: f32[64]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  %b = f32[64]{0} parameter(1)
  %m = f32[64]{0} multiply(f32[64]{0} %a, f32[64]{0} %b)
  %e = f32[64]{0} exponential(f32[64]{0} %m)
  %n = f32[64]{0} negate(f32[64]{0} %e)
  ROOT %s = f32[64]{0} add(f32[64]{0} %n, f32[64]{0} %a)
})";
  std::vector<std::unique_ptr<HloModule>> modules;
  std::vector<std::unique_ptr<Executable>> exes;
  auto memory = std::make_shared<SharedHostMemory>();
  for (const char* text : {small, big}) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, FakeKernels());
    ASSERT_TRUE(e.ok()) << e.status().message();
    (*e)->ShareHostMemory(memory);
    modules.push_back(std::move(*m));
    exes.push_back(std::move(*e));
  }
  const Shape shape = modules[0]->entry_computation()->parameter_instruction(0)->shape();
  std::vector<Literal> args;
  args.push_back(Random(shape, 1));
  args.push_back(Random(shape, 2));
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < exes.size(); ++k) {
      SCOPED_TRACE(::testing::Message() << "round " << round << ", program " << k);
      absl::StatusOr<Literal> got = exes[k]->Run(args);
      ASSERT_TRUE(got.ok()) << got.status().message();
      absl::StatusOr<Literal> want = HloEvaluator().Evaluate(*modules[k], args);
      ASSERT_TRUE(want.ok()) << want.status().message();
      absl::Status cmp = CompareLiterals(*want, *got, ErrorSpec{.abs = 1e-5, .rel = 1e-5});
      EXPECT_TRUE(cmp.ok()) << cmp.message();
    }
  }
  // Neither program writes a parameter: both read the arguments in place,
  // so the shared memory holds no copies of them; the arena is shared.
  EXPECT_TRUE(memory->Parameter(1, 0).empty());
  EXPECT_FALSE(memory->arena().empty());
}

TEST(ExecutableTest, ArenaOffsetMovesTheBuffersNotTheResults) {
  // The ablation worker draws an arena offset per step (placement
  // randomization): the temporaries move by that many bytes (rounded down
  // to 64), the answer stays the evaluator's, on own and shared memory.
  const char* text = R"(
HloModule offset
ENTRY %main (a: f32[256], b: f32[256]) -> f32[256] {
  %a = f32[256]{0} parameter(0)
  %b = f32[256]{0} parameter(1)
  %m = f32[256]{0} multiply(f32[256]{0} %a, f32[256]{0} %b)
  %e = f32[256]{0} exponential(f32[256]{0} %m)
  ROOT %s = f32[256]{0} add(f32[256]{0} %e, f32[256]{0} %a)
})";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Shape shape = (*m)->entry_computation()->parameter_instruction(0)->shape();
  std::vector<Literal> args;
  args.push_back(Random(shape, 3));
  args.push_back(Random(shape, 4));
  absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
  ASSERT_TRUE(want.ok()) << want.status().message();
  for (bool shared : {false, true}) {
    absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, FakeKernels());
    ASSERT_TRUE(e.ok()) << e.status().message();
    if (shared) (*e)->ShareHostMemory(std::make_shared<SharedHostMemory>());
    uintptr_t first_arena = 0;
    // The largest first: the storage then never grows, so addresses compare.
    for (int64_t offset : {65472, 0, 64, 100, 4096 + 128}) {
      SCOPED_TRACE(::testing::Message() << "offset " << offset << (shared ? ", shared" : ""));
      (*e)->set_arena_offset(offset);
      RunContext ctx;
      Frame* frame = nullptr;
      absl::StatusOr<Literal> got = (*e)->Run(args);
      ASSERT_TRUE(got.ok()) << got.status().message();
      absl::Status cmp = CompareLiterals(*want, *got, ErrorSpec{.abs = 1e-5, .rel = 1e-5});
      EXPECT_TRUE(cmp.ok()) << cmp.message();
      std::vector<std::vector<void*>> params = {{static_cast<void*>(args[0].untyped_data())},
                                                {static_cast<void*>(args[1].untyped_data())}};
      ASSERT_TRUE((*e)->program().ExecuteWithParameters(std::move(params), ctx, &frame, nullptr, offset).ok());
      const uintptr_t arena = reinterpret_cast<uintptr_t>(frame->arena);
      EXPECT_EQ(arena % 64, 0u);
      if (offset == 0) first_arena = arena;
      // The program's own storage, which never moved: the shift is the
      // offset rounded down to 64.
      if (offset == 64 || offset == 100) EXPECT_EQ(arena - first_arena, 64u);
      if (offset == 4096 + 128) EXPECT_EQ(arena - first_arena, 4096u + 128u);
    }
  }
}

TEST(ExecutableTest, ArgumentsAreReadInPlaceUnlessTheProgramWritesThem) {
  // Read-only: a row-major argument is read where it is; a column-major
  // parameter gets a copy in its layout.
  const char* reads = R"(HloModule reads
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[4,8]{0,1} parameter(1)
  ROOT s = f32[4,8] add(a, b)
})";
  // Donated: the dynamic-update-slice writes parameter 0 in place, so it is
  // copied in every run and the caller's literal stays as it was.
  const char* writes = R"(HloModule writes, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[64] parameter(0)
  u = f32[8] parameter(1)
  ROOT d = f32[64] dynamic-update-slice(p, u, s32[] constant(5))
})";
  for (const char* text : {reads, writes}) {
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << m.status().message();
    absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, FakeKernels());
    ASSERT_TRUE(e.ok()) << e.status().message();
    auto memory = std::make_shared<SharedHostMemory>();
    (*e)->ShareHostMemory(memory);
    const HloComputation& entry = *(*m)->entry_computation();
    std::vector<Literal> args, before;
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      args.push_back(Random(entry.parameter_instruction(i)->shape(), 10 + i));
      before.push_back(Literal(args.back()));
    }
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<Literal> got = (*e)->Run(args);
      ASSERT_TRUE(got.ok()) << got.status().message();
      absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, before);
      ASSERT_TRUE(want.ok()) << want.status().message();
      EXPECT_TRUE(CompareLiterals(*want, *got, ErrorSpec{.abs = 0, .rel = 0}).ok()) << text << " run " << run;
      for (size_t i = 0; i < args.size(); ++i) {
        EXPECT_TRUE(CompareLiterals(before[i], args[i], ErrorSpec{.abs = 0, .rel = 0}).ok())
            << "argument " << i << " changed";
      }
    }
    if (text == reads) {
      EXPECT_FALSE((*e)->buffer_assignment().OverwritesParameters());
      EXPECT_TRUE(memory->Parameter(0, 0).empty()) << "the row-major argument was copied";
      EXPECT_FALSE(memory->Parameter(1, 0).empty()) << "the column-major parameter needs a copy";
    } else {
      EXPECT_TRUE((*e)->buffer_assignment().OverwritesParameters());
      EXPECT_FALSE(memory->Parameter(0, 0).empty()) << "the donated parameter was not copied";
    }
  }
}

TEST(ExecutableTest, MlpWithGemmLibraryCallsAndKernels) {
  fake_add_kernels = 0;
  Ran r = RunAndCompare(R"(HloModule mlp
ENTRY e {
  x = f32[8,16] parameter(0)
  w1 = f32[16,32] parameter(1)
  b1 = f32[8,32] parameter(2)
  w2 = f32[32,4] parameter(3)
  h = f32[8,32] custom-call(x, w1), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  hb = f32[8,32] add(h, b1)
  zero = f32[] constant(0)
  relu = f32[8,32] maximum(hb, f32[8,32] broadcast(zero), dimensions={})
  y = f32[8,4] custom-call(relu, w2), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
  ROOT out = (f32[8,4], f32[8,32]) tuple(y, relu)
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_EQ(fake_add_kernels, 1);
  const KernelRecord* h = Find(r.records, "h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->kind, KernelKind::kLibraryCall);
  EXPECT_EQ(h->detail, "__blas$gemm/onednn");
  EXPECT_EQ(h->flops, 2 * 8 * 32 * 16);
  EXPECT_EQ(h->bytes_read, (8 * 16 + 16 * 32) * 4);
  EXPECT_EQ(h->bytes_written, 8 * 32 * 4);
  const KernelRecord* hb = Find(r.records, "hb");
  ASSERT_NE(hb, nullptr);
  EXPECT_EQ(hb->kind, KernelKind::kEmitted);
  EXPECT_EQ(hb->hlo_computation, "e");
  // One record per thunk, in order, not overlapping.
  ASSERT_EQ(r.records.size(), r.executable->program().thunks().size());
  for (size_t i = 1; i < r.records.size(); ++i) {
    EXPECT_LE(r.records[i - 1].end_ns, r.records[i].start_ns);
    EXPECT_LE(r.records[i].start_ns, r.records[i].end_ns);
  }
  // A second run on the same executable gives the same values.
  std::vector<Literal> args;
  for (int64_t i = 0; i < 4; ++i) args.push_back(Random(r.module->entry_computation()->parameter_instruction(i)->shape(), i + 1));
  absl::StatusOr<Literal> again = r.executable->Run(args);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, r.got);
}

TEST(ExecutableTest, ConvolutionLibraryCallsInATrainingStep) {
  Ran r = RunAndCompare(R"(HloModule conv
ENTRY e {
  x = f32[2,8,8,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  dy = f32[2,8,8,4] parameter(2)
  y = (f32[2,8,8,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convForward"
  dx = (f32[2,8,8,3], u8[0]) custom-call(dy, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardInput"
  dw = (f32[3,3,3,4], u8[0]) custom-call(x, dy), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__dnn$convBackwardFilter"
  y0 = f32[2,8,8,4] get-tuple-element(y), index=0
  dx0 = f32[2,8,8,3] get-tuple-element(dx), index=0
  dw0 = f32[3,3,3,4] get-tuple-element(dw), index=0
  ROOT out = (f32[2,8,8,4], f32[2,8,8,3], f32[3,3,3,4]) tuple(y0, dx0, dw0)
})",
                        {}, 1e-4);
  ASSERT_NE(r.executable, nullptr);
  const KernelRecord* dw = Find(r.records, "dw");
  ASSERT_NE(dw, nullptr);
  EXPECT_EQ(dw->kind, KernelKind::kLibraryCall);
  EXPECT_EQ(dw->detail, "__dnn$convBackwardFilter/auto");
}

TEST(ExecutableTest, WhileLoopRunsNestedPrograms) {
  Ran r = RunAndCompare(R"(HloModule loop
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT
}
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16] get-tuple-element(s), index=1
  ROOT next = (s32[], f32[16]) tuple(s32[] add(i, s32[] constant(1)), f32[16] add(v, v))
}
ENTRY e {
  x = f32[16] parameter(0)
  init = (s32[], f32[16]) tuple(s32[] constant(0), x)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
})");
  ASSERT_NE(r.executable, nullptr);
  const KernelRecord* w = Find(r.records, "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind, KernelKind::kControlFlow);
  EXPECT_EQ(w->detail, "while (5 iterations)");
  int body_adds = 0;
  for (const KernelRecord& k : r.records) body_adds += k.hlo_computation == "body" && k.kind == KernelKind::kEmitted;
  EXPECT_EQ(body_adds, 10);  // two adds per iteration
  ExecutableMemory mem = r.executable->memory();
  EXPECT_EQ(mem.parameter_bytes, 64);
  EXPECT_EQ(mem.arena_bytes, 128);          // the loop state: s32 and f32[16], 64-byte aligned
  EXPECT_EQ(mem.constant_bytes, 3 * 4);     // 0 in the entry, 5 in cond, 1 in body
  EXPECT_GT(mem.nested_arena_bytes, 0);
  EXPECT_EQ(mem.peak_bytes(), 64 + 128 + 12 + mem.nested_arena_bytes);
}

TEST(ExecutableTest, WhileLoopUpdatesItsStateInPlace) {
  // Each iteration writes row i of the state: an in-place update of the
  // loop state, with a state element passed through and two swapped.
  Ran r = RunAndCompare(R"(HloModule loop
cond {
  s = (s32[], f32[6,4], f32[4], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(6)), direction=LT
}
body {
  s = (s32[], f32[6,4], f32[4], f32[2], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  m = f32[6,4] get-tuple-element(s), index=1
  row = f32[4] get-tuple-element(s), index=2
  a = f32[2] get-tuple-element(s), index=3
  b = f32[2] get-tuple-element(s), index=4
  scaled = f32[1,4] reshape(f32[4] multiply(row, f32[4] convert(s32[4] broadcast(i), dimensions={})))
  upd = f32[6,4] dynamic-update-slice(m, scaled, i, s32[] constant(0))
  ROOT next = (s32[], f32[6,4], f32[4], f32[2], f32[2]) tuple(s32[] add(i, s32[] constant(1)), upd, row, b, a)
}
ENTRY e {
  m0 = f32[6,4] parameter(0)
  row = f32[4] parameter(1)
  a = f32[2] parameter(2)
  b = f32[2] parameter(3)
  init = (s32[], f32[6,4], f32[4], f32[2], f32[2]) tuple(s32[] constant(0), m0, row, a, b)
  ROOT w = (s32[], f32[6,4], f32[4], f32[2], f32[2]) while(init), condition=cond, body=body
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_EQ(Find(r.records, "w")->detail, "while (6 iterations)");
  // The body updates the matrix in the state buffer in place and passes the
  // row through; the counter (read by its own update) and the swapped pair
  // go through the copy-back.
  const Thunk* w = nullptr;
  for (const std::unique_ptr<Thunk>& t : r.executable->program().thunks()) {
    if (t->instruction().name() == "w") w = t.get();
  }
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->nested().size(), 2u);
  const Program& body = *w->nested()[1];
  const HloComputation& bc = body.computation();
  EXPECT_TRUE(body.assignment().IsInPlace(bc.GetInstructionWithName("upd")));
  const std::vector<BufferSlice>& next = body.assignment().LeafSlices(bc.root_instruction());
  ASSERT_EQ(next.size(), 5u);
  EXPECT_EQ(next[0].kind, BufferSlice::Kind::kArena);
  for (int leaf : {1, 2}) {
    EXPECT_EQ(next[leaf].kind, BufferSlice::Kind::kParameter) << leaf;
    EXPECT_EQ(next[leaf].parameter_leaf, leaf);
  }
  EXPECT_EQ(next[3].parameter_leaf, 4);  // b, passed through to a's place
  EXPECT_NE(r.executable->ToString().find("body:"), std::string::npos) << r.executable->ToString();
}

TEST(ExecutableTest, WhileLoopStateLivesInItsInitBuffersWhenCopiesMadeThatSafe) {
  // As CopyInsertion leaves it: the parameter and the constant reach the
  // loop through copies, so every init leaf is a buffer only the loop reads
  // and the state is placed there (no copy when the loop starts). x is
  // read again after the loop, so its leaf gets a buffer of its own.
  Ran r = RunAndCompare(R"(HloModule loop
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  ROOT next = (s32[], f32[4], f32[4]) tuple(s32[] add(i, s32[] constant(1)), f32[4] add(a, b), b)
}
ENTRY e {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  z = s32[] copy(s32[] constant(0))
  pc = f32[4] copy(p)
  init = (s32[], f32[4], f32[4]) tuple(z, pc, x)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  g = f32[4] get-tuple-element(w), index=1
  ROOT r = f32[4] add(g, x)
})");
  ASSERT_NE(r.executable, nullptr);
  const BufferAssignment& a = r.executable->buffer_assignment();
  const HloComputation* entry = r.module->entry_computation();
  const std::vector<BufferSlice>& state = a.LeafSlices(entry->GetInstructionWithName("w"));
  const std::vector<BufferSlice>& init = a.LeafSlices(entry->GetInstructionWithName("init"));
  ASSERT_EQ(state.size(), 3u);
  EXPECT_TRUE(a.IsInPlace(entry->GetInstructionWithName("w")));
  EXPECT_EQ(state[0], init[0]);
  EXPECT_EQ(state[1], init[1]);
  EXPECT_NE(state[2], init[2]);
}

TEST(ExecutableTest, TiledEntryLayoutsRunThroughCopies) {
  // As layout-assignment leaves a tiled entry (seed 002's F32[3,5] with
  // (2,2) tiles): copies untile the parameter and tile the result; the
  // kernel sees plain layouts only.
  Ran r = RunAndCompare(R"(HloModule tiled, entry_computation_layout={(f32[3,5]{1,0:T(2,2)})->f32[3,5]{0,1:T(2,2)}}
ENTRY e {
  p = f32[3,5]{1,0:T(2,2)} parameter(0)
  c = f32[3,5]{1,0} copy(p)
  n = f32[3,5]{1,0} add(c, c)
  ROOT t = f32[3,5]{0,1:T(2,2)} copy(n)
})");
  ASSERT_NE(r.executable, nullptr);
  // 2x3 tiles of 2x2 (padding included) per buffer.
  EXPECT_EQ(r.executable->buffer_assignment().LeafSlices(r.module->entry_computation()->root_instruction())[0].size,
            4 * 2 * 3 * 4);
}

TEST(ExecutableTest, KernelsRejectTiledOperands) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule tiled
ENTRY e {
  p = f32[3,5]{1,0:T(2,2)} parameter(0)
  ROOT n = f32[3,5]{1,0:T(2,2)} negate(p)
})");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, FakeKernels());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("n: tiled layouts are not supported"), std::string::npos) << e.status().message();
}

TEST(ExecutableTest, ConditionalWithPredAndIndex) {
  const std::string text = R"(HloModule cond
a {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
b {
  p = f32[4] parameter(0)
  ROOT x = f32[4] exponential(p)
}
c {
  p = f32[4] parameter(0)
  ROOT y = f32[4] add(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[4] parameter(1)
  ROOT r = f32[4] conditional(i, x, x, x), branch_computations={a, b, c}
})";
  for (int32_t index : {0, 1, 2, 7, -1}) {
    RunAndCompare(text, {Literal::Scalar<int32_t>(index), Random(Shape(PrimitiveType::kF32, {4}), 3)});
  }
  const std::string pred = R"(HloModule cond
t {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
f {
  p = f32[4] parameter(0)
  ROOT x = f32[4] exponential(p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[4] parameter(1)
  ROOT r = f32[4] conditional(c, x, x), true_computation=t, false_computation=f
})";
  for (bool c : {true, false}) RunAndCompare(pred, {Literal::Scalar<bool>(c), Random(Shape(PrimitiveType::kF32, {4}), 4)});
}

TEST(ExecutableTest, RuntimeRoutinesCopiesAndInPlaceUpdate) {
  Ran r = RunAndCompare(R"(HloModule routines
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[6,5] parameter(0)
  u = f32[2,5] parameter(1)
  sorted = f32[6,5] sort(x), dimensions={0}, to_apply=cmp
  t = f32[6,5]{0,1} copy(sorted)
  same = f32[6,5] copy(sorted)
  n = f32[6,5] negate(x)
  d = f32[6,5] dynamic-update-slice(n, u, s32[] constant(3), s32[] constant(0))
  ROOT out = (f32[6,5]{0,1}, f32[6,5], f32[6,5]) tuple(t, same, d)
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_EQ(Find(r.records, "sorted")->kind, KernelKind::kRuntimeRoutine);
  // A copy into another layout is a transpose: a compiled kernel. One into
  // the same layout is a memcpy.
  EXPECT_EQ(Find(r.records, "t")->kind, KernelKind::kEmitted);
  EXPECT_EQ(Find(r.records, "same")->kind, KernelKind::kCopy);
  const HloInstruction* d = r.module->entry_computation()->GetInstructionWithName("d");
  EXPECT_TRUE(r.executable->buffer_assignment().IsInPlace(d));
}

TEST(ExecutableTest, LinearAlgebraFftTopkAndRngRoutines) {
  const std::string text = R"(HloModule routines
ENTRY e {
  spd = f32[4,4] parameter(0)
  b = f32[4,3] parameter(1)
  x = f32[3,7] parameter(2)
  c = c64[8] parameter(3)
  state = u64[2] parameter(4)
  l = f32[4,4] cholesky(spd), lower=true
  s = f32[4,3] triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  t = (f32[3,2], s32[3,2]) topk(x), k=2, largest=true
  f = c64[8] fft(c), fft_type=FFT, fft_length={8}
  r = (u64[2], u32[5]) rng-bit-generator(state), algorithm=rng_philox
  ROOT out = (f32[4,3], (f32[3,2], s32[3,2]), c64[8], (u64[2], u32[5])) tuple(s, t, f, r)
})";
  // A symmetric positive definite matrix: diagonally dominant.
  Literal spd = Random(Shape(PrimitiveType::kF32, {4, 4}), 1);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < i; ++j) spd.Set<float>({j, i}, spd.Get<float>({i, j}));
    spd.Set<float>({i, i}, 5.0f + i);
  }
  Literal c(Shape(PrimitiveType::kC64, {8}));
  for (int64_t i = 0; i < 8; ++i) c.SetComplex(i, {0.25 * i, 1.0 - 0.5 * i});
  Ran r = RunAndCompare(text, {std::move(spd), Random(Shape(PrimitiveType::kF32, {4, 3}), 2),
                               Random(Shape(PrimitiveType::kF32, {3, 7}), 3), std::move(c),
                               Literal::Vector<uint64_t>({42, 7})},
                        1e-4);
  ASSERT_NE(r.executable, nullptr);
  for (std::string_view name : {"l", "s", "t", "f", "r"}) {
    const KernelRecord* k = Find(r.records, name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_EQ(k->kind, KernelKind::kRuntimeRoutine) << name;
  }
  EXPECT_EQ(Find(r.records, "f")->detail, "fft");
}

TEST(ExecutableTest, GemmAccumulatesIntoItsCOperandInPlace) {
  // As XLA's GemmRewriter emits it: C aliased to the output.
  Ran r = RunAndCompare(R"(HloModule gemm
ENTRY e {
  a = f32[6,5] parameter(0)
  b = f32[5,7] parameter(1)
  c0 = f32[6,7] parameter(2)
  c = f32[6,7] negate(c0)
  ROOT g = f32[6,7] custom-call(a, b, c), custom_call_target="__blas$gemm", output_to_operand_aliasing={{}: (2, {})}, backend_config={"gemm_backend_config":{"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  ASSERT_NE(r.executable, nullptr);
  const HloComputation* entry = r.module->entry_computation();
  EXPECT_TRUE(r.executable->buffer_assignment().IsInPlace(entry->root_instruction()));
  EXPECT_EQ(r.executable->buffer_assignment().LeafSlices(entry->root_instruction())[0],
            r.executable->buffer_assignment().LeafSlices(entry->GetInstructionWithName("c"))[0]);
}

TEST(ExecutableTest, GemmOperandWithoutBatchDimsIsReadForEveryBatch) {
  // GemmBroadcastFoldingRewriter's form: rhs has no batch dims (stride 0,
  // read in place); lhs-free with a column-major lhs (packed once).
  RunAndCompare(R"(HloModule gemm
ENTRY e {
  a = f32[3,4,5] parameter(0)
  b = f32[5,7] parameter(1)
  ROOT g = f32[3,4,7] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_batch_dimensions":["0"],"lhs_contracting_dimensions":["2"],"rhs_contracting_dimensions":["0"]}}}
})");
  RunAndCompare(R"(HloModule gemm
ENTRY e {
  a = f32[4,5]{0,1} parameter(0)
  b = f32[3,5,7]{1,2,0} parameter(1)
  ROOT g = f32[3,4,7] custom-call(a, b), custom_call_target="__blas$gemm", backend_config={"gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_batch_dimensions":["0"],"rhs_contracting_dimensions":["1"]}}}
})");
}

TEST(ExecutableTest, BarriersAndDependenciesAreAliases) {
  Ran r = RunAndCompare(R"(HloModule barrier
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  t = (f32[8], f32[8]) opt-barrier((f32[8], f32[8]) tuple(a, b))
  x = f32[8] get-tuple-element(t), index=0
  tok = token[] after-all()
  d = f32[8] add-dependency(x, tok)
  y = f32[8] get-tuple-element(t), index=1
  ROOT s = f32[8] add(d, y)
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_EQ(r.records.size(), 1u);  // only the add runs
}

TEST(ExecutableTest, DonatedParameterHoldsTheOutput) {
  Ran r = RunAndCompare(R"(HloModule donate, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[64] parameter(0)
  u = f32[8] parameter(1)
  ROOT d = f32[64] dynamic-update-slice(p, u, s32[] constant(5))
})");
  ASSERT_NE(r.executable, nullptr);
  EXPECT_EQ(r.executable->buffer_assignment().arena_bytes(), 0);
}

TEST(ExecutableTest, RunsAScheduledComputationInItsSequence) {
  // A schedule (HloComputation::SetInstructionSequence, as the
  // latency-hiding scheduler sets it) decides the thunk order.
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] negate(a)
  y = f32[8] exponential(a)
  z = f32[8] sqrt(y)
  ROOT r = f32[8] multiply(x, z)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* c = (*m)->entry_computation();
  auto get = [&](const char* n) { return c->GetInstructionWithName(n); };
  for (const std::vector<std::string>& order : {std::vector<std::string>{"x", "y", "z", "r"},
                                                std::vector<std::string>{"y", "z", "x", "r"},
                                                std::vector<std::string>{"y", "x", "z", "r"}}) {
    std::vector<HloInstruction*> sequence = {get("a")};
    for (const std::string& n : order) sequence.push_back(get(n.c_str()));
    ASSERT_TRUE(c->SetInstructionSequence(sequence).ok());
    (*m)->set_is_scheduled(true);
    absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, FakeKernels());
    ASSERT_TRUE(e.ok()) << e.status().message();
    std::vector<Literal> args;
    args.push_back(Random(c->parameter_instruction(0)->shape(), 3));
    std::vector<KernelRecord> records;
    absl::StatusOr<Literal> got = (*e)->Run(args, &records);
    ASSERT_TRUE(got.ok()) << got.status().message();
    std::vector<std::string> ran;
    for (const KernelRecord& r : records) ran.push_back(r.name);
    EXPECT_EQ(ran, order);
    absl::StatusOr<Literal> want = HloEvaluator().Evaluate(**m, args);
    ASSERT_TRUE(want.ok()) << want.status().message();
    EXPECT_TRUE(CompareLiterals(*want, *got, ErrorSpec{.abs = 1e-5, .rel = 1e-5}).ok());
  }
}

TEST(ExecutableTest, ErrorsNameTheInstruction) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT my_neg = f32[4] negate(a)
})");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<std::unique_ptr<Executable>> e = Executable::Create(**m, KernelProvider());
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("my_neg"), std::string_view::npos) << e.status().message();
  absl::StatusOr<std::unique_ptr<Executable>> ok = Executable::Create(**m, FakeKernels());
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE((*ok)->Run({}).ok());  // missing argument
}

TEST(ChromeTraceTest, ExportsSortedCompleteEvents) {
  std::vector<KernelRecord> records(3);
  records[0] = {.name = "b", .kind = KernelKind::kLibraryCall, .detail = "__blas$gemm/blas", .device = "cpu",
                .start_ns = 5000, .end_ns = 9000, .flops = 100};
  records[1] = {.name = "a", .kind = KernelKind::kEmitted, .device = "cpu", .start_ns = 1000, .end_ns = 4000};
  records[2] = {.name = "c", .kind = KernelKind::kCopy, .device = "cuda:0", .start_ns = 2000, .end_ns = 2500};
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(records));
  ASSERT_TRUE(j.contains("traceEvents"));
  std::vector<std::string> names;
  int metadata = 0;
  for (const nlohmann::json& e : j["traceEvents"]) {
    if (e["ph"] == "M") {
      ++metadata;
      continue;
    }
    EXPECT_EQ(e["ph"], "X");
    names.push_back(e["name"]);
    if (e["name"] == "b") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 5.0);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 4.0);
      EXPECT_EQ(e["cat"], "library");
      EXPECT_EQ(e["args"]["flops"], 100);
    }
  }
  EXPECT_EQ(metadata, 2);  // cpu and cuda:0
  EXPECT_EQ(names, (std::vector<std::string>{"a", "c", "b"}));
  EXPECT_EQ(ChromeTraceJson(records), ChromeTraceJson(records));
}

TEST(ChromeTraceTest, RecordsFromARunExport) {
  Ran r = RunAndCompare(R"(HloModule m
ENTRY e {
  a = f32[32] parameter(0)
  b = f32[32] parameter(1)
  ROOT c = f32[32] add(a, b)
})");
  ASSERT_FALSE(r.records.empty());
  nlohmann::json j = nlohmann::json::parse(ChromeTraceJson(r.records));
  int complete = 0;
  for (const nlohmann::json& e : j["traceEvents"]) complete += e["ph"] == "X";
  EXPECT_EQ(complete, static_cast<int>(r.records.size()));
}

}  // namespace
}  // namespace passlab
