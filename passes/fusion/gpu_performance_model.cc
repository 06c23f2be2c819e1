#include "passes/fusion/gpu_performance_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"

namespace passlab {
namespace {

// XLA's constants (gpu_performance_model_base.h): re-reads of an operand
// that fits in L2 (L1) run this much faster than DRAM reads; compute and
// memory overlap to this degree.
constexpr double kL2CacheSpeedup = 2.5;
constexpr double kL1CacheSpeedup = 8;
constexpr double kMemoryComputeParallelism = 0.95;

// XLA:GPU's tiled transpose emitter needs both swapped dimensions of at
// least this size and this many elements in all (ir_emission_utils.h).
constexpr int64_t kMinDimensionToTransposeTiled = 16;
constexpr int64_t kMinTotalDimensionsToTransposeTiled = 64 * 128;

DeviceDescription MakeH100() {
  // NVIDIA H100 SXM5 (XLA's TestGpuDeviceInfo::H100SXMDeviceInfo and
  // xla/backends/gpu/target_config/specs/h100_sxm.txtpb): 132 SMs of 128
  // FP32 lanes at 1.98 GHz (66.9 TFLOP/s f32), 989 TFLOP/s dense f16 tensor
  // cores, 3.35 TB/s HBM3, 50 MiB L2.
  DeviceDescription d;
  d.name = "H100";
  d.memory_bandwidth = 3.35232e12;
  d.core_count = 132;
  d.fpus_per_core = 128;
  d.clock_rate_ghz = 1.98;
  d.peak_f32_flops = d.clock_rate_ghz * 1e9 * 2 * d.core_count * d.fpus_per_core;
  d.peak_f16_flops = 989e12;
  d.kernel_launch_overhead = 1e-6;  // XLA: GpuPerformanceModelBase::kKernelLaunchOverhead
  d.l2_cache_size = 50 * 1024 * 1024;
  d.l1_cache_size_per_core = 2 * 1024;  // XLA's l1_cache_size_per_SM default
  d.bytes_per_clock_per_core = 32;
  return d;
}

DeviceDescription MakeH200() {
  // NVIDIA H200 (xla/backends/gpu/target_config/specs/h200.txtpb): the
  // H100's SMs with 4.8 TB/s HBM3e.
  DeviceDescription d = MakeH100();
  d.name = "H200";
  d.memory_bandwidth = 4.8e12;
  return d;
}

DeviceDescription MakeA100() {
  // NVIDIA A100 SXM4 80GB (TestGpuDeviceInfo::A100SXMDeviceInfo): 108 SMs
  // of 64 FP32 lanes at 1.41 GHz (19.5 TFLOP/s f32), 312 TFLOP/s f16 tensor
  // cores, 2.04 TB/s HBM2e (the 40GB part: 1.56 TB/s), 40 MiB L2.
  DeviceDescription d;
  d.name = "A100";
  d.memory_bandwidth = 2.03904e12;
  d.core_count = 108;
  d.fpus_per_core = 64;
  d.clock_rate_ghz = 1.41;
  d.peak_f32_flops = d.clock_rate_ghz * 1e9 * 2 * d.core_count * d.fpus_per_core;
  d.peak_f16_flops = 312e12;
  d.kernel_launch_overhead = 1e-6;
  d.l2_cache_size = 40 * 1024 * 1024;
  d.l1_cache_size_per_core = 2 * 1024;
  d.bytes_per_clock_per_core = 32;
  return d;
}

DeviceDescription MakeA6000() {
  // NVIDIA RTX A6000 (TestGpuDeviceInfo::RTXA6000DeviceInfo, the device of
  // XLA's priority_fusion_test.cc): 84 SMs of 128 lanes at 1.41 GHz,
  // 768 GB/s GDDR6, 6 MiB L2.
  DeviceDescription d;
  d.name = "A6000";
  d.memory_bandwidth = 768.096e9;
  d.core_count = 84;
  d.fpus_per_core = 128;
  d.clock_rate_ghz = 1.41;
  d.peak_f32_flops = d.clock_rate_ghz * 1e9 * 2 * d.core_count * d.fpus_per_core;
  d.peak_f16_flops = 155e12;
  d.kernel_launch_overhead = 1e-6;
  d.l2_cache_size = 6 * 1024 * 1024;
  d.l1_cache_size_per_core = 2 * 1024;
  d.bytes_per_clock_per_core = 32;
  return d;
}

// passlab's CPU backend on the machine it is developed on: 2 cores.
// A dual-channel DDR4 desktop streams ~20 GB/s (STREAM triad); each core
// retires two 8-lane AVX2 FMAs per cycle in theory, but the emitted loops
// (vectorized by LLVM, with reassociated reductions) sustain about a
// quarter of that: ~100 GFLOP/s f32 for the two cores, so 8 effective
// lanes at ~3.1 GHz. A "launch" is one kernel call through the runtime's
// thunk (~1.5 us: argument marshalling and the thread-pool hand-off,
// measured by `passlab run` on tiny kernels).
constexpr double kCpuDramBandwidth = 20e9;
constexpr int64_t kCpuCores = 2;
constexpr int64_t kCpuLanesPerCore = 8;
constexpr double kCpuClockGhz = 3.125;
constexpr double kCpuKernelCallOverhead = 1.5e-6;
constexpr int64_t kCpuLastLevelCache = 8 * 1024 * 1024;
constexpr int64_t kCpuL1PerCore = 32 * 1024;
constexpr int64_t kCpuBytesPerClockPerCore = 16;

DeviceDescription MakeCpu() {
  DeviceDescription d;
  d.name = "cpu";
  d.memory_bandwidth = kCpuDramBandwidth;
  d.core_count = kCpuCores;
  d.fpus_per_core = kCpuLanesPerCore;
  d.clock_rate_ghz = kCpuClockGhz;
  d.peak_f32_flops = d.clock_rate_ghz * 1e9 * 2 * d.core_count * d.fpus_per_core;
  d.peak_f16_flops = d.peak_f32_flops;  // no matrix units: f16 computes as f32
  d.kernel_launch_overhead = kCpuKernelCallOverhead;
  d.l2_cache_size = kCpuLastLevelCache;
  d.l1_cache_size_per_core = kCpuL1PerCore;
  d.bytes_per_clock_per_core = kCpuBytesPerClockPerCore;
  d.threads_per_block = 8;  // one vector of work per "thread block"
  return d;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// --- Counting (GpuHloCostAnalysis).

// Flops per output element of an elementwise op: XLA counts the clock
// cycles of each op from measured profiles (hlo_op_profiles), 3 for the
// cheap ones (kDefaultFlopsPerElement); these are those profiles' rough
// sizes for f32 on sm_90.
int64_t FlopsPerElement(HloOpcode op) {
  switch (op) {
    case HloOpcode::kDivide: case HloOpcode::kRemainder: return 12;
    case HloOpcode::kSqrt: case HloOpcode::kRsqrt: case HloOpcode::kCbrt: return 8;
    case HloOpcode::kExp: case HloOpcode::kExpm1: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kTanh:
      return 24;
    case HloOpcode::kSin: case HloOpcode::kCos: case HloOpcode::kTan: case HloOpcode::kErf:
    case HloOpcode::kAcos: case HloOpcode::kAsin: case HloOpcode::kAcosh: case HloOpcode::kAsinh:
    case HloOpcode::kAtanh: case HloOpcode::kCosh: case HloOpcode::kSinh:
      return 48;
    case HloOpcode::kPower: case HloOpcode::kAtan2: return 96;
    default: return 3;
  }
}

// Flops of one application of a scalar computation (a reducer).
double ComputationFlops(const HloComputation* c) {
  if (c == nullptr) return 0;
  double flops = 0;
  for (const HloInstruction* h : c->instructions()) {
    if (h->IsElementwise()) flops += static_cast<double>(FlopsPerElement(h->opcode()));
  }
  return flops;
}

int64_t Elements(const Shape& s) {
  int64_t n = 0;
  ForEachSubshape(s, [&](const Shape& sub, const ShapeIndex&) {
    if (sub.IsArray()) n += sub.element_count();
  });
  return n;
}

int64_t Bytes(const Shape& s) {
  int64_t n = 0;
  ForEachSubshape(s, [&](const Shape& sub, const ShapeIndex&) {
    if (sub.IsArray()) n += sub.byte_size();
  });
  return n;
}

const Shape& FirstLeaf(const Shape& s) { return s.IsTuple() && !s.tuple_shapes().empty() ? FirstLeaf(s.tuple_shapes(0)) : s; }

int64_t WindowSize(const HloInstruction& h) {
  int64_t n = 1;
  for (const WindowDimension& d : h.window().dimensions) n *= d.size;
  return n;
}

// The flops of one unfused (or fused) instruction computing all its output.
double InstructionFlops(const HloInstruction& h) {
  if (h.IsElementwise()) return static_cast<double>(Elements(h.shape())) * FlopsPerElement(h.opcode());
  switch (h.opcode()) {
    case HloOpcode::kReduce: {
      const int64_t in = h.operand(0)->shape().element_count();
      const int64_t out = FirstLeaf(h.shape()).element_count();
      return static_cast<double>(std::max<int64_t>(in - out, 0)) * ComputationFlops(h.to_apply());
    }
    case HloOpcode::kReduceWindow:
      return static_cast<double>(FirstLeaf(h.shape()).element_count()) * WindowSize(h) *
             ComputationFlops(h.to_apply());
    case HloOpcode::kDot: {
      int64_t contracted = 1;
      for (int64_t d : h.attrs().dot_dnums.lhs_contracting_dimensions) contracted *= h.operand(0)->shape().dimensions(d);
      return 2.0 * h.shape().element_count() * contracted;
    }
    case HloOpcode::kConvolution: {
      // 2 * outputs * (kernel elements per output feature).
      const Shape& kernel = h.operand(1)->shape();
      int64_t out_features = 1;
      if (h.attrs().conv_dnums.has_value() && kernel.rank() > 0) {
        out_features = kernel.dimensions(h.attrs().conv_dnums->kernel_output_feature_dimension);
      }
      return 2.0 * h.shape().element_count() * kernel.element_count() / std::max<int64_t>(out_features, 1);
    }
    default:
      return 0;
  }
}

// Elements of operand `i` read per element of it (HloCostAnalysis with
// count_multiple_input_accesses).
double OperandUtilization(const HloInstruction& h, int64_t i) {
  const double in = static_cast<double>(std::max<int64_t>(Elements(h.operand(i)->shape()), 1));
  const double out = static_cast<double>(Elements(h.shape()));
  switch (h.opcode()) {
    case HloOpcode::kSlice: return out / in;
    case HloOpcode::kDynamicSlice: case HloOpcode::kGather: return i == 0 ? out / in : 1.0;
    case HloOpcode::kBroadcast: return out / in;
    case HloOpcode::kReduceWindow: return i == 0 ? out * WindowSize(h) / in : 1.0;
    case HloOpcode::kDynamicUpdateSlice:
      return i == 0 ? (out - Elements(h.operand(1)->shape())) / std::max(out, 1.0) : 1.0;
    default: return 1.0;
  }
}

bool PassesElementwise(const HloInstruction& h) {
  if (h.IsElementwise() || h.opcode() == HloOpcode::kTuple || h.opcode() == HloOpcode::kGetTupleElement) return true;
  return h.opcode() == HloOpcode::kBitcast && h.shape().dimensions() == h.operand(0)->shape().dimensions();
}

std::unique_ptr<KernelCost> ComputeCost(const HloInstruction& kernel) {
  auto cost = std::make_unique<KernelCost>();
  cost->bytes_written = Bytes(kernel.shape());
  if (kernel.opcode() != HloOpcode::kFusion) {
    cost->flops = InstructionFlops(kernel);
    for (int64_t i = 0; i < kernel.operand_count(); ++i) cost->operand_utilization.push_back(OperandUtilization(kernel, i));
    return cost;
  }
  // XLA: GpuHloCostAnalysis::FusionCalculateUtilizations. Users before
  // operands; an elementwise use passes its roots on, any other use makes
  // the operand a new root with the utilization it implies.
  const HloComputation* body = kernel.fused_instructions_computation();
  std::vector<HloInstruction*> order = body->MakeInstructionPostOrder();
  std::reverse(order.begin(), order.end());
  const HloInstruction* root = body->root_instruction();
  absl::flat_hash_map<const HloInstruction*, int64_t> root_ir;
  absl::flat_hash_map<const HloInstruction*, double> utilization;
  cost->root_utilization[root] = 1.0;
  root_ir[root] = 1;
  cost->elementwise_roots[root].insert(root);
  cost->ir_size = 0;
  for (const HloInstruction* h : order) {
    double u = 0;
    int64_t emitted = 0;
    for (const HloInstruction* r : cost->elementwise_roots[h]) {
      u += cost->root_utilization[r];
      emitted += root_ir[r];
    }
    utilization[h] = u;
    cost->times_emitted[h] = emitted;
    cost->flops += u * InstructionFlops(*h);
    cost->ir_size += emitted;
    for (int64_t i = 0; i < h->operand_count(); ++i) {
      const HloInstruction* operand = h->operand(i);
      if (PassesElementwise(*h)) {
        for (const HloInstruction* r : cost->elementwise_roots[h]) cost->elementwise_roots[operand].insert(r);
        continue;
      }
      cost->elementwise_roots[operand].insert(operand);
      double ou = u * OperandUtilization(*h, i);
      const int64_t elements = Elements(operand->shape());
      ou = elements == 0 ? 0 : std::ceil(ou * elements) / elements;
      cost->root_utilization[operand] += ou;
      root_ir[operand] += emitted;
    }
  }
  for (int64_t i = 0; i < kernel.operand_count(); ++i) {
    cost->operand_utilization.push_back(utilization[kernel.fused_parameter(i)]);
  }
  return cost;
}

double CommonElementwiseUtilization(const KernelCost& cost, const HloInstruction* a, const HloInstruction* b) {
  auto ia = cost.elementwise_roots.find(a);
  auto ib = cost.elementwise_roots.find(b);
  if (ia == cost.elementwise_roots.end() || ib == cost.elementwise_roots.end()) return 0;
  double sum = 0;
  for (const HloInstruction* r : ia->second) {
    if (ib->second.contains(r)) sum += cost.root_utilization.at(r);
  }
  return sum;
}

int64_t OperandIndex(const HloInstruction& h, const HloInstruction* operand) {
  for (int64_t i = 0; i < h.operand_count(); ++i) {
    if (h.operand(i) == operand) return i;
  }
  return -1;
}

// --- Heroes (HloFusionAnalysis), over a kernel that may be a producer fused
// into a consumer.

struct KernelView {
  const HloInstruction* producer;  // may be null
  const HloInstruction* consumer;
};

const HloInstruction* KernelRoot(const HloInstruction& h) {
  return h.opcode() == HloOpcode::kFusion ? h.fused_expression_root() : &h;
}

// Operand `i` of `h` inside the kernel, or nullptr when it comes from
// outside.
const HloInstruction* KernelOperand(const HloInstruction* h, int64_t i, const KernelView& v) {
  const HloInstruction* operand = h->operand(i);
  if (h == v.consumer) return v.producer != nullptr && operand == v.producer ? KernelRoot(*v.producer) : nullptr;
  if (h == v.producer) return nullptr;
  if (operand->opcode() != HloOpcode::kParameter) return operand;
  if (v.producer != nullptr && v.consumer->opcode() == HloOpcode::kFusion &&
      h->parent() == v.consumer->fused_instructions_computation() &&
      v.consumer->operand(operand->parameter_number()) == v.producer) {
    return KernelRoot(*v.producer);
  }
  return nullptr;
}

bool IsBitcastTranspose(const HloInstruction& h) {
  std::vector<int64_t> moved;
  for (int64_t d : h.dimensions()) {
    if (h.operand(0)->shape().dimensions(d) != 1) moved.push_back(d);
  }
  return std::is_sorted(moved.begin(), moved.end());
}

// XLA: IsIntermediate(instr, 1): a unary elementwise op, or a bitcast-like
// op.
bool IsIntermediate(const HloInstruction& h) {
  if (h.operand_count() != 1) return false;
  if (h.IsElementwise()) {
    return h.opcode() != HloOpcode::kCopy || h.shape() == h.operand(0)->shape();
  }
  if (h.opcode() == HloOpcode::kBitcast || h.opcode() == HloOpcode::kReshape) return true;
  return h.opcode() == HloOpcode::kTranspose && IsBitcastTranspose(h);
}

bool IsTiledTranspose(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kTranspose || !h.shape().IsArray()) return false;
  const int64_t rank = h.shape().rank();
  if (rank < 2 || IsBitcastTranspose(h)) return false;
  const std::vector<int64_t>& perm = h.dimensions();
  if (perm[rank - 1] == rank - 1) return false;  // the minor dimension stays
  const Shape& in = h.operand(0)->shape();
  return in.dimensions(rank - 1) >= kMinDimensionToTransposeTiled &&
         in.dimensions(perm[rank - 1]) >= kMinDimensionToTransposeTiled &&
         in.element_count() >= kMinTotalDimensionsToTransposeTiled;
}

const HloInstruction* FindHero(const HloInstruction* root, const KernelView& v) {
  const HloInstruction* h = root;
  while (IsIntermediate(*h)) {
    const HloInstruction* next = KernelOperand(h, 0, v);
    if (next == nullptr) break;
    h = next;
  }
  if (h->opcode() == HloOpcode::kReduce && h->shape().IsArray()) return h;
  if (IsTiledTranspose(*h) || h->opcode() == HloOpcode::kConcatenate) return h;
  return root;
}

void KernelRoots(const HloInstruction* h, std::vector<const HloInstruction*>& out) {
  if (h->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : h->operands()) KernelRoots(o, out);
    return;
  }
  out.push_back(h);
}

struct HeroAnalysis {
  KernelEmitterKind kind = KernelEmitterKind::kLoop;
  const HloInstruction* hero = nullptr;
  const HloInstruction* first_root = nullptr;
};

HeroAnalysis AnalyzeKernel(const HloInstruction* producer, const HloInstruction& consumer) {
  KernelView v{producer, &consumer};
  std::vector<const HloInstruction*> roots;
  KernelRoots(KernelRoot(consumer), roots);
  HeroAnalysis a;
  a.first_root = roots.front();
  std::vector<const HloInstruction*> heroes;
  for (const HloInstruction* r : roots) heroes.push_back(FindHero(r, v));
  for (const HloInstruction* h : heroes) {
    if (h->opcode() == HloOpcode::kReduce) {
      a.kind = KernelEmitterKind::kReduction;
      a.hero = h;
      return a;
    }
  }
  for (const HloInstruction* h : heroes) {
    if (IsTiledTranspose(*h)) {
      a.kind = KernelEmitterKind::kTranspose;
      a.hero = h;
      return a;
    }
  }
  if (roots.size() == 1 && heroes[0]->opcode() == HloOpcode::kConcatenate && heroes[0]->operand_count() <= 4) {
    a.kind = KernelEmitterKind::kConcatenate;
    a.hero = heroes[0];
  }
  return a;
}

// --- Times (GpuPerformanceModelBase).

struct Launch {
  int64_t blocks = 1;
  int64_t threads_per_block = 1;
};

Launch EstimateLaunch(const HeroAnalysis& a, const DeviceDescription& d) {
  Launch l;
  if (a.kind == KernelEmitterKind::kReduction) {
    // A warp (up to 32 threads) per output element, 256 threads a block.
    const int64_t out = std::max<int64_t>(FirstLeaf(a.hero->shape()).element_count(), 1);
    const int64_t reduced = std::max<int64_t>(a.hero->operand(0)->shape().element_count() / out, 1);
    const int64_t threads = out * std::min<int64_t>(reduced, 32);
    l.threads_per_block = std::min<int64_t>(threads, std::max<int64_t>(d.threads_per_block, 1) * 2);
    l.blocks = (threads + l.threads_per_block - 1) / l.threads_per_block;
    return l;
  }
  const int64_t elements = std::max<int64_t>(FirstLeaf(a.first_root->shape()).element_count(), 1);
  const int64_t unroll = elements >= d.core_count * d.threads_per_block * 4 ? 4 : 1;
  l.threads_per_block = std::min<int64_t>(d.threads_per_block, elements);
  l.blocks = (elements + l.threads_per_block * unroll - 1) / (l.threads_per_block * unroll);
  return l;
}

double ComputeTime(const DeviceDescription& d, double flops, const Launch& l) {
  const double lanes = static_cast<double>(std::min(l.blocks, d.core_count)) *
                       static_cast<double>(std::min(l.threads_per_block, d.fpus_per_core));
  return flops / (d.clock_rate_ghz * 1e9 * 2 * std::max(lanes, 1.0));
}

double AdjustBandwidth(const DeviceDescription& d, double bandwidth, int64_t blocks) {
  return std::min(bandwidth, static_cast<double>(blocks) * d.clock_rate_ghz * 1e9 * d.bytes_per_clock_per_core);
}

double ReadTimeWithDramHeuristic(const DeviceDescription& d, int64_t blocks, int64_t net, int64_t total,
                                 double utilization_rate) {
  double dram = d.memory_bandwidth * utilization_rate;
  double rest = d.memory_bandwidth;
  if (net < d.l2_cache_size) {
    rest *= kL2CacheSpeedup;
    if (net < d.l1_cache_size_per_core * d.core_count) rest *= kL1CacheSpeedup;
  } else {
    rest *= utilization_rate;
  }
  dram = AdjustBandwidth(d, dram, blocks);
  rest = AdjustBandwidth(d, rest, blocks);
  const int64_t from_dram = std::min(net, total);
  return static_cast<double>(from_dram) / dram + static_cast<double>(total - from_dram) / rest;
}

double Combine(double compute, double memory) {
  return compute + memory - std::min(compute, memory) * kMemoryComputeParallelism;
}

// Whether a loop kernel reads `operand` through a real transpose (so its
// reads are not coalesced).
bool ReadsThroughTranspose(const HloInstruction& kernel, const HloInstruction* operand) {
  auto transposing = [](const HloInstruction* u) {
    return u->opcode() == HloOpcode::kTranspose && !IsBitcastTranspose(*u);
  };
  if (kernel.opcode() != HloOpcode::kFusion) return transposing(&kernel);
  for (int64_t i = 0; i < kernel.operand_count(); ++i) {
    if (kernel.operand(i) != operand) continue;
    for (const HloInstruction* u : kernel.fused_parameter(i)->users()) {
      if (transposing(u)) return true;
    }
  }
  return false;
}

double CoalescingRate(const DeviceDescription& d, const Shape& shape, bool coalesced) {
  if (coalesced || !shape.IsArray()) return 1.0;
  return std::min(1.0, static_cast<double>(shape.byte_size() / std::max<int64_t>(shape.element_count(), 1)) /
                           static_cast<double>(d.dram_transaction_bytes));
}

}  // namespace

