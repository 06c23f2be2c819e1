// The emitter pipeline both code generators run (see emitter_pipeline.h):
// the shared MLIR passes, the observer instrumentation, the pass list in
// order, the MLIR context and LLVM's module pipeline.
#include "core/codegen/emitter_pipeline.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/ir/str_util.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

namespace passlab {
namespace codegen_internal {
namespace {

struct UnrollInnermostLoopsPass
    : public mlir::PassWrapper<UnrollInnermostLoopsPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnrollInnermostLoopsPass)
  explicit UnrollInnermostLoopsPass(int factor) : factor(factor) {}
  llvm::StringRef getArgument() const override { return "unroll"; }
  llvm::StringRef getDescription() const override { return "Unrolls innermost scf.for loops"; }
  void runOnOperation() override {
    llvm::SmallVector<mlir::scf::ForOp> innermost;
    getOperation().walk([&](mlir::scf::ForOp loop) {
      bool has_inner = false;
      loop.getBody()->walk([&](mlir::scf::ForOp) { has_inner = true; });
      if (!has_inner) innermost.push_back(loop);
    });
    for (mlir::scf::ForOp loop : innermost) (void)mlir::loopUnrollByFactor(loop, factor);
  }
  int factor;
};

struct ExpandMathPass : public mlir::PassWrapper<ExpandMathPass, mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandMathPass)
  llvm::StringRef getArgument() const override { return "expand-math"; }
  llvm::StringRef getDescription() const override {
    return "Polynomial approximations of tanh, erf, exp, expm1, log, log1p (vectorizable)";
  }
  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    mlir::populateMathPolynomialApproximationPatterns(patterns, [](llvm::StringRef name) {
      name.consume_front("math.");
      return name == "tanh" || name == "erf" || name == "exp" || name == "expm1" || name == "log" ||
             name == "log1p";
    });
    if (mlir::failed(mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) signalPassFailure();
  }
};

class ObserverInstrumentation : public mlir::PassInstrumentation {
 public:
  ObserverInstrumentation(std::function<void(const EmitterPassSnapshot&)> observer, bool wants_text,
                          std::string kernel)
      : observer_(std::move(observer)), wants_text_(wants_text), kernel_(std::move(kernel)) {}
  void runBeforePass(mlir::Pass* pass, mlir::Operation* op) override {
    before_.push_back(wants_text_ ? Print(op) : std::string());
    start_.push_back(std::chrono::steady_clock::now());
  }
  void runAfterPassFailed(mlir::Pass* pass, mlir::Operation* op) override {
    start_.pop_back();
    before_.pop_back();
  }
  void runAfterPass(mlir::Pass* pass, mlir::Operation* op) override {
    EmitterPassSnapshot s;
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_.back()).count();
    start_.pop_back();
    s.before = std::move(before_.back());
    before_.pop_back();
    s.kernel_name = kernel_;
    s.pass_name = pass->getArgument().str();
    if (wants_text_) s.after = Print(op);
    observer_(s);
  }

 private:
  static std::string Print(mlir::Operation* op) {
    std::string text;
    llvm::raw_string_ostream os(text);
    op->print(os);
    return text;
  }
  std::function<void(const EmitterPassSnapshot&)> observer_;
  bool wants_text_;
  std::string kernel_;
  // Nested pipelines run passes inside passes: one entry per open pass.
  std::vector<std::string> before_;
  std::vector<std::chrono::steady_clock::time_point> start_;
};

}  // namespace

absl::Status RunEmitterPipeline(mlir::ModuleOp module, const EmitterPipelineTarget& target,
                                const std::vector<std::string>& disabled_passes,
                                const std::function<void(const EmitterPassSnapshot&)>& observer,
                                bool observer_wants_text, const std::string& kernel) {
  const std::vector<EmitterPassInfo>& passes = *target.passes;
  for (const std::string& name : disabled_passes) {
    auto it = std::find_if(passes.begin(), passes.end(), [&](const EmitterPassInfo& p) { return p.name == name; });
    if (it == passes.end()) {
      return absl::InvalidArgumentError(StrCat(target.error_prefix, ": unknown emitter pass '", name, "'"));
    }
    if (!it->optional) {
      return absl::InvalidArgumentError(StrCat(target.error_prefix, ": emitter pass '", name,
                                               "' is required (lowering to ", target.lowered_to, " needs it)"));
    }
  }
  auto disabled = [&](const std::string& name) {
    return std::find(disabled_passes.begin(), disabled_passes.end(), name) != disabled_passes.end();
  };
  mlir::PassManager pm(module->getContext());
  if (observer) pm.addInstrumentation(std::make_unique<ObserverInstrumentation>(observer, observer_wants_text, kernel));
  // The inliner's default nested pipeline (canonicalize) is left empty so
  // that canonicalize is its own, separately disableable pass.
  if (!disabled("inline")) {
    pm.addPass(mlir::createInlinerPass(llvm::StringMap<mlir::OpPassManager>{}, [](mlir::OpPassManager&) {}));
  }
  if (!disabled("canonicalize")) pm.addPass(mlir::createCanonicalizerPass());
  if (!disabled("cse")) pm.addPass(mlir::createCSEPass());
  if (!disabled("loop-invariant-code-motion")) pm.addPass(mlir::createLoopInvariantCodeMotionPass());
  if (!disabled("unroll") && target.unroll > 1) pm.addPass(std::make_unique<UnrollInnermostLoopsPass>(target.unroll));
  if (!disabled("expand-math")) pm.addPass(std::make_unique<ExpandMathPass>());
  if (!disabled("symbol-dce")) pm.addPass(mlir::createSymbolDCEPass());
  pm.addPass(mlir::createConvertMathToFuncs());
  mlir::arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(mlir::arith::createArithExpandOpsPass(expand));
  pm.addPass(mlir::createSCFToControlFlowPass());
  // Before math-to-llvm: on the GPU, transcendental math ops become
  // libdevice calls (NVPTX cannot select llvm.tanh & co. without
  // approximation flags).
  if (target.before_math_to_llvm) pm.addPass(target.before_math_to_llvm());
  mlir::ConvertMathToLLVMPassOptions math_options;
  math_options.approximateLog1p = false;
  pm.addPass(mlir::createConvertMathToLLVMPass(math_options));
  if (target.math_to_libm) pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  mlir::ConvertFuncToLLVMPassOptions func_options;
  func_options.useBarePtrCallConv = target.bare_pointer_calls;
  pm.addPass(mlir::createConvertFuncToLLVMPass(func_options));
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module->getContext(), [&](mlir::Diagnostic& d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  if (mlir::failed(pm.run(module))) {
    return absl::InternalError(
        StrCat(target.error_prefix, ": emitter pipeline failed for ", kernel, ": ", diagnostics));
  }
  return absl::OkStatus();
}

std::unique_ptr<mlir::MLIRContext> MakeEmitterContext(mlir::DialectRegistry registry) {
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect, mlir::cf::ControlFlowDialect,
                  mlir::LLVM::LLVMDialect>();
  mlir::func::registerInlinerExtension(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

void RunLlvmPipeline(llvm::Module& module, llvm::TargetMachine* target_machine, int opt_level,
                     const llvm::PipelineTuningOptions& tuning) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(target_machine, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level >= 3   ? llvm::OptimizationLevel::O3
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                                   : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0 ? pb.buildO0DefaultPipeline(level)
                                                                     : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

}  // namespace codegen_internal
}  // namespace passlab
