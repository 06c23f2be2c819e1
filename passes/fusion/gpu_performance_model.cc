#include "passes/fusion/gpu_performance_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>
#include <numeric>
#include <optional>

#include "core/ir/hlo_computation.h"
#include "core/ir/str_util.h"
#include "passes/gpu/reduction_utils.h"

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
constexpr int64_t kMinDimensionToTransposeTiled2 = 8;
constexpr int64_t kMinTotalDimensionsToTransposeTiled = 64 * 128;
constexpr int64_t kMaxBitsInMostMinorDimension = 8 * 8;
constexpr int64_t kNumShmemBanks = 32;

int64_t BitWidthForTiling(PrimitiveType type) { return IsPredType(type) ? 8 : PrimitiveBitWidth(type); }

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
  // NVIDIA H200 (the gpu_device_info XLA reports for it, as in the
  // priority_fusion_dump of test/conformance/data/
  // xla_resnet50_step_h200.tar.xz): the H100's SMs with 4.81 TB/s HBM3e and
  // 60 MiB of L2.
  DeviceDescription d = MakeH100();
  d.name = "H200";
  d.memory_bandwidth = 4.814304e12;
  d.l2_cache_size = 60 * 1024 * 1024;
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
  d.xla_gpu_launch = false;
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
  // XLA's HloCostAnalysis::HandleBitcast: a bitcast touches no memory (its
  // operand utilization stays 1).
  cost->bytes_written = kernel.opcode() == HloOpcode::kBitcast ? 0 : Bytes(kernel.shape());
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

// XLA's IsIntermediate (ir_emission_utils.cc): an elementwise op of at
// most `allowed_operand_count` operands (not a layout-changing copy), or a
// bitcast-like op.
bool IsIntermediate(const HloInstruction& h, int64_t allowed_operand_count = 1) {
  if (h.operand_count() == 0 || h.operand_count() > allowed_operand_count) return false;
  if (h.IsElementwise()) {
    return h.opcode() != HloOpcode::kCopy || h.shape() == h.operand(0)->shape();
  }
  if (h.opcode() == HloOpcode::kBitcast || h.opcode() == HloOpcode::kReshape) return true;
  return h.opcode() == HloOpcode::kTranspose && IsBitcastTranspose(h);
}

bool IsTiledTranspose(const HloInstruction& h) { return TiledTransposeSharedMemory(h).has_value(); }

// A reduce the reduction emitter runs (XLA: IsRealReductionHero via
// IsReductionFromOrToContiguousDimensions); the loop emitter runs the rest,
// and reductions of no elements.
bool IsRealReductionHero(const HloInstruction& h) {
  if (h.opcode() != HloOpcode::kReduce || !h.shape().IsArray()) return false;
  for (const HloInstruction* operand : h.operands()) {
    if (!operand->shape().IsArray() || operand->shape().element_count() == 0) return false;
  }
  return IsReductionFromOrToContiguousDimensions(h);
}

// The users of `h` inside the kernel (none for the kernel's root: its users
// are outside).
std::vector<const HloInstruction*> KernelUsers(const HloInstruction* h, const KernelView& v) {
  std::vector<const HloInstruction*> out;
  if (h == v.consumer || (v.producer != nullptr && h == v.producer)) {
    if (h == v.producer) out.push_back(v.consumer);
    return out;
  }
  for (const HloInstruction* u : h->users()) {
    if (u->opcode() == HloOpcode::kParameter) continue;
    out.push_back(u);
  }
  if (v.producer != nullptr && v.producer->opcode() == HloOpcode::kFusion && h == KernelRoot(*v.producer)) {
    // The producer's result, read by the consumer.
    if (v.consumer->opcode() != HloOpcode::kFusion) {
      out.push_back(v.consumer);
    } else {
      for (int64_t i = 0; i < v.consumer->operand_count(); ++i) {
        if (v.consumer->operand(i) != v.producer) continue;
        for (const HloInstruction* u : v.consumer->fused_parameter(i)->users()) out.push_back(u);
      }
    }
  }
  return out;
}

