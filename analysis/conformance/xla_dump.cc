#include "analysis/conformance/xla_dump.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/ir/file_util.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/pass/hlo_pass_pipeline.h"
#include "core/text/hlo_parser.h"
#include "core/text/hlo_printer.h"
#include "core/verify/hlo_verifier.h"
#include "core/verify/shape_inference.h"
#include "passes/pipelines/pipelines.h"
#include "passes/registry.h"
#include "passes/simplifiers/hlo_dce.h"

namespace passlab::conformance {
namespace {

namespace fs = std::filesystem;

// XLA's SanitizeFileName (xla/util.cc): what a pipeline's or pass's name
// looks like inside a dump's file name ("layout assignment" ->
// "layout_assignment").
std::string SanitizeForFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '/' || c == '\\' || c == '[' || c == ']' || c == ' ') c = '_';
  }
  return out;
}

struct DumpFile {
  std::string path;
  std::string module;
  int64_t step = 0;
  std::string pipeline, after, before;
};

absl::StatusOr<std::unique_ptr<HloModule>> ReadModule(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  ParseOptions po;
  po.infer_shape = InferInstructionShape;  // XLA lets instructions omit shapes
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, path, po);
  if (!m.ok()) return m.status();
  if (absl::Status s = VerifyModule(**m); !s.ok()) {
    return absl::InvalidArgumentError(StrCat(path, ": does not verify: ", s.message()));
  }
  return m;
}

// A leaf of passlab's pipeline and what to run for it: the leaf itself, or
// the fixed point around it when the fixed point holds only that leaf (XLA's
// HloPassFix<Pass> dumps once, after the fixed point).
struct Place {
  HloPassInterface* leaf = nullptr;
  HloPassFixBase* fixed_point = nullptr;
  std::string path;  // "gpu/optimization/simplification/algsimp"
};

void CollectPlaces(HloPassInterface& pass, const std::string& path, const std::string& innermost,
                   HloPassFixBase* enclosing_fix,
                   std::map<std::pair<std::string, std::string>, std::vector<Place>>& out) {
  if (auto* fix = dynamic_cast<HloPassFixBase*>(&pass)) {
    // The fixed point takes its inner pass's name; a fixed point of a leaf
    // runs as one pass, a fixed point of a pipeline as that pipeline.
    CollectPlaces(fix->inner(), path, innermost, fix, out);
    return;
  }
  if (auto* pipeline = dynamic_cast<HloPassPipeline*>(&pass)) {
    std::string p = path.empty() ? std::string(pipeline->name()) : StrCat(path, "/", pipeline->name());
    for (const auto& child : pipeline->passes()) {
      CollectPlaces(*child, p, SanitizeForFileName(pipeline->name()), nullptr, out);
    }
    return;
  }
  Place place{&pass, enclosing_fix, StrCat(path, "/", pass.name())};
  out[{innermost, SanitizeForFileName(pass.name())}].push_back(place);
}

// Numbers each fused computation's parameters in the order its post order
// first reaches them, and permutes its fusions' operands to match: which
// operand of a fusion comes first is the fusion pass's bookkeeping (XLA's
// and passlab's break ties by the order of the instruction list, which
// parsing a dump changes), not the fusion's structure.
void CanonicalizeFusionParameters(HloModule& module) {
  std::map<HloComputation*, std::vector<HloInstruction*>> callers;
  for (HloComputation* c : module.computations()) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kFusion && !inst->called_computations().empty()) {
        callers[inst->fused_instructions_computation()].push_back(inst);
      }
    }
  }
  for (auto& [fused, fusions] : callers) {
    const int64_t n = fused->num_parameters();
    std::vector<int64_t> order;  // new position -> old parameter number
    std::vector<bool> placed(static_cast<size_t>(n), false);
    for (HloInstruction* inst : fused->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kParameter) continue;
      int64_t k = inst->parameter_number();
      if (k < 0 || k >= n || placed[static_cast<size_t>(k)]) continue;
      placed[static_cast<size_t>(k)] = true;
      order.push_back(k);
    }
    for (int64_t k = 0; k < n; ++k) {
      if (!placed[static_cast<size_t>(k)]) order.push_back(k);
    }
    bool identity = true;
    for (int64_t i = 0; i < n; ++i) identity &= order[static_cast<size_t>(i)] == i;
    if (identity) continue;
    bool operands_match = true;
    for (HloInstruction* f : fusions) operands_match &= f->operand_count() == n;
    if (!operands_match) continue;  // malformed; leave it for the comparison to show
    std::vector<HloInstruction*> params = fused->parameter_instructions();
    for (int64_t i = 0; i < n; ++i) params[static_cast<size_t>(order[static_cast<size_t>(i)])]->set_index(i);
    fused->RebuildParameterList();
    for (HloInstruction* f : fusions) {
      std::vector<HloInstruction*> old(f->operands().begin(), f->operands().end());
      for (int64_t i = 0; i < n; ++i) f->ReplaceOperandWith(i, old[static_cast<size_t>(order[static_cast<size_t>(i)])]);
    }
  }
}