const std::vector<DeviceDescription>& KnownDevices() {
  static const auto* devices =
      new std::vector<DeviceDescription>{MakeH100(), MakeH200(), MakeA100(), MakeA6000(), MakeCpu()};
  return *devices;
}

absl::StatusOr<DeviceDescription> DeviceByName(std::string_view name) {
  std::vector<std::string> names;
  for (const DeviceDescription& d : KnownDevices()) {
    if (Lower(d.name) == Lower(name)) return d;
    names.push_back(d.name);
  }
  return absl::InvalidArgumentError(
      StrCat("unknown device '", std::string(name), "'; known devices: ", Join(names, ", ")));
}

KernelEmitterKind EmitterKindOf(const HloInstruction* producer, const HloInstruction& consumer) {
  return AnalyzeKernel(producer, consumer).kind;
}

const HloInstruction* ReductionHeroOf(const HloInstruction* producer, const HloInstruction& consumer) {
  HeroAnalysis a = AnalyzeKernel(producer, consumer);
  return a.kind == KernelEmitterKind::kReduction ? a.hero : nullptr;
}

const KernelCost& GpuPerformanceModel::Cost(const HloInstruction& instruction) {
  auto it = costs_.find(&instruction);
  if (it == costs_.end()) it = costs_.emplace(&instruction, ComputeCost(instruction)).first;
  return *it->second;
}

