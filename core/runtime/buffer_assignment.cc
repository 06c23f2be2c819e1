#include "core/runtime/buffer_assignment.h"

#include <algorithm>

#include "core/ir/file_util.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/runtime/host_buffer.h"

namespace passlab {
namespace {

int64_t LeafCount(const Shape& s) {
  if (!s.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& e : s.tuple_shapes()) n += LeafCount(e);
  return n;
}

// The depth-first ordinal of the leaf at `index` (the first leaf under it
// when it names a tuple), or -1 when the index is invalid.
int64_t LeafOrdinal(const Shape& s, absl::Span<const int64_t> index) {
  int64_t ordinal = 0;
  const Shape* cur = &s;
  for (int64_t i : index) {
    if (!cur->IsTuple() || i < 0 || i >= cur->tuple_shapes_size()) return -1;
    for (int64_t k = 0; k < i; ++k) ordinal += LeafCount(cur->tuple_shapes(k));
    cur = &cur->tuple_shapes(i);
  }
  return ordinal;
}

std::vector<Shape> Leaves(const Shape& shape) {
  std::vector<Shape> out;
  ForEachSubshape(shape, [&](const Shape& s, const ShapeIndex&) {
    if (!s.IsTuple()) out.push_back(s);
  });
  return out;
}

int64_t LeafBytes(const Shape& s) { return BufferBytes(s); }

int64_t AlignUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// The operand an in-place op may overwrite with its result's leaf 0, or -1:
// the whole array result, or element 0 of a tuple result (a gemm's result
// beside its workspace).
int64_t InPlaceOperand(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kDynamicUpdateSlice) return 0;
  if (inst.opcode() == HloOpcode::kScatter) return inst.operand_count() == 3 ? 0 : -1;
  if (inst.opcode() == HloOpcode::kCustomCall || inst.opcode() == HloOpcode::kFusion) {
    const Shape& shape = inst.shape();
    for (const OutputOperandAlias& a : inst.attrs().output_to_operand_aliasing) {
      if (!a.operand_index.empty() || a.operand < 0 || a.operand >= inst.operand_count() ||
          !inst.operand(a.operand)->shape().IsArray()) {
        continue;
      }
      if (a.output_index.empty() && shape.IsArray()) return a.operand;
      if (a.output_index == ShapeIndex{0} && shape.IsTuple() && shape.tuple_shapes_size() > 0 &&
          shape.tuple_shapes(0).IsArray()) {
        return a.operand;
      }
    }
  }
  return -1;
}

}  // namespace

int64_t BufferAssignment::NewBuffer(const HloInstruction* inst, int64_t leaf, int64_t size, BufferSlice slice) {
  Buffer b;
  b.id = static_cast<int64_t>(buffers_.size());
  b.defining = inst;
  b.defining_leaf = leaf;
  b.size = size;
  b.def_step = step_.at(inst);
  b.slice = slice;
  b.slice.size = size;
  buffers_.push_back(b);
  holders_.emplace_back();
  return b.id;
}

bool BufferAssignment::Reads(const HloInstruction* user, const HloInstruction* holder, int64_t buffer) const {
  // A get-tuple-element reads only the leaves of its element.
  if (user->opcode() != HloOpcode::kGetTupleElement || !holder->shape().IsTuple()) return true;
  const std::vector<int64_t>& leaves = leaf_buffers_.at(holder);
  int64_t first = LeafOrdinal(holder->shape(), {user->tuple_index()});
  if (first < 0) return true;
  int64_t count = LeafCount(user->shape());
  for (int64_t i = first; i < first + count && i < static_cast<int64_t>(leaves.size()); ++i) {
    if (leaves[i] == buffer) return true;
  }
  return false;
}

