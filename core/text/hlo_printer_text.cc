#include "core/text/hlo_printer_internal.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

namespace passlab {
namespace text_internal {
namespace {

// Constants above this many elements are fingerprinted by their bytes, not
// their text (the canonical text of a 10^6-element constant is megabytes).
constexpr int64_t kMaxPrintedConstantElements = 64;

// One helper thread per process that takes half of a snapshot's work (see
// PrintMissingLines and Printer::Chunks). Started on first use; a forked
// child (the ablation runner's workers) starts its own, since fork copies
// only the calling thread. A caller that finds it busy (another thread
// printing a snapshot), or finds none (no thread could be started), prints
// alone.
class LineHelper {
 public:
  static LineHelper* Get() {
    static std::mutex mu;
    static LineHelper* helper = nullptr;
    static pid_t failed_in = 0;  // the process where starting one failed
    std::lock_guard<std::mutex> lock(mu);
    const pid_t pid = getpid();
    if ((helper == nullptr || helper->pid_ != pid) && failed_in != pid) {
      try {
        helper = new LineHelper();  // a parent's helper is left behind in a child
      } catch (const std::system_error&) {
        helper = nullptr;
        failed_in = pid;
      }
    }
    return helper != nullptr && helper->pid_ == pid ? helper : nullptr;
  }

  // Offers `job` to the helper thread and runs it on the caller's too; jobs
  // share their work through claims, so the caller's run alone finishes it.
  // Returns when the caller's run is done and the helper's, if it took the
  // job, is too: a helper that was not scheduled in time (a loaded machine)
  // never starts, and nothing waits for it. False (nothing run) when the
  // helper is busy or there is none.
  static bool RunBeside(const std::function<void()>& job) {
    LineHelper* helper = Get();
    return helper != nullptr && helper->Run(job);
  }

 private:
  bool Run(const std::function<void()>& job) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      taken_ = false;
      done_ = false;
    }
    cv_.notify_one();
    job();
    std::unique_lock<std::mutex> lock(mu_);
    if (taken_) cv_.wait(lock, [&] { return done_; });
    job_ = nullptr;  // withdrawn if not taken
    return true;
  }

  LineHelper() : pid_(getpid()), thread_([this] { Loop(); }) { thread_.detach(); }

  void Loop() {
    for (;;) {
      const std::function<void()>* job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return job_ != nullptr && !taken_; });
        taken_ = true;
        job = job_;
      }
      (*job)();
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = true;
      }
      cv_.notify_all();
    }
  }

  const pid_t pid_;
  std::mutex busy_;  // one RunBeside at a time
  std::mutex mu_;
  std::condition_variable cv_;
  const std::function<void()>* job_ = nullptr;  // offered
  bool taken_ = false;                           // by the helper
  bool done_ = true;                             // the helper's run
  std::thread thread_;
};

// Below this many instructions in the changed computations a snapshot
// prints alone: waking the helper costs more than it saves.
constexpr int64_t kInstructionsForHelper = 512;

}  // namespace

// chunks_: each computation's text, in order. When several changed, the
// helper thread builds some of them with a second printer: computations
// are independent (each writes only its own instructions' lines and its
// own text cache; the previous text and the sugar are only read).
void Printer::Chunks(const std::vector<const HloComputation*>& computations) {
  chunks_.resize(computations.size());
  int64_t changed = 0, instructions = 0;
  for (const HloComputation* c : computations) {
    if (TextCacheValid(*c)) continue;
    ++changed;
    instructions += c->instruction_count();
  }
  std::atomic<size_t> next{0};
  auto build = [&](Printer& printer) {
    for (;;) {
      const size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= computations.size()) return;
      chunks_[i] = printer.ComputationChunk(*computations[i]);
    }
  };
  if (changed >= 2 && instructions >= kInstructionsForHelper && std::thread::hardware_concurrency() >= 2) {
    Printer other(options_);
    other.collect_chunks_ = true;
    other.previous_ = previous_;
    other.sugared_ = sugared_;
    other.module_context_ = module_context_;
    // Each thread builds with its own printer; `other` is the helper's.
    const std::thread::id caller = std::this_thread::get_id();
    const std::function<void()> job = [&] { build(std::this_thread::get_id() == caller ? *this : other); };
    if (LineHelper::RunBeside(job)) {
      lines_printed_ += other.lines_printed_;
      return;
    }
  }
  build(*this);
}

