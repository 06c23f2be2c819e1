#include "core/eval/multi_participant_evaluator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/eval/eval_internal.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

using eval::Operands;
// One group member's operands (copied: the member's own values may die).
using Contribution = std::vector<Literal>;

// Where the members of one collective's group meet. A slot is keyed by the
// instruction, how often each member has executed it, and the group, so
// loop iterations and disjoint groups never share a slot.
class Rendezvous {
 public:
  explicit Rendezvous(int64_t timeout_ms) : timeout_ms_(timeout_ms) {}

  // Deposits `mine` as member `rank` of `size`, waits for the others, then
  // returns finish(all contributions, in group order).
  absl::StatusOr<Literal> Meet(const std::string& key, int64_t size, int64_t rank, Contribution mine,
                               const std::function<absl::StatusOr<Literal>(const std::vector<Contribution>&)>& finish) {
    std::unique_lock<std::mutex> lock(mu_);
    Slot& slot = slots_[key];
    if (slot.contributions.empty()) slot.contributions.resize(size);
    slot.contributions[rank] = std::move(mine);
    if (++slot.arrived == size) cv_.notify_all();
    bool met = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_),
                            [&] { return aborted_ || slot.arrived == size; });
    if (!met) {
      aborted_ = true;
      cv_.notify_all();
      return absl::DeadlineExceededError(StrCat("rendezvous timed out: ", slot.arrived, " of ", size,
                                                " group members arrived"));
    }
    if (slot.arrived != size) return absl::AbortedError("another participant failed");
    // Every member has arrived: the contributions are read-only from here
    // until the last member leaves.
    lock.unlock();
    absl::StatusOr<Literal> result = finish(slot.contributions);
    lock.lock();
    if (++slot.departed == size) slots_.erase(key);
    return result;
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<Contribution> contributions;
    int64_t arrived = 0;
    int64_t departed = 0;
  };
  int64_t timeout_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Slot> slots_;
  bool aborted_ = false;
};

Literal WithShape(Literal l, const Shape& shape) {
  if (l.shape().Compatible(shape)) l.set_shape_layout(shape);
  return l;
}

// Row-major blocks around dimension `dim`: `outer` blocks of dims[dim] rows
// of `inner` elements.
struct Blocks {
  int64_t outer = 1;
  int64_t inner = 1;
};
Blocks BlocksAround(const Shape& shape, int64_t dim) {
  Blocks b;
  for (int64_t d = 0; d < dim; ++d) b.outer *= shape.dimensions(d);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) b.inner *= shape.dimensions(d);
  return b;
}

// The parts joined along `dim` into a literal of `result`.
Literal ConcatenateAlong(absl::Span<const Literal* const> parts, int64_t dim, const Shape& result) {
  Literal out(result);
  int64_t w = PrimitiveByteWidth(result.element_type());
  Blocks b = BlocksAround(result, dim);
  int64_t out_rows = result.dimensions(dim);
  int64_t offset = 0;
  for (const Literal* part : parts) {
    int64_t rows = part->shape().dimensions(dim);
    for (int64_t o = 0; o < b.outer; ++o) {
      std::memcpy(out.untyped_data() + ((o * out_rows + offset) * b.inner) * w,
                  part->untyped_data() + (o * rows * b.inner) * w, rows * b.inner * w);
    }
    offset += rows;
  }
  return out;
}

// Rows [start, start + size) of `in` along `dim`.
Literal SliceAlong(const Literal& in, int64_t dim, int64_t start, int64_t size) {
  Shape shape = in.shape();
  shape.set_dimensions(dim, size);
  Literal out(shape);
  int64_t w = PrimitiveByteWidth(shape.element_type());
  Blocks b = BlocksAround(in.shape(), dim);
  int64_t in_rows = in.shape().dimensions(dim);
  for (int64_t o = 0; o < b.outer; ++o) {
    std::memcpy(out.untyped_data() + (o * size * b.inner) * w,
                in.untyped_data() + ((o * in_rows + start) * b.inner) * w, size * b.inner * w);
  }
  return out;
}

// One literal for a result shape: the single array, or the tuple of them.
Literal Pack(std::vector<Literal> results, const Shape& shape) {
  if (!shape.IsTuple()) return WithShape(std::move(results[0]), shape);
  return WithShape(Literal::Tuple(std::move(results)), shape);
}

bool IsStart(HloOpcode op) {
  return op == HloOpcode::kAllReduceStart || op == HloOpcode::kAllGatherStart ||
         op == HloOpcode::kCollectivePermuteStart;
}