bool BufferAssignment::CanOverwrite(int64_t buffer, const HloInstruction* writer,
                                    const BufferAssignmentOptions& options) const {
  const Buffer& b = buffers_[buffer];
  if (b.slice.kind == BufferSlice::Kind::kParameter) {
    bool donated = false;
    for (const BufferDonor& d : options.donors) {
      const HloInstruction* p = b.defining;
      if (d.parameter_number == p->parameter_number() &&
          LeafOrdinal(p->shape(), d.parameter_index) == b.defining_leaf) {
        donated = true;
      }
    }
    if (!donated) return false;
  } else if (b.slice.kind != BufferSlice::Kind::kArena) {
    return false;
  }
  int64_t step = step_.at(writer);
  for (const HloInstruction* h : holders_[buffer]) {
    if (h->IsRoot()) return false;  // the old value is an output
    for (const HloInstruction* user : h->users()) {
      if (!Reads(user, h, buffer)) continue;
      if (user == writer) {
        // Read only as the overwritten operand (a while's init).
        int64_t target = writer->opcode() == HloOpcode::kWhile ? 0 : InPlaceOperand(*writer);
        for (int64_t i = 0; i < writer->operand_count(); ++i) {
          if (i != target && writer->operand(i) == h) return false;
        }
        continue;
      }
      auto it = step_.find(user);
      if (it == step_.end() || it->second >= step) return false;
    }
  }
  return true;
}