// The computation's canonical text: its cache when still valid, else
// built (segments of the previous text reused where every line still
// matches, new lines printed) and cached, unless an async op in it prints
// differently in different modules (the sugar).
std::shared_ptr<const ComputationText> Printer::ComputationChunk(const HloComputation& c) {
  using Segment = ComputationText::Segment;
  const bool entry = c.IsEntryComputation();
  if (TextCacheValid(c)) return c.text_cache();
  auto chunk = std::make_shared<ComputationText>();
  chunk->computation = &c;
  chunk->entry = entry;
  ComputationFooter(c);
  out_ += "\n";
  chunk->footer = std::move(out_);
  out_.clear();
  // The previous text's segments, by their first instruction.
  absl::flat_hash_map<const HloInstruction*, const std::shared_ptr<const Segment>*> reusable;
  const auto previous = previous_.find(&c);
  if (previous != previous_.end()) {
    reusable.reserve(previous->second->segments.size());
    for (const std::shared_ptr<const Segment>& seg : previous->second->segments) {
      if (seg->reusable) reusable.emplace(seg->pieces.front().instruction, &seg);
    }
  }
  bool has_async = false;
  const std::vector<HloInstruction*>& order = c.InstructionPostOrder();
  std::shared_ptr<Segment> fresh;
  std::vector<uint64_t> fresh_hashes;
  auto close_fresh = [&] {
    if (fresh == nullptr) return;
    fresh->hashes = std::move(fresh_hashes);
    chunk->segments.push_back(std::move(fresh));
    fresh = nullptr;
    fresh_hashes.clear();
  };
  constexpr uint64_t kCut = (uint64_t{1} << ComputationText::kSegmentBits) - 1;
  for (size_t i = 0; i < order.size();) {
    if (fresh == nullptr) {
      // At a segment start: the previous text's segment here, if all its
      // lines are still these instructions' lines, in this order.
      if (auto it = reusable.find(order[i]); it != reusable.end()) {
        const std::shared_ptr<const Segment>& seg = *it->second;
        const std::vector<ComputationText::Piece>& pieces = seg->pieces;
        bool same = i + pieces.size() <= order.size();
        for (size_t k = 0; same && k < pieces.size(); ++k) {
          const HloInstruction* inst = order[i + k];
          same = pieces[k].instruction == inst && pieces[k].text.get() == inst->cached_line() &&
                 pieces[k].root == inst->IsRoot();
        }
        if (same) {
          chunk->segments.push_back(seg);
          i += pieces.size();
          continue;
        }
      }
      fresh = std::make_shared<Segment>();
    }
    const HloInstruction& inst = *order[i++];
    uint64_t hash;
    if (canonical_ && !IsAsync(inst.opcode())) {
      if (inst.shared_cached_line() == nullptr) ++lines_printed_;
      std::shared_ptr<const std::string> line = SharedLine(inst);
      hash = InstructionFingerprint(inst);
      if (inst.IsRoot()) fresh_hashes.push_back(0x526f6f74ULL);  // "Root"
      fresh_hashes.push_back(hash);
      fresh->size += line->size() + (inst.IsRoot() ? 8 : 3);
      fresh->pieces.push_back({std::move(line), &inst, true, inst.IsRoot()});
    } else {
      // Async ops: raw text, as Computation prints them.
      has_async = true;
      out_ += "  ";
      Instruction(inst);
      out_ += "\n";
      hash = XXH3_64bits(out_.data(), out_.size());
      fresh_hashes.push_back(hash);
      fresh->size += out_.size();
      fresh->reusable = false;
      fresh->pieces.push_back({std::make_shared<const std::string>(std::move(out_)), nullptr, false, false});
      out_.clear();
    }
    if ((hash & kCut) == kCut) close_fresh();
  }
  close_fresh();
  // The previous text's header while still right (checked now that every
  // line is cached), else a new one.
  if (previous != previous_.end() && HeaderStillRight(*previous->second->header, c)) {
    chunk->header = previous->second->header;
  } else {
    chunk->header = NewHeader(c);
  }
  // One hash over the header's, every line's and the footer's, however
  // the lines fall into segments.
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  XXH3_64bits_update(state.get(), &chunk->header->hash, sizeof(uint64_t));
  chunk->size = chunk->header->text.size() + chunk->footer.size();
  for (const std::shared_ptr<const Segment>& seg : chunk->segments) {
    XXH3_64bits_update(state.get(), seg->hashes.data(), seg->hashes.size() * sizeof(uint64_t));
    chunk->size += seg->size;
  }
  const uint64_t footer_hash = XXH3_64bits(chunk->footer.data(), chunk->footer.size());
  XXH3_64bits_update(state.get(), &footer_hash, sizeof(uint64_t));
  chunk->hash = XXH3_64bits_digest(state.get());
  if (!has_async) c.set_text_cache(chunk);
  return chunk;
}

