#include "core/text/hlo_printer.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <system_error>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/attribute_append.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// Constants above this many elements are fingerprinted by their bytes, not
// their text (the canonical text of a 10^6-element constant is megabytes).
constexpr int64_t kMaxPrintedConstantElements = 64;

uint64_t InstructionFingerprintUncached(const HloInstruction& inst);

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

class Printer {
 public:
  explicit Printer(const PrintOptions& options) : options_(options), canonical_(Canonical()) {}

  std::string& out() { return out_; }

  void Name(std::string_view name) {
    if (options_.print_percent) out_ += '%';
    out_ += name;
  }

  // The module: its line, then each computation (callees first). Collecting
  // chunks (PrintModuleText), the computations come first, so that the
  // module line can take the entry's layout from the entry's header.
  void Module(const HloModule& module) {
    FindSugaredComputations(module);
    if (collect_chunks_) {
      std::vector<const HloComputation*> computations;
      for (HloComputation* c : module.MakeComputationPostOrder()) {
        if (!sugared_.contains(c)) computations.push_back(c);
      }
      Chunks(computations);
      const ComputationText* entry = nullptr;
      for (size_t i = 0; i < computations.size(); ++i) {
        if (computations[i] == module.entry_computation()) entry = chunks_[i].get();
      }
      ModuleLine(module, entry);
      header_ = std::move(out_);
      out_.clear();
      return;
    }
    ModuleLine(module, nullptr);
    for (HloComputation* c : module.MakeComputationPostOrder()) {
      if (sugared_.contains(c)) continue;
      out_ += "\n";
      Computation(*c);
      out_ += "\n";
    }
  }

  // "HloModule name, attributes...\n". `entry`: the entry computation's
  // text, whose header knows the entry computation layout.
  void ModuleLine(const HloModule& module, const ComputationText* entry) {
    const HloModuleConfig& config = module.config();
    StrAppend(&out_, "HloModule ", module.name());
    if (module.is_scheduled()) out_ += ", is_scheduled=true";
    if (!config.input_output_alias.empty()) {
      out_ += ", input_output_alias={ ";
      for (size_t i = 0; i < config.input_output_alias.size(); ++i) {
        const InputOutputAlias& a = config.input_output_alias[i];
        if (i > 0) out_ += ", ";
        StrAppend(&out_, ShapeIndexToString(a.output_index), ": (", a.parameter_number,
                        ", ", ShapeIndexToString(a.parameter_index),
                        a.must_alias ? ", must-alias" : ", may-alias", ")");
      }
      out_ += " }";
    }
    if (!config.buffer_donor.empty()) {
      out_ += ", buffer_donor={ ";
      for (size_t i = 0; i < config.buffer_donor.size(); ++i) {
        const BufferDonor& d = config.buffer_donor[i];
        if (i > 0) out_ += ", ";
        StrAppend(&out_, "(", d.parameter_number, ", ",
                        ShapeIndexToString(d.parameter_index), ")");
      }
      out_ += " }";
    }
    if (config.alias_passthrough_params) out_ += ", alias_passthrough_params=true";
    if (module.entry_computation() != nullptr) {
      out_ += ", entry_computation_layout={";
      // The entry header's copy unless the module declares a layout that
      // differs from it (compared in place: an entry may have hundreds of
      // parameters).
      const std::optional<ProgramShape>& declared = config.entry_computation_layout;
      auto same_as_entry = [&](const ProgramShape& layout) {
        const HloComputation& c = *module.entry_computation();
        if (static_cast<int64_t>(layout.parameters.size()) != c.num_parameters()) return false;
        for (int64_t i = 0; i < c.num_parameters(); ++i) {
          if (!(layout.parameters[i] == c.parameter_instruction(i)->shape())) return false;
        }
        return c.root_instruction() != nullptr ? layout.result == c.root_instruction()->shape()
                                               : layout.result == Shape();
      };
      if (entry != nullptr && (!declared.has_value() || same_as_entry(*declared))) {
        out_ += entry->header->entry_layout;
      } else {
        out_ += module.entry_computation_layout().ToString();
      }
      out_ += '}';
    }
    auto bools = [](const std::vector<bool>& v) {
      std::vector<std::string> s;
      for (bool b : v) s.push_back(b ? "true" : "false");
      return StrCat("{", Join(s, ","), "}");
    };
    if (!config.allow_spmd_sharding_propagation_to_parameters.empty()) {
      StrAppend(&out_, ", allow_spmd_sharding_propagation_to_parameters=",
                      bools(config.allow_spmd_sharding_propagation_to_parameters));
    }
    if (!config.allow_spmd_sharding_propagation_to_output.empty()) {
      StrAppend(&out_, ", allow_spmd_sharding_propagation_to_output=",
                      bools(config.allow_spmd_sharding_propagation_to_output));
    }
    if (config.replica_count != 1) StrAppend(&out_, ", replica_count=", config.replica_count);
    if (config.num_partitions != 1) {
      StrAppend(&out_, ", num_partitions=", config.num_partitions);
    }
    if (config.use_auto_spmd_partitioning) out_ += ", use_auto_spmd_partitioning=true";
    if (!config.frontend_attributes.map.empty()) {
      StrAppend(&out_, ", frontend_attributes=", config.frontend_attributes.ToString());
    }
    for (const auto& [name, value] : config.unknown_attributes) {
      StrAppend(&out_, ", ", name, "=", value);
    }
    out_ += "\n";
  }

