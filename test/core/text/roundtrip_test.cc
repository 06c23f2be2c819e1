// Round-trip contract of the text format over passlab's own fixtures:
// print(parse(print(parse(t)))) == print(parse(t)) and parse(print(m)) is
// structurally equal to m.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/ir/hlo_equal.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"

namespace passlab {
namespace {

// `n` unary instructions %<prefix>0.. of f32[4], each taking the one before
// (`prev`, updated to the last), as lines of HLO text.
void AppendUnaryChain(std::string& text, std::string& prev, const std::string& prefix, const std::string& opcode,
                      int n) {
  for (int i = 0; i < n; ++i) {
    const std::string name = prefix + std::to_string(i);
    text += "  %" + name + " = f32[4]{0} " + opcode + "(f32[4]{0} %" + prev + ")\n";
    prev = name;
  }
}

// The fingerprint of `text` parsed afresh: no cached texts, no history.
uint64_t FreshFingerprint(const std::string& text) {
  auto fresh = ParseHloModule(text);
  EXPECT_TRUE(fresh.ok()) << fresh.status().message();
  return fresh.ok() ? CanonicalTextFingerprint(**fresh) : 0;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> Fixtures() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::filesystem::path(PASSLAB_SOURCE_DIR) / "test/hlo")) {
    if (e.path().extension() == ".hlo" && e.path().parent_path().filename() != "invalid" &&
        e.path().parent_path().filename() != "verify") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RoundTripTest, EveryFixtureRoundTrips) {
  std::vector<std::filesystem::path> files = Fixtures();
  ASSERT_GE(files.size(), 3u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto m = ParseHloModule(ReadFile(path), path.string());
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::string once = PrintModule(**m);
    auto m2 = ParseHloModule(once, "printed");
    ASSERT_TRUE(m2.ok()) << m2.status().message() << "\n" << once;
    EXPECT_EQ(PrintModule(**m2), once);
    std::string difference;
    EXPECT_TRUE(StructurallyEqual(**m, **m2, &difference)) << difference;
  }
}

TEST(ModuleTextTest, SnapshotsShareUnchangedLinesAndKeepTheirText) {
  auto m = ParseHloModule(R"(
HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %a = f32[4]{0} add(f32[4]{0} %p, f32[4]{0} %p)
  ROOT %n = f32[4]{0} negate(f32[4]{0} %a)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::shared_ptr<const ModuleText> before = PrintModuleText(**m);
  const std::string before_text = PrintModule(**m);
  HloInstruction* p = (*m)->entry_computation()->parameter_instruction(0);
  HloInstruction* a = (*m)->entry_computation()->root_instruction()->mutable_operand(0);
  const std::string* p_line = p->cached_line();
  ASSERT_NE(p_line, nullptr);
  // Edit the add: its line is printed anew, the parameter's is shared.
  a->ReplaceOperandWith(1, p);
  a->SetName("sum");
  std::shared_ptr<const ModuleText> after = PrintModuleText(**m);
  EXPECT_EQ(p->cached_line(), p_line);
  EXPECT_EQ(before->str(), before_text);  // the old snapshot keeps its text
  EXPECT_EQ(after->str(), PrintModule(**m));
  EXPECT_NE(after->str().find("%sum = f32[4]{0} add"), std::string::npos) << after->str();
  EXPECT_EQ(after->size(), after->str().size());
  // The snapshot's fingerprint is the module's, and the edit changed it.
  EXPECT_EQ(after->fingerprint(), CanonicalTextFingerprint(**m));
  EXPECT_NE(after->fingerprint(), before->fingerprint());
  // Same text, same fingerprint: a freshly parsed copy of the module.
  auto copy = ParseHloModule(after->str());
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  EXPECT_EQ(CanonicalTextFingerprint(**copy), after->fingerprint());
}

TEST(ModuleTextTest, UnchangedComputationsAreSharedAndEveryEditIsSeen) {
  auto m = ParseHloModule(R"(
HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}
%max (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] maximum(f32[] %x, f32[] %y)
}
ENTRY %main (p: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %z = f32[] constant(0)
  %r = f32[] reduce(f32[4]{0} %p, f32[] %z), dimensions={0}, to_apply=%add
  ROOT %n = f32[] negate(f32[] %r)
})");
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  HloComputation* add = module.GetComputationWithName("add");
  HloComputation* max = module.GetComputationWithName("max");
  HloComputation* entry = module.entry_computation();
  // After every edit the snapshot is exactly what PrintModule prints, and its
  // fingerprint is new.
  std::set<uint64_t> fingerprints;
  auto check = [&](const std::string& what) {
    SCOPED_TRACE(what);
    std::shared_ptr<const ModuleText> text = PrintModuleText(module);
    EXPECT_EQ(text->str(), PrintModule(module));
    EXPECT_EQ(text->size(), text->str().size());
    EXPECT_TRUE(fingerprints.insert(text->fingerprint()).second) << "fingerprint seen before";
  };
  check("first");
  // A snapshot of an unchanged module reuses every computation's text.
  const ComputationText* add_text = add->text_cache().get();
  ASSERT_NE(add_text, nullptr);
  EXPECT_EQ(PrintModuleText(module)->str(), PrintModule(module));
  EXPECT_EQ(add->text_cache().get(), add_text);

