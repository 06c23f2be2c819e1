// The CPU kernel compiler: HLO -> MLIR (func/arith/math/scf/memref, the
// shared emitter of kernel_emitter.h) -> emitter pipeline
// (emitter_pipeline.h) -> LLVM dialect -> LLVM IR -> object code -> ORC JIT;
// see cpu_kernel_compiler.h for the overall structure. The object code (with
// the loop nests' metadata) is what the persistent cache stores: a hit loads
// it into a JIT without emitting, lowering or running LLVM.
#include "core/codegen/cpu_kernel_compiler.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/codegen/emitter_pipeline.h"
#include "core/codegen/fusion_analysis.h"
#include "core/codegen/kernel_emitter.h"
#include "core/codegen/persistent_kernel_cache.h"
#include "core/ir/hlo_computation.h"
#include "core/ir/hlo_instruction.h"
#include "core/ir/hlo_module.h"
#include "core/ir/status_macros.h"
#include "core/ir/str_util.h"
#include "core/text/hlo_printer.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Target/LLVMIR/Export.h"

namespace passlab {
namespace {

using namespace codegen_internal;  // NOLINT: the shared emitter's internals

// ---------------------------------------------------------------------------
// Kernels run their chunks on the OpenMP threads oneDNN's convolutions and
// gemms use (libgomp, loaded with libdnnl; GOMP_parallel looked up at run
// time so passlab links no OpenMP runtime of its own). A pool of its own
// shares the cores with those threads, which spin for a while after every
// library call: on 2 cores a kernel right after a convolution waited for a
// spinning OpenMP thread to yield its core. Without libgomp in the process
// (or with PASSLAB_KERNEL_POOL=1), the pool below.
using GompParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);

GompParallelFn GompParallel() {
  static const GompParallelFn fn = []() -> GompParallelFn {
    if (const char* pool = std::getenv("PASSLAB_KERNEL_POOL"); pool != nullptr && std::string_view(pool) == "1") {
      return nullptr;
    }
    return reinterpret_cast<GompParallelFn>(dlsym(RTLD_DEFAULT, "GOMP_parallel"));
  }();
  return fn;
}

struct OpenMpJob {
  const std::function<void(int64_t)>* fn;
  int64_t n;
  std::atomic<int64_t> next{0};
};

void OpenMpBody(void* data) {
  auto* job = static_cast<OpenMpJob*>(data);
  for (int64_t i = job->next.fetch_add(1); i < job->n; i = job->next.fetch_add(1)) (*job->fn)(i);
}

// Thread pool: one per process; ParallelFor runs chunks on the workers and
// the caller. Concurrent callers that find it busy run serially (results do
// not depend on the split: every output element is computed by one thread).
class ThreadPool {
 public:
  static ThreadPool& Get() {
    static ThreadPool* pool = new ThreadPool();
    return *pool;
  }
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> run_lock(run_mu_, std::try_to_lock);
    if (!run_lock.owns_lock() || workers_.empty() || n <= 1) {
      for (int64_t i = 0; i < n; ++i) fn(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &fn;
      job_size_ = n;
      next_.store(0);
      pending_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    cv_.notify_all();
    Drain(fn, n);
    std::unique_lock<std::mutex> lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  ThreadPool() {
    int n = static_cast<int>(std::thread::hardware_concurrency());
    for (int i = 1; i < std::max(n, 1); ++i) {
      workers_.emplace_back([this] { WorkerLoop(); });
      workers_.back().detach();
    }
  }
  void Drain(const std::function<void(int64_t)>& fn, int64_t n) {
    for (int64_t i = next_.fetch_add(1); i < n; i = next_.fetch_add(1)) fn(i);
  }
  void WorkerLoop() {
    uint64_t seen = 0;
    while (true) {
      const std::function<void(int64_t)>* job;
      int64_t n;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        job = job_;
        n = job_size_;
      }
      if (job != nullptr) Drain(*job, n);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t job_size_ = 0;
  std::atomic<int64_t> next_{0};
  int pending_ = 0;
  uint64_t generation_ = 0;
};

// ---------------------------------------------------------------------------
// The emitter pipeline.

const std::vector<EmitterPassInfo>& PassList() {
  static const auto* passes = new std::vector<EmitterPassInfo>{
      {"inline", true, "Inlines subgraph functions into the loop nests"},
      {"canonicalize", true, "Folds and canonicalizes"},
      {"cse", true, "Common subexpression elimination"},
      {"loop-invariant-code-motion", true, "Hoists loop-invariant code"},
      {"unroll", true, "Unrolls innermost loops by CpuCompileOptions::unroll"},
      {"expand-math", true, "Polynomial approximations of transcendental functions"},
      {"symbol-dce", true, "Drops unused subgraph functions"},
      {"convert-math-to-funcs", false, "Integer power as a function"},
      {"arith-expand", false, "Expands bf16 conversions and other compound arith ops"},
      {"convert-scf-to-cf", false, "Structured loops to a CFG"},
      {"convert-math-to-llvm", false, "Math ops to LLVM intrinsics"},
      {"convert-math-to-libm", false, "Remaining math ops to libm calls"},
      {"expand-strided-metadata", false, "Memref metadata to arithmetic"},
      {"finalize-memref-to-llvm", false, "Memrefs to LLVM pointers"},
      {"convert-arith-to-llvm", false, "Arith to the LLVM dialect"},
      {"convert-cf-to-llvm", false, "CFG to the LLVM dialect"},
      {"convert-func-to-llvm", false, "Functions to the LLVM dialect"},
      {"reconcile-unrealized-casts", false, "Removes conversion casts"},
      {"vectorize", true, "LLVM loop and SLP vectorization (LLVM-level)"},
  };
  return *passes;
}

bool Disabled(const CpuCompileOptions& o, const std::string& name) {
  return std::find(o.disabled_passes.begin(), o.disabled_passes.end(), name) != o.disabled_passes.end();
}

absl::Status RunCpuEmitterPipeline(mlir::ModuleOp module, const CpuCompileOptions& o, const std::string& kernel) {
  EmitterPipelineTarget target;
  target.passes = &PassList();
  target.error_prefix = "codegen";
  target.lowered_to = "LLVM";
  target.unroll = o.unroll;
  target.math_to_libm = true;
  return RunEmitterPipeline(module, target, o.disabled_passes, o.observer, o.observer_wants_text, kernel);
}

// ---------------------------------------------------------------------------
// JIT.

std::unique_ptr<llvm::TargetMachine> HostTargetMachine() {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    llvm::consumeError(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // No gathers or scatters from the vectorizers: a tiled transpose's inner
  // loop (eight reads 2 KiB apart) vectorized into gathers ran 7x slower
  // than scalar code on this 2-core AMD EPYC (Zen 4): f32[2048,512] ->
  // [512,2048], ResNet-50's weight-update side output, 2.9 ms against
  // 0.41 ms with the vectorizer off (`passlab run FILE --pipeline none
  // --threads 2`). Clang's -mno-gather/-mno-scatter set the same tuning.
  builder->addFeatures({"+prefer-no-gather", "+prefer-no-scatter"});
  auto tm = builder->createTargetMachine();
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

struct JitProgram {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<void (*)(void**)> functions;  // per nest
  std::vector<LoopNest> nests;
  std::vector<int64_t> buffer_sizes;
};

// What a kernel compiles to, before loading: the persistent cache's payload.
struct KernelObject {
  std::string object;  // relocatable object code for the host
  std::vector<LoopNest> nests;
  std::vector<int64_t> buffer_sizes;
};

constexpr const char* kPackedPrefix = "_mlir_";

std::string SerializeKernelObject(const KernelObject& k) {
  CacheRecordWriter w;
  w.Int(static_cast<int64_t>(k.nests.size()));
  for (const LoopNest& n : k.nests) {
    w.Bytes(n.function);
    w.Int(static_cast<int64_t>(n.leaf_ids.size()));
    for (int64_t id : n.leaf_ids) w.Int(id);
    w.Int(n.rows);
    w.Int(n.inner);
    w.Int(n.elements);
  }
  w.Int(static_cast<int64_t>(k.buffer_sizes.size()));
  for (int64_t size : k.buffer_sizes) w.Int(size);
  w.Bytes(k.object);
  return std::move(w).Finish();
}

std::optional<KernelObject> DeserializeKernelObject(std::string_view payload) {
  CacheRecordReader r(payload);
  KernelObject k;
  int64_t count = 0;
  if (!r.Int(&count) || count < 0 || count > int64_t{1} << 20) return std::nullopt;
  for (int64_t i = 0; i < count; ++i) {
    LoopNest n;
    int64_t leaves = 0;
    if (!r.Bytes(&n.function) || !r.Int(&leaves) || leaves < 0 || leaves > int64_t{1} << 20) return std::nullopt;
    n.leaf_ids.resize(leaves);
    for (int64_t& id : n.leaf_ids) {
      if (!r.Int(&id)) return std::nullopt;
    }
    if (!r.Int(&n.rows) || !r.Int(&n.inner) || !r.Int(&n.elements)) return std::nullopt;
    k.nests.push_back(std::move(n));
  }
  if (!r.Int(&count) || count < 0 || count > int64_t{1} << 20) return std::nullopt;
  k.buffer_sizes.resize(count);
  for (int64_t& size : k.buffer_sizes) {
    if (!r.Int(&size)) return std::nullopt;
  }
  if (!r.Bytes(&k.object) || !r.AtEnd()) return std::nullopt;
  return k;
}

// `void _mlir_<name>(void** args)`: calls `name` with *args[i] as its i-th
// argument (MLIR's ExecutionEngine convention, which JitKernel::Run packs
// for).
absl::Status AddPackedWrapper(llvm::Module& module, const std::string& name) {
  llvm::Function* callee = module.getFunction(name);
  if (callee == nullptr || callee->isDeclaration()) {
    return absl::InternalError(StrCat("codegen: no loop nest function '", name, "' in the LLVM module"));
  }
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> b(context);
  llvm::Type* ptr = b.getPtrTy();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr}, /*isVarArg=*/false);
  auto* wrapper = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, kPackedPrefix + name, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", wrapper));
  std::vector<llvm::Value*> args;
  for (llvm::Argument& arg : callee->args()) {
    llvm::Value* slot = b.CreateConstGEP1_64(ptr, wrapper->getArg(0), arg.getArgNo());
    args.push_back(b.CreateLoad(arg.getType(), b.CreateLoad(ptr, slot)));
  }
  llvm::Value* result = b.CreateCall(callee, args);
  if (!result->getType()->isVoidTy()) {
    llvm::Value* slot = b.CreateConstGEP1_64(ptr, wrapper->getArg(0), callee->arg_size());
    b.CreateStore(result, b.CreateLoad(ptr, slot));
  }
  b.CreateRetVoid();
  return absl::OkStatus();
}

// The lowered module (LLVM dialect) to host object code: MLIR's LLVM IR
// translation, packed wrappers for the loop nests, LLVM's pipeline, codegen.
absl::StatusOr<std::string> CompileToObject(mlir::ModuleOp module, const std::vector<LoopNest>& nests,
                                            const CpuCompileOptions& o, const std::string& kernel) {
  std::unique_ptr<llvm::TargetMachine> tm = HostTargetMachine();
  if (tm == nullptr) return absl::InternalError("codegen: cannot create a host TargetMachine");
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, context, kernel);
  if (m == nullptr) return absl::InternalError(StrCat("codegen: translation to LLVM IR failed for ", kernel));
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple());
  for (const LoopNest& nest : nests) {
    RETURN_IF_ERROR(AddPackedWrapper(*m, nest.function));
  }
  const bool vectorize = o.vectorize && !Disabled(o, "vectorize");
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = vectorize;
  tuning.SLPVectorization = vectorize;
  tuning.LoopUnrolling = true;
  RunLlvmPipeline(*m, tm.get(), o.llvm_opt_level, tuning);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError(StrCat("codegen: the host target cannot emit object code for ", kernel));
  }
  codegen.run(*m);
  return std::string(buffer.data(), buffer.size());
}

// Links `k`'s object code into a JIT of its own (RuntimeDyld, as MLIR's
// ExecutionEngine; the process's symbols resolve libm calls) and finds the
// loop nests' packed entry points.
absl::StatusOr<std::shared_ptr<const JitProgram>> LoadKernelObject(KernelObject k, const std::string& kernel) {
  auto jit = llvm::orc::LLJITBuilder()
                 .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& session)
                                                   -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                   return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                       session, [](const llvm::MemoryBuffer&) { return std::make_unique<llvm::SectionMemoryManager>(); });
                 })
                 .create();
  if (!jit) return absl::InternalError(StrCat("codegen: cannot create a JIT for ", kernel, ": ",
                                              llvm::toString(jit.takeError())));
  if (llvm::Error e = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(k.object, kernel))) {
    return absl::InternalError(StrCat("codegen: cannot load the object code of ", kernel, ": ",
                                      llvm::toString(std::move(e))));
  }
  auto program = std::make_shared<JitProgram>();
  for (const LoopNest& nest : k.nests) {
    auto address = (*jit)->lookup(kPackedPrefix + nest.function);
    if (!address) {
      return absl::InternalError(StrCat("codegen: no symbol ", nest.function, " in ", kernel, ": ",
                                        llvm::toString(address.takeError())));
    }
    program->functions.push_back(address->toPtr<void (*)(void**)>());
  }
  program->nests = std::move(k.nests);
  program->buffer_sizes = std::move(k.buffer_sizes);
  program->jit = std::move(*jit);
  return std::shared_ptr<const JitProgram>(std::move(program));
}

