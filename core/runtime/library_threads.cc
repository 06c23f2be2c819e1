#include "core/runtime/library_threads.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
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