  // An edit in the entry leaves the callees' texts shared.
  HloInstruction* n = entry->root_instruction();
  n->mutable_operand(0)->set_dimensions({0});  // same value: still an edit
  entry->set_root_instruction(n->mutable_operand(0));
  check("root changed");
  EXPECT_EQ(add->text_cache().get(), add_text);
  entry->set_root_instruction(n);
  // ... and each kind of edit that changes the text is seen.
  max->SetName("maximum_reducer");
  check("callee not called renamed");
  add->SetName("sum");
  check("called computation renamed");
  EXPECT_NE(add->text_cache().get(), add_text);
  entry->root_instruction()->mutable_operand(0)->set_to_apply(max);
  check("reducer swapped");
  max->root_instruction()->SetName("m");
  check("callee instruction renamed");
  max->parameter_instruction(0)->SetName("first");
  check("callee parameter renamed (its header)");
  module.config().replica_count = 2;
  check("module config changed");
  entry->set_execution_thread("other");
  check("execution thread");
  entry->set_execution_thread("main");
  // The entry moves: both computations print differently ("ENTRY").
  module.set_entry_computation(add);
  EXPECT_EQ(PrintModuleText(module)->str(), PrintModule(module));
}

TEST(ModuleTextTest, SnapshotsAfterAnEditReuseTheUnchangedSegments) {
  // A chain of 600 instructions in one computation.
  std::string text = "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n";
  std::string prev = "p";
  for (int i = 0; i < 600; ++i) {
    text += "  %n" + std::to_string(i) + " = f32[4]{0} " + (i % 3 == 0 ? "negate" : i % 3 == 1 ? "exponential" : "tanh") +
            "(f32[4]{0} %" + prev + ")\n";
    prev = "n" + std::to_string(i);
  }
  text += "  ROOT %out = f32[4]{0} copy(f32[4]{0} %" + prev + ")\n}\n";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  HloComputation* entry = module.entry_computation();
  std::shared_ptr<const ModuleText> t0 = PrintModuleText(module);
  EXPECT_EQ(t0->lines_printed(), 602);
  ASSERT_EQ(t0->computations().size(), 1u);
  const size_t segments = t0->computations()[0]->segments.size();
  EXPECT_GT(segments, 5u);  // content-defined cuts, about every 32 lines

  // Insert an instruction between n300 and n301: two lines are new (the
  // instruction and its user), the rest of the text is the old segments.
  HloInstruction* n300 = entry->GetInstructionWithName("n300");
  HloInstruction* n301 = entry->GetInstructionWithName("n301");
  HloInstruction* added = entry->AddInstruction(HloInstruction::CreateUnary(n300->shape(), HloOpcode::kAbs, n300));
  n301->ReplaceOperandWith(0, added);
  std::shared_ptr<const ModuleText> t1 = PrintModuleText(module, t0.get());
  EXPECT_EQ(t1->str(), PrintModule(module));
  EXPECT_EQ(t1->size(), t1->str().size());
  EXPECT_EQ(t1->lines_printed(), 2);
  std::set<const ComputationText::Segment*> old_segments;
  for (const auto& seg : t0->computations()[0]->segments) old_segments.insert(seg.get());
  int64_t shared = 0;
  for (const auto& seg : t1->computations()[0]->segments) shared += old_segments.contains(seg.get());
  EXPECT_GE(shared, static_cast<int64_t>(segments) - 3);
  // The fingerprint is the text's, whatever the history: a fresh parse of the
  // same text, printed from scratch, has it too.
  EXPECT_EQ(FreshFingerprint(t1->str()), t1->fingerprint());
  EXPECT_NE(t1->fingerprint(), t0->fingerprint());

  // Undo the edit: the text and fingerprint are the first ones again, and a
  // stale hint (t0, two states back) is as good as any.
  n301->ReplaceOperandWith(0, n300);
  ASSERT_TRUE(entry->RemoveInstruction(added).ok());
  std::shared_ptr<const ModuleText> t2 = PrintModuleText(module, t0.get());
  EXPECT_EQ(t2->str(), t0->str());
  EXPECT_EQ(t2->fingerprint(), t0->fingerprint());
  // A rename changes the line of the instruction and its user only.
  entry->GetInstructionWithName("n10")->SetName("renamed");
  std::shared_ptr<const ModuleText> t3 = PrintModuleText(module, t2.get());
  EXPECT_EQ(t3->str(), PrintModule(module));
  EXPECT_EQ(t3->lines_printed(), 2);
}