void GpuPerformanceModel::Invalidate(const HloInstruction* instruction) {
  costs_.erase(instruction);
  estimates_.erase(instruction);
}

const KernelEstimate& GpuPerformanceModel::EstimateRunTimeForInstruction(const HloInstruction& instruction) {
  auto it = estimates_.find(&instruction);
  if (it != estimates_.end()) return it->second;
  const KernelCost& cost = Cost(instruction);
  HeroAnalysis analysis = AnalyzeKernel(nullptr, instruction);
  Launch launch = EstimateLaunch(analysis, device_);
  KernelEstimate e;
  e.flops = std::llround(cost.flops);
  e.bytes_written = cost.bytes_written;
  const bool dot = instruction.opcode() == HloOpcode::kDot || instruction.opcode() == HloOpcode::kConvolution;
  if (dot) {
    PrimitiveType t = instruction.operand(0)->shape().element_type();
    bool half = t == PrimitiveType::kF16 || t == PrimitiveType::kBF16;
    e.compute_time = cost.flops / (half ? device_.peak_f16_flops : device_.peak_f32_flops);
  } else {
    e.compute_time = ComputeTime(device_, cost.flops, launch);
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    const HloInstruction* operand = instruction.operand(i);
    if (OperandIndex(instruction, operand) != i) continue;  // counted at its first slot
    const int64_t size = Bytes(operand->shape());
    double utilization = 0;
    for (int64_t j = i; j < instruction.operand_count(); ++j) {
      if (instruction.operand(j) == operand) utilization += cost.operand_utilization[j];
    }
    const int64_t total = std::llround(size * utilization);
    const int64_t net = std::min(size, total);
    e.bytes_read += total;
    const bool coalesced =
        analysis.kind != KernelEmitterKind::kLoop || !ReadsThroughTranspose(instruction, operand);
    e.read_time += ReadTimeWithDramHeuristic(device_, launch.blocks, net, total,
                                             CoalescingRate(device_, operand->shape(), coalesced));
  }
  e.write_time = static_cast<double>(e.bytes_written) / device_.memory_bandwidth;
  e.exec_time = Combine(e.compute_time, e.read_time + e.write_time);
  return estimates_.emplace(&instruction, e).first->second;
}