  // Computations printed inline as async sugar are skipped. Only a
  // computation wrapped by exactly one async-start can be (sugar gives each
  // start its own computation when parsed back).
  void FindSugaredComputations(const HloModule& module) {
    if (options_.syntax_sugar_async_ops) {
      absl::flat_hash_map<const HloComputation*, int> starts;
      std::vector<const HloInstruction*> async_starts;
      for (HloComputation* c : module.computations()) {
        for (const HloInstruction* inst : c->AsyncStarts()) {
          if (inst->called_computations().empty()) continue;
          ++starts[inst->async_wrapped_computation()];
          async_starts.push_back(inst);
        }
      }
      for (const HloInstruction* inst : async_starts) {
        if (CanPrintAsyncSugar(*inst) && starts[inst->async_wrapped_computation()] == 1) {
          sugared_.insert(inst->async_wrapped_computation());
        }
      }
      module_context_ = true;
    }
  }

  // chunks_: each computation's text, in order. When several changed, the
  // helper thread builds some of them with a second printer: computations
  // are independent (each writes only its own instructions' lines and its
  // own text cache; the previous text and the sugar are only read).
  void Chunks(const std::vector<const HloComputation*>& computations) {
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

  // Whether the computation's cached text is still its text (the cache is
  // dropped on every change, but not when the entry moves: "ENTRY ").
  static bool TextCacheValid(const HloComputation& c) {
    const std::shared_ptr<const ComputationText>& cached = c.text_cache();
    return cached != nullptr && cached->entry == c.IsEntryComputation();
  }

  // The computation's canonical text: its cache when still valid, else
  // built (segments of the previous text reused where every line still
  // matches, new lines printed) and cached, unless an async op in it prints
  // differently in different modules (the sugar).
  std::shared_ptr<const ComputationText> ComputationChunk(const HloComputation& c) {
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
  std::shared_ptr<const ComputationText::Header> NewHeader(const HloComputation& c) {
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
  static bool HeaderStillRight(const ComputationText::Header& header, const HloComputation& c) {
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

  void Computation(const HloComputation& c) {
    ComputationHeader(c);
    for (const HloInstruction* inst : c.InstructionPostOrder()) {
      out_ += "  ";
      Instruction(*inst);
      out_ += "\n";
    }
    ComputationFooter(c);
  }
  void ComputationHeader(const HloComputation& c) {
    if (c.IsEntryComputation()) out_ += "ENTRY ";
    Name(c.name());
    out_ += " (";
    for (int64_t i = 0; i < c.num_parameters(); ++i) {
      if (i > 0) out_ += ", ";
      const HloInstruction* p = c.parameter_instruction(i);
      StrAppend(&out_, p->name(), ": ");
      p->shape().AppendTo(out_, /*print_layout=*/false);
    }
    out_ += ") -> ";
    if (c.root_instruction() != nullptr) c.root_instruction()->shape().AppendTo(out_, /*print_layout=*/false);
    out_ += " {\n";
  }
  void ComputationFooter(const HloComputation& c) {
    out_ += "}";
    if (c.execution_thread() != "main") {
      StrAppend(&out_, ", execution_thread=\"", CEscape(c.execution_thread()), "\"");
    }
  }

  // The canonical options (all defaults): the only ones whose lines are
  // cached on the instructions.
  bool Canonical() const {
    const PrintOptions d;
    return options_.use_line_cache && options_.print_operand_shape == d.print_operand_shape &&
           options_.print_metadata == d.print_metadata &&
           options_.print_backend_config == d.print_backend_config &&
           options_.print_percent == d.print_percent &&
           options_.syntax_sugar_async_ops == d.syntax_sugar_async_ops &&
           options_.max_constant_elements == d.max_constant_elements;
  }

  void Instruction(const HloInstruction& inst) {
    if (inst.IsRoot()) out_ += "ROOT ";
    // Async ops print differently depending on their context (the sugar):
    // never cached.
    const bool cache = canonical_ && !IsAsync(inst.opcode());
    if (cache && inst.cached_line() != nullptr) {
      out_ += *inst.cached_line();
      return;
    }
    const size_t start = out_.size();
    InstructionBody(inst);
    if (cache) inst.set_cached_line(out_.substr(start));
  }

  // The walk behind PrintModuleText (and CanonicalTextFingerprint): the
  // module line, then each computation's text (ComputationChunk), reusing
  // segments of `previous`.
  void CollectChunks(const ModuleText* previous) {
    collect_chunks_ = true;
    if (previous == nullptr) return;
    for (const std::shared_ptr<const ComputationText>& c : previous->computations()) previous_.emplace(c->computation, c.get());
  }
  std::string& header() { return header_; }
  std::vector<std::shared_ptr<const ComputationText>>& chunks() { return chunks_; }
  int64_t lines_printed() const { return lines_printed_; }
  static uint64_t InstructionFingerprint(const HloInstruction& inst) {
    if (inst.fingerprint_valid()) return inst.cached_fingerprint();
    const uint64_t f = InstructionFingerprintUncached(inst);
    inst.set_cached_fingerprint(f);
    return f;
  }

  // The instruction's cached line, printed and cached when missing.
  std::shared_ptr<const std::string> SharedLine(const HloInstruction& inst) {
    if (inst.shared_cached_line() == nullptr) {
      const size_t start = out_.size();
      InstructionBody(inst);
      inst.set_cached_line(out_.substr(start));
      out_.resize(start);
    }
    return inst.shared_cached_line();
  }

  void InstructionBody(const HloInstruction& inst) {
    Name(inst.name());
    out_ += " = ";
    inst.shape().AppendTo(out_);
    out_ += ' ';
    bool sugar = options_.syntax_sugar_async_ops && IsAsync(inst.opcode()) &&
                 CanPrintAsyncSugar(inst) &&
                 (!module_context_ || sugared_.contains(inst.async_wrapped_computation()));
    if (sugar) {
      const HloInstruction* wrapped = inst.async_wrapped_instruction();
      out_ += HloOpcodeString(wrapped->opcode());
      out_ += inst.opcode() == HloOpcode::kAsyncStart    ? "-start"
              : inst.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                         : "-done";
    } else {
      out_ += HloOpcodeString(inst.opcode());
    }
    out_ += '(';
    if (inst.opcode() == HloOpcode::kConstant) {
      Constant(inst.literal());
    } else if (inst.opcode() == HloOpcode::kParameter) {
      StrAppend(&out_, inst.parameter_number());
    } else {
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (i > 0) out_ += ", ";
        const HloInstruction* op = inst.operand(i);
        if (options_.print_operand_shape) OperandShape(*op);
        Name(op->name());
      }
    }
    out_ += ')';
    if (sugar) {
      if (inst.opcode() == HloOpcode::kAsyncStart) {
        const HloInstruction* wrapped = inst.async_wrapped_instruction();
        OpcodeAttributes(*wrapped);
        CalledComputations(*wrapped);
        if (inst.async_execution_thread() != "main") {
          StrAppend(&out_, ", async_execution_thread=\"",
                          CEscape(inst.async_execution_thread()), "\"");
        }
      }
      Aliasing(inst.attrs());
    } else {
      OpcodeAttributes(inst);
      CalledComputations(inst);
    }
    GenericAttributes(inst);
  }

  // An operand's shape and a space: copied from the operand's own cached
  // line ("%name = SHAPE opcode(...") when it has one, as printing it again
  // costs more than finding it; array shapes print without spaces, which
  // the check of what follows confirms. Not while another thread may be
  // printing the operand's line (set_operand_lines(false)).
  void set_operand_lines(bool use) { operand_lines_ = use; }
  void OperandShape(const HloInstruction& op) {
    if (canonical_ && operand_lines_ && !op.shape().IsTuple()) {
      if (const std::string* line = op.cached_line()) {
        const size_t begin = op.name().size() + 4;  // "%" name " = "
        const size_t end = line->find(' ', begin);
        const std::string_view opcode = HloOpcodeString(op.opcode());
        if (end != std::string::npos && line->compare(end + 1, opcode.size(), opcode) == 0 &&
            line->size() > end + 1 + opcode.size() && (*line)[end + 1 + opcode.size()] == '(') {
          out_.append(*line, begin, end + 1 - begin);
          return;
        }
      }
    }
    op.shape().AppendTo(out_);
    out_ += ' ';
  }

  static bool IsAsync(HloOpcode op) {
    return op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
           op == HloOpcode::kAsyncDone;
  }

  void Constant(const Literal& literal) {
    if (options_.max_constant_elements >= 0 && literal.shape().IsArray() &&
        literal.element_count() > options_.max_constant_elements && literal.shape().rank() > 0) {
      out_ += "{...}";
      return;
    }
    out_ += literal.ToString();
  }

  void Attr(std::string_view name, std::string_view value) {
    StrAppend(&out_, ", ", name, "=", value);
  }
  // Attr(name, StrCat(value)) and Attr(name, BracedInts(values)) without
  // the temporary string.
  template <typename T>
  void AttrNumber(std::string_view name, T value) {
    StrAppend(&out_, ", ", name, "=");
    absl::StrAppend(&out_, value);
  }
  void AttrInts(std::string_view name, const std::vector<int64_t>& values) {
    StrAppend(&out_, ", ", name, "={");
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) out_ += ',';
      absl::StrAppend(&out_, values[i]);
    }
    out_ += '}';
  }

  void OpcodeAttributes(const HloInstruction& inst) {
    const HloAttributes& a = inst.attrs();
    auto dims = [&] { AttrInts("dimensions", inst.dimensions()); };
    auto collective = [&] {
      if (a.channel_id.has_value()) AttrNumber("channel_id", *a.channel_id);
      if (!a.replica_groups.empty() || inst.opcode() != HloOpcode::kCollectivePermute) {
        if (inst.opcode() != HloOpcode::kCollectivePermute &&
            inst.opcode() != HloOpcode::kCollectivePermuteStart) {
          Attr("replica_groups", a.replica_groups.ToString());
        }
      }
      if (a.constrain_layout) Attr("constrain_layout", "true");
    };
    switch (inst.opcode()) {
      case HloOpcode::kBroadcast: case HloOpcode::kTranspose: case HloOpcode::kReverse:
      case HloOpcode::kReduce: case HloOpcode::kConcatenate: case HloOpcode::kMap:
      case HloOpcode::kGetDimensionSize: case HloOpcode::kSetDimensionSize:
        if (inst.opcode() == HloOpcode::kMap && inst.dimensions().empty()) break;
        dims();
        break;
      case HloOpcode::kSort:
        dims();
        if (a.is_stable) Attr("is_stable", "true");
        break;
      case HloOpcode::kSlice: {
        std::vector<std::string> parts;
        for (const SliceDimension& d : a.slice) {
          parts.push_back(d.stride == 1 ? StrCat("[", d.start, ":", d.limit, "]")
                                        : StrCat("[", d.start, ":", d.limit, ":", d.stride, "]"));
        }
        Attr("slice", StrCat("{", Join(parts, ", "), "}"));
        break;
      }
      case HloOpcode::kPad: Attr("padding", a.padding_config.ToString()); break;
      case HloOpcode::kIota: Attr("iota_dimension", StrCat(inst.iota_dimension())); break;
      case HloOpcode::kGetTupleElement: AttrNumber("index", inst.tuple_index()); break;
      case HloOpcode::kCompare: {
        Attr("direction", ComparisonDirectionString(a.comparison_direction));
        // An explicit type prints back even when it is the default one.
        if (a.comparison_type != ComparisonType::kDefault) {
          Attr("type", ComparisonTypeString(a.comparison_type));
        }
        break;
      }
      case HloOpcode::kDot:
        out_ += ", ";
        out_ += a.dot_dnums.ToString();
        Precision(a.precision_config);
        if (!a.sparsity.empty()) {
          std::vector<std::string> parts;
          for (const SparsityDescriptor& s : a.sparsity) {
            parts.push_back(StrCat(s.index == 0 ? "L." : "R.", s.dimension, "@", s.n, ":", s.m));
          }
          Attr("sparsity", Join(parts, "_"));
        }
        break;
      case HloOpcode::kRaggedDot:
        // XLA's RaggedDotDimensionNumbersToString.
        out_ += ", ";
        out_ += a.dot_dnums.ToString();
        if (!a.lhs_ragged_dims.empty()) AttrInts("lhs_ragged_dims", a.lhs_ragged_dims);
        if (!a.rhs_group_dims.empty()) AttrInts("rhs_group_dims", a.rhs_group_dims);
        Precision(a.precision_config);
        break;
      case HloOpcode::kScaledDot:
        out_ += ", ";
        out_ += a.dot_dnums.ToString();
        Precision(a.precision_config);
        break;
      case HloOpcode::kScan:
        dims();
        AttrNumber("num_carries", a.num_carries);
        if (a.is_reverse) Attr("is_reverse", "true");
        if (a.is_associative.has_value()) Attr("is_associative", *a.is_associative ? "true" : "false");
        break;
      case HloOpcode::kConvolution:
        ConvAttributes(a);
        break;
      case HloOpcode::kReduceWindow: case HloOpcode::kSelectAndScatter:
        if (a.window.has_value() && !a.window->dimensions.empty()) Attr("window", a.window->ToString());
        break;
      case HloOpcode::kDynamicSlice: AttrInts("dynamic_slice_sizes", a.slice_sizes); break;
      case HloOpcode::kGather: {
        const GatherDimensionNumbers& g = a.gather_dnums;
        AttrInts("offset_dims", g.offset_dims);
        AttrInts("collapsed_slice_dims", g.collapsed_slice_dims);
        AttrInts("start_index_map", g.start_index_map);
        if (!g.operand_batching_dims.empty()) AttrInts("operand_batching_dims", g.operand_batching_dims);
        if (!g.start_indices_batching_dims.empty()) {
          AttrInts("start_indices_batching_dims", g.start_indices_batching_dims);
        }
        AttrNumber("index_vector_dim", g.index_vector_dim);
        AttrInts("slice_sizes", a.slice_sizes);
        if (a.indices_are_sorted) Attr("indices_are_sorted", "true");
        break;
      }
      case HloOpcode::kScatter: {
        const ScatterDimensionNumbers& s = a.scatter_dnums;
        AttrInts("update_window_dims", s.update_window_dims);
        AttrInts("inserted_window_dims", s.inserted_window_dims);
        AttrInts("scatter_dims_to_operand_dims", s.scatter_dims_to_operand_dims);
        if (!s.input_batching_dims.empty()) AttrInts("input_batching_dims", s.input_batching_dims);
        if (!s.scatter_indices_batching_dims.empty()) {
          AttrInts("scatter_indices_batching_dims", s.scatter_indices_batching_dims);
        }
        AttrNumber("index_vector_dim", s.index_vector_dim);
        if (a.indices_are_sorted) Attr("indices_are_sorted", "true");
        if (a.unique_indices) Attr("unique_indices", "true");
        break;
      }
      case HloOpcode::kBatchNormTraining: case HloOpcode::kBatchNormInference:
      case HloOpcode::kBatchNormGrad:
        AttrNumber("epsilon", a.epsilon);
        AttrNumber("feature_index", a.feature_index);
        break;
      case HloOpcode::kReducePrecision:
        AttrNumber("exponent_bits", a.exponent_bits);
        AttrNumber("mantissa_bits", a.mantissa_bits);
        break;
      case HloOpcode::kRng: Attr("distribution", RandomDistributionString(a.distribution)); break;
      case HloOpcode::kRngBitGenerator: Attr("algorithm", RandomAlgorithmString(a.rng_algorithm)); break;
      case HloOpcode::kFft:
        Attr("fft_type", FftTypeString(a.fft_type));
        AttrInts("fft_length", a.fft_length);
        break;
      case HloOpcode::kTriangularSolve: {
        const TriangularSolveOptions& t = a.triangular_solve;
        if (t.left_side) Attr("left_side", "true");
        if (t.lower) Attr("lower", "true");
        if (t.unit_diagonal) Attr("unit_diagonal", "true");
        if (t.transpose_a != TriangularTranspose::kNoTranspose) {
          Attr("transpose_a", TriangularTransposeString(t.transpose_a));
        }
        break;
      }
      case HloOpcode::kCholesky:
        if (a.cholesky_lower) Attr("lower", "true");
        break;
      case HloOpcode::kTopK:
        AttrNumber("k", a.k);
        Attr("largest", a.largest ? "true" : "false");
        if (a.is_stable) Attr("is_stable", "true");
        break;
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kReduceScatter:
      case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllToAll:
      case HloOpcode::kRaggedAllToAll: case HloOpcode::kCollectiveBroadcast:
        collective();
        if (inst.opcode() == HloOpcode::kAllGather || inst.opcode() == HloOpcode::kAllGatherStart ||
            inst.opcode() == HloOpcode::kReduceScatter ||
            (inst.opcode() == HloOpcode::kAllToAll && !inst.dimensions().empty())) {
          dims();
        }
        if (a.use_global_device_ids) Attr("use_global_device_ids", "true");
        break;
      case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart: {
        collective();
        std::vector<std::string> pairs;
        for (auto [s, t] : a.source_target_pairs) pairs.push_back(StrCat("{", s, ",", t, "}"));
        Attr("source_target_pairs", StrCat("{", Join(pairs, ","), "}"));
        if (!a.dynamic_slice_sizes_list.empty()) {
          std::vector<std::string> parts;
          for (const auto& s : a.dynamic_slice_sizes_list) parts.push_back(BracedInts(s));
          Attr("slice_sizes", StrCat("{", Join(parts, ","), "}"));
        }
        break;
      }
      case HloOpcode::kSend: case HloOpcode::kSendDone: case HloOpcode::kRecv:
      case HloOpcode::kRecvDone:
        if (a.channel_id.has_value()) AttrNumber("channel_id", *a.channel_id);
        if (a.is_host_transfer) Attr("is_host_transfer", "true");
        break;
      case HloOpcode::kInfeed:
        if (!a.infeed_config.empty()) Attr("infeed_config", StrCat("\"", CEscape(a.infeed_config), "\""));
        break;
      case HloOpcode::kOutfeed:
        if (a.outfeed_shape.has_value()) Attr("outfeed_shape", a.outfeed_shape->ToString());
        if (!a.outfeed_config.empty()) Attr("outfeed_config", StrCat("\"", CEscape(a.outfeed_config), "\""));
        break;
      case HloOpcode::kParameter:
        if (!a.parameter_replication.empty()) {
          std::vector<std::string> s;
          for (bool b : a.parameter_replication) s.push_back(b ? "true" : "false");
          Attr("parameter_replication", StrCat("{", Join(s, ","), "}"));
        }
        break;
      case HloOpcode::kCopyStart:
        if (a.cross_program_prefetch_index.has_value()) {
          AttrNumber("cross_program_prefetch_index", *a.cross_program_prefetch_index);
        }
        break;
      case HloOpcode::kDomain:
        Attr("domain", StrCat("{kind=\"", CEscape(a.domain.kind), "\", entry=", a.domain.entry,
                                    ", exit=", a.domain.exit, "}"));
        break;
      case HloOpcode::kFusion:
        Attr("kind", FusionKindString(inst.fusion_kind()));
        Aliasing(a);
        break;
      case HloOpcode::kCustomCall:
        CustomCallAttributes(inst);
        break;
      case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate: case HloOpcode::kAsyncDone:
        if (inst.async_execution_thread() != "main") {
          Attr("async_execution_thread", StrCat("\"", CEscape(inst.async_execution_thread()), "\""));
        }
        Aliasing(a);
        break;
      // Opcodes without attributes of their own.
      case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin:
      case HloOpcode::kAsinh: case HloOpcode::kAtanh: case HloOpcode::kCosh:
      case HloOpcode::kMulhi: case HloOpcode::kSinh:
      case HloOpcode::kAbs: case HloOpcode::kAdd: case HloOpcode::kAddDependency:
      case HloOpcode::kAfterAll: case HloOpcode::kAllGatherDone: case HloOpcode::kAllReduceDone:
      case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kBitcast:
      case HloOpcode::kBitcastConvert: case HloOpcode::kCall: case HloOpcode::kCbrt:
      case HloOpcode::kCeil: case HloOpcode::kClamp: case HloOpcode::kClz:
      case HloOpcode::kCollectivePermuteDone: case HloOpcode::kComplex:
      case HloOpcode::kConditional: case HloOpcode::kConstant: case HloOpcode::kConvert:
      case HloOpcode::kCopy: case HloOpcode::kCopyDone: case HloOpcode::kCos:
      case HloOpcode::kDivide: case HloOpcode::kDynamicReshape:
      case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kErf: case HloOpcode::kExp:
      case HloOpcode::kExpm1: case HloOpcode::kFloor: case HloOpcode::kImag:
      case HloOpcode::kIsFinite: case HloOpcode::kLog: case HloOpcode::kLog1p:
      case HloOpcode::kLogistic: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
      case HloOpcode::kMultiply: case HloOpcode::kNegate: case HloOpcode::kNot:
      case HloOpcode::kOptimizationBarrier: case HloOpcode::kOr: case HloOpcode::kPartitionId:
      case HloOpcode::kPopulationCount: case HloOpcode::kPower: case HloOpcode::kReal:
      case HloOpcode::kRemainder: case HloOpcode::kReplicaId: case HloOpcode::kReshape:
      case HloOpcode::kRngGetAndUpdateState: case HloOpcode::kRoundNearestAfz:
      case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSelect:
      case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
      case HloOpcode::kShiftRightLogical: case HloOpcode::kSign: case HloOpcode::kSin:
      case HloOpcode::kSqrt: case HloOpcode::kStochasticConvert: case HloOpcode::kSubtract:
      case HloOpcode::kTan: case HloOpcode::kTanh: case HloOpcode::kTuple: case HloOpcode::kWhile:
      case HloOpcode::kXor:
        break;
    }
  }

  void Precision(const PrecisionConfig& p) {
    bool any = false;
    for (PrecisionLevel l : p.operand_precision) any |= l != PrecisionLevel::kDefault;
    if (any) {
      std::vector<std::string_view> parts;
      for (PrecisionLevel l : p.operand_precision) parts.push_back(PrecisionString(l));
      Attr("operand_precision", StrCat("{", Join(parts, ","), "}"));
    }
    if (!p.algorithm.empty()) Attr("algorithm", p.algorithm);
  }

  void ConvAttributes(const HloAttributes& a) {
    if (a.window.has_value() && !a.window->dimensions.empty()) Attr("window", a.window->ToString());
    if (a.conv_dnums.has_value()) Attr("dim_labels", a.conv_dnums->ToString());
    if (a.feature_group_count != 1) AttrNumber("feature_group_count", a.feature_group_count);
    if (a.batch_group_count != 1) AttrNumber("batch_group_count", a.batch_group_count);
    Precision(a.precision_config);
  }

  void Aliasing(const HloAttributes& a) {
    if (a.output_to_operand_aliasing.empty()) return;
    std::vector<std::string> parts;
    for (const OutputOperandAlias& al : a.output_to_operand_aliasing) {
      parts.push_back(StrCat(ShapeIndexToString(al.output_index), ": (", al.operand, ", ",
                                   ShapeIndexToString(al.operand_index), ")"));
    }
    Attr("output_to_operand_aliasing", StrCat("{", Join(parts, ", "), "}"));
  }

  void CustomCallAttributes(const HloInstruction& inst) {
    const HloAttributes& a = inst.attrs();
    ConvAttributes(a);
    Attr("custom_call_target", StrCat("\"", CEscape(a.custom_call_target), "\""));
    if (a.operand_layout_constraints.has_value()) {
      std::vector<std::string> parts;
      for (const Shape& s : *a.operand_layout_constraints) parts.push_back(s.ToString());
      Attr("operand_layout_constraints", StrCat("{", Join(parts, ", "), "}"));
    }
    if (a.custom_call_has_side_effect) Attr("custom_call_has_side_effect", "true");
    Aliasing(a);
    if (inst.has_literal()) {
      Attr("literal", StrCat(inst.literal().shape().ToString(), " ", inst.literal().ToString()));
    }
    if (a.schedule != CustomCallSchedule::kNone) Attr("schedule", CustomCallScheduleString(a.schedule));
    if (a.padding_type != PaddingType::kInvalid) Attr("padding_type", PaddingTypeString(a.padding_type));
    if (a.api_version != CustomCallApiVersion::kOriginal) {
      Attr("api_version", CustomCallApiVersionString(a.api_version));
    }
  }

  void CalledComputations(const HloInstruction& inst) {
    const auto& called = inst.called_computations();
    if (called.empty()) return;
    auto name = [&](const HloComputation* c) {
      return options_.print_percent ? StrCat("%", c->name()) : c->name();
    };
    switch (inst.opcode()) {
      case HloOpcode::kWhile:
        Attr("condition", name(called[0]));
        Attr("body", name(called[1]));
        return;
      case HloOpcode::kSelectAndScatter:
        Attr("select", name(called[0]));
        Attr("scatter", name(called[1]));
        return;
      case HloOpcode::kConditional: {
        if (inst.operand_count() > 0 &&
            inst.operand(0)->shape().element_type() == PrimitiveType::kPred && called.size() == 2) {
          Attr("true_computation", name(called[0]));
          Attr("false_computation", name(called[1]));
        } else {
          std::vector<std::string> names;
          for (const HloComputation* c : called) names.push_back(name(c));
          Attr("branch_computations", StrCat("{", Join(names, ", "), "}"));
        }
        return;
      }
      case HloOpcode::kFusion: case HloOpcode::kAsyncStart: case HloOpcode::kAsyncUpdate:
      case HloOpcode::kAsyncDone:
        Attr("calls", name(called[0]));
        return;
      case HloOpcode::kCustomCall: {
        std::vector<std::string> names;
        for (const HloComputation* c : called) names.push_back(name(c));
        Attr("called_computations", StrCat("{", Join(names, ", "), "}"));
        return;
      }
      default:
        Attr("to_apply", name(called[0]));
        // XLA prints it right after to_apply (HloInstruction::PrintExtraAttributes).
        if (inst.opcode() == HloOpcode::kCall && inst.attrs().is_composite) {
          Attr("is_composite", "true");
        }
    }
  }

  void GenericAttributes(const HloInstruction& inst) {
    if (inst.has_sharding()) Attr("sharding", inst.sharding().ToString());
    if (!inst.frontend_attributes().map.empty()) {
      Attr("frontend_attributes", inst.frontend_attributes().ToString());
    }
    if (!inst.control_predecessors().empty()) {
      std::vector<std::string> names;
      for (const HloInstruction* p : inst.control_predecessors()) {
        names.push_back(options_.print_percent ? StrCat("%", p->name()) : p->name());
      }
      Attr("control-predecessors", StrCat("{", Join(names, ", "), "}"));
    }
    if (options_.print_metadata && !inst.metadata().empty()) {
      out_ += ", metadata=";
      AppendOpMetadata(out_, inst.metadata());
    }
    if (options_.print_backend_config && !inst.raw_backend_config().empty()) {
      const std::string& bc = inst.raw_backend_config();
      if (IsSingleBalancedGroup(bc)) {
        Attr("backend_config", bc);
      } else {
        Attr("backend_config", StrCat("\"", CEscape(bc), "\""));
      }
    }
    const HloAttributes& a = inst.attrs();
    if (a.statistics.has_value()) Attr("statistics", a.statistics->ToString());
    if (!a.original_value.empty()) Attr("origin", a.original_value);
    for (const auto& [name, value] : a.unknown_attributes) Attr(name, value);
  }

 private:
  const PrintOptions& options_;
  const bool canonical_;
  std::string out_;
  bool collect_chunks_ = false;        // PrintModuleText: the module line and
  std::string header_;                 // one ComputationText per computation
  std::vector<std::shared_ptr<const ComputationText>> chunks_;
  // The previous text's computations (segments to reuse), by identity.
  absl::flat_hash_map<const HloComputation*, const ComputationText*> previous_;
  int64_t lines_printed_ = 0;
  bool operand_lines_ = true;
  bool module_context_ = false;
  absl::flat_hash_set<const HloComputation*> sugared_;
};

}  // namespace