class Participant : public eval::CollectiveParticipant {
 public:
  Participant(Rendezvous& rendezvous, int64_t replica, int64_t partition, int64_t replica_count,
              int64_t num_partitions)
      : rendezvous_(rendezvous),
        replica_(replica),
        partition_(partition),
        replica_count_(replica_count),
        num_partitions_(num_partitions) {}

  absl::StatusOr<Literal> Evaluate(const HloInstruction& inst, Operands ops, eval::EvalContext& ctx) override {
    const Shape& shape = inst.shape();
    switch (inst.opcode()) {
      case HloOpcode::kReplicaId: case HloOpcode::kPartitionId: {
        Literal id(shape);
        id.SetInt(0, inst.opcode() == HloOpcode::kReplicaId ? replica_ : partition_);
        return id;
      }
      case HloOpcode::kAllReduceDone:
        return WithShape(*ops[0], shape);
      case HloOpcode::kAllGatherDone: case HloOpcode::kCollectivePermuteDone:
        return WithShape(ops[0]->tuple_elements()[1], shape);
      case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart: case HloOpcode::kReduceScatter: case HloOpcode::kAllToAll:
      case HloOpcode::kCollectiveBroadcast:
        return GroupCollective(inst, ops, ctx);
      case HloOpcode::kCollectivePermute: case HloOpcode::kCollectivePermuteStart:
        return Permute(inst, ops);
      case HloOpcode::kRaggedAllToAll:
        return absl::UnimplementedError("ragged-all-to-all is not evaluated on several participants");
      default:
        return absl::InternalError(StrCat("'", HloOpcodeString(inst.opcode()), "' is not a collective"));
    }
  }

 private:
  int64_t self() const { return replica_ * num_partitions_ + partition_; }

  // The global device ids of inst's group that holds this participant, in
  // group order (XLA's CollectiveOpGroupMode).
  absl::StatusOr<std::vector<int64_t>> GroupOf(const HloInstruction& inst) const {
    const HloAttributes& a = inst.attrs();
    std::vector<std::vector<int64_t>> groups = a.replica_groups.Expand();
    bool has_channel = a.channel_id.has_value();
    HloOpcode op = inst.opcode();
    // all-to-all and collective-broadcast carry no use_global_device_ids:
    // with a channel id they are cross-partition.
    bool takes_global_ids = op != HloOpcode::kAllToAll && op != HloOpcode::kCollectiveBroadcast;
    auto all = [](int64_t n) {
      std::vector<int64_t> ids(n);
      for (int64_t i = 0; i < n; ++i) ids[i] = i;
      return ids;
    };
    auto find_group = [&](int64_t id, int64_t count) -> absl::StatusOr<std::vector<int64_t>> {
      if (groups.empty()) return all(count);
      for (const std::vector<int64_t>& g : groups) {
        if (std::find(g.begin(), g.end(), id) != g.end()) return g;
      }
      return absl::InvalidArgumentError(StrCat("no replica group holds id ", id));
    };
    std::vector<int64_t> members;
    if (!has_channel) {
      if (a.use_global_device_ids) return absl::InvalidArgumentError("use_global_device_ids needs a channel id");
      ASSIGN_OR_RETURN(std::vector<int64_t> g, find_group(replica_, replica_count_));
      for (int64_t r : g) members.push_back(r * num_partitions_ + partition_);
    } else if (!takes_global_ids) {
      ASSIGN_OR_RETURN(std::vector<int64_t> g, find_group(partition_, num_partitions_));
      for (int64_t p : g) members.push_back(replica_ * num_partitions_ + p);
    } else if (a.use_global_device_ids) {
      ASSIGN_OR_RETURN(std::vector<int64_t> g, find_group(self(), replica_count_ * num_partitions_));
      members = g;
    } else {
      ASSIGN_OR_RETURN(std::vector<int64_t> g, find_group(replica_, replica_count_));
      for (int64_t r : g) {
        for (int64_t p = 0; p < num_partitions_; ++p) members.push_back(r * num_partitions_ + p);
      }
    }
    for (int64_t m : members) {
      if (m < 0 || m >= replica_count_ * num_partitions_) {
        return absl::InvalidArgumentError(StrCat("the group names device ", m, " but there are ",
                                                 replica_count_ * num_partitions_));
      }
    }
    return members;
  }

  std::string KeyOf(const HloInstruction& inst, const std::vector<int64_t>& group) {
    int64_t seq = seq_[&inst]++;
    return StrCat(reinterpret_cast<uintptr_t>(&inst), ":", seq, ":", Join(group, ","));
  }

  static Contribution Copy(Operands ops) {
    Contribution c;
    for (const Literal* op : ops) c.push_back(*op);
    return c;
  }