// Renames every computation and instruction by its position and returns the
// computations in that order: the entry, then the computations in the order
// the entry reaches them (instructions in post order), then any unreachable.
// (PrintModule's order follows the module's list of computations, which
// differs between a module a pass built and the same module parsed.)
std::vector<HloComputation*> RenameForStructure(HloModule& module) {
  std::vector<HloComputation*> order;
  std::set<const HloComputation*> seen;
  auto visit = [&](auto&& self, HloComputation* c) -> void {
    if (!seen.insert(c).second) return;
    order.push_back(c);
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      for (HloComputation* callee : inst->called_computations()) {
        if (callee != nullptr) self(self, callee);
      }
    }
  };
  if (module.entry_computation() != nullptr) visit(visit, module.entry_computation());
  // Computations the entry does not reach (left behind by a pass, for DCE to
  // remove) in an order of their own structure, not of the module's list,
  // which a parsed dump and a pass's output keep differently: the roots of
  // the unreachable call graph sorted by their text with every name blanked.
  std::vector<HloComputation*> unreachable;
  std::set<const HloComputation*> called;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (seen.count(c)) continue;
    unreachable.push_back(c);
    for (HloInstruction* inst : c->instructions()) {
      for (HloComputation* callee : inst->called_computations()) called.insert(callee);
    }
  }
  if (!unreachable.empty()) {
    static const std::regex kNames(R"(%[A-Za-z0-9_.\-]+)");
    PrintOptions blank;
    blank.print_metadata = false;
    blank.print_backend_config = false;
    std::vector<std::pair<std::string, HloComputation*>> roots;
    for (HloComputation* c : unreachable) {
      if (called.count(c)) continue;
      std::string text = PrintComputation(*c, blank);
      text = text.substr(std::min(text.size(), text.find(' ')));  // without its own name
      roots.emplace_back(std::regex_replace(text, kNames, "%"), c);
    }
    std::stable_sort(roots.begin(), roots.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, c] : roots) visit(visit, c);
    for (HloComputation* c : unreachable) visit(visit, c);  // a cycle of calls: none in valid HLO
  }
  int64_t next_computation = 0;
  for (HloComputation* c : order) {
    c->SetName(StrCat("c", next_computation++));
    int64_t next = 0;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (inst->opcode() == HloOpcode::kParameter) {
        inst->SetName(StrCat("p", inst->parameter_number()));
      } else {
        inst->SetName(StrCat("i", next++));
      }
    }
  }
  module.set_name("m");
  return order;
}

std::string FirstDifferentLine(const std::string& a, const std::string& b) {
  std::vector<std::string_view> la = SplitAny(a, "\n"), lb = SplitAny(b, "\n");
  size_t n = std::min(la.size(), lb.size());
  for (size_t i = 0; i < n; ++i) {
    if (la[i] == lb[i]) continue;
    // Around the first character that differs: long lines (a fusion with
    // dozens of operands) differ far from their start.
    size_t at = 0;
    while (at < la[i].size() && at < lb[i].size() && la[i][at] == lb[i][at]) ++at;
    size_t from = at > 100 ? at - 100 : 0;
    auto clip = [&](std::string_view line) {
      std::string_view part = line.substr(std::min(from, line.size()), 200);
      return StrCat(from > 0 ? "..." : "", part, from + part.size() < line.size() ? "..." : "");
    };
    return StrCat("line ", i + 1, ", column ", at + 1, ": passlab: '", clip(la[i]), "' | XLA: '", clip(lb[i]), "'");
  }
  return StrCat("passlab has ", la.size(), " lines, XLA ", lb.size());
}