bool CanPrintAsyncSugar(const HloInstruction& async_op) {
  if (async_op.called_computations().size() != 1) return false;
  const HloComputation* wrapped = async_op.async_wrapped_computation();
  if (wrapped == nullptr || wrapped->execution_thread() != async_op.async_execution_thread()) {
    return false;
  }
  const HloInstruction* start_op = &async_op;
  while (start_op->opcode() != HloOpcode::kAsyncStart && start_op->operand_count() > 0) {
    start_op = start_op->operand(0);
  }
  if (wrapped->name() != AsyncWrappedComputationName(start_op->name())) return false;
  const HloInstruction* root = wrapped->root_instruction();
  if (root == nullptr || wrapped->instruction_count() != wrapped->num_parameters() + 1) return false;
  if (root->opcode() == HloOpcode::kParameter) return false;
  if (root->operand_count() != wrapped->num_parameters()) return false;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    if (root->operand(i) != wrapped->parameter_instruction(i)) return false;
  }
  // Attributes that only the wrapped op could carry would be lost.
  if (!root->metadata().empty() || !root->raw_backend_config().empty() || root->has_sharding() ||
      !root->frontend_attributes().map.empty() || !root->control_predecessors().empty()) {
    return false;
  }
  if (HasOwnAsyncOpcodes(root->opcode())) return false;
  // The op-start spelling must not collide with a real opcode.
  std::string start = StrCat(HloOpcodeString(root->opcode()), "-start");
  if (StringToHloOpcode(start).has_value()) return false;
  return true;
}

std::string PrintModule(const HloModule& module, const PrintOptions& options) {
  Printer p(options);
  p.Module(module);
  return std::move(p.out());
}

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

std::shared_ptr<const ModuleText> PrintModuleText(const HloModule& module, const ModuleText* previous) {
  const int64_t printed_beside = PrintMissingLines(module);
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

namespace {

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

}  // namespace

std::string PrintComputation(const HloComputation& computation, const PrintOptions& options) {
  Printer p(options);
  p.Computation(computation);
  return std::move(p.out());
}

const std::string* CanonicalInstructionLine(const HloInstruction& instruction) {
  if (const std::string* line = instruction.cached_line()) return line;
  if (Printer::IsAsync(instruction.opcode())) return nullptr;
  const PrintOptions options;
  Printer p(options);
  return p.SharedLine(instruction).get();  // the instruction keeps the line
}

std::string PrintInstruction(const HloInstruction& instruction, const PrintOptions& options) {
  Printer p(options);
  p.Instruction(instruction);
  return std::move(p.out());
}

}  // namespace passlab