  absl::StatusOr<Literal> GroupCollective(const HloInstruction& inst, Operands ops, eval::EvalContext& ctx) {
    ASSIGN_OR_RETURN(std::vector<int64_t> group, GroupOf(inst));
    int64_t size = static_cast<int64_t>(group.size());
    int64_t rank = std::find(group.begin(), group.end(), self()) - group.begin();
    const Shape& result_shape = IsStart(inst.opcode()) && inst.opcode() != HloOpcode::kAllReduceStart
                                    ? inst.shape().tuple_shapes(1)
                                    : inst.shape();
    auto element_shape = [&](size_t i) -> const Shape& {
      return result_shape.IsTuple() ? result_shape.tuple_shapes(i) : result_shape;
    };
    std::string key = KeyOf(inst, group);
    auto finish = [&](const std::vector<Contribution>& all) -> absl::StatusOr<Literal> {
      std::vector<Literal> results;
      switch (inst.opcode()) {
        case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart: case HloOpcode::kReduceScatter: {
          std::optional<eval::SimpleBinary> simple = eval::RecognizeSimpleBinary(inst.to_apply());
          for (size_t i = 0; i < ops.size(); ++i) {
            Literal acc = all[0][i];
            for (int64_t k = 1; k < size; ++k) {
              const Literal* x = &all[k][i];
              Literal* accs[] = {&acc};
              for (int64_t e = 0, n = acc.element_count(); e < n; ++e) {
                RETURN_IF_ERROR(eval::Accumulate(ctx, simple, inst.to_apply(), accs, e, {&x, 1}, e));
              }
            }
            if (inst.opcode() == HloOpcode::kReduceScatter) {
              int64_t dim = inst.dimensions(0);
              int64_t rows = element_shape(i).dimensions(dim);
              acc = SliceAlong(acc, dim, rank * rows, rows);
            }
            results.push_back(WithShape(std::move(acc), element_shape(i)));
          }
          break;
        }
        case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: {
          int64_t dim = inst.dimensions(0);
          for (size_t i = 0; i < ops.size(); ++i) {
            std::vector<const Literal*> parts;
            for (const Contribution& c : all) parts.push_back(&c[i]);
            results.push_back(ConcatenateAlong(parts, dim, element_shape(i)));
          }
          break;
        }
        case HloOpcode::kAllToAll: {
          if (inst.dimensions().empty()) {
            // Tuple form: operand k goes to member k.
            if (static_cast<int64_t>(ops.size()) != size) {
              return absl::InvalidArgumentError("tuple all-to-all needs one operand per group member");
            }
            for (int64_t k = 0; k < size; ++k) results.push_back(WithShape(all[k][rank], element_shape(k)));
            break;
          }
          // Array form: each member's operand splits into `size` chunks
          // along the split dimension; chunk `rank` of every member joins.
          int64_t dim = inst.dimensions(0);
          int64_t rows = ops[0]->shape().dimensions(dim) / size;
          std::vector<Literal> chunks;
          for (int64_t k = 0; k < size; ++k) chunks.push_back(SliceAlong(all[k][0], dim, rank * rows, rows));
          std::vector<const Literal*> parts;
          for (const Literal& c : chunks) parts.push_back(&c);
          results.push_back(ConcatenateAlong(parts, dim, element_shape(0)));
          break;
        }
        case HloOpcode::kCollectiveBroadcast:
          for (size_t i = 0; i < ops.size(); ++i) results.push_back(WithShape(all[0][i], element_shape(i)));
          break;
        default:
          return absl::InternalError("not a group collective");
      }
      return Pack(std::move(results), result_shape);
    };
    absl::StatusOr<Literal> result = rendezvous_.Meet(key, size, rank, Copy(ops), finish);
    if (!result.ok() || inst.opcode() != HloOpcode::kAllGatherStart) return result;
    // all-gather-start: (operands, results).
    std::vector<Literal> operands = Copy(ops);
    return Literal::Tuple({Pack(std::move(operands), inst.shape().tuple_shapes(0)), std::move(*result)});
  }