// XLA's FindHero (ir_emission_utils.cc): the one instruction satisfying
// `is_hero` among those reached from `root` through intermediate ops of up
// to three operands, provided only such ops use it inside the kernel;
// nullptr when there is none or more than one.
const HloInstruction* FindHeroWhere(const HloInstruction* root, const KernelView& v,
                                    bool (*is_hero)(const HloInstruction&)) {
  const HloInstruction* hero = nullptr;
  std::vector<const HloInstruction*> queue = {root};
  absl::flat_hash_set<const HloInstruction*> seen = {root};
  for (size_t k = 0; k < queue.size(); ++k) {
    const HloInstruction* node = queue[k];
    if (is_hero(*node)) {
      if (hero != nullptr) return nullptr;
      hero = node;
      continue;
    }
    if (!IsIntermediate(*node, 3)) continue;
    for (int64_t i = 0; i < node->operand_count(); ++i) {
      const HloInstruction* operand = KernelOperand(node, i, v);
      if (operand != nullptr && seen.insert(operand).second) queue.push_back(operand);
    }
  }
  if (hero == nullptr) return nullptr;
  std::vector<const HloInstruction*> users = KernelUsers(hero, v);
  absl::flat_hash_set<const HloInstruction*> visited(users.begin(), users.end());
  for (size_t k = 0; k < users.size(); ++k) {
    const HloInstruction* u = users[k];
    if (u->opcode() != HloOpcode::kTuple && !IsIntermediate(*u, 3)) return nullptr;
    for (const HloInstruction* next : KernelUsers(u, v)) {
      if (visited.insert(next).second) users.push_back(next);
    }
  }
  return hero;
}

bool IsConcatenate(const HloInstruction& h) { return h.opcode() == HloOpcode::kConcatenate; }

