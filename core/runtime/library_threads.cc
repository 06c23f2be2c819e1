#include "core/runtime/library_threads.h"

#include <dlfcn.h>

#include <algorithm>
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

// Before main, while no library call can be running.
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

void ApplyLibraryCallThreads() {
  const int threads = library_threads;
  if (threads <= 0 || threads == applied_threads) return;
  SetOpenMpThreads(threads);
  applied_threads = threads;
}

}  // namespace passlab