absl::Status BufferAssignment::Assign(const HloComputation& computation, const BufferAssignmentOptions& options) {
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    step_[inst] = static_cast<int64_t>(schedule_.size());
    schedule_.push_back(inst);
  }
  const HloInstruction* root = computation.root_instruction();
  if (root == nullptr) return absl::InvalidArgumentError(StrCat("computation ", computation.name(), " has no root"));
  for (const HloInstruction* inst : schedule_) {
    std::vector<Shape> leaves = Leaves(inst->shape());
    std::vector<int64_t>& ids = leaf_buffers_[inst];
    HloOpcode op = inst->opcode();
    if (op == HloOpcode::kParameter) {
      for (size_t i = 0; i < leaves.size(); ++i) {
        BufferSlice s;
        s.kind = BufferSlice::Kind::kParameter;
        s.parameter = inst->parameter_number();
        s.parameter_leaf = static_cast<int64_t>(i);
        ids.push_back(NewBuffer(inst, i, LeafBytes(leaves[i]), s));
        parameter_bytes_ += LeafBytes(leaves[i]);
      }
    } else if (op == HloOpcode::kConstant) {
      for (size_t i = 0; i < leaves.size(); ++i) {
        BufferSlice s;
        s.kind = BufferSlice::Kind::kConstant;
        s.constant = inst;
        s.constant_leaf = static_cast<int64_t>(i);
        ids.push_back(NewBuffer(inst, i, LeafBytes(leaves[i]), s));
        constant_bytes_ += LeafBytes(leaves[i]);
      }
    } else if (op == HloOpcode::kTuple) {
      for (const HloInstruction* op : inst->operands()) {
        const std::vector<int64_t>& o = leaf_buffers_.at(op);
        ids.insert(ids.end(), o.begin(), o.end());
      }
    } else if (op == HloOpcode::kGetTupleElement) {
      const std::vector<int64_t>& o = leaf_buffers_.at(inst->operand(0));
      int64_t first = LeafOrdinal(inst->operand(0)->shape(), {inst->tuple_index()});
      if (first < 0) return absl::InvalidArgumentError(StrCat(inst->name(), ": tuple index out of range"));
      ids.assign(o.begin() + first, o.begin() + first + static_cast<int64_t>(leaves.size()));
    } else if (op == HloOpcode::kBitcast || op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kDomain ||
               op == HloOpcode::kAddDependency) {
      // The operand's storage under another name (add-dependency: operand 0).
      ids = leaf_buffers_.at(inst->operand(0));
    } else if (op == HloOpcode::kWhile) {
      // The loop state lives in its init's buffers when nothing reads them
      // after the loop starts and each leaf has its own buffer (copy
      // insertion arranges both); the loop then starts without copying.
      const std::vector<int64_t>& init = leaf_buffers_.at(inst->operand(0));
      bool aliased = false;
      for (size_t i = 0; i < leaves.size(); ++i) {
        int64_t b = i < init.size() ? init[i] : -1;
        bool own = b >= 0 && std::count(init.begin(), init.end(), b) == 1;
        if (own && LeafBytes(leaves[i]) > 0 && buffers_[b].size == LeafBytes(leaves[i]) &&
            CanOverwrite(b, inst, options)) {
          ids.push_back(b);
          aliased = true;
          overwrites_parameters_ |= buffers_[b].slice.kind == BufferSlice::Kind::kParameter;
          continue;
        }
        BufferSlice s;
        s.kind = LeafBytes(leaves[i]) > 0 ? BufferSlice::Kind::kArena : BufferSlice::Kind::kNone;
        ids.push_back(NewBuffer(inst, i, LeafBytes(leaves[i]), s));
      }
      if (aliased) in_place_.push_back(inst);
    } else {
      int64_t target = InPlaceOperand(*inst);
      if (target >= 0 && target < inst->operand_count() && !leaves.empty()) {
        int64_t b = leaf_buffers_.at(inst->operand(target))[0];
        if (buffers_[b].size == LeafBytes(leaves[0]) && CanOverwrite(b, inst, options)) {
          ids.push_back(b);
          in_place_.push_back(inst);
          overwrites_parameters_ |= buffers_[b].slice.kind == BufferSlice::Kind::kParameter;
        }
      }
      for (size_t i = ids.size(); i < leaves.size(); ++i) {
        BufferSlice s;
        s.kind = LeafBytes(leaves[i]) > 0 ? BufferSlice::Kind::kArena : BufferSlice::Kind::kNone;
        ids.push_back(NewBuffer(inst, i, LeafBytes(leaves[i]), s));
      }
    }
    for (int64_t id : ids) {
      if (holders_[id].empty() || holders_[id].back() != inst) holders_[id].push_back(inst);
    }
  }
  // Liveness.
  int64_t end = static_cast<int64_t>(schedule_.size());
  for (Buffer& b : buffers_) {
    b.last_use_step = b.def_step;
    for (const HloInstruction* h : holders_[b.id]) {
      b.last_use_step = std::max(b.last_use_step, step_.at(h));
      if (h == root) b.live_out = true;
      for (const HloInstruction* user : h->users()) {
        if (!Reads(user, h, b.id)) continue;
        auto it = step_.find(user);
        if (it != step_.end()) b.last_use_step = std::max(b.last_use_step, it->second);
      }
    }
    if (b.live_out) b.last_use_step = end;
  }
  // Donation: output leaves placed in dead parameters' buffers.
  const std::vector<int64_t>& root_ids = leaf_buffers_.at(root);
  for (const InputOutputAlias& a : options.output_aliases) {
    int64_t out_leaf = LeafOrdinal(root->shape(), a.output_index);
    if (out_leaf < 0 || out_leaf >= static_cast<int64_t>(root_ids.size())) {
      return absl::InvalidArgumentError(StrCat("input_output_alias: output index ", ShapeIndexToString(a.output_index),
                                               " is not a leaf of ", root->shape().ToString()));
    }
    if (a.parameter_number < 0 || a.parameter_number >= computation.num_parameters()) {
      return absl::InvalidArgumentError(StrCat("input_output_alias: no parameter ", a.parameter_number));
    }
    const HloInstruction* param = computation.parameter_instruction(a.parameter_number);
    int64_t param_leaf = LeafOrdinal(param->shape(), a.parameter_index);
    if (param_leaf < 0 || param_leaf >= static_cast<int64_t>(leaf_buffers_.at(param).size())) {
      return absl::InvalidArgumentError(
          StrCat("input_output_alias: parameter index ", ShapeIndexToString(a.parameter_index), " is not a leaf"));
    }
    Buffer& out = buffers_[root_ids[out_leaf]];
    const Buffer& p = buffers_[leaf_buffers_.at(param)[param_leaf]];
    if (out.id == p.id || out.slice.kind != BufferSlice::Kind::kArena || out.size != p.size ||
        p.last_use_step >= out.def_step) {
      continue;
    }
    int64_t size = out.size;
    out.slice = p.slice;
    out.slice.size = size;
    overwrites_parameters_ |= p.slice.kind == BufferSlice::Kind::kParameter;
  }
  // Arena offsets: first fit in schedule order; space is free after the
  // buffer's last use.
  std::vector<Buffer*> arena;
  for (Buffer& b : buffers_) {
    if (b.slice.kind == BufferSlice::Kind::kArena) arena.push_back(&b);
  }
  std::stable_sort(arena.begin(), arena.end(),
                   [](const Buffer* a, const Buffer* b) { return a->def_step < b->def_step; });
  std::vector<const Buffer*> live;  // sorted by offset
  for (Buffer* b : arena) {
    total_bytes_ += b->size;
    live.erase(
        std::remove_if(live.begin(), live.end(), [&](const Buffer* l) { return l->last_use_step < b->def_step; }),
        live.end());
    int64_t size = AlignUp(b->size, options.alignment), offset = 0;
    for (const Buffer* l : live) {
      if (l->slice.offset - offset >= size) break;
      offset = std::max(offset, AlignUp(l->slice.offset + l->slice.size, options.alignment));
    }
    b->slice.offset = offset;
    arena_bytes_ = std::max(arena_bytes_, offset + size);
    live.insert(std::upper_bound(live.begin(), live.end(), b,
                                 [](const Buffer* x, const Buffer* y) { return x->slice.offset < y->slice.offset; }),
                b);
  }
  // Peak: most arena bytes live at one step.
  std::vector<int64_t> delta(schedule_.size() + 2, 0);
  for (const Buffer* b : arena) {
    delta[b->def_step] += b->size;
    delta[b->last_use_step + 1] -= b->size;
  }
  int64_t live_bytes = 0;
  for (int64_t d : delta) {
    live_bytes += d;
    peak_live_bytes_ = std::max(peak_live_bytes_, live_bytes);
  }
  for (const HloInstruction* inst : schedule_) {
    std::vector<BufferSlice>& slices = leaf_slices_[inst];
    for (int64_t id : leaf_buffers_.at(inst)) slices.push_back(buffers_[id].slice);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> BufferAssignment::Run(const HloComputation& computation,
                                                                        BufferAssignmentOptions options) {
  if (options.alignment < 1) return absl::InvalidArgumentError("buffer alignment must be positive");
  std::unique_ptr<BufferAssignment> a(new BufferAssignment());
  RETURN_IF_ERROR(a->Assign(computation, options));
  return a;
}

BufferAssignmentOptions BufferAssignmentOptions::ForModule(const HloModuleConfig& config) {
  BufferAssignmentOptions options;
  options.donors = config.buffer_donor;
  options.output_aliases = config.input_output_alias;
  for (const InputOutputAlias& a : config.input_output_alias) {
    options.donors.push_back(BufferDonor{a.parameter_number, a.parameter_index});
  }
  return options;
}

absl::StatusOr<std::unique_ptr<BufferAssignment>> BufferAssignment::ForEntry(const HloModule& module) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  return Run(*module.entry_computation(), BufferAssignmentOptions::ForModule(module.config()));
}