// A computation's header for ComputationText, with what it was printed
// from (the lines of its parameters and root are cached by now).
std::shared_ptr<const ComputationText::Header> Printer::NewHeader(const HloComputation& c) {
  auto header = std::make_shared<ComputationText::Header>();
  out_ += "\n";
  ComputationHeader(c);
  header->text = std::move(out_);
  out_.clear();
  header->hash = XXH3_64bits(header->text.data(), header->text.size());
  header->name = c.name();
  header->entry = c.IsEntryComputation();
  header->parameter_lines.reserve(c.num_parameters());
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    header->parameter_lines.push_back(c.parameter_instruction(i)->shared_cached_line());
  }
  if (const HloInstruction* root = c.root_instruction()) {
    header->root = root;
    header->root_line = root->shared_cached_line();
    header->root_shape = root->shape();
  }
  if (header->entry) {
    // ProgramShape::ToString of the entry's parameters and root.
    out_ += '(';
    for (int64_t i = 0; i < c.num_parameters(); ++i) {
      if (i > 0) out_ += ", ";
      c.parameter_instruction(i)->shape().AppendTo(out_);
    }
    out_ += ")->";
    (header->root_shape.has_value() ? *header->root_shape : Shape()).AppendTo(out_);
    header->entry_layout = std::move(out_);
    out_.clear();
  }
  return header;
}
// Whether `header` is what ComputationHeader prints for `c` now: the same
// name, entry flag, parameters (their lines: names and shapes) and root
// shape (layouts included, though the header leaves them out).
bool Printer::HeaderStillRight(const ComputationText::Header& header, const HloComputation& c) {
  if (header.name != c.name() || header.entry != c.IsEntryComputation() ||
      static_cast<int64_t>(header.parameter_lines.size()) != c.num_parameters()) {
    return false;
  }
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    const HloInstruction* p = c.parameter_instruction(i);
    if (p == nullptr || header.parameter_lines[i] == nullptr ||
        p->shared_cached_line() != header.parameter_lines[i]) {
      return false;
    }
  }
  const HloInstruction* root = c.root_instruction();
  if (root == nullptr) return !header.root_shape.has_value();
  if (!header.root_shape.has_value()) return false;
  if (root == header.root && header.root_line != nullptr && root->shared_cached_line() == header.root_line) {
    return true;  // the same line: the same shape
  }
  return root->shape() == *header.root_shape;
}

// The walk behind PrintModuleText (and CanonicalTextFingerprint): the
// module line, then each computation's text (ComputationChunk), reusing
// segments of `previous`.
void Printer::CollectChunks(const ModuleText* previous) {
  collect_chunks_ = true;
  if (previous == nullptr) return;
  for (const std::shared_ptr<const ComputationText>& c : previous->computations()) previous_.emplace(c->computation, c.get());
}

uint64_t InstructionFingerprintUncached(const HloInstruction& inst) {
  if (inst.has_literal() && inst.literal().shape().IsArray() &&
      inst.literal().element_count() > kMaxPrintedConstantElements) {
    PrintOptions options;
    options.max_constant_elements = 0;
    const std::string text = PrintInstruction(inst, options);
    const Literal& literal = inst.literal();
    const uint64_t hashes[2] = {XXH3_64bits(text.data(), text.size()),
                                XXH3_64bits(literal.untyped_data(), static_cast<size_t>(literal.size_bytes()))};
    return XXH3_64bits(hashes, sizeof(hashes));
  }
  if (const std::string* line = CanonicalInstructionLine(inst)) return XXH3_64bits(line->data(), line->size());
  PrintOptions options;
  options.syntax_sugar_async_ops = false;
  const std::string text = PrintInstruction(inst, options);
  return XXH3_64bits(text.data(), text.size());
}