class JitKernel : public CompiledKernel {
 public:
  JitKernel(std::string name, EmitterKind kind, std::shared_ptr<const JitProgram> program, int64_t threshold,
            int num_threads, int64_t bytes_read, int64_t bytes_written, int64_t flops)
      : name_(std::move(name)), kind_(kind), program_(std::move(program)), threshold_(threshold),
        num_threads_(num_threads),
        bytes_read_(bytes_read), bytes_written_(bytes_written), flops_(flops) {}
  const std::string& name() const override { return name_; }
  EmitterKind emitter_kind() const override { return kind_; }
  int64_t bytes_read() const override { return bytes_read_; }
  int64_t bytes_written() const override { return bytes_written_; }
  int64_t flops() const override { return flops_; }

  void Run(absl::Span<void* const> buffers) const override {
    const JitProgram& p = *program_;
    for (size_t n = 0; n < p.nests.size(); ++n) {
      const LoopNest& nest = p.nests[n];
      if (nest.rows == 0) continue;
      auto run_range = [&](int64_t begin, int64_t end) {
        // Each memref argument expands to (allocated, aligned, offset, size,
        // stride); the packed wrapper takes a pointer to each.
        size_t count = buffers.size();
        std::vector<int64_t> scalars(count * 3 + 2);
        std::vector<void*> ptrs(buffers.begin(), buffers.end());
        std::vector<void*> args;
        args.reserve(count * 5 + 2);
        for (size_t i = 0; i < count; ++i) {
          scalars[3 * i] = 0;
          scalars[3 * i + 1] = p.buffer_sizes[i];
          scalars[3 * i + 2] = 1;
          args.push_back(&ptrs[i]);
          args.push_back(&ptrs[i]);
          args.push_back(&scalars[3 * i]);
          args.push_back(&scalars[3 * i + 1]);
          args.push_back(&scalars[3 * i + 2]);
        }
        scalars[3 * count] = begin;
        scalars[3 * count + 1] = end;
        args.push_back(&scalars[3 * count]);
        args.push_back(&scalars[3 * count + 1]);
        p.functions[n](args.data());
      };
      ThreadPool& pool = ThreadPool::Get();
      if (nest.elements < threshold_ || pool.size() == 1 || nest.rows == 1 || num_threads_ == 1) {
        run_range(0, nest.rows);
        continue;
      }
      const int threads = num_threads_ > 0 ? std::min(num_threads_, pool.size()) : pool.size();
      int64_t chunks = std::min<int64_t>(nest.rows, threads * 4);
      std::function<void(int64_t)> chunk = [&](int64_t c) {
        int64_t begin = nest.rows * c / chunks, end = nest.rows * (c + 1) / chunks;
        if (begin < end) run_range(begin, end);
      };
      if (GompParallelFn gomp = GompParallel(); gomp != nullptr) {
        OpenMpJob job{&chunk, chunks};
        gomp(&OpenMpBody, &job, static_cast<unsigned>(threads), 0);
      } else {
        pool.ParallelFor(chunks, chunk);
      }
    }
  }