// Runs `place` on `module`; returns passlab's "changed".
absl::StatusOr<bool> RunPlace(const Place& place, HloModule& module, bool to_fixed_point) {
  try {
    if (to_fixed_point && place.fixed_point != nullptr) return place.fixed_point->Run(module);
    return place.leaf->Run(module);
  } catch (const std::exception& e) {
    return absl::InternalError(StrCat("exception: ", e.what()));
  }
}

// "kLoop/add": the fusion's kind and its hero (the root through tuples,
// bitcasts, reshapes and converts).
std::string FusionKey(const HloInstruction& fusion) {
  std::vector<std::string> heroes;
  const HloInstruction* root = fusion.fused_instructions_computation()->root_instruction();
  std::vector<const HloInstruction*> roots;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands()) roots.push_back(op);
  } else {
    roots.push_back(root);
  }
  // The hero, as XLA's FindNonTrivialHero finds it: below an epilogue of
  // elementwise ops, bitcasts and reshapes, the one operand that is itself
  // computed by a non-elementwise op (a reduce under a divide, a transpose
  // under a convert); a root whose operands are all elementwise or leaves
  // is its own hero.
  auto non_trivial = [](const HloInstruction* i) {
    HloOpcode op = i->opcode();
    return !i->IsElementwise() && op != HloOpcode::kParameter && op != HloOpcode::kConstant &&
           op != HloOpcode::kBroadcast && op != HloOpcode::kIota && op != HloOpcode::kBitcast &&
           op != HloOpcode::kReshape;
  };
  std::set<std::string> unique;
  for (const HloInstruction* start : roots) {
    const HloInstruction* r = start;
    const HloInstruction* first_elementwise = nullptr;  // below bitcasts and reshapes
    for (int depth = 0; depth < 64 && !non_trivial(r); ++depth) {
      if (first_elementwise == nullptr && r->IsElementwise()) first_elementwise = r;
      const HloInstruction* next = nullptr;
      for (const HloInstruction* op : r->operands()) {
        if (non_trivial(op) || op->IsElementwise() || op->opcode() == HloOpcode::kBitcast ||
            op->opcode() == HloOpcode::kReshape) {
          if (non_trivial(op)) {
            next = op;
            break;
          }
          if (next == nullptr && op->operand_count() > 0) next = op;
        }
      }
      if (next == nullptr) break;
      r = next;
    }
    if (!non_trivial(r)) r = first_elementwise != nullptr ? first_elementwise : start;
    unique.insert(std::string(HloOpcodeString(r->opcode())));
  }
  return StrCat(FusionKindString(fusion.fusion_kind()), "/", Join(unique, "+"));
}