double GpuPerformanceModel::EstimateRunTimeForFusion(const HloInstruction& producer, const HloInstruction& consumer) {
  const KernelEstimate producer_estimate = EstimateRunTimeForInstruction(producer);
  const KernelEstimate consumer_estimate = EstimateRunTimeForInstruction(consumer);
  const KernelCost& producer_cost = Cost(producer);
  const KernelCost& consumer_cost = Cost(consumer);
  double utilization_by_consumer = 0;
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (consumer.operand(i) == &producer) utilization_by_consumer += consumer_cost.operand_utilization[i];
  }
  HeroAnalysis analysis = AnalyzeKernel(&producer, consumer);
  Launch launch = EstimateLaunch(analysis, device_);
  const double flops = producer_cost.flops * utilization_by_consumer + consumer_cost.flops;
  const double compute_time = ComputeTime(device_, flops, launch);

  // The fused kernel's operands: the consumer's other operands and the
  // producer's, each once.
  std::vector<const HloInstruction*> operands;
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* o : consumer.operands()) {
    if (o != &producer && seen.insert(o).second) operands.push_back(o);
  }
  for (const HloInstruction* o : producer.operands()) {
    if (seen.insert(o).second) operands.push_back(o);
  }
  auto bytes_accessed = [&](const HloInstruction& kernel, const KernelCost& cost, const HloInstruction* operand) {
    double u = 0;
    for (int64_t i = 0; i < kernel.operand_count(); ++i) {
      if (kernel.operand(i) == operand) u += cost.operand_utilization[i];
    }
    return std::llround(Bytes(operand->shape()) * u);
  };
  // XLA: GetCommonUtilization — the part of `operand` the producer and the
  // consumer read at the same elements (read once in the fused kernel).
  auto common_utilization = [&](const HloInstruction* operand) -> double {
    const int64_t producer_index = OperandIndex(producer, operand);
    if (producer_index < 0 || !consumer.IsUserOf(operand)) return 0;
    const bool elementwise_from_root =
        producer.IsElementwise() ||
        (producer.opcode() == HloOpcode::kFusion &&
         CommonElementwiseUtilization(producer_cost, producer.fused_parameter(producer_index),
                                      producer.fused_expression_root()) == 1.0);
    if (!elementwise_from_root) return 0;
    if (consumer.opcode() == HloOpcode::kFusion) {
      return CommonElementwiseUtilization(consumer_cost, consumer.fused_parameter(OperandIndex(consumer, operand)),
                                          consumer.fused_parameter(OperandIndex(consumer, &producer)));
    }
    return consumer.IsElementwise() ? 1.0 : 0.0;
  };
  double read_time = 0;
  for (const HloInstruction* operand : operands) {
    const int64_t size = Bytes(operand->shape());
    const int64_t total = std::llround(bytes_accessed(producer, producer_cost, operand) * utilization_by_consumer) +
                          bytes_accessed(consumer, consumer_cost, operand) -
                          std::llround(size * common_utilization(operand));
    const int64_t net = std::min(size, total);
    const bool coalesced = analysis.kind != KernelEmitterKind::kLoop ||
                           (!ReadsThroughTranspose(producer, operand) && !ReadsThroughTranspose(consumer, operand));
    read_time += ReadTimeWithDramHeuristic(device_, launch.blocks, net, std::max<int64_t>(total, 0),
                                           CoalescingRate(device_, operand->shape(), coalesced));
  }
  return Combine(compute_time, read_time + consumer_estimate.write_time);
}