// XLA's FindNonTrivialHero: up the chain of unary intermediate ops, then a
// tiled transpose or a concatenate reached through elementwise ops of up to
// three operands, else a reduce at the end of the chain, else the root.
const HloInstruction* FindHero(const HloInstruction* root, const KernelView& v) {
  const HloInstruction* h = root;
  while (IsIntermediate(*h)) {
    const HloInstruction* next = KernelOperand(h, 0, v);
    if (next == nullptr) break;
    h = next;
  }
  if (const HloInstruction* t = FindHeroWhere(h, v, IsTiledTranspose)) return t;
  if (const HloInstruction* c = FindHeroWhere(h, v, IsConcatenate)) return c;
  if (h->opcode() == HloOpcode::kReduce && h->shape().IsArray()) return h;
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
    // XLA: IsRealReductionHero — reductions the loop emitter runs faster
    // (or cannot tile) are elementwise.
    if (IsRealReductionHero(*h)) {
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

int64_t CeilOfRatio(int64_t a, int64_t b) { return (a + b - 1) / b; }

// XLA's GetVectorSizeForMlir (emitters/reduction_base.cc), for inputs of
// `input_bits` bits at the narrowest.
int64_t ReductionVectorSize(int64_t minor_dim, int64_t num_threads, int64_t input_bits) {
  if (minor_dim % 2 != 0 || num_threads * 2 > minor_dim) return 1;
  if (input_bits >= 64) return 1;
  if (input_bits >= 32) return 2;
  if (num_threads * 4 > minor_dim) return 2;
  return minor_dim % 4 == 0 ? 4 : 2;
}

// The launch of XLA:GPU's reduction emitters (emitters/reduction.cc:
// CreateReductionFusion picks the multi-row, row, small-column or column
// emitter by the reduction's [major, middle, minor] components).
Launch XlaReductionLaunch(const HloInstruction& hero, const DeviceDescription& d) {
  constexpr int64_t kWarpSize = 32;
  constexpr int64_t kTileSize = 32;
  constexpr int64_t kThreadsPerBlockTarget = 256;
  int64_t input_bits = std::numeric_limits<int64_t>::max();
  for (const HloInstruction* operand : hero.operands()) {
    ForEachSubshape(operand->shape(), [&](const Shape& s, const ShapeIndex&) {
      if (s.IsArray()) input_bits = std::min<int64_t>(input_bits, PrimitiveBitWidth(s.element_type()));
    });
  }
  int64_t output_bits = std::numeric_limits<int64_t>::max();
  ForEachSubshape(hero.shape(), [&](const Shape& s, const ShapeIndex&) {
    if (s.IsArray()) output_bits = std::min<int64_t>(output_bits, PrimitiveBitWidth(s.element_type()));
  });
  const ReductionDimensions r = GetReductionKindAndContiguousComponents(hero);
  Launch l;
  // A reduction of no elements (or to none) launches nothing to speak of.
  for (int64_t d : r.dims) {
    if (d <= 0) return l;
  }
  if (r.is_row_reduction) {
    const int64_t kept = r.dims[1], reduced = r.dims[2];
    // MultiRowReductionFusion::TryCreate: a power-of-two row that fits a warp.
    if ((reduced & (reduced - 1)) == 0) {
      const int64_t smallest = std::min(input_bits, output_bits);
      const int64_t largest = std::max(input_bits, output_bits);
      int64_t vector_size = std::min<int64_t>(reduced, 64 / std::max<int64_t>(smallest, 1));
      if (largest >= 32) vector_size = std::min<int64_t>(128 / largest, vector_size);
      auto threads = [&](int64_t v) {
        const int64_t threads_reduced = reduced / v;
        const int64_t threads_kept =
            kept * threads_reduced <= kThreadsPerBlockTarget ? kept : kThreadsPerBlockTarget / threads_reduced;
        return std::make_pair(threads_kept, threads_reduced);
      };
      if (reduced <= kWarpSize * vector_size) {
        while (vector_size > 1 && CeilOfRatio(kept, threads(vector_size).first) < d.core_count) vector_size /= 2;
        if (reduced <= kWarpSize * vector_size) {
          auto [threads_kept, threads_reduced] = threads(vector_size);
          l.threads_per_block = threads_kept * threads_reduced;
          l.blocks = CeilOfRatio(kept, threads_kept);
          return l;
        }
      }
    }
    // RowReductionFusion.
    constexpr int64_t kMinorReducedElementsPerThread = 16;
    const int64_t threads_reduced =
        std::min<int64_t>(1024, CeilOfRatio(CeilOfRatio(reduced, kMinorReducedElementsPerThread), kWarpSize) *
                                    kWarpSize);
    int64_t threads_kept = 1;
    if (threads_reduced * 2 <= kThreadsPerBlockTarget) {
      threads_kept = kept * threads_reduced <= kThreadsPerBlockTarget ? kept : kThreadsPerBlockTarget / threads_reduced;
    }
    const int64_t vector_size = ReductionVectorSize(reduced, threads_reduced, input_bits);
    const int64_t minor = reduced / vector_size;
    const int64_t tile = std::min(kMinorReducedElementsPerThread / vector_size, CeilOfRatio(minor, threads_reduced));
    l.threads_per_block = threads_kept * threads_reduced;
    l.blocks = CeilOfRatio(kept, threads_kept) * CeilOfRatio(minor, tile * threads_reduced);
    return l;
  }
  const int64_t major_kept = r.dims[0], reduced = r.dims[1], minor_kept = r.dims[2];
  if (kWarpSize % minor_kept == 0) {
    // SmallColumnReductionFusion: 128 threads a block, a block per major row.
    int64_t vector_size = ReductionVectorSize(reduced * minor_kept, kTileSize, input_bits);
    int64_t threads = 128;
    int64_t shared_rows = vector_size * threads / minor_kept;
    while (shared_rows > kTileSize && vector_size > 1) {
      vector_size /= 2;
      shared_rows /= 2;
    }
    if (shared_rows > kTileSize) threads /= shared_rows / kTileSize;
    l.threads_per_block = threads;
    l.blocks = major_kept;
    return l;
  }
  // ColumnReductionFusion: 32x32 threads over 32 * vector_size columns.
  const int64_t vector_size = ReductionVectorSize(minor_kept, kTileSize, input_bits);
  l.threads_per_block = kTileSize * kTileSize;
  l.blocks = major_kept * CeilOfRatio(minor_kept, kTileSize * vector_size);
  return l;
}

// XLA's MayCausePerformanceDropIfUnrolled (gpu_fusible.cc), over the
// instructions of a kernel.
bool MayCausePerformanceDropIfUnrolled(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kFusion) {
    for (const HloInstruction* i : h.fused_instructions_computation()->instructions()) {
      if (MayCausePerformanceDropIfUnrolled(*i)) return true;
    }
    return false;
  }
  switch (h.opcode()) {
    case HloOpcode::kReduceWindow: {
      int64_t window = 1;
      for (const WindowDimension& w : h.window().dimensions) window *= w.size;
      return window > 8;
    }
    case HloOpcode::kSort:
    case HloOpcode::kDot: return true;
    case HloOpcode::kConcatenate: return h.operand_count() > 10;
    case HloOpcode::kReduce: return h.shape().IsTuple() && h.shape().tuple_shapes().size() > 1;
    default: return false;
  }
}

// The launch of XLA:GPU's shared-memory transpose emitter
// (emitters/transpose.cc, TransposeFusion; not the packed transpose of
// narrow types): 128 threads a block, a block per 32x32 tile (times the
// vector size) of the normalized input.
std::optional<Launch> XlaTransposeLaunch(const HloInstruction& hero, const DeviceDescription& d) {
  constexpr int64_t kTileSize = 32;
  constexpr int64_t kThreadsPerBlock = 128;
  constexpr int64_t kMaxVectorizedBytes = 4;
  std::optional<NormalizedTranspose> t = NormalizeTranspose(hero);
  if (!t.has_value() || t->dims.size() < 2) return std::nullopt;
  const size_t rank = t->dims.size();
  const std::vector<int64_t>& perm = t->permutation;
  std::vector<int64_t> input(rank);
  for (size_t i = 0; i < rank; ++i) input[perm[i]] = t->dims[i];
  const bool minor_unchanged = perm.back() == static_cast<int64_t>(rank) - 1;
  int64_t element_bytes = std::max<int64_t>(PrimitiveBitWidth(hero.shape().element_type()) / 8, 1);
  if (minor_unchanged) element_bytes *= input.back();
  const int64_t shmem_usage = kTileSize * (kTileSize + 1) * element_bytes;
  std::vector<int64_t> counts(rank);
  auto block_counts = [&](int64_t vector_size) {
    std::vector<int64_t> sizes(rank, 1);
    if (minor_unchanged) {
      sizes.back() = vector_size;
      sizes[rank - 2] = kTileSize;
      sizes[perm[rank - 2]] = kTileSize;
    } else {
      sizes.back() = kTileSize * vector_size;
      sizes[perm.back()] = kTileSize * vector_size;
    }
    int64_t product = 1;
    for (size_t i = 0; i < rank; ++i) product *= CeilOfRatio(input[i], sizes[i]);
    return product;
  };
  int64_t blocks = block_counts(minor_unchanged ? input.back() : 1);
  if (!minor_unchanged) {
    for (int64_t v = kMaxVectorizedBytes / element_bytes; v > 1; v /= 2) {
      const bool enough_work = blocks * kThreadsPerBlock >= v * v * d.core_count * d.threads_per_core_limit;
      const bool enough_shmem = shmem_usage * v * v <= 48 * 1024;
      const bool aligned = input.back() % v == 0 && input[perm.back()] % v == 0;
      if (enough_work && enough_shmem && aligned) {
        blocks = block_counts(v);
        break;
      }
    }
  }
  Launch l;
  l.blocks = std::max<int64_t>(blocks, 1);
  l.threads_per_block = kThreadsPerBlock;
  return l;
}

Launch EstimateLaunch(const HeroAnalysis& a, const DeviceDescription& d, const HloInstruction* producer,
                      const HloInstruction& consumer) {
  Launch l;
  if (a.kind == KernelEmitterKind::kReduction && d.xla_gpu_launch) return XlaReductionLaunch(*a.hero, d);
  if (a.kind == KernelEmitterKind::kTranspose && d.xla_gpu_launch) {
    if (std::optional<Launch> t = XlaTransposeLaunch(*a.hero, d)) return *t;
  }
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
  if (d.xla_gpu_launch) {
    // XLA's ComputeLoopFusionConfig (gpu_fusible.cc) and
    // CalculateLaunchDimensions (launch_dimensions.cc): unrolled by up to 4
    // only when there are more elements than the GPU has threads.
    int64_t unroll = 1;
    if (elements >= d.threads_per_core_limit * d.core_count &&
        !(producer != nullptr && MayCausePerformanceDropIfUnrolled(*producer)) &&
        !MayCausePerformanceDropIfUnrolled(consumer)) {
      unroll = std::gcd<int64_t>(elements, 4);
    }
    int64_t output_bits = std::numeric_limits<int64_t>::max();
    ForEachSubshape(consumer.shape(), [&](const Shape& s, const ShapeIndex&) {
      if (s.IsArray()) output_bits = std::min<int64_t>(output_bits, PrimitiveBitWidth(s.element_type()));
    });
    if (output_bits > 0 && output_bits < 8) unroll = std::max<int64_t>(unroll, CeilOfRatio(8, output_bits));
    if (elements <= 1) return l;
    const int64_t work = CeilOfRatio(elements, unroll);
    l.threads_per_block = std::min<int64_t>(d.threads_per_block, work);
    l.blocks = CeilOfRatio(work, l.threads_per_block);
    return l;
  }
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

// XLA's MostMinorNonTrivialDimension (gpu_fusible.cc): the most minor
// dimension of size > 1 and its position in minor_to_major.
std::pair<int64_t, int64_t> MostMinorNonTrivialDimension(const Shape& shape) {
  const std::vector<int64_t> minor_to_major =
      shape.has_layout() ? shape.layout().minor_to_major() : Layout::Default(shape.rank()).minor_to_major();
  int64_t position = 0;
  for (int64_t dim : minor_to_major) {
    if (shape.dimensions(dim) > 1) return {dim, position};
    ++position;
  }
  return {-1, position};
}

// XLA's TransposesMinorDimension (gpu_fusible.cc).
bool TransposesMinorDimension(const HloInstruction* h) {
  switch (h->opcode()) {
    case HloOpcode::kFusion:
      for (const HloInstruction* i : h->fused_instructions_computation()->instructions()) {
        if (TransposesMinorDimension(i)) return true;
      }
      return false;
    case HloOpcode::kCopy:
      return MostMinorNonTrivialDimension(h->operand(0)->shape()).first !=
             MostMinorNonTrivialDimension(h->shape()).first;
    case HloOpcode::kTranspose: {
      const Shape& in = h->operand(0)->shape();
      const std::vector<int64_t> in_minor_to_major =
          in.has_layout() ? in.layout().minor_to_major() : Layout::Default(in.rank()).minor_to_major();
      std::vector<int64_t> position(in.rank());
      for (int64_t i = 0; i < in.rank(); ++i) position[in_minor_to_major[i]] = i;
      const int64_t first_non_trivial = MostMinorNonTrivialDimension(in).second;
      const Shape& out = h->shape();
      const std::vector<int64_t> out_minor_to_major =
          out.has_layout() ? out.layout().minor_to_major() : Layout::Default(out.rank()).minor_to_major();
      for (int64_t out_dim : out_minor_to_major) {
        if (out.dimensions(out_dim) == 1) continue;
        return position[h->dimensions()[out_dim]] > first_non_trivial;
      }
      return false;
    }
    default:
      return false;
  }
}

// XLA's IsInputFusibleReduction (gpu_fusible.cc): a reduce the reduction
// emitter runs, or a fusion with such a hero.
bool IsInputFusibleReduction(const HloInstruction& h) {
  if (h.opcode() == HloOpcode::kReduce) return IsRealReductionHero(h);
  if (h.opcode() != HloOpcode::kFusion) return false;
  HeroAnalysis a = AnalyzeKernel(nullptr, h);
  return a.kind == KernelEmitterKind::kReduction;
}

// XLA's IsReadCoalescedHeuristic (model/coalescing_analysis.cc), which its
// performance model uses for every operand of a kernel: outside transpose
// kernels, a transpose of the minor dimension (not of a broadcast or iota)
// breaks coalescing; so does fusing two reductions.
bool IsReadCoalescedHeuristic(KernelEmitterKind kind, const HloInstruction& producer,
                              const HloInstruction* consumer) {
  if (kind != KernelEmitterKind::kTranspose) {
    auto is_broadcast = [](const HloInstruction* h) {
      while (true) {
        if (h->opcode() == HloOpcode::kBroadcast || h->opcode() == HloOpcode::kIota) return true;
        if (h->operand_count() != 1) return false;
        if (h->opcode() != HloOpcode::kBitcast && !h->IsElementwise()) return false;
        h = h->operand(0);
      }
    };
    auto is_bad_transpose = [&](const HloInstruction* h) {
      if (h->opcode() == HloOpcode::kFusion) {
        for (const HloInstruction* i : h->fused_instructions_computation()->instructions()) {
          if (TransposesMinorDimension(i) && !is_broadcast(i->operand(0))) return true;
        }
        return false;
      }
      return TransposesMinorDimension(h) && !is_broadcast(h->operand(0));
    };
    if (is_bad_transpose(&producer)) return false;
    if (consumer != nullptr && is_bad_transpose(consumer)) return false;
  }
  if (kind == KernelEmitterKind::kReduction && consumer != nullptr && IsInputFusibleReduction(producer) &&
      IsInputFusibleReduction(*consumer)) {
    return false;
  }
  return true;
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
  Launch launch = EstimateLaunch(analysis, device_, nullptr, instruction);
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
    const int64_t total = instruction.opcode() == HloOpcode::kBitcast ? 0 : std::llround(size * utilization);
    const int64_t net = std::min(size, total);
    e.bytes_read += total;
    const bool coalesced = IsReadCoalescedHeuristic(analysis.kind, instruction, nullptr);
    e.read_time += ReadTimeWithDramHeuristic(device_, launch.blocks, net, total,
                                             CoalescingRate(device_, operand->shape(), coalesced));
  }
  e.write_time = static_cast<double>(e.bytes_written) / device_.memory_bandwidth;
  e.exec_time = Combine(e.compute_time, e.read_time + e.write_time);
  return estimates_.emplace(&instruction, e).first->second;
}

double GpuPerformanceModel::EstimateRunTimeForFusion(const HloInstruction& producer, const HloInstruction& consumer,
                                                     bool producer_writes_side_output) {
  const KernelEstimate producer_estimate = EstimateRunTimeForInstruction(producer);
  const KernelEstimate consumer_estimate = EstimateRunTimeForInstruction(consumer);
  const KernelCost& producer_cost = Cost(producer);
  const KernelCost& consumer_cost = Cost(consumer);
  // The consumer reads the producer directly or, from a multi-output
  // producer, through get-tuple-elements.
  auto reads_producer = [&](const HloInstruction* o) {
    return o == &producer || (o->opcode() == HloOpcode::kGetTupleElement && o->operand(0) == &producer);
  };
  double utilization_by_consumer = 0;
  for (int64_t i = 0; i < consumer.operand_count(); ++i) {
    if (reads_producer(consumer.operand(i))) utilization_by_consumer += consumer_cost.operand_utilization[i];
  }
  HeroAnalysis analysis = AnalyzeKernel(&producer, consumer);
  Launch launch = EstimateLaunch(analysis, device_, &producer, consumer);
  const double flops = producer_cost.flops * utilization_by_consumer + consumer_cost.flops;
  const double compute_time = ComputeTime(device_, flops, launch);

  // The fused kernel's operands: the consumer's other operands and the
  // producer's, each once.
  std::vector<const HloInstruction*> operands;
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* o : consumer.operands()) {
    if (!reads_producer(o) && seen.insert(o).second) operands.push_back(o);
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
      if (OperandIndex(consumer, &producer) < 0) return 0;
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
    const bool coalesced = IsReadCoalescedHeuristic(analysis.kind, producer, &consumer);
    read_time += ReadTimeWithDramHeuristic(device_, launch.blocks, net, std::max<int64_t>(total, 0),
                                           CoalescingRate(device_, operand->shape(), coalesced));
  }
  // XLA: a multi-output fusion also writes the producer's result.
  const double write_time =
      consumer_estimate.write_time + (producer_writes_side_output ? producer_estimate.write_time : 0.0);
  return Combine(compute_time, read_time + write_time);
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

GpuPerformanceModel::RunTimes GpuPerformanceModel::EstimateRunTimesForMultiOutputFusion(const HloInstruction& producer,
                                                                                      const HloInstruction& consumer) {
  const double launch = device_.kernel_launch_overhead;
  RunTimes t;
  t.time_unfused = 2 * launch + EstimateRunTimeForInstruction(producer).exec_time +
                   EstimateRunTimeForInstruction(consumer).exec_time;
  t.time_fused = launch + EstimateRunTimeForFusion(producer, consumer, /*producer_writes_side_output=*/true);
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

std::optional<NormalizedTranspose> NormalizeTranspose(const HloInstruction& transpose) {
  const Shape& in = transpose.operand(0)->shape();
  const Shape& out = transpose.shape();
  if (!HasDefaultLayout(in) || !HasDefaultLayout(out)) return std::nullopt;
  // Input dimensions kept (size > 1), renumbered in order.
  std::vector<int64_t> renumber(in.rank(), -1);
  int64_t kept = 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (in.dimensions()[d] != 1) renumber[d] = kept++;
  }
  std::vector<int64_t> sources;  // per kept output dim, its renumbered input dim
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < out.rank(); ++d) {
    if (out.dimensions()[d] == 1) continue;
    sources.push_back(renumber[transpose.dimensions()[d]]);
    sizes.push_back(out.dimensions()[d]);
  }
  // Merge runs of output dims reading consecutive input dims.
  std::vector<int64_t> group_first_source;
  NormalizedTranspose t;
  for (size_t k = 0; k < sources.size(); ++k) {
    if (k > 0 && sources[k] == sources[k - 1] + 1) {
      t.dims.back() *= sizes[k];
      continue;
    }
    t.dims.push_back(sizes[k]);
    group_first_source.push_back(sources[k]);
  }
  std::vector<int64_t> by_source(group_first_source.size());
  std::iota(by_source.begin(), by_source.end(), 0);
  std::sort(by_source.begin(), by_source.end(),
            [&](int64_t x, int64_t y) { return group_first_source[x] < group_first_source[y]; });
  // Group g is the rank(g)-th input group.
  t.permutation.assign(t.dims.size(), 0);
  for (size_t r = 0; r < by_source.size(); ++r) t.permutation[by_source[r]] = static_cast<int64_t>(r);
  return t;
}