TEST(ModuleTextTest, SnapshotsOfManyChangedComputationsMatchThePrinter) {
  // Enough changed computations and instructions for a snapshot to share
  // its work with the helper thread (post orders, missing lines, and the
  // computations' texts on two printers); every snapshot must still be
  // exactly what PrintModule prints, and its fingerprint a fresh parse's.
  std::string text = "HloModule m\n\n";
  for (int k = 0; k < 12; ++k) {
    const std::string f = "f" + std::to_string(k);
    text += "%" + f + " (a: f32[4], b: f32[4]) -> f32[4] {\n  %a = f32[4]{0} parameter(0)\n  %b = f32[4]{0} parameter(1)\n";
    std::string prev = "a";
    for (int i = 0; i < 40; ++i) {
      text += "  %x" + std::to_string(i) + " = f32[4]{0} add(f32[4]{0} %" + prev + ", f32[4]{0} %b), metadata={op_name=\"" + f + "\"}\n";
      prev = "x" + std::to_string(i);
    }
    text += "  ROOT %r = f32[4]{0} negate(f32[4]{0} %" + prev + ")\n}\n\n";
  }
  text += "ENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n";
  std::string prev = "p";
  for (int k = 0; k < 12; ++k) {
    text += "  %c" + std::to_string(k) + " = f32[4]{0} call(f32[4]{0} %" + prev + ", f32[4]{0} %p), to_apply=%f" + std::to_string(k) + "\n";
    prev = "c" + std::to_string(k);
  }
  AppendUnaryChain(text, prev, "n", "exponential", 300);
  text += "  ROOT %out = f32[4]{0} copy(f32[4]{0} %" + prev + ")\n}\n";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::shared_ptr<const ModuleText> last = PrintModuleText(**m);
  ASSERT_EQ(last->str(), PrintModule(**m));
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Every computation changes: an instruction renamed (its line and its
    // users' lines) and, in odd rounds, a new instruction spliced in.
    for (HloComputation* c : (*m)->computations()) {
      HloInstruction* target = c->instructions()[2 + round];
      target->SetName(target->name() + "_r" + std::to_string(round));
      if (round % 2 == 1 && !target->users().empty()) {
        HloInstruction* user = target->users().front();
        HloInstruction* added =
            c->AddInstruction(HloInstruction::CreateUnary(target->shape(), HloOpcode::kAbs, target));
        for (int64_t i = 0; i < user->operand_count(); ++i) {
          if (user->operand(i) == target) user->ReplaceOperandWith(i, added);
        }
      }
    }
    std::shared_ptr<const ModuleText> next = PrintModuleText(**m, last.get());
    ASSERT_EQ(next->str(), PrintModule(**m));
    EXPECT_EQ(next->fingerprint(), FreshFingerprint(next->str()));
    EXPECT_NE(next->fingerprint(), last->fingerprint());
    last = next;
  }
}