GpuPerformanceModel::RunTimes GpuPerformanceModel::EstimateRunTimes(const HloInstruction& producer,
                                                                    absl::Span<HloInstruction* const> consumers) {
  RunTimes t;
  const double launch = device_.kernel_launch_overhead;
  t.time_unfused = launch * static_cast<double>(consumers.size() + 1) + EstimateRunTimeForInstruction(producer).exec_time;
  t.time_fused = launch * static_cast<double>(consumers.size());
  for (const HloInstruction* consumer : consumers) {
    t.time_unfused += EstimateRunTimeForInstruction(*consumer).exec_time;
    t.time_fused += EstimateRunTimeForFusion(producer, *consumer);
  }
  return t;
}

bool GpuPerformanceModel::ProducerConsumerMergedTooLarge(const HloInstruction& producer,
                                                         const HloInstruction& consumer) {
  int64_t replication = 1;
  if (consumer.opcode() == HloOpcode::kFusion) {
    const int64_t i = OperandIndex(consumer, &producer);
    if (i >= 0) replication = Cost(consumer).times_emitted.at(consumer.fused_parameter(i));
  }
  return Cost(producer).ir_size * replication + Cost(consumer).ir_size > kMaxIRSize;
}

double EstimateKernelTime(const HloInstruction& fusion_or_op, const DeviceDescription& device) {
  GpuPerformanceModel model(device);
  return model.EstimateRunTimeForInstruction(fusion_or_op).exec_time + device.kernel_launch_overhead;
}

}  // namespace passlab