 private:
  std::string name_;
  EmitterKind kind_;
  std::shared_ptr<const JitProgram> program_;
  int64_t threshold_;
  int num_threads_;
  int64_t bytes_read_, bytes_written_, flops_;
};

std::mutex cache_mu;
std::map<std::string, std::shared_ptr<const JitProgram>>& ProgramCache() {
  static auto* cache = new std::map<std::string, std::shared_ptr<const JitProgram>>();
  return *cache;
}
std::atomic<int64_t> cache_hits{0}, cache_misses{0};
std::atomic<int64_t> persistent_hits{0}, persistent_misses{0};

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

std::unique_ptr<mlir::MLIRContext> MakeContext() { return MakeEmitterContext(mlir::DialectRegistry()); }

// An instruction's text without its own and its operands' names (operands
// become their positions in `names`), so identical kernels share a key.
std::string CanonicalInstructionText(const HloInstruction& h,
                                     const absl::flat_hash_map<const HloInstruction*, int64_t>& names) {
  PrintOptions print;
  print.print_operand_shape = true;
  print.print_metadata = false;
  print.print_percent = false;
  std::string text = PrintInstruction(h, print);
  size_t eq = text.find(" = ");
  if (eq != std::string::npos) text = text.substr(eq + 3);
  if (h.operand_count() == 0) return text;
  std::string head = StrCat(" ", HloOpcodeString(h.opcode()), "(");
  size_t open = text.find(head);
  if (open == std::string::npos) return text;
  open += head.size();
  size_t close = text.find(')', open);
  // Operand shapes may hold parentheses (tuples); find the list's end by
  // depth.
  int depth = 1;
  for (close = open; close < text.size() && depth > 0; ++close) {
    if (text[close] == '(') ++depth;
    if (text[close] == ')') --depth;
  }
  std::string operands;
  for (int64_t i = 0; i < h.operand_count(); ++i) {
    auto it = names.find(h.operand(i));
    operands += StrCat(i ? ", " : "", h.operand(i)->shape().ToString(), " v",
                       it == names.end() ? -1 - i : it->second);
  }
  return text.substr(0, open) + operands + text.substr(close - 1);
}