TEST(ModuleTextTest, TheFingerprintDependsOnlyOnTheText) {
  // Segments are reused wherever their lines reappear, so a computation's
  // last segment (which ends at the end, not at a content-defined cut) can
  // end up in the middle of a later text; the fingerprint must not depend
  // on where segments happen to end.
  std::string text = "HloModule m\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} parameter(0)\n";
  std::string prev = "p";
  AppendUnaryChain(text, prev, "n", "negate", 100);
  text += "  ROOT %out = f32[4]{0} copy(f32[4]{0} %" + prev + ")\n}\n";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* entry = (*m)->entry_computation();
  std::shared_ptr<const ModuleText> last = PrintModuleText(**m);
  // Dead instructions after the root in post order, one at a time.
  for (int i = 0; i < 8; ++i) {
    entry->AddInstruction(HloInstruction::CreateUnary(entry->parameter_instruction(0)->shape(), HloOpcode::kExp,
                                                      entry->root_instruction()));
    std::shared_ptr<const ModuleText> next = PrintModuleText(**m, last.get());
    ASSERT_EQ(next->str(), PrintModule(**m));
    EXPECT_EQ(next->fingerprint(), FreshFingerprint(next->str())) << "after " << i + 1 << " dead instructions";
    last = next;
  }
}

TEST(ModuleTextTest, HeadersAreReusedOnlyWhileTheSignatureStaysTheSame) {
  // An entry with many parameters and a declared layout (as parsed text
  // has), large enough for the snapshot's second thread.
  std::string text = "HloModule m, entry_computation_layout={(";
  for (int i = 0; i < 300; ++i) text += std::string(i > 0 ? ", " : "") + "f32[4,2]{1,0}";
  text += ")->f32[4,2]{1,0}}\n\nENTRY %main {\n";
  for (int i = 0; i < 300; ++i) {
    text += "  %p" + std::to_string(i) + " = f32[4,2]{1,0} parameter(" + std::to_string(i) + ")\n";
  }
  std::string prev = "p0";
  for (int i = 1; i < 300; ++i) {
    const std::string name = "s" + std::to_string(i);
    text += "  %" + name + " = f32[4,2]{1,0} add(f32[4,2]{1,0} %" + prev + ", f32[4,2]{1,0} %p" + std::to_string(i) + ")\n";
    prev = name;
  }
  text += "  ROOT %out = f32[4,2]{1,0} negate(f32[4,2]{1,0} %" + prev + ")\n}\n";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloModule& module = **m;
  HloComputation* entry = module.entry_computation();
  std::shared_ptr<const ModuleText> last = PrintModuleText(module);
  ASSERT_EQ(last->str(), PrintModule(module));
  auto header = [](const ModuleText& t) { return t.computations().back()->header.get(); };
  auto check = [&](const std::string& what, bool same_header) {
    SCOPED_TRACE(what);
    std::shared_ptr<const ModuleText> next = PrintModuleText(module, last.get());
    EXPECT_EQ(next->str(), PrintModule(module));
    EXPECT_EQ(next->fingerprint(), CanonicalTextFingerprint(module));
    EXPECT_EQ(header(*next) == header(*last), same_header);
    last = next;
  };
  // A body edit keeps the header (and the module line's layout).
  entry->GetInstructionWithName("s7")->ReplaceOperandWith(1, entry->parameter_instruction(0));
  check("body edit", true);
  entry->parameter_instruction(5)->SetName("renamed");
  check("parameter renamed", false);
  // A layout change is not in the header but is in the module line, which
  // then prints the declared layout (it no longer matches the entry).
  entry->parameter_instruction(9)->mutable_shape()->mutable_layout() = Layout({0, 1});
  check("parameter layout", false);
  EXPECT_NE(last->str().find("f32[4,2]{0,1}"), std::string::npos);
  HloInstruction* root = entry->root_instruction();
  HloInstruction* reduced = entry->AddInstruction(
      HloInstruction::CreateSlice(Shape::Array(PrimitiveType::kF32, {2, 2}), root, {{0, 2, 1}, {0, 2, 1}}));
  entry->set_root_instruction(reduced);
  check("root shape", false);
  module.config().entry_computation_layout.reset();  // now the entry's own
  check("declared layout dropped", true);
  EXPECT_NE(last->str().find(")->f32[2,2]{1,0}}"), std::string::npos);
}