namespace {

// Prepares a snapshot's walk on two threads: one finds the instructions of
// the changed computations whose canonical line is missing (new or changed
// since the last snapshot) while the other computes those computations'
// post orders (claimed one by one, largest first); both then print the lines
// found, in batches claimed from a shared counter, so that the walk that
// follows finds every line cached. Each line and fingerprint is written to
// its own instruction by one thread; the module is otherwise only read (a
// post order's marks and vectors belong to the thread that computes it).
// Returns how many lines were printed (none when the changed computations
// are too small to share).
int64_t PrintMissingLines(const HloModule& module) {
  std::vector<const HloComputation*> changed;
  int64_t instructions = 0;
  for (const HloComputation* c : module.computations()) {
    if (Printer::TextCacheValid(*c)) continue;
    changed.push_back(c);
    instructions += c->instruction_count();
  }
  if (instructions < kInstructionsForHelper || std::thread::hardware_concurrency() < 2) return 0;
  std::vector<const HloInstruction*> missing;
  missing.reserve(static_cast<size_t>(instructions));
  std::atomic<bool> scanned{false};  // `missing` is complete
  std::atomic<size_t> next{0};       // missing[0, next) are claimed
  constexpr size_t kBatch = 16;
  auto print_missing = [&] {
    // Each line is printed by one thread, so an operand's line may be in
    // the making on the other: printed without reading it.
    const PrintOptions options;
    Printer printer(options);
    printer.set_operand_lines(false);
    for (;;) {
      const size_t begin = next.fetch_add(kBatch, std::memory_order_relaxed);
      if (begin >= missing.size()) return;
      const size_t end = std::min(missing.size(), begin + kBatch);
      for (size_t i = begin; i < end; ++i) {
        if (!Printer::IsAsync(missing[i]->opcode())) printer.SharedLine(*missing[i]);
        Printer::InstructionFingerprint(*missing[i]);
      }
    }
  };
  // The post orders, largest computation first, claimed by either thread
  // (different computations' walks touch different instructions).
  std::sort(changed.begin(), changed.end(), [](const HloComputation* a, const HloComputation* b) {
    return a->instruction_count() > b->instruction_count();
  });
  std::atomic<size_t> next_order{0};
  auto post_orders = [&] {
    for (;;) {
      const size_t i = next_order.fetch_add(1, std::memory_order_relaxed);
      if (i >= changed.size()) return;
      changed[i]->InstructionPostOrder();
    }
  };
  // The scan goes to whichever thread comes first; the post orders and the
  // lines to whoever claims them.
  std::atomic<bool> scan_claimed{false};
  const std::function<void()> job = [&] {
    if (!scan_claimed.exchange(true, std::memory_order_relaxed)) {
      for (const HloComputation* c : changed) {
        c->ForEachInstruction([&](const HloInstruction* inst) {
          if (inst->shared_cached_line() == nullptr && !Printer::IsAsync(inst->opcode())) missing.push_back(inst);
        });
      }
      scanned.store(true, std::memory_order_release);
      scanned.notify_all();
    }
    post_orders();
    scanned.wait(false, std::memory_order_acquire);  // blocks rather than spins
    print_missing();
  };
  if (!LineHelper::RunBeside(job)) job();
  return static_cast<int64_t>(missing.size());
}

}  // namespace
}  // namespace text_internal

using text_internal::Printer;

void ComputationText::AppendTo(std::string& out) const {
  out += header->text;
  for (const std::shared_ptr<const Segment>& seg : segments) {
    for (const Piece& p : seg->pieces) {
      if (p.line) out += p.root ? "  ROOT " : "  ";
      out += *p.text;
      if (p.line) out += '\n';
    }
  }
  out += footer;
}

const std::string& ModuleText::str() const {
  std::call_once(joined_once_, [this] {
    joined_.reserve(size_);
    joined_ += header_;
    for (const std::shared_ptr<const ComputationText>& c : computations_) c->AppendTo(joined_);
  });
  return joined_;
}

std::shared_ptr<const ModuleText> PrintModuleText(const HloModule& module, const ModuleText* previous) {
  const int64_t printed_beside = text_internal::PrintMissingLines(module);
  auto text = std::make_shared<ModuleText>();
  const PrintOptions options;
  Printer p(options);
  p.CollectChunks(previous);
  p.Module(module);
  text->lines_printed_ = printed_beside + p.lines_printed();
  text->header_ = std::move(p.header());
  text->computations_ = std::move(p.chunks());
  std::vector<uint64_t> hashes;
  hashes.reserve(text->computations_.size() + 1);
  hashes.push_back(XXH3_64bits(text->header_.data(), text->header_.size()));
  text->size_ = text->header_.size();
  for (const std::shared_ptr<const ComputationText>& c : text->computations_) {
    hashes.push_back(c->hash);
    text->size_ += c->size;
  }
  text->fingerprint_ = XXH3_64bits(hashes.data(), hashes.size() * sizeof(uint64_t));
  return text;
}

uint64_t CanonicalTextFingerprint(const HloModule& module) { return PrintModuleText(module)->fingerprint(); }

}  // namespace passlab