// XLA's "__cublas$gemm", "__cublas$lt$matmul", "__cudnn$convForward" and
// passlab's "__blas$gemm", "__dnn$convForward" as one name.
std::string LibraryTargetName(std::string_view target) {
  std::string t(target);
  for (std::string_view prefix : {"__cublas$lt$", "__cublas$", "__cudnn$", "__blas$", "__dnn$"}) {
    if (t.rfind(prefix, 0) == 0) {
      t = t.substr(prefix.size());
      if (t == "matmul") t = "gemm";
      return t;
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<DumpPassRun>> FindDumpPassRuns(const std::string& dir, DumpPassFilter filter) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(StrCat(dir, ": not a directory"));
  // module_0001.jit_f.0005.simplification.after_algsimp.before_dce.txt
  static const std::regex kName(R"(^(module_\d+(?:\..*?)?)\.(\d{4,})\.(.+?)\.after_(.+)\.before_(.+)\.txt$)");
  std::map<std::string, std::map<int64_t, DumpFile>> by_module;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    std::string name = e.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kName)) continue;
    DumpFile f{e.path().string(), m[1], std::stoll(m[2]), m[3], m[4], m[5]};
    by_module[f.module][f.step] = std::move(f);
  }
  if (ec) return absl::InternalError(StrCat(dir, ": ", ec.message()));
  if (by_module.empty()) {
    return absl::NotFoundError(StrCat(dir, ": no per-pass dump (module_*.<step>.<pipeline>.after_*.before_*.txt: ",
                                      "dump with --xla_dump_to=DIR --xla_dump_hlo_pass_re=.*)"));
  }
  std::vector<DumpPassRun> runs;
  for (const auto& [module, steps] : by_module) {
    for (auto it = steps.begin(); it != steps.end(); ++it) {
      auto next = std::next(it);
      if (next == steps.end() || next->first != it->first + 1) continue;
      const DumpFile& before = it->second;
      const DumpFile& after = next->second;
      // The pass between the two steps; markers and nested pipelines
      // (whose "after" follows their own passes' dumps) bracket no pass.
      if (before.before == "pipeline-end" || after.after == "pipeline-start") continue;
      if (before.before != after.after) {
        // In a changed-only dump, passes that changed nothing ran between
        // the two; within one pipeline the second's pass saw the first's
        // module. A nested pipeline in between has its own name in its
        // passes' dumps, so the two would not be consecutive.
        if (filter != DumpPassFilter::kChangedOnly || before.pipeline != after.pipeline) continue;
      }
      // The pipeline the pass ran in: XLA labels both files with it; passlab's
      // own dumps label a file with the pipeline of its "before_" pass.
      runs.push_back({module, after.step, before.pipeline, after.after, before.path, after.path});
    }
  }
  return runs;
}

std::string CanonicalStructure(const HloModule& module, bool with_schedule) {
  // Renaming needs a module of our own: print, parse, rename, print.
  std::string text = PrintModule(module);
  ParseOptions po;
  po.infer_shape = InferInstructionShape;
  absl::StatusOr<std::unique_ptr<HloModule>> copy = ParseHloModule(text, "<canonical>", po);
  if (!copy.ok()) return StrCat("<unprintable: ", copy.status().message(), ">");
  if (!with_schedule) (*copy)->set_is_scheduled(false);
  CanonicalizeFusionParameters(**copy);
  std::vector<HloComputation*> order = RenameForStructure(**copy);
  PrintOptions options;
  options.print_metadata = false;
  options.print_backend_config = false;
  // XLA:GPU's library-call targets in passlab's backend-neutral spelling
  // (core/libcall/library_call.h): "__cudnn$convForward" is "__dnn$convForward",
  // "__cublas$gemm" and "__cublas$lt$matmul" are "__blas$gemm".
  for (HloComputation* c : order) {
    for (HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kCustomCall) continue;
      const std::string& target = inst->custom_call_target();
      std::string neutral;
      if (target == "__cublas$gemm" || target == "__cublas$lt$matmul") {
        neutral = "__blas$gemm";
      } else if (target.rfind("__cudnn$", 0) == 0) {
        neutral = StrCat("__dnn$", target.substr(8));
      }
      if (!neutral.empty()) inst->mutable_attrs().custom_call_target = neutral;
    }
  }
  // Without the module's header line (its name and config).
  std::string out;
  for (const HloComputation* c : order) {
    if (c == (*copy)->entry_computation()) out += "ENTRY ";
    out += PrintComputation(*c, options);
    out += "\n";
  }
  return out;
}

std::string_view DumpOutcomeName(DumpOutcome outcome) {
  switch (outcome) {
    case DumpOutcome::kAgrees: return "agrees";
    case DumpOutcome::kDiffers: return "differs";
    case DumpOutcome::kOrderDiffers: return "differs in order only";
    case DumpOutcome::kDeadCodeDiffers: return "differs in dead code only";
    case DumpOutcome::kNotModelled: return "not modelled";
    case DumpOutcome::kInputError: return "input error";
    case DumpOutcome::kPassError: return "pass error";
  }
  return "?";
}