TEST(RoundTripTest, AsyncSugarParsesToTheGenericForm) {
  // Seed 001: "op-start" and "async-start" with a wrapped computation are the
  // same representation.
  const char* sugar = R"(
HloModule m
ENTRY %main (p: f32[64]) -> f32[32] {
  %p = f32[64] parameter(0)
  %s = ((f32[64]), f32[32], s32[]) slice-start(f32[64] %p), slice={[0:64:2]}
  %u = ((f32[64]), f32[32], s32[]) slice-update(((f32[64]), f32[32], s32[]) %s)
  ROOT %d = f32[32] slice-done(((f32[64]), f32[32], s32[]) %u)
})";
  auto m = ParseHloModule(sugar);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloComputation* entry = (*m)->entry_computation();
  HloInstruction* done = entry->root_instruction();
  EXPECT_EQ(done->opcode(), HloOpcode::kAsyncDone);
  HloInstruction* update = done->mutable_operand(0);
  EXPECT_EQ(update->opcode(), HloOpcode::kAsyncUpdate);
  HloInstruction* start = update->mutable_operand(0);
  ASSERT_EQ(start->opcode(), HloOpcode::kAsyncStart);
  EXPECT_EQ(start->async_wrapped_opcode(), HloOpcode::kSlice);
  EXPECT_EQ(done->async_wrapped_computation(), start->async_wrapped_computation());
  EXPECT_EQ(start->async_wrapped_instruction()->attrs().slice[0].stride, 2);
  // Printed back as sugar, not as a separate computation.
  std::string printed = PrintModule(**m);
  EXPECT_NE(printed.find("slice-start("), std::string::npos) << printed;
  EXPECT_NE(printed.find("slice-done("), std::string::npos) << printed;
  EXPECT_EQ(printed.find("async-start"), std::string::npos) << printed;
}

TEST(RoundTripTest, ShapesWithoutLayoutsGetDefaultLayouts) {
  auto m = ParseHloModule("ENTRY e { ROOT p = f32[2,3] parameter(0) }");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->entry_computation()->root_instruction()->shape().ToString(), "f32[2,3]{1,0}");
}