std::string HloCacheKey(const HloInstruction& h) {
  absl::flat_hash_map<const HloInstruction*, int64_t> names;
  for (int64_t i = 0; i < h.operand_count(); ++i) names.emplace(h.operand(i), i);
  std::string key = CanonicalInstructionText(h, names);
  if (h.opcode() == HloOpcode::kFusion) {
    absl::flat_hash_map<const HloInstruction*, int64_t> fused_names;
    int64_t next = 0;
    for (const HloInstruction* i : h.fused_instructions_computation()->MakeInstructionPostOrder()) {
      fused_names[i] = next++;
      key += StrCat("\nv", fused_names[i], " = ", CanonicalInstructionText(*i, fused_names));
    }
    // The fused computation's name is not part of the code.
    size_t calls = key.find("calls=");
    if (calls != std::string::npos) {
      size_t end = key.find_first_of(",\n", calls);
      key.erase(calls, end - calls);
    }
  }
  PrintOptions print;
  print.print_metadata = false;
  for (const HloComputation* c : h.called_computations()) {
    if (c != nullptr && h.opcode() != HloOpcode::kFusion) key += "\n" + PrintComputation(*c, print);
  }
  return key;
}

std::string CacheKey(const HloInstruction& h, const CpuCompileOptions& o) {
  std::string key = HloCacheKey(h);
  key += StrCat("|v", o.vectorize, "|u", o.unroll, "|O", o.llvm_opt_level);
  for (const std::string& d : o.disabled_passes) key += "|-" + d;
  return key;
}

}  // namespace

