#include "core/runtime/library_threads.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <atomic>
#include <cstdlib>
#include <thread>

#include <cblas.h>

namespace passlab {
namespace {

std::atomic<int> library_threads{0};
thread_local int applied_threads = 0;  // the cap this thread's OpenMP has

// oneDNN's OpenMP runtime (libgomp, loaded with libdnnl). Looked up at run
// time so passlab does not link an OpenMP runtime of its own.
void SetOpenMpThreads(int threads) {
  using SetFn = void (*)(int);
  static SetFn set = reinterpret_cast<SetFn>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set != nullptr) set(threads);
}

// OpenBLAS's idle threads spin (sched_yield in a loop) for 2^28 cycles,
// about 0.1 s, after every call before they sleep. On a machine with few
// cores they take the cores oneDNN's OpenMP threads and the kernels' pool
// need next: on 2 cores, the four convolutions after a ResNet-50 step's
// last gemm each took 32 ms instead of 1-3 ms, in about half the steps.
// OPENBLAS_THREAD_TIMEOUT=4 (2^4 cycles) makes them sleep at once; a
// gemm then wakes them, which costs tens of microseconds (a 256^3 sgemm:
// 0.24 ms instead of 0.18) and saved 4-10% of the ResNet-50 step.
// OpenBLAS reads the variable when it loads, before this runs, so it is set
// here, read again, and the thread server is shut down: the next gemm
// starts it with the new timeout. A value the user set is left alone; so is
// a BLAS without these entry points.
void QuietOpenBlasThreads() {
  if (const char* set = std::getenv("OPENBLAS_THREAD_TIMEOUT"); set != nullptr && *set != '\0') return;
  using ReadEnv = void (*)();
  using Shutdown = int (*)();
  auto read_env = reinterpret_cast<ReadEnv>(dlsym(RTLD_DEFAULT, "openblas_read_env"));
  auto shutdown = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (read_env == nullptr || shutdown == nullptr) return;
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/1);
  read_env();
  shutdown();
}

// OpenBLAS picks its kernels by CPU model when it loads. A model newer than
// it knows (0.3.21, Debian 12's, on Emerald Rapids) gets its generic SSE3
// "Prescott" kernels: sgemm 1024^3 at 59 GFLOP/s on 2 cores, against 277
// with its SkylakeX (AVX-512) kernels on the same machine (runtime_bench).
// So when it fell back to Prescott on a CPU with AVX-512 or AVX2, the
// kernel table is chosen again for the newest family the CPU's features
// allow (OpenBLAS's own OPENBLAS_CORETYPE, which is read when its table is
// chosen); a core type the user set is left alone, and so is a BLAS
// without these entry points. Before main, before any BLAS call.
// OpenBLAS's kernel family as it names it ("" without OpenBLAS).
std::string OpenBlasCoreName() {
  using CoreName = char* (*)();
  static const auto core = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = core != nullptr ? core() : nullptr;
  return name != nullptr ? name : "";
}

std::string OpenBlasCoreChoice() {
  if (const char* set = std::getenv("OPENBLAS_CORETYPE"); set != nullptr && *set != '\0') return "";
  using DynamicInit = void (*)();
  auto quit = reinterpret_cast<DynamicInit>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<DynamicInit>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  std::string name = OpenBlasCoreName();
  if (quit == nullptr || init == nullptr || name.empty()) return "";
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name != "prescott") return "";
  __builtin_cpu_init();
  const char* choice = nullptr;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
    choice = "SkylakeX";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    choice = "Haswell";
  }
  if (choice == nullptr) return "";
  setenv("OPENBLAS_CORETYPE", choice, /*overwrite=*/1);
  quit();
  init();
  unsetenv("OPENBLAS_CORETYPE");  // child processes choose for themselves
  return choice;
}

// Before main, while no library call can be running.
const std::string kOpenBlasCoreChoice = OpenBlasCoreChoice();
const bool kOpenBlasQuieted = (QuietOpenBlasThreads(), true);

}  // namespace

void SetLibraryCallThreads(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  library_threads = threads;
  openblas_set_num_threads(threads);
  SetOpenMpThreads(threads);
  applied_threads = threads;
}

int LibraryCallThreads() { return library_threads; }

std::string OpenBlasCore() {
  std::string out = OpenBlasCoreName();
  if (!out.empty() && !kOpenBlasCoreChoice.empty()) out += " (chosen by passlab: OpenBLAS took this CPU for a Prescott)";
  return out;
}

void ApplyLibraryCallThreads() {
  const int threads = library_threads;
  if (threads <= 0 || threads == applied_threads) return;
  SetOpenMpThreads(threads);
  applied_threads = threads;
}

}  // namespace passlab