namespace {

// The module's canonical structure after DCE (dead instructions and
// computations nothing calls removed) on a copy.
// `opt --pass-option` settings applied to a named pipeline.
absl::Status ApplyPipelineOptions(HloPassPipeline& pipeline, const std::vector<std::string>& settings) {
  if (settings.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(PassOptionOverrides overrides, ParsePassOptionOverrides(settings));
  return ApplyPassOptions(pipeline, overrides);
}

std::string WithoutDeadCode(const HloModule& module) {
  std::unique_ptr<HloModule> copy = module.Clone();
  absl::StatusOr<bool> ran = HloDCE(HloDceOptions{}).Run(*copy);
  if (!ran.ok()) return StrCat("<dce failed: ", ran.status().message(), ">");
  copy->RemoveUnusedComputations();  // computations nothing calls, which DCE may keep
  return CanonicalStructure(*copy);
}

}  // namespace

absl::StatusOr<std::vector<DumpRunResult>> CheckDumpPassRuns(const std::vector<DumpPassRun>& runs,
                                                             const DumpCheckOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline, BuildNamedPipeline(options.pipeline));
  RETURN_IF_ERROR(ApplyPipelineOptions(*pipeline, options.pass_options));
  std::map<std::pair<std::string, std::string>, std::vector<Place>> places;
  CollectPlaces(*pipeline, "", "", nullptr, places);
  std::set<std::string> wanted(options.passes.begin(), options.passes.end());
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> seen;  // module, pipeline, pass
  std::vector<DumpRunResult> results;
  for (const DumpPassRun& run : runs) {
    if (!wanted.empty() && !wanted.count(run.pass)) continue;
    DumpRunResult r;
    r.run = run;
    int64_t k = seen[{run.module, run.pipeline, run.pass}]++;
    // XLA's file names carry sanitized names ("layout_assignment").
    auto it = places.find({SanitizeForFileName(run.pipeline), SanitizeForFileName(run.pass)});
    if (it == places.end()) {
      r.outcome = DumpOutcome::kNotModelled;
      r.detail = StrCat("passlab's '", options.pipeline, "' pipeline runs no '", run.pass, "' in a '", run.pipeline,
                        "' pipeline");
      results.push_back(std::move(r));
      continue;
    }
    // The k-th run of a pass in a pipeline of that name is the k-th place
    // (a fixed point or a repeated sub-pipeline cycles through them).
    const Place& place = it->second[static_cast<size_t>(k) % it->second.size()];
    r.passlab_place = place.path;
    absl::StatusOr<std::unique_ptr<HloModule>> before = ReadModule(run.before_file);
    absl::StatusOr<std::unique_ptr<HloModule>> after = ReadModule(run.after_file);
    if (!before.ok() || !after.ok()) {
      r.outcome = DumpOutcome::kInputError;
      r.detail = std::string((!before.ok() ? before.status() : after.status()).message());
      results.push_back(std::move(r));
      continue;
    }
    std::string want = CanonicalStructure(**after);
    r.xla_changed = CanonicalStructure(**before) != want;
    absl::StatusOr<bool> changed = RunPlace(place, **before, /*to_fixed_point=*/false);
    if (!changed.ok()) {
      r.outcome = DumpOutcome::kPassError;
      r.detail = std::string(changed.status().message());
      results.push_back(std::move(r));
      continue;
    }
    r.passlab_changed = *changed;
    std::string got = CanonicalStructure(**before);
    if (got != want && place.fixed_point != nullptr && *changed) {
      // passlab's own dumps record every iteration of a fixed point, XLA's
      // the fixed point as a whole: the result of either counts.
      absl::StatusOr<bool> more = RunPlace(place, **before, /*to_fixed_point=*/true);
      if (more.ok()) got = CanonicalStructure(**before);
    }
    if (got == want) {
      r.outcome = DumpOutcome::kAgrees;
    } else if (CanonicalStructure(**before, false) == CanonicalStructure(**after, false)) {
      r.outcome = DumpOutcome::kOrderDiffers;
      r.detail = StrCat("the same instructions in another order: ", FirstDifferentLine(got, want));
    } else if (WithoutDeadCode(**before) == WithoutDeadCode(**after)) {
      r.outcome = DumpOutcome::kDeadCodeDiffers;
      r.detail = StrCat("the same once dead code is removed: ", FirstDifferentLine(got, want));
    } else {
      r.outcome = DumpOutcome::kDiffers;
      r.detail = FirstDifferentLine(got, want);
    }
    results.push_back(std::move(r));
  }
  return results;
}