  // collective-permute: every member of the domain (the partitions of this
  // replica with a channel id, else the replicas of this partition) meets;
  // each receives the value of the pair that targets it, or zeros.
  absl::StatusOr<Literal> Permute(const HloInstruction& inst, Operands ops) {
    if (ops.size() != 1) return absl::UnimplementedError("in-place collective-permute is not evaluated");
    bool cross_partition = inst.attrs().channel_id.has_value();
    int64_t count = cross_partition ? num_partitions_ : replica_count_;
    int64_t me = cross_partition ? partition_ : replica_;
    std::vector<int64_t> domain;
    for (int64_t i = 0; i < count; ++i) {
      domain.push_back(cross_partition ? replica_ * num_partitions_ + i : i * num_partitions_ + partition_);
    }
    const Shape& value_shape = inst.opcode() == HloOpcode::kCollectivePermute ? inst.shape() : inst.shape().tuple_shapes(1);
    std::string key = KeyOf(inst, domain);
    auto finish = [&](const std::vector<Contribution>& all) -> absl::StatusOr<Literal> {
      for (const auto& [source, target] : inst.attrs().source_target_pairs) {
        if (target != me) continue;
        if (source < 0 || source >= count) return absl::InvalidArgumentError(StrCat("source ", source, " out of range"));
        return WithShape(all[source][0], value_shape);
      }
      return Literal(value_shape);
    };
    absl::StatusOr<Literal> received = rendezvous_.Meet(key, count, me, Copy(ops), finish);
    if (!received.ok() || inst.opcode() == HloOpcode::kCollectivePermute) return received;
    // collective-permute-start: (operand, result, contexts...).
    Literal out(inst.shape());
    out.tuple_elements()[0] = WithShape(*ops[0], inst.shape().tuple_shapes(0));
    out.tuple_elements()[1] = std::move(*received);
    return out;
  }

  Rendezvous& rendezvous_;
  int64_t replica_;
  int64_t partition_;
  int64_t replica_count_;
  int64_t num_partitions_;
  // How often this participant has executed each collective.
  std::map<const HloInstruction*, int64_t> seq_;
};

}  // namespace

absl::StatusOr<std::vector<Literal>> EvaluateParticipants(const HloModule& module,
                                                         absl::Span<const std::vector<Literal>> args,
                                                         const MultiParticipantOptions& options) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  int64_t replicas = options.replica_count > 0 ? options.replica_count : module.config().replica_count;
  int64_t partitions = options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  int64_t n = replicas * partitions;
  if (static_cast<int64_t>(args.size()) != n) {
    return absl::InvalidArgumentError(StrCat(replicas, " replicas x ", partitions, " partitions need ", n,
                                             " argument lists, got ", args.size()));
  }
  for (int64_t d = 0; d < n; ++d) {
    if (static_cast<int64_t>(args[d].size()) != entry->num_parameters()) {
      return absl::InvalidArgumentError(StrCat("device ", d, ": the entry computation takes ",
                                               entry->num_parameters(), " arguments, got ", args[d].size()));
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      const HloInstruction* p = entry->parameter_instruction(i);
      if (!args[d][i].shape().Compatible(p->shape())) {
        return absl::InvalidArgumentError(StrCat("device ", d, ": argument ", i, " ('", p->name(), "') is ",
                                                 args[d][i].shape().ToString(false), " but the parameter is ",
                                                 p->shape().ToString(false)));
      }
    }
  }
  EvaluatorOptions evaluator = options.evaluator;
  evaluator.num_threads = 1;
  // The participants' threads share the module and must only read it: its
  // post orders are cached lazily (computed with per-instruction visit
  // marks, HloComputation::InstructionPostOrder), so compute them here,
  // before any thread walks a computation.
  for (const HloComputation* c : module.computations()) c->InstructionPostOrder();
  Rendezvous rendezvous(options.rendezvous_timeout_ms);
  std::vector<absl::StatusOr<Literal>> results(n, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (int64_t d = 0; d < n; ++d) {
    threads.emplace_back([&, d] {
      Participant participant(rendezvous, d / partitions, d % partitions, replicas, partitions);
      std::vector<const Literal*> ptrs;
      for (const Literal& a : args[d]) ptrs.push_back(&a);
      results[d] = eval::EvaluateAsParticipant(*entry, ptrs, evaluator, &participant);
      if (!results[d].ok()) rendezvous.Abort();
    });
  }
  for (std::thread& t : threads) t.join();
  // The first real failure, not the participants it aborted.
  const absl::Status* failure = nullptr;
  int64_t failed_device = -1;
  for (int64_t d = 0; d < n; ++d) {
    if (results[d].ok()) continue;
    if (failure == nullptr || (absl::IsAborted(*failure) && !absl::IsAborted(results[d].status()))) {
      failure = &results[d].status();
      failed_device = d;
    }
  }
  if (failure != nullptr) {
    return absl::Status(failure->code(), StrCat("device ", failed_device, " (replica ", failed_device / partitions,
                                                ", partition ", failed_device % partitions, "): ",
                                                failure->message()));
  }
  std::vector<Literal> out;
  for (absl::StatusOr<Literal>& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace passlab