TEST(RoundTripTest, TiledLayoutsAndLayoutFieldsRoundTrip) {
  for (const char* shape :
       {"f32[3,5]{1,0:T(2,2)}", "bf16[4,8]{1,0:T(8,128)(2,1)}", "f32[2,7,8,11,10]{4,3,2,1,0:T(*,*,2,*,3)}",
        "s4[16]{0:E(4)}", "f32[8]{0:S(1)}", "f32[8,8]{0,1:T(8,128)L(1024)S(2)}",
        "f32[<=4,?]{1,0}", "u32[4]{0:#(s32)*(u32)}", "(f32[], (s32[2]{0}, token[]))",
        "f32[8]{0:D(C+~)}", "f32[8,8]{1,0:SC(0:2,4)}", "f32[4]{0:P(f32[8]{0})}",
        "f32[4]{0:M(8)}"}) {
    auto parsed = ParseShape(shape);
    ASSERT_TRUE(parsed.ok()) << shape << ": " << parsed.status().message();
    EXPECT_EQ(parsed->ToString(), shape);
  }
}

TEST(RoundTripTest, ConstantsRoundTripExactly) {
  const char* text = R"(
HloModule c
ENTRY %e () -> (f32[5], bf16[3], f16[2], f8e4m3fn[3], f8e5m2[2], s8[2], u64[1], pred[2], c128[1], f64[2]) {
  %a = f32[5]{0} constant({0.1, 3.4028235e+38, 1.4e-45, -0, nan(0x1)})
  %b = bf16[3]{0} constant({-nan(0x7f), 0.797, inf})
  %c = f16[2]{0} constant({65504, 6e-08})
  %d = f8e4m3fn[3]{0} constant({nan, 448, -nan})
  %e = f8e5m2[2]{0} constant({57344, -inf})
  %f = s8[2]{0} constant({-128, 127})
  %g = u64[1]{0} constant({18446744073709551615})
  %h = pred[2]{0} constant({true, false})
  %i = c128[1]{0} constant({(1e+300, -nan)})
  %j = f64[2]{0} constant({0.1, 2.2250738585072014e-308})
  ROOT %t = (f32[5]{0}, bf16[3]{0}, f16[2]{0}, f8e4m3fn[3]{0}, f8e5m2[2]{0}, s8[2]{0}, u64[1]{0}, pred[2]{0}, c128[1]{0}, f64[2]{0}) tuple(%a, %b, %c, %d, %e, %f, %g, %h, %i, %j)
})";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::string printed = PrintModule(**m);
  for (const char* expected :
       {"{0.1, 3.4028235e+38, 1e-45, -0, nan(0x1)}", "{-nan(0x7f), 0.797, inf}", "{65504, 6e-08}",
        "{nan, 448, -nan}", "{57344, -inf}", "{-128, 127}", "{18446744073709551615}",
        "{true, false}", "{(1e+300, -nan)}", "{0.1, 2.2250738585072014e-308}"}) {
    EXPECT_NE(printed.find(expected), std::string::npos) << expected << "\n" << printed;
  }
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(PrintModule(**again), printed);
}

TEST(RoundTripTest, InlineOperandsAndComputationsGetNames) {
  const char* text = R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[] reduce(p, f32[] constant(0)), dimensions={0}, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT s = f32[] add(a, b)
  }
})";
  auto m = ParseHloModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  HloInstruction* r = (*m)->entry_computation()->root_instruction();
  EXPECT_EQ(r->operand(1)->opcode(), HloOpcode::kConstant);
  ASSERT_NE(r->to_apply(), nullptr);
  EXPECT_EQ(r->to_apply()->root_instruction()->opcode(), HloOpcode::kAdd);
  auto again = ParseHloModule(PrintModule(**m));
  ASSERT_TRUE(again.ok()) << again.status().message();
}

TEST(RoundTripTest, CloneIsStructurallyEqual) {
  auto path = std::filesystem::path(PASSLAB_SOURCE_DIR) / "test/hlo/all_opcodes.hlo";
  auto m = ParseHloModule(ReadFile(path), path.string());
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::unique_ptr<HloModule> clone = (*m)->Clone();
  std::string difference;
  EXPECT_TRUE(StructurallyEqual(**m, *clone, &difference)) << difference;
  EXPECT_EQ(PrintModule(**m), PrintModule(*clone));
}

}  // namespace
}  // namespace passlab