std::map<std::string, DumpPassTally> TallyDumpRuns(const std::vector<DumpRunResult>& results) {
  std::map<std::string, DumpPassTally> out;
  for (const DumpRunResult& r : results) {
    DumpPassTally& t = out[r.run.pass];
    ++t.runs;
    if (r.xla_changed) ++t.xla_changed;
    switch (r.outcome) {
      case DumpOutcome::kAgrees: ++t.agrees; break;
      case DumpOutcome::kDiffers: ++t.differs; break;
      case DumpOutcome::kOrderDiffers: ++t.order_differs; break;
      case DumpOutcome::kDeadCodeDiffers: ++t.dead_code_differs; break;
      case DumpOutcome::kNotModelled: ++t.not_modelled; break;
      case DumpOutcome::kInputError:
      case DumpOutcome::kPassError: ++t.errors; break;
    }
  }
  return out;
}

FusionCensus TakeFusionCensus(const HloModule& module) {
  FusionCensus census;
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return census;
  // The entry and what it calls as control flow (while bodies, branches),
  // not the fused computations.
  std::vector<const HloComputation*> todo = {entry};
  std::set<const HloComputation*> seen = {entry};
  while (!todo.empty()) {
    const HloComputation* c = todo.back();
    todo.pop_back();
    for (const HloInstruction* inst : c->MakeInstructionPostOrder()) {
      if (c == entry) ++census.entry_instructions;
      if (inst->opcode() == HloOpcode::kFusion) {
        ++census.fusions;
        ++census.by_kind_hero[FusionKey(*inst)];
        continue;
      }
      if (inst->opcode() == HloOpcode::kCustomCall) {
        std::string t = LibraryTargetName(inst->custom_call_target());
        if (!t.empty()) {
          ++census.library_calls;
          ++census.library_by_target[t];
        }
      }
      for (const HloComputation* callee : inst->called_computations()) {
        if (callee != nullptr && seen.insert(callee).second) todo.push_back(callee);
      }
    }
  }
  return census;
}

absl::StatusOr<std::vector<FinalFusionComparison>> CompareFinalFusions(const std::string& dir,
                                                                      const std::string& pipeline_name,
                                                                      const std::vector<std::string>& pass_options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(StrCat(dir, ": not a directory"));
  // module_0001.jit_f.before_optimizations.txt; XLA:GPU names the final
  // module with its target: module_0001.jit_f.sm_9.0a_gpu_after_optimizations.txt.
  static const std::regex kName(R"(^(module_\d+(?:\.[^.]+)?)\.(?:.*_)?(before|after)_optimizations\.txt$)");
  std::map<std::string, std::pair<std::string, std::string>> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, kName)) continue;
    (m[2] == "before" ? files[m[1]].first : files[m[1]].second) = e.path().string();
  }
  std::vector<FinalFusionComparison> out;
  for (const auto& [module, pair] : files) {
    if (pair.first.empty() || pair.second.empty()) continue;
    ASSIGN_OR_RETURN(std::unique_ptr<HloModule> before, ReadModule(pair.first));
    ASSIGN_OR_RETURN(std::unique_ptr<HloModule> after, ReadModule(pair.second));
    ASSIGN_OR_RETURN(std::unique_ptr<HloPassPipeline> pipeline, BuildNamedPipeline(pipeline_name));
    RETURN_IF_ERROR(ApplyPipelineOptions(*pipeline, pass_options));
    absl::StatusOr<bool> ran = pipeline->Run(*before);
    if (!ran.ok()) return absl::InternalError(StrCat(pair.first, ": passlab's pipeline: ", ran.status().message()));
    out.push_back({module, TakeFusionCensus(*after), TakeFusionCensus(*before)});
  }
  return out;
}

}  // namespace passlab::conformance
