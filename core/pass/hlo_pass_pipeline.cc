#include "core/pass/hlo_pass_pipeline.h"

#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <xxhash.h>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"

namespace passlab {

std::string PassRunContext::Path() const { return Join(path, "/"); }

void PassRunContext::Remember(const HloModule& module) {
  const uint64_t generation = IrGeneration();
  if (last_text == nullptr || last_text_generation != generation) {
    // One walk for the text and its fingerprint, reusing what the last
    // text shares with this state (unchanged computations and segments).
    const auto start = std::chrono::steady_clock::now();
    last_text = PrintModuleText(module, last_text.get());
    last_text_generation = generation;
    module.set_cached_fingerprint(generation, last_text->fingerprint());
    ++stats.texts;
    stats.lines_printed += last_text->lines_printed();
    stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  last_fingerprint = last_text->fingerprint();
  have_last = true;
}

absl::StatusOr<bool> HloPassInterface::Run(HloModule& module, PassRunContext* context) {
  return RunImpl(module, context);
}

void HloPassInterface::EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                                            std::vector<PassOccurrence>& out) {
  PassOccurrence occ;
  occ.id = static_cast<int64_t>(out.size());
  occ.pipeline_path = path;
  occ.pass_name = std::string(name());
  occ.in_fixed_point = in_fixed_point;
  occ.occurrence_index = 0;
  for (const PassOccurrence& o : out) {
    if (o.pass_name == occ.pass_name) ++occ.occurrence_index;
  }
  occurrence_id_ = occ.id;
  out.push_back(std::move(occ));
}

void HloPassInterface::BumpCounter(std::string_view counter, int64_t amount) {
  if (counters_ != nullptr) (*counters_)[std::string(counter)] += amount;
}

absl::StatusOr<bool> HloComputationPass::RunImpl(HloModule& module, PassRunContext* context) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    ASSIGN_OR_RETURN(bool r, RunOnComputation(*c));
    changed |= r;
  }
  return changed;
}

void HloPassPipeline::CheckNotFrozen() const {
  if (frozen_) {
    std::fprintf(stderr, "internal error: pipeline '%s' changed after it was run\n", name_.c_str());
    std::abort();
  }
}

void HloPassPipeline::EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                                           std::vector<PassOccurrence>& out) {
  std::string mine = path.empty() ? name_ : StrCat(path, "/", name_);
  int64_t index = 0;
  for (auto& pass : passes_) {
    size_t before = out.size();
    pass->EnumerateOccurrences(mine, in_fixed_point, out);
    for (size_t i = before; i < out.size(); ++i) {
      if (out[i].pipeline_path == mine) out[i].index_in_pipeline = index;
    }
    ++index;
  }
}

namespace {

// Replaces `slot` (a leaf) or the leaves below it (a pipeline or fixed point).
int64_t ReplaceIn(std::unique_ptr<HloPassInterface>& slot, const HloPassPipeline::LeafFactory& make) {
  if (auto* pipeline = dynamic_cast<HloPassPipeline*>(slot.get())) return pipeline->ReplaceLeaves(make);
  if (auto* fix = dynamic_cast<HloPassFixBase*>(slot.get())) return ReplaceIn(fix->mutable_inner(), make);
  std::unique_ptr<HloPassInterface> replacement = make(*slot);
  if (replacement == nullptr) return 0;
  slot = std::move(replacement);
  return 1;
}

}  // namespace

int64_t HloPassPipeline::RemovePasses(const std::function<bool(const HloPassInterface&)>& remove) {
  CheckNotFrozen();
  int64_t n = 0;
  std::vector<std::unique_ptr<HloPassInterface>> kept;
  for (auto& pass : passes_) {
    HloPassInterface* inner = pass.get();
    if (auto* fix = dynamic_cast<HloPassFixBase*>(inner)) inner = &fix->inner();
    if (remove(*pass) || remove(*inner)) {
      ++n;
      continue;
    }
    if (auto* pipeline = dynamic_cast<HloPassPipeline*>(inner)) n += pipeline->RemovePasses(remove);
    kept.push_back(std::move(pass));
  }
  passes_ = std::move(kept);
  return n;
}

int64_t HloPassPipeline::ReplaceLeaves(const LeafFactory& make) {
  CheckNotFrozen();
  int64_t n = 0;
  for (auto& pass : passes_) n += ReplaceIn(pass, make);
  return n;
}

void HloPassPipeline::Freeze() {
  if (frozen_) return;
  frozen_ = true;
  occurrences_.clear();
  // The outermost pipeline's name is the root of every path.
  std::string root = name_;
  int64_t index = 0;
  for (auto& pass : passes_) {
    size_t before = occurrences_.size();
    pass->EnumerateOccurrences(root, false, occurrences_);
    for (size_t i = before; i < occurrences_.size(); ++i) {
      if (occurrences_[i].pipeline_path == root) occurrences_[i].index_in_pipeline = index;
    }
    ++index;
  }
}

const std::vector<PassOccurrence>& HloPassPipeline::Occurrences() {
  Freeze();
  return occurrences_;
}

absl::StatusOr<bool> HloPassPipeline::RunImpl(HloModule& module, PassRunContext* context) {
  if (context == nullptr) {
    // The outermost pipeline owns the run.
    Freeze();
    PassRunContext root;
    root.observers = observers_;
    root.options = options_;
    root.path = {name_};
    for (PassObserver* o : observers_) root.want_text |= o->WantsModuleText();
    for (const PassOccurrence& o : occurrences_) root.occurrence_by_id.push_back(&o);
    bool changed = false;
    for (auto& pass : passes_) {
      absl::StatusOr<bool> r = RunChild(*pass, module, root, invariant_checkers_);
      last_run_stats_ = root.stats;
      if (!r.ok()) return r.status();
      changed |= *r;
    }
    return changed;
  }
  frozen_ = true;
  context->path.push_back(name_);
  bool changed = false;
  for (auto& pass : passes_) {
    absl::StatusOr<bool> r = RunChild(*pass, module, *context, invariant_checkers_);
    if (!r.ok()) {
      context->path.pop_back();
      return r.status();
    }
    changed |= *r;
  }
  context->path.pop_back();
  return changed;
}