std::optional<int64_t> TiledTransposeSharedMemory(const HloInstruction& hero) {
  if (hero.opcode() != HloOpcode::kTranspose) return std::nullopt;
  std::optional<NormalizedTranspose> t = NormalizeTranspose(hero);
  if (!t.has_value() || t->permutation.size() < 2) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(t->dims.size());
  std::vector<int64_t> operand_dims(rank);
  for (int64_t i = 0; i < rank; ++i) operand_dims[t->permutation[i]] = t->dims[i];
  int64_t bits = BitWidthForTiling(hero.shape().element_type());
  int64_t operand_most_minor = operand_dims.back();
  if (t->permutation.back() == rank - 1) {
    // The most minor dimension stays: a tile moves whole minor rows.
    operand_most_minor = operand_dims[rank - 2];
    if (bits * t->dims.back() <= kMaxBitsInMostMinorDimension &&
        bits * t->dims.back() * std::min(operand_most_minor, t->dims[rank - 2]) >= 8 * kMinDimensionToTransposeTiled) {
      return (kNumShmemBanks * (kNumShmemBanks + 1) * bits * t->dims.back() + 7) / 8;
    }
    return std::nullopt;
  }
  bool big = operand_most_minor >= kMinDimensionToTransposeTiled && t->dims.back() >= kMinDimensionToTransposeTiled;
  bool big_enough = operand_most_minor >= kMinDimensionToTransposeTiled2 &&
                    t->dims.back() >= kMinDimensionToTransposeTiled2 &&
                    operand_most_minor * t->dims.back() >= kMinTotalDimensionsToTransposeTiled;
  if ((big || big_enough) && bits != 4) return (kNumShmemBanks * (kNumShmemBanks + 1) * bits + 7) / 8;
  return std::nullopt;
}


}  // namespace passlab