std::string KernelCacheKey(const HloInstruction& instruction) { return HloCacheKey(instruction); }

const std::vector<EmitterPassInfo>& EmitterPipelinePasses() { return PassList(); }

CpuKernelCompiler::CpuKernelCompiler(CpuCompileOptions options) : options_(std::move(options)) {}

absl::Status CpuKernelCompiler::CheckCompilable(const HloInstruction& instruction) {
  for (const HloInstruction* operand : instruction.operands()) {
    RETURN_IF_ERROR(CheckArrayShape(operand->shape(), instruction));
  }
  if (instruction.opcode() == HloOpcode::kTuple || instruction.opcode() == HloOpcode::kGetTupleElement ||
      instruction.opcode() == HloOpcode::kParameter) {
    return absl::UnimplementedError(StrCat("codegen: ", instruction.name(), ": '",
                                           HloOpcodeString(instruction.opcode()), "' is resolved by the runtime"));
  }
  return CheckOne(instruction);
}

bool CpuKernelCompiler::CanCompile(const HloInstruction& instruction) {
  return CheckCompilable(instruction).ok();
}

absl::StatusOr<std::string> CpuKernelCompiler::EmitMlir(const HloInstruction& instruction) {
  RETURN_IF_ERROR(CheckCompilable(instruction));
  std::unique_ptr<mlir::MLIRContext> context = MakeContext();
  KernelEmitter emitter(context.get(), instruction);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, emitter.Emit());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