absl::StatusOr<bool> HloPassPipeline::RunChild(
    HloPassInterface& pass, HloModule& module, PassRunContext& context,
    const std::vector<std::unique_ptr<HloPassInterface>>& checkers) {
  if (pass.IsPipeline()) return pass.Run(module, &context);
  return RunLeaf(pass, module, context, checkers);
}

absl::StatusOr<bool> HloPassPipeline::RunLeaf(
    HloPassInterface& pass, HloModule& module, PassRunContext& context,
    const std::vector<std::unique_ptr<HloPassInterface>>& checkers) {
  PassRunInfo info;
  info.occurrence_id = pass.occurrence_id_;
  info.pipeline_path = context.Path();
  info.pass_name = std::string(pass.name());
  if (pass.occurrence_id_ >= 0 &&
      pass.occurrence_id_ < static_cast<int64_t>(context.occurrence_by_id.size())) {
    info.occurrence_index = context.occurrence_by_id[pass.occurrence_id_]->occurrence_index;
  }
  info.iteration = context.iteration;
  info.run_index = context.run_index++;
  for (PassObserver* o : context.observers) {
    if (!o->ShouldRun(info)) {
      for (PassObserver* s : context.observers) s->PassSkipped(info);
      return false;
    }
  }
  const bool instrument = context.options.instrument;
  uint64_t before = 0;
  if (instrument) {
    if (!context.have_last) context.Remember(module);
    before = context.last_fingerprint;
  }
  for (PassObserver* o : context.observers) {
    RETURN_IF_ERROR(o->BeforePass(info, module));
  }
  PassCounters counters;
  pass.counters_ = &counters;
  const auto run_start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> result = pass.Run(module, &context);
  info.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  pass.counters_ = nullptr;
  if (!result.ok()) {
    context.have_last = false;
    context.last_text = nullptr;
    for (PassObserver* o : context.observers) o->PassFailed(info, module, result.status());
    return absl::Status(result.status().code(),
                        StrCat("pass '", info.pass_name, "' (@", info.occurrence_id, " in ",
                               info.pipeline_path, ") failed: ", result.status().message()));
  }
  bool changed = *result;
  uint64_t after = changed ? 1 : 0;
  if (instrument) {
    context.Remember(module);
    after = context.last_fingerprint;
    if (context.want_text) info.text_after = context.last_text;
  }
  if (instrument && changed != (before != after)) {
    ++context.changed_audit_failures;
    if (context.options.audit_changed) {
      absl::Status s = absl::InternalError(StrCat(
          "pass '", info.pass_name, "' (@", info.occurrence_id, ") reported changed=",
          changed ? "true" : "false", " but the module ", before != after ? "changed" : "did not change",
          " (fingerprint ", before, " -> ", after, ")"));
      for (PassObserver* o : context.observers) o->PassFailed(info, module, s);
      return s;
    }
  }
  for (PassObserver* o : context.observers) {
    if (absl::Status s = o->AfterPass(info, module, changed, before, after, counters); !s.ok()) {
      return s;
    }
  }
  if (before != after) {
    for (const auto& checker : checkers) {
      absl::StatusOr<bool> r = checker->Run(module, nullptr);
      if (!r.ok()) {
        return absl::Status(r.status().code(), StrCat("invariant checker '", checker->name(),
                                                      "' failed after pass '", info.pass_name,
                                                      "': ", r.status().message()));
      }
      if (*r) {
        return absl::InternalError(StrCat("invariant checker '", checker->name(),
                                          "' changed the module"));
      }
    }
  }
  return before != after;
}

void HloPassFixBase::EnumerateOccurrences(const std::string& path, bool in_fixed_point,
                                          std::vector<PassOccurrence>& out) {
  inner_->EnumerateOccurrences(path, true, out);
}

absl::StatusOr<bool> HloPassFixBase::RunImpl(HloModule& module, PassRunContext* context) {
  PassRunContext local;
  if (context == nullptr) context = &local;
  int64_t saved_iteration = context->iteration;
  const bool instrument = context->options.instrument;
  absl::flat_hash_set<uint64_t> seen;
  if (instrument) {
    if (!context->have_last) context->Remember(module);
    seen.insert(context->last_fingerprint);
  }
  bool changed = false;
  bool hit_limit = true;
  bool cycled = false;
  int64_t iterations = 0;
  std::vector<std::unique_ptr<HloPassInterface>> no_checkers;
  for (int64_t i = 0; i < iteration_limit_; ++i) {
    context->iteration = i;
    ++iterations;
    absl::StatusOr<bool> r = HloPassPipeline::RunChild(*inner_, module, *context, no_checkers);
    if (!r.ok()) {
      context->iteration = saved_iteration;
      return r.status();
    }
    if (!*r) {
      hit_limit = false;
      break;
    }
    changed = true;
    if (instrument && context->have_last && !seen.insert(context->last_fingerprint).second) {
      // The module returned to an earlier state: iterating further would loop.
      cycled = true;
      hit_limit = false;
      break;
    }
  }
  context->iteration = saved_iteration;
  std::string path = context->path.empty() ? std::string(name()) : StrCat(context->Path(), "/", name());
  for (PassObserver* o : context->observers) o->FixedPointFinished(path, iterations, hit_limit, cycled);
  return changed;
}

}  // namespace passlab