const std::vector<BufferSlice>& BufferAssignment::LeafSlices(const HloInstruction* inst) const {
  static const std::vector<BufferSlice>* empty = new std::vector<BufferSlice>();
  auto it = leaf_slices_.find(inst);
  return it == leaf_slices_.end() ? *empty : it->second;
}

const BufferAssignment::Buffer& BufferAssignment::BufferAt(const HloInstruction* inst, int64_t leaf) const {
  return buffers_[leaf_buffers_.at(inst)[leaf]];
}

bool BufferAssignment::IsInPlace(const HloInstruction* inst) const {
  return std::find(in_place_.begin(), in_place_.end(), inst) != in_place_.end();
}

std::string BufferAssignment::ToString() const {
  std::string out =
      StrCat("arena ", FormatBytes(arena_bytes_), " (peak live ", FormatBytes(peak_live_bytes_), ", ",
             FormatBytes(total_bytes_), " without reuse), parameters ", FormatBytes(parameter_bytes_), ", constants ",
             FormatBytes(constant_bytes_), "\n");
  for (const Buffer& b : buffers_) {
    std::string where;
    switch (b.slice.kind) {
      case BufferSlice::Kind::kNone: where = "none"; break;
      case BufferSlice::Kind::kArena: where = StrCat("arena+", b.slice.offset); break;
      case BufferSlice::Kind::kParameter:
        where = StrCat("param ", b.slice.parameter, ".", b.slice.parameter_leaf);
        break;
      case BufferSlice::Kind::kConstant: where = "constant"; break;
    }
    StrAppend(&out, "  #", b.id, " ", b.defining->name(), "[", b.defining_leaf, "] ", b.size, " B @ ", where, " live [",
              b.def_step, ", ", b.last_use_step, "]", b.live_out ? " out" : "", "\n");
  }
  return out;
}

}  // namespace passlab