absl::StatusOr<std::unique_ptr<CompiledKernel>> CpuKernelCompiler::Compile(const HloInstruction& instruction) {
  RETURN_IF_ERROR(CheckCompilable(instruction));
  FusionAnalysis analysis = AnalyzeFusion(instruction);
  int64_t bytes_read = 0, bytes_written = instruction.shape().total_leaf_bytes();
  for (const HloInstruction* operand : instruction.operands()) bytes_read += operand->shape().byte_size();
  int64_t threshold = options_.parallel_threshold_elements;
  auto make = [&](std::shared_ptr<const JitProgram> p) -> std::unique_ptr<CompiledKernel> {
    return std::make_unique<JitKernel>(instruction.name(), analysis.kind, std::move(p), threshold,
                                       options_.num_threads, bytes_read,
                                       bytes_written, CountFlops(instruction));
  };
  const bool persistent = !options_.persistent_cache_dir.empty() && !options_.observer;
  const std::string key = options_.use_cache || persistent ? CacheKey(instruction, options_) : std::string();
  if (options_.use_cache) {
    std::lock_guard<std::mutex> lock(cache_mu);
    auto it = ProgramCache().find(key);
    if (it != ProgramCache().end()) {
      ++cache_hits;
      return make(it->second);
    }
  }
  ++cache_misses;
  InitializeLlvmOnce();
  auto remember = [&](std::shared_ptr<const JitProgram> program) {
    if (!options_.use_cache) return;
    std::lock_guard<std::mutex> lock(cache_mu);
    ProgramCache().emplace(key, std::move(program));
  };

  // The persistent cache (not while an observer must see the passes run).
  PersistentKernelCache* disk = nullptr;
  std::string disk_key;
  if (persistent) {
    ASSIGN_OR_RETURN(PersistentKernelCache* opened, PersistentKernelCache::Open(options_.persistent_cache_dir));
    disk = opened;
    // Everything the object code depends on: the HLO and the emitter
    // options (CacheKey), the host CPU, the compiler. Threads and the
    // parallel threshold are applied at run time (JitKernel), not compiled.
    disk_key = StrCat("cpu-kernel\n", KernelCompilerVersion(), "\n", KernelHostTargetKey(), "\n", key);
    if (std::optional<std::string> payload = disk->Load(disk_key)) {
      std::optional<KernelObject> object = DeserializeKernelObject(*payload);
      if (object.has_value()) {
        absl::StatusOr<std::shared_ptr<const JitProgram>> program = LoadKernelObject(std::move(*object), instruction.name());
        if (program.ok()) {
          ++persistent_hits;
          remember(*program);
          return make(std::move(*program));
        }
        std::fprintf(stderr, "passlab: kernel cache: %s; compiling instead\n",
                     std::string(program.status().message()).c_str());
      } else {
        std::fprintf(stderr, "passlab: kernel cache: malformed entry for %s in '%s'; compiling instead\n",
                     instruction.name().c_str(), disk->dir().c_str());
      }
    }
    ++persistent_misses;
  }

  std::unique_ptr<mlir::MLIRContext> context = MakeContext();
  KernelEmitter emitter(context.get(), instruction);
  ASSIGN_OR_RETURN(mlir::OwningOpRef<mlir::ModuleOp> module, emitter.Emit());
  RETURN_IF_ERROR(RunCpuEmitterPipeline(*module, options_, instruction.name()));
  KernelObject object;
  object.nests = emitter.nests();
  for (const Shape& s : emitter.buffer_shapes()) object.buffer_sizes.push_back(s.element_count());
  ASSIGN_OR_RETURN(std::string code, CompileToObject(*module, object.nests, options_, instruction.name()));
  object.object = std::move(code);
  const std::string payload = disk != nullptr ? SerializeKernelObject(object) : std::string();
  ASSIGN_OR_RETURN(std::shared_ptr<const JitProgram> program, LoadKernelObject(std::move(object), instruction.name()));
  if (disk != nullptr) {  // only code that loaded
    // A failed write costs the next process a compile, nothing more.
    if (absl::Status s = disk->Store(disk_key, payload); !s.ok()) {
      std::fprintf(stderr, "passlab: %s\n", std::string(s.message()).c_str());
    }
  }
  remember(program);
  return make(std::move(program));
}

int64_t CpuKernelCompiler::CacheHits() { return cache_hits.load(); }
int64_t CpuKernelCompiler::CacheMisses() { return cache_misses.load(); }
int64_t CpuKernelCompiler::PersistentCacheHits() { return persistent_hits.load(); }
int64_t CpuKernelCompiler::PersistentCacheMisses() { return persistent_misses.load(); }

}  // namespace passlab
